/*
 * shmcoll-bench's neighbourhood collectives (neighbor.h): the two topologies,
 * one call of each operation, and its validation.
 *
 * The Cartesian grid: MPI_Dims_create(N, 2) chooses the dimensions (2 x 2 at
 * 4 ranks, 4 x 2 at 8, 2 x 1 at 2), both periodic.  The neighbours of a rank
 * are, per dimension d, MPI_Cart_shift(d, 1)'s source (-1) and destination
 * (+1), blocks 2d and 2d + 1 of the send and receive buffers.  MPI-4.0 (and
 * MPI-3.1 as erratum, mpi-forum/mpi-issues#153) defines where a block lands:
 * the block a rank sends to its +1 neighbour arrives in that neighbour's -1
 * block and vice versa, so sender's block b lands in the receiver's block
 * b ^ 1.  This also holds in a dimension of size 1 or 2, where both
 * neighbours are one rank (itself at size 1), and the check expects it.
 *
 * The ring: MPI_Cart_create with one periodic dimension of N, neighbours
 * MPI_Cart_shift(0, 1)'s source and destination, blocks 0 and 1, the same
 * b ^ 1 rule (at N = 2 both neighbours are the other rank: the extent-2 case
 * with two neighbours, for the bandwidth target at N = 2).
 *
 * The random graph: a generator seeded with kGraphSeed (the same on every
 * rank, so the ranks agree without communicating) draws a permutation P of
 * the N ranks and k = min(4, N - 1) distinct offsets o_0 .. o_k-1 from
 * 1 .. N - 1.  Rank r's out-neighbour j is P^-1[(P[r] + o_j) mod N] and its
 * in-neighbour j is P^-1[(P[r] - o_j) mod N]: a circulant graph under a
 * random relabelling of the ranks.  So every rank has k out- and k
 * in-neighbours, never itself and never one twice, and rank r's in-neighbour
 * j has r as its out-neighbour j: block j travels from block j of the sender
 * to block j of the receiver.  Each rank passes its own lists to
 * MPI_Dist_graph_create_adjacent (unweighted, no info, no reordering).
 */
#include "neighbor.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEGREE 4

static const uint64_t kGraphSeed = 0x5eed2024c0ffee01ull;

typedef struct {
  MPI_Comm comm;
  int deg;              /* in-degree = out-degree */
  int srcs[MAX_DEGREE]; /* in-neighbours, in the order of the receive blocks */
  int dsts[MAX_DEGREE]; /* out-neighbours, in the order of the send blocks */
  char desc[160];       /* for nb_print */
} Topo;

static Topo g_topos[NB_NTOPO];
static int g_me;

/* splitmix64: small, and the same sequence everywhere. */
static uint64_t next_random(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void shuffle(int *a, int n, uint64_t *state) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(next_random(state) % (uint64_t)(i + 1));
    int t = a[i];
    a[i] = a[j];
    a[j] = t;
  }
}

static void make_cart(Topo *t, int n, int ndims) {
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(n, ndims, dims);
  MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &t->comm);
  t->deg = 2 * ndims;
  for (int d = 0; d < ndims; d++) MPI_Cart_shift(t->comm, d, 1, &t->srcs[2 * d], &t->srcs[2 * d + 1]);
  memcpy(t->dsts, t->srcs, sizeof t->dsts); /* a Cartesian rank sends to whom it receives from */
  if (ndims == 1)
    snprintf(t->desc, sizeof t->desc, "periodic ring of %d, 2 neighbours per rank (rank %d: %d %d)", dims[0], g_me,
             t->srcs[0], t->srcs[1]);
  else
    snprintf(t->desc, sizeof t->desc, "%d x %d periodic grid, 4 neighbours per rank (rank %d: %d %d %d %d)", dims[0],
             dims[1], g_me, t->srcs[0], t->srcs[1], t->srcs[2], t->srcs[3]);
}

static void make_graph(Topo *t, int n) {
  int k = n - 1 < MAX_DEGREE ? n - 1 : MAX_DEGREE;
  int *perm = malloc(sizeof(int) * 3 * (size_t)n), *inv = perm + n, *offs = perm + 2 * n;
  uint64_t state = kGraphSeed;
  for (int i = 0; i < n; i++) perm[i] = i, offs[i] = i + 1;
  shuffle(perm, n, &state);
  shuffle(offs, n - 1, &state); /* 1 .. n-1; the first k are used */
  for (int i = 0; i < n; i++) inv[perm[i]] = i;
  t->deg = k;
  for (int j = 0; j < k; j++) {
    t->dsts[j] = inv[(perm[g_me] + offs[j]) % n];
    t->srcs[j] = inv[(perm[g_me] + n - offs[j]) % n];
  }
  free(perm);
/* Open MPI's MPI_UNWEIGHTED is (int *)2 and its prototype declares the weights
 * as arrays, which GCC 11 and later take for an array of size 0. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, k, t->srcs, MPI_UNWEIGHTED, k, t->dsts, MPI_UNWEIGHTED, MPI_INFO_NULL,
                                 0, &t->comm);
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11
#pragma GCC diagnostic pop
#endif
  int len =
      snprintf(t->desc, sizeof t->desc, "random, %d out- and %d in-neighbours per rank, seed 0x%llx (rank %d sends to",
               k, k, (unsigned long long)kGraphSeed, g_me);
  for (int j = 0; j < k; j++) len += snprintf(t->desc + len, sizeof t->desc - (size_t)len, " %d", t->dsts[j]);
  snprintf(t->desc + len, sizeof t->desc - (size_t)len, ")");
}

void nb_setup(void) {
  int n;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  make_cart(&g_topos[NB_CART], n, 2);
  make_graph(&g_topos[NB_GRAPH], n);
  make_cart(&g_topos[NB_RING], n, 1);
}

void nb_print(void) {
  if (g_me != 0) return;
  printf("# cart_*: %s\n# graph_*: %s\n# ring_*: %s\n", g_topos[NB_CART].desc, g_topos[NB_GRAPH].desc,
         g_topos[NB_RING].desc);
  fflush(stdout);
}

void nb_free(void) {
  for (int i = 0; i < NB_NTOPO; i++) MPI_Comm_free(&g_topos[i].comm);
}

void nb_volumes(int topo, int gather, size_t s, size_t *send, size_t *recv) {
  size_t deg = (size_t)g_topos[topo].deg;
  *send = gather ? s : deg * s;
  *recv = deg * s;
}

void nb_fill(int topo, int gather, size_t s, char *sb) {
  int blocks = gather ? 1 : g_topos[topo].deg;
  for (int b = 0; b < blocks; b++)
    for (size_t o = 0; o < s; o = next_off(o, s)) sb[(size_t)b * s + o] = (char)pattern(g_me, b, o);
}

/* What arrives in receive block j: the block in-neighbour j sent towards this
 * rank (the one block of an allgather; block j ^ 1 on the grids, j in the
 * graph, see the top of the file). */
static unsigned char expected(int topo, int gather, int j, size_t off) {
  int from = g_topos[topo].srcs[j];
  int block = gather ? 0 : topo == NB_GRAPH ? j : j ^ 1;
  return pattern(from, block, off);
}

void nb_poison(int topo, int gather, size_t s, char *rb) {
  for (int j = 0; j < g_topos[topo].deg; j++)
    for (size_t o = 0; o < s; o = next_off(o, s)) rb[(size_t)j * s + o] = (char)~expected(topo, gather, j, o);
}

long nb_check(int topo, int gather, size_t s, const char *name, const char *rb) {
  long bad = 0;
  for (int j = 0; j < g_topos[topo].deg; j++)
    for (size_t o = 0; o < s; o = next_off(o, s)) {
      unsigned char got = (unsigned char)rb[(size_t)j * s + o], want = expected(topo, gather, j, o);
      if (got != want && bad++ < 3)
        fprintf(stderr,
                "shmcoll-bench: %s %zu B: rank %d got 0x%02x, want 0x%02x, in block %d (from rank %d) offset %zu\n",
                name, s, g_me, got, want, j, g_topos[topo].srcs[j], o);
    }
  return bad;
}

void nb_run(int topo, int gather, int s, const char *sb, char *rb) {
  if (gather)
    MPI_Neighbor_allgather(sb, s, MPI_BYTE, rb, s, MPI_BYTE, g_topos[topo].comm);
  else
    MPI_Neighbor_alltoall(sb, s, MPI_BYTE, rb, s, MPI_BYTE, g_topos[topo].comm);
}
