/*
 * type_free_pending.c -- MPI_Type_free while nonblocking operations use the
 * datatype.
 *
 * The standard: freeing a datatype does not affect any operation using it
 * that is pending; the type goes once they complete.  Each rank posts a
 * receive from its left neighbour with a strided vector type (and a resized
 * struct of two blocks), sends to its right neighbour with such a type,
 * frees both types, makes other types (which may reuse the freed handles)
 * and only then lets the messages arrive (a barrier before the sends) and
 * completes them.  The receive buffer must hold the data in the vector's
 * blocks only: its holes and the guards around it keep their sentinel.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64

static int rank, size;

static void fail(const char *what, long count, long off, int got, int want) {
  fprintf(stderr, "type_free_pending: rank %d, %s, count %ld: byte %ld is %d, expected %d\n", rank, what, count, off,
          got, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int src, long i) { return (unsigned char)(src * 53 + i * 7 + (i >> 8) + 1); }

/* A committed type covering `blk` bytes out of every `stride`, `nblk` times. */
static MPI_Datatype makeVector(int nblk, int blk, int stride) {
  MPI_Datatype t;
  MPI_Type_vector(nblk, blk, stride, MPI_BYTE, &t);
  MPI_Type_commit(&t);
  return t;
}

static void one(long count, int nblk, int blk, int stride, int useStruct) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Datatype rt = makeVector(nblk, blk, stride), st;
  if (useStruct) {
    /* Sender side: two blocks (a vector and a gap-free run), a different layout with the same signature. */
    int lens[2] = {1, nblk * blk / 2};
    MPI_Aint disp[2] = {0, (MPI_Aint)(nblk * blk) * 3};
    MPI_Datatype half = makeVector(nblk / 2, blk, stride), types[2] = {half, MPI_BYTE}, tmp;
    MPI_Type_create_struct(2, lens, disp, types, &tmp);
    MPI_Type_create_resized(tmp, 0, (MPI_Aint)(nblk * blk) * 4, &st);
    MPI_Type_commit(&st);
    MPI_Type_free(&tmp);
    MPI_Type_free(&half);
  } else {
    st = makeVector(nblk, blk, stride + 5);
  }
  MPI_Aint lb, rext, sext;
  MPI_Type_get_extent(rt, &lb, &rext);
  MPI_Type_get_extent(st, &lb, &sext);
  const size_t rbytes = (size_t)(rext * count), sbytes = (size_t)(sext * count);
  unsigned char *rbuf = malloc(rbytes + 2 * GUARD), *sbuf = malloc(sbytes), *image = malloc(rbytes + 2 * GUARD);
  memset(rbuf, 0xA5, rbytes + 2 * GUARD);
  memset(sbuf, 0x5A, sbytes);
  memcpy(image, rbuf, rbytes + 2 * GUARD);
  /* Signature byte k goes to receive offset pos(k), from send offset spos(k). */
  long k = 0;
  for (long e = 0; e < count; ++e)
    for (int b = 0; b < nblk; ++b)
      for (int j = 0; j < blk; ++j, ++k) image[GUARD + e * rext + (long)b * stride + j] = pat(left, k);
  k = 0;
  for (long e = 0; e < count; ++e) {
    unsigned char *base = sbuf + e * sext;
    if (useStruct) {
      for (int b = 0; b < nblk / 2; ++b)
        for (int j = 0; j < blk; ++j, ++k) base[(long)b * stride + j] = pat(rank, k);
      for (int j = 0; j < nblk * blk / 2; ++j, ++k) base[(long)nblk * blk * 3 + j] = pat(rank, k);
    } else {
      for (int b = 0; b < nblk; ++b)
        for (int j = 0; j < blk; ++j, ++k) base[(long)b * (stride + 5) + j] = pat(rank, k);
    }
  }
  MPI_Request req[2];
  MPI_Irecv(rbuf + GUARD, (int)count, rt, left, 3, MPI_COMM_WORLD, &req[0]);
  MPI_Type_free(&rt);
  if (rt != MPI_DATATYPE_NULL) fail("MPI_Type_free did not set the handle to MPI_DATATYPE_NULL", count, 0, 0, 0);
  /* Other types made and freed meanwhile must not disturb the pending receive. */
  MPI_Datatype other[4];
  for (int i = 0; i < 4; ++i) {
    MPI_Type_contiguous(i + 2, MPI_INT, &other[i]);
    MPI_Type_commit(&other[i]);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Isend(sbuf, (int)count, st, right, 3, MPI_COMM_WORLD, &req[1]);
  MPI_Type_free(&st);
  for (int i = 0; i < 4; ++i) MPI_Type_free(&other[i]);
  MPI_Status sts[2];
  MPI_Waitall(2, req, sts);
  for (size_t i = 0; i < rbytes + 2 * GUARD; ++i)
    if (rbuf[i] != image[i])
      fail(useStruct ? "vector receive from a struct" : "vector receive", count, (long)i - GUARD, rbuf[i], image[i]);
  free(rbuf), free(sbuf), free(image);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const long counts[] = {1, 3, 100, 2000, 20000};
  for (int s = 0; s < 2; ++s)
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; ++i) {
      one(counts[i], 4, 3, 8, s);
      one(counts[i], 2, 64, 200, s);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("type_free_pending: OK\n");
  MPI_Finalize();
  return 0;
}
