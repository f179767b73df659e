/*
 * shared_malloc.c -- malloc and friends from the shared heap, and
 * communication from and into such memory.
 *
 * Standard MPI API plus POSIX (and glibc's malloc_usable_size).  Under
 * shmcoll, libshmcoll.so defines malloc: requests of at least
 * SHMCOLL_SHARED_MALLOC_MIN bytes (default 128 KiB, never under 64 KiB) come
 * from a per-process memfd, "memfd:shmcoll-heap" in /proc/self/maps, which
 * peers map read-only to copy straight out of.  Run with the argument `off`
 * (and SHMCOLL_SHARED_MALLOC=0) the test asserts the opposite: no memory in
 * such a mapping, no such mapping at all.  Checked, every byte:
 *  - placement: malloc(1 MiB), calloc(1, 256 KiB), posix_memalign(2 MiB
 *    alignment, 3 MiB), aligned_alloc(4096, 1 MiB), reallocarray, and realloc
 *    of a 1 KiB block up to 1 MiB (its first 1 KiB kept) lie in the heap
 *    (default) or not (off); malloc(1000) and malloc(60 KiB) never do; a
 *    96 KiB request does iff the threshold allows it; alignment honoured,
 *    malloc_usable_size >= the request, free(NULL) harmless;
 *  - the allocator: calloc of reused (dirty) memory gives zeros; realloc
 *    growing at the top, into a freed neighbour and by moving, and shrinking,
 *    keeps the contents; many blocks of mixed sizes (64 KiB .. 4 MiB, odd
 *    sizes too) with distinct patterns, freed in a scrambled order with new
 *    allocations in between, each checked whole before it is freed; freed
 *    blocks below a live one keep at most SHMCOLL_SHARED_MALLOC_KEEP bytes
 *    resident (mincore), the rest of their pages go back to the system;
 *  - collectives from heap buffers, with GUARD bytes around every receive
 *    area (and the gaps between displacements) untouched: MPI_Alltoall with
 *    1 B, 3000 B, 70 KiB and 256 KiB + 7 blocks, repeated with the send buffer
 *    rewritten between calls, after free+malloc at the same address and
 *    from a new address; MPI_Alltoallv (uneven counts, some zero, gapped
 *    displacements) from posix_memalign memory; MPI_Allgather of
 *    1 MiB + 3 bytes; MPI_Allgatherv; a ring of MPI_Sendrecv and
 *    MPI_Isend/MPI_Irecv of 1 MiB + 5 bytes; a small glibc buffer received
 *    into a heap buffer;
 *  - with more than one rank, default mode: after the large alltoall this
 *    rank maps at least one peer heap read-only ("r--s"), besides its own
 *    "rw-s" heap; off mode: no heap mapping of any kind;
 *  - fork() (rank 0): the child sees the buffers as they were at fork(),
 *    even after the parent overwrote one (pipe handshake: the child looks
 *    only once the parent has written); the child's writes stay its own; the
 *    child's heap is no longer a shared mapping (its pre-fork buffers may
 *    still be a private, copy-on-write one of the memfd); malloc/calloc/free
 *    work in the child (calloc gives zeros).  (fork_heap.c: the same with a
 *    large heap, what it costs in memory, and peers during the fork.)
 * Built with AddressSanitizer (or ThreadSanitizer), whose malloc comes before
 * the library's, every run checks what `off` checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Requests that must fail (a bad alignment, sizes that overflow):
   AddressSanitizer reports them as errors instead of failing them, so they
   are checked only without it. */
#if defined(__SANITIZE_ADDRESS__)
#define MISUSE_CHECKS 0
#else
#define MISUSE_CHECKS 1
#endif

static int rank, size, off;
static long nchecks;
static size_t threshold = 128 * 1024; /* SHMCOLL_SHARED_MALLOC_MIN as the library reads it */

#define PROG "shared_malloc"
#include "abortutil.h"

#define CHECK(cond, ...)          \
  do {                            \
    if (!(cond)) FAIL(__VA_ARGS__); \
    ++nchecks;                    \
  } while (0)

enum { GUARD = 64 };
enum { KiB = 1024, MiB = 1024 * 1024 };

static unsigned char pat(int from, int to, size_t i, int salt) {
  uint32_t x = (uint32_t)from * 2654435761u ^ (uint32_t)to * 40503u ^ (uint32_t)i * 2246822519u ^ (uint32_t)salt * 3266489917u;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  return (unsigned char)(x ^ (x >> 15));
}

/* A cheaper pattern for the big allocator blocks: distinct per (k, salt). */
static unsigned char bpat(int k, int salt, size_t i) {
  return (unsigned char)(i * 131u + (i >> 9) * 7u + (unsigned)k * 29u + (unsigned)salt * 97u + 1u);
}
static void bfill(unsigned char *p, size_t n, int k, int salt) {
  for (size_t i = 0; i < n; ++i) p[i] = bpat(k, salt, i);
}
/* Index of the first byte that differs, or n. */
static size_t bfirst_bad(const unsigned char *p, size_t n, int k, int salt) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != bpat(k, salt, i)) return i;
  return n;
}
static void bcheck(const unsigned char *p, size_t n, int k, int salt, const char *what) {
  size_t i = bfirst_bad(p, n, k, salt);
  if (i != n) FAIL("%s: byte %zu of %zu is %#x, expected %#x", what, i, n, p[i], bpat(k, salt, i));
  ++nchecks;
}
static void check_zero(const unsigned char *p, size_t n, const char *what) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) FAIL("%s: byte %zu of %zu is %#x, expected 0", what, i, n, p[i]);
  ++nchecks;
}

/* ---- /proc/self/maps ------------------------------------------------------- */

/* Calls fn(lo, hi, perms, line) for each mapping; the line may be cut short
 * (the rest of an over-long line is skipped).  fopen allocates a little:
 * below any threshold, so from glibc. */
typedef void (*map_fn)(uintptr_t lo, uintptr_t hi, const char *perms, const char *line, void *arg);
static void each_mapping(map_fn fn, void *arg) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) FAIL("cannot open /proc/self/maps: %s", strerror(errno));
  char line[1024];
  int midline = 0;
  while (fgets(line, sizeof line, f)) {
    size_t len = strlen(line);
    int whole = len > 0 && line[len - 1] == '\n';
    if (!midline) {
      unsigned long lo, hi;
      char perms[8] = "";
      if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3) fn((uintptr_t)lo, (uintptr_t)hi, perms, line, arg);
    }
    midline = !whole;
  }
  fclose(f);
}

static int is_heap_line(const char *line) { return strstr(line, "memfd:shmcoll-heap") != NULL; }

struct find_arg {
  uintptr_t p;
  int found; /* 1: in a heap mapping, 0: elsewhere / unmapped */
  char perms[8];
};
static void find_fn(uintptr_t lo, uintptr_t hi, const char *perms, const char *line, void *arg) {
  struct find_arg *a = arg;
  if (a->p >= lo && a->p < hi) {
    a->found = is_heap_line(line);
    snprintf(a->perms, sizeof a->perms, "%s", perms);
  }
}
/* Whether p lies in a "memfd:shmcoll-heap" mapping. */
static int in_heap(const void *p) {
  struct find_arg a = {(uintptr_t)p, 0, ""};
  each_mapping(find_fn, &a);
  return a.found;
}

struct count_arg {
  int rw, ro, other;
};
static void count_fn(uintptr_t lo, uintptr_t hi, const char *perms, const char *line, void *arg) {
  struct count_arg *a = arg;
  (void)lo;
  (void)hi;
  if (!is_heap_line(line)) return;
  if (!strcmp(perms, "rw-s"))
    ++a->rw;
  else if (!strcmp(perms, "r--s"))
    ++a->ro;
  else
    ++a->other;
}
static struct count_arg heap_mappings(void) {
  struct count_arg a = {0, 0, 0};
  each_mapping(count_fn, &a);
  return a;
}

/* Whether p lies in a shared ("rw-s") mapping of the heap: a fork child's
   view of its buffers is private, even where it still maps the memfd. */
static int in_shared_heap(const void *p) {
  struct find_arg a = {(uintptr_t)p, 0, ""};
  each_mapping(find_fn, &a);
  return a.found && a.perms[3] == 's';
}

/* Default mode: p must be in the heap; off mode: it must not be. */
static void expect_heap(const void *p, const char *what) {
  int h = in_heap(p);
  if (off && h) FAIL("%s (%p) is in the shared heap although SHMCOLL_SHARED_MALLOC=0", what, p);
  if (!off && !h) FAIL("%s (%p) is not in the shared heap (memfd:shmcoll-heap)", what, p);
  ++nchecks;
}
static void expect_not_heap(const void *p, const char *what) {
  if (in_heap(p)) FAIL("%s (%p) is in the shared heap", what, p);
  ++nchecks;
}
/* For a buffer of n bytes from malloc: in the heap iff it is large enough. */
static void expect_placement(const void *p, size_t n, const char *what) {
  if (n >= threshold)
    expect_heap(p, what);
  else
    expect_not_heap(p, what);
}

static void *xmalloc(size_t n) {
  void *p = malloc(n);
  if (!p) FAIL("malloc(%zu) failed", n);
  return p;
}

static size_t parse_size(const char *s, size_t dflt) {
  if (!s || !*s) return dflt;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return dflt;
  if (*end == 'k' || *end == 'K')
    v <<= 10, ++end;
  else if (*end == 'm' || *end == 'M')
    v <<= 20, ++end;
  else if (*end == 'g' || *end == 'G')
    v <<= 30, ++end;
  if (*end == 'b' || *end == 'B') ++end;
  if (*end) return dflt;
  return v < 64 * KiB ? 64 * KiB : (size_t)v;
}

/* ---- 1. placement ---------------------------------------------------------- */

static void placement(void) {
  unsigned char *p = xmalloc(MiB);
  expect_heap(p, "malloc(1 MiB)");
  CHECK(malloc_usable_size(p) >= MiB, "malloc_usable_size(malloc(1 MiB)) = %zu", malloc_usable_size(p));
  CHECK((uintptr_t)p % 16 == 0, "malloc(1 MiB) = %p is not 16-byte aligned", (void *)p);
  bfill(p, MiB, 1, 1);
  bcheck(p, MiB, 1, 1, "malloc(1 MiB)");
  free(p);

  p = calloc(1, 256 * KiB);
  if (!p) FAIL("calloc(1, 256 KiB) failed");
  expect_heap(p, "calloc(1, 256 KiB)");
  check_zero(p, 256 * KiB, "calloc(1, 256 KiB)");
  CHECK(malloc_usable_size(p) >= 256 * KiB, "malloc_usable_size(calloc(1, 256 KiB)) = %zu", malloc_usable_size(p));
  free(p);

  void *v = NULL;
  int rc = posix_memalign(&v, 2 * MiB, 3 * MiB);
  CHECK(rc == 0 && v, "posix_memalign(2 MiB, 3 MiB) returned %d", rc);
  p = v;
  expect_heap(p, "posix_memalign(2 MiB, 3 MiB)");
  CHECK((uintptr_t)p % (2 * MiB) == 0, "posix_memalign(2 MiB, 3 MiB) = %p is not aligned", (void *)p);
  CHECK(malloc_usable_size(p) >= 3 * MiB, "malloc_usable_size(posix_memalign 3 MiB) = %zu", malloc_usable_size(p));
  bfill(p, 3 * MiB, 2, 1);
  bcheck(p, 3 * MiB, 2, 1, "posix_memalign(2 MiB, 3 MiB)");
  free(p);

  if (MISUSE_CHECKS) {
    rc = posix_memalign(&v, 3 * 4096, 1 * MiB);
    CHECK(rc == EINVAL, "posix_memalign with alignment 12288 returned %d, expected EINVAL", rc);
  }

  p = aligned_alloc(4096, MiB);
  if (!p) FAIL("aligned_alloc(4096, 1 MiB) failed");
  expect_heap(p, "aligned_alloc(4096, 1 MiB)");
  CHECK((uintptr_t)p % 4096 == 0, "aligned_alloc(4096, 1 MiB) = %p is not aligned", (void *)p);
  CHECK(malloc_usable_size(p) >= MiB, "malloc_usable_size(aligned_alloc 1 MiB) = %zu", malloc_usable_size(p));
  bfill(p, MiB, 3, 1);
  bcheck(p, MiB, 3, 1, "aligned_alloc(4096, 1 MiB)");
  free(p);

  /* Alignments from 64 B to 8 MiB, each written whole. */
  for (size_t a = 64; a <= 8 * MiB; a *= 4) {
    size_t n = 200 * KiB + a / 3;
    rc = posix_memalign(&v, a, n);
    CHECK(rc == 0 && v, "posix_memalign(%zu, %zu) returned %d", a, n, rc);
    CHECK((uintptr_t)v % a == 0, "posix_memalign(%zu, %zu) = %p is not aligned", a, n, v);
    expect_heap(v, "posix_memalign(a, 200 KiB + a/3)");
    CHECK(malloc_usable_size(v) >= n, "malloc_usable_size(posix_memalign(%zu, %zu)) = %zu", a, n, malloc_usable_size(v));
    bfill(v, n, 4, (int)a);
    bcheck(v, n, 4, (int)a, "posix_memalign(a, n)");
    free(v);
  }

  /* realloc of a small (glibc) block up to 1 MiB: a 1 MiB request. */
  p = xmalloc(KiB);
  expect_not_heap(p, "malloc(1 KiB)");
  bfill(p, KiB, 5, 1);
  unsigned char *q = realloc(p, MiB);
  if (!q) FAIL("realloc(1 KiB block, 1 MiB) failed");
  bcheck(q, KiB, 5, 1, "realloc(1 KiB -> 1 MiB): the first 1 KiB");
  expect_heap(q, "realloc(1 KiB block, 1 MiB)");
  CHECK(malloc_usable_size(q) >= MiB, "malloc_usable_size(realloc 1 MiB) = %zu", malloc_usable_size(q));
  memset(q + KiB, 0x3c, MiB - KiB);
  bcheck(q, KiB, 5, 1, "realloc(1 KiB -> 1 MiB) after writing the rest");
  free(q);

  q = reallocarray(NULL, 1000, 1000);
  if (!q) FAIL("reallocarray(NULL, 1000, 1000) failed");
  expect_heap(q, "reallocarray(NULL, 1000, 1000)");
  bfill(q, 1000 * 1000, 6, 1);
  unsigned char *q2;
  if (MISUSE_CHECKS) {
    volatile size_t huge = SIZE_MAX / 2; /* (volatile: no compile-time overflow warning) */
    errno = 0;
    q2 = reallocarray(NULL, huge, 3);
    CHECK(q2 == NULL && errno == ENOMEM, "reallocarray(NULL, SIZE_MAX / 2, 3) did not fail with ENOMEM");
  }
  q2 = reallocarray(q, 2000, 1000);
  if (!q2) FAIL("reallocarray(p, 2000, 1000) failed");
  bcheck(q2, 1000 * 1000, 6, 1, "reallocarray(1 MB -> 2 MB): prefix");
  expect_heap(q2, "reallocarray(p, 2000, 1000)");
  free(q2);

  /* Small requests never come from the heap (whatever the threshold: the floor is 64 KiB). */
  p = xmalloc(1000);
  expect_not_heap(p, "malloc(1000)");
  memset(p, 1, 1000);
  free(p);
  p = xmalloc(60 * KiB);
  expect_not_heap(p, "malloc(60 KiB)");
  memset(p, 1, 60 * KiB);
  free(p);
  p = calloc(100, 10);
  if (!p) FAIL("calloc(100, 10) failed");
  expect_not_heap(p, "calloc(100, 10)");
  check_zero(p, 1000, "calloc(100, 10)");
  free(p);
  /* Between the floor and the default threshold: the threshold decides. */
  p = xmalloc(96 * KiB);
  expect_placement(p, 96 * KiB, "malloc(96 KiB)");
  bfill(p, 96 * KiB, 7, 1);
  bcheck(p, 96 * KiB, 7, 1, "malloc(96 KiB)");
  free(p);

  free(NULL);
  ++nchecks;
}

/* ---- 2. the allocator ------------------------------------------------------- */

/* Resident bytes of [p, p + n) (mincore; the range is widened to pages). */
static size_t resident_bytes(const void *p, size_t n) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t lo = (uintptr_t)p / page * page, hi = ((uintptr_t)p + n + page - 1) / page * page;
  size_t np = (hi - lo) / page;
  unsigned char *vec = malloc(np);
  if (!vec) FAIL("out of memory");
  if (mincore((void *)lo, hi - lo, vec) != 0) FAIL("mincore(%p, %zu): %s", (void *)lo, (size_t)(hi - lo), strerror(errno));
  size_t r = 0;
  for (size_t i = 0; i < np; ++i) r += vec[i] & 1;
  free(vec);
  return r * page;
}

/* Default mode: freed blocks below the top keep at most
 * SHMCOLL_SHARED_MALLOC_KEEP bytes (default 64 MiB) resident; the pages of
 * the rest go back to the system (memory is not just cached for ever). */
static void returned_pages(void) {
  enum { NB = 12 };
  const size_t bs = 12 * MiB;
  const char *ks = getenv("SHMCOLL_SHARED_MALLOC_KEEP");
  size_t keep = 64 * MiB;
  if (ks && *ks) {
    char *end;
    unsigned long long v = strtoull(ks, &end, 10);
    if (*end == 'k' || *end == 'K') v <<= 10;
    else if (*end == 'm' || *end == 'M') v <<= 20;
    else if (*end == 'g' || *end == 'G') v <<= 30;
    keep = (size_t)v;
  }
  if (keep > 64 * MiB) return; /* the blocks below would not exceed it */
  unsigned char *b[NB];
  for (int k = 0; k < NB; ++k) {
    b[k] = xmalloc(bs);
    memset(b[k], 0x20 + k, bs);
  }
  unsigned char *blocker = xmalloc(256 * KiB); /* keeps the blocks below the top */
  memset(blocker, 0x7f, 256 * KiB);
  size_t before = 0;
  for (int k = 0; k < NB; ++k) before += resident_bytes(b[k], bs);
  CHECK(before >= NB * bs - MiB, "written heap blocks are not resident (%zu of %zu bytes)", before, NB * bs);
  uintptr_t addr[NB];
  for (int k = 0; k < NB; ++k) addr[k] = (uintptr_t)b[k];
  for (int k = 0; k < NB; ++k) free(b[k]);
  size_t after = 0;
  for (int k = 0; k < NB; ++k) after += resident_bytes((const void *)addr[k], bs);
  CHECK(after <= keep + 2 * MiB,
        "after freeing %d blocks of %zu bytes below a live block, %zu bytes stay resident (keep %zu)", NB, bs, after,
        keep);
  for (size_t i = 0; i < 256 * KiB; ++i)
    if (blocker[i] != 0x7f) FAIL("the block above the freed ones changed (byte %zu)", i);
  free(blocker);
}

static void allocator(void) {
  /* calloc of reused memory: zeros. */
  for (int round = 0; round < 3; ++round) {
    unsigned char *a = xmalloc(MiB), *b = xmalloc(MiB);
    expect_heap(a, "malloc(1 MiB) A");
    expect_heap(b, "malloc(1 MiB) B");
    memset(a, 0xa5, MiB);
    bfill(b, MiB, 10, round);
    free(a);
    size_t n = round == 0 ? MiB : round == 1 ? 512 * KiB + 3 : 900 * KiB;
    unsigned char *c = calloc(1, n);
    if (!c) FAIL("calloc(1, %zu) failed", n);
    expect_heap(c, "calloc after free");
    check_zero(c, n, "calloc of reused memory");
    bcheck(b, MiB, 10, round, "block B beside the reused one");
    free(c);
    free(b);
  }
  /* calloc with n * size as the request. */
  {
    unsigned char *a = xmalloc(2 * MiB), *b = xmalloc(64 * KiB);
    memset(a, 0xff, 2 * MiB);
    free(a);
    unsigned int *c = calloc(300 * 1024, sizeof(unsigned int));
    if (!c) FAIL("calloc(300 Ki, 4) failed");
    expect_heap(c, "calloc(300 Ki, 4)");
    check_zero((unsigned char *)c, 300 * 1024 * sizeof(unsigned int), "calloc(300 Ki, 4) of reused memory");
    free(c);
    free(b);
    if (MISUSE_CHECKS) {
      volatile size_t huge = SIZE_MAX / 4;
      errno = 0;
      void *o = calloc(huge, 8);
      CHECK(o == NULL && errno == ENOMEM, "calloc overflow did not fail with ENOMEM");
    }
  }

  /* realloc: grow (wherever it goes), then shrink. */
  {
    unsigned char *p = xmalloc(300 * KiB);
    expect_heap(p, "malloc(300 KiB)");
    bfill(p, 300 * KiB, 11, 1);
    p = realloc(p, 5 * MiB);
    if (!p) FAIL("realloc(300 KiB -> 5 MiB) failed");
    expect_heap(p, "realloc(300 KiB -> 5 MiB)");
    bcheck(p, 300 * KiB, 11, 1, "realloc(300 KiB -> 5 MiB): prefix");
    CHECK(malloc_usable_size(p) >= 5 * MiB, "malloc_usable_size after realloc to 5 MiB = %zu", malloc_usable_size(p));
    bfill(p, 5 * MiB, 11, 2);
    p = realloc(p, 200 * KiB + 1);
    if (!p) FAIL("realloc(5 MiB -> 200 KiB) failed");
    bcheck(p, 200 * KiB + 1, 11, 2, "realloc(5 MiB -> 200 KiB + 1): prefix");
    p = realloc(p, 3 * MiB + 5);
    if (!p) FAIL("realloc(200 KiB -> 3 MiB) failed");
    bcheck(p, 200 * KiB + 1, 11, 2, "realloc(200 KiB -> 3 MiB): prefix");
    free(p);
  }
  /* realloc of a block with a live block above it (must move or merge) ... */
  {
    unsigned char *x = xmalloc(300 * KiB), *y = xmalloc(256 * KiB);
    bfill(x, 300 * KiB, 12, 1);
    bfill(y, 256 * KiB, 13, 1);
    unsigned char *x2 = realloc(x, 4 * MiB);
    if (!x2) FAIL("realloc(300 KiB -> 4 MiB) failed");
    expect_heap(x2, "realloc(300 KiB -> 4 MiB), a block above");
    bcheck(x2, 300 * KiB, 12, 1, "realloc with a live block above: prefix");
    bcheck(y, 256 * KiB, 13, 1, "the live block above a moved realloc");
    memset(x2 + 300 * KiB, 0x77, 4 * MiB - 300 * KiB);
    bcheck(y, 256 * KiB, 13, 1, "the live block above a moved realloc, after writing the new block");
    free(x2);
    free(y);
  }
  /* ... and with a freed block above it (may grow into it). */
  {
    unsigned char *x = xmalloc(300 * KiB), *y = xmalloc(2 * MiB), *z = xmalloc(256 * KiB);
    bfill(x, 300 * KiB, 14, 1);
    memset(y, 0xee, 2 * MiB);
    bfill(z, 256 * KiB, 15, 1);
    free(y);
    unsigned char *x2 = realloc(x, MiB + 17);
    if (!x2) FAIL("realloc(300 KiB -> 1 MiB + 17) failed");
    bcheck(x2, 300 * KiB, 14, 1, "realloc into a freed neighbour: prefix");
    memset(x2 + 300 * KiB, 0x11, MiB + 17 - 300 * KiB);
    bcheck(z, 256 * KiB, 15, 1, "the block above the freed neighbour");
    unsigned char *w = xmalloc(512 * KiB); /* may land in what is left of y */
    bfill(w, 512 * KiB, 16, 1);
    bcheck(x2, 300 * KiB, 14, 1, "realloc'd block after a new allocation");
    for (size_t i = 300 * KiB; i < MiB + 17; ++i)
      if (x2[i] != 0x11) FAIL("realloc'd block: byte %zu overwritten by a new allocation", i);
    bcheck(z, 256 * KiB, 15, 1, "the block above, after a new allocation");
    bcheck(w, 512 * KiB, 16, 1, "the new allocation");
    free(w);
    free(z);
    free(x2);
  }

  /* Many blocks, mixed sizes, scrambled frees with new allocations between. */
  enum { K = 32 };
  unsigned char *p[K];
  size_t n[K];
  int salt[K];
  uint32_t seed = 12345u + (uint32_t)rank * 7919u;
  for (int k = 0; k < K; ++k) {
    seed = seed * 1103515245u + 12345u;
    n[k] = k % 8 == 7 ? 4 * MiB - (seed >> 20) : 64 * KiB + (seed >> 8) % (2 * MiB);
    if (k % 3 == 1) n[k] |= 1; /* odd sizes */
    salt[k] = k;
    p[k] = xmalloc(n[k]);
    expect_placement(p[k], n[k], "mixed allocation");
    bfill(p[k], n[k], k, salt[k]);
  }
  int next_salt = K;
  for (int j = 0; j < 3 * K; ++j) {
    int k = (j * 13 + 5) % K;
    if (!p[k]) continue;
    bcheck(p[k], n[k], k, salt[k], "mixed allocation before free");
    free(p[k]);
    p[k] = NULL;
    if (j % 2 == 0) {
      /* Refill a slot freed earlier (or this one) with a new size and pattern. */
      int r = (k + K / 2) % K;
      if (p[r]) r = k;
      seed = seed * 1103515245u + 12345u;
      n[r] = (j % 5 == 0) ? 3 * MiB + 1 : 64 * KiB + (seed >> 8) % (3 * MiB) + (j & 1);
      salt[r] = next_salt++;
      p[r] = xmalloc(n[r]);
      expect_placement(p[r], n[r], "mixed reallocation");
      bfill(p[r], n[r], r, salt[r]);
    }
    if (j % 7 == 3) {
      for (int t = 0; t < K; ++t)
        if (p[t]) bcheck(p[t], n[t], t, salt[t], "mixed allocation (sweep)");
    }
  }
  for (int k = K - 1; k >= 0; --k) {
    if (!p[k]) continue;
    bcheck(p[k], n[k], k, salt[k], "mixed allocation at the end");
    free(p[k]);
  }
  /* Everything freed: large blocks fit again and calloc gives zeros. */
  for (int r = 0; r < 3; ++r) {
    unsigned char *c = calloc(1, 8 * MiB);
    if (!c) FAIL("calloc(1, 8 MiB) failed");
    expect_heap(c, "calloc(1, 8 MiB) after everything was freed");
    check_zero(c, 8 * MiB, "calloc(1, 8 MiB) after everything was freed");
    memset(c, 0x5a + r, 8 * MiB);
    free(c);
  }
  if (!off) returned_pages();
}

/* ---- 3. collectives and point-to-point from heap buffers ------------------- */

static unsigned char *area(size_t n) {
  unsigned char *a = xmalloc(n + 2 * GUARD);
  memset(a, 0xa5, n + 2 * GUARD);
  return a;
}
static void check_guards(const unsigned char *a, size_t n, const char *what) {
  for (size_t i = 0; i < GUARD; ++i)
    if (a[i] != 0xa5 || a[GUARD + n + i] != 0xa5) FAIL("%s: guard byte overwritten", what);
  ++nchecks;
}

static void fill_alltoall(unsigned char *s, size_t blk, int salt) {
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i) s[(size_t)p * blk + i] = pat(rank, p, i, salt);
}
static void check_alltoall(const unsigned char *s, unsigned char *r, size_t blk, int salt, const char *what) {
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i)
      if (r[GUARD + (size_t)p * blk + i] != pat(p, rank, i, salt))
        FAIL("%s (block %zu, salt %d): block from %d, byte %zu", what, blk, salt, p, i);
  check_guards(r, blk * size, what);
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i)
      if (s[(size_t)p * blk + i] != pat(rank, p, i, salt)) FAIL("%s changed the send buffer", what);
  ++nchecks;
}
static void one_alltoall(unsigned char *s, size_t blk, int salt, const char *what) {
  fill_alltoall(s, blk, salt);
  unsigned char *r = area(blk * size);
  OK(MPI_Alltoall(s, (int)blk, MPI_BYTE, r + GUARD, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
  check_alltoall(s, r, blk, salt, what);
  free(r);
}

static void heap_maps_after_alltoall(void) {
  struct count_arg c = heap_mappings();
  if (off) {
    CHECK(c.rw + c.ro + c.other == 0, "off mode, yet %d rw-s, %d r--s and %d other heap mappings", c.rw, c.ro, c.other);
    return;
  }
  CHECK(c.rw >= 1, "no read-write (rw-s) mapping of memfd:shmcoll-heap: the rank's own heap");
  if (size > 1)
    CHECK(c.ro >= 1, "after the large alltoall no read-only (r--s) mapping of a peer's memfd:shmcoll-heap (%d rw-s)",
          c.rw);
}

static void alltoalls(void) {
  static const size_t blks[] = {1, 3000, 70 * KiB, 256 * KiB + 7};
  for (size_t b = 0; b < sizeof blks / sizeof blks[0]; ++b) {
    const size_t blk = blks[b], n = blk * size;
    unsigned char *s = xmalloc(n);
    expect_placement(s, n, "alltoall send buffer");
    /* The same buffer rewritten between calls: stale bytes would show. */
    for (int rep = 0; rep < 3; ++rep) one_alltoall(s, blk, 10 * (int)b + rep, "alltoall");
    if (b == 3) heap_maps_after_alltoall();
    /* free + malloc: likely the same address again, with new contents. */
    free(s);
    s = xmalloc(n);
    one_alltoall(s, blk, 10 * (int)b + 5, "alltoall after free+malloc");
    /* A new address: the old buffer is still live while the new one is taken. */
    unsigned char *s2 = xmalloc(n);
    CHECK(s2 != s, "two live blocks at one address");
    expect_placement(s2, n, "alltoall send buffer at a new address");
    memset(s, 0xcc, n);
    one_alltoall(s2, blk, 10 * (int)b + 6, "alltoall from a new address");
    free(s);
    one_alltoall(s2, blk, 10 * (int)b + 7, "alltoall from a new address, old one freed");
    free(s2);
  }
  /* Send from glibc memory into a heap receive buffer. */
  {
    const size_t blk = 3000;
    unsigned char *s = xmalloc(blk * size);
    fill_alltoall(s, blk, 90);
    const size_t big = 512 * KiB;
    unsigned char *r = area(big > blk * size ? big : blk * size);
    expect_heap(r, "alltoall receive area");
    OK(MPI_Alltoall(s, (int)blk, MPI_BYTE, r + GUARD, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
    check_alltoall(s, r, blk, 90, "alltoall into a heap buffer");
    for (size_t i = GUARD + blk * size; i < big + 2 * GUARD; ++i)
      if (r[i] != 0xa5) FAIL("alltoall into a heap buffer wrote past its end (byte %zu)", i);
    free(r);
    free(s);
  }
}

/* Bytes `from` sends `to` in the alltoallv: uneven, some zero. */
static size_t vcount(int from, int to) {
  int h = (from * 7 + to * 13) % 6;
  if (h == 0) return 0;
  return (size_t)h * 61 * KiB + (size_t)(from * 31 + to * 17) % 4099;
}

static void alltoallv(void) {
  int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
  int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
  if (!sc || !sd || !rc || !rd) FAIL("out of memory");
  /* Displacements in reverse rank order with gaps of 5 * p + 3 bytes. */
  size_t st = 0, rt = 0;
  for (int p = size - 1; p >= 0; --p) {
    st += 5 * (size_t)p + 3;
    sd[p] = (int)st;
    sc[p] = (int)vcount(rank, p);
    st += (size_t)sc[p];
    rt += 5 * (size_t)p + 3;
    rd[p] = (int)rt;
    rc[p] = (int)vcount(p, rank);
    rt += (size_t)rc[p];
  }
  void *v = NULL;
  int err = posix_memalign(&v, 4096, st);
  if (err || !v) FAIL("posix_memalign(4096, %zu) returned %d", st, err);
  unsigned char *s = v;
  expect_placement(s, st, "alltoallv send buffer (posix_memalign)");
  for (int rep = 0; rep < 3; ++rep) {
    memset(s, 0x3e, st);
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < sc[p]; ++i) s[sd[p] + i] = pat(rank, p, (size_t)i, 40 + rep);
    unsigned char *r = area(rt);
    OK(MPI_Alltoallv(s, sc, sd, MPI_BYTE, r + GUARD, rc, rd, MPI_BYTE, MPI_COMM_WORLD));
    /* Every received byte, and every byte between blocks untouched. */
    unsigned char *mark = calloc(rt, 1);
    if (!mark) FAIL("out of memory");
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < rc[p]; ++i) {
        if (r[GUARD + rd[p] + i] != pat(p, rank, (size_t)i, 40 + rep))
          FAIL("alltoallv (rep %d): block from %d (%d bytes), byte %d", rep, p, rc[p], i);
        mark[rd[p] + i] = 1;
      }
    for (size_t i = 0; i < rt; ++i)
      if (!mark[i] && r[GUARD + i] != 0xa5) FAIL("alltoallv (rep %d): byte %zu between blocks overwritten", rep, i);
    check_guards(r, rt, "alltoallv");
    for (int p = 0; p < size; ++p)
      for (int i = 0; i < sc[p]; ++i)
        if (s[sd[p] + i] != pat(rank, p, (size_t)i, 40 + rep)) FAIL("alltoallv changed the send buffer");
    ++nchecks;
    free(mark);
    free(r);
  }
  free(s);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
}

static void allgathers(void) {
  const size_t nb = MiB + 3;
  unsigned char *s = xmalloc(nb);
  expect_heap(s, "allgather send buffer");
  for (int rep = 0; rep < 2; ++rep) {
    for (size_t i = 0; i < nb; ++i) s[i] = pat(rank, 0, i, 50 + rep);
    unsigned char *r = area(nb * size);
    expect_heap(r, "allgather receive area");
    OK(MPI_Allgather(s, (int)nb, MPI_BYTE, r + GUARD, (int)nb, MPI_BYTE, MPI_COMM_WORLD));
    for (int p = 0; p < size; ++p)
      for (size_t i = 0; i < nb; ++i)
        if (r[GUARD + (size_t)p * nb + i] != pat(p, 0, i, 50 + rep)) FAIL("allgather: block from %d, byte %zu", p, i);
    check_guards(r, nb * size, "allgather");
    for (size_t i = 0; i < nb; ++i)
      if (s[i] != pat(rank, 0, i, 50 + rep)) FAIL("allgather changed the send buffer");
    ++nchecks;
    free(r);
  }
  free(s);

  /* Allgatherv: rank p contributes 0 bytes when p % 3 == 1, else 200 KiB + 1001 p;
   * displacements in reverse order with gaps. */
  int *cnt = malloc(sizeof(int) * size), *dsp = malloc(sizeof(int) * size);
  if (!cnt || !dsp) FAIL("out of memory");
  size_t rt = 0;
  for (int p = size - 1; p >= 0; --p) {
    rt += 11 * (size_t)p + 1;
    dsp[p] = (int)rt;
    cnt[p] = p % 3 == 1 ? 0 : (int)(200 * KiB + 1001 * (size_t)p);
    rt += (size_t)cnt[p];
  }
  s = xmalloc(cnt[rank] ? (size_t)cnt[rank] : 1);
  for (int i = 0; i < cnt[rank]; ++i) s[i] = pat(rank, 1, (size_t)i, 60);
  if (cnt[rank]) expect_heap(s, "allgatherv send buffer");
  unsigned char *r = area(rt);
  OK(MPI_Allgatherv(s, cnt[rank], MPI_BYTE, r + GUARD, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD));
  unsigned char *mark = calloc(rt ? rt : 1, 1);
  if (!mark) FAIL("out of memory");
  for (int p = 0; p < size; ++p)
    for (int i = 0; i < cnt[p]; ++i) {
      if (r[GUARD + dsp[p] + i] != pat(p, 1, (size_t)i, 60)) FAIL("allgatherv: block from %d, byte %d", p, i);
      mark[dsp[p] + i] = 1;
    }
  for (size_t i = 0; i < rt; ++i)
    if (!mark[i] && r[GUARD + i] != 0xa5) FAIL("allgatherv: byte %zu between blocks overwritten", i);
  check_guards(r, rt, "allgatherv");
  free(mark);
  free(r);
  free(s);
  free(cnt);
  free(dsp);
}

static void point_to_point(void) {
  const size_t n = MiB + 5;
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  unsigned char *s = xmalloc(n);
  expect_heap(s, "point-to-point send buffer");
  for (size_t i = 0; i < n; ++i) s[i] = pat(rank, to, i, 70);
  unsigned char *r = area(n);
  expect_heap(r, "point-to-point receive area");
  OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, 8, r + GUARD, (int)n, MPI_BYTE, from, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  for (size_t i = 0; i < n; ++i)
    if (r[GUARD + i] != pat(from, rank, i, 70)) FAIL("sendrecv from %d: byte %zu", from, i);
  check_guards(r, n, "sendrecv");

  /* Rewritten send buffer, nonblocking. */
  for (size_t i = 0; i < n; ++i) s[i] = pat(rank, to, i, 71);
  memset(r, 0xa5, n + 2 * GUARD);
  MPI_Request rq[2];
  OK(MPI_Irecv(r + GUARD, (int)n, MPI_BYTE, from, 7, MPI_COMM_WORLD, &rq[0]));
  OK(MPI_Isend(s, (int)n, MPI_BYTE, to, 7, MPI_COMM_WORLD, &rq[1]));
  OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  for (size_t i = 0; i < n; ++i)
    if (r[GUARD + i] != pat(from, rank, i, 71)) FAIL("isend/irecv from %d: byte %zu", from, i);
  check_guards(r, n, "isend/irecv");
  for (size_t i = 0; i < n; ++i)
    if (s[i] != pat(rank, to, i, 71)) FAIL("isend changed the send buffer");
  ++nchecks;

  /* A small glibc buffer into a heap buffer (the rest of it untouched). */
  const size_t m = 1000;
  unsigned char *small = xmalloc(m);
  expect_not_heap(small, "small send buffer");
  for (size_t i = 0; i < m; ++i) small[i] = pat(rank, to, i, 72);
  memset(r, 0xa5, n + 2 * GUARD);
  OK(MPI_Sendrecv(small, (int)m, MPI_BYTE, to, 9, r + GUARD, (int)m, MPI_BYTE, from, 9, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE));
  for (size_t i = 0; i < m; ++i)
    if (r[GUARD + i] != pat(from, rank, i, 72)) FAIL("small sendrecv into the heap from %d: byte %zu", from, i);
  for (size_t i = GUARD + m; i < n + 2 * GUARD; ++i)
    if (r[i] != 0xa5) FAIL("small sendrecv into the heap wrote byte %zu", i);
  for (size_t i = 0; i < GUARD; ++i)
    if (r[i] != 0xa5) FAIL("small sendrecv into the heap: guard overwritten");
  ++nchecks;
  free(small);
  free(r);
  free(s);
}

/* ---- 5. fork --------------------------------------------------------------- */

/* In the child: report and leave with status `code` (no MPI here). */
#define CHILD_FAIL(code, ...)                                    \
  do {                                                           \
    fprintf(stderr, "shared_malloc: fork child of rank %d: ", rank); \
    fprintf(stderr, __VA_ARGS__);                                \
    fprintf(stderr, "\n");                                       \
    fflush(stderr);                                              \
    _exit(code);                                                 \
  } while (0)

static void fork_isolation(void) {
  const size_t n = 2 * MiB;
  enum { P = 1, Q = 2, R = 3 };
  /* Some resident heap below and above, so the heap is more than the buffers. */
  unsigned char *filler = xmalloc(16 * MiB);
  memset(filler, 0x42, 16 * MiB);
  unsigned char *a = xmalloc(n), *b = xmalloc(n);
  expect_heap(a, "fork buffer a");
  expect_heap(b, "fork buffer b");
  bfill(a, n, 80, P);
  bfill(b, n, 81, P);
  int go[2], done[2];
  if (pipe(go) != 0 || pipe(done) != 0) FAIL("pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) FAIL("fork: %s", strerror(errno));
  if (pid == 0) {
    close(go[1]);
    close(done[0]);
    char c;
    if (read(go[0], &c, 1) != 1) CHILD_FAIL(2, "no go from the parent");
    /* The parent has overwritten a with R by now: the child keeps P. */
    size_t i = bfirst_bad(a, n, 80, P);
    if (i != n) CHILD_FAIL(3, "buffer a: byte %zu is %#x, expected %#x as at fork() (the parent's write shows through?)", i, a[i], bpat(80, P, i));
    i = bfirst_bad(b, n, 81, P);
    if (i != n) CHILD_FAIL(4, "buffer b: byte %zu is %#x, expected %#x as at fork()", i, b[i], bpat(81, P, i));
    if (in_shared_heap(a) || in_shared_heap(b)) CHILD_FAIL(5, "the child's buffers are still in a shared heap mapping");
    bfill(a, n, 80, Q);
    bfill(b, n, 81, Q);
    if (bfirst_bad(a, n, 80, Q) != n || bfirst_bad(b, n, 81, Q) != n) CHILD_FAIL(6, "the child's own writes did not stick");
    unsigned char *m = malloc(MiB);
    if (!m) CHILD_FAIL(7, "malloc(1 MiB) failed in the child");
    if (in_shared_heap(m)) CHILD_FAIL(8, "malloc(1 MiB) in the child is in a shared heap mapping");
    bfill(m, MiB, 82, Q);
    if (bfirst_bad(m, MiB, 82, Q) != MiB) CHILD_FAIL(9, "malloc(1 MiB) in the child: pattern lost");
    free(m);
    free(filler); /* dirty memory for the calloc below to reuse */
    unsigned char *z = calloc(1, MiB);
    if (!z) CHILD_FAIL(10, "calloc(1, 1 MiB) failed in the child");
    for (size_t k = 0; k < MiB; ++k)
      if (z[k]) CHILD_FAIL(11, "calloc(1, 1 MiB) in the child: byte %zu is %#x", k, z[k]);
    z = realloc(z, 6 * MiB);
    if (!z) CHILD_FAIL(12, "realloc(6 MiB) failed in the child");
    free(z);
    if (bfirst_bad(a, n, 80, Q) != n || bfirst_bad(b, n, 81, Q) != n) CHILD_FAIL(13, "the child's buffers changed");
    /* Tell the parent the child has written Q, then stay until it has looked. */
    if (write(done[1], "q", 1) != 1) CHILD_FAIL(14, "cannot write to the parent");
    if (read(go[0], &c, 1) != 1) CHILD_FAIL(15, "no second go from the parent");
    _exit(0);
  }
  close(go[0]);
  close(done[1]);
  /* Right after fork(): overwrite a, then let the child look. */
  bfill(a, n, 80, R);
  if (write(go[1], "g", 1) != 1) FAIL("cannot write to the child");
  char c;
  if (read(done[0], &c, 1) != 1) FAIL("the fork child died before writing (see its message)");
  /* The child has written Q over both (it is still alive): not seen here. */
  bcheck(a, n, 80, R, "fork: buffer a in the parent, child alive (the parent wrote R, the child Q)");
  bcheck(b, n, 81, P, "fork: buffer b in the parent, child alive (the child wrote Q)");
  if (write(go[1], "g", 1) != 1) FAIL("cannot write to the child");
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) FAIL("waitpid: %s", strerror(errno));
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork child: %s %d", WIFEXITED(st) ? "exit status" : "signal",
        WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
  bcheck(a, n, 80, R, "fork: buffer a in the parent after the child exited");
  bcheck(b, n, 81, P, "fork: buffer b in the parent after the child exited");
  for (size_t i = 0; i < 16 * MiB; ++i)
    if (filler[i] != 0x42) FAIL("fork: the filler block changed in the parent (byte %zu)", i);
  expect_heap(a, "fork buffer a in the parent after fork");
  close(go[1]);
  close(done[0]);
  free(a);
  free(b);
  free(filler);
  /* The parent's heap still works. */
  unsigned char *z = calloc(1, 4 * MiB);
  if (!z) FAIL("calloc after fork failed");
  expect_heap(z, "calloc(1, 4 MiB) in the parent after fork");
  check_zero(z, 4 * MiB, "calloc(1, 4 MiB) in the parent after fork");
  free(z);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "off"))
      off = 1;
    else
      FAIL("unknown argument %s", argv[i]);
  }
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  /* The sanitizer's own malloc comes first: libshmcoll's never runs, and
     the library must then keep its heap closed, as when it is off. */
  off = 1;
#endif
  threshold = off ? SIZE_MAX : parse_size(getenv("SHMCOLL_SHARED_MALLOC_MIN"), 128 * KiB);

  placement();
  allocator();
  alltoalls();
  alltoallv();
  allgathers();
  point_to_point();
  if (rank == 0) fork_isolation();

  OK(MPI_Barrier(MPI_COMM_WORLD));
  long total = 0;
  OK(MPI_Reduce(&nchecks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  if (rank == 0) printf("shared_malloc: OK (%ld checks)\n", total);
  MPI_Finalize();
  return 0;
}
