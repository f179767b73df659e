/* accel_kill: the last rank kills itself (SIGKILL) while the others wait for
 * it inside a taken MPI_Alltoall; the host's launcher must end the job (a
 * nonzero exit, tests/accel/list.txt expects `killed`) and run.sh checks that
 * nothing of the accelerator is left in /dev/shm.  The calls before the kill
 * are checked byte for byte.
 *
 *   accel_kill
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n, me;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int blk = 64;
  unsigned char *s = malloc((size_t)blk * n), *r = malloc((size_t)blk * n);
  for (int it = 0; it < 5; ++it) {
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < blk; ++k) s[j * blk + k] = (unsigned char)(me * 5 + j * 3 + k + it);
    MPI_Alltoall(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD);
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < blk; ++k)
        if (r[j * blk + k] != (unsigned char)(j * 5 + me * 3 + k + it)) {
          fprintf(stderr, "FAIL accel_kill: rank %d: iteration %d: block %d byte %d wrong\n", me, it, j, k);
          MPI_Abort(MPI_COMM_WORLD, 1);
        }
  }
  if (me == n - 1) {
    fprintf(stderr, "accel_kill: rank %d kills itself now\n", me);
    raise(SIGKILL);
  }
  MPI_Alltoall(s, blk, MPI_BYTE, r, blk, MPI_BYTE, MPI_COMM_WORLD); /* never completes */
  fprintf(stderr, "FAIL accel_kill: rank %d: MPI_Alltoall completed without rank %d\n", me, n - 1);
  MPI_Finalize();
  return 0;
}
