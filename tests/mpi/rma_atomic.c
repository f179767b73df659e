/*
 * rma_atomic.c -- one-sided atomicity and mutual exclusion, with exact totals.
 *
 *  1. A randomized stress: under MPI_Win_lock_all every rank fires a random
 *     mix of MPI_Accumulate(MPI_SUM), MPI_Fetch_and_op(MPI_SUM),
 *     MPI_Get_accumulate(MPI_SUM) and MPI_Compare_and_swap increments at
 *     random counters of random ranks (compare-and-swap on counters of its
 *     own, as the default accumulate_ops info, same_op_no_op, requires).  Each rank counts what it added to
 *     each counter; at the end every counter must equal the sum over ranks,
 *     and the values fetch-and-op saw must never repeat for one counter (each
 *     fetch is atomic with the add).
 *  2. A lock-contention soak: every rank, many times, takes MPI_LOCK_EXCLUSIVE
 *     on a random rank, reads a counter with MPI_Get, adds one, writes it back
 *     with MPI_Put and unlocks: a non-atomic read-modify-write, exact only if
 *     the lock excludes.  Shared locks read in between.
 *  3. Every predefined operation on every type it is defined for, through
 *     MPI_Accumulate from all ranks at once into rank 0 (MAX, MIN, SUM, PROD,
 *     the logical and bitwise ones, MAXLOC, MPI_REPLACE; MPI_NO_OP through
 *     MPI_Get_accumulate).
 *  4. A shared window (MPI_Win_allocate_shared): plain loads and stores into
 *     the neighbours' memory between MPI_Win_sync and barriers.
 *  5. One element at a time, every rank into the next one's window: MPI_Fetch_and_op
 *     with MPI_SUM, MPI_REPLACE and MPI_NO_OP on MPI_LONG_LONG, MPI_UINT64_T,
 *     MPI_UNSIGNED, MPI_INT and MPI_DOUBLE, and one-element MPI_Accumulate(MPI_SUM)
 *     on MPI_LONG_LONG and MPI_DOUBLE, under MPI_Win_lock_all (a flush after each)
 *     and under an exclusive MPI_Win_lock per call: values whose two halves
 *     differ and sums that carry from the low half into the high one, the fetched
 *     values and the final memory exact, the bytes around the elements untouched.
 * Arguments: iters=N (default 300).  Standard API only.
 */
#include "testutil.h"

#define NC 8 /* counters per rank */
#if defined(OPEN_MPI)
/* Open MPI 4.1's osc/rdma over vader crashes in MPI_Compare_and_swap
 * (mca_btl_vader_emu_acswap): the stress leaves compare-and-swap out there. */
#define KINDS 3
#else
#define KINDS 4
#endif

static int n, me, iters = 300;
static unsigned rng_state;
static unsigned rnd(void) {
  rng_state = rng_state * 1103515245u + 12345u;
  return rng_state >> 8;
}

static void stress(void) {
  long long *mem;
  MPI_Win win;
  TU_CALL(MPI_Win_allocate(NC * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
  TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (int i = 0; i < NC; ++i) mem[i] = 0;
  long long *added = (long long *)calloc((size_t)n * NC, sizeof(long long));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  TU_CALL(MPI_Win_lock_all(0, win));
  for (int it = 0; it < iters; ++it) {
    /* Counters 0 .. NC/2-1 take MPI_SUM, the others compare-and-swap (with
     * MPI_NO_OP reads): the standard's default accumulate_ops, same_op_no_op,
     * promises atomicity only among accumulates with one operation or MPI_NO_OP. */
    int t = (int)(rnd() % n), kind = (int)(rnd() % KINDS), c = (int)(rnd() % (NC / 2)) + (kind == 3 ? NC / 2 : 0);
    long long v = 1 + rnd() % 5, old = -1;
    switch (kind) {
      case 0:
        TU_CALL(MPI_Accumulate(&v, 1, MPI_LONG_LONG, t, c, 1, MPI_LONG_LONG, MPI_SUM, win));
        break;
      case 1:
        TU_CALL(MPI_Fetch_and_op(&v, &old, MPI_LONG_LONG, t, c, MPI_SUM, win));
        break;
      case 2:
        TU_CALL(MPI_Get_accumulate(&v, 1, MPI_LONG_LONG, &old, 1, MPI_LONG_LONG, t, c, 1, MPI_LONG_LONG, MPI_SUM, win));
        break;
      default: { /* compare-and-swap until it takes */
        long long seen, want;
        TU_CALL(MPI_Fetch_and_op(NULL, &seen, MPI_LONG_LONG, t, c, MPI_NO_OP, win));
        TU_CALL(MPI_Win_flush(t, win));
        for (;;) {
          want = seen + v;
          TU_CALL(MPI_Compare_and_swap(&want, &seen, &old, MPI_LONG_LONG, t, c, win));
          TU_CALL(MPI_Win_flush(t, win));
          if (old == seen) break;
          seen = old;
        }
      }
    }
    TU_CALL(MPI_Win_flush(t, win)); /* (v and old may be reused only now) */
    if (old < -1) tu_fail("fetched a negative counter value %lld", old);
    added[t * NC + c] += v;
  }
  TU_CALL(MPI_Win_unlock_all(win));
  long long *total = (long long *)calloc((size_t)n * NC, sizeof(long long));
  TU_CALL(MPI_Allreduce(added, total, n * NC, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  TU_CALL(MPI_Win_fence(0, win)); /* (everyone done; our memory is final) */
  for (int c = 0; c < NC; ++c)
    if (mem[c] != total[me * NC + c])
      tu_fail("stress: counter %d of rank %d is %lld, the ranks added %lld", c, me, mem[c], total[me * NC + c]);
  tu_ncases += NC;
  TU_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  TU_CALL(MPI_Win_free(&win));
  free(added);
  free(total);
}

static void soak(void) {
  int *mem;
  MPI_Win win;
  TU_CALL(MPI_Alloc_mem(sizeof(int), MPI_INFO_NULL, &mem));
  *mem = 0;
  TU_CALL(MPI_Win_create(mem, sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int *mine = (int *)calloc(n, sizeof(int));
  for (int it = 0; it < iters; ++it) {
    int t = (int)(rnd() % n), v;
    if (rnd() % 4 == 0) { /* a reader: the value only grows */
      int a, b;
      TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
      TU_CALL(MPI_Get(&a, 1, MPI_INT, t, 0, 1, MPI_INT, win));
      TU_CALL(MPI_Win_flush(t, win));
      TU_CALL(MPI_Get(&b, 1, MPI_INT, t, 0, 1, MPI_INT, win));
      TU_CALL(MPI_Win_unlock(t, win));
      if (b < a) tu_fail("soak: a counter went down under a shared lock (%d, then %d)", a, b);
      continue;
    }
    TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
    TU_CALL(MPI_Get(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    TU_CALL(MPI_Win_flush(t, win));
    ++v;
    TU_CALL(MPI_Put(&v, 1, MPI_INT, t, 0, 1, MPI_INT, win));
    TU_CALL(MPI_Win_unlock(t, win));
    ++mine[t];
  }
  int *total = (int *)calloc(n, sizeof(int));
  TU_CALL(MPI_Allreduce(mine, total, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win)); /* (our own memory, read directly) */
  if (*mem != total[me]) tu_fail("soak: the counter of rank %d is %d, the ranks added %d", me, *mem, total[me]);
  TU_CALL(MPI_Win_unlock(me, win));
  ++tu_ncases;
  TU_CALL(MPI_Win_free(&win));
  MPI_Free_mem(mem);
  free(mine);
  free(total);
}

/* Every rank accumulates its value into rank 0 with `op`; rank 0 compares
 * with the fold it computes itself. */
#define OPCASE(T, MT, OP, INIT, EXPR, FOLD)                                                               \
  do {                                                                                                    \
    T *m;                                                                                                 \
    MPI_Win w;                                                                                            \
    TU_CALL(MPI_Win_allocate(3 * sizeof(T), sizeof(T), MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w));           \
    TU_CALL(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));                                                \
    for (int k = 0; k < 3; ++k) m[k] = (T)(INIT);                                                         \
    TU_CALL(MPI_Win_fence(0, w));                                                                         \
    T mine[2];                                                                                            \
    for (int k = 0; k < 2; ++k) {                                                                         \
      int r = me;                                                                                         \
      (void)r;                                                                                            \
      mine[k] = (T)(EXPR);                                                                                \
    }                                                                                                     \
    TU_CALL(MPI_Accumulate(mine, 2, MT, 0, 1, 2, MT, OP, w));                                             \
    TU_CALL(MPI_Win_fence(0, w));                                                                         \
    if (me == 0) {                                                                                        \
      T want[2] = {(T)(INIT), (T)(INIT)};                                                                 \
      for (int r = 0; r < n; ++r)                                                                         \
        for (int k = 0; k < 2; ++k) {                                                                     \
          T x = (T)(EXPR), a = want[k];                                                                   \
          want[k] = (T)(FOLD);                                                                            \
          (void)x, (void)a;                                                                               \
        }                                                                                                 \
      if (m[0] != (T)(INIT) || m[1] != want[0] || m[2] != want[1])                                        \
        tu_fail("%s on %s: got %g %g %g, want %g %g", #OP, #MT, (double)m[0], (double)m[1], (double)m[2], \
                (double)want[0], (double)want[1]);                                                        \
      ++tu_ncases;                                                                                        \
    }                                                                                                     \
    TU_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, w));                                                        \
    TU_CALL(MPI_Win_free(&w));                                                                            \
  } while (0)

static void ops(void) {
  OPCASE(int, MPI_INT, MPI_SUM, 5, r * 3 + k, a + x);
  OPCASE(long, MPI_LONG, MPI_PROD, 1, (r % 3) + 1 + k, a * x);
  OPCASE(double, MPI_DOUBLE, MPI_MAX, -1e9, (r * 7919 % 13) + 0.5 * k, x > a ? x : a);
  OPCASE(float, MPI_FLOAT, MPI_MIN, 1e9, (r * 7919 % 13) - 0.25f * k, x < a ? x : a);
  OPCASE(unsigned, MPI_UNSIGNED, MPI_BAND, 0xffffffffu, ~(1u << (r % 32)) ^ (unsigned)k, a & x);
  OPCASE(unsigned, MPI_UNSIGNED, MPI_BOR, 0, 1u << ((r + k) % 32), a | x);
  OPCASE(unsigned, MPI_UNSIGNED, MPI_BXOR, 0x5a5a, r * 2654435761u + k, a ^ x);
  OPCASE(int, MPI_INT, MPI_LAND, 1, (r + k) % 5 != 3, a && x);
  OPCASE(int, MPI_INT, MPI_LOR, 0, r == n - 1 && k == 1, a || x);
  OPCASE(int, MPI_INT, MPI_LXOR, 0, (r + k) % 2, (!a) != (!x));
  OPCASE(short, MPI_SHORT, MPI_SUM, 0, r + k, a + x);
  OPCASE(unsigned char, MPI_BYTE, MPI_BOR, 0, 1u << ((r + k) % 8), a | x);
  { /* MPI_REPLACE from one rank, MPI_NO_OP from the others */
    int *m;
    MPI_Win w;
    TU_CALL(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w));
    *m = 11;
    TU_CALL(MPI_Win_fence(0, w));
    int v = 42 + me, old;
    if (me == n - 1)
      TU_CALL(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_REPLACE, w));
    else
      TU_CALL(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, &old, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_NO_OP, w));
    TU_CALL(MPI_Win_fence(0, w));
    if (me == 0 && *m != 42 + n - 1) tu_fail("MPI_REPLACE/MPI_NO_OP: got %d, want %d", *m, 42 + n - 1);
    TU_CALL(MPI_Win_free(&w));
    ++tu_ncases;
  }
  { /* MPI_MAXLOC on MPI_DOUBLE_INT through a derived target type (every other pair) */
    struct di {
      double d;
      int i;
    } * m, mine[2];
    MPI_Win w;
    MPI_Datatype every_other;
    TU_CALL(MPI_Type_vector(2, 1, 2, MPI_DOUBLE_INT, &every_other));
    TU_CALL(MPI_Type_commit(&every_other));
    TU_CALL(MPI_Win_allocate(4 * sizeof(struct di), sizeof(struct di), MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w));
    for (int k = 0; k < 4; ++k) m[k].d = -1, m[k].i = -1;
    TU_CALL(MPI_Win_fence(0, w));
    for (int k = 0; k < 2; ++k) mine[k].d = (me * 37 + k * 11) % 17, mine[k].i = me;
    TU_CALL(MPI_Accumulate(mine, 2, MPI_DOUBLE_INT, 0, 0, 1, every_other, MPI_MAXLOC, w));
    TU_CALL(MPI_Win_fence(0, w));
    if (me == 0)
      for (int k = 0; k < 2; ++k) {
        double best = -1;
        int at = -1;
        for (int r = 0; r < n; ++r) {
          double d = (r * 37 + k * 11) % 17;
          if (d > best) best = d, at = r;
        }
        if (m[2 * k].d != best || m[2 * k].i != at || m[2 * k + 1].d != -1 || m[2 * k + 1].i != -1)
          tu_fail("MPI_MAXLOC element %d: got (%g, %d), want (%g, %d); the hole holds (%g, %d)", k, m[2 * k].d,
                  m[2 * k].i, best, at, m[2 * k + 1].d, m[2 * k + 1].i);
      }
    MPI_Type_free(&every_other);
    TU_CALL(MPI_Win_free(&w));
    ++tu_ncases;
  }
}

static void shared(void) {
  int *mine;
  MPI_Win win;
  const int per = 32;
  TU_CALL(MPI_Win_allocate_shared(per * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win));
  TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int *right, du;
  MPI_Aint sz;
  int r = (me + 1) % n;
  TU_CALL(MPI_Win_shared_query(win, r, &sz, &du, &right));
  if (sz != per * (MPI_Aint)sizeof(int) || du != (int)sizeof(int))
    tu_fail("MPI_Win_shared_query(%d): size %ld, disp_unit %d", r, (long)sz, du);
  int *first;
  TU_CALL(MPI_Win_shared_query(win, 0, &sz, &du, &first));
  if (me > 0 && mine != first + me * per)
    tu_fail("the shared window is not contiguous: rank 0 at %p, %d at %p", (void *)first, me, (void *)mine);
  TU_CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  for (int round = 0; round < 20; ++round) {
    for (int k = 0; k < per; ++k) right[k] = me * 1000 + round * 37 + k; /* plain stores into the neighbour */
    TU_CALL(MPI_Win_sync(win));
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    TU_CALL(MPI_Win_sync(win));
    int l = (me - 1 + n) % n;
    for (int k = 0; k < per; ++k)
      if (mine[k] != l * 1000 + round * 37 + k)
        tu_fail("shared window, round %d: int %d is %d, want %d", round, k, mine[k], l * 1000 + round * 37 + k);
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    ++tu_ncases;
  }
  TU_CALL(MPI_Win_unlock_all(win));
  TU_CALL(MPI_Win_free(&win));
}

/* Section 5's window, 128 bytes a rank (disp_unit 1): guard bytes before
 * E_LL, from E_GUARD to E_ACC_LL and from E_END; the elements at the offsets below.  (With windows of 72 bytes,
 * MPICH 4.0.2 from Debian fetched guard bytes instead of the element at 4
 * processes, under tests/crosslib.) */
enum { E_LL = 8, E_U32 = 16, E_I32 = 20, E_DBL = 24, E_U64 = 32, E_GUARD = 40, E_ACC_LL = 48, E_ACC_DBL = 56, E_END = 64, E_BYTES = 128 };

static void init_elements(unsigned char *m) {
  memset(m, 0xa5, E_BYTES);
  long long ll = 0x00000001fffffff0LL;
  unsigned u32 = 0xffffffffu;
  int i32 = -5;
  double d = 1.5, dacc = 1e300;
  uint64_t u64 = UINT64_MAX;
  memcpy(m + E_LL, &ll, 8), memcpy(m + E_U32, &u32, 4), memcpy(m + E_I32, &i32, 4);
  memcpy(m + E_DBL, &d, 8), memcpy(m + E_U64, &u64, 8);
  memcpy(m + E_ACC_LL, &ll, 8), memcpy(m + E_ACC_DBL, &dacc, 8);
}

/* One MPI_Fetch_and_op to rank t, completed; the fetched value must be `want`
 * (size bytes). */
static void fop_one(const void *v, const void *want, int size, MPI_Datatype type, int t, int at, MPI_Op op,
                    int locked, MPI_Win w, const char *what) {
  unsigned char got[8];
  memset(got, 0x5a, sizeof got);
  if (locked) TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w));
  TU_CALL(MPI_Fetch_and_op(v, got, type, t, at, op, w));
  TU_CALL(locked ? MPI_Win_unlock(t, w) : MPI_Win_flush(t, w));
  if (memcmp(got, want, (size_t)size)) {
    char g[24], x[24];
    for (int k = 0; k < size; ++k)
      snprintf(g + 2 * k, 3, "%02x", got[size - 1 - k]), snprintf(x + 2 * k, 3, "%02x", ((const unsigned char *)want)[size - 1 - k]);
    tu_fail("%s (%s) into rank %d: fetched 0x%s, want 0x%s", what, locked ? "lock" : "lock_all", t, g, x);
  }
  for (int k = size; k < 8; ++k)
    if (got[k] != 0x5a) tu_fail("%s (%s): result byte %d written", what, locked ? "lock" : "lock_all", k);
  ++tu_ncases;
}

static void acc_one(const void *v, MPI_Datatype type, int t, int at, int locked, MPI_Win w) {
  if (locked) TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w));
  TU_CALL(MPI_Accumulate(v, 1, type, t, at, 1, type, MPI_SUM, w));
  TU_CALL(locked ? MPI_Win_unlock(t, w) : MPI_Win_flush(t, w));
}

static void elements(void) {
  for (int locked = 0; locked < 2; ++locked) {
    unsigned char *m;
    MPI_Win w;
    TU_CALL(MPI_Win_allocate(E_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w));
    TU_CALL(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w));
    init_elements(m);
    TU_CALL(MPI_Win_unlock(me, w));
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    const int t = (me + 1) % n;
    if (!locked) TU_CALL(MPI_Win_lock_all(0, w));
    { /* MPI_LONG_LONG: a sum carrying into the high half, a replace, a read */
      long long add = 0x20, was = 0x00000001fffffff0LL, sum = 0x0000000200000010LL, put = 0x1122334455667788LL;
      fop_one(&add, &was, 8, MPI_LONG_LONG, t, E_LL, MPI_SUM, locked, w, "MPI_LONG_LONG MPI_SUM");
      fop_one(&put, &sum, 8, MPI_LONG_LONG, t, E_LL, MPI_REPLACE, locked, w, "MPI_LONG_LONG MPI_REPLACE");
      fop_one(NULL, &put, 8, MPI_LONG_LONG, t, E_LL, MPI_NO_OP, locked, w, "MPI_LONG_LONG MPI_NO_OP");
    }
    { /* MPI_UINT64_T: a sum that wraps */
      uint64_t add = 2, was = UINT64_MAX;
      fop_one(&add, &was, 8, MPI_UINT64_T, t, E_U64, MPI_SUM, locked, w, "MPI_UINT64_T MPI_SUM");
    }
    { /* MPI_UNSIGNED: a sum that wraps, then a replace */
      unsigned add = 2, was = 0xffffffffu, one = 1, put = 0x89abcdefu;
      fop_one(&add, &was, 4, MPI_UNSIGNED, t, E_U32, MPI_SUM, locked, w, "MPI_UNSIGNED MPI_SUM");
      fop_one(&put, &one, 4, MPI_UNSIGNED, t, E_U32, MPI_REPLACE, locked, w, "MPI_UNSIGNED MPI_REPLACE");
    }
    { /* MPI_INT: a sum across zero, a replace, a read */
      int add = 7, was = -5, sum = 2, put = -123456789;
      fop_one(&add, &was, 4, MPI_INT, t, E_I32, MPI_SUM, locked, w, "MPI_INT MPI_SUM");
      fop_one(&put, &sum, 4, MPI_INT, t, E_I32, MPI_REPLACE, locked, w, "MPI_INT MPI_REPLACE");
      fop_one(NULL, &put, 4, MPI_INT, t, E_I32, MPI_NO_OP, locked, w, "MPI_INT MPI_NO_OP");
    }
    { /* MPI_DOUBLE: a sum, then a replace by negative zero */
      double add = 2.25, was = 1.5, sum = 3.75, put = -0.0;
      fop_one(&add, &was, 8, MPI_DOUBLE, t, E_DBL, MPI_SUM, locked, w, "MPI_DOUBLE MPI_SUM");
      fop_one(&put, &sum, 8, MPI_DOUBLE, t, E_DBL, MPI_REPLACE, locked, w, "MPI_DOUBLE MPI_REPLACE");
    }
    { /* one-element accumulates */
      long long add = 0x20;
      double dadd = 1e300;
      acc_one(&add, MPI_LONG_LONG, t, E_ACC_LL, locked, w);
      acc_one(&dadd, MPI_DOUBLE, t, E_ACC_DBL, locked, w);
    }
    if (!locked) TU_CALL(MPI_Win_unlock_all(w));
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w));
    unsigned char want[E_BYTES];
    memset(want, 0xa5, sizeof want);
    long long ll = 0x1122334455667788LL, acc = 0x0000000200000010LL;
    unsigned u32 = 0x89abcdefu;
    int i32 = -123456789;
    double d = -0.0, dacc = 2e300;
    uint64_t u64 = 1;
    memcpy(want + E_LL, &ll, 8), memcpy(want + E_U32, &u32, 4), memcpy(want + E_I32, &i32, 4);
    memcpy(want + E_DBL, &d, 8), memcpy(want + E_U64, &u64, 8);
    memcpy(want + E_ACC_LL, &acc, 8), memcpy(want + E_ACC_DBL, &dacc, 8);
    for (int k = 0; k < E_BYTES; ++k)
      if (m[k] != want[k]) {
        const int guard = k < E_LL || (k >= E_GUARD && k < E_ACC_LL) || k >= E_END;
        tu_fail("one-element atomics (%s): byte %d of rank %d's window is 0x%02x, want 0x%02x%s", locked ? "lock" : "lock_all",
                k, me, m[k], want[k], guard ? " (a guard byte)" : "");
      }
    TU_CALL(MPI_Win_unlock(me, w));
    ++tu_ncases;
    TU_CALL(MPI_Win_free(&w));
  }
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "rma_atomic");
  n = tu_size, me = tu_rank;
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "iters=", 6)) iters = atoi(argv[i] + 6);
  rng_state = 12345u + 7919u * (unsigned)me;
  stress();
  soak();
  ops();
  shared();
  elements();
  char extra[64];
  snprintf(extra, sizeof extra, "iters=%d", iters);
  return tu_finish(extra);
}
