/* The profiling interface: this program defines MPI_Alltoall and MPI_Barrier
 * itself, counts the calls and forwards them to PMPI_*.  The library's own
 * internal uses must not reach the wrappers, and the results must be right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int alltoallCalls, barrierCalls;

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  ++alltoallCalls;
  return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Barrier(MPI_Comm comm) {
  ++barrierCalls;
  return PMPI_Barrier(comm);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int *s = malloc(sizeof(int) * size), *r = malloc(sizeof(int) * size);
  for (int p = 0; p < size; ++p) s[p] = rank * 1000 + p;
  MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, MPI_COMM_WORLD);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup); /* uses the engine internally, not the wrappers */
  MPI_Barrier(dup);
  MPI_Comm_free(&dup);
  int bad = 0;
  for (int p = 0; p < size; ++p)
    if (r[p] != p * 1000 + rank) bad = 1;
  if (bad || alltoallCalls != 1 || barrierCalls != 1) {
    printf("pmpi_intercept: FAIL rank %d: data %s, MPI_Alltoall seen %d times, MPI_Barrier %d times (want 1, 1)\n",
           rank, bad ? "wrong" : "right", alltoallCalls, barrierCalls);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  if (rank == 0) printf("pmpi_intercept: PASS ranks=%d\n", size);
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
