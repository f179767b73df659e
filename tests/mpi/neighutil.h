/*
 * neighutil.h -- process topologies as neighbor.c sees them: the topologies
 * it builds (Cartesian grids, an MPI_Graph_create graph, seeded random
 * distributed graphs), their neighbour lists as MPI reports them, and the
 * independent reference of which block of which sender lands in each
 * receive block of a neighbourhood collective.
 *
 * The reference: block j of a process's send buffer goes to its out-neighbour
 * j, block i of the receive buffer comes from in-neighbour i, with the lists
 * of MPI_Cart_shift (slot 2d: displacement -1 of dimension d, slot 2d+1:
 * displacement +1), MPI_Graph_neighbors (in = out) and
 * MPI_Dist_graph_neighbors.  When a pair of processes is connected several
 * times, for graph and distributed-graph topologies the k-th occurrence of
 * the receiver in the sender's out-list matches the k-th occurrence of the
 * sender in the receiver's in-list; for Cartesian topologies block s of the
 * sender lands in block s^1 of the receiver (MPI-4.0/4.1 errata,
 * mpi-forum/mpi-issues#153), also when a process is its own neighbour
 * (periodic dimensions of size 1 and 2).  The out-lists of all members are
 * gathered so that every rank can compute this for its in-slots.
 */
#ifndef SHMCOLL_TESTS_MPI_NEIGHUTIL_H
#define SHMCOLL_TESTS_MPI_NEIGHUTIL_H

#include "testutil.h"

typedef struct nt_topo {
  MPI_Comm comm; /* MPI_COMM_NULL: this rank is not a member */
  int kind;      /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH (from MPI_Topo_test) */
  char name[160];
  int n, me, dupcart; /* dupcart: a Cartesian grid where a pair is connected twice */
  int multi;          /* some pair of members is connected more than once (any topology, any rank) */
  int indeg, outdeg;
  int *in, *out; /* neighbour lists as MPI reports them */
  int *from;     /* from[i]: the out-slot of in[i] whose block lands in in-slot i (-1: MPI_PROC_NULL) */
  int *kth;      /* the same by k-th occurrence in list order (= from except on dupcart grids); used only to
                  * describe a library defect in neighbor.c's survey mode */
} nt_topo;

/* Deterministic generator, the same sequence on every rank. */
static inline uint64_t nt_rand(uint64_t *s) { return tu_mix(++*s); }

/* Reads the neighbour lists from MPI, gathers all out-lists and computes
 * from[] (see the header comment). */
TU_UNUSED static void nt_query(nt_topo *t) {
  t->in = t->out = t->from = t->kth = NULL;
  t->indeg = t->outdeg = 0;
  if (t->comm == MPI_COMM_NULL) return;
  TU_CALL(MPI_Comm_set_errhandler(t->comm, MPI_ERRORS_RETURN));
  TU_CALL(MPI_Comm_size(t->comm, &t->n));
  TU_CALL(MPI_Comm_rank(t->comm, &t->me));
  TU_CALL(MPI_Topo_test(t->comm, &t->kind));
  if (t->kind == MPI_CART) {
    int nd = 0;
    TU_CALL(MPI_Cartdim_get(t->comm, &nd));
    t->indeg = t->outdeg = 2 * nd;
    t->in = (int *)tu_malloc(sizeof(int) * 2 * nd), t->out = (int *)tu_malloc(sizeof(int) * 2 * nd);
    for (int d = 0; d < nd; ++d) {
      int src, dst;
      TU_CALL(MPI_Cart_shift(t->comm, d, 1, &src, &dst));
      t->in[2 * d] = t->out[2 * d] = src;
      t->in[2 * d + 1] = t->out[2 * d + 1] = dst;
    }
  } else if (t->kind == MPI_GRAPH) {
    TU_CALL(MPI_Graph_neighbors_count(t->comm, t->me, &t->indeg));
    t->outdeg = t->indeg;
    t->in = (int *)tu_malloc(sizeof(int) * t->indeg), t->out = (int *)tu_malloc(sizeof(int) * t->indeg);
    TU_CALL(MPI_Graph_neighbors(t->comm, t->me, t->indeg, t->in));
    memcpy(t->out, t->in, sizeof(int) * t->indeg);
  } else if (t->kind == MPI_DIST_GRAPH) {
    int w = 0;
    TU_CALL(MPI_Dist_graph_neighbors_count(t->comm, &t->indeg, &t->outdeg, &w));
    t->in = (int *)tu_malloc(sizeof(int) * t->indeg), t->out = (int *)tu_malloc(sizeof(int) * t->outdeg);
    int *iw = (int *)tu_malloc(sizeof(int) * (t->indeg + 1)), *ow = (int *)tu_malloc(sizeof(int) * (t->outdeg + 1));
    TU_CALL(MPI_Dist_graph_neighbors(t->comm, t->indeg, t->in, w ? iw : MPI_UNWEIGHTED, t->outdeg, t->out,
                                     w ? ow : MPI_UNWEIGHTED));
    free(iw), free(ow);
  } else {
    tu_fail("%s: MPI_Topo_test gives %d", t->name, t->kind);
  }
  /* every member's out-list */
  int n = t->n;
  int *deg = (int *)tu_malloc(sizeof(int) * n), *dis = (int *)tu_malloc(sizeof(int) * (n + 1));
  TU_CALL(MPI_Allgather(&t->outdeg, 1, MPI_INT, deg, 1, MPI_INT, t->comm));
  dis[0] = 0;
  for (int p = 0; p < n; ++p) dis[p + 1] = dis[p] + deg[p];
  int *all = (int *)tu_malloc(sizeof(int) * (dis[n] + 1));
  TU_CALL(MPI_Allgatherv(t->out, t->outdeg, MPI_INT, all, deg, dis, MPI_INT, t->comm));
  t->from = (int *)tu_malloc(sizeof(int) * (t->indeg + 1));
  t->kth = (int *)tu_malloc(sizeof(int) * (t->indeg + 1));
  t->dupcart = 0;
  for (int i = 0; i < t->indeg; ++i) {
    int s = t->in[i];
    t->from[i] = t->kth[i] = -1;
    if (s == MPI_PROC_NULL) continue;
    if (s < 0 || s >= n) tu_fail("%s: in-neighbour %d is %d", t->name, i, s);
    int k = 0;
    for (int q = 0; q < i; ++q) k += t->in[q] == s;
    for (int j = 0; j < deg[s]; ++j)
      if (all[dis[s] + j] == t->me && k-- == 0) {
        t->kth[i] = j;
        break;
      }
    if (t->kth[i] < 0) tu_fail("%s: in-slot %d names %d, whose out-list names %d fewer times", t->name, i, s, t->me);
    if (t->kind == MPI_CART) {
      t->from[i] = i ^ 1;
      if (all[dis[s] + (i ^ 1)] != t->me)
        tu_fail("%s: rank %d is in-neighbour %d of %d but its out-neighbour %d is %d", t->name, s, i, t->me, i ^ 1,
                all[dis[s] + (i ^ 1)]);
      for (int k = 0; k < t->indeg; ++k) t->dupcart |= k != i && t->in[k] == s;
      continue;
    }
    t->from[i] = t->kth[i];
  }
  int mine = 0;
  for (int i = 0; i < t->indeg; ++i)
    for (int k = 0; k < i; ++k) mine |= t->in[i] != MPI_PROC_NULL && t->in[k] == t->in[i];
  for (int i = 0; i < t->outdeg; ++i)
    for (int k = 0; k < i; ++k) mine |= t->out[i] != MPI_PROC_NULL && t->out[k] == t->out[i];
  int *flags = (int *)tu_malloc(sizeof(int) * n);
  TU_CALL(MPI_Allgather(&mine, 1, MPI_INT, flags, 1, MPI_INT, t->comm));
  t->multi = 0;
  for (int p = 0; p < n; ++p) t->multi |= flags[p];
  free(flags), free(deg), free(dis), free(all);
}

TU_UNUSED static void nt_free(nt_topo *t) {
  if (t->comm != MPI_COMM_NULL) TU_CALL(MPI_Comm_free(&t->comm));
  free(t->in), free(t->out), free(t->from), free(t->kth);
  t->in = t->out = t->from = t->kth = NULL;
}

/* A Cartesian grid of MPI_COMM_WORLD (reorder 0); ranks beyond it get MPI_COMM_NULL. */
TU_UNUSED static void nt_cart(nt_topo *t, int nd, const int *dims, const int *periods) {
  int len = snprintf(t->name, sizeof t->name, "cart");
  for (int d = 0; d < nd; ++d)
    len += snprintf(t->name + len, sizeof t->name - len, "%c%d%s", d ? 'x' : ' ', dims[d], periods[d] ? "p" : "");
  TU_CALL(MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &t->comm));
  nt_query(t);
}

/* A symmetric graph on all ranks (MPI_Graph_create): a ring plus seeded chords. */
TU_UNUSED static void nt_graph(nt_topo *t, int n, uint64_t seed) {
  snprintf(t->name, sizeof t->name, "graph seed=%llu", (unsigned long long)seed);
  char *adj = (char *)tu_malloc((size_t)n * n);
  memset(adj, 0, (size_t)n * n);
  for (int p = 0; p < n && n > 2; ++p) adj[p * n + (p + 1) % n] = adj[(p + 1) % n * n + p] = 1;
  for (int e = 0; e < n; ++e) {
    int a = (int)(nt_rand(&seed) % n), b = (int)(nt_rand(&seed) % n);
    if (a != b) adj[a * n + b] = adj[b * n + a] = 1;
  }
  int *index = (int *)tu_malloc(sizeof(int) * n), *edges = (int *)tu_malloc(sizeof(int) * n * n + 1), ne = 0;
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) /* a rotated order, not sorted */
      if (adj[p * n + (q + p) % n]) edges[ne++] = (q + p) % n;
    index[p] = ne;
  }
  TU_CALL(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &t->comm));
  free(adj), free(index), free(edges);
  nt_query(t);
}

/* A seeded random directed multigraph on n ranks: repeated edges, self loops,
 * one rank without edges (n >= 3); edge e is (src[e], dst[e], wgt[e]). */
typedef struct nt_edges {
  int m, *src, *dst, *wgt;
} nt_edges;
TU_UNUSED static void nt_edges_make(nt_edges *g, int n, uint64_t seed) {
  int cap = 4 * n + 4, iso = n >= 3 ? (int)(seed % n) : -1;
  g->src = (int *)tu_malloc(sizeof(int) * cap), g->dst = (int *)tu_malloc(sizeof(int) * cap);
  g->wgt = (int *)tu_malloc(sizeof(int) * cap);
  g->m = 0;
  for (int e = 0; e < cap; ++e) {
    int s = (int)(nt_rand(&seed) % n), d = (int)(nt_rand(&seed) % n);
    if (e % 7 == 3) d = s;                                              /* self loop */
    if (e % 5 == 4 && g->m) s = g->src[g->m - 1], d = g->dst[g->m - 1]; /* repeated edge */
    if (s == iso || d == iso) continue;
    g->src[g->m] = s, g->dst[g->m] = d, g->wgt[g->m] = 1 + (int)(nt_rand(&seed) % 1000);
    ++g->m;
  }
}
TU_UNUSED static void nt_edges_free(nt_edges *g) { free(g->src), free(g->dst), free(g->wgt); }

/* The same graph made with MPI_Dist_graph_create_adjacent (each rank lists
 * its own edges, in a seeded shuffled order) or with MPI_Dist_graph_create
 * (edge e named by rank (e * 7 + seed) % n, grouped by source). */
TU_UNUSED static void nt_dist(nt_topo *t, int n, int me, uint64_t seed, int adjacent, int weighted) {
  snprintf(t->name, sizeof t->name, "dist_graph%s seed=%llu %s", adjacent ? "_adjacent" : "", (unsigned long long)seed,
           weighted ? "weighted" : "unweighted");
  nt_edges g;
  nt_edges_make(&g, n, seed);
  int *a = (int *)tu_malloc(sizeof(int) * (g.m + 1)), *aw = (int *)tu_malloc(sizeof(int) * (g.m + 1));
  int *b = (int *)tu_malloc(sizeof(int) * (g.m + 1)), *bw = (int *)tu_malloc(sizeof(int) * (g.m + 1));
  int na = 0, nb = 0;
  if (adjacent) {
    for (int e = 0; e < g.m; ++e) {
      if (g.dst[e] == me) a[na] = g.src[e], aw[na++] = g.wgt[e];
      if (g.src[e] == me) b[nb] = g.dst[e], bw[nb++] = g.wgt[e];
    }
    uint64_t s2 = seed * 31 + (uint64_t)me;
    for (int i = na - 1; i > 0; --i) { /* shuffle (list order defines the matching of repeated edges) */
      int j = (int)(nt_rand(&s2) % (uint64_t)(i + 1)), x = a[i], y = aw[i];
      a[i] = a[j], aw[i] = aw[j], a[j] = x, aw[j] = y;
    }
    TU_CALL(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, na, a, weighted ? aw : MPI_UNWEIGHTED, nb, b,
                                           weighted ? bw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &t->comm));
  } else {
    int *deg = (int *)tu_malloc(sizeof(int) * (n + 1));
    for (int s = 0; s < n; ++s) {
      int k = 0;
      for (int e = 0; e < g.m; ++e)
        if (g.src[e] == s && (int)((e * 7 + seed) % n) == me) b[nb] = g.dst[e], bw[nb++] = g.wgt[e], ++k;
      if (k) a[na] = s, deg[na++] = k;
    }
    TU_CALL(MPI_Dist_graph_create(MPI_COMM_WORLD, na, a, deg, b, weighted ? bw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                  &t->comm));
    free(deg);
  }
  free(a), free(aw), free(b), free(bw);
  nt_edges_free(&g);
  nt_query(t);
}

#endif /* SHMCOLL_TESTS_MPI_NEIGHUTIL_H */
