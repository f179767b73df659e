/*
 * coll_rooted.c -- MPI_Bcast, MPI_Gather, MPI_Gatherv, MPI_Scatter and
 * MPI_Scatterv, checked byte for byte.
 *
 * Written against the standard MPI C API only (the same source builds with
 * Open MPI's and MPICH's mpicc).
 *
 * For every root of MPI_COMM_WORLD and of a communicator with reversed ranks,
 * at block sizes from 0 to 1 MiB: each byte that moves carries a value that
 * names its sender, its receiver and its index; every receive area has guard
 * bytes around it and between blocks (gaps in the v-variants, whose
 * displacements are reversed and spaced out), which must keep their
 * sentinel; send buffers must not change.  The root uses MPI_IN_PLACE in
 * every other case.  Bcast also runs with different type maps at the root
 * (a strided vector) and elsewhere (contiguous ints), as only the type
 * signatures must agree.  The v-variants also run with a few large blocks
 * among small ones.  Invalid roots must give MPI_ERR_ROOT.
 * `coll_rooted bcast BYTES` runs one MPI_Bcast of BYTES from rank 0 alone.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank;
static long long nbytes_checked;
static const unsigned char SENT = 0xA7;

static unsigned char val(int src, int dst, long long i) {
  unsigned x = (unsigned)(src * 131 + dst * 977) + (unsigned)i * 2654435761u;
  return (unsigned char)(x >> 13 ^ x);
}

static void fail(const char *what, int n, int root, long long count, long long at, int got, int want) {
  fprintf(stderr, "coll_rooted: world rank %d: %s (comm size %d, root %d, count %lld): byte %lld is 0x%02x, expected 0x%02x\n",
          wrank, what, n, root, count, at, got, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void ok(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "coll_rooted: world rank %d: %s returned %d\n", wrank, what, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

#define G 64 /* guard bytes before and after */

static void t_bcast(MPI_Comm comm, int root, long long count) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  unsigned char *buf = malloc((size_t)count + 2 * G);
  memset(buf, SENT, (size_t)count + 2 * G);
  for (long long i = 0; i < count; i++)
    if (me == root) buf[G + i] = val(root, 0, i);
  ok(MPI_Bcast(buf + G, (int)count, MPI_BYTE, root, comm), "MPI_Bcast");
  for (long long i = 0; i < count + 2 * G; i++) {
    int want = (i >= G && i < G + count) ? val(root, 0, i - G) : SENT;
    if (buf[i] != want) fail("MPI_Bcast", n, root, count, i - G, buf[i], want);
  }
  nbytes_checked += count;
  free(buf);
}

/* Bcast of ints: a vector (every other int) at the root, contiguous elsewhere. */
static void t_bcast_types(MPI_Comm comm, int root, int count) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  MPI_Datatype vec;
  MPI_Type_vector(count, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int *buf = malloc(sizeof(int) * (2 * (size_t)count + 2));
  for (int i = 0; i < 2 * count + 2; i++) buf[i] = -1;
  if (me == root) {
    for (int i = 0; i < count; i++) buf[2 * i] = i * 7 + root;
    ok(MPI_Bcast(buf, 1, vec, root, comm), "MPI_Bcast(vector)");
    for (int i = 0; i < 2 * count + 2; i++) {
      int want = (i % 2 == 0 && i < 2 * count) ? (i / 2) * 7 + root : -1;
      if (buf[i] != want) fail("MPI_Bcast(vector) changed the root's buffer", n, root, count, i, buf[i], want);
    }
  } else {
    ok(MPI_Bcast(buf, count, MPI_INT, root, comm), "MPI_Bcast(int)");
    for (int i = 0; i < 2 * count + 2; i++) {
      int want = i < count ? i * 7 + root : -1;
      if (buf[i] != want) fail("MPI_Bcast(vector -> int)", n, root, count, i, buf[i], want);
    }
  }
  MPI_Type_free(&vec);
  free(buf);
}

/* Gather (v = 0) and gatherv (v = 1): rank p sends cnt(p) bytes. */
/* v = 1: varied counts; v = 2: every third rank's block is 200000 bytes and
 * the others `count` (small blocks travel inline, large ones are pulled or
 * streamed, and the two kinds meet in one call) */
static long long gcount(int v, int p, long long count) {
  if (v == 2) return p % 3 == 1 ? 200000 : count;
  return v ? (count * (p + 1)) % (2 * count + 3) : count;
}

static void t_gather(MPI_Comm comm, int root, long long count, int v, int in_place) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
  long long total = 0;
  for (int p = 0; p < n; p++) total += gcount(v, p, count) + (v ? 16 : 0);
  /* v: blocks in reverse rank order with 16-byte gaps; else uniform */
  long long off = 0;
  for (int p = v ? n - 1 : 0; v ? p >= 0 : p < n; p += v ? -1 : 1) {
    counts[p] = (int)gcount(v, p, count);
    displs[p] = (int)(v ? off + 16 : (long long)p * count);
    off += counts[p] + (v ? 16 : 0);
  }
  long long mine = gcount(v, me, count);
  unsigned char *send = malloc((size_t)mine + 1), *recv = malloc((size_t)total + 2 * G);
  for (long long i = 0; i < mine; i++) send[i] = val(me, root, i);
  memset(recv, SENT, (size_t)total + 2 * G);
  const void *sb = send;
  if (me == root && in_place) {
    memcpy(recv + G + displs[me], send, (size_t)mine);
    sb = MPI_IN_PLACE;
  }
  if (v)
    ok(MPI_Gatherv(sb, (int)mine, MPI_BYTE, recv + G, counts, displs, MPI_BYTE, root, comm), "MPI_Gatherv");
  else
    ok(MPI_Gather(sb, (int)mine, MPI_BYTE, recv + G, (int)count, MPI_BYTE, root, comm), "MPI_Gather");
  for (long long i = 0; i < total + 2 * G; i++) {
    int want = SENT;
    if (me == root)
      for (int p = 0; p < n; p++)
        if (i - G >= displs[p] && i - G < displs[p] + counts[p]) want = val(p, root, i - G - displs[p]);
    if (recv[i] != want) fail(v ? "MPI_Gatherv" : "MPI_Gather", n, root, count, i - G, recv[i], want);
  }
  for (long long i = 0; i < mine; i++)
    if (send[i] != val(me, root, i)) fail("send buffer changed", n, root, count, i, send[i], val(me, root, i));
  nbytes_checked += total;
  free(counts), free(displs), free(send), free(recv);
}

static void t_scatter(MPI_Comm comm, int root, long long count, int v, int in_place) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
  long long total = 0, off = 0;
  for (int p = 0; p < n; p++) total += gcount(v, p, count) + (v ? 16 : 0);
  for (int p = v ? n - 1 : 0; v ? p >= 0 : p < n; p += v ? -1 : 1) {
    counts[p] = (int)gcount(v, p, count);
    displs[p] = (int)(v ? off + 16 : (long long)p * count);
    off += counts[p] + (v ? 16 : 0);
  }
  unsigned char *send = malloc((size_t)total + 1);
  memset(send, SENT, (size_t)total + 1);
  for (int p = 0; p < n; p++)
    for (long long i = 0; i < counts[p]; i++) send[displs[p] + i] = val(root, p, i);
  long long mine = gcount(v, me, count);
  unsigned char *recv = malloc((size_t)mine + 2 * G);
  memset(recv, SENT, (size_t)mine + 2 * G);
  void *rb = recv + G;
  if (me == root && in_place) rb = MPI_IN_PLACE;
  if (v)
    ok(MPI_Scatterv(send, counts, displs, MPI_BYTE, rb, (int)mine, MPI_BYTE, root, comm), "MPI_Scatterv");
  else
    ok(MPI_Scatter(send, (int)count, MPI_BYTE, rb, (int)mine, MPI_BYTE, root, comm), "MPI_Scatter");
  for (long long i = 0; i < mine + 2 * G; i++) {
    int want = SENT;
    if (!(me == root && in_place) && i >= G && i < G + mine) want = val(root, me, i - G);
    if (recv[i] != want) fail(v ? "MPI_Scatterv" : "MPI_Scatter", n, root, count, i - G, recv[i], want);
  }
  if (me == root)
    for (int p = 0; p < n; p++)
      for (long long i = 0; i < counts[p]; i++)
        if (send[displs[p] + i] != val(root, p, i)) fail("root's send buffer changed", n, root, count, i, 0, 0);
  nbytes_checked += mine;
  free(counts), free(displs), free(send), free(recv);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int wsize;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 1, wsize - wrank, &rev);
  MPI_Comm comms[2] = {MPI_COMM_WORLD, rev};
  const long long counts[] = {0, 1, 13, 4096, 70000, 1 << 20};
  int ncounts = argc > 1 && strcmp(argv[1], "quick") == 0 ? 5 : 6;
  if (argc > 2 && strcmp(argv[1], "bcast") == 0) {
    /* one MPI_Bcast of argv[2] bytes from rank 0 (the launcher tests read
       which algorithm ran it) */
    t_bcast(MPI_COMM_WORLD, 0, atoll(argv[2]));
    MPI_Comm_free(&rev);
    MPI_Finalize();
    return 0;
  }
  for (int c = 0; c < 2; c++)
    for (int root = 0; root < wsize; root++)
      for (int k = 0; k < ncounts; k++) {
        long long cnt = counts[k];
        t_bcast(comms[c], root, cnt);
        if (cnt * wsize <= (8 << 20)) {
          for (int v = 0; v < 2; v++) {
            t_gather(comms[c], root, cnt, v, (root + k + v) % 2);
            t_scatter(comms[c], root, cnt, v, (root + k + v + 1) % 2);
          }
          if (cnt == 13) {
            t_gather(comms[c], root, cnt, 2, root % 2);
            t_scatter(comms[c], root, cnt, 2, (root + 1) % 2);
          }
        }
      }
  for (int root = 0; root < wsize; root++) {
    t_bcast_types(rev, root, 5);
    t_bcast_types(MPI_COMM_WORLD, root, 30000);
  }
  /* invalid roots */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 0, cls;
  int rc = MPI_Bcast(&x, 1, MPI_INT, wsize, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  if (rc == MPI_SUCCESS || cls != MPI_ERR_ROOT) fail("MPI_Bcast(root = size) must fail with MPI_ERR_ROOT", wsize, wsize, 1, 0, cls, MPI_ERR_ROOT);
  rc = MPI_Gather(&x, 1, MPI_INT, &x, 1, MPI_INT, -5, MPI_COMM_WORLD);
  MPI_Error_class(rc, &cls);
  if (rc == MPI_SUCCESS || cls != MPI_ERR_ROOT) fail("MPI_Gather(root = -5) must fail with MPI_ERR_ROOT", wsize, -5, 1, 0, cls, MPI_ERR_ROOT);
  long long total = 0;
  MPI_Allreduce(&nbytes_checked, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&rev);
  if (wrank == 0) printf("coll_rooted: %d ranks: ok (%lld bytes checked)\n", wsize, total);
  MPI_Finalize();
  return 0;
}
