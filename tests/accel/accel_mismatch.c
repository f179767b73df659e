/* accel_mismatch: an erroneous MPI_Alltoall whose block sizes differ between
 * the processes (rank 0 passes 8192 doubles per block, the others 1): with
 * the accelerator's single copy (SHMCOLL_ACCEL_CMA_MIN=1k in
 * tests/accel/list.txt) rank 0 reads and the others stream through the
 * segment, and rank 0 must end the job with a message naming the call and
 * the rank, not read what another rank's slot holds as an address.  The
 * launcher must end the job (a nonzero exit: `killed`), and run.sh checks
 * that nothing is left in /dev/shm.  A first, correct call is checked byte
 * for byte.
 *
 *   accel_mismatch
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n, me;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const int big = 8192;
  double *s = malloc(sizeof(double) * big * n), *r = malloc(sizeof(double) * big * n);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < big; ++k) s[j * big + k] = me * 1e6 + j * 1e4 + k;
  MPI_Alltoall(s, big, MPI_DOUBLE, r, big, MPI_DOUBLE, MPI_COMM_WORLD);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < big; ++k)
      if (r[j * big + k] != j * 1e6 + me * 1e4 + k) {
        fprintf(stderr, "FAIL accel_mismatch: rank %d: block %d element %d wrong\n", me, j, k);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
  const int count = me == 0 ? big : 1;
  MPI_Alltoall(s, count, MPI_DOUBLE, r, count, MPI_DOUBLE, MPI_COMM_WORLD);
  fprintf(stderr, "accel_mismatch: rank %d: the erroneous MPI_Alltoall returned\n", me);
  MPI_Finalize();
  return 0;
}
