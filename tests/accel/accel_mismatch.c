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
 * With an argument, the erroneous call is a small one whose sizes put some
 * ranks on the eager path (tests/accel: SHMCOLL_ACCEL_EAGER_MAX) and others
 * in the rounds: `bcast` (the root's block is small, the readers' large),
 * `bcast_readers` (the reverse), `reduce` (the root's count small, the
 * others' large).  Whoever sees the other path ends the job, saying so.
 * `bcast_rank K`: only rank K's block is large (across pretend nodes: a
 * reader or a leader of another node than the root's); `reduce_rank K`: only
 * rank K's count is large (across pretend nodes: a contributor of the root's
 * node, another node's leader, which folds its node's contributions, or a
 * contributor of another node).  A third argument is rank K's count instead
 * (8 doubles: both paths eager, but a block of at most 40 bytes goes in the
 * small ring of head lines and a larger one in the entries, eager.cc).
 * `reduce_null`: a small reduce whose root passes a null receive buffer,
 * after the others have returned: the root ends the job, saying so.
 *
 *   accel_mismatch [bcast|bcast_readers|bcast_rank K [count]|reduce|reduce_rank K [count]|reduce_null]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
  const char *mode = argc > 1 ? argv[1] : "alltoall";
  if (strcmp(mode, "alltoall") == 0) {
    const int count = me == 0 ? big : 1;
    MPI_Alltoall(s, count, MPI_DOUBLE, r, count, MPI_DOUBLE, MPI_COMM_WORLD);
  } else if (strcmp(mode, "bcast") == 0 || strcmp(mode, "bcast_readers") == 0) {
    const int small = (me == 0) == (strcmp(mode, "bcast") == 0);
    MPI_Bcast(s, small ? 1 : big, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  } else if (strcmp(mode, "bcast_rank") == 0) {
    const int odd = argc > 2 ? atoi(argv[2]) : n - 1, count = argc > 3 ? atoi(argv[3]) : big;
    MPI_Bcast(s, me == odd ? count : 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  } else if (strcmp(mode, "reduce") == 0) {
    MPI_Reduce(s, r, me == 0 ? 1 : big, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  } else if (strcmp(mode, "reduce_rank") == 0) {
    const int odd = argc > 2 ? atoi(argv[2]) : n - 1, count = argc > 3 ? atoi(argv[3]) : big;
    MPI_Reduce(s, r, me == odd ? count : 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  } else {
    MPI_Reduce(s, me == 0 ? NULL : r, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  }
  fprintf(stderr, "accel_mismatch: rank %d: the erroneous MPI_%s returned\n", me, mode);
  /* A rank the erroneous call let go (an eager bcast's root, a reduce's contributors) waits here
   * for the others to end the job: one inside MPI_Finalize while another aborts could hang Open MPI
   * 4.1's mpirun.  A job not ended by then exits 0, and the test fails. */
  sleep(15);
  MPI_Finalize();
  return 0;
}
