/*
 * threads_coll.c -- collectives and communicator creation from several
 * threads of every rank at once (MPI_THREAD_MULTIPLE), checked byte for byte.
 *
 * Written against the standard MPI C API and POSIX threads only (the same
 * source builds and passes with Open MPI's and MPICH's mpicc).
 *
 *   threads_coll [threads=4] [iters=150] [rounds=12]
 *
 *  0. MPI_Init_thread(MPI_THREAD_MULTIPLE) must provide MPI_THREAD_MULTIPLE
 *     (otherwise the program fails at once, saying so); MPI_Query_thread
 *     returns it; MPI_Is_thread_main is true in the main thread and false in
 *     every thread the program starts.
 *  1. The main thread makes one duplicate of MPI_COMM_WORLD per thread (in
 *     the same order on every rank).  Each thread then runs `iters`
 *     iterations of MPI_Alltoall, MPI_Allgatherv (uneven counts, zero counts,
 *     gaps between the blocks), MPI_Allreduce (MPI_BXOR on 64-bit words of
 *     arbitrary bits and MPI_SUM on long long, in place on every other
 *     iteration), MPI_Bcast (every root in turn), MPI_Barrier and
 *     MPI_Ialltoall completed by MPI_Wait or by an MPI_Test loop, on its own
 *     duplicate.  Sizes go from 0 bytes to beyond the usual eager limits.
 *     Every byte depends on (collective, sender, receiver, thread,
 *     iteration); every receive area is bracketed by guard bytes, and gaps
 *     and guards must keep their sentinel; send buffers must not change.
 *     The order of the six collectives rotates with (iteration + thread), so
 *     the threads of a rank run different collectives at the same moment,
 *     and odd ranks start their threads in the reverse order with other
 *     delays and yield at other iterations, so the interleavings of the
 *     ranks differ.
 *  2. For `rounds` rounds, every thread makes communicators concurrently
 *     with the other threads of its rank, from its own duplicate:
 *     MPI_Comm_dup (congruent, used for an MPI_Alltoall), MPI_Comm_split
 *     with a color that depends on the rank, the thread and the round and a
 *     key that reverses the rank order (size, rank and the members' world
 *     ranks checked), MPI_Comm_create_group over a subset in reversed order
 *     with the thread id as the tag (only the members call it); and,
 *     concurrently on the one communicator MPI_COMM_WORLD shared by all
 *     threads, MPI_Comm_create_group with the thread id as the tag (the
 *     standard lets threads call it concurrently on one communicator when
 *     their tags differ).  Every new communicator is used (MPI_Allreduce of
 *     the world ranks, MPI_Allgather of them) and freed.
 *
 * On a wrong result the rank, thread, case and the first differing byte are
 * printed and the program calls MPI_Abort(MPI_COMM_WORLD, 1).  No timing is
 * asserted: the delays only make interleavings likely.  "no_dup", "no_split",
 * "no_cg" and "no_cg_world" skip a case of part 2 (to isolate a failure).
 *
 * HOST DEFECTS found with this program (both cases are legal MPI):
 *  - MPICH 4.0.2 (Debian, ch4:ucx) segfaults in MPI_Comm_create_group(
 *    MPI_COMM_WORLD, g, ...) when g was made from the group of a duplicate of
 *    MPI_COMM_WORLD (same processes), even single-threaded: MPI_Comm_dup(
 *    MPI_COMM_WORLD, &d); MPI_Comm_group(d, &g); MPI_Comm_create_group(
 *    MPI_COMM_WORLD, g, 0, &c) crashes at 2 ranks.  Under MPICH the groups of
 *    that case are therefore made from MPI_COMM_WORLD's own group.
 *  - Open MPI 4.1.4 deadlocks (threads stuck in ompi_comm_nextcid) when the
 *    threads' MPI_Comm_create_group calls on MPI_COMM_WORLD (subset groups,
 *    distinct tags) run concurrently with MPI_Comm_create_group on the
 *    threads' own duplicates: every run at 2 ranks with 4 threads here, while
 *    either case alone passed.  Under Open MPI the MPI_COMM_WORLD case is
 *    skipped (with a printed note) unless "cg_world" is given.
 */
#include "threadutil.h"


/* ---- the data ----------------------------------------------------------------- */

enum { OP_A2A = 1, OP_AGV, OP_XOR, OP_SUM, OP_BCAST, OP_IA2A, OP_DUP, NOPS_LOOP = 6 };

static uint64_t ckey(int op, int src, int dst, int t, long it) {
  uint64_t k = tu_mix((uint64_t)op * 0x100000001b3ull + (uint64_t)(uint32_t)src);
  k = tu_mix(k ^ ((uint64_t)(uint32_t)dst << 17));
  k = tu_mix(k ^ ((uint64_t)(uint32_t)t << 33));
  return tu_mix(k ^ (uint64_t)it);
}

static MPI_Comm *tcomm; /* tcomm[t]: thread t's duplicate of MPI_COMM_WORLD */
static long iters = 150, rounds = 12;
/* test switches, to isolate a failure: skip a case of part 2 */
static int no_cg, no_cg_world, no_dup, no_split;
/* see HOST DEFECTS in the header */
#ifdef MPICH_VERSION
static const int mpich_group_defect = 1;
#else
static const int mpich_group_defect = 0;
#endif

/* MPI_Alltoall (ia = 0) or MPI_Ialltoall (+ MPI_Wait or an MPI_Test loop). */
static void do_alltoall(MPI_Comm c, int t, long it, int ia) {
  int n = tu_size, me = tu_rank, op = ia ? OP_IA2A : OP_A2A;
  long m = 1 + (it * 7 + t * 3) % 40;
  if (it % 16 == 5) m = 3000 + t; /* 12 KB blocks */
  if (it % 23 == 0) m = 0;
  SETCASE("%s iteration %ld, %ld ints per block", ia ? "MPI_Ialltoall" : "MPI_Alltoall", it, m);
  size_t blk = (size_t)m * 4;
  unsigned char *s = (unsigned char *)tu_malloc(blk * n + 1);
  for (int p = 0; p < n; ++p) tu_pattern(s + p * blk, ckey(op, me, p, t, it), 0, blk);
  uint64_t sh = tu_hash_bytes(s, blk * n);
  gb r;
  gb_new(&r, blk * n);
  for (int p = 0; p < n; ++p) tu_pattern(r.ip + p * blk, ckey(op, p, me, t, it), 0, blk);
  if (!ia) {
    CK(MPI_Alltoall(s, (int)m, MPI_INT, r.p, (int)m, MPI_INT, c));
  } else {
    MPI_Request q;
    CK(MPI_Ialltoall(s, (int)m, MPI_INT, r.p, (int)m, MPI_INT, c, &q));
    if (it % 2) {
      int done = 0;
      long spins = 0;
      while (!done) {
        CK(MPI_Test(&q, &done, MPI_STATUS_IGNORE));
        if (++spins % 64 == 0) sched_yield();
      }
      if (q != MPI_REQUEST_NULL) tfail("MPI_Test completed the request but did not set it to MPI_REQUEST_NULL");
    } else {
      CK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    }
  }
  gcheck(&r, "receive buffer");
  if (tu_hash_bytes(s, blk * n) != sh) tfail("the send buffer was modified");
  gb_free(&r);
  free(s);
}

static void do_allgatherv(MPI_Comm c, int t, long it) {
  int n = tu_size, me = tu_rank;
  int *cnt = (int *)tu_malloc(sizeof(int) * n), *dis = (int *)tu_malloc(sizeof(int) * n);
  long tot = 0;
  for (int p = 0; p < n; ++p) {
    cnt[p] = (p * 3 + (int)it + t) % 7;
    if (it % 32 == 9) cnt[p] += 5000 + p;
    dis[p] = (int)tot + 2; /* two ints of gap before every block */
    tot += cnt[p] + 2;
  }
  SETCASE("MPI_Allgatherv iteration %ld, %d ints from this rank", it, cnt[me]);
  unsigned char *s = (unsigned char *)tu_malloc((size_t)cnt[me] * 4 + 1);
  tu_pattern(s, ckey(OP_AGV, me, TU_ALL, t, it), 0, (size_t)cnt[me] * 4);
  gb r;
  gb_new(&r, (size_t)tot * 4);
  for (int p = 0; p < n; ++p) tu_pattern(r.ip + (size_t)dis[p] * 4, ckey(OP_AGV, p, TU_ALL, t, it), 0, (size_t)cnt[p] * 4);
  CK(MPI_Allgatherv(s, cnt[me], MPI_INT, r.p, cnt, dis, MPI_INT, c));
  gcheck(&r, "receive buffer");
  gb_free(&r);
  free(s), free(cnt), free(dis);
}

static void do_allreduce(MPI_Comm c, int t, long it) {
  int n = tu_size, me = tu_rank, inplace = it % 2;
  long m = 1 + (it * 5 + t) % 30;
  if (it % 16 == 11) m = 4000;
  SETCASE("MPI_Allreduce iteration %ld, %ld elements%s", it, m, inplace ? ", in place" : "");
  /* MPI_BXOR over 64-bit words of arbitrary bits */
  uint64_t *x = (uint64_t *)tu_malloc(8 * m);
  gb r;
  gb_new(&r, 8 * m);
  for (long k = 0; k < m; ++k) {
    uint64_t e = 0;
    for (int p = 0; p < n; ++p) e ^= tu_mix(ckey(OP_XOR, p, 0, t, it) + (uint64_t)k);
    memcpy(r.ip + 8 * k, &e, 8);
    x[k] = tu_mix(ckey(OP_XOR, me, 0, t, it) + (uint64_t)k);
  }
  if (inplace) {
    memcpy(r.p, x, 8 * m);
    CK(MPI_Allreduce(MPI_IN_PLACE, r.p, (int)m, MPI_UINT64_T, MPI_BXOR, c));
  } else {
    CK(MPI_Allreduce(x, r.p, (int)m, MPI_UINT64_T, MPI_BXOR, c));
    for (long k = 0; k < m; ++k)
      if (x[k] != tu_mix(ckey(OP_XOR, me, 0, t, it) + (uint64_t)k)) tfail("MPI_BXOR: the send buffer was modified");
  }
  gcheck(&r, "MPI_BXOR result");
  gb_free(&r);
  /* MPI_SUM over long long of 24-bit values: exact in any order */
  long long *y = (long long *)tu_malloc(8 * m);
  gb_new(&r, 8 * m);
  for (long k = 0; k < m; ++k) {
    long long e = 0;
    for (int p = 0; p < n; ++p) e += (long long)(tu_mix(ckey(OP_SUM, p, 0, t, it) + (uint64_t)k) & 0xffffff) - 0x800000;
    memcpy(r.ip + 8 * k, &e, 8);
    y[k] = (long long)(tu_mix(ckey(OP_SUM, me, 0, t, it) + (uint64_t)k) & 0xffffff) - 0x800000;
  }
  if (!inplace) {
    memcpy(r.p, y, 8 * m);
    CK(MPI_Allreduce(MPI_IN_PLACE, r.p, (int)m, MPI_LONG_LONG, MPI_SUM, c));
  } else {
    CK(MPI_Allreduce(y, r.p, (int)m, MPI_LONG_LONG, MPI_SUM, c));
  }
  gcheck(&r, "MPI_SUM result");
  gb_free(&r);
  free(x), free(y);
}

static void do_bcast(MPI_Comm c, int t, long it) {
  int n = tu_size, me = tu_rank, root = (int)((it + t) % n);
  long len = (it * 37 + t * 11) % 300;
  if (it % 16 == 13) len = 100000 + t;
  SETCASE("MPI_Bcast iteration %ld, root %d, %ld bytes", it, root, len);
  gb r;
  gb_new(&r, (size_t)len);
  tu_pattern(r.ip, ckey(OP_BCAST, root, TU_ALL, t, it), 0, (size_t)len);
  if (me == root) memcpy(r.p, r.ip, (size_t)len);
  CK(MPI_Bcast(r.p, (int)len, MPI_BYTE, root, c));
  gcheck(&r, me == root ? "the root's buffer" : "receive buffer");
  gb_free(&r);
}

static void coll_thread(int t) {
  MPI_Comm c = tcomm[t];
  int odd = tu_rank % 2;
  /* odd ranks start their threads in the reverse order */
  nap_us(300L * (odd ? nthreads - 1 - t : t));
  for (long it = 0; it < iters; ++it) {
    if (odd ? (it + t) % 5 == 0 : (it * 3 + t) % 7 == 0) nap_us(odd ? 40 + 20 * t : 30);
    if ((it + t) % 3 == (odd ? 1 : 2)) sched_yield();
    for (int j = 0; j < NOPS_LOOP; ++j) {
      switch ((j + it + t) % NOPS_LOOP) {
        case 0: do_alltoall(c, t, it, 0); break;
        case 1: do_allgatherv(c, t, it); break;
        case 2: do_allreduce(c, t, it); break;
        case 3: do_bcast(c, t, it); break;
        case 4:
          SETCASE("MPI_Barrier iteration %ld", it);
          CK(MPI_Barrier(c));
          break;
        case 5: do_alltoall(c, t, it, 1); break;
      }
    }
  }
}

/* ---- communicator creation from several threads ---------------------------- */

/* Uses comm: its size and rank must be the expected ones, and its members
 * (in rank order) the world ranks in want[]; checked with MPI_Allgather and
 * MPI_Allreduce. */
static void use_comm(MPI_Comm c, const int *want, int nwant, const char *what) {
  int n = -1, r = -1;
  CK(MPI_Comm_size(c, &n));
  CK(MPI_Comm_rank(c, &r));
  if (n != nwant) tfail("%s: size %d, expected %d", what, n, nwant);
  int myr = -1;
  for (int i = 0; i < nwant; ++i)
    if (want[i] == tu_rank) myr = i;
  if (r != myr) tfail("%s: rank %d, expected %d", what, r, myr);
  gb g;
  gb_new(&g, sizeof(int) * (size_t)n);
  memcpy(g.ip, want, sizeof(int) * (size_t)n);
  CK(MPI_Allgather(&tu_rank, 1, MPI_INT, g.p, 1, MPI_INT, c));
  gcheck(&g, what);
  gb_free(&g);
  long long s = 0, e = 0, v = 1000 + tu_rank * (long long)tu_rank;
  for (int i = 0; i < nwant; ++i) e += 1000 + want[i] * (long long)want[i];
  CK(MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, c));
  if (s != e) tfail("%s: MPI_Allreduce(MPI_SUM) gave %lld, expected %lld", what, s, e);
  atomic_fetch_add(&nchecks, 1);
}

static void create_thread(int t) {
  MPI_Comm c = tcomm[t];
  int n = tu_size, me = tu_rank, odd = me % 2;
  int *want = (int *)tu_malloc(sizeof(int) * n);
  nap_us(200L * (odd ? t : nthreads - 1 - t));
  for (long r = 0; r < rounds; ++r) {
    MPI_Comm d, s, g;
    int cmp = -1;
    /* MPI_Comm_dup */
    SETCASE("MPI_Comm_dup round %ld", r);
    if (!no_dup) {
    CK(MPI_Comm_dup(c, &d));
    CK(MPI_Comm_compare(c, d, &cmp));
    if (cmp != MPI_CONGRUENT) tfail("MPI_Comm_compare(parent, dup) = %d, expected MPI_CONGRUENT", cmp);
    for (int i = 0; i < n; ++i) want[i] = i;
    use_comm(d, want, n, "dup");
    do_alltoall(d, t, 1000 + r, 0);
    SETCASE("MPI_Comm_dup round %ld", r);
    CK(MPI_Comm_free(&d));
    if (d != MPI_COMM_NULL) tfail("MPI_Comm_free did not set the handle to MPI_COMM_NULL");
    }

    /* MPI_Comm_split: color from (rank, thread, round), key reverses the order */
    SETCASE("MPI_Comm_split round %ld", r);
    int color = (int)((me + t + r) % 2), nw = 0;
    if ((r + t) % 4 == 3 && me == n - 1) color = MPI_UNDEFINED;
    if (!no_split) {
    CK(MPI_Comm_split(c, color, n - me, &s));
    if (color == MPI_UNDEFINED) {
      if (s != MPI_COMM_NULL) tfail("MPI_Comm_split with MPI_UNDEFINED did not give MPI_COMM_NULL");
    } else {
      for (int p = n - 1; p >= 0; --p) {
        int cp = (int)((p + t + r) % 2);
        if ((r + t) % 4 == 3 && p == n - 1) cp = MPI_UNDEFINED;
        if (cp == color) want[nw++] = p;
      }
      use_comm(s, want, nw, "split");
      CK(MPI_Comm_free(&s));
    }
    }

    /* MPI_Comm_create_group on the thread's own duplicate, tag = thread id */
    SETCASE("MPI_Comm_create_group on the thread's duplicate, round %ld", r);
    MPI_Group wg, sg;
    CK(MPI_Comm_group(c, &wg));
    nw = 0;
    for (int p = n - 1; p >= 0; --p)
      if ((p + r + t) % 3 != 0 || n == 1) want[nw++] = p;
    CK(MPI_Group_incl(wg, nw, want, &sg));
    int member = 0;
    for (int i = 0; i < nw; ++i) member |= want[i] == me;
    if (member && !no_cg) {
      CK(MPI_Comm_create_group(c, sg, t, &g));
      use_comm(g, want, nw, "create_group");
      CK(MPI_Comm_free(&g));
    }
    CK(MPI_Group_free(&sg));

    /* MPI_Comm_create_group concurrently on MPI_COMM_WORLD, tag = thread id */
    SETCASE("MPI_Comm_create_group on MPI_COMM_WORLD (shared by the threads), round %ld", r);
    nw = 0;
    for (int p = 0; p < n; ++p)
      if ((p + r * 2 + t) % 4 != 1 || n == 1) want[(nw++)] = (p + t) % n;
    member = 0;
    for (int i = 0; i < nw; ++i) member |= want[i] == me;
    /* the group comes from the thread's duplicate on odd rounds (a group is a
     * set of processes, whichever communicator it came from), from
     * MPI_COMM_WORLD's group on even rounds (and always under MPICH: see
     * HOST DEFECTS) */
    MPI_Group src = wg, worldg;
    CK(MPI_Comm_group(MPI_COMM_WORLD, &worldg));
    if (r % 2 == 0 || mpich_group_defect) src = worldg;
    CK(MPI_Group_incl(src, nw, want, &sg));
    CK(MPI_Group_free(&worldg));
    if (member && !no_cg_world) {
      CK(MPI_Comm_create_group(MPI_COMM_WORLD, sg, t, &g));
      use_comm(g, want, nw, "create_group(MPI_COMM_WORLD)");
      CK(MPI_Comm_free(&g));
    }
    CK(MPI_Group_free(&sg));
    CK(MPI_Group_free(&wg));
    if (odd && (r + t) % 2) sched_yield();
  }
  free(want);
}

int main(int argc, char **argv) {
  thr_init(&argc, &argv, "threads_coll");
  nthreads = (int)tu_arg_long(argc, argv, "threads", 4);
  iters = tu_arg_long(argc, argv, "iters", 150);
  rounds = tu_arg_long(argc, argv, "rounds", 12);
  no_cg = tu_arg_flag(argc, argv, "no_cg");
  no_dup = tu_arg_flag(argc, argv, "no_dup");
  no_split = tu_arg_flag(argc, argv, "no_split");
  no_cg_world = tu_arg_flag(argc, argv, "no_cg_world");
#ifdef OPEN_MPI
  /* see HOST DEFECTS in the header; "cg_world" runs the case anyway */
  if (!tu_arg_flag(argc, argv, "cg_world")) {
    no_cg_world = 1;
    if (tu_rank == 0)
      printf("threads_coll: note: Open MPI: concurrent MPI_Comm_create_group on MPI_COMM_WORLD skipped (it "
             "deadlocks Open MPI 4.1.4's context-id allocation; see the header)\n");
  }
#endif
#ifdef MPICH_VERSION
  if (tu_rank == 0)
    printf("threads_coll: note: MPICH: groups for MPI_Comm_create_group on MPI_COMM_WORLD made from its own group "
           "(MPICH 4.0.2 crashes with the group of a duplicate; see the header)\n");
#endif
  if (nthreads < 1 || nthreads > 64) tfail("threads=%d: 1 to 64", nthreads);
  tcomm = (MPI_Comm *)tu_malloc(sizeof(MPI_Comm) * nthreads);
  for (int t = 0; t < nthreads; ++t) {
    CK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    CK(MPI_Comm_set_errhandler(tcomm[t], MPI_ERRORS_RETURN));
  }
  double t0 = MPI_Wtime();
  run_threads(coll_thread);
  SETCASE("main, between the parts");
  CK(MPI_Barrier(MPI_COMM_WORLD));
  double t1 = MPI_Wtime();
  run_threads(create_thread);
  SETCASE("main, at the end");
  double t2 = MPI_Wtime();
  for (int t = 0; t < nthreads; ++t) CK(MPI_Comm_free(&tcomm[t]));
  free(tcomm);
  tu_ncases = atomic_load(&nchecks);
  char extra[160];
  snprintf(extra, sizeof extra, "threads=%d iters=%ld rounds=%ld (collectives %.1fs, communicators %.1fs)", nthreads,
           iters, rounds, t1 - t0, t2 - t1);
  return tu_finish(extra);
}
