/*
 * neighbor.c -- the neighbourhood collectives MPI_Neighbor_allgather,
 * _allgatherv, _alltoall, _alltoallv and _alltoallw, each blocking,
 * nonblocking (MPI_Ineighbor_*), persistent (MPI_Neighbor_*_init, started
 * several times) and in the big-count _c forms of all three.
 *
 * Written against the standard MPI C API only (the same source builds with
 * Open MPI's and MPICH's mpicc).  "neighbor [quick] [full] [large] [survey]": quick runs
 * fewer block sizes, large adds blocks of 256 KiB and 1 MiB.
 *
 * Topologies (neighutil.h builds them and computes the reference): Cartesian
 * grids of 1 to 3 dimensions, periodic and not, with periodic dimensions of
 * size 1 and 2 (a rank its own neighbour, the same neighbour in both slots
 * of a dimension) and a grid smaller than MPI_COMM_WORLD; an MPI_Graph_create
 * graph (symmetric); seeded random distributed graphs with repeated edges,
 * self loops, a rank without neighbours and asymmetric in/out lists, made
 * with MPI_Dist_graph_create_adjacent and with MPI_Dist_graph_create
 * (weighted and MPI_UNWEIGHTED).
 *
 * Data: each sent block is filled with testutil.h's pattern keyed by
 * (sender, sender's out-slot, iteration): every signature byte names its
 * sender, its block and its index, so a byte from the wrong sender, in the
 * wrong block or at the wrong offset is detected.  Receive areas are
 * bracketed by guard bytes and pre-filled with a sentinel; after each call
 * the whole area is compared byte for byte with an image computed here
 * (data where in-neighbour i's block lands, the sentinel in guards, in the
 * holes between blocks placed with displacements in reverse order, inside
 * derived types and in the blocks of MPI_PROC_NULL neighbours), and the send
 * buffer must not have changed.  Block sizes from 0 and 1 double to 64 KiB
 * (v/w forms: per-edge counts varying around that, some zero); a vector or
 * indexed type on one side and a contiguous one on the other; alltoallw with
 * per-neighbour types and byte displacements.  Persistent requests are
 * started 3 times with new data each time.
 *
 * Errors (MPI_ERRORS_RETURN): every form on MPI_COMM_WORLD (no topology)
 * must return an error of class MPI_ERR_TOPOLOGY (other classes accepted for
 * Open MPI and MPICH only, see errors()).
 *
 * "survey" (to find library defects): instead of aborting, print each wrong
 * case (and whether the result is the k-th-occurrence order instead of the
 * s^1 rule on Cartesian grids) and each unexpected error class, and go on.
 * By default each form runs at 2 of the 6 block sizes on each topology (a
 * rotating choice), 1 under `quick`, all under `full`.
 *
 * Open MPI 4.1 implements MPI-3.1: it has no _c forms (skipped there) and
 * its persistent neighbourhood collectives are the MPIX_ ones of its
 * pcollreq extension (used instead).  Known defects of the reference
 * libraries are skipped for that library only: see nb_known_defect.
 *
 * On a wrong result the rank, the case and the first differing byte are
 * printed and the program calls MPI_Abort(MPI_COMM_WORLD, 1).
 */
#include "neighutil.h"

#if defined(OPEN_MPI) && !defined(SHMCOLL)
#include <mpi-ext.h>
#endif

#if MPI_VERSION >= 4
#define NB_HAVE_C 1
#define NB_PINIT(f) MPI_##f
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define NB_PINIT(f) MPIX_##f /* Open MPI 4.1: the MPI-4 persistent collectives as an extension */
#endif

enum { OP_AG, OP_AGV, OP_A2A, OP_A2AV, OP_A2AW, NOPS };
enum { V_BLK, V_NB, V_PER, V_BLK_C, V_NB_C, V_PER_C, NVAR };
static const char *const opname[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
static const char *const varfmt[NVAR] = {"MPI_Neighbor_%s",   "MPI_Ineighbor_%s",   "MPI_Neighbor_%s_init",
                                         "MPI_Neighbor_%s_c", "MPI_Ineighbor_%s_c", "MPI_Neighbor_%s_init_c"};

static int var_available(int var) {
#if !defined(NB_PINIT)
  if (var == V_PER || var == V_PER_C) return 0;
#endif
#if !defined(NB_HAVE_C)
  if (var >= V_BLK_C) return 0;
#endif
  (void)var;
  return 1;
}

typedef struct job {
  nt_topo *t;
  int op, var, mode, reps, gather, w;
  long E, mult;
  unsigned salt;
  tu_type *st, *rt;
  char desc[400];
  tu_type **sty, **rty; /* per slot */
  long *sc, *rc;        /* counts per slot, in elements of the slot's type */
  int *sci, *rci, *sdi, *rdi;
  MPI_Count *scc, *rcc;
  MPI_Aint *SD, *RD; /* displacements in extents (v forms) */
  MPI_Aint *SB, *RB; /* block offsets in bytes (the displacements of the w forms) */
  MPI_Datatype *sdt, *rdt;
  unsigned char *salloc, *sbuf, *ralloc, *rbuf, *image, *ibuf;
  size_t stotal, rtotal;
  MPI_Aint rlo;
  uint64_t shash;
} job;

/* Basic doubles on the edge leaving `sender` from its out-slot `slot` (-1: the
 * one block of allgather(v)); the receiver computes the same number. */
static long ecount(const job *j, int sender, int slot) {
  if (j->op == OP_AG || j->op == OP_A2A || j->E == 0) return j->E;
  uint64_t h = tu_mix(((uint64_t)(uint32_t)sender << 32) ^ (uint64_t)(slot + 7) ^ ((uint64_t)j->salt << 44));
  if (h % 6 == 0) return 0;
  long c = j->E * (long)(2 + h % 5) / 4;
  return (c + j->mult - 1) / j->mult * j->mult;
}

/* Places k blocks: fixed (alltoall) block i at i*c*extent, otherwise in slot
 * order packed (mode 0) or in reverse order with holes (mode 1), at
 * multiples of `unit` bytes.  B: byte offsets; [*lo, *hi): the footprint. */
static void layout(int k, const long *c, tu_type *const *ty, int fixed, int mode, MPI_Aint unit, MPI_Aint *B,
                   MPI_Aint *lo, MPI_Aint *hi) {
  MPI_Aint cur = 64;
  *lo = 0, *hi = 0;
  for (int q = 0; q < k; ++q) {
    int i = mode ? k - 1 - q : q;
    if (fixed) {
      B[i] = (MPI_Aint)i * c[i] * ty[i]->extent;
    } else {
      if (mode) cur += 8 * (q % 3 + 1);
      MPI_Aint want = cur - tu_lo(ty[i]);
      B[i] = (want + unit - 1) / unit * unit;
    }
    if (c[i] == 0) continue;
    MPI_Aint a = B[i] + tu_lo(ty[i]), b = a + tu_span(ty[i], c[i]);
    if (a < *lo) *lo = a;
    if (b > *hi) *hi = b;
    if (b > cur) cur = b;
  }
}

static void *xcalloc(size_t n, size_t sz) {
  void *p = calloc(n + 1, sz);
  if (!p) tu_fail("out of memory");
  return p;
}

static job *job_new(nt_topo *t, int op, int var, long E, tu_type *st, tu_type *rt, int mode, unsigned salt) {
  job *j = (job *)xcalloc(1, sizeof(job));
  const int me = t->me, kin = t->indeg, kout = t->outdeg;
  j->t = t, j->op = op, j->var = var, j->mode = mode, j->salt = salt, j->st = st, j->rt = rt;
  j->gather = op == OP_AG || op == OP_AGV, j->w = op == OP_A2AW;
  j->reps = var == V_PER || var == V_PER_C ? 3 : var == V_NB || var == V_NB_C ? 2 : 1;
  long a = st->nbase, b = rt->nbase, m = a;
  while (m % b) m += a;
  j->mult = j->w ? 12 : m;
  j->E = E ? (E + j->mult - 1) / j->mult * j->mult : 0;
  char f[64];
  snprintf(f, sizeof f, varfmt[var], opname[op]);
  snprintf(j->desc, sizeof j->desc, "%s on %s: %ld doubles per block, stype %s, rtype %s, %s", f, t->name, j->E,
           j->w ? "per-slot" : st->name, j->w ? "per-slot" : rt->name, mode ? "reversed with holes" : "packed");
  int ks = j->gather ? 1 : kout;
  j->sty = (tu_type **)xcalloc(ks, sizeof(tu_type *)), j->rty = (tu_type **)xcalloc(kin, sizeof(tu_type *));
  j->sc = (long *)xcalloc(ks, sizeof(long)), j->rc = (long *)xcalloc(kin, sizeof(long));
  j->sci = (int *)xcalloc(ks, sizeof(int)), j->rci = (int *)xcalloc(kin, sizeof(int));
  j->sdi = (int *)xcalloc(ks, sizeof(int)), j->rdi = (int *)xcalloc(kin, sizeof(int));
  j->scc = (MPI_Count *)xcalloc(ks, sizeof(MPI_Count)), j->rcc = (MPI_Count *)xcalloc(kin, sizeof(MPI_Count));
  j->SD = (MPI_Aint *)xcalloc(ks, sizeof(MPI_Aint)), j->RD = (MPI_Aint *)xcalloc(kin, sizeof(MPI_Aint));
  j->SB = (MPI_Aint *)xcalloc(ks, sizeof(MPI_Aint)), j->RB = (MPI_Aint *)xcalloc(kin, sizeof(MPI_Aint));
  j->sdt = (MPI_Datatype *)xcalloc(ks, sizeof(MPI_Datatype));
  j->rdt = (MPI_Datatype *)xcalloc(kin, sizeof(MPI_Datatype));
  for (int s = 0; s < ks; ++s) {
    j->sty[s] = j->w ? tu_cat(TU_F_DOUBLE, me + s + (int)salt) : st;
    j->sc[s] = ecount(j, me, j->gather ? -1 : s) / j->sty[s]->nbase;
  }
  for (int i = 0; i < kin; ++i) {
    j->rty[i] = j->w ? tu_cat(TU_F_DOUBLE, 2 * me + i + (int)salt + 1) : rt;
    int src = t->in[i];
    long e = t->from[i] < 0 ? ecount(j, me, 1000 + i) : ecount(j, src, j->gather ? -1 : t->from[i]);
    j->rc[i] = e / j->rty[i]->nbase;
  }
  if (ks == 0) j->sc[0] = j->E / st->nbase; /* the count argument of alltoall without out-neighbours */
  if (kin == 0) j->rc[0] = j->E / rt->nbase;
  MPI_Aint slo, shi, rhi;
  int fixed = op == OP_AG || op == OP_A2A;
  layout(ks, j->sc, j->sty, fixed || j->gather, mode, /* allgather(v) sends from the buffer address */
         j->w ? 8 : st->extent, j->SB, &slo, &shi);
  layout(kin, j->rc, j->rty, fixed, mode, j->w ? 8 : rt->extent, j->RB, &j->rlo, &rhi);
  for (int s = 0; s <= ks; ++s) {
    j->sci[s] = (int)j->sc[s], j->scc[s] = j->sc[s], j->sdt[s] = j->sty[s] ? j->sty[s]->dt : st->dt;
    j->SD[s] = j->w ? j->SB[s] : j->SB[s] / st->extent, j->sdi[s] = (int)j->SD[s];
  }
  for (int i = 0; i <= kin; ++i) {
    j->rci[i] = (int)j->rc[i], j->rcc[i] = j->rc[i], j->rdt[i] = j->rty[i] ? j->rty[i]->dt : rt->dt;
    j->RD[i] = j->w ? j->RB[i] : j->RB[i] / rt->extent, j->rdi[i] = (int)j->RD[i];
  }
  j->stotal = (size_t)(shi - slo) + 2 * TU_GUARD, j->rtotal = (size_t)(rhi - j->rlo) + 2 * TU_GUARD;
  j->salloc = (unsigned char *)tu_malloc(j->stotal), j->sbuf = j->salloc + TU_GUARD - slo;
  j->ralloc = (unsigned char *)tu_malloc(j->rtotal), j->rbuf = j->ralloc + TU_GUARD - j->rlo;
  j->image = (unsigned char *)tu_malloc(j->rtotal), j->ibuf = j->image + TU_GUARD - j->rlo;
  return j;
}

static void job_free(job *j) {
  free(j->sty), free(j->rty), free(j->sc), free(j->rc), free(j->sci), free(j->rci), free(j->sdi), free(j->rdi);
  free(j->scc), free(j->rcc), free(j->SD), free(j->RD), free(j->SB), free(j->RB), free(j->sdt), free(j->rdt);
  free(j->salloc), free(j->ralloc), free(j->image), free(j);
}

/* The expected receive image of iteration it when in-slot i gets the block of out-slot from[i]. */
static void job_image(job *j, int it, const int *from) {
  const nt_topo *t = j->t;
  unsigned s = j->salt * 8 + (unsigned)it;
  tu_fill_sentinel(j->image, j->rtotal);
  for (int i = 0; i < t->indeg; ++i)
    if (from[i] >= 0)
      tu_place(j->ibuf + j->RB[i], j->rty[i], j->rc[i], tu_key(t->in[i], j->gather ? TU_ALL : from[i], s));
}

/* Send data, sentinel receive area and its expected image for iteration it. */
static void job_fill(job *j, int it) {
  const nt_topo *t = j->t;
  unsigned s = j->salt * 8 + (unsigned)it;
  tu_fill_sentinel(j->salloc, j->stotal);
  if (j->gather) tu_place(j->sbuf + j->SB[0], j->sty[0], j->sc[0], tu_key(t->me, TU_ALL, s));
  for (int k = 0; !j->gather && k < t->outdeg; ++k)
    tu_place(j->sbuf + j->SB[k], j->sty[k], j->sc[k], tu_key(t->me, k, s));
  j->shash = tu_hash_bytes(j->salloc, j->stotal);
  tu_fill_sentinel(j->ralloc, j->rtotal);
  job_image(j, it, t->from);
}

static int survey; /* "survey": report each wrong case (and whether it is the k-th-occurrence order) and go on */

static void job_check(job *j, int it) {
  const nt_topo *t = j->t;
  if (survey && memcmp(j->ralloc, j->image, j->rtotal)) {
    int kth = 0;
    if (t->dupcart) {
      job_image(j, it, t->kth);
      kth = !memcmp(j->ralloc, j->image, j->rtotal);
    }
    printf("SURVEY wrong: %s%s\n", j->desc, kth ? " [= k-th occurrence order, not s^1]" : "");
    fflush(stdout);
    return;
  }
  if (memcmp(j->ralloc, j->image, j->rtotal)) {
    size_t o = 0;
    while (j->ralloc[o] == j->image[o]) ++o;
    MPI_Aint rel = (MPI_Aint)o - TU_GUARD + j->rlo; /* offset from the receive buffer address */
    char where[200] = "outside every block (guard or gap)";
    for (int i = 0; i < t->indeg; ++i) {
      MPI_Aint a = j->RB[i] + tu_lo(j->rty[i]), b = a + tu_span(j->rty[i], j->rc[i]);
      if (rel >= a && rel < b)
        snprintf(where, sizeof where, "in-slot %d (from rank %d%s, its out-slot %d), byte %ld of the block", i,
                 t->in[i], t->in[i] == MPI_PROC_NULL ? " = MPI_PROC_NULL" : "", t->from[i], (long)(rel - j->RB[i]));
    }
    tu_fail("%s, iteration %d: receive byte %ld %s: expected 0x%02x got 0x%02x", j->desc, it, (long)rel, where,
            j->image[o], j->ralloc[o]);
  }
  if (tu_hash_bytes(j->salloc, j->stotal) != j->shash)
    tu_fail("%s, iteration %d: the send buffer changed", j->desc, it);
  ++tu_ncases;
  for (int i = 0; i < t->indeg; ++i)
    if (t->from[i] >= 0) tu_bytes_recv += (double)j->rc[i] * j->rty[i]->size;
}

/* Starts (or runs) the job's collective; *req stays MPI_REQUEST_NULL for the blocking forms. */
static int job_call(job *j, MPI_Request *req) {
  MPI_Comm c = j->t->comm;
  void *sb = j->sbuf, *rb = j->rbuf;
  MPI_Datatype sd = j->sdt[0], rd = j->rdt[0];
  int sc = j->sci[0], rc = j->rci[0];
  int *scs = j->sci, *rcs = j->rci, *sds = j->sdi, *rds = j->rdi;
  (void)sds, (void)rds, (void)scs, (void)sd, (void)rd, (void)sc, (void)rc, (void)sb, (void)rb, (void)c;
  switch (j->var * NOPS + j->op) {
    case V_BLK *NOPS + OP_AG:
      return MPI_Neighbor_allgather(sb, sc, sd, rb, rc, rd, c);
    case V_BLK *NOPS + OP_AGV:
      return MPI_Neighbor_allgatherv(sb, sc, sd, rb, rcs, rds, rd, c);
    case V_BLK *NOPS + OP_A2A:
      return MPI_Neighbor_alltoall(sb, sc, sd, rb, rc, rd, c);
    case V_BLK *NOPS + OP_A2AV:
      return MPI_Neighbor_alltoallv(sb, scs, sds, sd, rb, rcs, rds, rd, c);
    case V_BLK *NOPS + OP_A2AW:
      return MPI_Neighbor_alltoallw(sb, scs, j->SB, j->sdt, rb, rcs, j->RB, j->rdt, c);
    case V_NB *NOPS + OP_AG:
      return MPI_Ineighbor_allgather(sb, sc, sd, rb, rc, rd, c, req);
    case V_NB *NOPS + OP_AGV:
      return MPI_Ineighbor_allgatherv(sb, sc, sd, rb, rcs, rds, rd, c, req);
    case V_NB *NOPS + OP_A2A:
      return MPI_Ineighbor_alltoall(sb, sc, sd, rb, rc, rd, c, req);
    case V_NB *NOPS + OP_A2AV:
      return MPI_Ineighbor_alltoallv(sb, scs, sds, sd, rb, rcs, rds, rd, c, req);
    case V_NB *NOPS + OP_A2AW:
      return MPI_Ineighbor_alltoallw(sb, scs, j->SB, j->sdt, rb, rcs, j->RB, j->rdt, c, req);
#if defined(NB_PINIT)
    case V_PER *NOPS + OP_AG:
      return NB_PINIT(Neighbor_allgather_init)(sb, sc, sd, rb, rc, rd, c, MPI_INFO_NULL, req);
    case V_PER *NOPS + OP_AGV:
      return NB_PINIT(Neighbor_allgatherv_init)(sb, sc, sd, rb, rcs, rds, rd, c, MPI_INFO_NULL, req);
    case V_PER *NOPS + OP_A2A:
      return NB_PINIT(Neighbor_alltoall_init)(sb, sc, sd, rb, rc, rd, c, MPI_INFO_NULL, req);
    case V_PER *NOPS + OP_A2AV:
      return NB_PINIT(Neighbor_alltoallv_init)(sb, scs, sds, sd, rb, rcs, rds, rd, c, MPI_INFO_NULL, req);
    case V_PER *NOPS + OP_A2AW:
      return NB_PINIT(Neighbor_alltoallw_init)(sb, scs, j->SB, j->sdt, rb, rcs, j->RB, j->rdt, c, MPI_INFO_NULL, req);
#endif
#if defined(NB_HAVE_C)
    case V_BLK_C *NOPS + OP_AG:
      return MPI_Neighbor_allgather_c(sb, j->scc[0], sd, rb, j->rcc[0], rd, c);
    case V_BLK_C *NOPS + OP_AGV:
      return MPI_Neighbor_allgatherv_c(sb, j->scc[0], sd, rb, j->rcc, j->RD, rd, c);
    case V_BLK_C *NOPS + OP_A2A:
      return MPI_Neighbor_alltoall_c(sb, j->scc[0], sd, rb, j->rcc[0], rd, c);
    case V_BLK_C *NOPS + OP_A2AV:
      return MPI_Neighbor_alltoallv_c(sb, j->scc, j->SD, sd, rb, j->rcc, j->RD, rd, c);
    case V_BLK_C *NOPS + OP_A2AW:
      return MPI_Neighbor_alltoallw_c(sb, j->scc, j->SB, j->sdt, rb, j->rcc, j->RB, j->rdt, c);
    case V_NB_C *NOPS + OP_AG:
      return MPI_Ineighbor_allgather_c(sb, j->scc[0], sd, rb, j->rcc[0], rd, c, req);
    case V_NB_C *NOPS + OP_AGV:
      return MPI_Ineighbor_allgatherv_c(sb, j->scc[0], sd, rb, j->rcc, j->RD, rd, c, req);
    case V_NB_C *NOPS + OP_A2A:
      return MPI_Ineighbor_alltoall_c(sb, j->scc[0], sd, rb, j->rcc[0], rd, c, req);
    case V_NB_C *NOPS + OP_A2AV:
      return MPI_Ineighbor_alltoallv_c(sb, j->scc, j->SD, sd, rb, j->rcc, j->RD, rd, c, req);
    case V_NB_C *NOPS + OP_A2AW:
      return MPI_Ineighbor_alltoallw_c(sb, j->scc, j->SB, j->sdt, rb, j->rcc, j->RB, j->rdt, c, req);
    case V_PER_C *NOPS + OP_AG:
      return MPI_Neighbor_allgather_init_c(sb, j->scc[0], sd, rb, j->rcc[0], rd, c, MPI_INFO_NULL, req);
    case V_PER_C *NOPS + OP_AGV:
      return MPI_Neighbor_allgatherv_init_c(sb, j->scc[0], sd, rb, j->rcc, j->RD, rd, c, MPI_INFO_NULL, req);
    case V_PER_C *NOPS + OP_A2A:
      return MPI_Neighbor_alltoall_init_c(sb, j->scc[0], sd, rb, j->rcc[0], rd, c, MPI_INFO_NULL, req);
    case V_PER_C *NOPS + OP_A2AV:
      return MPI_Neighbor_alltoallv_init_c(sb, j->scc, j->SD, sd, rb, j->rcc, j->RD, rd, c, MPI_INFO_NULL, req);
    case V_PER_C *NOPS + OP_A2AW:
      return MPI_Neighbor_alltoallw_init_c(sb, j->scc, j->SB, j->sdt, rb, j->rcc, j->RB, j->rdt, c, MPI_INFO_NULL, req);
#endif
  }
  tu_fail("test bug: form %d/%d not available", j->var, j->op);
  return MPI_ERR_OTHER;
}

/* Known defects of the reference libraries, found by this program.  The
 * decision depends only on the topology and the form, so all members of a
 * communicator skip the same collectives.  Never skipped on shmcoll. */
static int nb_known_defect(const job *j) {
  const int a2a = !j->gather, multi = j->t->multi, dupcart = j->t->kind == MPI_CART && multi;
  (void)a2a, (void)multi, (void)dupcart;
#if defined(OPEN_MPI) && !defined(SHMCOLL)
  /* Open MPI 4.1.4: the nonblocking and persistent MPI_(I)neighbor_alltoall(v,w)
   * (coll/libnbc) ignore the errata of mpi-issues#153 on a Cartesian grid
   * where a pair is connected twice (a periodic dimension of size 1 or 2):
   * block s lands in block s of the receiver, not s^1 (the survey mode of
   * this program finds the result equal to the k-th-occurrence order), and
   * with different counts per edge the v/w forms fail with MPI_ERR_TRUNCATE.
   * The blocking forms are right. */
  if (a2a && dupcart && j->var != V_BLK) return 1;
#endif
#if defined(MPICH_VERSION) && !defined(SHMCOLL)
  /* MPICH 4.0.2: on topologies where a pair of processes is connected more
   * than once -- a periodic Cartesian dimension of size 1 or 2, repeated
   * edges and self loops of distributed graphs -- the alltoall(v,w) forms
   * deliver blocks to the wrong slots: on Cartesian grids blocking alltoallv
   * and alltoallw and every nonblocking and persistent form (mostly the
   * k-th-occurrence order instead of s^1, not always); on the distributed
   * graphs (where Open MPI gives the k-th-occurrence order this program
   * expects) MPI_Ineighbor_alltoall(_c), MPI_Neighbor_alltoall_init(_c),
   * MPI_Ineighbor_alltoallw and blocking MPI_Neighbor_alltoall with a
   * derived send type.  Skipped on all such topologies. */
  if (a2a && multi) return 1;
#endif
  return 0;
}

static void run_job(job *j) {
  if (nb_known_defect(j)) {
    ++tu_nskipped;
    return;
  }
  MPI_Request req = MPI_REQUEST_NULL;
  const int pers = j->var == V_PER || j->var == V_PER_C;
  if (pers) tu_check_rc(job_call(j, &req), j->desc);
  for (int it = 0; it < j->reps; ++it) {
    job_fill(j, it);
    if (pers) {
      tu_check_rc(MPI_Start(&req), "MPI_Start");
    } else {
      tu_check_rc(job_call(j, &req), j->desc);
    }
    if (req != MPI_REQUEST_NULL) {
      MPI_Status st;
      if (it % 2) {
        int flag = 0;
        while (!flag) TU_CALL(MPI_Test(&req, &flag, &st));
      } else {
        TU_CALL(MPI_Wait(&req, &st));
      }
    }
    job_check(j, it);
  }
  if (pers) TU_CALL(MPI_Request_free(&req));
}

/* Every form and operation on one topology. */
static void run_topo(nt_topo *t, int tidx, int quick, int full, int large) {
  static const long sizes[] = {0, 1, 13, 120, 1000, 8192, 32768, 131072}; /* doubles: 0 B .. 64 KiB, 256 KiB, 1 MiB */
  static const int combos[4][2] = {{0, 0}, {1, 0}, {0, 3}, {2, 6}};       /* indices into tu_cat_d: stype, rtype */
  int nsz = large ? 8 : 6;
  if (t->comm == MPI_COMM_NULL) return;
  const int per = full ? nsz : quick ? 1 : 2; /* sizes per form: a rotating selection unless `full` */
  for (int op = 0; op < NOPS; ++op)
    for (int var = 0; var < NVAR; ++var) {
      if (!var_available(var)) continue;
      for (int si = 0; si < nsz; ++si) {
        if (!full && (si + nsz - (tidx + op + var) % nsz) % nsz >= per) continue;
        int cb = (op + var + si) % 4;
        unsigned salt = (unsigned)(op * 97 + var * 13 + si * 5 + 1);
        job *j =
            job_new(t, op, var, sizes[si], &tu_cat_d[combos[cb][0]], &tu_cat_d[combos[cb][1]], (si + var) % 2, salt);
        run_job(j);
        job_free(j);
      }
    }
}

/* Every form on MPI_COMM_WORLD, which has no topology: MPI_ERR_TOPOLOGY. */
static void errors(void) {
  double sb[4] = {0}, rb[4 * 64];
  int one[64], zero[64];
  MPI_Aint az[64];
  MPI_Datatype dts[64];
  for (int i = 0; i < 64; ++i) one[i] = 1, zero[i] = 0, az[i] = 0, dts[i] = MPI_DOUBLE;
  for (int var = 0; var < NVAR; ++var) {
    if (!var_available(var)) continue;
    for (int op = 0; op < NOPS; ++op) {
      job j;
      memset(&j, 0, sizeof j);
      nt_topo t;
      memset(&t, 0, sizeof t);
      t.comm = MPI_COMM_WORLD;
      j.t = &t, j.op = op, j.var = var, j.sbuf = (unsigned char *)sb, j.rbuf = (unsigned char *)rb;
      j.sci = one, j.rci = one, j.sdi = zero, j.rdi = zero, j.sdt = dts, j.rdt = dts;
      MPI_Count cc[64];
      for (int i = 0; i < 64; ++i) cc[i] = 1;
      j.scc = j.rcc = cc, j.SD = j.RD = j.SB = j.RB = az;
      snprintf(j.desc, sizeof j.desc, varfmt[var], opname[op]);
      MPI_Request req = MPI_REQUEST_NULL;
      int rc = job_call(&j, &req), cls = -1;
      MPI_Error_class(rc, &cls);
      if (survey && (rc == MPI_SUCCESS || cls != MPI_ERR_TOPOLOGY)) {
        printf("SURVEY error class: %s on MPI_COMM_WORLD: rc %d class %d\n", j.desc, rc, cls);
        if (rc == MPI_SUCCESS && req != MPI_REQUEST_NULL) TU_CALL(MPI_Request_free(&req));
        continue;
      }
      int ok = cls == MPI_ERR_TOPOLOGY;
#if defined(OPEN_MPI) && !defined(SHMCOLL)
      /* Open MPI 4.1.4 reports this as MPI_ERR_INTERN (blocking allgather),
       * MPI_ERR_ARG (nonblocking/persistent allgather), MPI_ERR_COMM (alltoallv). */
      ok |= cls == MPI_ERR_INTERN || cls == MPI_ERR_ARG || cls == MPI_ERR_COMM;
#endif
#if defined(MPICH_VERSION) && !defined(SHMCOLL)
      /* MPICH 4.0.2 checks the count and datatype arrays of the v/w forms first
       * (with a degree it cannot know): MPI_ERR_COUNT or MPI_ERR_TYPE, varying. */
      ok |= (op != OP_AG && op != OP_A2A) && (cls == MPI_ERR_COUNT || cls == MPI_ERR_TYPE);
#endif
      if (rc == MPI_SUCCESS || !ok)
        tu_fail("%s on MPI_COMM_WORLD (no topology): returned %d, class %d, expected MPI_ERR_TOPOLOGY (%d)", j.desc, rc,
                cls, MPI_ERR_TOPOLOGY);
      ++tu_ncases;
    }
  }
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "neighbor");
  tu_catalog_init();
  const int quick = tu_arg_flag(argc, argv, "quick"), large = tu_arg_flag(argc, argv, "large");
  survey = tu_arg_flag(argc, argv, "survey");
  const int full = tu_arg_flag(argc, argv, "full") || large;
  const int n = tu_size, me = tu_rank;
  double t0 = MPI_Wtime();
  for (int k = 0; k < 12; ++k) {
    nt_topo t;
    memset(&t, 0, sizeof t);
    int dims[3] = {0, 0, 0}, per[3] = {0, 0, 0};
    switch (k) {
      case 0:
        dims[0] = n, per[0] = 1, nt_cart(&t, 1, dims, per);
        break;
      case 1:
        dims[0] = n, nt_cart(&t, 1, dims, per);
        break;
      case 2:
        TU_CALL(MPI_Dims_create(n, 2, dims)), per[0] = 1, nt_cart(&t, 2, dims, per);
        break;
      case 3:
        TU_CALL(MPI_Dims_create(n, 3, dims)), per[0] = per[1] = per[2] = 1, nt_cart(&t, 3, dims, per);
        break;
      case 4:
        dims[0] = 1, dims[1] = n, per[0] = 1, nt_cart(&t, 2, dims, per);
        break; /* size-1 periodic */
      case 5:  /* size-2 periodic dimension (n even), else size 1 and n */
        if (n % 2 == 0)
          dims[0] = 2, dims[1] = n / 2, per[0] = per[1] = 1, nt_cart(&t, 2, dims, per);
        else
          dims[0] = n, dims[1] = 1, dims[2] = 1, per[1] = per[2] = 1, nt_cart(&t, 3, dims, per);
        break;
      case 6: /* a grid smaller than the communicator (the last rank is left out when n > 1) */
        dims[0] = n > 1 ? n - 1 : 1, per[0] = 1, nt_cart(&t, 1, dims, per);
        break;
      case 7:
        nt_graph(&t, n, 17);
        break;
      case 8:
        nt_dist(&t, n, me, 1, 1, 1);
        break;
      case 9:
        nt_dist(&t, n, me, 2, 1, 0);
        break;
      case 10:
        nt_dist(&t, n, me, 3, 0, 1);
        break;
      case 11:
        nt_dist(&t, n, me, 4, 0, 0);
        break;
    }
    run_topo(&t, k, quick, full, large);
    nt_free(&t);
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  }
  errors();
  tu_catalog_free();
  char extra[64];
  snprintf(extra, sizeof extra, "time=%.1fs", MPI_Wtime() - t0);
  return tu_finish(extra);
}
