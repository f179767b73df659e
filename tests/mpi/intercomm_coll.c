/*
 * intercomm_coll.c -- the collectives on intercommunicators, byte for byte.
 *
 * Written against the standard MPI C API only (the same source builds and
 * passes with Open MPI's and MPICH's mpicc).  Needs at least 2 ranks (with
 * one it says so and passes).  The intercommunicators join two groups of
 * MPI_COMM_WORLD: split 1 | n-1, n-1 | 1 and in the middle, and even | odd
 * with the odd ranks in reverse order.
 *
 * On an intercommunicator every group's data goes to the OTHER group.  Each
 * message from world rank s to world rank r carries signature bytes that
 * name (s, r, case) (r = "all" when every receiver gets the same block), laid
 * out in each side's datatype (derived types with holes from testutil.h's
 * catalog on either side, only the signatures agree); receive buffers are
 * bracketed by guard bytes, and guards, the gaps between blocks and the
 * holes inside types must keep their sentinel; send buffers must not change;
 * buffers that are not significant for a rank (MPI_PROC_NULL ranks, a root's
 * send buffer in a gather, ...) must stay untouched.
 *
 *  1. MPI_Alltoall(v,w), MPI_Allgather(v): 0 .. ~190 KiB per block, varied
 *     per-pair sizes (some empty) with displacements in reverse order and
 *     gaps, per-peer datatypes for alltoallw.
 *  2. MPI_Bcast, MPI_Gather(v), MPI_Scatter(v) at four roots (first and last
 *     rank of each group), empty and up to ~190 KiB per block: MPI_ROOT at
 *     the root, MPI_PROC_NULL in the rest of its group, the root's rank in
 *     the other group.
 *  3. MPI_Reduce (the same root modes), MPI_Allreduce,
 *     MPI_Reduce_scatter_block and MPI_Reduce_scatter, 0 to 5000 elements
 *     per rank (uneven counts for MPI_Reduce_scatter), with MPI_SUM and with a
 *     non-commutative user operation (composition of affine maps mod 251):
 *     each group gets the other group's inputs reduced in that group's rank
 *     order.
 *  4. MPI_Barrier: a rank cannot leave before every member of the other group
 *     has entered (one of them enters 50 ms after a message from it);
 *     MPI_Ibarrier: polled with MPI_Test it stays incomplete while a member
 *     of the other group provably has not started it.
 *  5. Every collective of 1-3 that has a nonblocking form also through it
 *     (MPI_Wait), and all of 1-3 through the MPI-4 big-count (_c) forms,
 *     blocking and nonblocking, where the library is MPI 4 (counts as
 *     MPI_Count, displacements as MPI_Aint, the non-commutative operation
 *     made with MPI_Op_create_c); several outstanding at once on two
 *     intercommunicators and with a blocking collective in between,
 *     completed by MPI_Waitall in reverse order.
 *  6. Errors: MPI_IN_PLACE on every member (MPI_ERR_BUFFER or MPI_ERR_ARG),
 *     a root that is neither MPI_ROOT, MPI_PROC_NULL nor a remote rank
 *     (MPI_ERR_ROOT), MPI_Scan/MPI_Exscan (MPI_ERR_COMM); the
 *     intercommunicator works afterwards.
 *  7. MPI_Comm_idup of two intercommunicators while nonblocking collectives
 *     are outstanding on both (half of the ranks start the two in the other
 *     order, which the standard allows across communicators): each duplicate
 *     is congruent with its parent, has its groups, and carries collectives
 *     of its own.
 *
 * "intercomm_coll [quick] [verbose]": quick skips the largest size in most
 * cases; verbose prints the time of each layout.
 */
#include "interutil.h"

static int quick;
static unsigned salt = 1;

/* ---- the intercommunicator under test ------------------------------------------------ */

typedef struct ictx {
  layout L;
  MPI_Comm ic;
  int n, m;             /* local and remote group sizes */
  const int *lw, *rw;   /* world ranks of the local and remote group, by rank */
} ictx;

static void ictx_make(ictx *x, const char *name, const int *grp, const int *key, int tag) {
  layout_make(&x->L, name, grp, key);
  const int lead[2] = {0, 0};
  x->ic = make_inter(&x->L, lead, MPI_COMM_WORLD, NULL, tag);
  x->n = x->L.n[x->L.mine], x->m = x->L.n[1 - x->L.mine];
  x->lw = x->L.world[x->L.mine], x->rw = x->L.world[1 - x->L.mine];
}
static void ictx_free(ictx *x) {
  TU_CALL(MPI_Comm_free(&x->ic));
  layout_free(&x->L);
}

/* ---- jobs: one collective with its buffers and their expected images ----------------- */

typedef struct job {
  char desc[320];
  gb s, r;
  int has_s, has_r;
  void *mem[24]; /* freed at the end */
  int nmem;
  MPI_Request req;
} job;

static void job_init(job *j, const ictx *x, const char *fmt, ...) {
  memset(j, 0, sizeof *j);
  j->req = MPI_REQUEST_NULL;
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(j->desc, sizeof j->desc, "%s on %s", what, x->L.name);
  tu_context = j->desc; /* (printed with any failure until the next job) */
}
static void *jalloc(job *j, size_t bytes) {
  if (j->nmem == (int)(sizeof j->mem / sizeof j->mem[0])) tu_fail("%s: too many allocations for one job", j->desc);
  void *p = tu_malloc(bytes);
  j->mem[j->nmem++] = p;
  return p;
}
static void job_sbuf(job *j, size_t len) {
  gb_new(&j->s, len);
  j->has_s = 1;
}
static void job_rbuf(job *j, size_t len) {
  gb_new(&j->r, len);
  j->has_r = 1;
}
/* Waits (nonblocking jobs), then checks every buffer against its image. */
static void job_end(job *j) {
  if (j->req != MPI_REQUEST_NULL) TU_CALL(MPI_Wait(&j->req, MPI_STATUS_IGNORE));
  if (j->has_r) gb_check(&j->r, j->desc, "receive buffer"), gb_free(&j->r);
  if (j->has_s) gb_check(&j->s, j->desc, "send buffer (must not change)"), gb_free(&j->s);
  for (int i = 0; i < j->nmem; ++i) free(j->mem[i]);
  ++nchecks;
}

/* ---- the forms of a collective -------------------------------------------------------- */

/* A case runs a collective as MPI_X (0), MPI_IX (F_NB), MPI_X_c (F_BIG) or
 * MPI_IX_c (F_NB | F_BIG); the _c forms exist from MPI 4 on. */
enum { F_NB = 1, F_BIG = 2 };
#if MPI_VERSION >= 4
#define NFORMS 4
#else
#define NFORMS 2
#endif
static const char *form_name(int form) {
  static const char *const names[4] = {"", "nonblocking ", "big-count ", "nonblocking big-count "};
  return names[form & 3];
}

/* ---- sizes, types, layouts ---------------------------------------------------------- */

/* The types of a family used here (testutil.h's catalog without the one whose
 * lower bound is negative): every element starts at its own address. */
static tu_type *ty(int fam, int v) {
  static const int d[] = {0, 1, 2, 3, 4, 6};
  if (v < 0) v = -v;
  return fam == TU_F_INT ? &tu_cat_i[v % TU_NCAT_I] : &tu_cat_d[d[v % 6]];
}

/* Basic elements (a multiple of 12, so every catalog type divides it) from
 * world rank s to world rank r (TU_ALL: to everybody) in a "varied" case. */
static long varied(int s, int r, long unit) {
  const long k = (long)((unsigned)(s * 5 + (r == TU_ALL ? 3 : r) * 3) + salt) % 6;
  return k == 0 ? 0 : 12 * k * unit;
}

/* Byte offsets of k blocks (block i: cnt[i] elements of t[i]) in one buffer:
 * in order and packed, or (scrambled) in reverse order with gaps of whole
 * extents.  Offsets are multiples of each block's extent. */
static size_t place(int k, const long *cnt, tu_type *const *t, int scrambled, MPI_Aint *off) {
  MPI_Aint pos = 0;
  for (int q = 0; q < k; ++q) {
    const int i = scrambled ? k - 1 - q : q;
    const MPI_Aint ext = t[i]->extent;
    pos = (pos + ext - 1) / ext * ext;
    if (scrambled) pos += ext * ((i * 7 + 3) % 3);
    off[i] = pos;
    MPI_Aint span = tu_span(t[i], cnt[i]), full = cnt[i] * ext;
    pos += span > full ? span : full;
  }
  return (size_t)pos;
}

/* Writes message `key` as cnt elements of t at off: into the image, and into
 * the buffer itself for a send side. */
static void put(gb *g, int send, MPI_Aint off, const tu_type *t, long cnt, uint64_t key) {
  tu_place(g->ip + off, t, cnt, key);
  if (send) tu_place(g->p + off, t, cnt, key);
}

/* ---- 1. the all-to-all family --------------------------------------------------------- */

enum { A2A, A2AV, A2AW, AG, AGV };
static const char *const a2a_name[] = {"MPI_Alltoall", "MPI_Alltoallv", "MPI_Alltoallw", "MPI_Allgather",
                                       "MPI_Allgatherv"};

/* Starts (F_NB) or runs one of them in a form: `unit` scales the sizes, fam/sv/rv pick the
 * send and receive types. */
static void all_start(job *j, const ictx *x, int op, long unit, int fam, int sv, int rv, int form) {
  const int m = x->m, ag = op == AG || op == AGV;
  tu_type *st = ty(fam, sv), *rt = ty(fam, rv);
  job_init(j, x, "%s%s (%s -> %s, unit %ld)", form_name(form), a2a_name[op], st->name, rt->name, unit);
  const unsigned sl = salt++;
  long *scnt = (long *)jalloc(j, sizeof(long) * (m + 1)), *rcnt = (long *)jalloc(j, sizeof(long) * (m + 1));
  tu_type **stv = (tu_type **)jalloc(j, sizeof(void *) * (m + 1)), **rtv = (tu_type **)jalloc(j, sizeof(void *) * (m + 1));
  MPI_Aint *soff = (MPI_Aint *)jalloc(j, sizeof(MPI_Aint) * (m + 1)), *roff = (MPI_Aint *)jalloc(j, sizeof(MPI_Aint) * (m + 1));
  const int ns = ag ? 1 : m; /* send blocks */
  for (int r = 0; r < m; ++r) {
    const int dst = ag ? TU_ALL : x->rw[r];
    /* receive block r comes from remote rank r */
    const long er = op == A2A || op == AG ? 12 * unit : varied(x->rw[r], ag ? TU_ALL : tu_rank, unit);
    rtv[r] = op == A2AW ? ty(fam, rv + 2 * r) : rt;
    rcnt[r] = er / rtv[r]->nbase;
    if (r < ns) {
      const long es = op == A2A || op == AG ? 12 * unit : varied(tu_rank, dst, unit);
      stv[r] = op == A2AW ? ty(fam, sv + r) : st;
      scnt[r] = es / stv[r]->nbase;
    }
  }
  const int scr = op == A2AV || op == A2AW || op == AGV;
  job_sbuf(j, place(ns, scnt, stv, 0, soff) + 8);
  job_rbuf(j, place(m, rcnt, rtv, scr, roff) + 8);
  for (int r = 0; r < ns; ++r) put(&j->s, 1, soff[r], stv[r], scnt[r], tu_key(tu_rank, ag ? TU_ALL : x->rw[r], sl));
  for (int r = 0; r < m; ++r) put(&j->r, 0, roff[r], rtv[r], rcnt[r], tu_key(x->rw[r], ag ? TU_ALL : tu_rank, sl));
  int *sc = (int *)jalloc(j, sizeof(int) * (m + 1)), *sd = (int *)jalloc(j, sizeof(int) * (m + 1));
  int *rc = (int *)jalloc(j, sizeof(int) * (m + 1)), *rd = (int *)jalloc(j, sizeof(int) * (m + 1));
  memset(sc, 0, sizeof(int) * (m + 1)), memset(sd, 0, sizeof(int) * (m + 1));
  MPI_Datatype *sdt = (MPI_Datatype *)jalloc(j, sizeof(MPI_Datatype) * (m + 1));
  MPI_Datatype *rdt = (MPI_Datatype *)jalloc(j, sizeof(MPI_Datatype) * (m + 1));
  for (int r = 0; r < m; ++r) {
    rc[r] = (int)rcnt[r], rdt[r] = rtv[r]->dt;
    rd[r] = op == A2AW ? (int)roff[r] : (int)(roff[r] / rt->extent);
    if (r < ns) {
      sc[r] = (int)scnt[r], sdt[r] = stv[r]->dt;
      sd[r] = op == A2AW ? (int)soff[r] : (int)(soff[r] / st->extent);
    }
  }
  void *sb = j->s.p, *rb = j->r.p;
  MPI_Request *q = form & F_NB ? &j->req : NULL;
#if MPI_VERSION >= 4
  if (form & F_BIG) {
    MPI_Count *scc = (MPI_Count *)jalloc(j, sizeof(MPI_Count) * (m + 1));
    MPI_Count *rcc = (MPI_Count *)jalloc(j, sizeof(MPI_Count) * (m + 1));
    MPI_Aint *sda = (MPI_Aint *)jalloc(j, sizeof(MPI_Aint) * (m + 1));
    MPI_Aint *rda = (MPI_Aint *)jalloc(j, sizeof(MPI_Aint) * (m + 1));
    for (int r = 0; r <= m; ++r) scc[r] = sc[r], sda[r] = sd[r], rcc[r] = r < m ? rc[r] : 0, rda[r] = r < m ? rd[r] : 0;
    switch (op) {
      case A2A:
        TU_CALL(q ? MPI_Ialltoall_c(sb, scc[0], st->dt, rb, rcc[0], rt->dt, x->ic, q)
                  : MPI_Alltoall_c(sb, scc[0], st->dt, rb, rcc[0], rt->dt, x->ic));
        break;
      case A2AV:
        TU_CALL(q ? MPI_Ialltoallv_c(sb, scc, sda, st->dt, rb, rcc, rda, rt->dt, x->ic, q)
                  : MPI_Alltoallv_c(sb, scc, sda, st->dt, rb, rcc, rda, rt->dt, x->ic));
        break;
      case A2AW:
        TU_CALL(q ? MPI_Ialltoallw_c(sb, scc, sda, sdt, rb, rcc, rda, rdt, x->ic, q)
                  : MPI_Alltoallw_c(sb, scc, sda, sdt, rb, rcc, rda, rdt, x->ic));
        break;
      case AG:
        TU_CALL(q ? MPI_Iallgather_c(sb, scc[0], st->dt, rb, rcc[0], rt->dt, x->ic, q)
                  : MPI_Allgather_c(sb, scc[0], st->dt, rb, rcc[0], rt->dt, x->ic));
        break;
      case AGV:
        TU_CALL(q ? MPI_Iallgatherv_c(sb, scc[0], st->dt, rb, rcc, rda, rt->dt, x->ic, q)
                  : MPI_Allgatherv_c(sb, scc[0], st->dt, rb, rcc, rda, rt->dt, x->ic));
        break;
    }
    return;
  }
#endif
  switch (op) {
    case A2A:
      TU_CALL(q ? MPI_Ialltoall(sb, sc[0], st->dt, rb, rc[0], rt->dt, x->ic, q)
                : MPI_Alltoall(sb, sc[0], st->dt, rb, rc[0], rt->dt, x->ic));
      break;
    case A2AV:
      TU_CALL(q ? MPI_Ialltoallv(sb, sc, sd, st->dt, rb, rc, rd, rt->dt, x->ic, q)
                : MPI_Alltoallv(sb, sc, sd, st->dt, rb, rc, rd, rt->dt, x->ic));
      break;
    case A2AW:
      TU_CALL(q ? MPI_Ialltoallw(sb, sc, sd, sdt, rb, rc, rd, rdt, x->ic, q)
                : MPI_Alltoallw(sb, sc, sd, sdt, rb, rc, rd, rdt, x->ic));
      break;
    case AG:
      TU_CALL(q ? MPI_Iallgather(sb, sc[0], st->dt, rb, rc[0], rt->dt, x->ic, q)
                : MPI_Allgather(sb, sc[0], st->dt, rb, rc[0], rt->dt, x->ic));
      break;
    case AGV:
      TU_CALL(q ? MPI_Iallgatherv(sb, sc[0], st->dt, rb, rc, rd, rt->dt, x->ic, q)
                : MPI_Allgatherv(sb, sc[0], st->dt, rb, rc, rd, rt->dt, x->ic));
      break;
  }
}

/* ---- 2. the rooted collectives ---------------------------------------------------------- */

enum { BC, GA, GAV, SC, SCV };
static const char *const rooted_name[] = {"MPI_Bcast", "MPI_Gather", "MPI_Gatherv", "MPI_Scatter", "MPI_Scatterv"};

/* The root argument of this rank when the root is local rank `lr` of group `g`. */
static int root_arg(const ictx *x, int g, int lr) {
  if (g != x->L.mine) return lr;
  return x->L.lrank == lr ? MPI_ROOT : MPI_PROC_NULL;
}

/* Known defects of the reference libraries (Open MPI 4.1.4 and MPICH 4.0.2
 * from Debian), avoided for them only:
 *  - Open MPI's intercommunicator MPI_Scatterv/MPI_Gatherv take the root's
 *    counts (in units of the root's datatype) as counts of the other side's
 *    datatype (coll/inter), so they fail (MPI_ERR_TRUNCATE) or misplace data
 *    unless both sides use the same type: for it they do.
 *  - MPICH's MPI_Ibcast on an intercommunicator whose root is not rank 0 of
 *    its group delivers garbage (the blocking MPI_Bcast is right): for it the
 *    nonblocking form keeps the root at rank 0.
 *  - MPICH does not refuse MPI_IN_PLACE on an intercommunicator (its
 *    MPI_Allgather returns success at 2 ranks and crashes at 5): not tried
 *    for it; nor does Open MPI's MPI_Reduce_scatter_block (it crashes in a
 *    memcpy): not tried for it.
 *  - Open MPI's MPI_Exscan does not refuse an intercommunicator and calls a
 *    null function pointer: not tried for it.
 *  - Open MPI's MPI_Comm_idup can deadlock when other collectives are started
 *    on the same communicator before it completes (one run in ten or so at 5
 *    ranks, in check_idup): for it each MPI_Comm_idup is waited for before
 *    the next operation on that communicator starts, and so both groups
 *    duplicate the two communicators in the same order. */
static int skip_case(int op_rooted, int lr, int form) {
#if defined(MPICH_VERSION)
  return op_rooted == BC && (form & F_NB) && lr != 0;
#else
  (void)op_rooted, (void)lr, (void)form;
  return 0;
#endif
}

static void rooted_start(job *j, const ictx *x, int op, int g, int lr, long unit, int fam, int sv, int rv, int form) {
  const int m = x->m, root = root_arg(x, g, lr), rootw = x->L.world[g][lr];
#if defined(OPEN_MPI)
  if (op == GAV || op == SCV) rv = sv;
#endif
  tu_type *st = ty(fam, sv), *rt = ty(fam, rv);
  job_init(j, x, "%s%s with the root at group %c rank %d (%s, %s -> %s, unit %ld)", form_name(form),
           rooted_name[op], 'A' + g, lr,
           root == MPI_ROOT ? "this rank passes MPI_ROOT" : root == MPI_PROC_NULL ? "MPI_PROC_NULL" : "remote root",
           st->name, rt->name, unit);
  const unsigned sl = salt++;
  const int vec = op == GAV || op == SCV;
  long *cnt = (long *)jalloc(j, sizeof(long) * m);
  tu_type **tv = (tu_type **)jalloc(j, sizeof(void *) * m);
  MPI_Aint *off = (MPI_Aint *)jalloc(j, sizeof(MPI_Aint) * m);
  int *ci = (int *)jalloc(j, sizeof(int) * m), *di = (int *)jalloc(j, sizeof(int) * m);
  memset(ci, 0, sizeof(int) * m), memset(di, 0, sizeof(int) * m);
  void *sb = NULL, *rb = NULL;
  MPI_Request *q = form & F_NB ? &j->req : NULL;
  int scount = 0, rcount = 0;
  /* Elements of the block between the root and remote (non-root group) rank r. */
#define BLOCK(w) (vec ? varied(op == GAV ? (w) : rootw, op == GAV ? rootw : (w), unit) : 12 * unit)
  if (op == BC) {
    const long e = 12 * unit;
    if (root == MPI_ROOT) {
      scount = (int)(e / st->nbase);
      job_sbuf(j, (size_t)tu_span(st, scount) + 8);
      put(&j->s, 1, 0, st, scount, tu_key(rootw, TU_ALL, sl));
      sb = j->s.p;
    } else {
      rcount = (int)(e / rt->nbase);
      job_rbuf(j, (size_t)tu_span(rt, rcount) + 8);
      if (root != MPI_PROC_NULL) put(&j->r, 0, 0, rt, rcount, tu_key(rootw, TU_ALL, sl));
      rb = j->r.p;
    }
    MPI_Datatype dt = root == MPI_ROOT ? st->dt : rt->dt;
    void *buf = root == MPI_ROOT ? sb : rb;
    const int c = root == MPI_ROOT ? scount : rcount;
#if MPI_VERSION >= 4
    if (form & F_BIG) {
      TU_CALL(q ? MPI_Ibcast_c(buf, c, dt, root, x->ic, q) : MPI_Bcast_c(buf, c, dt, root, x->ic));
      return;
    }
#endif
    TU_CALL(q ? MPI_Ibcast(buf, c, dt, root, x->ic, q) : MPI_Bcast(buf, c, dt, root, x->ic));
    return;
  }
  const int gather = op == GA || op == GAV;
  if (root == MPI_ROOT) { /* one block per remote rank on the root's side */
    for (int r = 0; r < m; ++r) {
      tv[r] = gather ? rt : st;
      cnt[r] = BLOCK(x->rw[r]) / tv[r]->nbase;
    }
    gb *g2 = gather ? (job_rbuf(j, place(m, cnt, tv, vec, off) + 8), &j->r) : (job_sbuf(j, place(m, cnt, tv, vec, off) + 8), &j->s);
    for (int r = 0; r < m; ++r) {
      put(g2, !gather, off[r], tv[r], cnt[r], gather ? tu_key(x->rw[r], rootw, sl) : tu_key(rootw, x->rw[r], sl));
      ci[r] = (int)cnt[r], di[r] = (int)(off[r] / tv[r]->extent);
    }
    /* The other side's buffer is not significant: a guarded one that must stay untouched. */
    if (gather) job_sbuf(j, 64); else job_rbuf(j, 64);
    sb = j->s.p, rb = j->r.p;
    scount = rcount = (int)cnt[0];
  } else {
    job_sbuf(j, 64), job_rbuf(j, 64); /* (replaced below for the other group) */
    if (root != MPI_PROC_NULL) {
      const long e = BLOCK(tu_rank);
      tu_type *t = gather ? st : rt;
      gb *g2 = gather ? &j->s : &j->r;
      gb_free(g2);
      const int c = (int)(e / t->nbase);
      gb_new(g2, (size_t)tu_span(t, c) + 8);
      put(g2, gather, 0, t, c, gather ? tu_key(tu_rank, rootw, sl) : tu_key(rootw, tu_rank, sl));
      scount = rcount = c;
    }
    sb = j->s.p, rb = j->r.p;
  }
#undef BLOCK
#if MPI_VERSION >= 4
  if (form & F_BIG) {
    MPI_Count *cic = (MPI_Count *)jalloc(j, sizeof(MPI_Count) * m);
    MPI_Aint *dia = (MPI_Aint *)jalloc(j, sizeof(MPI_Aint) * m);
    for (int r = 0; r < m; ++r) cic[r] = ci[r], dia[r] = di[r];
    switch (op) {
      case GA:
        TU_CALL(q ? MPI_Igather_c(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic, q)
                  : MPI_Gather_c(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic));
        break;
      case GAV:
        TU_CALL(q ? MPI_Igatherv_c(sb, scount, st->dt, rb, cic, dia, rt->dt, root, x->ic, q)
                  : MPI_Gatherv_c(sb, scount, st->dt, rb, cic, dia, rt->dt, root, x->ic));
        break;
      case SC:
        TU_CALL(q ? MPI_Iscatter_c(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic, q)
                  : MPI_Scatter_c(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic));
        break;
      case SCV:
        TU_CALL(q ? MPI_Iscatterv_c(sb, cic, dia, st->dt, rb, rcount, rt->dt, root, x->ic, q)
                  : MPI_Scatterv_c(sb, cic, dia, st->dt, rb, rcount, rt->dt, root, x->ic));
        break;
    }
    return;
  }
#endif
  switch (op) {
    case GA:
      TU_CALL(q ? MPI_Igather(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic, q)
                : MPI_Gather(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic));
      break;
    case GAV:
      TU_CALL(q ? MPI_Igatherv(sb, scount, st->dt, rb, ci, di, rt->dt, root, x->ic, q)
                : MPI_Gatherv(sb, scount, st->dt, rb, ci, di, rt->dt, root, x->ic));
      break;
    case SC:
      TU_CALL(q ? MPI_Iscatter(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic, q)
                : MPI_Scatter(sb, scount, st->dt, rb, rcount, rt->dt, root, x->ic));
      break;
    case SCV:
      TU_CALL(q ? MPI_Iscatterv(sb, ci, di, st->dt, rb, rcount, rt->dt, root, x->ic, q)
                : MPI_Scatterv(sb, ci, di, st->dt, rb, rcount, rt->dt, root, x->ic));
      break;
  }
}

/* ---- 3. reductions ------------------------------------------------------------------------ */

/* Affine maps x -> a x + b (mod 251) as pairs of ints; (f o g)(x) = f(g(x)).
 * Composition is associative but not commutative, so the result shows the
 * order of the operands: the standard's a0 o a1 o ... o a(n-1). */
typedef struct aff {
  int a, b;
} aff;
static MPI_Datatype aff_t;
static MPI_Op aff_op, aff_op_c; /* (aff_op_c: made by MPI_Op_create_c, for the _c forms) */
static aff compose(aff f, aff g) {
  aff h = {(int)((long)f.a * g.a % 251), (int)(((long)f.a * g.b + f.b) % 251)};
  return h;
}
static void aff_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  aff *x = (aff *)in, *y = (aff *)inout;
  for (int i = 0; i < *len; ++i) y[i] = compose(x[i], y[i]);
}
#if MPI_VERSION >= 4
static void aff_fn_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
  (void)dt;
  aff *x = (aff *)in, *y = (aff *)inout;
  for (MPI_Count i = 0; i < *len; ++i) y[i] = compose(x[i], y[i]);
}
#endif
/* Input element i of world rank w. */
static aff aff_in(int w, long i, unsigned sl) {
  aff v = {1 + (int)((w * 31 + i * 7 + sl) % 250), (int)((w * 17 + i * 3 + sl) % 251)};
  return v;
}
static int sum_in(int w, long i, unsigned sl) { return w * 100003 + (int)i * 7 + (int)sl; }

enum { RED, ALLRED, RSB, RS };
static const char *const red_name[] = {"MPI_Reduce", "MPI_Allreduce", "MPI_Reduce_scatter_block",
                                       "MPI_Reduce_scatter"};

/* The remote group's inputs reduced, elements [first, first + count). */
static void expected(const ictx *x, int use_aff, long first, long count, unsigned sl, unsigned char *out) {
  for (long i = 0; i < count; ++i) {
    if (use_aff) {
      aff acc = aff_in(x->rw[0], first + i, sl);
      for (int r = 1; r < x->m; ++r) acc = compose(acc, aff_in(x->rw[r], first + i, sl));
      memcpy(out + i * sizeof(aff), &acc, sizeof acc);
    } else {
      int acc = 0;
      for (int r = 0; r < x->m; ++r) acc += sum_in(x->rw[r], first + i, sl);
      memcpy(out + i * sizeof(int), &acc, sizeof acc);
    }
  }
}

/* For reduce: the root is local rank lr of group g.  `k` scales the counts. */
static void red_start(job *j, const ictx *x, int op, int use_aff, int g, int lr, long k, int form) {
  const int root = op == RED ? root_arg(x, g, lr) : 0;
  const MPI_Datatype dt = use_aff ? aff_t : MPI_INT;
  const MPI_Op o = use_aff ? (form & F_BIG ? aff_op_c : aff_op) : MPI_SUM;
  const size_t es = use_aff ? sizeof(aff) : sizeof(int);
  job_init(j, x, "%s%s of %s%s (k = %ld)", form_name(form), red_name[op],
           use_aff ? "affine maps (a non-commutative operation)" : "MPI_INT with MPI_SUM",
           op == RED ? (root == MPI_ROOT ? ", this rank the root" : root == MPI_PROC_NULL ? ", MPI_PROC_NULL" : ", to the remote root") : "",
           k);
  const unsigned sl = salt++;
  /* Input elements per rank: reduce/allreduce k; the scatters n * m * k in
   * both groups, cut in my group's counts. */
  const long total = op == RED || op == ALLRED ? k : (long)x->n * x->m * k;
  int *counts = (int *)jalloc(j, sizeof(int) * x->n);
  long first = 0, mine = total;
  if (op == RSB) {
    for (int i = 0; i < x->n; ++i) counts[i] = (int)(x->m * k);
  } else if (op == RS) {
    long base = total / x->n, sum = 0;
    for (int i = 0; i < x->n; ++i) counts[i] = (int)base;
    for (int i = 0; i + 1 < x->n; i += 2) {
      const int d = (int)(base < i + 1 ? base : i + 1);
      counts[i] -= d, counts[i + 1] += d;
    }
    for (int i = 0; i < x->n; ++i) sum += counts[i];
    counts[x->n - 1] += (int)(total - sum);
  }
  if (op == RSB || op == RS) {
    for (int i = 0; i < x->L.lrank; ++i) first += counts[i];
    mine = counts[x->L.lrank];
  }
  const int sends = root != MPI_ROOT && root != MPI_PROC_NULL, gets = op != RED || root == MPI_ROOT;
  job_sbuf(j, (size_t)total * es);
  job_rbuf(j, (size_t)(op == RED || op == ALLRED ? total : mine) * es);
  if (sends || op != RED) {
    for (long i = 0; i < total; ++i) {
      if (use_aff) {
        aff v = aff_in(tu_rank, i, sl);
        memcpy(j->s.p + i * es, &v, es);
      } else {
        int v = sum_in(tu_rank, i, sl);
        memcpy(j->s.p + i * es, &v, es);
      }
    }
    memcpy(j->s.ip, j->s.p, (size_t)total * es);
  }
  if (gets) expected(x, use_aff, first, mine, sl, j->r.ip);
  void *sb = j->s.p, *rb = j->r.p;
  MPI_Request *q = form & F_NB ? &j->req : NULL;
#if MPI_VERSION >= 4
  if (form & F_BIG) {
    MPI_Count *cc = (MPI_Count *)jalloc(j, sizeof(MPI_Count) * x->n);
    for (int i = 0; i < x->n; ++i) cc[i] = counts[i];
    switch (op) {
      case RED:
        TU_CALL(q ? MPI_Ireduce_c(sb, rb, k, dt, o, root, x->ic, q) : MPI_Reduce_c(sb, rb, k, dt, o, root, x->ic));
        break;
      case ALLRED:
        TU_CALL(q ? MPI_Iallreduce_c(sb, rb, k, dt, o, x->ic, q) : MPI_Allreduce_c(sb, rb, k, dt, o, x->ic));
        break;
      case RSB:
        TU_CALL(MPI_Reduce_scatter_block_c(sb, rb, cc[0], dt, o, x->ic));
        break;
      case RS:
        TU_CALL(MPI_Reduce_scatter_c(sb, rb, cc, dt, o, x->ic));
        break;
    }
    return;
  }
#endif
  switch (op) {
    case RED:
      TU_CALL(q ? MPI_Ireduce(sb, rb, (int)k, dt, o, root, x->ic, q) : MPI_Reduce(sb, rb, (int)k, dt, o, root, x->ic));
      break;
    case ALLRED:
      TU_CALL(q ? MPI_Iallreduce(sb, rb, (int)k, dt, o, x->ic, q) : MPI_Allreduce(sb, rb, (int)k, dt, o, x->ic));
      break;
    case RSB:
      TU_CALL(MPI_Reduce_scatter_block(sb, rb, counts[0], dt, o, x->ic));
      break;
    case RS:
      TU_CALL(MPI_Reduce_scatter(sb, rb, counts, dt, o, x->ic));
      break;
  }
}

/* ---- 4. barriers -------------------------------------------------------------------------- */

/* Group B's rank 0 enters MPI_Barrier 50 ms after a message from group A's
 * rank 0, which sends it just before entering: A's rank 0 (and everybody)
 * must spend at least those 50 ms in the barrier.  Then the groups swap. */
static void check_barrier(const ictx *x) {
  for (int waiter = 0; waiter < 2; ++waiter) {
    const int mine = x->L.mine, lr = x->L.lrank;
    int token = 0;
    double t0 = MPI_Wtime();
    if (mine == waiter && lr == 0) {
      TU_CALL(MPI_Send(&token, 1, MPI_INT, 0, 17, x->ic));
    } else if (mine != waiter && lr == 0) {
      TU_CALL(MPI_Recv(&token, 1, MPI_INT, 0, 17, x->ic, MPI_STATUS_IGNORE));
      const double t1 = MPI_Wtime();
      while (MPI_Wtime() - t1 < 0.05) {
      }
    }
    TU_CALL(MPI_Barrier(x->ic));
    if (mine == waiter && lr == 0)
      EXPECT(MPI_Wtime() - t0 >= 0.05, "MPI_Barrier on %s: group %c's rank 0 left after %.3f s, before the other group's "
             "rank 0 entered (50 ms after its message)", x->L.name, 'A' + mine, MPI_Wtime() - t0);
  }
  /* MPI_Ibarrier: group A's rank 0 polls it 100 times (it must stay
   * incomplete: group B's rank 0 has not started it), then releases B's rank 0. */
  MPI_Request q;
  int token = 0, flag = 0;
  if (x->L.mine == 1 && x->L.lrank == 0) TU_CALL(MPI_Recv(&token, 1, MPI_INT, 0, 18, x->ic, MPI_STATUS_IGNORE));
  TU_CALL(MPI_Ibarrier(x->ic, &q));
  if (x->L.mine == 0 && x->L.lrank == 0) {
    for (int i = 0; i < 100; ++i) {
      TU_CALL(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
      EXPECT(!flag, "MPI_Ibarrier on %s completed while a member of the other group had not started it", x->L.name);
    }
    TU_CALL(MPI_Send(&token, 1, MPI_INT, 0, 18, x->ic));
  }
  TU_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
}

/* ---- 6. errors ---------------------------------------------------------------------------- */

static void check_errors(const ictx *x) {
  int a[64], b[64], c[64], d[64];
  MPI_Datatype t[64];
  for (int i = 0; i < 64; ++i) a[i] = 1, b[i] = i, c[i] = 1, d[i] = i, t[i] = MPI_INT;
  (void)c, (void)d, (void)t; /* (used only where MPI_IN_PLACE is tried) */
  int buf[64] = {0}, rc;
  const MPI_Comm ic = x->ic;
#if !defined(MPICH_VERSION)
  /* MPI_IN_PLACE (Open MPI answers MPI_ERR_ARG). */
  rc = MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Allgather(MPI_IN_PLACE) on an intercommunicator");
  rc = MPI_Allgatherv(MPI_IN_PLACE, 1, MPI_INT, buf, a, b, MPI_INT, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Allgatherv(MPI_IN_PLACE) on an intercommunicator");
  rc = MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Alltoall(MPI_IN_PLACE) on an intercommunicator");
  rc = MPI_Alltoallv(MPI_IN_PLACE, a, b, MPI_INT, buf, c, d, MPI_INT, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Alltoallv(MPI_IN_PLACE) on an intercommunicator");
  rc = MPI_Alltoallw(MPI_IN_PLACE, a, b, t, buf, c, d, t, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Alltoallw(MPI_IN_PLACE) on an intercommunicator");
  rc = MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Allreduce(MPI_IN_PLACE) on an intercommunicator");
#if !defined(OPEN_MPI)
  rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, ic);
  expect_class(rc, MPI_ERR_BUFFER, MPI_ERR_ARG, "MPI_Reduce_scatter_block(MPI_IN_PLACE) on an intercommunicator");
#endif
#endif
  /* Roots that are neither MPI_ROOT, MPI_PROC_NULL nor a remote rank. */
  const int bad[2] = {x->m, -7};
  for (int i = 0; i < 2; ++i) {
    rc = MPI_Bcast(buf, 1, MPI_INT, bad[i], ic);
    expect_class(rc, MPI_ERR_ROOT, MPI_ERR_ROOT, "MPI_Bcast with a bad root on an intercommunicator");
    rc = MPI_Gather(buf, 1, MPI_INT, buf + 8, 1, MPI_INT, bad[i], ic);
    expect_class(rc, MPI_ERR_ROOT, MPI_ERR_ROOT, "MPI_Gather with a bad root on an intercommunicator");
    rc = MPI_Scatterv(buf, a, b, MPI_INT, buf + 8, 1, MPI_INT, bad[i], ic);
    expect_class(rc, MPI_ERR_ROOT, MPI_ERR_ROOT, "MPI_Scatterv with a bad root on an intercommunicator");
    rc = MPI_Reduce(buf, buf + 8, 1, MPI_INT, MPI_SUM, bad[i], ic);
    expect_class(rc, MPI_ERR_ROOT, MPI_ERR_ROOT, "MPI_Reduce with a bad root on an intercommunicator");
  }
  rc = MPI_Scan(buf, buf + 8, 1, MPI_INT, MPI_SUM, ic);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Scan on an intercommunicator");
#if !defined(OPEN_MPI)
  rc = MPI_Exscan(buf, buf + 8, 1, MPI_INT, MPI_SUM, ic);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Exscan on an intercommunicator");
#endif
  /* The intercommunicator still works. */
  int v = tu_rank, s = -1, want = 0;
  TU_CALL(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, ic));
  for (int r = 0; r < x->m; ++r) want += x->rw[r];
  EXPECT(s == want, "MPI_Allreduce after the errors on %s: %d, expected %d", x->L.name, s, want);
}

/* ---- 7. MPI_Comm_idup ---------------------------------------------------------------------- */

/* Duplicates x and other with MPI_Comm_idup while nonblocking collectives
 * are outstanding on both; the members of group B of x start the two
 * duplications in the other order (each communicator's operations keep one
 * order everywhere, as the standard requires).  Then each duplicate must be
 * congruent with its parent, have its groups and carry collectives. */
static void idup_settle(MPI_Request *rq) {
#if defined(OPEN_MPI)
  TU_CALL(MPI_Wait(rq, MPI_STATUS_IGNORE)); /* (see skip_case) */
#else
  (void)rq;
#endif
}

static void check_idup(const ictx *x, const ictx *other) {
#if defined(OPEN_MPI)
  const int swap = 0; /* (each idup is waited for at once, see skip_case: so one order everywhere) */
#else
  const int swap = x != other && x->L.mine == 1;
#endif
  MPI_Comm dup[2] = {MPI_COMM_NULL, MPI_COMM_NULL};
  MPI_Request rq[5];
  job js[3];
  const unsigned base = salt; /* (each job's salt, and so its sizes, must not depend on the order) */
  for (int step = 0; step < 2; ++step) {
    if ((step == 0) != swap) { /* x: a collective before its idup and one after */
      salt = base;
      all_start(&js[0], x, A2AV, 100, TU_F_INT, 1, 2, F_NB);
      TU_CALL(MPI_Comm_idup(x->ic, &dup[0], &rq[0]));
      idup_settle(&rq[0]);
      red_start(&js[1], x, ALLRED, 1, 0, 0, 37, F_NB);
    } else { /* other: one before its idup */
      salt = base + 2;
      all_start(&js[2], other, AG, 1, TU_F_DOUBLE, 0, 1, F_NB);
      TU_CALL(MPI_Comm_idup(other->ic, &dup[1], &rq[1]));
      idup_settle(&rq[1]);
    }
  }
  salt = base + 3;
  for (int i = 0; i < 3; ++i) rq[2 + i] = js[i].req, js[i].req = MPI_REQUEST_NULL;
  TU_CALL(MPI_Waitall(5, rq, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 3; ++i) job_end(&js[i]);
  for (int d = 0; d < 2; ++d) {
    const ictx *parent = d == 0 ? x : other;
    char what[160];
    snprintf(what, sizeof what, "MPI_Comm_idup of %s", parent->L.name);
    int cmp = -1;
    TU_CALL(MPI_Comm_compare(dup[d], parent->ic, &cmp));
    EXPECT(cmp == MPI_CONGRUENT, "%s: MPI_Comm_compare with its parent says %d, expected MPI_CONGRUENT (%d)", what, cmp,
           MPI_CONGRUENT);
    check_layout(dup[d], &parent->L, what);
    ictx y = *parent; /* (shares the parent's layout; only the communicator differs) */
    y.ic = dup[d];
    snprintf(y.L.name, sizeof y.L.name, "a duplicate (MPI_Comm_idup) of %.60s", parent->L.name);
    all_start(&js[0], &y, A2AW, 100, TU_F_DOUBLE, 2, 3, 0);
    job_end(&js[0]);
    rooted_start(&js[0], &y, GAV, 1, y.L.n[1] - 1, 100, TU_F_INT, 1, 2, 0);
    job_end(&js[0]);
    red_start(&js[0], &y, RS, 1, 0, 0, 7, 0);
    job_end(&js[0]);
  }
  TU_CALL(MPI_Comm_free(&dup[0]));
  TU_CALL(MPI_Comm_free(&dup[1]));
}

/* ---- driver --------------------------------------------------------------------------------- */

static void run_layout(ictx *x, ictx *other) {
  const long units[] = {0, 1, 100, 2048};
  const int nu = (int)(sizeof units / sizeof units[0]);
  job j;
  for (int form = 0; form < NFORMS; ++form) {
    /* 1. all-to-all family: every size; types vary with the case. */
    for (int op = A2A; op <= AGV; ++op)
      for (int u = 0; u < nu; ++u) {
        if (quick && u == nu - 1 && op != A2AV) continue;
        const int fam = (op + u + form) % 2 ? TU_F_INT : TU_F_DOUBLE;
        all_start(&j, x, op, units[u], fam, op + u + form, op * 2 + u + 1, form);
        job_end(&j);
      }
    /* 2. rooted: four roots, a small and a large size (and empty at one root). */
    const int roots[4][2] = {{0, 0}, {0, x->L.n[0] - 1}, {1, 0}, {1, x->L.n[1] - 1}};
    for (int op = BC; op <= SCV; ++op)
      for (int ri = 0; ri < 4; ++ri)
        for (int u = ri == 0 ? 0 : 1; u < nu; u += u == 0 ? 1 : 2) {
          if (quick && u == nu - 1 && ri % 2) continue;
          if (skip_case(op, roots[ri][1], form)) {
            ++tu_nskipped;
            continue;
          }
          const int fam = (op + ri + form) % 2 ? TU_F_INT : TU_F_DOUBLE;
          rooted_start(&j, x, op, roots[ri][0], roots[ri][1], units[u], fam, op + ri + form, op + ri + u, form);
          job_end(&j);
        }
    /* 3. reductions, empty to 5000 elements (the scatters have no
     * nonblocking form in MPI 4.0's subset here). */
    for (int use_aff = 0; use_aff < 2; ++use_aff)
      for (int op = RED; op <= RS; ++op) {
        if ((form & F_NB) && op >= RSB) continue;
        const long ks[] = {0, 1, 37, 5000};
        for (int ki = 0; ki < 4; ++ki)
          for (int ri = 0; ri < (op == RED ? 4 : 1); ++ri) {
            const long k = op >= RSB && ks[ki] ? ks[ki] / 10 + 1 : ks[ki];
            red_start(&j, x, op, use_aff, roots[ri][0], roots[ri][1], k, form);
            job_end(&j);
          }
      }
  }
  check_barrier(x);

  /* 5. several outstanding on two intercommunicators, a blocking collective
   * in between, completed by MPI_Waitall in reverse order. */
  job js[7];
  all_start(&js[0], x, A2AV, 100, TU_F_INT, 1, 2, 1);
  all_start(&js[1], other, AG, 100, TU_F_DOUBLE, 2, 3, 1);
  rooted_start(&js[2], x, BC, 1, skip_case(BC, x->L.n[1] - 1, F_NB) ? 0 : x->L.n[1] - 1, 100, TU_F_DOUBLE, 1, 4, F_NB);
  red_start(&js[3], other, ALLRED, 1, 0, 0, 300, 1);
  all_start(&js[4], x, A2AW, 1, TU_F_DOUBLE, 3, 0, 1);
  rooted_start(&js[5], other, GAV, 0, 0, 100, TU_F_INT, 0, 2, 1);
  all_start(&js[6], x, AGV, 1, TU_F_INT, 2, 0, 0); /* blocking, while the others are outstanding */
  MPI_Request reqs[6];
  for (int i = 0; i < 6; ++i) reqs[i] = js[5 - i].req;
  TU_CALL(MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 7; ++i) {
    js[i].req = MPI_REQUEST_NULL;
    job_end(&js[i]);
  }
  check_errors(x);
  check_idup(x, other);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "intercomm_coll");
  quick = tu_arg_flag(argc, argv, "quick");
  const int verbose = tu_arg_flag(argc, argv, "verbose");
  if (tu_size < 2) {
    if (tu_rank == 0) printf("intercomm_coll: PASS (needs 2 ranks for an intercommunicator; nothing to do with 1)\n");
    MPI_Finalize();
    return 0;
  }
  tu_catalog_init();
  TU_CALL(MPI_Type_contiguous(2, MPI_INT, &aff_t));
  TU_CALL(MPI_Type_commit(&aff_t));
  TU_CALL(MPI_Op_create(aff_fn, 0, &aff_op));
#if MPI_VERSION >= 4
  TU_CALL(MPI_Op_create_c(aff_fn_c, 0, &aff_op_c));
#else
  aff_op_c = aff_op; /* (not used: no _c forms before MPI 4) */
#endif
  const int n = tu_size;
  int *grp = (int *)tu_malloc(sizeof(int) * n), *key = (int *)tu_malloc(sizeof(int) * n);
  /* The even | odd intercommunicator stays alive as the "other" one. */
  for (int w = 0; w < n; ++w) grp[w] = w % 2, key[w] = w % 2 ? n - w : w;
  ictx eo;
  ictx_make(&eo, "even | odd (odd reversed)", grp, key, 90);
  int splits[4], ns = 0;
  const int cand[3] = {1, n - 1, n / 2};
  for (int i = 0; i < 3; ++i) {
    int dup = 0;
    for (int k = 0; k < ns; ++k) dup |= splits[k] == cand[i];
    if (!dup) splits[ns++] = cand[i];
  }
  for (int li = 0; li <= ns; ++li) {
    const double t0 = MPI_Wtime();
    if (li == ns) {
      run_layout(&eo, &eo);
    } else {
      char name[64];
      for (int w = 0; w < n; ++w) grp[w] = w < splits[li] ? 0 : 1, key[w] = w;
      snprintf(name, sizeof name, "split %d | %d", splits[li], n - splits[li]);
      ictx x;
      ictx_make(&x, name, grp, key, 91 + li);
      run_layout(&x, &eo);
      ictx_free(&x);
    }
    if (verbose && tu_rank == 0) printf("intercomm_coll: layout %d done in %.2f s\n", li, MPI_Wtime() - t0);
  }
  ictx_free(&eo);
  TU_CALL(MPI_Op_free(&aff_op));
#if MPI_VERSION >= 4
  TU_CALL(MPI_Op_free(&aff_op_c));
#endif
  TU_CALL(MPI_Type_free(&aff_t));
  tu_catalog_free();
  free(grp), free(key);
  const double total = tu_sum_world((double)nchecks);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  const double skipped = tu_sum_world((double)tu_nskipped);
  if (tu_rank == 0)
    printf("intercomm_coll: PASS ranks=%d checks(sum over ranks)=%.0f skipped rank-cases=%.0f%s\n", tu_size, total,
           skipped, quick ? " (quick)" : "");
  MPI_Finalize();
  return 0;
}
