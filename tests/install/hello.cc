// Install-test consumer (C++): mpi.h included from C++, libshmcoll linked by a C++ driver.
#include <mpi.h>

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 1;
  int rank = -1;
  int size = -1;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &rank) != MPI_SUCCESS) return 1;
  if (MPI_Comm_size(MPI_COMM_WORLD, &size) != MPI_SUCCESS) return 1;
  const std::string line = "hello from rank " + std::to_string(rank) + " of " + std::to_string(size) + " (C++)\n";
  std::cout << line << std::flush;
  return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
