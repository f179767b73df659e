/*
 * nbc.c -- the nonblocking collectives MPI_Ialltoall, MPI_Ialltoallv,
 * MPI_Ialltoallw, MPI_Iallgather, MPI_Iallgatherv, MPI_Ibarrier, MPI_Ibcast,
 * MPI_Ireduce and MPI_Iallreduce, completed with MPI_Wait, MPI_Test (in a
 * loop), MPI_Waitall, MPI_Waitany, MPI_Testall and MPI_Waitsome.
 *
 * Written against the standard MPI C API only (the same source builds with
 * Open MPI's and MPICH's mpicc); "nbc [quick] [verbose]": quick shrinks the
 * run (the largest size by 8, fewer repetitions, no reversed communicator),
 * verbose prints the time of each part.
 *
 *  1. Every collective at 0, 1, 100 and 4099 elements per block and at
 *     256 KiB per block (scaled down above 8 ranks), checked byte for byte
 *     against an image computed here from a formula: the alltoall/allgather
 *     family with testutil.h's model (every byte names its sender, receiver
 *     and index; guard regions around the receive area, gaps between blocks
 *     and holes inside derived types must keep their sentinel; send buffers
 *     must not change), with and without MPI_IN_PLACE (everywhere the
 *     standard allows it: Iallgather(v), Ialltoall(v/w), Iallreduce, Ireduce
 *     at the root), at every root of Ibcast and Ireduce (the n calls of a
 *     size, one per root, started back to back), and with a vector type on
 *     one side and a contiguous type on the other (Ialltoall, Iallgather,
 *     Ibcast; per-peer type maps in Ialltoallw).  The smaller cases run one
 *     collective at a time, completed with each completion function in
 *     turn; the others are started in pairs or groups on one communicator.
 *     MPI_COMM_WORLD gets every case, a communicator with reversed ranks a
 *     subset.
 *  2. Several outstanding collectives on one communicator, started back to
 *     back and completed with MPI_Waitall over the reversed request array,
 *     MPI_Waitany, MPI_Testall, MPI_Waitsome, MPI_Wait in reverse order or
 *     round-robin MPI_Test; and outstanding collectives on three
 *     communicators (MPI_COMM_WORLD, a dup, an even/odd split) started in a
 *     different order on even and odd ranks (the standard only fixes the
 *     order per communicator) and completed in a different order too.
 *  3. Overlap with point-to-point traffic on the same communicator: a ring
 *     of MPI_Sendrecv and of MPI_Isend/MPI_Irecv with a user tag while an
 *     MPI_Iallreduce / MPI_Ialltoall is outstanding; and the NBX pattern
 *     (MPI_Issend to a few peers, MPI_Iprobe + MPI_Recv, MPI_Ibarrier once the
 *     sends completed, done when the barrier completes), after which every
 *     rank must have received exactly the messages addressed to it.
 *  4. MPI_Test polling of an MPI_Ialltoall with some computation in between.
 *  5. A non-commutative user operation (2x2 matrix product over the
 *     integers mod 251, on 4 doubles, exact in any bracketing) must give
 *     a0 a1 ... a(n-1) in rank order; MPI_MINLOC/MPI_MAXLOC on
 *     MPI_DOUBLE_INT (with many ties: the lowest index wins).
 *  6. MPI_Ibarrier: it must not complete at an observer rank while another
 *     rank has provably not started it yet (that rank waits for a message
 *     the observer sends only after polling its barrier with MPI_Test);
 *     many barriers interleaved with point-to-point traffic.
 *  7. Argument errors with MPI_ERRORS_RETURN: a bad root (MPI_ERR_ROOT), a
 *     negative count (MPI_ERR_COUNT), MPI_DATATYPE_NULL (MPI_ERR_TYPE), and
 *     the communicator still works afterwards.
 *
 * On a wrong result the rank, the case and the first differing byte offset
 * are printed and the program calls MPI_Abort(MPI_COMM_WORLD, 1).  Rank 0
 * prints "nbc: ok ..." with the number of checks at the end.
 */
#include "testutil.h"
#include "redref.h"

static int quick;
static long long nchecks; /* verified collectives, messages and error returns on this rank */

/* ---- jobs: one nonblocking collective with its buffers and expected images ----- */

enum { J_BCAST = TU_NOPS, J_REDUCE, J_ALLREDUCE, J_BARRIER };
static const char *const jname[] = {"MPI_Ialltoall", "MPI_Ialltoallv", "MPI_Ialltoallw", "MPI_Iallgather",
                                    "MPI_Iallgatherv", "MPI_Ibcast", "MPI_Ireduce", "MPI_Iallreduce",
                                    "MPI_Ibarrier"};

typedef struct job {
  int kind;
  MPI_Comm comm;
  int n, me;
  char desc[600];
  char label[200];
  MPI_Request req;
  int skip; /* a known defect of this MPI library: not started, not checked */
  /* the alltoall/allgather family (testutil.h's model) */
  tu_case c;
  long *E;
  tu_type **sv, **rv;
  long *scount, *rcount;
  MPI_Aint *SA, *RA;
  int *SD, *RD, *sci, *rci;
  MPI_Datatype *sdt, *rdt;
  unsigned char *ralloc, *image, *rbuf, *salloc, *sbuf;
  size_t rtotal, stotal;
  uint64_t shash;
  MPI_Aint rlo, rhi;
  /* Ibcast / Ireduce / Iallreduce */
  long count;
  int root, inplace, rop, rty;
  MPI_Datatype dt; /* the datatype this rank passes (Ibcast) */
  int dcount;
  int dt_owned;
  gb rb, sb;
  int has_sb;
} job;

static job *job_alloc(int kind, MPI_Comm comm) {
  job *j = (job *)calloc(1, sizeof(job));
  if (!j) tu_fail("out of memory");
  j->kind = kind, j->comm = comm, j->req = MPI_REQUEST_NULL;
  TU_CALL(MPI_Comm_size(comm, &j->n));
  TU_CALL(MPI_Comm_rank(comm, &j->me));
  return j;
}

/* Known defects of the reference libraries (Open MPI 4.1.4 and MPICH 4.0.2
 * from Debian), found by this program: in each case the blocking
 * counterpart gives the right result with the same arguments.  The decision
 * depends only on arguments all ranks share, so every rank skips the same
 * collectives.  Skipped (and counted) there only, never on shmcoll.
 *  - Open MPI: MPI_Ialltoallv and MPI_Ialltoallw with MPI_IN_PLACE (the
 *    same code in coll/libnbc) deliver wrong data when
 *    some counts are zero and blocks are a few KiB or more (5 ranks,
 *    counts c + (i+j)%5 doubles with every pair where (i+j)%3 == 0 zero:
 *    wrong for c = 1000 and 4099, right for c = 500 and without the zeros).
 *  - MPICH: MPI_Ialltoallw with MPI_IN_PLACE and different datatypes for
 *    different peers (same signatures) reports "truncation" and delivers
 *    wrong data (from 2 ranks on); with one type for all peers it is right.
 *  - MPICH before 4.1 ignores displs[0] of a one-rank MPI_Allgatherv
 *    (pmodels/mpich#6374); MPI_Iallgatherv writes before the buffer too.
 * (Open MPI 4.1's coll/self defect in the one-rank MPI_Alltoallw, see
 * testutil.h, does not affect MPI_Ialltoallw.) */
static int nb_known_defect(int op, int n, int inplace, int wmix, const long *E) {
#if defined(OPEN_MPI)
  if ((op == TU_ALLTOALLV || op == TU_ALLTOALLW) && inplace) {
    long zeros = 0, big = 0;
    for (int i = 0; i < n * n; ++i) zeros += E[i] == 0, big += E[i] >= 600;
    if (zeros && big) return 1;
  }
#endif
#if defined(MPICH_VERSION)
  if (op == TU_ALLTOALLW && inplace && wmix && n > 1) return 1;
#endif
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
  if (op == TU_ALLGATHERV && n == 1) return 1;
#endif
  (void)op, (void)n, (void)inplace, (void)wmix, (void)E;
  return 0;
}

/* The alltoall/allgather family: builds the send buffer, the guarded receive
 * area and its expected image (as tu_run in testutil.h), without starting. */
static job *a2a_job(int op, MPI_Comm comm, long c, int shape, tu_type *st, tu_type *rt, int inplace, int disp,
                    int wmix, unsigned salt, const char *label) {
  job *j = job_alloc(op, comm);
  const int n = j->n, me = j->me, w = op == TU_ALLTOALLW, gather = tu_is_gather(op);
  snprintf(j->label, sizeof j->label, "%s", label);
  j->E = (long *)tu_malloc(sizeof(long) * n * n);
  j->sv = (tu_type **)tu_malloc(sizeof(tu_type *) * n);
  j->rv = (tu_type **)tu_malloc(sizeof(tu_type *) * n);
  long mult = lcm(st->nbase, rt->nbase);
  for (int p = 0; p < n; ++p) j->sv[p] = st, j->rv[p] = rt;
  if (w && wmix) { /* per-peer types, all of doubles: counts must fit nbase 1..4 */
    mult = 12;
    for (int p = 0; p < n; ++p) {
      j->sv[p] = tu_cat(TU_F_DOUBLE, me + p + (int)salt);
      j->rv[p] = tu_cat(TU_F_DOUBLE, 2 * me + p + (int)salt + 1);
    }
  }
  tu_counts(j->E, op, n, shape, c, mult, inplace && !gather);
  tu_case cs = {op, comm, inplace, disp, salt, j->E, j->sv, j->rv, 0, 0, 0, j->label};
  j->c = cs;
  tu_case *cc = &j->c;
  snprintf(j->desc, sizeof j->desc, "%s: %s n=%d%s disp=%s stype=%s rtype=%s", label, tu_opname[op], n,
           inplace ? " MPI_IN_PLACE" : "", tu_disp_name(disp), (inplace ? j->rv : j->sv)[0]->name, j->rv[0]->name);
  if (nb_known_defect(op, n, inplace, w && wmix, j->E)) {
    j->skip = 1;
    return j;
  }
  j->scount = (long *)tu_malloc(sizeof(long) * n), j->rcount = (long *)tu_malloc(sizeof(long) * n);
  j->SA = (MPI_Aint *)tu_malloc(sizeof(MPI_Aint) * n), j->RA = (MPI_Aint *)tu_malloc(sizeof(MPI_Aint) * n);
  j->SD = (int *)tu_malloc(sizeof(int) * n), j->RD = (int *)tu_malloc(sizeof(int) * n);
  j->sci = (int *)tu_malloc(sizeof(int) * n), j->rci = (int *)tu_malloc(sizeof(int) * n);
  j->sdt = (MPI_Datatype *)tu_malloc(sizeof(MPI_Datatype) * n);
  j->rdt = (MPI_Datatype *)tu_malloc(sizeof(MPI_Datatype) * n);
  tu_type *const *stv = inplace ? cc->rtypes : cc->stypes;
  for (int p = 0; p < n; ++p) {
    const tu_type *s = stv[w ? p : 0], *r = cc->rtypes[w ? p : 0];
    long es = gather ? j->E[me * n] : j->E[me * n + p], er = j->E[p * n + me];
    if (es % s->nbase || er % r->nbase) tu_fail("test bug in %s: counts do not fit the types", j->desc);
    j->scount[p] = es / s->nbase, j->rcount[p] = er / r->nbase;
    j->sci[p] = (int)j->scount[p], j->rci[p] = (int)j->rcount[p];
    j->sdt[p] = s->dt, j->rdt[p] = r->dt;
  }
  tu_layout(op, disp, n, me, j->rcount, cc->rtypes, 16, j->RA, j->RD, &j->rlo, &j->rhi);
  j->rtotal = (size_t)(TU_GUARD + (j->rhi - j->rlo) + TU_GUARD);
  j->ralloc = (unsigned char *)tu_malloc(j->rtotal), j->image = (unsigned char *)tu_malloc(j->rtotal);
  j->rbuf = j->ralloc + TU_GUARD - j->rlo;
  unsigned char *ibuf = j->image + TU_GUARD - j->rlo;
  tu_fill_sentinel(j->ralloc, j->rtotal);
  memcpy(j->image, j->ralloc, j->rtotal);
  for (int p = 0; p < n; ++p)
    tu_place(ibuf + j->RA[p], cc->rtypes[w ? p : 0], j->rcount[p], tu_key(p, gather ? TU_ALL : me, salt));
  if (inplace) {
    if (gather) tu_place(j->rbuf + j->RA[me], cc->rtypes[0], j->rcount[me], tu_key(me, TU_ALL, salt));
    else
      for (int p = 0; p < n; ++p) tu_place(j->rbuf + j->RA[p], cc->rtypes[w ? p : 0], j->rcount[p], tu_key(me, p, salt));
  } else {
    MPI_Aint slo, shi;
    if (gather) {
      j->SA[0] = 0, j->SD[0] = 0;
      slo = tu_lo(stv[0]), shi = slo + tu_span(stv[0], j->scount[0]);
    } else {
      tu_layout(op, (disp + 1) % TU_NDISP, n, me, j->scount, stv, 16, j->SA, j->SD, &slo, &shi);
    }
    j->stotal = (size_t)(64 + (shi - slo) + 64);
    j->salloc = (unsigned char *)tu_malloc(j->stotal);
    j->sbuf = j->salloc + 64 - slo;
    memset(j->salloc, 0x5a, j->stotal);
    if (gather) tu_place(j->sbuf, stv[0], j->scount[0], tu_key(me, TU_ALL, salt));
    else
      for (int p = 0; p < n; ++p) tu_place(j->sbuf + j->SA[p], stv[w ? p : 0], j->scount[p], tu_key(me, p, salt));
    j->shash = tu_hash_bytes(j->salloc, j->stotal);
  }
  return j;
}

/* Pattern of Ibcast: signature byte k of the message from root. */
static void place_ints(unsigned char *buf, long count, int stride, uint64_t key) {
  for (long i = 0; i < count; ++i) tu_pattern(buf + (size_t)i * stride * sizeof(int), key, (uint64_t)i * 4, 4);
}

/* Ibcast of `count` ints from root; derived: a vector (every other int) on
 * one side and a contiguous type on the other (which side alternates with
 * the root). */
static job *bcast_job(MPI_Comm comm, int root, long count, int derived, unsigned salt, const char *label) {
  job *j = job_alloc(J_BCAST, comm);
  j->root = root, j->count = count;
  snprintf(j->desc, sizeof j->desc, "%s: MPI_Ibcast n=%d root=%d count=%ld%s", label, j->n, root, count,
           derived ? (root % 2 ? " root:contiguous others:vector" : " root:vector others:contiguous") : " MPI_INT");
  int vec = derived && ((j->me == root) == (root % 2 == 0));
  gb_new(&j->rb, (size_t)count * sizeof(int) * (vec ? 2 : 1));
  uint64_t key = tu_key(root, TU_ALL, salt);
  place_ints(j->rb.ip, count, vec ? 2 : 1, key);
  if (j->me == root) place_ints(j->rb.p, count, vec ? 2 : 1, key);
  j->dt = MPI_INT, j->dcount = (int)count;
  if (derived) {
    if (vec) TU_CALL(MPI_Type_vector((int)count, 1, 2, MPI_INT, &j->dt));
    else TU_CALL(MPI_Type_contiguous((int)count, MPI_INT, &j->dt));
    TU_CALL(MPI_Type_commit(&j->dt));
    j->dcount = 1, j->dt_owned = 1;
  }
  return j;
}

/* Ireduce (kind J_REDUCE, at root) or Iallreduce (J_ALLREDUCE) of count
 * elements; in place at the root / everywhere when `inplace`.  The receive
 * buffer of a non-root rank of Ireduce is significant only at the root: it
 * is passed guarded and must stay untouched. */
static job *red_job(int kind, MPI_Comm comm, int root, long count, int rop, int rty, int inplace, unsigned salt,
                    const char *label) {
  job *j = job_alloc(kind, comm);
  const int n = j->n, me = j->me;
  const size_t es = ysize[rty];
  j->root = root, j->count = count, j->rop = rop, j->rty = rty, j->inplace = inplace;
  if (kind == J_REDUCE && me != root) j->inplace = 0;
  /* (MPICH 4.0.2's crash in the blocking MPI_Reduce with MPI_IN_PLACE at a
   * non-zero root, see coll_reduce.c, does not affect MPI_Ireduce: in-place
   * cases run at every root on both libraries.) */
  snprintf(j->desc, sizeof j->desc, "%s: %s %s/%s n=%d count=%ld%s", label, jname[kind], rname[rop], yname[rty], n,
           count, j->inplace ? " MPI_IN_PLACE" : "");
  if (kind == J_REDUCE) {
    size_t l = strlen(j->desc);
    snprintf(j->desc + l, sizeof j->desc - l, " root=%d", root);
  }
  gb_new(&j->rb, (size_t)count * es);
  if (!j->inplace) {
    gb_new(&j->sb, (size_t)count * es);
    j->has_sb = 1;
    for (long i = 0; i < count; ++i) contrib(rop, rty, me, i, salt, j->sb.p + (size_t)i * es);
    memcpy(j->sb.img, j->sb.all, j->sb.len + 2 * TU_GUARD); /* must not change */
  } else {
    for (long i = 0; i < count; ++i) contrib(rop, rty, me, i, salt, j->rb.p + (size_t)i * es);
  }
  if (kind == J_ALLREDUCE || me == root)
    for (long i = 0; i < count; ++i) fold_ranks(rop, rty, 0, n, i, salt, j->rb.ip + (size_t)i * es);
  return j;
}

static job *barrier_job(MPI_Comm comm, const char *label) {
  job *j = job_alloc(J_BARRIER, comm);
  snprintf(j->desc, sizeof j->desc, "%s: MPI_Ibarrier n=%d", label, j->n);
  return j;
}

static void job_start(job *j) {
  if (j->skip) return;
  int rc = MPI_ERR_UNKNOWN;
  switch (j->kind) {
    case TU_ALLTOALL: case TU_ALLTOALLV: case TU_ALLTOALLW: case TU_ALLGATHER: case TU_ALLGATHERV: {
      const void *sarg = j->c.inplace ? MPI_IN_PLACE : (const void *)j->sbuf;
      switch (j->kind) {
        case TU_ALLTOALL:
          rc = MPI_Ialltoall(sarg, j->sci[0], j->sdt[0], j->rbuf, j->rci[0], j->rdt[0], j->comm, &j->req);
          break;
        case TU_ALLTOALLV:
          rc = MPI_Ialltoallv(sarg, j->sci, j->SD, j->sdt[0], j->rbuf, j->rci, j->RD, j->rdt[0], j->comm, &j->req);
          break;
        case TU_ALLTOALLW:
          rc = MPI_Ialltoallw(sarg, j->sci, j->SD, j->sdt, j->rbuf, j->rci, j->RD, j->rdt, j->comm, &j->req);
          break;
        case TU_ALLGATHER:
          rc = MPI_Iallgather(sarg, j->sci[0], j->sdt[0], j->rbuf, j->rci[0], j->rdt[0], j->comm, &j->req);
          break;
        default:
          rc = MPI_Iallgatherv(sarg, j->sci[0], j->sdt[0], j->rbuf, j->rci, j->RD, j->rdt[0], j->comm, &j->req);
          break;
      }
    } break;
    case J_BCAST: rc = MPI_Ibcast(j->rb.p, j->dcount, j->dt, j->root, j->comm, &j->req); break;
    case J_REDUCE:
    case J_ALLREDUCE: {
      const void *s = j->inplace ? MPI_IN_PLACE : (const void *)j->sb.p;
      if (j->kind == J_REDUCE)
        rc = MPI_Ireduce(s, j->rb.p, (int)j->count, mpi_ty(j->rty), mpi_op(j->rop), j->root, j->comm, &j->req);
      else
        rc = MPI_Iallreduce(s, j->rb.p, (int)j->count, mpi_ty(j->rty), mpi_op(j->rop), j->comm, &j->req);
    } break;
    default: rc = MPI_Ibarrier(j->comm, &j->req); break;
  }
  expect_started(rc, j->req, j->desc);
}

/* Checks the results of a completed job and frees it. */
static void job_verify(job *j) {
  if (j->req != MPI_REQUEST_NULL) tu_fail("case '%s': request not MPI_REQUEST_NULL after completion", j->desc);
  if (j->skip) {
    tu_nskipped++;
  } else if (j->kind < TU_NOPS) {
    if (memcmp(j->ralloc, j->image, j->rtotal)) {
      size_t o = 0;
      while (j->ralloc[o] == j->image[o]) ++o;
      MPI_Aint rel = (MPI_Aint)o - (MPI_Aint)(j->rbuf - j->ralloc);
      char what[256];
      tu_explain(what, sizeof what, rel, j->n, j->rcount, j->c.rtypes, j->RA, j->kind, j->rlo, j->rhi);
      tu_fail("case '%s': first differing byte at recvbuf%+ld: %s; expected 0x%02x got 0x%02x", j->desc, (long)rel,
              what, j->image[o], j->ralloc[o]);
    }
    if (!j->c.inplace && tu_hash_bytes(j->salloc, j->stotal) != j->shash)
      tu_fail("case '%s': the send buffer was modified", j->desc);
  } else if (j->kind == J_BCAST) {
    gb_check(&j->rb, j->desc, j->me == j->root ? "root's buffer (must not change)" : "receive buffer");
  } else if (j->kind == J_REDUCE || j->kind == J_ALLREDUCE) {
    if (j->rty == Y_DOUBLE_INT && (j->kind == J_ALLREDUCE || j->me == j->root)) copy_padding(&j->rb, j->count);
    gb_check(&j->rb, j->desc, j->kind == J_REDUCE && j->me != j->root ? "non-root receive buffer (must stay untouched)"
                                                                        : "receive buffer");
    if (j->has_sb) gb_check(&j->sb, j->desc, "send buffer (must not change)");
  }
  nchecks++;
  free(j->E), free(j->sv), free(j->rv), free(j->scount), free(j->rcount), free(j->SA), free(j->RA), free(j->SD);
  free(j->RD), free(j->sci), free(j->rci), free(j->sdt), free(j->rdt), free(j->ralloc), free(j->image);
  free(j->salloc);
  if (j->rb.all) gb_free(&j->rb);
  if (j->sb.all) gb_free(&j->sb);
  if (j->dt_owned) TU_CALL(MPI_Type_free(&j->dt));
  free(j);
}

/* ---- completion ------------------------------------------------------------------ */

enum { M_WAIT, M_TEST, M_WAITALL, M_WAITANY, M_TESTALL, M_WAITSOME, M_NMODES };
static const char *const mname[M_NMODES] = {"MPI_Wait", "MPI_Test loop", "MPI_Waitall", "MPI_Waitany",
                                            "MPI_Testall loop", "MPI_Waitsome"};
/* Completes the k jobs js[order[0..k)] (all started) with `mode`: MPI_Wait
 * one after the other in that order, round-robin MPI_Test, or one call of
 * the multiple-completion functions on the request array in that order. */
static void complete(job **js, int k, const int *order, int mode, const char *what) {
  MPI_Request *r = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * k);
  int *seen = (int *)calloc((size_t)k + 1, sizeof(int)), *idx = (int *)tu_malloc(sizeof(int) * k);
  MPI_Status *st = (MPI_Status *)tu_malloc(sizeof(MPI_Status) * k);
  int active = 0;
  for (int i = 0; i < k; ++i) {
    r[i] = js[order[i]]->req;
    if (r[i] != MPI_REQUEST_NULL) active++;
  }
  switch (mode) {
    case M_WAIT:
      for (int i = 0; i < k; ++i) TU_CALL(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
      break;
    case M_TEST:
      while (active) {
        for (int i = 0; i < k; ++i) {
          if (r[i] == MPI_REQUEST_NULL) continue;
          int flag = 0;
          TU_CALL(MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE));
          if (flag) {
            if (r[i] != MPI_REQUEST_NULL) tu_fail("%s: MPI_Test left the request active", what);
            active--;
          }
          npolls++;
        }
        compute(200);
      }
      break;
    case M_WAITALL: TU_CALL(MPI_Waitall(k, r, st)); break;
    case M_WAITANY:
      for (int c = 0; c < active; ++c) {
        int ix = -1;
        TU_CALL(MPI_Waitany(k, r, &ix, MPI_STATUS_IGNORE));
        if (ix < 0 || ix >= k || seen[ix]++) tu_fail("%s: MPI_Waitany returned index %d (twice or out of range)", what, ix);
      }
      {
        int ix = 0;
        TU_CALL(MPI_Waitany(k, r, &ix, MPI_STATUS_IGNORE));
        if (ix != MPI_UNDEFINED) tu_fail("%s: MPI_Waitany on inactive requests returned index %d", what, ix);
      }
      break;
    case M_TESTALL: testall_poll(k, r, st, 200); break;
    default: {
      int done = 0;
      while (done < active) {
        int out = -1;
        TU_CALL(MPI_Waitsome(k, r, &out, idx, st));
        if (out < 1 || out > k) tu_fail("%s: MPI_Waitsome returned outcount %d", what, out);
        for (int i = 0; i < out; ++i)
          if (idx[i] < 0 || idx[i] >= k || seen[idx[i]]++)
            tu_fail("%s: MPI_Waitsome returned index %d (twice or out of range)", what, idx[i]);
        done += out;
      }
      int out = 0;
      TU_CALL(MPI_Waitsome(k, r, &out, idx, st));
      if (out != MPI_UNDEFINED) tu_fail("%s: MPI_Waitsome on inactive requests returned outcount %d", what, out);
    } break;
  }
  for (int i = 0; i < k; ++i) {
    if (r[i] != MPI_REQUEST_NULL) tu_fail("%s: request %d not MPI_REQUEST_NULL after %s", what, i, mname[mode]);
    js[order[i]]->req = r[i];
  }
  free(r), free(seen), free(idx), free(st);
}

/* Starts, completes and verifies one job. */
static void run1(job *j, int mode) {
  job_start(j);
  int z = 0;
  char w[700];
  snprintf(w, sizeof w, "case '%s' (%s)", j->desc, mname[mode]);
  complete(&j, 1, &z, mode, w);
  job_verify(j);
}

/* Starts the k jobs in array order, completes them with `mode` over the
 * reversed array (rev) or in array order, verifies them. */
static void runk(job **js, int k, int mode, int rev, const char *what) {
  int *order = (int *)tu_malloc(sizeof(int) * k);
  for (int i = 0; i < k; ++i) job_start(js[i]), order[i] = rev ? k - 1 - i : i;
  char w[300];
  snprintf(w, sizeof w, "%s (%s%s)", what, mname[mode], rev ? ", reversed" : "");
  complete(js, k, order, mode, w);
  for (int i = 0; i < k; ++i) job_verify(js[i]);
  free(order);
}

/* ---- part 1: every collective, every size ---------------------------------------- */

static long sizes[5];
static int nsizes;
static unsigned salt = 1;

/* full: every size for every collective; else (a second communicator) the
 * every-root cases in full and the rest at one size, all started in pairs or
 * groups. */
static void part1(MPI_Comm comm, const char *cname, int full) {
  int n;
  TU_CALL(MPI_Comm_size(comm, &n));
  char label[200];
  int mode = 0;
  /* the alltoall/allgather family on doubles, in and out of place (one at a
   * time at 1 element; the two started back to back for the other sizes) */
  job **js = (job **)tu_malloc(sizeof(job *) * (n > 14 ? n : 14)), *dj[6];
  for (int op = 0; op < TU_NOPS; ++op)
    for (int si = 0; si < nsizes; ++si) {
      if (!full && si != 3) continue;
      long c = sizes[si];
      int v = op != TU_ALLTOALL && op != TU_ALLGATHER;
      for (int ip = 0; ip < 2; ++ip) {
        int shape = c == 0 || !v ? TU_E_UNIFORM : (si + ip) % 2 ? TU_E_VARIED : TU_E_SPARSE;
        snprintf(label, sizeof label, "%s size %ld %s", cname, c, tu_e_name[shape]);
        js[ip] = a2a_job(op, comm, c, shape, &tu_cat_d[0], &tu_cat_d[0], ip, v ? (si + ip) % TU_NDISP : 0, 0,
                         salt++, label);
      }
      if (si == 1) {
        run1(js[0], mode++ % M_NMODES), run1(js[1], mode++ % M_NMODES);
      } else {
        snprintf(label, sizeof label, "%s size %ld in place and not", cname, c);
        runk(js, 2, mode % M_NMODES, mode % 2, label), mode++;
      }
    }
  /* derived: a vector type on one side, contiguous on the other (both
   * directions), and per-peer type maps in Ialltoallw; one at a time at 100
   * elements, the six of a size started back to back otherwise */
  for (int si = 1; si < nsizes; ++si) {
    if (!full && si != 2) continue;
    int k = 0;
    for (int dir = 0; dir < 2; ++dir) {
      /* resized(vector(2,2,3)) -> contiguous(4); contiguous(4) -> vector(3,1,2) */
      tu_type *st = dir ? &tu_cat_d[6] : &tu_cat_d[2], *rt = dir ? &tu_cat_d[1] : &tu_cat_d[6];
      for (int op = 0; op < TU_NOPS; ++op) {
        if (op == TU_ALLTOALLV || op == TU_ALLGATHERV) continue;
        int w = op == TU_ALLTOALLW;
        snprintf(label, sizeof label, "%s derived size %ld%s", cname, sizes[si], w ? " per-peer types" : "");
        dj[k++] = a2a_job(op, comm, sizes[si], TU_E_UNIFORM, st, rt, w ? dir : 0, w ? TU_DISP_REVERSE : 0, w,
                          salt++, label);
      }
    }
    if (si == 2 && full) {
      for (int i = 0; i < k; ++i) run1(dj[i], mode++ % M_NMODES);
    } else {
      snprintf(label, sizeof label, "%s derived size %ld, six outstanding", cname, sizes[si]);
      runk(dj, k, mode % M_NMODES, mode % 2, label), mode++;
    }
  }
  /* Ibcast at every root: the n broadcasts of one size are started back to
   * back (one per root) and completed together; ints, then derived types */
  for (int si = 0; si < nsizes; ++si)
    for (int derived = 0; derived < 2; ++derived) {
      if (derived && sizes[si] == 0) continue;
      snprintf(label, sizeof label, "%s bcast every root", cname);
      for (int root = 0; root < n; ++root)
        js[root] = bcast_job(comm, root, derived ? sizes[si] : sizes[si] * 2, derived, salt++, label);
      runk(js, n, mode % M_NMODES, mode % 2, label), mode++;
    }
  /* Ireduce at every root (likewise, a different operation at each root),
   * in place at the root in every other one; the non-commutative op too */
  static const int ops[][2] = {{R_SUM, Y_INT}, {R_SUM, Y_DOUBLE}, {R_MAX, Y_INT}, {R_PROD, Y_DOUBLE},
                               {R_MINLOC, Y_DOUBLE_INT}, {R_MAXLOC, Y_DOUBLE_INT}, {R_MATMUL, Y_MAT}};
  const int nops = (int)(sizeof ops / sizeof ops[0]);
  for (int si = 0; si < nsizes; ++si) {
    snprintf(label, sizeof label, "%s reduce every root", cname);
    for (int root = 0; root < n; ++root) {
      int o = (root + si) % nops;
      long c = sizes[si] * 8 / (long)ysize[ops[o][1]]; /* sizes are doubles: the same bytes */
      js[root] = red_job(J_REDUCE, comm, root, c, ops[o][0], ops[o][1], (root + si) % 2, salt++, label);
    }
    runk(js, n, mode % M_NMODES, mode % 2, label), mode++;
    if (si == 2 || si == 3) {
      snprintf(label, sizeof label, "%s reduce matmul every root", cname);
      for (int root = 0; root < n; ++root)
        js[root] = red_job(J_REDUCE, comm, root, sizes[si] / 4 + 1, R_MATMUL, Y_MAT, root % 2, salt++, label);
      runk(js, n, mode % M_NMODES, mode % 2, label), mode++;
    }
  }
  /* Iallreduce: every operation, in place and not; the 14 of a size started
   * back to back (at 4099 elements half of them one at a time instead) */
  for (int si = 0; si < nsizes; ++si) {
    if (!full && si != 3) continue;
    int k = 0;
    snprintf(label, sizeof label, "%s allreduce", cname);
    for (int o = 0; o < nops; ++o)
      for (int ip = 0; ip < 2; ++ip) {
        long c = sizes[si] * 8 / (long)ysize[ops[o][1]];
        js[k++] = red_job(J_ALLREDUCE, comm, 0, c, ops[o][0], ops[o][1], ip, salt++, label);
      }
    if (si == 3 && full) { /* half one at a time, then the other half together */
      int h = 0;
      for (int i = 0; i < k; ++i) {
        if (i % 2 == (i / 2) % 2) run1(js[i], mode++ % M_NMODES);
        else js[h++] = js[i];
      }
      snprintf(label, sizeof label, "%s allreduce, %d outstanding", cname, h);
      runk(js, h, mode % M_NMODES, mode % 2, label), mode++;
    } else {
      snprintf(label, sizeof label, "%s allreduce, 14 outstanding", cname);
      runk(js, k, mode % M_NMODES, mode % 2, label), mode++;
    }
  }
  free(js);
  /* Ibarrier with every completion function */
  for (int m = 0; m < M_NMODES; ++m) run1(barrier_job(comm, cname), m);
}

/* ---- part 2: several outstanding collectives ------------------------------------- */

static void part2(MPI_Comm world, MPI_Comm dup, MPI_Comm half, int reps) {
  int me, n;
  TU_CALL(MPI_Comm_rank(world, &me));
  TU_CALL(MPI_Comm_size(world, &n));
  char label[200];
  /* one communicator, six collectives started back to back */
  for (int rep = 0; rep < reps; ++rep) {
    MPI_Comm comm = rep % 2 ? dup : world;
    long c = rep % 3 == 0 ? 4099 : rep % 3 == 1 ? 100 : 1;
    snprintf(label, sizeof label, "outstanding on one comm rep %d", rep);
    job *js[7];
    js[0] = red_job(J_ALLREDUCE, comm, 0, c, R_SUM, Y_INT, rep % 2, salt++, label);
    js[1] = bcast_job(comm, rep % n, c, rep % 2, salt++, label);
    js[2] = a2a_job(TU_ALLTOALL, comm, c, TU_E_UNIFORM, &tu_cat_d[0], &tu_cat_d[0], rep % 2, 0, 0, salt++, label);
    js[3] = a2a_job(TU_ALLGATHERV, comm, c, TU_E_VARIED, &tu_cat_d[0], &tu_cat_d[0], 0, rep % TU_NDISP, 0, salt++,
                    label);
    js[4] = barrier_job(comm, label);
    js[5] = red_job(J_REDUCE, comm, (rep + 1) % n, c, R_MATMUL, Y_MAT, 0, salt++, label);
    js[6] = a2a_job(TU_ALLTOALLW, comm, 12 * (c / 12 + 1), TU_E_VARIED, &tu_cat_d[0], &tu_cat_d[0], rep % 2,
                    TU_DISP_ROTATED, 1, salt++, label);
    int mode = rep % M_NMODES;
    runk(js, 7, mode, mode == M_WAITALL || mode == M_WAIT || rep % 2, label);
  }
  /* three communicators: ops started in a different order on even and odd
   * ranks (the order per communicator is the same everywhere), completed
   * in a different order too */
  for (int rep = 0; rep < reps; ++rep) {
    long c = rep % 2 ? 4099 : 100;
    snprintf(label, sizeof label, "three comms rep %d", rep);
    int hn;
    TU_CALL(MPI_Comm_size(half, &hn));
    job *js[6];
    /* comm A = world: js[0], js[1]; B = dup: js[2], js[3]; C = half: js[4], js[5] */
    js[0] = red_job(J_ALLREDUCE, world, 0, c, R_SUM, Y_DOUBLE, rep % 2, salt++, label);
    js[1] = a2a_job(TU_ALLTOALLV, world, c, TU_E_VARIED, &tu_cat_d[0], &tu_cat_d[0], 0, rep % TU_NDISP, 0, salt++,
                    label);
    js[2] = bcast_job(dup, (rep + 1) % n, c, 0, salt++, label);
    js[3] = a2a_job(TU_ALLGATHER, dup, c, TU_E_UNIFORM, &tu_cat_d[0], &tu_cat_d[0], rep % 2, 0, 0, salt++, label);
    js[4] = red_job(J_REDUCE, half, rep % hn, c, R_MINLOC, Y_DOUBLE_INT, rep % 2, salt++, label);
    js[5] = barrier_job(half, label);
    static const int start_even[6] = {0, 1, 2, 3, 4, 5}, start_odd[6] = {4, 2, 0, 5, 3, 1};
    const int *so = me % 2 ? start_odd : start_even;
    for (int i = 0; i < 6; ++i) job_start(js[so[i]]);
    int mode = rep % 3 == 0 ? M_WAIT : rep % 3 == 1 ? M_WAITANY : M_TEST;
    static const int wait_even[6] = {0, 1, 2, 3, 4, 5}, wait_odd[6] = {3, 2, 5, 4, 1, 0};
    const int *wo = me % 2 ? wait_odd : wait_even;
    if (mode == M_WAIT && me % 2 == 1 && rep % 2 == 1) mode = M_TESTALL;
    complete(js, 6, wo, mode, label);
    for (int i = 0; i < 6; ++i) job_verify(js[i]);
  }
}

/* ---- part 3: overlap with point-to-point; NBX ------------------------------------- */

static void ring(MPI_Comm comm, int tag, long len, unsigned s) {
  int me, n;
  TU_CALL(MPI_Comm_rank(comm, &me));
  TU_CALL(MPI_Comm_size(comm, &n));
  int right = (me + 1) % n, left = (me + n - 1) % n;
  gb sb, rb, rb2, sb2;
  gb_new(&sb, (size_t)len), gb_new(&rb, (size_t)len), gb_new(&sb2, (size_t)len), gb_new(&rb2, (size_t)len);
  tu_pattern(sb.p, tu_key(me, right, s), 0, (size_t)len);
  memcpy(sb.img, sb.all, sb.len + 2 * TU_GUARD);
  tu_pattern(rb.ip, tu_key(left, me, s), 0, (size_t)len);
  tu_pattern(sb2.p, tu_key(me, left, s + 1), 0, (size_t)len);
  memcpy(sb2.img, sb2.all, sb2.len + 2 * TU_GUARD);
  tu_pattern(rb2.ip, tu_key(right, me, s + 1), 0, (size_t)len);
  MPI_Status st;
  TU_CALL(MPI_Sendrecv(sb.p, (int)len, MPI_BYTE, right, tag, rb.p, (int)len, MPI_BYTE, left, tag, comm, &st));
  int cnt = -1;
  TU_CALL(MPI_Get_count(&st, MPI_BYTE, &cnt));
  if (st.MPI_SOURCE != left || st.MPI_TAG != tag || cnt != (int)len)
    tu_fail("ring: status source %d tag %d count %d, expected %d %d %ld", st.MPI_SOURCE, st.MPI_TAG, cnt, left, tag, len);
  /* and the other way round with Isend/Irecv */
  MPI_Request r[2];
  TU_CALL(MPI_Irecv(rb2.p, (int)len, MPI_BYTE, right, tag + 1, comm, &r[0]));
  TU_CALL(MPI_Isend(sb2.p, (int)len, MPI_BYTE, left, tag + 1, comm, &r[1]));
  MPI_Status sts[2]; /* (not MPI_STATUSES_IGNORE: gcc 12 warns about MPICH's definition) */
  TU_CALL(MPI_Waitall(2, r, sts));
  gb_check(&rb, "ring MPI_Sendrecv", "receive buffer");
  gb_check(&sb, "ring MPI_Sendrecv", "send buffer");
  gb_check(&rb2, "ring MPI_Isend/MPI_Irecv", "receive buffer");
  gb_check(&sb2, "ring MPI_Isend/MPI_Irecv", "send buffer");
  nchecks += 2;
  gb_free(&sb), gb_free(&rb), gb_free(&sb2), gb_free(&rb2);
}

/* NBX: each rank Issends NBX_K messages to peers chosen by a hash
 * (sometimes itself); when its Ibarrier completes, every rank must have
 * received exactly the messages addressed to it (an Issend completes only
 * once it is matched, and a rank enters the barrier only after all its
 * Issends completed).  An Iallreduce on `other` is outstanding all the while. */
#define NBX_K 3
#define NBX_MAX 300
static int nbx_dest(int src, int it, int s, int n) {
  return (int)(tu_mix(((uint64_t)src << 32) ^ (uint64_t)(it * 8 + s)) % (uint64_t)n);
}
static int nbx_len(int src, int it, int s) { return 2 + (int)(tu_mix((uint64_t)(src * 977 + it * 31 + s)) % (NBX_MAX - 1)); }
static int nbx_val(int src, int it, int s, int i) {
  return (int)(uint32_t)tu_mix(((uint64_t)src << 40) ^ ((uint64_t)it << 20) ^ (uint64_t)(s * 1000 + i));
}

static void nbx(MPI_Comm comm, MPI_Comm other, int iters) {
  int me, n;
  TU_CALL(MPI_Comm_rank(comm, &me));
  TU_CALL(MPI_Comm_size(comm, &n));
  int *seen = (int *)tu_malloc(sizeof(int) * n * NBX_K);
  int *rbuf = (int *)tu_malloc(sizeof(int) * (NBX_MAX + 16));
  for (int it = 0; it < iters; ++it) {
    const int tag = 5000 + it;
    char label[100];
    snprintf(label, sizeof label, "NBX iteration %d", it);
    job *side = red_job(J_ALLREDUCE, other, 0, 1000, R_SUM, Y_INT, it % 2, salt++, label);
    job_start(side);
    int expect = 0;
    for (int src = 0; src < n; ++src)
      for (int s = 0; s < NBX_K; ++s) expect += nbx_dest(src, it, s, n) == me;
    memset(seen, 0, sizeof(int) * n * NBX_K);
    int *sbuf[NBX_K];
    MPI_Request sr[NBX_K];
    for (int s = 0; s < NBX_K; ++s) {
      int len = nbx_len(me, it, s);
      sbuf[s] = (int *)tu_malloc(sizeof(int) * (size_t)len);
      sbuf[s][0] = me, sbuf[s][1] = s;
      for (int i = 2; i < len; ++i) sbuf[s][i] = nbx_val(me, it, s, i);
      TU_CALL(MPI_Issend(sbuf[s], len, MPI_INT, nbx_dest(me, it, s, n), tag, comm, &sr[s]));
    }
    int got = 0, barrier_started = 0, done = 0;
    MPI_Request br = MPI_REQUEST_NULL;
    long spins = 0;
    while (!done) {
      int flag = 0;
      MPI_Status st;
      TU_CALL(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm, &flag, &st));
      if (flag) {
        int cnt = -1, src = st.MPI_SOURCE;
        TU_CALL(MPI_Get_count(&st, MPI_INT, &cnt));
        if (src < 0 || src >= n || cnt < 2 || cnt > NBX_MAX)
          tu_fail("%s: probed a message of %d ints from rank %d", label, cnt, src);
        memset(rbuf, 0xee, sizeof(int) * (NBX_MAX + 16));
        TU_CALL(MPI_Recv(rbuf, cnt, MPI_INT, src, tag, comm, MPI_STATUS_IGNORE));
        int s = rbuf[1];
        if (rbuf[0] != src || s < 0 || s >= NBX_K || nbx_dest(src, it, s, n) != me || nbx_len(src, it, s) != cnt)
          tu_fail("%s: unexpected message from rank %d (header %d %d, %d ints)", label, src, rbuf[0], rbuf[1], cnt);
        if (seen[src * NBX_K + s]++) tu_fail("%s: message %d of rank %d received twice", label, s, src);
        for (int i = 2; i < cnt; ++i)
          if (rbuf[i] != nbx_val(src, it, s, i))
            tu_fail("%s: message %d from rank %d: first differing byte at offset %d", label, s, src,
                    (int)(i * sizeof(int)));
        for (int i = cnt; i < NBX_MAX + 16; ++i)
          if (rbuf[i] != (int)0xeeeeeeeeu)
            tu_fail("%s: message %d from rank %d: guard after %d ints overwritten at byte offset %d", label, s, src,
                    cnt, (int)(i * sizeof(int)));
        got++;
        nchecks++;
      }
      if (!barrier_started) {
        int all = 0;
        MPI_Status sts[NBX_K];
        TU_CALL(MPI_Testall(NBX_K, sr, &all, sts));
        if (all) {
          TU_CALL(MPI_Ibarrier(comm, &br));
          barrier_started = 1;
        }
      } else {
        TU_CALL(MPI_Test(&br, &done, MPI_STATUS_IGNORE));
      }
      if (++spins % 64 == 0) compute(100);
    }
    if (got != expect)
      tu_fail("%s: the Ibarrier completed after %d messages, %d were addressed to this rank", label, got, expect);
    int z = 0;
    complete(&side, 1, &z, it % 2 ? M_WAIT : M_TEST, label);
    job_verify(side);
    for (int s = 0; s < NBX_K; ++s) free(sbuf[s]);
  }
  free(seen), free(rbuf);
}

static void part3(MPI_Comm world, MPI_Comm dup, int reps) {
  char label[100];
  for (int rep = 0; rep < reps; ++rep) {
    snprintf(label, sizeof label, "Iallreduce overlapping p2p rep %d", rep);
    job *j = red_job(J_ALLREDUCE, world, 0, rep % 2 ? 4099 : 33, R_SUM, Y_INT, rep % 2, salt++, label);
    job_start(j);
    ring(world, 77 + rep, rep % 2 ? 65536 : 100, salt++);
    int z = 0;
    complete(&j, 1, &z, rep % M_NMODES, label);
    job_verify(j);
    snprintf(label, sizeof label, "Ialltoall + Ibcast overlapping p2p rep %d", rep);
    job *js[2];
    js[0] = a2a_job(TU_ALLTOALL, world, rep % 2 ? 1000 : 7, TU_E_UNIFORM, &tu_cat_d[0], &tu_cat_d[0], rep % 2, 0, 0,
                    salt++, label);
    js[1] = bcast_job(world, 0, 5000, 0, salt++, label);
    job_start(js[0]), job_start(js[1]);
    ring(world, 1077 + rep, 3000, salt++);
    ring(dup, 2077 + rep, 20000, salt++);
    int o[2] = {1, 0};
    complete(js, 2, o, (rep + 2) % M_NMODES, label);
    job_verify(js[0]), job_verify(js[1]);
  }
  nbx(world, dup, quick ? 6 : 12);
}

/* ---- part 4: MPI_Test polling --------------------------------------------------- */

static void part4(MPI_Comm comm, long big) {
  char label[100];
  long sz[3] = {1, 4099, big};
  for (int k = 0; k < 3; ++k) {
    snprintf(label, sizeof label, "Ialltoall polled with MPI_Test, size %ld", sz[k]);
    job *j = a2a_job(TU_ALLTOALL, comm, sz[k], TU_E_UNIFORM, &tu_cat_d[0], &tu_cat_d[0], k == 1, 0, 0, salt++, label);
    job_start(j);
    int flag = 0;
    long polls = 0;
    while (!flag) {
      TU_CALL(MPI_Test(&j->req, &flag, MPI_STATUS_IGNORE));
      polls++;
      if (!flag) compute(1000);
    }
    npolls += polls;
    /* MPI_Test on the now-null request: flag true at once */
    flag = 0;
    TU_CALL(MPI_Test(&j->req, &flag, MPI_STATUS_IGNORE));
    if (!flag) tu_fail("%s: MPI_Test on MPI_REQUEST_NULL returned flag 0", label);
    job_verify(j);
  }
}

/* ---- part 6: Ibarrier semantics --------------------------------------------------- */

static void part6(MPI_Comm world, MPI_Comm dup, int reps) {
  int me, n;
  TU_CALL(MPI_Comm_rank(world, &me));
  TU_CALL(MPI_Comm_size(world, &n));
  char label[100];
  /* A late rank waits for a "go" from the observer, which polls its
   * Ibarrier (must not complete) before sending it. */
  if (n > 1)
    for (int rep = 0; rep < reps; ++rep) {
      int obs = rep % n, late = (obs + 1 + (rep / n) % (n - 1)) % n, go = rep;
      snprintf(label, sizeof label, "Ibarrier late rank %d observer %d rep %d", late, obs, rep);
      job *j = barrier_job(world, label);
      int z = 0;
      if (me == late) {
        int got = -1;
        TU_CALL(MPI_Recv(&got, 1, MPI_INT, obs, 9000, world, MPI_STATUS_IGNORE));
        if (got != rep) tu_fail("%s: go message %d", label, got);
        job_start(j);
      } else {
        job_start(j);
        if (me == obs) {
          for (int t = 0; t < 20; ++t) {
            int flag = 0;
            TU_CALL(MPI_Test(&j->req, &flag, MPI_STATUS_IGNORE));
            if (flag) tu_fail("%s: MPI_Ibarrier completed before rank %d had started it", label, late);
            compute(300);
          }
          nchecks++;
          TU_CALL(MPI_Send(&go, 1, MPI_INT, late, 9000, world));
        }
      }
      complete(&j, 1, &z, rep % M_NMODES, label);
      job_verify(j);
    }
  /* many barriers on two communicators interleaved with p2p */
  for (int rep = 0; rep < reps; ++rep) {
    snprintf(label, sizeof label, "Ibarrier interleaved with p2p rep %d", rep);
    job *js[2] = {barrier_job(world, label), barrier_job(dup, label)};
    if (me % 2) job_start(js[1]), job_start(js[0]);
    else job_start(js[0]), job_start(js[1]);
    ring(world, 300 + rep % 7, 64 + rep, salt++);
    int o[2] = {me % 2, 1 - me % 2};
    complete(js, 2, o, rep % M_NMODES, label);
    job_verify(js[0]), job_verify(js[1]);
  }
}

/* ---- part 7: argument errors --------------------------------------------------------- */

static void expect_class(int rc, int cls, int alt, const char *what) {
  int got = -1;
  if (rc == MPI_SUCCESS) tu_fail("error case '%s': returned MPI_SUCCESS, expected error class %d", what, cls);
  TU_CALL(MPI_Error_class(rc, &got));
  if (got != cls && got != alt) tu_fail("error case '%s': error class %d, expected %d", what, got, cls);
  nchecks++;
}

static void part7(MPI_Comm comm) {
  int n;
  TU_CALL(MPI_Comm_size(comm, &n));
  TU_CALL(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int a[16] = {0}, b[16 * 64];
  MPI_Request r = MPI_REQUEST_NULL;
  expect_class(MPI_Ibcast(a, 1, MPI_INT, n, comm, &r), MPI_ERR_ROOT, -1, "MPI_Ibcast root=size");
  expect_class(MPI_Ibcast(a, 1, MPI_INT, -1, comm, &r), MPI_ERR_ROOT, -1, "MPI_Ibcast root=-1");
  expect_class(MPI_Ibcast(a, -1, MPI_INT, 0, comm, &r), MPI_ERR_COUNT, -1, "MPI_Ibcast count=-1");
  expect_class(MPI_Ibcast(a, 1, MPI_DATATYPE_NULL, 0, comm, &r), MPI_ERR_TYPE, -1, "MPI_Ibcast MPI_DATATYPE_NULL");
  expect_class(MPI_Ireduce(a, b, 1, MPI_INT, MPI_SUM, n, comm, &r), MPI_ERR_ROOT, -1, "MPI_Ireduce root=size");
  expect_class(MPI_Iallreduce(a, b, 1, MPI_INT, MPI_OP_NULL, comm, &r), MPI_ERR_OP, -1, "MPI_Iallreduce MPI_OP_NULL");
  /* Both libraries report MPI_DATATYPE_NULL in a reduction as MPI_ERR_OP
   * (they validate the (op, type) pair); either class is accepted. */
  expect_class(MPI_Iallreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, comm, &r), MPI_ERR_TYPE, MPI_ERR_OP,
               "MPI_Iallreduce MPI_DATATYPE_NULL");
#if !defined(MPICH_VERSION)
  /* MPICH 4.0.2 checks no count in MPI_Ireduce/MPI_Iallreduce: count -1
   * smashes the stack (as with MPI_Allreduce in coll_reduce.c). */
  expect_class(MPI_Ireduce(a, b, -1, MPI_INT, MPI_SUM, 0, comm, &r), MPI_ERR_COUNT, -1, "MPI_Ireduce count=-1");
  expect_class(MPI_Iallreduce(a, b, -1, MPI_INT, MPI_SUM, comm, &r), MPI_ERR_COUNT, -1, "MPI_Iallreduce count=-1");
#endif
  expect_class(MPI_Ialltoall(a, -1, MPI_INT, b, 1, MPI_INT, comm, &r), MPI_ERR_COUNT, -1, "MPI_Ialltoall sendcount=-1");
  expect_class(MPI_Ialltoall(a, 1, MPI_INT, b, -1, MPI_INT, comm, &r), MPI_ERR_COUNT, -1, "MPI_Ialltoall recvcount=-1");
  expect_class(MPI_Ialltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, comm, &r), MPI_ERR_TYPE, -1,
               "MPI_Ialltoall sendtype MPI_DATATYPE_NULL");
  expect_class(MPI_Iallgather(a, -1, MPI_INT, b, 1, MPI_INT, comm, &r), MPI_ERR_COUNT, -1, "MPI_Iallgather sendcount=-1");
  expect_class(MPI_Iallgather(a, 1, MPI_INT, b, 1, MPI_DATATYPE_NULL, comm, &r), MPI_ERR_TYPE, -1,
               "MPI_Iallgather recvtype MPI_DATATYPE_NULL");
  expect_class(MPI_Ibarrier(MPI_COMM_NULL, &r), MPI_ERR_COMM, -1, "MPI_Ibarrier MPI_COMM_NULL");
  expect_class(MPI_Ibcast(a, 1, MPI_INT, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM, -1, "MPI_Ibcast MPI_COMM_NULL");
#if !defined(OPEN_MPI)
  /* A null request pointer: MPICH returns MPI_ERR_ARG; Open MPI 4.1.4 does
   * not check it and crashes (SIGSEGV), so this runs elsewhere only.
   * MPI_ERR_REQUEST is accepted as well. */
  expect_class(MPI_Ibarrier(comm, NULL), MPI_ERR_ARG, MPI_ERR_REQUEST, "MPI_Ibarrier request=NULL");
  expect_class(MPI_Ibcast(a, 1, MPI_INT, 0, comm, NULL), MPI_ERR_ARG, MPI_ERR_REQUEST, "MPI_Ibcast request=NULL");
#endif
  /* the communicator still works */
  job *j = bcast_job(comm, n - 1, 10, 0, salt++, "after the errors");
  run1(j, M_WAIT);
}

/* ---- main ---------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "nbc");
  tu_catalog_init();
  quick = tu_arg_flag(argc, argv, "quick");
  double t0 = MPI_Wtime();
  MPI_Comm world = MPI_COMM_WORLD, dup, rev, half;
  TU_CALL(MPI_Comm_dup(world, &dup));
  TU_CALL(MPI_Comm_split(world, 0, tu_size - tu_rank, &rev));
  TU_CALL(MPI_Comm_split(world, tu_rank % 2, tu_rank, &half));
  TU_CALL(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  TU_CALL(MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN));
  TU_CALL(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
  TU_CALL(MPI_Type_contiguous(4, MPI_DOUBLE, &t_mat));
  TU_CALL(MPI_Type_commit(&t_mat));
  TU_CALL(MPI_Op_create(matmul, 0, &op_matmul));

  /* sizes in doubles per block; the largest is 256 KiB per block, scaled
   * down above 8 ranks (2 MiB per rank and buffer at most) */
  long big = 32768;
  if (tu_size > 8) big = big * 8 / tu_size;
  if (quick) big /= 8;
  sizes[0] = 0, sizes[1] = 1, sizes[2] = 100, sizes[3] = 4099, sizes[4] = big;
  nsizes = 5;

  int verbose = tu_arg_flag(argc, argv, "verbose");
#define PHASE(name, call)                                                                      \
  do {                                                                                         \
    double t_ = MPI_Wtime();                                                                   \
    call;                                                                                      \
    if (verbose && tu_rank == 0) printf("nbc: %-28s %.2fs\n", name, MPI_Wtime() - t_), fflush(stdout); \
  } while (0)
  PHASE("1 world", part1(world, "world", 1));
  if (!quick) PHASE("1 reversed", part1(rev, "reversed", 0));
  PHASE("2 outstanding", part2(world, dup, half, quick ? 6 : 9));
  PHASE("3 overlap with p2p, NBX", part3(world, dup, quick ? 3 : 6));
  PHASE("4 MPI_Test polling", part4(world, big));
  PHASE("6 Ibarrier", part6(world, dup, quick ? tu_size + 2 : tu_size + 6));
  PHASE("7 errors", (part7(world), part7(half)));

  TU_CALL(MPI_Op_free(&op_matmul));
  TU_CALL(MPI_Type_free(&t_mat));
  TU_CALL(MPI_Comm_free(&dup));
  TU_CALL(MPI_Comm_free(&rev));
  TU_CALL(MPI_Comm_free(&half));
  tu_catalog_free();
  long long tot = 0, skipped = 0, polls = 0;
  TU_CALL(MPI_Allreduce(&nchecks, &tot, 1, MPI_LONG_LONG, MPI_SUM, world));
  TU_CALL(MPI_Allreduce(&tu_nskipped, &skipped, 1, MPI_LONG_LONG, MPI_SUM, world));
  TU_CALL(MPI_Allreduce(&npolls, &polls, 1, MPI_LONG_LONG, MPI_SUM, world));
  if (tu_rank == 0) {
    printf("nbc: ok ranks=%d checks=%lld (summed over ranks) polls=%lld time=%.1fs%s", tu_size, tot, polls,
           MPI_Wtime() - t0, quick ? " quick" : "");
    if (skipped) printf(" (skipped %lld rank-cases hitting a known defect of this MPI library)", skipped);
    printf("\n");
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
