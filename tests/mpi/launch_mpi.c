/* An MPI rank for the launcher tests (run by shmrun_test, not testlist.txt).
 *
 *   launch_mpi ok              init, barrier, finalize
 *   launch_mpi kill R          rank R is SIGKILLed while the others wait in MPI_Barrier
 *   launch_mpi abort R C       rank R calls MPI_Abort(MPI_COMM_WORLD, C) while the others wait
 *   launch_mpi nofinalize R    rank R returns from main without MPI_Finalize while the
 *                              others wait in a barrier it will never enter
 *   launch_mpi fatal R         rank R sends to rank -5 on MPI_COMM_WORLD, whose handler is
 *                              MPI_ERRORS_ARE_FATAL, while the others wait
 *   launch_mpi preinit         every rank calls MPI_Send before MPI_Init
 *   launch_mpi orphan R DIR    rank R starts a child that ignores SIGTERM (its pid in
 *                              DIR/child), then is SIGKILLed while the others wait
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "preinit")) {
    int x = 0;
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    return 3;
  }
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
  } else if (!strcmp(mode, "fatal") && rank == who) {
    usleep(200000);
    int x = 0;
    MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD);
    fprintf(stderr, "launch_mpi: MPI_Send to rank -5 returned\n");
    return 3;
  } else if (!strcmp(mode, "orphan") && rank == who && argc > 3) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "trap '' TERM; echo $$ > %s/child.tmp && mv %s/child.tmp %s/child; exec sleep 300",
             argv[3], argv[3], argv[3]);
    if (fork() == 0) {
      execl("/bin/sh", "sh", "-c", cmd, (char*)NULL);
      _exit(127);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/child", argv[3]);
    for (int i = 0; i < 500 && access(path, F_OK) != 0; ++i) usleep(10000);
    kill(getpid(), SIGKILL);
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
