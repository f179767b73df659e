/*
 * threads_soak.c -- a soak of mixed MPI operations from several threads of
 * every rank at once (MPI_THREAD_MULTIPLE), every result checked byte for
 * byte.
 *
 * Written against the standard MPI C API and POSIX threads only (the same
 * source builds and passes with Open MPI's and MPICH's mpicc).
 *
 *   threads_soak [threads=4] [ops=100000] [seed=1]
 *
 * `ops` operations in total per run, split evenly over the ranks and their
 * threads (at least one per thread).  Every thread has its own duplicate of
 * MPI_COMM_WORLD (made by the main thread before the threads start) and a
 * pseudo-random stream seeded from (seed, thread) -- the same on every rank,
 * so the threads with the same index on all ranks choose the same sequence of
 * operations, sizes and roots -- while anything rank-dependent (what a rank
 * sends to which rank, its message sizes) comes from a hash of (seed, thread,
 * operation index, sender, receiver).  Operations, by weight:
 *   25% point-to-point with every rank on the thread's communicator:
 *       MPI_Irecv from and MPI_Isend/MPI_Issend to every rank (itself too),
 *       0 B to 38 KB, completed with MPI_Waitall, an MPI_Waitany loop or an
 *       MPI_Testall loop;
 *   10% wildcard receives: each rank sends to the next 1..n-1 ranks and
 *       receives as many messages with MPI_ANY_SOURCE (and MPI_ANY_TAG on
 *       every other operation), checked by the source in the status;
 *   30% a collective on the thread's communicator: MPI_Allreduce (MPI_BXOR),
 *       MPI_Bcast, MPI_Alltoall, MPI_Allgather, MPI_Iallreduce (MPI_SUM) +
 *       MPI_Wait or MPI_Test loop, MPI_Barrier, MPI_Reduce (MPI_SUM);
 *   15% a derived datatype made, committed, used and freed by the thread:
 *       MPI_Type_vector, MPI_Type_indexed or MPI_Type_create_hvector (over
 *       MPI_INT or MPI_DOUBLE), sent around the ring and received either as
 *       contiguous elements or through another derived type with a different
 *       layout (holes keep their sentinel);
 *    5% MPI_Comm_dup or MPI_Comm_split of the thread's communicator, used
 *       (MPI_Allgather of world ranks, a ring MPI_Sendrecv) and freed;
 *   15% point-to-point on ONE communicator shared by all threads: thread t
 *       sends to the next rank and receives from the previous one with tag t
 *       (MPI_Sendrecv, or MPI_Isend + MPI_Recv with MPI_ANY_SOURCE); only
 *       thread t uses tag t, so the standard's order rule fixes which message
 *       each receive gets.
 * Every receive area is bracketed by guard bytes; send buffers must not
 * change; statuses (source, tag, count) are checked.  At the end nothing may
 * be left unreceived.  On a wrong result the rank, thread, seed, operation
 * index and what differs are printed and the program calls
 * MPI_Abort(MPI_COMM_WORLD, 1).
 *
 * Time: the default 100,000 operations take about 25 s at 4 ranks x 4
 * threads on 2 cores under Open MPI 4.1.4, but about ten times as long under
 * MPICH 4.0.2 (ch4:ucx), where tests/crosslib/list.txt runs ops=10000.
 */
#include "threadutil.h"


/* ---- the soak ------------------------------------------------------------------ */

static uint64_t seed = 1;
static long ops_per_thread;
static MPI_Comm *tcomm, xcomm;
static atomic_llong nops[8];

typedef struct {
  int t;
  long i;     /* operation index */
  uint64_t s; /* shared random state */
} ctx;
static uint64_t rnd(ctx *c) { return tu_mix(c->s += 0x9e3779b97f4a7c15ull); }

static uint64_t okey(const ctx *c, int salt, int src, int dst) {
  uint64_t k = tu_mix(seed * 0x100000001b3ull + (uint64_t)c->t);
  k = tu_mix(k ^ ((uint64_t)c->i << 8) ^ (uint64_t)salt);
  return tu_mix(k ^ ((uint64_t)(uint32_t)src << 32) ^ (uint64_t)(uint32_t)dst);
}
/* Size of a message src -> dst: mostly 0..255 bytes, one in 40 8..38 KB. */
static size_t osize(const ctx *c, int salt, int src, int dst) {
  uint64_t h = okey(c, salt ^ 0x55, src, dst);
  if ((h >> 20) % 40 == 0) return 8192 + (h >> 32) % 30000;
  return h % 256;
}

/* Status of a receive: source, tag, and the count in elements of dt. */
static void check_status_dt(const MPI_Status *s, int src, int tag, MPI_Datatype dt, int want, const char *what) {
  int cnt = -1;
  CK(MPI_Get_count(s, dt, &cnt));
  if ((src >= 0 && s->MPI_SOURCE != src) || (tag >= 0 && s->MPI_TAG != tag) || cnt != want)
    tfail("%s: status source %d tag %d count %d, expected %d %d %d", what, s->MPI_SOURCE, s->MPI_TAG, cnt, src, tag,
          want);
}
static void check_status(const MPI_Status *s, int src, int tag, size_t len, const char *what) {
  check_status_dt(s, src, tag, MPI_BYTE, (int)len, what);
}

/* 25%: every rank to every rank on the thread's communicator */
static void op_exchange(ctx *c, MPI_Comm cm) {
  int n = tu_size, me = tu_rank, how = (int)(rnd(c) % 3), tag = (int)(c->i % 30000);
  SETCASE("op %ld: exchange with every rank (completion %d)", c->i, how);
  gb *rb = (gb *)tu_malloc(sizeof(gb) * n);
  unsigned char **sb = (unsigned char **)tu_malloc(sizeof(void *) * n);
  MPI_Request *q = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * 2 * n);
  MPI_Status *st = (MPI_Status *)tu_malloc(sizeof(MPI_Status) * 2 * n);
  for (int p = 0; p < n; ++p) {
    size_t l = osize(c, 1, p, me);
    gb_new(&rb[p], l);
    tu_pattern(rb[p].ip, okey(c, 1, p, me), 0, l);
    CK(MPI_Irecv(rb[p].p, (int)l, MPI_BYTE, p, tag, cm, &q[p]));
  }
  for (int j = 0; j < n; ++j) {
    int p = (me + j) % n;
    size_t l = osize(c, 1, me, p);
    sb[p] = (unsigned char *)tu_malloc(l + 1);
    tu_pattern(sb[p], okey(c, 1, me, p), 0, l);
    if ((c->i + p) % 5 == 0)
      CK(MPI_Issend(sb[p], (int)l, MPI_BYTE, p, tag, cm, &q[n + p]));
    else
      CK(MPI_Isend(sb[p], (int)l, MPI_BYTE, p, tag, cm, &q[n + p]));
  }
  if (how == 0) {
    int rc = MPI_Waitall(2 * n, q, st);
    if (rc != MPI_SUCCESS) tcheck(rc, "MPI_Waitall", __LINE__);
  } else if (how == 1) {
    for (int j = 0; j < 2 * n; ++j) {
      int idx = -1;
      MPI_Status s1;
      CK(MPI_Waitany(2 * n, q, &idx, &s1));
      if (idx < 0 || idx >= 2 * n) tfail("MPI_Waitany index %d", idx);
      st[idx] = s1;
    }
  } else {
    int flag = 0;
    long spins = 0;
    while (!flag) {
      int rc = MPI_Testall(2 * n, q, &flag, st);
      if (rc != MPI_SUCCESS) tcheck(rc, "MPI_Testall", __LINE__);
      if (!flag && ++spins % 8 == 0) sched_yield();
    }
  }
  for (int p = 0; p < n; ++p) {
    char what[64];
    snprintf(what, sizeof what, "message from rank %d", p);
    check_status(&st[p], p, tag, rb[p].len, what);
    gcheck(&rb[p], what);
    gb_free(&rb[p]);
    size_t l = osize(c, 1, me, p);
    unsigned char *e = (unsigned char *)tu_malloc(l + 1);
    tu_pattern(e, okey(c, 1, me, p), 0, l);
    if (memcmp(e, sb[p], l)) tfail("the send buffer to rank %d was modified", p);
    free(e), free(sb[p]);
  }
  free(rb), free(sb), free(q), free(st);
}

/* 10%: wildcard receives */
static void op_anysource(ctx *c, MPI_Comm cm) {
  int n = tu_size, me = tu_rank, m = n > 1 ? 1 + (int)(rnd(c) % (uint64_t)(n - 1)) : 1;
  int anytag = c->i % 2, tag = (int)(c->i % 30000);
  SETCASE("op %ld: %d wildcard receives%s", c->i, m, anytag ? " (MPI_ANY_TAG too)" : "");
  MPI_Request *q = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * m);
  unsigned char **sb = (unsigned char **)tu_malloc(sizeof(void *) * m);
  for (int j = 0; j < m; ++j) {
    int p = (me + j + (n > 1)) % n;
    size_t l = osize(c, 2, me, p);
    sb[j] = (unsigned char *)tu_malloc(l + 1);
    tu_pattern(sb[j], okey(c, 2, me, p), 0, l);
    CK(MPI_Isend(sb[j], (int)l, MPI_BYTE, p, tag, cm, &q[j]));
  }
  int *got = (int *)tu_malloc(sizeof(int) * n);
  for (int p = 0; p < n; ++p) got[p] = 0;
  gb g;
  gb_new(&g, 40000);
  for (int j = 0; j < m; ++j) {
    MPI_Status s;
    tu_fill_sentinel(g.all, g.len + 2 * TU_GUARD);
    CK(MPI_Recv(g.p, 40000, MPI_BYTE, MPI_ANY_SOURCE, anytag ? MPI_ANY_TAG : tag, cm, &s));
    int src = s.MPI_SOURCE, d = (src - me + n) % n; /* the sender is d ranks before */
    if (src < 0 || src >= n || (n > 1 && (d == 0 || (n - d) > m)) || got[src]++)
      tfail("wildcard receive %d of %d: unexpected (or second) message from rank %d", j, m, src);
    size_t l = osize(c, 2, src, me);
    check_status(&s, src, tag, l, "wildcard receive");
    tu_fill_sentinel(g.img, g.len + 2 * TU_GUARD);
    tu_pattern(g.ip, okey(c, 2, src, me), 0, l);
    gcheck(&g, "wildcard receive");
  }
  gb_free(&g);
  CK(MPI_Waitall(m, q, MPI_STATUSES_IGNORE));
  /* with MPI_ANY_TAG a receive could match a message a faster rank sends in
   * its next operation: nobody starts that before everyone received here */
  if (anytag) CK(MPI_Barrier(cm));
  for (int j = 0; j < m; ++j) free(sb[j]);
  free(q), free(sb), free(got);
}

/* 30%: collectives */
static void op_coll(ctx *c, MPI_Comm cm) {
  int n = tu_size, me = tu_rank, which = (int)(rnd(c) % 7);
  uint64_t r = rnd(c);
  switch (which) {
    case 0: { /* MPI_Allreduce, MPI_BXOR */
      int m = 1 + (int)(r % 64);
      SETCASE("op %ld: MPI_Allreduce(MPI_BXOR) of %d words", c->i, m);
      uint64_t *x = (uint64_t *)tu_malloc(8 * m);
      gb g;
      gb_new(&g, 8 * (size_t)m);
      for (int k = 0; k < m; ++k) {
        uint64_t e = 0;
        for (int p = 0; p < n; ++p) e ^= tu_mix(okey(c, 3, p, 0) + (uint64_t)k);
        memcpy(g.ip + 8 * k, &e, 8);
        x[k] = tu_mix(okey(c, 3, me, 0) + (uint64_t)k);
      }
      CK(MPI_Allreduce(x, g.p, m, MPI_UINT64_T, MPI_BXOR, cm));
      gcheck(&g, "result");
      gb_free(&g), free(x);
      break;
    }
    case 1: { /* MPI_Bcast */
      int root = (int)(r % n);
      size_t l = (r >> 16) % 50 == 0 ? 20000 + (r >> 24) % 20000 : (r >> 24) % 512;
      SETCASE("op %ld: MPI_Bcast from root %d, %zu bytes", c->i, root, l);
      gb g;
      gb_new(&g, l);
      tu_pattern(g.ip, okey(c, 4, root, 0), 0, l);
      if (me == root) memcpy(g.p, g.ip, l);
      CK(MPI_Bcast(g.p, (int)l, MPI_BYTE, root, cm));
      gcheck(&g, "buffer");
      gb_free(&g);
      break;
    }
    case 2: { /* MPI_Alltoall */
      int m = (int)(r % 32);
      SETCASE("op %ld: MPI_Alltoall of %d ints per block", c->i, m);
      size_t b = 4 * (size_t)m;
      unsigned char *s = (unsigned char *)tu_malloc(b * n + 1);
      gb g;
      gb_new(&g, b * n);
      for (int p = 0; p < n; ++p) {
        tu_pattern(s + p * b, okey(c, 5, me, p), 0, b);
        tu_pattern(g.ip + p * b, okey(c, 5, p, me), 0, b);
      }
      CK(MPI_Alltoall(s, m, MPI_INT, g.p, m, MPI_INT, cm));
      gcheck(&g, "receive buffer");
      gb_free(&g), free(s);
      break;
    }
    case 3: { /* MPI_Allgather */
      int m = (int)(r % 100);
      SETCASE("op %ld: MPI_Allgather of %d bytes", c->i, m);
      unsigned char *s = (unsigned char *)tu_malloc((size_t)m + 1);
      gb g;
      gb_new(&g, (size_t)m * n);
      tu_pattern(s, okey(c, 6, me, 0), 0, (size_t)m);
      for (int p = 0; p < n; ++p) tu_pattern(g.ip + (size_t)p * m, okey(c, 6, p, 0), 0, (size_t)m);
      CK(MPI_Allgather(s, m, MPI_BYTE, g.p, m, MPI_BYTE, cm));
      gcheck(&g, "receive buffer");
      gb_free(&g), free(s);
      break;
    }
    case 4:   /* MPI_Iallreduce, MPI_SUM, then MPI_Wait or MPI_Test */
    case 6: { /* MPI_Reduce, MPI_SUM */
      int m = 1 + (int)(r % 40), root = (int)((r >> 8) % n), red = which == 6;
      SETCASE("op %ld: %s(MPI_SUM) of %d long longs%s", c->i, red ? "MPI_Reduce" : "MPI_Iallreduce", m,
              red ? "" : ((r >> 16) % 2 ? " + MPI_Test loop" : " + MPI_Wait"));
      long long *x = (long long *)tu_malloc(8 * m);
      gb g;
      gb_new(&g, 8 * (size_t)m);
      for (int k = 0; k < m; ++k) {
        long long e = 0;
        for (int p = 0; p < n; ++p) e += (long long)(tu_mix(okey(c, 7, p, 0) + (uint64_t)k) % 2000001) - 1000000;
        memcpy(g.ip + 8 * k, &e, 8);
        x[k] = (long long)(tu_mix(okey(c, 7, me, 0) + (uint64_t)k) % 2000001) - 1000000;
      }
      if (red) {
        CK(MPI_Reduce(x, me == root ? g.p : NULL, m, MPI_LONG_LONG, MPI_SUM, root, cm));
        if (me == root) gcheck(&g, "result at the root");
      } else {
        MPI_Request q;
        CK(MPI_Iallreduce(x, g.p, m, MPI_LONG_LONG, MPI_SUM, cm, &q));
        if ((r >> 16) % 2) {
          int flag = 0;
          long spins = 0;
          while (!flag) {
            CK(MPI_Test(&q, &flag, MPI_STATUS_IGNORE));
            if (!flag && ++spins % 8 == 0) sched_yield();
          }
        } else {
          CK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        }
        gcheck(&g, "result");
      }
      gb_free(&g), free(x);
      break;
    }
    case 5:
      SETCASE("op %ld: MPI_Barrier", c->i);
      CK(MPI_Barrier(cm));
      break;
  }
}

/* 15%: derived datatypes.  A layout is a list of (byte offset, length)
 * segments in type-map order over `span` bytes. */
typedef struct {
  MPI_Datatype dt;
  int nseg;
  MPI_Aint off[64];
  int len[64];
  size_t span, size;
  char name[80];
} layout;

static void make_layout(layout *L, ctx *c, int kind, int dbl, int nelem_hint) {
  uint64_t r = rnd(c);
  MPI_Datatype base = dbl ? MPI_DOUBLE : MPI_INT;
  int b = dbl ? 8 : 4;
  L->nseg = 0, L->size = 0;
  if (kind == 0) { /* vector */
    int count = 1 + (int)(r % 8), bl = 1 + (int)((r >> 8) % 4), stride = bl + (int)((r >> 16) % 4);
    if (nelem_hint) count = nelem_hint, bl = 1, stride = 1 + (int)((r >> 16) % 3);
    CK(MPI_Type_vector(count, bl, stride, base, &L->dt));
    for (int i = 0; i < count; ++i) L->off[L->nseg] = (MPI_Aint)i * stride * b, L->len[L->nseg++] = bl * b;
    snprintf(L->name, sizeof L->name, "vector(%d,%d,%d,%s)", count, bl, stride, dbl ? "DOUBLE" : "INT");
  } else if (kind == 1) { /* indexed, increasing displacements with holes */
    int nb = 1 + (int)(r % 5), bls[64], dis[64], pos = (int)((r >> 4) % 3);
    if (nelem_hint) nb = nelem_hint;
    for (int i = 0; i < nb; ++i) {
      uint64_t ri = rnd(c);
      bls[i] = nelem_hint ? 1 : 1 + (int)(ri % 3);
      dis[i] = pos;
      pos += bls[i] + (int)((ri >> 8) % 3);
      L->off[L->nseg] = (MPI_Aint)dis[i] * b, L->len[L->nseg++] = bls[i] * b;
    }
    CK(MPI_Type_indexed(nb, bls, dis, base, &L->dt));
    snprintf(L->name, sizeof L->name, "indexed(%d blocks,%s)", nb, dbl ? "DOUBLE" : "INT");
  } else { /* hvector with a byte stride */
    int count = 1 + (int)(r % 6), bl = 1 + (int)((r >> 8) % 3);
    if (nelem_hint) count = nelem_hint, bl = 1;
    MPI_Aint stride = (MPI_Aint)bl * b + (MPI_Aint)((r >> 16) % 13);
    CK(MPI_Type_create_hvector(count, bl, stride, base, &L->dt));
    for (int i = 0; i < count; ++i) L->off[L->nseg] = i * stride, L->len[L->nseg++] = bl * b;
    snprintf(L->name, sizeof L->name, "hvector(%d,%d,%ld B,%s)", count, bl, (long)stride, dbl ? "DOUBLE" : "INT");
  }
  CK(MPI_Type_commit(&L->dt));
  L->span = 0;
  for (int s = 0; s < L->nseg; ++s) {
    L->size += (size_t)L->len[s];
    if ((size_t)(L->off[s] + L->len[s]) > L->span) L->span = (size_t)(L->off[s] + L->len[s]);
  }
  int sz = -1;
  CK(MPI_Type_size(L->dt, &sz));
  if ((size_t)sz != L->size) tfail("%s: MPI_Type_size %d, expected %zu", L->name, sz, L->size);
}
static void place(unsigned char *buf, const layout *L, uint64_t key) {
  uint64_t k = 0;
  for (int s = 0; s < L->nseg; ++s) tu_pattern(buf + L->off[s], key, k, (size_t)L->len[s]), k += (uint64_t)L->len[s];
}

static void op_types(ctx *c, MPI_Comm cm) {
  int n = tu_size, me = tu_rank, to = (me + 1) % n, from = (me + n - 1) % n, tag = (int)(c->i % 30000);
  int kind = (int)(rnd(c) % 3), dbl = (int)(rnd(c) % 2), rkind = (int)(rnd(c) % 4);
  layout S, R;
  make_layout(&S, c, kind, dbl, 0);
  int belem = dbl ? 8 : 4, nelem = (int)(S.size / (size_t)belem);
  SETCASE("op %ld: send one %s around the ring", c->i, S.name);
  unsigned char *sb = (unsigned char *)tu_malloc(S.span + 1);
  tu_fill_sentinel(sb, S.span);
  place(sb, &S, okey(c, 8, me, to));
  uint64_t sh = tu_hash_bytes(sb, S.span);
  MPI_Request q;
  CK(MPI_Isend(sb, 1, S.dt, to, tag, cm, &q));
  gb g;
  MPI_Status st;
  if (rkind == 3) { /* contiguous basic elements */
    SETCASE("op %ld: one %s received as %d contiguous elements", c->i, S.name, nelem);
    gb_new(&g, S.size);
    tu_pattern(g.ip, okey(c, 8, from, me), 0, S.size);
    CK(MPI_Recv(g.p, nelem, dbl ? MPI_DOUBLE : MPI_INT, from, tag, cm, &st));
    check_status_dt(&st, from, tag, dbl ? MPI_DOUBLE : MPI_INT, nelem, "receive");
    gcheck(&g, "receive buffer");
    gb_free(&g);
  } else { /* through another derived type with one element per block */
    make_layout(&R, c, rkind, dbl, nelem);
    SETCASE("op %ld: one %s received as one %s", c->i, S.name, R.name);
    gb_new(&g, R.span);
    place(g.ip, &R, okey(c, 8, from, me));
    CK(MPI_Recv(g.p, 1, R.dt, from, tag, cm, &st));
    check_status_dt(&st, from, tag, R.dt, 1, "receive");
    int el = -1;
    CK(MPI_Get_elements(&st, dbl ? MPI_DOUBLE : MPI_INT, &el));
    if (el != nelem) tfail("MPI_Get_elements gave %d, expected %d", el, nelem);
    gcheck(&g, "receive buffer");
    gb_free(&g);
    CK(MPI_Type_free(&R.dt));
  }
  CK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  if (tu_hash_bytes(sb, S.span) != sh) tfail("the send buffer was modified");
  CK(MPI_Type_free(&S.dt));
  if (S.dt != MPI_DATATYPE_NULL) tfail("MPI_Type_free did not set the handle to MPI_DATATYPE_NULL");
  free(sb);
}

/* 5%: communicator dup / split */
static void op_comm(ctx *c, MPI_Comm cm) {
  int n = tu_size, me = tu_rank, split = (int)(rnd(c) % 2);
  uint64_t r = rnd(c);
  MPI_Comm d;
  int *want = (int *)tu_malloc(sizeof(int) * n), nw = 0;
  if (split) {
    int rev = (int)(r % 2);
    SETCASE("op %ld: MPI_Comm_split (%s order)", c->i, rev ? "reversed" : "same");
    int color = (int)((me + (r >> 4)) % 2);
    CK(MPI_Comm_split(cm, color, rev ? n - me : me, &d));
    for (int j = 0; j < n; ++j) {
      int p = rev ? n - 1 - j : j;
      if ((int)((p + (r >> 4)) % 2) == color) want[nw++] = p;
    }
  } else {
    SETCASE("op %ld: MPI_Comm_dup", c->i);
    CK(MPI_Comm_dup(cm, &d));
    for (int p = 0; p < n; ++p) want[nw++] = p;
  }
  int dn = -1, dr = -1;
  CK(MPI_Comm_size(d, &dn));
  CK(MPI_Comm_rank(d, &dr));
  if (dn != nw || want[dr] != me) tfail("new communicator: size %d rank %d, expected size %d", dn, dr, nw);
  gb g;
  gb_new(&g, sizeof(int) * (size_t)nw);
  memcpy(g.ip, want, sizeof(int) * (size_t)nw);
  CK(MPI_Allgather(&tu_rank, 1, MPI_INT, g.p, 1, MPI_INT, d));
  gcheck(&g, "MPI_Allgather of world ranks");
  gb_free(&g);
  int v = me * 1000 + (int)(c->i % 1000), w = -1;
  MPI_Status s;
  CK(MPI_Sendrecv(&v, 1, MPI_INT, (dr + 1) % dn, 7, &w, 1, MPI_INT, (dr + dn - 1) % dn, 7, d, &s));
  if (w != want[(dr + dn - 1) % dn] * 1000 + (int)(c->i % 1000)) tfail("ring MPI_Sendrecv got %d", w);
  CK(MPI_Comm_free(&d));
  free(want);
}

/* 15%: the communicator shared by all threads, tag = thread */
static void op_shared(ctx *c) {
  int n = tu_size, me = tu_rank, to = (me + 1) % n, from = (me + n - 1) % n, t = c->t;
  int how = (int)(rnd(c) % 2);
  size_t sl = osize(c, 9, me, to), rl = osize(c, 9, from, me);
  SETCASE("op %ld: shared communicator, tag %d, %s", c->i, t, how ? "MPI_Isend + MPI_Recv(MPI_ANY_SOURCE)" : "MPI_Sendrecv");
  unsigned char *sb = (unsigned char *)tu_malloc(sl + 1);
  tu_pattern(sb, okey(c, 9, me, to), 0, sl);
  gb g;
  gb_new(&g, rl + 8);
  tu_pattern(g.ip, okey(c, 9, from, me), 0, rl);
  MPI_Status s;
  if (how) {
    MPI_Request q;
    CK(MPI_Isend(sb, (int)sl, MPI_BYTE, to, t, xcomm, &q));
    CK(MPI_Recv(g.p, (int)rl + 8, MPI_BYTE, MPI_ANY_SOURCE, t, xcomm, &s));
    CK(MPI_Wait(&q, MPI_STATUS_IGNORE));
  } else {
    CK(MPI_Sendrecv(sb, (int)sl, MPI_BYTE, to, t, g.p, (int)rl + 8, MPI_BYTE, from, t, xcomm, &s));
  }
  check_status(&s, from, t, rl, "receive");
  gcheck(&g, "receive buffer");
  gb_free(&g);
  free(sb);
}

static void soak_thread(int t) {
  ctx c = {t, 0, tu_mix(seed * 0x2545f4914f6cdd1dull + (uint64_t)t + 1)};
  MPI_Comm cm = tcomm[t];
  if (tu_rank % 2) nap_us(100L * (nthreads - t));
  for (c.i = 0; c.i < ops_per_thread; ++c.i) {
    int w = (int)(rnd(&c) % 100), kind;
    if (w < 25) kind = 0, op_exchange(&c, cm);
    else if (w < 35) kind = 1, op_anysource(&c, cm);
    else if (w < 65) kind = 2, op_coll(&c, cm);
    else if (w < 80) kind = 3, op_types(&c, cm);
    else if (w < 85) kind = 4, op_comm(&c, cm);
    else kind = 5, op_shared(&c);
    atomic_fetch_add(&nops[kind], 1);
    if (tu_rank % 2 && (c.i + t) % 97 == 0) sched_yield();
  }
}

int main(int argc, char **argv) {
  thr_init(&argc, &argv, "threads_soak");
  nthreads = (int)tu_arg_long(argc, argv, "threads", 4);
  long ops = tu_arg_long(argc, argv, "ops", 100000);
  seed = (uint64_t)tu_arg_long(argc, argv, "seed", 1);
  if (nthreads < 1 || nthreads > 64) tfail("threads=%d: 1 to 64", nthreads);
  ops_per_thread = ops / ((long)tu_size * nthreads);
  if (ops_per_thread < 1) ops_per_thread = 1;
  static char ctxt[64];
  snprintf(ctxt, sizeof ctxt, "seed=%llu", (unsigned long long)seed);
  tu_context = ctxt;
  tcomm = (MPI_Comm *)tu_malloc(sizeof(MPI_Comm) * nthreads);
  for (int t = 0; t < nthreads; ++t) {
    CK(MPI_Comm_dup(MPI_COMM_WORLD, &tcomm[t]));
    CK(MPI_Comm_set_errhandler(tcomm[t], MPI_ERRORS_RETURN));
  }
  CK(MPI_Comm_dup(MPI_COMM_WORLD, &xcomm));
  CK(MPI_Comm_set_errhandler(xcomm, MPI_ERRORS_RETURN));
  double t0 = MPI_Wtime();
  run_threads(soak_thread);
  double el = MPI_Wtime() - t0;
  SETCASE("after the soak");
  CK(MPI_Barrier(MPI_COMM_WORLD));
  for (int t = 0; t <= nthreads; ++t) {
    MPI_Comm *cm = t < nthreads ? &tcomm[t] : &xcomm;
    int f = 1;
    CK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, *cm, &f, MPI_STATUS_IGNORE));
    if (f) tfail("a message was left over on %s %d", t < nthreads ? "thread communicator" : "the shared communicator", t);
    CK(MPI_Comm_free(cm));
  }
  free(tcomm);
  long long mine = 0, all = 0;
  for (int k = 0; k < 6; ++k) mine += atomic_load(&nops[k]);
  CK(MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  if (mine != ops_per_thread * nthreads) tfail("ran %lld operations, expected %ld", mine, ops_per_thread * nthreads);
  tu_ncases = atomic_load(&nchecks);
  char extra[240];
  snprintf(extra, sizeof extra,
           "threads=%d seed=%llu operations=%lld (this rank: exchange %lld anysource %lld coll %lld types %lld comm %lld "
           "shared %lld) in %.1fs",
           nthreads, (unsigned long long)seed, all, (long long)nops[0], (long long)nops[1], (long long)nops[2],
           (long long)nops[3], (long long)nops[4], (long long)nops[5], el);
  return tu_finish(extra);
}
