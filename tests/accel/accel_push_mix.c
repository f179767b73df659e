/* accel_push_mix: single-copy blocks from private and shared-heap memory in
 * one call.  Even ranks send from malloc'd buffers large enough to come from
 * the shared malloc heap; odd ranks from static arrays, which are private
 * memory.  Where process_vm_readv is judged slow (SHMCOLL_CMA_SLOW_FACTOR=1)
 * the odd ranks send their blocks through the segment and the even ranks'
 * are still read out of their heaps, so every call mixes the two ways; with
 * the factor at 0 the odd ranks' blocks are read with process_vm_readv.
 * Checked, byte for byte, with guard bytes around every receive area:
 *  - MPI_Alltoall of 48 KiB + 24 bytes per block (96 KiB + 24 where the
 *    processes outnumber the CPUs: sizes below);
 *  - MPI_Allgather of the same;
 *  - MPI_Bcast of 40 KiB + 5 bytes (300 KiB + 5) from every root in turn (a
 *    private and a heap root), the root's buffer unchanged;
 *  - MPI_Reduce (MPI_SUM of unsigned ints, the alltoall's block) to every root, in place at the
 *    root every other time, a non-root's receive buffer untouched;
 *  - MPI_Alltoallv with empty, small (below the single-copy bound), large,
 *    and larger blocks (96 KiB + 8, 160 KiB + 8) mixed in one call;
 * each repeated with the send data rewritten between calls.
 *
 *   accel_push_mix [iters=N]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXR 8
/* Block sizes, by whether the processes outnumber the CPUs (crowded): every
 * one at least the accelerator's single-copy bound there (8 KiB where every
 * process has a CPU, else 64 KiB, 256 KiB for bcast); BLK at most 64 KiB
 * where not crowded, where private blocks above 64 KiB (BIG) are still read
 * with process_vm_readv however slow (crowded: they go through the segment) */
static long BLK, BIG, BC;
#define BIG_MAX (160 * 1024 + 8)
#define BC_MAX (300 * 1024 + 5)
#define G 64

static int me, n;
/* the odd ranks' send memory: in the program's data segment, never in a heap */
static unsigned char priv_send[MAXR * (BIG_MAX + 256) + 2 * G];
static unsigned char priv_bcast[BC_MAX + 2 * G];

static void fail(const char *what, int it, long at) {
  fprintf(stderr, "accel_push_mix: rank %d: %s, iteration %d, byte %ld\n", me, what, it, at);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int from, int to, long k, int it) {
  unsigned x = (unsigned)from * 2654435761u ^ (unsigned)to * 40503u ^ (unsigned)k * 2246822519u ^ (unsigned)it * 97u;
  x ^= x >> 15;
  return (unsigned char)(x ^ (x >> 8));
}

static unsigned word(int from, int root, long k, int it) {
  return (unsigned)pat(from, root, k, it + 3) * 0x01010101u ^ (unsigned)from * 2654435761u ^ (unsigned)k;
}

/* bytes rank i sends rank j in the alltoallv: empty, small, large or larger than kPushMax */
static int vcount(int i, int j) {
  switch ((3 * i + j) % 4) { /* (every case between other ranks from 3 ranks on but 0, from 4 on) */
    case 0: return 0;
    case 1: return 100 + i + j;
    case 2: return (int)BLK + 8 * i + j;
    default: return (int)BIG - 8 * i - j;
  }
}

static void guards_set(unsigned char *p, long len) {
  memset(p, 0xA5, G);
  memset(p + G + len, 0x5A, G);
}
static void guards_check(const unsigned char *p, long len, int it, const char *what) {
  for (long k = 0; k < G; ++k)
    if (p[k] != 0xA5 || p[G + len + k] != 0x5A) fail(what, it, k);
}

int main(int argc, char **argv) {
  int iters = 4;
  for (int a = 1; a < argc; ++a)
    if (strncmp(argv[a], "iters=", 6) == 0) iters = atoi(argv[a] + 6);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n > MAXR) {
    if (me == 0) fprintf(stderr, "accel_push_mix: at most %d ranks\n", MAXR);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int crowded = sysconf(_SC_NPROCESSORS_ONLN) < n;
  BLK = crowded ? 96 * 1024 + 24 : 48 * 1024 + 24;
  BIG = crowded ? BIG_MAX : 96 * 1024 + 8;
  BC = crowded ? BC_MAX : 40 * 1024 + 5;
  const long sbytes = (long)n * (BIG + 256) + 2 * G;
  /* even ranks: at least 1 MiB, so the library's malloc serves it from the shared heap */
  unsigned char *heap_send = malloc(sbytes > (1 << 20) ? sbytes : (1 << 20));
  unsigned char *heap_bcast = malloc(1 << 20);
  unsigned char *sbase = (me % 2) ? priv_send : heap_send;
  unsigned char *bbase = (me % 2) ? priv_bcast : heap_bcast;
  unsigned char *rbuf = malloc(sbytes);
  unsigned char *rb = malloc(BC + 2 * G);
  if (!heap_send || !heap_bcast || !rbuf || !rb) fail("out of memory", 0, 0);
  unsigned char *s = sbase + G, *r = rbuf + G;

  for (int it = 0; it < iters; ++it) {
    /* alltoall */
    for (int j = 0; j < n; ++j)
      for (long k = 0; k < BLK; ++k) s[(long)j * BLK + k] = pat(me, j, k, it);
    guards_set(rbuf, (long)n * BLK);
    MPI_Alltoall(s, BLK, MPI_BYTE, r, BLK, MPI_BYTE, MPI_COMM_WORLD);
    for (int j = 0; j < n; ++j)
      for (long k = 0; k < BLK; ++k)
        if (r[(long)j * BLK + k] != pat(j, me, k, it)) fail("alltoall block", it, (long)j * BLK + k);
    guards_check(rbuf, (long)n * BLK, it, "alltoall guard");

    /* allgather: my block is pat(me, 0, k, it + 1) */
    for (long k = 0; k < BLK; ++k) s[k] = pat(me, 0, k, it + 1);
    guards_set(rbuf, (long)n * BLK);
    MPI_Allgather(s, BLK, MPI_BYTE, r, BLK, MPI_BYTE, MPI_COMM_WORLD);
    for (int j = 0; j < n; ++j)
      for (long k = 0; k < BLK; ++k)
        if (r[(long)j * BLK + k] != pat(j, 0, k, it + 1)) fail("allgather block", it, (long)j * BLK + k);
    guards_check(rbuf, (long)n * BLK, it, "allgather guard");

    /* bcast from every root: the root's own buffer (private or heap), the others' a heap one */
    for (int root = 0; root < n; ++root) {
      unsigned char *base = me == root ? bbase : rb;
      guards_set(base, BC);
      for (long k = 0; k < BC; ++k) base[G + k] = me == root ? pat(root, 7, k, it) : 0;
      MPI_Bcast(base + G, BC, MPI_BYTE, root, MPI_COMM_WORLD);
      for (long k = 0; k < BC; ++k)
        if (base[G + k] != pat(root, 7, k, it)) fail(me == root ? "bcast root's buffer changed" : "bcast", it, k);
      guards_check(base, BC, it, "bcast guard");
    }

    /* reduce: my words are pat-derived (every byte of each varies), the root's result their sum */
    const long ni = BLK / 4;
    unsigned *si = (unsigned *)s, *ri = (unsigned *)r;
    for (int root = 0; root < n; ++root) {
      const int in_place = me == root && (it + root) % 2;
      for (long k = 0; k < ni; ++k) si[k] = word(me, root, k, it);
      memset(rbuf, 0xC3, (size_t)(ni * 4 + 2 * G));
      guards_set(rbuf, ni * 4);
      if (in_place) memcpy(ri, si, (size_t)ni * 4);
      MPI_Reduce(in_place ? MPI_IN_PLACE : si, ri, (int)ni, MPI_UNSIGNED, MPI_SUM, root, MPI_COMM_WORLD);
      for (long k = 0; k < ni; ++k) {
        if (me != root) {
          if (((unsigned char *)ri)[4 * k] != 0xC3) fail("reduce wrote a non-root's receive buffer", it, 4 * k);
          continue;
        }
        unsigned want = 0;
        for (int j = 0; j < n; ++j) want += word(j, root, k, it);
        if (ri[k] != want) fail("reduce result", it, 4 * k);
      }
      guards_check(rbuf, ni * 4, it, "reduce guard");
      for (long k = 0; k < ni && !in_place; ++k) /* the send buffer is the caller's */
        if (si[k] != word(me, root, k, it)) fail("reduce changed the send buffer", it, 4 * k);
    }

    /* alltoallv: blocks packed in rank order, 256 bytes apart */
    int sc[MAXR], sd[MAXR], rc[MAXR], rd[MAXR];
    long so = 0, ro = 0;
    for (int j = 0; j < n; ++j) {
      sc[j] = vcount(me, j), sd[j] = (int)so, so += sc[j] + 256;
      rc[j] = vcount(j, me), rd[j] = (int)ro, ro += rc[j] + 256;
    }
    for (int j = 0; j < n; ++j)
      for (long k = 0; k < sc[j]; ++k) s[sd[j] + k] = pat(me, j, k, it + 2);
    memset(rbuf, 0xC3, (size_t)(ro + 2 * G));
    guards_set(rbuf, ro);
    MPI_Alltoallv(s, sc, sd, MPI_BYTE, r, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    for (int j = 0; j < n; ++j) {
      for (long k = 0; k < rc[j]; ++k)
        if (r[rd[j] + k] != pat(j, me, k, it + 2)) fail("alltoallv block", it, rd[j] + k);
      for (long k = 0; k < 256; ++k) /* the gap after each block */
        if (r[rd[j] + rc[j] + k] != 0xC3) fail("alltoallv gap changed", it, rd[j] + rc[j] + k);
    }
    guards_check(rbuf, ro, it, "alltoallv guard");
  }
  free(heap_send), free(heap_bcast), free(rbuf), free(rb);
  MPI_Finalize();
  return 0;
}
