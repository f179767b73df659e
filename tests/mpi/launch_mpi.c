/* An MPI rank for the launcher tests (run by shmrun_test, not testlist.txt).
 *
 *   launch_mpi ok              init, barrier, finalize
 *   launch_mpi kill R          rank R is SIGKILLed while the others wait in MPI_Barrier
 *   launch_mpi abort R C       rank R calls MPI_Abort(MPI_COMM_WORLD, C) while the others wait
 *   launch_mpi nofinalize R    rank R returns from main without MPI_Finalize while the
 *                              others wait in a barrier it will never enter
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "ok";
  int who = argc > 2 ? atoi(argv[2]) : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (!strcmp(mode, "kill") && rank == who) {
    usleep(200000); /* let the others block in the barrier */
    kill(getpid(), SIGKILL);
  } else if (!strcmp(mode, "abort") && rank == who) {
    usleep(200000);
    MPI_Abort(MPI_COMM_WORLD, argc > 3 ? atoi(argv[3]) : 1);
  } else if (!strcmp(mode, "nofinalize") && rank == who) {
    return 0;
  } else if (!strcmp(mode, "ok")) {
    printf("rank %d of %d done\n", rank, size);
    fflush(stdout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
