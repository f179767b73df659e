/*
 * run_ahead.c -- small rooted collectives back to back, the senders running
 * ahead of their readers: MPI_Bcast, MPI_Gather, MPI_Gatherv, MPI_Reduce,
 * MPI_Scatter, MPI_Scatterv.
 *
 * In shmcoll a rank that writes one small lane in a rooted collective (the
 * root of a broadcast, every other rank of a gather or reduce; at most 4336
 * bytes, and at most SHMCOLL_INLINE_MAX, 4 KiB up to 2 ranks a core) writes
 * it into one of 64 lanes of its ring in turn, so it may return from up to 64
 * calls before its reader has read the first; a lane is reused once every
 * reader has finished the call that last used it.  The root of a scatter
 * splits the 68 lines of a ring lane among its readers (up to 68 of them: 34
 * lines each for 2 readers, 22 for 3, 17 for 4, 13 for 5, 8 for 8, 4 for
 * 16), when every block fits its piece (2160, 1392, 1072, 816, 496 or 216
 * bytes).  A larger block that still goes inline (up to 12 KiB in private
 * memory) goes into the next of 16 wide slots, taken in turn, and the ring
 * lane only names it; a scatter's root splits a wide slot among its readers
 * the same way (6192 bytes each for 2, 4144 for 3).  What that could break: a lane rewritten before a slow reader read it (it would get a
 * later call's bytes), a reader taking a lane of another communicator's call,
 * a block at the edge of the lane's room, a derived type packed into it, a
 * wake-up lost while a sender waits for room or a reader for its lane.  So
 * every call is checked byte for byte, guard bytes and gaps included, in:
 *
 *  1. runs of `iters` calls from one root, then from the next, cycling over
 *     the four operations and over sizes at the edges of the inline lane
 *     formats and the scatter's pieces (0, 1, 48, 49, 104, 105, 160, 161,
 *     216, 217, 272, 273, 440, 441, 496, 497, 1008, 1009, 2160, 2161, 4096,
 *     4336, 4337, 4144, 4145, 6192, 6193, 8192, 12288 and 12289 bytes), while
 *     readers fall behind now and then (one rank, a different one each time,
 *     sleeps); then from each root runs of 24 calls of one operation of
 *     5000-12288 bytes, the reading side sleeping at the third, so the
 *     writers reuse the wide slots (16) while it is behind; then broadcasts
 *     whose root's buffer is small and private while the readers' is a 256
 *     KiB allocation (in shmcoll's shared heap), 300 B to 12 KiB;
 *  2. three communicators (MPI_COMM_WORLD, a duplicate, a split in reverse
 *     order) in a random interleaving, random operations, roots and sizes,
 *     with an MPI_Allreduce between some calls;
 *  3. a vector type with holes as a broadcast's buffer (the holes must stay
 *     untouched);
 *  4. (shmcoll only) erroneous counts, broadcast, gather and scatter: one
 *     side sends 8 bytes where the other posts 40, 1200, 8000 or 100000, or
 *     40, 1200, 6000 or 8000 where it posts 8.
 *     Every rank returns; a reader gets MPI_ERR_COUNT (fewer bytes) or
 *     MPI_ERR_TRUNCATE (more), only the common bytes, and nothing else
 *     changes; then the communicator still works.
 *
 *   run_ahead [iters=N] [seed=S] [mixed]
 *
 * `mixed` sets SHMCOLL_RUN_AHEAD=0 on odd ranks before MPI_Init: senders with
 * the ring off meet readers with it on, and the other way round.  Parts 1-3
 * use the standard MPI API only.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

enum { GUARD = 64, MAXB = 100000 };

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static unsigned char *area; /* GUARD | MAXB | GUARD */
static unsigned char *want;

static unsigned char sentinel(size_t i) { return (unsigned char)(0xA5 ^ (i * 7)); }

static void fill_sentinel(void) {
  for (size_t i = 0; i < MAXB + 2 * GUARD; ++i) area[i] = sentinel(i);
}

/* Compares the whole area (guards included) with `want`. */
static void check_area(const char *what, long call) {
  for (size_t i = 0; i < MAXB + 2 * GUARD; ++i)
    if (area[i] != want[i]) {
      const long off = (long)i - GUARD;
      tu_fail("%s, call %ld: byte %ld of the buffer is 0x%02x, expected 0x%02x%s", what, call, off, area[i], want[i],
              off < 0 || off >= MAXB ? " (a guard byte)" : "");
    }
}

enum { OP_BCAST, OP_GATHER, OP_GATHERV, OP_REDUCE, OP_SCATTER, OP_SCATTERV, NOPS };
static const char *const opname[NOPS] = {"MPI_Bcast",  "MPI_Gather",  "MPI_Gatherv",
                                         "MPI_Reduce", "MPI_Scatter", "MPI_Scatterv"};

/* The int a rank contributes at index i of a reduction (small: no overflow). */
static int term(uint64_t key, int rank, int i) {
  return (int)(tu_mix(key + (uint64_t)rank * 1000003u + (uint64_t)i) % 100000u);
}

/* The v forms' layout at the root: rank r moves (bytes + 37 r) % 500 bytes,
 * placed in reverse rank order with 3-byte gaps.  Returns the extent. */
static int v_layout(int n, int bytes, int *counts, int *displs) {
  int pos = 3;
  for (int r = n - 1; r >= 0; --r) {
    counts[r] = (bytes + 37 * r) % 500;
    displs[r] = pos;
    pos += counts[r] + 3;
  }
  if (pos > MAXB) tu_fail("v layout too large");
  return pos;
}

/* One checked rooted collective on `comm`: `bytes` per rank (the v forms: a
 * count of each rank's own), root `root`. */
static void rooted(int op, MPI_Comm comm, int root, int bytes, uint64_t key, const char *what, long call) {
  int me, n;
  TU_CALL(MPI_Comm_rank(comm, &me));
  TU_CALL(MPI_Comm_size(comm, &n));
  fill_sentinel();
  memcpy(want, area, MAXB + 2 * GUARD);
  unsigned char *buf = area + GUARD;
  switch (op) {
    case OP_BCAST:
      tu_pattern(want + GUARD, key, 0, (size_t)bytes);
      if (me == root) tu_pattern(buf, key, 0, (size_t)bytes);
      TU_CALL(MPI_Bcast(buf, bytes, MPI_BYTE, root, comm));
      break;
    case OP_GATHER: {
      if (bytes * n > MAXB) bytes = MAXB / n;
      unsigned char *mine = (unsigned char *)tu_malloc((size_t)bytes);
      tu_pattern(mine, key + (uint64_t)me, 0, (size_t)bytes);
      if (me == root)
        for (int r = 0; r < n; ++r) tu_pattern(want + GUARD + (size_t)r * bytes, key + (uint64_t)r, 0, (size_t)bytes);
      TU_CALL(MPI_Gather(mine, bytes, MPI_BYTE, buf, bytes, MPI_BYTE, root, comm));
      free(mine);
      break;
    }
    case OP_GATHERV: {
      int *counts = (int *)tu_malloc(sizeof(int) * n), *displs = (int *)tu_malloc(sizeof(int) * n);
      v_layout(n, bytes, counts, displs);
      unsigned char *mine = (unsigned char *)tu_malloc((size_t)counts[me] + 1);
      tu_pattern(mine, key + (uint64_t)me, 0, (size_t)counts[me]);
      if (me == root)
        for (int r = 0; r < n; ++r) tu_pattern(want + GUARD + displs[r], key + (uint64_t)r, 0, (size_t)counts[r]);
      TU_CALL(MPI_Gatherv(mine, counts[me], MPI_BYTE, buf, counts, displs, MPI_BYTE, root, comm));
      free(mine);
      free(counts);
      free(displs);
      break;
    }
    case OP_SCATTER: {
      if (bytes * n > MAXB) bytes = MAXB / n;
      unsigned char *all = NULL;
      if (me == root) {
        all = (unsigned char *)tu_malloc((size_t)bytes * n + 1);
        for (int r = 0; r < n; ++r) tu_pattern(all + (size_t)r * bytes, key + (uint64_t)r, 0, (size_t)bytes);
      }
      tu_pattern(want + GUARD, key + (uint64_t)me, 0, (size_t)bytes);
      TU_CALL(MPI_Scatter(all, bytes, MPI_BYTE, buf, bytes, MPI_BYTE, root, comm));
      free(all);
      break;
    }
    case OP_SCATTERV: {
      int *counts = (int *)tu_malloc(sizeof(int) * n), *displs = (int *)tu_malloc(sizeof(int) * n);
      const int extent = v_layout(n, bytes, counts, displs);
      unsigned char *all = NULL;
      if (me == root) {
        all = (unsigned char *)tu_malloc((size_t)extent);
        memset(all, 0xEE, (size_t)extent);
        for (int r = 0; r < n; ++r) tu_pattern(all + displs[r], key + (uint64_t)r, 0, (size_t)counts[r]);
      }
      tu_pattern(want + GUARD, key + (uint64_t)me, 0, (size_t)counts[me]);
      TU_CALL(MPI_Scatterv(all, counts, displs, MPI_BYTE, buf, counts[me], MPI_BYTE, root, comm));
      free(all);
      free(counts);
      free(displs);
      break;
    }
    default: {
      const int count = bytes / 4;
      int *mine = (int *)tu_malloc(sizeof(int) * (size_t)(count + 1));
      for (int i = 0; i < count; ++i) mine[i] = term(key, me, i);
      if (me == root)
        for (int i = 0; i < count; ++i) {
          int sum = 0;
          for (int r = 0; r < n; ++r) sum += term(key, r, i);
          memcpy(want + GUARD + (size_t)i * 4, &sum, 4);
        }
      TU_CALL(MPI_Reduce(mine, buf, count, MPI_INT, MPI_SUM, root, comm));
      free(mine);
      break;
    }
  }
  char label[96];
  snprintf(label, sizeof label, "%s, %s of %d bytes from root %d", what, opname[op], bytes, root);
  check_area(label, call);
}

static void nap(uint64_t us) {
  struct timespec ts = {0, (long)(us * 1000)};
  nanosleep(&ts, NULL);
}

/* 1: runs from one root at a time, readers falling behind. */
static void runs(long iters, uint64_t seed) {
  static const int sizes[] = {0,    1,    48,   49,   104,  105,  160,  161,  216,  217,  272,   273,   440,  441,
                              496,  497,  1008, 1009, 2160, 2161, 4096, 4336, 4337, 4144, 4145,  6192,  6193, 8192,
                              12288, 12289};
  const int ns = (int)(sizeof sizes / sizeof sizes[0]);
  uint64_t s = seed;
  for (int root = 0; root < tu_size; ++root)
    for (long i = 0; i < iters; ++i) {
      const uint64_t r = next_rand(&s);
      /* one in 8 calls, rank r % n sleeps before it: the root runs ahead */
      if (r % 8 == 0 && (int)((r >> 8) % (uint64_t)tu_size) == tu_rank) nap(50 + (r >> 20) % 400);
      rooted((int)((i / ns) % NOPS), MPI_COMM_WORLD, root, sizes[i % ns], tu_key(root, (int)i, (unsigned)seed), "runs",
             i);
    }
  /* blocks for the wide slots, 24 calls of one operation in a row, in which
   * the side that reads (the root of a gather or reduce, a reader of a
   * broadcast or scatter) sleeps 3 ms at the third: the writers run ahead past
   * all the slots and must wait for it before they reuse one */
  static const int wide[] = {5000, 8192, 12288, 6000};
  static const int wideOps[] = {OP_BCAST, OP_GATHER, OP_SCATTER, OP_REDUCE};
  for (int root = 0; root < tu_size; ++root)
    for (int k = 0; k < 4; ++k) {
      const int op = wideOps[k];
      const int sleeper = op == OP_GATHER || op == OP_REDUCE ? root : (root + 1) % tu_size;
      for (long i = 0; i < 24; ++i) {
        const uint64_t r = next_rand(&s);
        if (i == 2 && tu_rank == sleeper) nap(3000);
        rooted(op, MPI_COMM_WORLD, root, wide[r % 4], tu_key(root, (int)(k * 24 + i), (unsigned)seed ^ 0x1234u),
               "wide runs", k * 24 + i);
      }
    }
}

/* 1b: broadcasts whose root's buffer is small (private memory: shmcoll's
 * root runs ahead, through a wide slot past 4336 bytes) while the readers'
 * is a large allocation (shmcoll serves it from the shared heap, and a
 * reader may take the general round rather than the inline path). */
static void heap_readers(uint64_t seed) {
  enum { BIG = 256 * 1024 };
  static const int sizes[] = {300, 4000, 4337, 8000, 12288, 12289};
  unsigned char *big = (unsigned char *)tu_malloc(BIG + 2 * GUARD);
  for (int root = 0; root < tu_size; ++root)
    for (int i = 0; i < 24; ++i) {
      const int bytes = sizes[i % 6];
      const uint64_t key = tu_key(root, i, (unsigned)seed ^ 0x4242u);
      unsigned char *buf = tu_rank == root ? area + GUARD : big + GUARD;
      unsigned char *whole = tu_rank == root ? area : big;
      const size_t len = tu_rank == root ? (size_t)MAXB : (size_t)BIG;
      for (size_t k = 0; k < len + 2 * GUARD; ++k) whole[k] = sentinel(k);
      if (tu_rank == root) tu_pattern(buf, key, 0, (size_t)bytes);
      TU_CALL(MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD));
      unsigned char *exp = (unsigned char *)tu_malloc((size_t)bytes + 1);
      tu_pattern(exp, key, 0, (size_t)bytes);
      if (memcmp(buf, exp, (size_t)bytes))
        tu_fail("heap readers, call %d: MPI_Bcast of %d bytes from root %d: wrong bytes", i, bytes, root);
      for (size_t k = 0; k < len + 2 * GUARD; ++k)
        if ((k < GUARD || k >= GUARD + (size_t)bytes) && whole[k] != sentinel(k))
          tu_fail("heap readers, call %d: MPI_Bcast of %d bytes from root %d wrote byte %ld outside the block", i,
                  bytes, root, (long)k - GUARD);
      free(exp);
    }
  free(big);
}

/* 2: three communicators interleaved, random roots and sizes, allreduces between. */
static void interleaved(long iters, uint64_t seed) {
  MPI_Comm comms[3];
  comms[0] = MPI_COMM_WORLD;
  TU_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_size - tu_rank, &comms[2]));
  uint64_t s = seed * 31 + 7;
  for (long i = 0; i < iters; ++i) {
    const uint64_t r = next_rand(&s);
    MPI_Comm c = comms[r % 3];
    int n;
    TU_CALL(MPI_Comm_size(c, &n));
    const int root = (int)((r >> 4) % (uint64_t)n);
    const int bytes = (r >> 12) % 16 == 0   ? (int)((r >> 20) % 3000)
                      : (r >> 12) % 16 == 1 ? (int)((r >> 20) % 13000)
                                            : (int)((r >> 20) % 1010);
    /* (the split's halves draw the same numbers, so each half agrees on its calls) */
    rooted((int)((r >> 50) % NOPS), c, root, bytes, tu_key(root, (int)i, (unsigned)(seed + (r % 3))), "interleaved", i);
    if ((r >> 32) % 5 == 0) {
      int one = 1, sum = 0;
      TU_CALL(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
      if (sum != n) tu_fail("interleaved, call %ld: MPI_Allreduce gave %d, expected %d", i, sum, n);
    }
    if ((r >> 40) % 16 == 0 && (int)((r >> 44) % (uint64_t)tu_size) == tu_rank) nap(100);
  }
  TU_CALL(MPI_Comm_free(&comms[1]));
  TU_CALL(MPI_Comm_free(&comms[2]));
}

/* 3: a vector type (3 bytes of every 5) as the buffer; the holes stay untouched. */
static void holes(long iters, uint64_t seed) {
  MPI_Datatype v;
  TU_CALL(MPI_Type_vector(40, 3, 5, MPI_BYTE, &v));
  TU_CALL(MPI_Type_commit(&v));
  for (long i = 0; i < iters; ++i) {
    const int root = (int)(i % tu_size), count = (int)(i % 4); /* 0 to 3 vectors: 0 to 360 bytes */
    const uint64_t key = tu_key(root, (int)i, (unsigned)seed ^ 0x77u);
    fill_sentinel();
    memcpy(want, area, MAXB + 2 * GUARD);
    unsigned char sig[360];
    tu_pattern(sig, key, 0, sizeof sig);
    size_t k = 0;
    for (int e = 0; e < count; ++e)
      for (int b = 0; b < 40; ++b)
        for (int j = 0; j < 3; ++j) {
          /* element e spans 40 blocks of stride 5 (extent 198): block b at e*198 + 5b */
          const size_t off = GUARD + (size_t)e * 198 + (size_t)b * 5 + (size_t)j;
          want[off] = sig[k];
          if (tu_rank == root) area[off] = sig[k];
          ++k;
        }
    TU_CALL(MPI_Bcast(area + GUARD, count, v, root, MPI_COMM_WORLD));
    check_area("holes", i);
  }
  TU_CALL(MPI_Type_free(&v));
}

#ifdef SHMCOLL
/* An error code's string names the function that failed ("MPI_Bcast: ..."). */
static void names_fn(int rc, const char *fn, int c) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  const size_t k = strlen(fn);
  if (strncmp(s, fn, k) != 0 || s[k] != ':') tu_fail("disagree %d: the error string \"%s\" does not name %s", c, s, fn);
}

/* 4: counts that disagree (erroneous): the classes, and nothing else written. */
static void disagree(uint64_t seed) {
  struct {
    int rootBytes, readerBytes, cls;
  } cases[] = {{8, 600, MPI_ERR_COUNT},   {8, 100000, MPI_ERR_COUNT}, {600, 8, MPI_ERR_TRUNCATE},
               {1200, 8, MPI_ERR_TRUNCATE}, {8, 8000, MPI_ERR_COUNT},   {8000, 8, MPI_ERR_TRUNCATE}};
  /* (up to 4336 bytes fit a ring lane; 8000 goes to a wide slot) */
  for (int c = 0; c < (int)(sizeof cases / sizeof cases[0]); ++c)
    for (int root = 0; root < tu_size; ++root) {
      const int mine = tu_rank == root ? cases[c].rootBytes : cases[c].readerBytes;
      const int common = cases[c].rootBytes < cases[c].readerBytes ? cases[c].rootBytes : cases[c].readerBytes;
      const uint64_t key = tu_key(root, c, (unsigned)seed ^ 0x99u);
      fill_sentinel();
      memcpy(want, area, MAXB + 2 * GUARD);
      if (tu_rank == root) {
        tu_pattern(area + GUARD, key, 0, (size_t)mine);
        tu_pattern(want + GUARD, key, 0, (size_t)mine);
      } else {
        tu_pattern(want + GUARD, key, 0, (size_t)common);
      }
      const int rc = MPI_Bcast(area + GUARD, mine, MPI_BYTE, root, MPI_COMM_WORLD);
      int cls = MPI_SUCCESS;
      if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
      if (rc != MPI_SUCCESS) names_fn(rc, "MPI_Bcast", c);
      if (tu_rank != root && cls != cases[c].cls)
        tu_fail("disagree %d (root %d sends %d bytes, %d posted): class %d, expected %d", c, root, cases[c].rootBytes,
                mine, cls, cases[c].cls);
      if (tu_rank == root && cls != MPI_SUCCESS) tu_fail("disagree %d: the root got class %d", c, cls);
      check_area("disagree", c);
      /* the communicator still works */
      rooted(OP_BCAST, MPI_COMM_WORLD, root, 40, key + 1, "after disagree", c);
      rooted(OP_GATHER, MPI_COMM_WORLD, root, 40, key + 2, "after disagree", c);
    }
  /* gather: the others send S bytes each where the root posts P per rank */
  struct {
    int sent, posted, cls;
  } g[] = {{8, 600, MPI_ERR_COUNT},
           {600, 8, MPI_ERR_TRUNCATE},
           {1200, 8, MPI_ERR_TRUNCATE},
           {8000, 8, MPI_ERR_TRUNCATE},
           {8, 6000, MPI_ERR_COUNT}}; /* (6000 each: the root posts 16 of them in MAXB) */
  for (int c = 0; c < (int)(sizeof g / sizeof g[0]); ++c)
    for (int root = 0; root < tu_size; ++root) {
      const uint64_t key = tu_key(root, c, (unsigned)seed ^ 0x5bu);
      const int sent = tu_rank == root ? g[c].posted : g[c].sent,
                common = g[c].sent < g[c].posted ? g[c].sent : g[c].posted;
      unsigned char *mine = (unsigned char *)tu_malloc((size_t)sent);
      tu_pattern(mine, key + (uint64_t)tu_rank, 0, (size_t)sent);
      fill_sentinel();
      memcpy(want, area, MAXB + 2 * GUARD);
      if (tu_rank == root)
        for (int r = 0; r < tu_size; ++r)
          tu_pattern(want + GUARD + (size_t)r * g[c].posted, key + (uint64_t)r, 0,
                     (size_t)(r == root ? g[c].posted : common));
      const int rc = MPI_Gather(mine, sent, MPI_BYTE, area + GUARD, g[c].posted, MPI_BYTE, root, MPI_COMM_WORLD);
      free(mine);
      int cls = MPI_SUCCESS;
      if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
      if (rc != MPI_SUCCESS) names_fn(rc, "MPI_Gather", c);
      const int expect = tu_rank == root && tu_size > 1 ? g[c].cls : MPI_SUCCESS;
      if (cls != expect)
        tu_fail("gather disagree %d (root %d, %d bytes sent, %d posted): class %d, expected %d", c, root, g[c].sent,
                g[c].posted, cls, expect);
      check_area("gather disagree", c);
      rooted(OP_GATHER, MPI_COMM_WORLD, root, 40, key + 3, "after gather disagree", c);
    }
  /* scatter: the root sends S bytes to each rank, the others post P (S of 8
   * and 40 fit the pieces of the root's ring lane, 600 only with one reader;
   * 6000 a piece of a wide slot for up to 2 readers) */
  struct {
    int sent, posted, cls;
  } sc[] = {{8, 600, MPI_ERR_COUNT},    {8, 40, MPI_ERR_COUNT},     {40, 8, MPI_ERR_TRUNCATE},
            {600, 8, MPI_ERR_TRUNCATE}, {6000, 8, MPI_ERR_TRUNCATE}, {8, 6000, MPI_ERR_COUNT}};
  for (int c = 0; c < (int)(sizeof sc / sizeof sc[0]); ++c)
    for (int root = 0; root < tu_size; ++root) {
      const uint64_t key = tu_key(root, c, (unsigned)seed ^ 0x3cu);
      const int posted = tu_rank == root ? sc[c].sent : sc[c].posted,
                common = sc[c].sent < sc[c].posted ? sc[c].sent : sc[c].posted;
      unsigned char *all = NULL;
      if (tu_rank == root) {
        all = (unsigned char *)tu_malloc((size_t)sc[c].sent * tu_size);
        for (int r = 0; r < tu_size; ++r)
          tu_pattern(all + (size_t)r * sc[c].sent, key + (uint64_t)r, 0, (size_t)sc[c].sent);
      }
      fill_sentinel();
      memcpy(want, area, MAXB + 2 * GUARD);
      tu_pattern(want + GUARD, key + (uint64_t)tu_rank, 0, (size_t)(tu_rank == root ? sc[c].sent : common));
      const int rc = MPI_Scatter(all, sc[c].sent, MPI_BYTE, area + GUARD, posted, MPI_BYTE, root, MPI_COMM_WORLD);
      free(all);
      int cls = MPI_SUCCESS;
      if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
      if (rc != MPI_SUCCESS) names_fn(rc, "MPI_Scatter", c);
      const int expect = tu_rank != root ? sc[c].cls : MPI_SUCCESS;
      if (cls != expect)
        tu_fail("scatter disagree %d (root %d, %d bytes sent, %d posted): class %d, expected %d", c, root, sc[c].sent,
                posted, cls, expect);
      check_area("scatter disagree", c);
      rooted(OP_SCATTER, MPI_COMM_WORLD, root, 40, key + 3, "after scatter disagree", c);
    }
}
#endif

int main(int argc, char **argv) {
  long iters = 400;
  uint64_t seed = 1;
  int mixed = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "iters=", 6))
      iters = atol(argv[i] + 6);
    else if (!strncmp(argv[i], "seed=", 5))
      seed = strtoull(argv[i] + 5, NULL, 10);
    else if (!strcmp(argv[i], "mixed"))
      mixed = 1;
  }
  if (mixed) {
    const char *r = getenv("SHMCOLL_RANK");
    if (r && atoi(r) % 2) setenv("SHMCOLL_RUN_AHEAD", "0", 1);
  }
  tu_init(&argc, &argv, "run_ahead");
  area = (unsigned char *)tu_malloc(MAXB + 2 * GUARD);
  want = (unsigned char *)tu_malloc(MAXB + 2 * GUARD);
  if (!seed) seed = 1;
  runs(iters, seed);
  heap_readers(seed);
  interleaved(iters * 2, seed);
  holes(iters / 4 + 8, seed);
#ifdef SHMCOLL
  disagree(seed);
#endif
  tu_ncases = (long long)iters * tu_size + 120L * tu_size + 2 * iters + iters / 4 + 8; /* parts 1-3 */
  free(area);
  free(want);
  return tu_finish(NULL);
}
