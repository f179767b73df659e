/*
 * shmcoll-bench's neighbourhood collectives: MPI_Neighbor_alltoall and
 * MPI_Neighbor_allgather over three process topologies, made once at start-up
 * (neighbor.c says how):
 *   NB_CART   a 2-D periodic Cartesian grid, MPI_Dims_create(N, 2) x
 *             MPI_Cart_create, 4 neighbours (2 per dimension);
 *   NB_GRAPH  a seeded random graph from MPI_Dist_graph_create_adjacent in
 *             which every rank has k = min(4, N - 1) out- and k in-neighbours,
 *             no self-loops and no repeated edges;
 *   NB_RING   a 1-D periodic Cartesian grid of N ranks, 2 neighbours (-1 and
 *             +1): at N = 2 the other rank is both, at N = 1 the rank itself.
 * A block is `s` bytes: alltoall sends one block to each out-neighbour and
 * receives one from each in-neighbour; allgather sends its one block to every
 * out-neighbour.  Both topologies keep the world ranks (reorder = 0).
 */
#ifndef SHMCOLL_BENCH_NEIGHBOR_H
#define SHMCOLL_BENCH_NEIGHBOR_H

#include <stddef.h>
#include <stdint.h>

enum { NB_CART, NB_GRAPH, NB_RING, NB_NTOPO };

/* Makes the topologies; collective over MPI_COMM_WORLD. */
void nb_setup(void);
/* Rank 0 prints a '#' line describing each topology. */
void nb_print(void);
void nb_free(void);
/* Bytes this rank sends and receives per call (the same on every rank: all
 * ranks of one topology have the same degrees). */
void nb_volumes(int topo, int gather, size_t s, size_t *send, size_t *recv);
void nb_fill(int topo, int gather, size_t s, char *sb);
void nb_poison(int topo, int gather, size_t s, char *rb);
/* The number of wrong bytes at the checked offsets; the first few are
 * printed to stderr under `name`. */
long nb_check(int topo, int gather, size_t s, const char *name, const char *rb);
void nb_run(int topo, int gather, int s, const char *sb, char *rb);

/* ---- the validation pattern, shared with shmcoll_bench.c ------------------ */
/* The byte at offset `off` of the block `src` sends to `dst` (a rank, or for
 * the neighbourhood collectives the sender's block index). */
static inline unsigned char pattern(int src, int dst, size_t off) {
  uint32_t x = (uint32_t)off * 2654435761u;
  return (unsigned char)((x >> 24) ^ (x >> 11) ^ (unsigned)(src * 37) ^ (unsigned)(dst * 101) ^ 0x5a);
}
/* Offsets checked in a block of `len` bytes: all of it up to 64 KiB, else the
 * first and last 64 bytes and every 4093rd byte between. */
static inline size_t next_off(size_t off, size_t len) {
  if (len <= 64 * 1024 || off < 64 || off + 64 >= len) return off + 1;
  size_t nx = off + 4093;
  return nx + 64 > len ? len - 64 : nx;
}

#endif
