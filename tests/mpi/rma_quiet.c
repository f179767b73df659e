/*
 * rma_quiet.c -- passive-target epochs leave sleeping members asleep.
 *
 * Rank 0 locks, puts into and unlocks the window of rank 1 thousands of
 * times over 0.4 s at least (exclusive and shared locks, lock_all and unlock_all, accumulates
 * under a lock) while every other rank sleeps in MPI_Barrier, waiting for
 * rank 0.  Nobody waits for those locks, so no unlock may wake anybody: the
 * test reads each sleeper's voluntary context switches (/proc/<pid>/status)
 * before and after the loop and fails if any sleeper woke more often than
 * its own wait's safety-net timeouts explain (a library that wakes every
 * sleeping member at every unlock wakes it hundreds of times here).  Then
 * the windows are checked byte for byte: rank 1 holds the last value put and
 * the accumulated sum, every other byte of every window its initial pattern.
 *
 * Linux only (/proc); at least 2 ranks.  Standard API only, but the sleeping
 * it relies on is shmcoll's waiting policy (a barrier waiter sleeps once its
 * short spin is over), so it is not a crosslib test.
 */
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define W 64      /* window bytes per rank */
#define PUT_AT 8  /* where rank 0 puts 8 bytes into rank 1's window */
#define ACC_AT 24 /* where rank 0 accumulates one long long into rank 1's window */
/* A sleeper's own safety-net timeouts (doubling from 2 ms to 64 ms) wake it
 * a few times over the loop: allowed, 4 and one per 32 ms of the loop. */
#define WAKES_ALLOWED(seconds) (4L + (long)((seconds) / 0.032))

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The process state letter of `pid` ('S': sleeping), or 0. */
static char state_of(int pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

/* voluntary_ctxt_switches of `pid`, or -1. */
static long voluntary_switches(int pid) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  long v = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "voluntary_ctxt_switches:", 24)) v = strtol(line + 24, NULL, 10);
  fclose(f);
  return v;
}

static unsigned char initial(int owner, int k) { return tu_byte(tu_key(owner, owner, 77), (uint64_t)k); }

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "rma_quiet");
  const long iters = tu_arg_long(argc, argv, "iters", 20000);
  if (tu_size < 2) tu_fail("needs at least 2 ranks");
  const int n = tu_size, me = tu_rank;

  unsigned char *base = NULL;
  MPI_Win win;
  TU_CALL(MPI_Win_allocate(W, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
  TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int k = 0; k < W; ++k) base[k] = initial(me, k);
  long long zero = 0;
  if (me == 1) memcpy(base + ACC_AT, &zero, sizeof zero);
  int pid = (int)getpid();
  int *pids = (int *)tu_malloc(sizeof(int) * n);
  TU_CALL(MPI_Allgather(&pid, 1, MPI_INT, pids, 1, MPI_INT, MPI_COMM_WORLD));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* (every window initialized before any epoch) */

  long long last = 0, sum = 0;
  if (me == 0) {
    /* Wait until every other rank sleeps in the barrier below. */
    const double give_up = now() + 20;
    for (int r = 1; r < n; ++r)
      while (state_of(pids[r]) != 'S') {
        if (now() > give_up) tu_fail("rank %d (pid %d) never went to sleep in MPI_Barrier", r, pids[r]);
        usleep(1000);
      }
    usleep(20000); /* (a while asleep: its safety-net timeout has grown) */
    long *before = (long *)tu_malloc(sizeof(long) * n), epochs = 0;
    for (int r = 1; r < n; ++r) before[r] = voluntary_switches(pids[r]);

    const double start = now(), until = start + 0.4; /* (and at least 0.4 s) */
    for (long i = 0; i < iters || now() < until; ++i) {
      last = (long long)i * 1000003 + 17;
      epochs = i + 1;
      const int type = i % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
      TU_CALL(MPI_Win_lock(type, 1, 0, win));
      TU_CALL(MPI_Put(&last, 8, MPI_BYTE, 1, PUT_AT, 8, MPI_BYTE, win));
      TU_CALL(MPI_Win_unlock(1, win));
      if (i % 8 == 0) {
        long long one = i % 5 + 1;
        sum += one;
        TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win));
        TU_CALL(MPI_Accumulate(&one, 1, MPI_LONG_LONG, 1, ACC_AT, 1, MPI_LONG_LONG, MPI_SUM, win));
        TU_CALL(MPI_Win_unlock(1, win));
      }
      if (i % 16 == 0) {
        TU_CALL(MPI_Win_lock_all(0, win));
        TU_CALL(MPI_Win_unlock_all(win));
      }
    }

    const long allowed = WAKES_ALLOWED(now() - start + 0.02);
    for (int r = 1; r < n; ++r) {
      const long after = voluntary_switches(pids[r]);
      if (before[r] < 0 || after < 0) tu_fail("could not read /proc/%d/status", pids[r]);
      if (after - before[r] > allowed)
        tu_fail(
            "rank %d, asleep in MPI_Barrier, woke %ld times (at most %ld allowed) during %ld lock epochs that "
            "nobody waited for",
            r, after - before[r], allowed, epochs);
      if (r == 1)
        printf("rma_quiet: rank 1 woke %ld times (at most %ld allowed) during %ld lock epochs\n", after - before[r],
               allowed, epochs);
    }
    free(before);
    ++tu_ncases;
  }
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  /* Byte for byte: rank 1 holds the last put and the sum; everything else is as it was. */
  TU_CALL(MPI_Bcast(&last, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  TU_CALL(MPI_Bcast(&sum, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
  for (int k = 0; k < W; ++k) {
    unsigned char want = initial(me, k);
    if (me == 1 && k >= PUT_AT && k < PUT_AT + 8) want = ((const unsigned char *)&last)[k - PUT_AT];
    if (me == 1 && k >= ACC_AT && k < ACC_AT + 8) want = ((const unsigned char *)&sum)[k - ACC_AT];
    if (base[k] != want) tu_fail("window byte %d is %#x, expected %#x", k, base[k], want);
  }
  TU_CALL(MPI_Win_free(&win));
  free(pids);
  return tu_finish("");
}
