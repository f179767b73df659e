/* accel_reduce_order: the accelerator's reductions are deterministic.  The
 * contributions are doubles of many magnitudes and signs, whose sum depends on
 * the order of the additions; the accelerator folds every element in rank
 * order, a0 + (a1 + (... + a(n-1))), whichever rank folds it and whether the
 * block is split across the ranks or not.  So, byte for byte:
 *  - MPI_Allreduce's result equals that fold computed here, on every rank;
 *  - MPI_Reduce's at every root, and MPI_Reduce_scatter_block's block, too;
 *  - the same call repeated gives the same bytes; in place as well;
 *  - elements past the count (guards) stay untouched.
 * Counts below and far above SHMCOLL_ACCEL_REDUCE_SPLIT and the slot size.
 * (This checks the accelerator's documented order: the hosts alone may
 * associate differently, so it runs only with the accelerator.)
 *
 *   accel_reduce_order [iters=N]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, n;

static double value(int r, long i, int it) {
  unsigned x = (unsigned)(r * 2654435761u) ^ (unsigned)(i * 40503u) ^ (unsigned)(it * 9176u + 7u);
  x ^= x >> 13, x *= 0x5bd1e995u, x ^= x >> 15;
  double m = (double)(x % 1000003u) / 997.0;
  int e = (int)(x >> 24) % 40 - 20; /* magnitudes 2^-20 .. 2^19: additions round */
  double v = m;
  for (; e > 0; --e) v *= 2.0;
  for (; e < 0; ++e) v *= 0.5;
  return (x & 1u) ? -v : v;
}

/* a0 + (a1 + (... + a(n-1))) at element i */
static double fold(long i, int it) {
  double acc = value(n - 1, i, it);
  for (int r = n - 2; r >= 0; --r) acc = value(r, i, it) + acc;
  return acc;
}

static void fail(const char *what, long count, long i) {
  fprintf(stderr, "accel_reduce_order: rank %d: %s, count %ld, element %ld\n", me, what, count, i);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define GUARD 4
static const double kSentinel = -12345.625;

static void check(const double *got, long count, long first, int it, const char *what) {
  for (long i = 0; i < count; ++i) {
    double want = fold(first + i, it);
    if (memcmp(&got[i], &want, sizeof want) != 0) fail(what, count, i);
  }
  for (long i = count; i < count + GUARD; ++i)
    if (memcmp(&got[i], &kSentinel, sizeof kSentinel) != 0) fail("guard changed", count, i);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int iters = 2;
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "iters=", 6)) iters = atoi(argv[i] + 6);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  const long counts[] = {1, 5, 1000, 1025, 70001};
  long max = 70001L * n + GUARD;
  double *s = malloc(sizeof(double) * (size_t)max), *r = malloc(sizeof(double) * (size_t)max),
         *again = malloc(sizeof(double) * (size_t)max);
  for (int it = 0; it < iters; ++it)
    for (int c = 0; c < (int)(sizeof counts / sizeof counts[0]); ++c) {
      const long count = counts[c];
      for (long i = 0; i < count * n; ++i) s[i] = value(me, i, it);
      /* allreduce, twice: the same bytes */
      for (long i = 0; i < count + GUARD; ++i) r[i] = again[i] = kSentinel;
      MPI_Allreduce(s, r, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      check(r, count, 0, it, "MPI_Allreduce: not the rank-order fold");
      MPI_Allreduce(s, again, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (memcmp(r, again, sizeof(double) * (size_t)count) != 0) fail("MPI_Allreduce: repeated, differs", count, 0);
      /* in place */
      memcpy(r, s, sizeof(double) * (size_t)count);
      MPI_Allreduce(MPI_IN_PLACE, r, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      check(r, count, 0, it, "MPI_Allreduce in place: not the rank-order fold");
      /* reduce at every root (in place at odd roots) */
      for (int root = 0; root < n; ++root) {
        for (long i = 0; i < count + GUARD; ++i) r[i] = kSentinel;
        const int in_place = root % 2 == 1 && me == root;
        if (in_place) memcpy(r, s, sizeof(double) * (size_t)count);
        MPI_Reduce(in_place ? MPI_IN_PLACE : s, r, (int)count, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        if (me == root) {
          check(r, count, 0, it, "MPI_Reduce: not the rank-order fold");
        } else {
          for (long i = 0; i < count + GUARD; ++i)
            if (memcmp(&r[i], &kSentinel, sizeof kSentinel) != 0) fail("MPI_Reduce wrote at a non-root", count, i);
        }
      }
      /* reduce_scatter_block: my block of count elements */
      for (long i = 0; i < count + GUARD; ++i) r[i] = kSentinel;
      MPI_Reduce_scatter_block(s, r, (int)count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      check(r, count, (long)me * count, it, "MPI_Reduce_scatter_block: not the rank-order fold");
    }
  free(s), free(r), free(again);
  if (me == 0) printf("accel_reduce_order: %d ranks: ok\n", n);
  MPI_Finalize();
  return 0;
}
