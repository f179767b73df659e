/* accel_threads: under MPI_THREAD_MULTIPLE the accelerator declines every
 * collective (tests/accel/list.txt expects T = 0 in its report); the results,
 * computed by the host MPI, must still be right byte for byte.  The calls run
 * on MPI_COMM_WORLD, MPI_COMM_SELF and a split communicator in reverse order.
 * With `single` it asks for MPI_THREAD_SINGLE instead, and the accelerator
 * takes the same calls.
 *
 *   accel_threads [single]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static void fail(const char *what, long at) {
  fprintf(stderr, "FAIL accel_threads: rank %d: %s: first wrong byte at %ld\n", rank, what, at);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int from, int to, long k) { return (unsigned char)(from * 131 + to * 17 + k * 7 + 1); }

static void check(const unsigned char *got, const unsigned char *want, long len, const char *what) {
  for (long i = 0; i < len; ++i)
    if (got[i] != want[i]) fail(what, i);
}

static void run(MPI_Comm comm, const char *name) {
  int n, me;
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  const long blk = 1000;
  unsigned char *s = malloc(blk * n), *r = malloc(blk * n), *w = malloc(blk * n);
  char what[64];
  for (int j = 0; j < n; ++j)
    for (long k = 0; k < blk; ++k) s[j * blk + k] = pat(me, j, k), w[j * blk + k] = pat(j, me, k);
  memset(r, 0xee, blk * n);
  MPI_Alltoall(s, blk, MPI_BYTE, r, blk, MPI_BYTE, comm);
  snprintf(what, sizeof what, "%s alltoall", name);
  check(r, w, blk * n, what);
  for (int j = 0; j < n; ++j)
    for (long k = 0; k < blk; ++k) w[j * blk + k] = pat(j, 0, k);
  memset(r, 0xee, blk * n);
  MPI_Allgather(s, blk, MPI_BYTE, r, blk, MPI_BYTE, comm); /* s starts with pat(me, 0, .) */
  snprintf(what, sizeof what, "%s allgather", name);
  for (int j = 0; j < n; ++j)
    for (long k = 0; k < blk; ++k) w[j * blk + k] = pat(j, 0, k);
  check(r, w, blk * n, what);
  for (long k = 0; k < blk; ++k) r[k] = me == n - 1 ? pat(n - 1, 9, k) : 0, w[k] = pat(n - 1, 9, k);
  MPI_Bcast(r, (int)blk, MPI_BYTE, n - 1, comm);
  snprintf(what, sizeof what, "%s bcast", name);
  check(r, w, blk, what);
  MPI_Barrier(comm);
  free(s), free(r), free(w);
}

int main(int argc, char **argv) {
  int provided;
  const int want = argc > 1 && !strcmp(argv[1], "single") ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE;
  MPI_Init_thread(&argc, &argv, want, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (want == MPI_THREAD_MULTIPLE && provided != MPI_THREAD_MULTIPLE) {
    fprintf(stderr, "FAIL accel_threads: the host gave thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  for (int it = 0; it < 3; ++it) {
    run(MPI_COMM_WORLD, "world");
    run(MPI_COMM_SELF, "self");
    run(half, "half");
  }
  MPI_Comm_free(&half);
  if (rank == 0) printf("accel_threads: PASS\n");
  MPI_Finalize();
  return 0;
}
