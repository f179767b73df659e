/*
 * shmcoll-bench's one-sided mode (rma.h says what is measured).  Standard MPI
 * only: Win_allocate/free, Put, Get, Accumulate, Fetch_and_op,
 * Compare_and_swap, Win_fence, Win_lock/unlock, Win_lock_all/unlock_all,
 * Win_flush, Barrier.
 *
 * One window per (op, size) from MPI_Win_allocate (disp_unit 1), made and
 * freed outside the timing.  Rank r targets t = r + 1 mod N; o = r - 1 mod N
 * is the one rank that targets r.  Every loop (the sizing call, the warm-up
 * and the measured loop) starts from a known state and is checked exactly
 * afterwards; call i of a loop is i = 0 .. count - 1:
 *
 *   put  r's two origin buffers hold pattern(2r + p, t, off), p = 0, 1; call i
 *        puts buffer i mod 2, whose first min(s, 8) bytes are first set to
 *        stamp(i); afterwards t's window (poisoned before the loop) must hold
 *        buffer (count - 1) mod 2 with stamp(count - 1);
 *   get  r's window holds pattern(2r + p, 0, off) in two halves, p = 0, 1; call
 *        i gets half i mod 2 of t's window into result buffer i mod 2
 *        (poisoned before the loop); afterwards each result buffer written must
 *        hold its half of t's window;
 *   acc  MPI_SUM of s / 8 MPI_DOUBLEs, small integers (exact): the window
 *        starts at w0(k), r adds a(r, k) and at element 0 i + 1 by call i;
 *        afterwards t's element k must be w0(k) + count a(r, k), element 0
 *        count (count + 1) / 2;
 *   fop  MPI_SUM on one long long, operand i + 1: t's value must end at
 *        F0(t) + count (count + 1) / 2, and the value fetched by call i is
 *        F0(t) + i (i + 1) / 2 (the last 64 calls' results are kept);
 *   cas  one long long from cv(t, 0): call i swaps cv(t, i) for cv(t, i + 1),
 *        so every call succeeds; t ends at cv(t, count) and call i fetches
 *        cv(t, i) (the last 64 kept);
 *   copy (put_copy, get_copy) as put and get, with r's own window in place
 *        of t's and memcpy in place of the call.
 *
 * Put and get check every byte up to 64 KiB, above that the bytes next_off()
 * picks (neighbor.h); acc, fop and cas every element.
 */
#define _GNU_SOURCE /* clock_gettime under -std=c11 */
#include "rma.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "neighbor.h"

static const char *const kKinds[RMA_NKIND] = {"put", "get", "acc", "fop", "cas"};
static const char *const kSyncs[RMA_NSYNC] = {"fence", "lock", "lockall", "copy"};

static int kind_of(int op) { return op / RMA_NSYNC; }
static int sync_of(int op) { return op % RMA_NSYNC; }
/* The copy bound exists for put and get only. */
static int exists(int op) { return sync_of(op) != RMA_COPY || kind_of(op) == RMA_PUT || kind_of(op) == RMA_GET; }

const char *rma_name(int op) {
  static char names[RMA_NOPS][16];
  if (!names[op][0]) snprintf(names[op], sizeof names[op], "%s_%s", kKinds[op / RMA_NSYNC], kSyncs[op % RMA_NSYNC]);
  return names[op];
}

int rma_parse(const char *token, unsigned *mask) {
  unsigned all = 0;
  for (int op = 0; op < RMA_NOPS; op++)
    if (exists(op)) all |= 1u << op;
  if (!strcmp(token, "rma")) {
    *mask |= all;
    return 1;
  }
  for (int k = 0; k < RMA_NKIND; k++)
    if (!strcmp(token, kKinds[k])) {
      *mask |= all & (((1u << RMA_NSYNC) - 1) << (k * RMA_NSYNC));
      return 1;
    }
  for (int op = 0; op < RMA_NOPS; op++)
    if (exists(op) && !strcmp(token, rma_name(op))) {
      *mask |= 1u << op;
      return 1;
    }
  return 0;
}

int rma_single(int op) { return kind_of(op) == RMA_FOP || kind_of(op) == RMA_CAS; }

#define KEEP 64 /* fetched results kept by fop and cas: those of the last KEEP calls */
#define POISON 0xee
#define MIN_WIN 64 /* bytes: the smallest window allocated */

/* ---- the exact values ---------------------------------------------------------- */
static unsigned char stamp(long i, size_t k) { return (unsigned char)((unsigned long)i * 131u + k * 29u + 0x3c); }
static double acc_w0(size_t k) { return (double)(k % 509); }
static double acc_a(int r, size_t k) { return (double)((k + 7 * (size_t)r) % 1021 + 1); }
static long long fop_f0(int r) { return 1000LL * (r + 1); }
static long long cas_v(int r, long i) { return (r + 1) * 1000003LL + 7LL * i; }

/* ---- one (op, size) ------------------------------------------------------------ */
typedef struct {
  int op, kind, sync, me, n, t, o;
  size_t s; /* bytes per call */
  size_t m; /* acc: doubles per call */
  MPI_Win win;
  unsigned char *w; /* this rank's window */
  size_t wbytes;
  unsigned char *buf; /* origin or result buffers */
  double *acc;        /* acc: the origin vector */
  long long res[KEEP], operand, compare;
  long wrong; /* wrong bytes or elements over all loops */
} Rma;

static void report_wrong(Rma *R, const char *what, size_t at, long long got, long long want) {
  if (R->wrong++ < 3)
    fprintf(stderr, "shmcoll-bench: %s %zu: rank %d: %s [%zu] is %lld, want %lld\n", rma_name(R->op), R->s, R->me, what,
            at, got, want);
}

/* Before a loop: the window to its starting state (by its owner, in an
 * exclusive lock of itself) and the result buffers poisoned; then a barrier,
 * so no rank starts before its target is ready. */
static void reset(Rma *R) {
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, R->me, 0, R->win);
  switch (R->kind) {
    case RMA_PUT:
      memset(R->w, POISON, R->wbytes);
      break;
    case RMA_GET:
      memset(R->buf, POISON, 2 * R->s);
      break;
    case RMA_ACC:
      for (size_t k = 0; k < R->m; k++) ((double *)R->w)[k] = acc_w0(k);
      break;
    case RMA_FOP:
    case RMA_CAS: {
      long long v = R->kind == RMA_FOP ? fop_f0(R->me) : cas_v(R->me, 0);
      memcpy(R->w, &v, sizeof v);
      for (int j = 0; j < KEEP; j++) R->res[j] = -1;
      break;
    }
  }
  MPI_Win_unlock(R->me, R->win);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* After a loop whose ops have all completed at every rank: every rank checks
 * its window (in a shared lock of itself) and its own results. */
static void check(Rma *R, long count) {
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_lock(MPI_LOCK_SHARED, R->me, 0, R->win);
  long last = count - 1;
  switch (R->kind) {
    case RMA_PUT: {
      size_t ns = R->s < 8 ? R->s : 8;
      /* the copy bound writes this rank's own buffers into its own window */
      int from = R->sync == RMA_COPY ? R->me : R->o, to = R->sync == RMA_COPY ? R->t : R->me;
      for (size_t off = 0; off < R->s; off = next_off(off, R->s)) {
        unsigned char want = off < ns ? stamp(last, off) : pattern(2 * from + (int)(last & 1), to, off);
        if (R->w[off] != want) report_wrong(R, "window byte", off, R->w[off], want);
      }
      break;
    }
    case RMA_GET:
      for (long p = 0; p < 2 && p < count; p++) {
        const unsigned char *b = R->buf + (size_t)p * R->s;
        for (size_t off = 0; off < R->s; off = next_off(off, R->s)) {
          unsigned char want = pattern(2 * (R->sync == RMA_COPY ? R->me : R->t) + (int)p, 0, off);
          if (b[off] != want)
            report_wrong(R, p ? "result byte (odd calls)" : "result byte (even calls)", off, b[off], want);
        }
      }
      break;
    case RMA_ACC: {
      const double *v = (const double *)R->w;
      for (size_t k = 0; k < R->m; k++) {
        double want = k ? acc_w0(k) + (double)count * acc_a(R->o, k) : (double)count * (double)(count + 1) / 2;
        if (v[k] != want) report_wrong(R, "window double", k, (long long)v[k], (long long)want);
      }
      break;
    }
    case RMA_FOP:
    case RMA_CAS: {
      long long v, want;
      memcpy(&v, R->w, sizeof v);
      want = R->kind == RMA_FOP ? fop_f0(R->me) + count * (count + 1) / 2 : cas_v(R->me, count);
      if (v != want) report_wrong(R, "window value", 0, v, want);
      for (long i = count > KEEP ? count - KEEP : 0; i < count; i++) {
        want = R->kind == RMA_FOP ? fop_f0(R->t) + i * (i + 1) / 2 : cas_v(R->t, i);
        if (R->res[i % KEEP] != want) report_wrong(R, "fetched value of call", (size_t)i, R->res[i % KEEP], want);
      }
      break;
    }
  }
  MPI_Win_unlock(R->me, R->win);
}

/* Call i: the operation alone. */
static inline void call(Rma *R, long i) {
  switch (R->kind) {
    case RMA_PUT: {
      unsigned char *b = R->buf + (size_t)(i & 1) * R->s;
      for (size_t k = 0; k < R->s && k < 8; k++) b[k] = stamp(i, k);
      MPI_Put(b, (int)R->s, MPI_BYTE, R->t, 0, (int)R->s, MPI_BYTE, R->win);
      break;
    }
    case RMA_GET:
      MPI_Get(R->buf + (size_t)(i & 1) * R->s, (int)R->s, MPI_BYTE, R->t, (MPI_Aint)((size_t)(i & 1) * R->s), (int)R->s,
              MPI_BYTE, R->win);
      break;
    case RMA_ACC:
      R->acc[0] = (double)(i + 1);
      MPI_Accumulate(R->acc, (int)R->m, MPI_DOUBLE, R->t, 0, (int)R->m, MPI_DOUBLE, MPI_SUM, R->win);
      break;
    case RMA_FOP:
      R->operand = i + 1;
      MPI_Fetch_and_op(&R->operand, &R->res[i % KEEP], MPI_LONG_LONG, R->t, 0, MPI_SUM, R->win);
      break;
    case RMA_CAS:
      R->compare = cas_v(R->t, i);
      R->operand = cas_v(R->t, i + 1);
      MPI_Compare_and_swap(&R->operand, &R->compare, &R->res[i % KEEP], MPI_LONG_LONG, R->t, 0, R->win);
      break;
  }
}

/* Call i of the copy bound: what call i moves, by memcpy within this rank,
 * between the same buffers and this rank's own window. */
static inline void copy(Rma *R, long i) {
  const size_t half = (size_t)(i & 1) * R->s;
  if (R->kind == RMA_PUT) {
    unsigned char *b = R->buf + half;
    for (size_t k = 0; k < R->s && k < 8; k++) b[k] = stamp(i, k);
    memcpy(R->w, b, R->s);
  } else {
    memcpy(R->buf + half, R->w + half, R->s);
  }
}

/* Call i with its synchronization: what one iteration of the loop costs. */
static inline void iteration(Rma *R, long i) {
  switch (R->sync) {
    case RMA_COPY:
      copy(R, i);
      break;
    case RMA_FENCE:
      call(R, i);
      MPI_Win_fence(0, R->win);
      break;
    case RMA_LOCK:
      MPI_Win_lock(R->kind == RMA_PUT ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, R->t, 0, R->win);
      call(R, i);
      MPI_Win_unlock(R->t, R->win);
      break;
    case RMA_LOCKALL:
      call(R, i);
      MPI_Win_flush(R->t, R->win);
      break;
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One loop of `count` iterations from the starting state, checked; returns
 * this rank's time per iteration.  The epoch that fence and lockall open
 * around the loop is not timed. */
static double run_loop(Rma *R, long count) {
  reset(R);
  if (R->sync == RMA_FENCE) MPI_Win_fence(0, R->win);
  if (R->sync == RMA_LOCKALL) MPI_Win_lock_all(0, R->win);
  double sum = 0;
  if (bench_sync()) { /* a barrier before every call, only the calls timed */
    for (long i = 0; i < count; i++) {
      MPI_Barrier(MPI_COMM_WORLD);
      double c0 = now();
      iteration(R, i);
      sum += now() - c0;
    }
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    for (long i = 0; i < count; i++) iteration(R, i);
    sum = now() - t0;
  }
  if (R->sync == RMA_FENCE) MPI_Win_fence(MPI_MODE_NOSUCCEED, R->win);
  if (R->sync == RMA_LOCKALL) MPI_Win_unlock_all(R->win);
  check(R, count);
  return sum / (double)count;
}

static double measure(void *ctx, long count) { return bench_all_max(run_loop(ctx, count)); }

int rma_bench(int op, size_t s) {
  Rma R;
  memset(&R, 0, sizeof R);
  R.op = op, R.kind = kind_of(op), R.sync = sync_of(op), R.s = s;
  MPI_Comm_rank(MPI_COMM_WORLD, &R.me);
  MPI_Comm_size(MPI_COMM_WORLD, &R.n);
  R.t = (R.me + 1) % R.n, R.o = (R.me - 1 + R.n) % R.n;
  size_t bufbytes = 0;
  const char *why = NULL;
  switch (R.kind) {
    case RMA_PUT:
      R.wbytes = s, bufbytes = 2 * s;
      break;
    case RMA_GET:
      R.wbytes = 2 * s, bufbytes = 2 * s;
      break;
    case RMA_ACC:
      R.m = s / sizeof(double), R.wbytes = R.m * sizeof(double), bufbytes = R.wbytes;
      if (!R.m) why = "smaller than one MPI_DOUBLE";
      break;
    default:
      R.wbytes = sizeof(long long);
      break;
  }
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
  /* osc/rdma over vader crashes in it (mca_btl_vader_emu_acswap; tests/mpi/rma_atomic.c leaves it out too) */
  if (R.kind == RMA_CAS) why = "Open MPI 4 crashes in MPI_Compare_and_swap";
#endif
  if (s > (size_t)1 << 30)
    why = "counts overflow int";
  else if (R.wbytes + bufbytes > bench_mem_limit())
    why = "over --mem-limit";
  if (why) {
    if (R.me == 0) printf("%-20s %10zu  skipped: %s\n", rma_name(op), s, why);
    return 0;
  }
  /* at least MIN_WIN bytes: MPICH 4.0.2 put, got and accumulated wrong data in windows of 8 bytes or less here */
  if (MPI_Win_allocate((MPI_Aint)(R.wbytes < MIN_WIN ? MIN_WIN : R.wbytes), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &R.w,
                       &R.win) != MPI_SUCCESS) {
    fprintf(stderr, "shmcoll-bench: MPI_Win_allocate of %zu bytes failed\n", R.wbytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (bufbytes && !(R.buf = malloc(bufbytes))) {
    fprintf(stderr, "shmcoll-bench: cannot allocate %zu bytes\n", bufbytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  /* the fixed contents: put's origin buffers, get's window, acc's vector */
  if (R.kind == RMA_PUT)
    for (int p = 0; p < 2; p++)
      for (size_t off = 0; off < s; off++) R.buf[(size_t)p * s + off] = pattern(2 * R.me + p, R.t, off);
  if (R.kind == RMA_GET) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, R.me, 0, R.win);
    for (int p = 0; p < 2; p++)
      for (size_t off = 0; off < s; off++) R.w[(size_t)p * s + off] = pattern(2 * R.me + p, 0, off);
    MPI_Win_unlock(R.me, R.win);
  }
  if (R.kind == RMA_ACC) {
    R.acc = (double *)R.buf;
    for (size_t k = 0; k < R.m; k++) R.acc[k] = acc_a(R.me, k);
  }

  long iters = bench_plan(measure, &R);
  double mine = run_loop(&R, iters);
  int failed = bench_all_max((double)R.wrong) > 0;
  bench_report(rma_name(op), s, (double)s, (double)s * R.n, iters, mine);
  if (failed && R.me == 0) printf("%-20s %10zu  VALIDATION FAILED (wrong data after a loop)\n", rma_name(op), s);
  MPI_Win_free(&R.win);
  free(R.buf);
  return failed;
}
