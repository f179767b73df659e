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
 * With `nodes` (SHMCOLL_FAKE_NODES > 1: the hierarchical path, whose folds
 * across nodes follow the host's order) a result need not be the rank-order
 * fold; it must instead be within the rounding error of any order of the
 * additions of it, the same bytes on every rank (each rank's result is
 * compared with rank 0's), the same bytes when repeated, in place too, and
 * the guards and non-roots untouched as above.
 *
 *   accel_reduce_order [iters=N] [nodes]
 */
#include <float.h>
#include <math.h>
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

static int nodes; /* `nodes`: any order of the additions (see above) */

/* |a0| + ... + |a(n-1)| at element i: bounds the rounding error of any order */
static double magnitude(long i, int it) {
  double m = 0;
  for (int r = 0; r < n; ++r) m += fabs(value(r, i, it));
  return m;
}

static void check(const double *got, long count, long first, int it, const char *what) {
  for (long i = 0; i < count; ++i) {
    double want = fold(first + i, it);
    if (nodes) {
      /* any order of n - 1 additions: at most (n - 1) * eps * sum |a(j)| apart from the exact sum, so
         twice that from the rank-order fold */
      if (!(fabs(got[i] - want) <= 2.0 * n * DBL_EPSILON * magnitude(first + i, it))) fail(what, count, i);
    } else if (memcmp(&got[i], &want, sizeof want) != 0) {
      fail(what, count, i);
    }
  }
  for (long i = count; i < count + GUARD; ++i)
    if (memcmp(&got[i], &kSentinel, sizeof kSentinel) != 0) fail("guard changed", count, i);
}

/* Every check above on communicator comm (me, n: this rank's place in it). */
static void run(MPI_Comm comm, int iters, double *s, double *r, double *again, double *zero) {
  MPI_Comm_size(comm, &n);
  MPI_Comm_rank(comm, &me);
  const long counts[] = {1, 5, 1000, 1025, 70001};
  for (int it = 0; it < iters; ++it)
    for (int c = 0; c < (int)(sizeof counts / sizeof counts[0]); ++c) {
      const long count = counts[c];
      for (long i = 0; i < count * n; ++i) s[i] = value(me, i, it);
      /* allreduce, twice: the same bytes */
      for (long i = 0; i < count + GUARD; ++i) r[i] = again[i] = kSentinel;
      MPI_Allreduce(s, r, (int)count, MPI_DOUBLE, MPI_SUM, comm);
      check(r, count, 0, it, "MPI_Allreduce: not the rank-order fold");
      MPI_Allreduce(s, again, (int)count, MPI_DOUBLE, MPI_SUM, comm);
      if (memcmp(r, again, sizeof(double) * (size_t)count) != 0) fail("MPI_Allreduce: repeated, differs", count, 0);
      /* the same bytes on every rank: rank 0's result, broadcast */
      if (me == 0) memcpy(zero, r, sizeof(double) * (size_t)count);
      MPI_Bcast(zero, (int)count, MPI_DOUBLE, 0, comm);
      if (memcmp(r, zero, sizeof(double) * (size_t)count) != 0) fail("MPI_Allreduce: differs from rank 0's", count, 0);
      /* in place: the same bytes again */
      memcpy(r, s, sizeof(double) * (size_t)count);
      MPI_Allreduce(MPI_IN_PLACE, r, (int)count, MPI_DOUBLE, MPI_SUM, comm);
      check(r, count, 0, it, "MPI_Allreduce in place: not the rank-order fold");
      if (memcmp(r, again, sizeof(double) * (size_t)count) != 0) fail("MPI_Allreduce in place: differs", count, 0);
      /* reduce at every root (in place at odd roots) */
      for (int root = 0; root < n; ++root) {
        for (long i = 0; i < count + GUARD; ++i) r[i] = kSentinel;
        const int in_place = root % 2 == 1 && me == root;
        if (in_place) memcpy(r, s, sizeof(double) * (size_t)count);
        MPI_Reduce(in_place ? MPI_IN_PLACE : s, r, (int)count, MPI_DOUBLE, MPI_SUM, root, comm);
        if (me == root) {
          check(r, count, 0, it, "MPI_Reduce: not the rank-order fold");
        } else {
          for (long i = 0; i < count + GUARD; ++i)
            if (memcmp(&r[i], &kSentinel, sizeof kSentinel) != 0) fail("MPI_Reduce wrote at a non-root", count, i);
        }
      }
      /* reduce_scatter_block: my block of count elements (in place too, every other round) */
      for (long i = 0; i < count + GUARD; ++i) r[i] = kSentinel;
      if ((c + it) % 2) {
        for (long i = 0; i < count * n; ++i) again[i] = s[i];
        for (long i = count * n; i < count * n + GUARD; ++i) again[i] = kSentinel;
        MPI_Reduce_scatter_block(MPI_IN_PLACE, again, (int)count, MPI_DOUBLE, MPI_SUM, comm);
        memcpy(r, again, sizeof(double) * (size_t)count);
        for (long i = count * n; i < count * n + GUARD; ++i)
          if (memcmp(&again[i], &kSentinel, sizeof kSentinel) != 0) fail("guard changed (in place)", count, i);
      } else {
        MPI_Reduce_scatter_block(s, r, (int)count, MPI_DOUBLE, MPI_SUM, comm);
      }
      check(r, count, (long)me * count, it, "MPI_Reduce_scatter_block: not the rank-order fold");
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int iters = 2;
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "iters=", 6))
      iters = atoi(argv[i] + 6);
    else if (!strcmp(argv[i], "nodes"))
      nodes = 1;
  int wn, wme;
  MPI_Comm_size(MPI_COMM_WORLD, &wn);
  MPI_Comm_rank(MPI_COMM_WORLD, &wme);
  long max = 70001L * wn + GUARD;
  double *s = malloc(sizeof(double) * (size_t)max), *r = malloc(sizeof(double) * (size_t)max),
         *again = malloc(sizeof(double) * (size_t)max), *zero = malloc(sizeof(double) * (size_t)max);
  run(MPI_COMM_WORLD, iters, s, r, again, zero);
  /* ranks interleaved: the even ones of MPI_COMM_WORLD first, then the odd ones (across
     pretend nodes, a node's processes are not consecutive here) */
  MPI_Comm mixed;
  MPI_Comm_split(MPI_COMM_WORLD, 0, (wme % 2) * wn + wme, &mixed);
  run(mixed, 1, s, r, again, zero);
  MPI_Comm_free(&mixed);
  free(s), free(r), free(again), free(zero);
  if (wme == 0) printf("accel_reduce_order: %d ranks: ok\n", wn);
  MPI_Finalize();
  return 0;
}
