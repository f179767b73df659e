/*
 * prefault.c -- the first rooted collectives of a job take no page faults.
 *
 * A rooted collective writes each call into the next lane of its writer's
 * 64-lane broadcast ring, so a job whose MPI_Init left the rings unmapped
 * takes page faults in its first 64 calls (docs/ARCHITECTURE.md, "The
 * broadcast ring").  Each rank counts its own minor page faults
 * (getrusage) over 64 calls of MPI_Bcast, 64 of MPI_Reduce, 64 of
 * MPI_Gather and 64 of MPI_Scatter of 8 bytes, after one warm-up call of
 * each, and fails if it took more than FAULTS_ALLOWED.  Every call's result
 * is checked byte for byte, and the bytes around each receive buffer must
 * stay untouched.
 *
 * Arguments: `rotate` moves the root to rank i % n at call i (as some
 * benchmark suites do) instead of keeping it at rank 0.  The warm-up then
 * runs once from each root.
 *
 * Linux only (getrusage's ru_minflt).  Standard API only, but what it checks
 * is how shmcoll's MPI_Init prepares its shared segment (SHMCOLL_PREFAULT),
 * so it is not a crosslib test.
 */
#include <sys/resource.h>

#include "testutil.h"

#define CALLS 64
#define FAULTS_ALLOWED 16 /* the four loops' own, of any kind; unprepared rings take 64 or more */
#define G 64              /* guard bytes on each side of a receive buffer */

/* AddressSanitizer's runtime takes page faults of its own as a program runs
 * (its allocator's free lists, its record of allocation stacks, the shadow of
 * memory first touched): 14 to 49 per rank in these loops on 2 cores, against
 * 1 to 4 without it.  Under it the count is reported, not bounded; results
 * and guard bytes are checked all the same. */
#if defined(__SANITIZE_ADDRESS__)
#define BOUND_FAULTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BOUND_FAULTS 0
#endif
#endif
#ifndef BOUND_FAULTS
#define BOUND_FAULTS 1
#endif

static long minor_faults(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

static long long value(int call, int rank) { return 1000003LL * call + 7919LL * rank + 17; }

/* buf[G .. G+len) must hold `want`, every guard byte 0x5a. */
static void check_bytes(const unsigned char *buf, const void *want, size_t len, const char *what, int call) {
  for (size_t i = 0; i < G; ++i)
    if (buf[i] != 0x5a || buf[G + len + i] != 0x5a)
      tu_fail("%s call %d: guard byte %zu around the receive buffer was written", what, call, i);
  if (memcmp(buf + G, want, len)) tu_fail("%s call %d: wrong result", what, call);
}

/* One call of each rooted collective from `root`, checked; `all` holds tu_size
 * values.  Nothing is allocated here: the loops count page faults, and a
 * malloc per call takes fresh pages where the allocator recycles memory late
 * (AddressSanitizer's quarantine). */
static void one_round(int call, int root, unsigned char *rb, size_t rbytes, long long *all) {
  const int n = tu_size, me = tu_rank;
  long long v, want;

  memset(rb, 0x5a, rbytes);
  v = value(call, root);
  memcpy(rb + G, &v, sizeof v);
  if (me != root) memset(rb + G, 0, sizeof v);
  TU_CALL(MPI_Bcast(rb + G, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD));
  check_bytes(rb, &v, sizeof v, "MPI_Bcast", call);

  memset(rb, 0x5a, rbytes);
  v = value(call, me);
  want = 0;
  for (int r = 0; r < n; ++r) want += value(call, r);
  TU_CALL(MPI_Reduce(&v, rb + G, 1, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD));
  if (me == root) {
    check_bytes(rb, &want, sizeof want, "MPI_Reduce", call);
  } else {
    for (size_t i = 0; i < rbytes; ++i)
      if (rb[i] != 0x5a) tu_fail("MPI_Reduce call %d: a non-root's receive buffer was written", call);
  }

  memset(rb, 0x5a, rbytes);
  for (int r = 0; r < n; ++r) all[r] = value(call, r);
  TU_CALL(MPI_Gather(&v, 1, MPI_LONG_LONG, rb + G, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD));
  if (me == root) check_bytes(rb, all, sizeof(long long) * n, "MPI_Gather", call);

  memset(rb, 0x5a, rbytes);
  for (int r = 0; r < n; ++r) all[r] = value(call + 1, r) ^ root;
  TU_CALL(MPI_Scatter(all, 1, MPI_LONG_LONG, rb + G, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD));
  check_bytes(rb, &all[me], sizeof(long long), "MPI_Scatter", call);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "prefault");
  const int rotate = tu_arg_flag(argc, argv, "rotate");
  const size_t rbytes = 2 * G + sizeof(long long) * (size_t)tu_size;
  unsigned char *rb = (unsigned char *)tu_malloc(rbytes);
  long long *all = (long long *)tu_malloc(sizeof(long long) * (size_t)tu_size);

  const int warm = rotate ? tu_size : 1;
  for (int c = 0; c < warm; ++c) one_round(c, c % tu_size, rb, rbytes, all);
  long before = minor_faults();
  /* With rotation each root takes CALLS calls, so every ring lane of every root is used. */
  const int calls = rotate ? CALLS * tu_size : CALLS;
  for (int c = 0; c < calls; ++c) one_round(warm + c, rotate ? c % tu_size : 0, rb, rbytes, all);
  long faults = minor_faults() - before;
  if (BOUND_FAULTS && faults > FAULTS_ALLOWED)
    tu_fail("%ld minor page faults in %d calls each of MPI_Bcast, MPI_Reduce, MPI_Gather and MPI_Scatter "
            "(at most %d allowed): MPI_Init left the broadcast rings unmapped",
            faults, calls, FAULTS_ALLOWED);
  tu_ncases += 4L * calls;
  free(rb);
  free(all);
  char extra[64];
  snprintf(extra, sizeof extra, "faults=%ld%s", faults, BOUND_FAULTS ? "" : " (not bounded under AddressSanitizer)");
  return tu_finish(extra);
}
