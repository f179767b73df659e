/*
 * shmcoll-exitorder: who leaves MPI_Barrier first, and what that does to the
 * rooted collective timed right after it (the method of the common benchmark
 * suites: a barrier before every call, only the call timed).  Standard MPI
 * plus POSIX, so the same source builds against any MPI:
 *
 *   shmrun -n 4 ./shmcoll-exitorder [bcast|scatter|reduce|gather] [iters=20000]
 *   mpicc.openmpi -O2 perf/bench/exit_order.c -o exitorder-openmpi
 *   mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none -n 4 ./exitorder-openmpi bcast
 *
 * Each call: MPI_Barrier, then the 8-byte collective with root 0, timed on
 * every rank from its own barrier exit (CLOCK_MONOTONIC, one clock for the
 * whole machine).  Printed by rank 0: each rank's mean time per call, and
 * for each other rank the share of calls in which the root left the barrier
 * before it, with that rank's mean time in those calls and in the others.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void call(const char *op, char *buf, int n) {
  if (!strcmp(op, "bcast"))
    MPI_Bcast(buf, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "scatter"))
    MPI_Scatter(buf, 8, MPI_BYTE, buf + 8 * n, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "gather"))
    MPI_Gather(buf + 8 * n, 8, MPI_BYTE, buf, 8, MPI_BYTE, 0, MPI_COMM_WORLD);
  else
    MPI_Reduce(buf + 8 * n, buf, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char *op = "bcast";
  long iters = 20000;
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "iters=", 6))
      iters = atol(argv[i] + 6);
    else
      op = argv[i];
  }
  if (strcmp(op, "bcast") && strcmp(op, "scatter") && strcmp(op, "gather") && strcmp(op, "reduce")) {
    if (rank == 0) fprintf(stderr, "shmcoll-exitorder: unknown operation %s (bcast, scatter, reduce, gather)\n", op);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (iters < 1) iters = 1;
  char *buf = calloc((size_t)n + 1, 8);
  double *left = malloc(sizeof(double) * (size_t)iters), *done = malloc(sizeof(double) * (size_t)iters);
  if (!buf || !left || !done) MPI_Abort(MPI_COMM_WORLD, 1);
  for (long i = 0; i < iters / 10 + 1; ++i) { /* warm-up */
    MPI_Barrier(MPI_COMM_WORLD);
    call(op, buf, n);
  }
  for (long i = 0; i < iters; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    left[i] = now();
    call(op, buf, n);
    done[i] = now();
  }
  double *allLeft = NULL, *allDone = NULL;
  if (rank == 0) {
    allLeft = malloc(sizeof(double) * (size_t)iters * (size_t)n);
    allDone = malloc(sizeof(double) * (size_t)iters * (size_t)n);
    if (!allLeft || !allDone) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Gather(left, (int)iters, MPI_DOUBLE, allLeft, (int)iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Gather(done, (int)iters, MPI_DOUBLE, allDone, (int)iters, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    printf("shmcoll-exitorder: %d ranks, 8-byte %s from root 0 after a barrier, %ld calls\n", n, op, iters);
    printf("  each rank's mean time per call (us):");
    for (int r = 0; r < n; ++r) {
      double sum = 0;
      for (long i = 0; i < iters; ++i) sum += allDone[r * iters + i] - allLeft[r * iters + i];
      printf(" %.2f", 1e6 * sum / (double)iters);
    }
    printf("\n");
    for (int r = 1; r < n; ++r) {
      long first = 0;
      double tFirst = 0, tAfter = 0;
      for (long i = 0; i < iters; ++i) {
        const double t = allDone[r * iters + i] - allLeft[r * iters + i];
        if (allLeft[i] < allLeft[r * iters + i]) {
          ++first;
          tFirst += t;
        } else {
          tAfter += t;
        }
      }
      printf("  rank %d: the root left the barrier first in %5.1f%% of calls (mean %.2f us), after it in the rest", r,
             100.0 * (double)first / (double)iters, first ? 1e6 * tFirst / (double)first : 0.0);
      if (first < iters)
        printf(" (mean %.2f us)\n", 1e6 * tAfter / (double)(iters - first));
      else
        printf("\n");
    }
  }
  free(allLeft);
  free(allDone);
  free(buf);
  free(left);
  free(done);
  MPI_Finalize();
  return 0;
}
