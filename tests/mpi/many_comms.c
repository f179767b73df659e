/*
 * many_comms.c -- thousands of communicators alive at once.
 *
 * Programs make a communicator per task or per solver level and keep them:
 * NCOMM (16384 by default, argument 1) communicators are made and kept
 * (duplicates of MPI_COMM_WORLD, splits, duplicates of earlier ones), then
 * used: a message on each of a sample of them, received in another order,
 * must arrive on its own communicator only (the value says which), and
 * collectives run on a sample.  Half are freed and as many made again
 * (freed context ids are reused), the checks repeat, and everything is
 * freed.  Last, 200 MPI_Comm_idup duplicates alive at once.  Buffers are
 * guarded and compared byte for byte.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void fail(const char *what, int i, long got, long want) {
  fprintf(stderr, "many_comms: rank %d, communicator %d: %s: %ld, expected %ld\n", rank, i, what, got, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Communicator i: a duplicate of MPI_COMM_WORLD, a split by parity, or a duplicate of communicator i - 5. */
static void make(MPI_Comm *comms, int i) {
  int rc;
  if (i % 7 == 3)
    rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &comms[i]);
  else if (i % 11 == 5 && i >= 5)
    rc = MPI_Comm_dup(comms[i - 5], &comms[i]);
  else
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  if (rc != MPI_SUCCESS || comms[i] == MPI_COMM_NULL) fail("making it failed", i, rc, MPI_SUCCESS);
}

/* Every `step`-th communicator carries one message around its ring, tagged alike on all of them. */
static void check(MPI_Comm *comms, int n, int step) {
  int k = 0;
  for (int i = 0; i < n; i += step) ++k;
  long *in = malloc(sizeof(long) * (size_t)(k + 2)), *out = malloc(sizeof(long) * (size_t)k);
  MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(2 * k));
  in[0] = in[k + 1] = -7; /* guards */
  /* Receives posted from the last communicator down, sends from the first up. */
  for (int j = k - 1; j >= 0; --j) {
    MPI_Comm c = comms[j * step];
    int me, m;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &m);
    in[j + 1] = -1;
    MPI_Irecv(&in[j + 1], 1, MPI_LONG, (me + m - 1) % m, 5, c, &req[j]);
  }
  for (int j = 0; j < k; ++j) {
    MPI_Comm c = comms[j * step];
    int me, m;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &m);
    out[j] = (long)(j * step) * 1000 + me;
    MPI_Isend(&out[j], 1, MPI_LONG, (me + 1) % m, 5, c, &req[k + j]);
  }
  MPI_Waitall(2 * k, req, MPI_STATUSES_IGNORE);
  if (in[0] != -7 || in[k + 1] != -7) fail("guard", -1, in[0] != -7 ? in[0] : in[k + 1], -7);
  for (int j = 0; j < k; ++j) {
    MPI_Comm c = comms[j * step];
    int me, m;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &m);
    const long want = (long)(j * step) * 1000 + (me + m - 1) % m;
    if (in[j + 1] != want) fail("message", j * step, in[j + 1], want);
    if (j % 16 == 0 || j == k - 1) {
      int sum = 0;
      MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
      if (sum != m * (m - 1) / 2) fail("allreduce of ranks", j * step, sum, m * (m - 1) / 2);
      MPI_Barrier(c);
    }
  }
  free(in), free(out), free(req);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int n = argc > 1 ? atoi(argv[1]) : 16384;
  MPI_Comm *comms = malloc(sizeof(MPI_Comm) * (size_t)n);
  for (int i = 0; i < n; ++i) make(comms, i);
  check(comms, n, 61);
  check(comms + n - 64, 64, 1); /* the newest ones, all of them */
  /* Free every other one and make them again: the freed ids come back. */
  for (int i = 1; i < n; i += 2) MPI_Comm_free(&comms[i]);
  for (int i = 1; i < n; i += 2) {
    if (comms[i] != MPI_COMM_NULL) fail("MPI_Comm_free did not set MPI_COMM_NULL", i, comms[i], MPI_COMM_NULL);
    comms[i] = MPI_COMM_NULL;
    make(comms, i);
  }
  check(comms, n, 59);
  for (int i = n - 1; i >= 0; --i) MPI_Comm_free(&comms[i]);
  /* And once more, all of them. */
  for (int i = 0; i < n; ++i) make(comms, i);
  check(comms, n, 127);
  for (int i = 0; i < n; ++i) MPI_Comm_free(&comms[i]);
  /* Nonblocking duplicates, 200 alive at once (more than MPI_Comm_idup could once make), some of a split. */
  const int m = n < 200 ? n : 200;
  MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)m);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  for (int i = 0; i < m; ++i) MPI_Comm_idup(i % 3 == 2 ? half : MPI_COMM_WORLD, &comms[i], &req[i]);
  MPI_Waitall(m, req, MPI_STATUSES_IGNORE);
  check(comms, m, 7);
  for (int i = 0; i < m; ++i) MPI_Comm_free(&comms[i]);
  MPI_Comm_free(&half);
  free(req);
  free(comms);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("many_comms: %d communicators alive at once: OK\n", n);
  MPI_Finalize();
  return 0;
}
