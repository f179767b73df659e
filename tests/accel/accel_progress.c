/* accel_progress: collectives the accelerator takes while a nonblocking
 * collective of the host is pending, completed in different orders on
 * different ranks (legal: they are started in the same order everywhere).
 * Rank 0 starts an MPI_Ibarrier, runs MPI_Alltoall and only then waits for
 * the barrier; the other ranks wait for the barrier first.  The others'
 * MPI_Wait needs rank 0's host to progress while rank 0 waits inside the
 * accelerator's MPI_Alltoall, so the accelerator must let the host progress
 * while it waits.  Results are checked byte for byte.
 *
 *   accel_progress [iters=N]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n, me, iters = 20;
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "iters=", 6)) iters = atoi(argv[i] + 6);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int blk = 300;
  unsigned char *s = malloc((size_t)blk * n), *r = malloc((size_t)blk * n);
  for (int it = 0; it < iters; ++it) {
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < blk; ++k) s[j * blk + k] = (unsigned char)(me * 37 + j * 11 + k + it);
    memset(r, 0, (size_t)blk * n);
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (me == 0) {
      MPI_Alltoall(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
      MPI_Wait(&req, MPI_STATUS_IGNORE);
      MPI_Alltoall(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
    }
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < blk; ++k)
        if (r[j * blk + k] != (unsigned char)(j * 37 + me * 11 + k + it)) {
          fprintf(stderr, "FAIL accel_progress: rank %d: iteration %d: block %d byte %d wrong\n", me, it, j, k);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
  }
  free(s), free(r);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) printf("accel_progress: PASS ranks=%d iterations=%d\n", n, iters);
  MPI_Finalize();
  return 0;
}
