/*
 * idup_order.c -- MPI_Comm_idup on overlapping communicators, started in
 * different orders on different ranks.
 *
 * The standard orders nonblocking collectives per communicator only, so a
 * rank may start idup(A) then idup(B) while another starts idup(B) then
 * idup(A), and both complete.  Here A and B are duplicates of
 * MPI_COMM_WORLD, and C a split holding the even ranks (which overlaps both);
 * even and odd ranks start the idups in opposite orders, in a loop, with a
 * blocking duplicate of a fourth communicator in between on some
 * iterations.  Each new communicator must then work (an allreduce of ranks
 * and a ring exchange with guarded, byte-exact data), and they are freed in
 * opposite orders as well: MPI_Comm_free is local, so that completes too.
 * Last, the pattern of one communicator per pair of neighbours: rank r
 * duplicates (r, r + 1)'s, then (r - 1, r)'s, and frees them in that order,
 * which every rank starting with its own makes a cycle.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void fail(const char *what, int it, int got, int want) {
  fprintf(stderr, "idup_order: rank %d, iteration %d: %s: %d, expected %d\n", rank, it, what, got, want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* The communicator works: same size, a sum of ranks, a ring of 16 bytes with guards. */
static void use(MPI_Comm c, MPI_Comm like, int it) {
  int n, m, me, sum = 0;
  MPI_Comm_size(c, &n);
  MPI_Comm_size(like, &m);
  if (n != m) fail("size of the duplicate", it, n, m);
  MPI_Comm_rank(c, &me);
  MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, c);
  if (sum != n * (n - 1) / 2) fail("sum of ranks", it, sum, n * (n - 1) / 2);
  unsigned char out[16], in[16 + 8];
  for (int i = 0; i < 16; ++i) out[i] = (unsigned char)(me * 31 + i + it);
  memset(in, 0xA5, sizeof in);
  MPI_Sendrecv(out, 16, MPI_BYTE, (me + 1) % n, it, in + 4, 16, MPI_BYTE, (me + n - 1) % n, it, c, MPI_STATUS_IGNORE);
  const int left = (me + n - 1) % n;
  for (int i = 0; i < 24; ++i) {
    const int want = i < 4 || i >= 20 ? 0xA5 : (unsigned char)(left * 31 + (i - 4) + it);
    if (in[i] != want) fail("ring byte", it, in[i], want);
  }
}

/* Communicator k holds world ranks k and k + 1 (mod size); rank r is in its own (r) and its left one (r - 1). */
static void pairs(void) {
  MPI_Comm own = MPI_COMM_NULL, left = MPI_COMM_NULL;
  for (int k = 0; k < size; ++k) {
    const int in = rank == k || rank == (k + 1) % size;
    MPI_Comm t;
    MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank == k ? 0 : 1, &t);
    if (rank == k)
      own = t;
    else if (in)
      left = t;
  }
  if (size == 1) left = own; /* (the only pair is itself) */
  MPI_Comm nown, nleft;
  MPI_Request r[2];
  MPI_Status st[2];
  MPI_Comm_idup(own, &nown, &r[0]);
  if (size > 1) MPI_Comm_idup(left, &nleft, &r[1]);
  MPI_Waitall(size > 1 ? 2 : 1, r, st);
  /* (No collective on them here: run in this order they would make the cycle a real deadlock.) */
  int cmp = -1;
  MPI_Comm_compare(nown, own, &cmp);
  if (cmp != MPI_CONGRUENT) fail("MPI_Comm_compare of the duplicate of the own pair", 100, cmp, MPI_CONGRUENT);
  MPI_Comm_free(&nown);
  if (size > 1) {
    MPI_Comm_compare(nleft, left, &cmp);
    if (cmp != MPI_CONGRUENT) fail("MPI_Comm_compare of the duplicate of the left pair", 101, cmp, MPI_CONGRUENT);
    MPI_Comm_free(&nleft);
  }
  MPI_Comm_free(&own);
  if (size > 1) MPI_Comm_free(&left);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm a, b, c, d;
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2 == 0 ? 0 : MPI_UNDEFINED, rank, &c);
  const int even = rank % 2 == 0;
  for (int it = 0; it < 50; ++it) {
    MPI_Comm na = MPI_COMM_NULL, nb = MPI_COMM_NULL, nc = MPI_COMM_NULL, nd = MPI_COMM_NULL;
    MPI_Request r[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (even) {
      MPI_Comm_idup(a, &na, &r[0]);
      MPI_Comm_idup(c, &nc, &r[2]);
      MPI_Comm_idup(b, &nb, &r[1]);
    } else {
      MPI_Comm_idup(b, &nb, &r[1]);
      MPI_Comm_idup(a, &na, &r[0]);
    }
    if (it % 3 == 1) MPI_Comm_dup(d, &nd); /* a blocking creation while the idups are pending */
    if (it % 2) {
      MPI_Status st[3];
      MPI_Waitall(3, r, st);
    } else {
      for (int k = 2; k >= 0; --k) MPI_Wait(&r[k], MPI_STATUS_IGNORE);
    }
    use(na, a, it);
    use(nb, b, it);
    if (even) use(nc, c, it);
    if (nd != MPI_COMM_NULL) {
      use(nd, d, it);
      MPI_Comm_free(&nd);
    }
    /* Freed in opposite orders too, as MPI_Comm_idup's callers tend to (each frees its own first). */
    if (even) {
      MPI_Comm_free(&na);
      if (nc != MPI_COMM_NULL) MPI_Comm_free(&nc);
      MPI_Comm_free(&nb);
    } else {
      MPI_Comm_free(&nb);
      MPI_Comm_free(&na);
    }
  }
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  MPI_Comm_free(&d);
  pairs();
  if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("idup_order: OK\n");
  MPI_Finalize();
  return 0;
}
