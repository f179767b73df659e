/* Install-test consumer (C): the smallest real MPI program. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank = -1, size = -1;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return 1;
  if (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) return 1;
  printf("hello from rank %d of %d (C)\n", rank, size);
  return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
