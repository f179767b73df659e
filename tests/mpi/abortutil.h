/* abortutil.h: FAIL and OK for the test programs that check their own results
 * and end the job at the first wrong one (testutil.h serves the collective
 * suites, built around their pattern keys).  Define PROG, the program's name,
 * before including it; FAIL names the `rank` in scope where it is used. */
#pragma once

#include <mpi.h>
#include <stdio.h>

#define FAIL(...)                                  \
  do {                                             \
    fprintf(stderr, "%s: rank %d: ", PROG, rank);  \
    fprintf(stderr, __VA_ARGS__);                  \
    fprintf(stderr, "\n");                         \
    MPI_Abort(MPI_COMM_WORLD, 1);                  \
  } while (0)

#define OK(call)                                               \
  do {                                                         \
    int rc_ = (call);                                          \
    if (rc_ != MPI_SUCCESS) FAIL("%s returned %d", #call, rc_); \
  } while (0)
