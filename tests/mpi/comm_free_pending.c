/*
 * comm_free_pending.c -- MPI_Comm_free while operations on the communicator
 * are still pending.
 *
 * The standard lets a program free a communicator whose sends and receives
 * have not completed: the free only marks it, and the communicator goes once
 * they have.  Each rank posts a receive from its left neighbour and a send to
 * its right one on a duplicate of MPI_COMM_WORLD (eager, streamed and
 * rendezvous sizes, a named source and MPI_ANY_SOURCE), frees the duplicate,
 * makes a new duplicate (which may reuse the freed context id) and exchanges
 * different bytes on it with the same tag, and only then completes the first
 * requests.  Then a receiver frees the communicator before its sender has
 * even sent (the free is local: it must not wait for the sender).  Every
 * receive buffer is bracketed by guard bytes and compared byte for byte:
 * nothing of the second exchange may land in the first.  Last, persistent
 * requests made on a duplicate that is then freed (an inactive persistent
 * request is no pending operation, but it keeps its communicator): started
 * twice after the free and after new duplicates carried other bytes with
 * the same tag, they still talk on their own communicator.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define TAG 7

static int rank, size;

static void fail(const char *what, size_t n, long off, int got, int want) {
  fprintf(stderr, "comm_free_pending: rank %d, %s, %zu bytes: byte %ld is %d, expected %d\n", rank, what, n, off, got,
          want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char pat(int src, int salt, size_t i) {
  return (unsigned char)(src * 37 + salt * 101 + i * 13 + (i >> 8));
}

/* The receive area holds `n` bytes from `src` with `salt` between guards of 0xA5. */
static void check(const unsigned char *area, size_t n, int src, int salt, const char *what) {
  for (long i = 0; i < GUARD; ++i) {
    if (area[i] != 0xA5) fail(what, n, i - GUARD, area[i], 0xA5);
    if (area[GUARD + n + i] != 0xA5) fail(what, n, (long)n + i, area[GUARD + n + i], 0xA5);
  }
  for (size_t i = 0; i < n; ++i)
    if (area[GUARD + i] != pat(src, salt, i)) fail(what, n, (long)i, area[GUARD + i], pat(src, salt, i));
}

static unsigned char *area(size_t n) {
  unsigned char *a = malloc(n + 2 * GUARD);
  memset(a, 0xA5, n + 2 * GUARD);
  return a;
}

static unsigned char *message(size_t n, int salt) {
  unsigned char *m = malloc(n ? n : 1);
  for (size_t i = 0; i < n; ++i) m[i] = pat(rank, salt, i);
  return m;
}

static void one(size_t n, int anySource) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  unsigned char *ra = area(n), *rb = area(n), *sa = message(n, 1), *sb = message(n, 2);
  MPI_Request req[2];
  MPI_Irecv(ra + GUARD, (int)n, MPI_BYTE, anySource ? MPI_ANY_SOURCE : left, TAG, a, &req[0]);
  MPI_Isend(sa, (int)n, MPI_BYTE, right, TAG, a, &req[1]);
  MPI_Comm_free(&a);
  if (a != MPI_COMM_NULL) fail("MPI_Comm_free did not set the handle to MPI_COMM_NULL", n, 0, 0, 0);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  MPI_Sendrecv(sb, (int)n, MPI_BYTE, right, TAG, rb + GUARD, (int)n, MPI_BYTE, left, TAG, b, MPI_STATUS_IGNORE);
  MPI_Status st[2];
  MPI_Waitall(2, req, st);
  int got = -1;
  MPI_Get_count(&st[0], MPI_BYTE, &got);
  if (got != (int)n) fail("received count", n, 0, got, (int)n);
  if (st[0].MPI_SOURCE != left) fail("status source", n, 0, st[0].MPI_SOURCE, left);
  check(ra, n, left, 1, "freed communicator");
  check(rb, n, left, 2, "second communicator");
  MPI_Comm_free(&b);
  free(ra), free(rb), free(sa), free(sb);
}

/* The receiver frees the communicator before the sender has sent: even rank r receives from r + 1 on a
   duplicate, frees it, and only then tells r + 1 (on MPI_COMM_WORLD) to send; r + 1 sends, then frees it.
   A free that waited for the other members would wait for r + 1, which waits for r. */
static void freedBeforeSend(size_t n) {
  const int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
  MPI_Comm a, b;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  unsigned char *ra = area(n), *rb = area(n), *sa = message(n, 3), *sb = message(n, 4);
  char token = 1;
  if (partner >= size) {
    MPI_Comm_free(&a);
  } else if (rank % 2 == 0) {
    MPI_Request req;
    MPI_Irecv(ra + GUARD, (int)n, MPI_BYTE, partner, TAG, a, &req);
    MPI_Comm_free(&a);
    if (a != MPI_COMM_NULL) fail("MPI_Comm_free did not set the handle to MPI_COMM_NULL", n, 0, 0, 0);
    MPI_Send(&token, 1, MPI_CHAR, partner, TAG, MPI_COMM_WORLD);
    MPI_Status st;
    MPI_Wait(&req, &st);
    int got = -1;
    MPI_Get_count(&st, MPI_BYTE, &got);
    if (got != (int)n) fail("received count (freed before the send)", n, 0, got, (int)n);
    check(ra, n, partner, 3, "communicator freed before the send");
  } else {
    MPI_Recv(&token, 1, MPI_CHAR, partner, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(sa, (int)n, MPI_BYTE, partner, TAG, a);
    MPI_Comm_free(&a);
  }
  /* A new duplicate (perhaps with the freed id) carries other bytes with the same tag. */
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  if (partner < size) {
    MPI_Sendrecv(sb, (int)n, MPI_BYTE, partner, TAG, rb + GUARD, (int)n, MPI_BYTE, partner, TAG, b, MPI_STATUS_IGNORE);
    check(rb, n, partner, 4, "duplicate made after the free");
  }
  MPI_Comm_free(&b);
  free(ra), free(rb), free(sa), free(sb);
}

static void persistentAfterFree(size_t n) {
  const int left = (rank + size - 1) % size, right = (rank + 1) % size;
  MPI_Comm a, b[3];
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  unsigned char *ra = area(n), *rb = area(n), *sa = message(n, 5), *sb = message(n, 6);
  MPI_Request req[2];
  MPI_Recv_init(ra + GUARD, (int)n, MPI_BYTE, left, TAG, a, &req[0]);
  MPI_Send_init(sa, (int)n, MPI_BYTE, right, TAG, a, &req[1]);
  MPI_Comm_free(&a);
  for (int k = 0; k < 3; ++k) MPI_Comm_dup(MPI_COMM_WORLD, &b[k]); /* (the freed id is there to take) */
  for (int round = 0; round < 2; ++round) {
    memset(ra, 0xA5, n + 2 * GUARD);
    memset(rb, 0xA5, n + 2 * GUARD);
    /* The persistent receive first and the persistent send last: were both on the
       new duplicate's context, its message would match the persistent receive. */
    MPI_Request other[2];
    MPI_Start(&req[0]);
    MPI_Irecv(rb + GUARD, (int)n, MPI_BYTE, left, TAG, b[round], &other[0]);
    MPI_Isend(sb, (int)n, MPI_BYTE, right, TAG, b[round], &other[1]);
    MPI_Start(&req[1]);
    MPI_Status st[2];
    MPI_Waitall(2, req, st);
    MPI_Waitall(2, other, MPI_STATUSES_IGNORE);
    int got = -1;
    MPI_Get_count(&st[0], MPI_BYTE, &got);
    if (got != (int)n) fail("received count (persistent, freed communicator)", n, 0, got, (int)n);
    check(ra, n, left, 5, "persistent receive on a freed communicator");
    check(rb, n, left, 6, "duplicate made after the free, beside persistent requests");
  }
  MPI_Request_free(&req[0]);
  MPI_Request_free(&req[1]);
  for (int k = 0; k < 3; ++k) MPI_Comm_free(&b[k]);
  free(ra), free(rb), free(sa), free(sb);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static const size_t sizes[] = {0, 1, 100, 4000, 5000, 70000, 1 << 20, 3 << 20};
  for (int any = 0; any < 2; ++any)
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) one(sizes[i], any);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) freedBeforeSend(sizes[i]);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) persistentAfterFree(sizes[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("comm_free_pending: OK\n");
  MPI_Finalize();
  return 0;
}
