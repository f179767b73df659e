/*
 * coll_bigcount.c -- the MPI-4 big-count (_c) collectives with counts and
 * displacements beyond what an int can hold.
 *
 * Written against the standard MPI C API only (MPI 4.0 _c functions).
 *
 *  1. MPI_Bcast_c of 2^31 + 4160 MPI_BYTE elements (a count above INT_MAX,
 *     more than 2 GiB in one collective) from every root in turn, checked in
 *     full against a position-dependent pattern, with guard bytes after the
 *     buffer.
 *  2. MPI_Allgatherv_c whose displacements (MPI_Aint) put the blocks beyond
 *     the 2 GiB mark of the receive buffer; only the blocks and the bytes
 *     around them are touched, so the untouched pages cost no memory.
 *  3. MPI_Alltoall_c, MPI_Gather_c, MPI_Scatter_c, MPI_Allreduce_c and
 *     MPI_Reduce_scatter_block_c with modest MPI_Count counts, against the
 *     values their int forms must give.
 *
 * Usage: coll_bigcount [small]   ("small" skips part 1, for quick runs)
 * Memory: part 1 needs about 2.1 GiB per rank, resident.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void fail(const char *what, long long at, int got, int want) {
  fprintf(stderr, "coll_bigcount: rank %d: %s: byte/element %lld holds %d, expected %d\n", rank, what, at, got,
          want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void check_rc(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, s, &len);
    fprintf(stderr, "coll_bigcount: rank %d: %s returned %s\n", rank, what, s);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

static unsigned char pattern(uint64_t i, int root) {
  return (unsigned char)((i * 131u) ^ (i >> 17) ^ (i >> 29) ^ (uint64_t)(root * 77 + 1));
}

static void part_bcast(void) {
  const MPI_Count n = ((MPI_Count)1 << 31) + 4160;
  const size_t guard = 4096;
  unsigned char *buf = malloc((size_t)n + guard);
  if (!buf) {
    fprintf(stderr, "coll_bigcount: rank %d: cannot allocate %lld bytes\n", rank, (long long)n);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  for (int root = 0; root < size; ++root) {
    if (rank == root)
      for (uint64_t i = 0; i < (uint64_t)n; ++i) buf[i] = pattern(i, root);
    else
      memset(buf, 0xEE, (size_t)n);
    memset(buf + n, 0xA5, guard);
    check_rc(MPI_Bcast_c(buf, n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast_c");
    for (uint64_t i = 0; i < (uint64_t)n; ++i)
      if (buf[i] != pattern(i, root)) fail("MPI_Bcast_c", (long long)i, buf[i], pattern(i, root));
    for (size_t i = 0; i < guard; ++i)
      if (buf[n + i] != 0xA5) fail("MPI_Bcast_c guard", (long long)(n + i), buf[n + i], 0xA5);
  }
  free(buf);
}

static void part_far_displacements(void) {
  const MPI_Count block = 1 << 20;
  const MPI_Aint base = ((MPI_Aint)1 << 31) + 12345;  /* beyond INT_MAX */
  const MPI_Aint stride = block + 4096;
  const size_t total = (size_t)(base + stride * size + 4096);
  unsigned char *recv = malloc(total);
  unsigned char *send = malloc((size_t)block);
  MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
  MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size);
  if (!recv || !send || !counts || !displs) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int p = 0; p < size; ++p) {
    counts[p] = block;
    displs[p] = base + stride * (size - 1 - p); /* reversed order */
  }
  for (MPI_Count i = 0; i < block; ++i) send[i] = pattern((uint64_t)i, rank + 100);
  /* Sentinels: the 4 KiB before the first block, the gaps, and after the last. */
  memset(recv + base - 4096, 0x5A, (size_t)(stride * size + 8192));
  check_rc(MPI_Allgatherv_c(send, block, MPI_BYTE, recv, counts, displs, MPI_BYTE, MPI_COMM_WORLD),
           "MPI_Allgatherv_c");
  for (MPI_Aint off = base - 4096; off < base + stride * size + 4096; ++off) {
    MPI_Aint rel = off - base;
    int want = 0x5A;
    if (rel >= 0 && rel < stride * size && rel % stride < block) {
      int p = size - 1 - (int)(rel / stride);
      want = pattern((uint64_t)(rel % stride), p + 100);
    }
    if (recv[off] != want) fail("MPI_Allgatherv_c", (long long)off, recv[off], want);
  }
  free(recv);
  free(send);
  free(counts);
  free(displs);
}

static int val(int r, long long i) { return (int)(r * 100003 + i * 7 + 1); }

static void part_small(void) {
  const MPI_Count c = 3001;
  int *in = malloc(sizeof(int) * c * size), *out = malloc(sizeof(int) * (c * size + 1)),
      *ref = malloc(sizeof(int) * (c * size + 1));
  for (MPI_Count i = 0; i < c * size; ++i) in[i] = val(rank, i);

  /* MPI_Alltoall_c against MPI_Alltoall. */
  out[c * size] = ref[c * size] = -9;
  check_rc(MPI_Alltoall_c(in, c, MPI_INT, out, c, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall_c");
  check_rc(MPI_Alltoall(in, (int)c, MPI_INT, ref, (int)c, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
  for (MPI_Count i = 0; i <= c * size; ++i)
    if (out[i] != ref[i]) fail("MPI_Alltoall_c vs MPI_Alltoall", (long long)i, out[i], ref[i]);
  for (MPI_Count i = 0; i < c * size; ++i)
    if (out[i] != val((int)(i / c), rank * c + i % c)) fail("MPI_Alltoall_c", (long long)i, out[i], 0);

  /* MPI_Gather_c / MPI_Scatter_c with the last rank as root. */
  const int root = size - 1;
  for (MPI_Count i = 0; i <= c * size; ++i) out[i] = -1;
  check_rc(MPI_Gather_c(in, c, MPI_INT, out, c, MPI_INT, root, MPI_COMM_WORLD), "MPI_Gather_c");
  for (MPI_Count i = 0; i <= c * size; ++i) {
    int want = (rank == root && i < c * size) ? val((int)(i / c), i % c) : -1;
    if (out[i] != want) fail("MPI_Gather_c", (long long)i, out[i], want);
  }
  for (MPI_Count i = 0; i <= c; ++i) out[i] = -1;
  check_rc(MPI_Scatter_c(in, c, MPI_INT, out, c, MPI_INT, root, MPI_COMM_WORLD), "MPI_Scatter_c");
  for (MPI_Count i = 0; i <= c; ++i) {
    int want = i < c ? val(root, rank * c + i) : -1;
    if (out[i] != want) fail("MPI_Scatter_c", (long long)i, out[i], want);
  }

  /* MPI_Allreduce_c and MPI_Reduce_scatter_block_c with MPI_SUM on int. */
  for (MPI_Count i = 0; i <= c * size; ++i) out[i] = -1;
  check_rc(MPI_Allreduce_c(in, out, c * size, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce_c");
  for (MPI_Count i = 0; i <= c * size; ++i) {
    long long want = 0;
    for (int r = 0; r < size; ++r) want += val(r, i);
    if (i == c * size) want = -1;
    if (out[i] != (int)want) fail("MPI_Allreduce_c", (long long)i, out[i], (int)want);
  }
  for (MPI_Count i = 0; i <= c; ++i) out[i] = -1;
  check_rc(MPI_Reduce_scatter_block_c(in, out, c, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Reduce_scatter_block_c");
  for (MPI_Count i = 0; i <= c; ++i) {
    long long want = 0;
    for (int r = 0; r < size; ++r) want += val(r, rank * c + i);
    if (i == c) want = -1;
    if (out[i] != (int)want) fail("MPI_Reduce_scatter_block_c", (long long)i, out[i], (int)want);
  }
  free(in);
  free(out);
  free(ref);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int small = argc > 1 && strcmp(argv[1], "small") == 0;
  part_small();
  part_far_displacements();
  if (!small) part_bcast();
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("coll_bigcount: %d ranks: ok%s\n", size, small ? " (small)" : "");
  MPI_Finalize();
  return 0;
}
