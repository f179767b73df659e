/*
 * alloc_mem.c -- MPI_Alloc_mem / MPI_Free_mem, and communication from and
 * into such memory.
 *
 * Standard API only (builds against Open MPI and MPICH too).  Under shmcoll
 * the memory comes from the rank's heap in the shared segment (peers read it
 * with a plain copy); larger requests than the heap holds get private memory.
 * Either way every byte moved must arrive, byte for byte, with the guard
 * bytes around each receive area untouched:
 *  - many allocations of mixed sizes (0 B .. 4 MiB, so some exceed a 2 MiB
 *    heap), written, checked and freed in a scrambled order; allocating again
 *    after freeing must succeed (the heap coalesces);
 *  - MPI_Alltoall with 256 KiB blocks, MPI_Bcast of 1 MiB + 3 bytes from every
 *    root, MPI_Allgather, and point-to-point (ring, 1 MiB + 5 bytes, blocking
 *    and nonblocking) from Alloc_mem buffers into plain and Alloc_mem buffers;
 *  - errors (MPI_ERRORS_RETURN): a negative size (class MPI_ERR_SIZE under
 *    shmcoll, any error elsewhere); under shmcoll also MPI_Free_mem of a
 *    pointer MPI_Alloc_mem did not return (MPI_ERR_BASE).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
static long nchecks;

#define PROG "alloc_mem"
#include "abortutil.h"

enum { GUARD = 64 };

static unsigned char pat(int from, int to, size_t i, int salt) {
  uint32_t x = (uint32_t)from * 2654435761u ^ (uint32_t)to * 40503u ^ (uint32_t)i * 2246822519u ^ (uint32_t)salt;
  x ^= x >> 13;
  x *= 0x5bd1e995u;
  return (unsigned char)(x ^ (x >> 15));
}

static void *alloc(size_t n) {
  void *p = NULL;
  OK(MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p));
  if (!p && n) FAIL("MPI_Alloc_mem(%zu) gave NULL", n); /* Open MPI gives NULL for 0 bytes */
  return p;
}

/* A receive area of n bytes with guards, in Alloc_mem memory or not. */
static unsigned char *area(size_t n, int shared) {
  unsigned char *a = shared ? alloc(n + 2 * GUARD) : malloc(n + 2 * GUARD);
  if (!a) FAIL("out of memory");
  memset(a, 0xa5, n + 2 * GUARD);
  return a;
}
static void free_area(unsigned char *a, int shared) {
  if (shared)
    OK(MPI_Free_mem(a));
  else
    free(a);
}
static void check_guards(const unsigned char *a, size_t n, const char *what) {
  for (size_t i = 0; i < GUARD; ++i)
    if (a[i] != 0xa5 || a[GUARD + n + i] != 0xa5) FAIL("%s: guard byte overwritten", what);
  ++nchecks;
}

static void allocations(void) {
  enum { K = 40 };
  void *p[K];
  size_t n[K];
  for (int k = 0; k < K; ++k) {
    n[k] = k == 0 ? 0 : (size_t)1 << (k % 23);
    if (k % 7 == 3) n[k] += 13;
    p[k] = alloc(n[k]);
    memset(p[k], k, n[k]);
  }
  for (int j = 0; j < K; ++j) {
    int k = (j * 17) % K;
    for (size_t i = 0; i < n[k]; ++i)
      if (((unsigned char *)p[k])[i] != (unsigned char)k) FAIL("allocation %d (%zu bytes) was overwritten", k, n[k]);
    OK(MPI_Free_mem(p[k]));
    ++nchecks;
  }
  /* Everything freed: a large block fits again. */
  for (int r = 0; r < 3; ++r) {
    void *q = alloc(1 << 20);
    memset(q, r, 1 << 20);
    OK(MPI_Free_mem(q));
  }
}

static void collectives(int sharedRecv) {
  const size_t blk = 256 * 1024;
  unsigned char *s = alloc(blk * size);
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i) s[p * blk + i] = pat(rank, p, i, 1);
  unsigned char *r = area(blk * size, sharedRecv);
  OK(MPI_Alltoall(s, (int)blk, MPI_BYTE, r + GUARD, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i)
      if (r[GUARD + p * blk + i] != pat(p, rank, i, 1)) FAIL("alltoall: block from %d, byte %zu", p, i);
  check_guards(r, blk * size, "alltoall");
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i)
      if (s[p * blk + i] != pat(rank, p, i, 1)) FAIL("alltoall changed the send buffer");
  free_area(r, sharedRecv);

  r = area(blk * size, sharedRecv);
  OK(MPI_Allgather(s, (int)blk, MPI_BYTE, r + GUARD, (int)blk, MPI_BYTE, MPI_COMM_WORLD));
  for (int p = 0; p < size; ++p)
    for (size_t i = 0; i < blk; ++i)
      if (r[GUARD + p * blk + i] != pat(p, 0, i, 1)) FAIL("allgather: block from %d, byte %zu", p, i);
  check_guards(r, blk * size, "allgather");
  free_area(r, sharedRecv);
  OK(MPI_Free_mem(s));

  const size_t nb = (1 << 20) + 3;
  for (int root = 0; root < size; ++root) {
    unsigned char *b = rank == root ? alloc(nb + 2 * GUARD) : area(nb, sharedRecv);
    if (rank == root) {
      memset(b, 0xa5, nb + 2 * GUARD);
      for (size_t i = 0; i < nb; ++i) b[GUARD + i] = pat(root, 9, i, 2);
    }
    OK(MPI_Bcast(b + GUARD, (int)nb, MPI_BYTE, root, MPI_COMM_WORLD));
    for (size_t i = 0; i < nb; ++i)
      if (b[GUARD + i] != pat(root, 9, i, 2)) FAIL("bcast from %d: byte %zu", root, i);
    check_guards(b, nb, "bcast");
    if (rank == root)
      OK(MPI_Free_mem(b));
    else
      free_area(b, sharedRecv);
  }
}

static void point_to_point(int sharedRecv) {
  const size_t n = (1 << 20) + 5;
  const int to = (rank + 1) % size, from = (rank + size - 1) % size;
  unsigned char *s = alloc(n);
  for (size_t i = 0; i < n; ++i) s[i] = pat(rank, to, i, 3);
  unsigned char *r = area(n, sharedRecv);
  MPI_Request rq[2];
  OK(MPI_Irecv(r + GUARD, (int)n, MPI_BYTE, from, 7, MPI_COMM_WORLD, &rq[0]));
  OK(MPI_Isend(s, (int)n, MPI_BYTE, to, 7, MPI_COMM_WORLD, &rq[1]));
  OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  for (size_t i = 0; i < n; ++i)
    if (r[GUARD + i] != pat(from, rank, i, 3)) FAIL("isend/irecv from %d: byte %zu", from, i);
  check_guards(r, n, "isend/irecv");
  memset(r, 0xa5, n + 2 * GUARD);
  OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, 8, r + GUARD, (int)n, MPI_BYTE, from, 8, MPI_COMM_WORLD,
                  MPI_STATUS_IGNORE));
  for (size_t i = 0; i < n; ++i)
    if (r[GUARD + i] != pat(from, rank, i, 3)) FAIL("sendrecv from %d: byte %zu", from, i);
  check_guards(r, n, "sendrecv");
  for (size_t i = 0; i < n; ++i)
    if (s[i] != pat(rank, to, i, 3)) FAIL("the send buffer changed");
  free_area(r, sharedRecv);
  OK(MPI_Free_mem(s));
}

static void errors(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  void *p = NULL;
  int rc = MPI_Alloc_mem(-1, MPI_INFO_NULL, &p);
  if (rc == MPI_SUCCESS) FAIL("MPI_Alloc_mem(-1) succeeded");
#ifdef SHMCOLL
  int cls = -1;
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_SIZE) FAIL("MPI_Alloc_mem(-1): class %d, expected MPI_ERR_SIZE", cls);
  int local;
  rc = MPI_Free_mem(&local);
  MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_BASE) FAIL("MPI_Free_mem of a stack address: class %d, expected MPI_ERR_BASE", cls);
#endif
  ++nchecks;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  allocations();
  for (int shared = 0; shared < 2; ++shared) {
    collectives(shared);
    point_to_point(shared);
  }
  errors();
  long total = 0;
  MPI_Reduce(&nchecks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("alloc_mem: ok ranks=%d checks=%ld\n", size, total);
  MPI_Finalize();
  return 0;
}
