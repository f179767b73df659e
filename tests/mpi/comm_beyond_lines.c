/*
 * comm_beyond_lines.c -- every kind of collective and communicator creation
 * on a communicator made after hundreds of others.
 *
 * A shmcoll communicator runs its blocking collectives on a line set in the
 * shared segment when one was free on every member at its creation; there
 * are a few hundred, and later communicators run them as point-to-point
 * schedules instead.  Here 300 duplicates are kept alive, and on the next
 * one (and on communicators made from it) every collective runs: barrier,
 * bcast, gather, allgather, alltoall (also in place), reduce, allreduce,
 * reduce_scatter_block, scan, exscan, neighbourhood collectives on a
 * Cartesian (a periodic ring: at 1 and 2 ranks a pair connected twice) and a
 * distributed-graph communicator, split, create_group,
 * intercommunicator create and merge.  Results are exact; receive arrays
 * have a guard element on each side.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define KEEP 300
#define GUARD (-777)

static int r, n;

static void check(int ok, const char *what, long got) {
  if (ok) return;
  fprintf(stderr, "comm_beyond_lines: rank %d: %s (got %ld)\n", r, what, got);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* n ints between two guards; returns the first of the n. */
static int *guarded(void) {
  int *a = malloc(sizeof(int) * (size_t)(n + 2));
  for (int i = 0; i < n + 2; ++i) a[i] = GUARD;
  return a + 1;
}
static void guards(const int *a, const char *what) {
  check(a[-1] == GUARD && a[n] == GUARD, what, a[-1] == GUARD ? a[n] : a[-1]);
}

/* (r and n are the rank and size in c meanwhile.) */
static void collectives(MPI_Comm c) {
  const int wr = r, wn = n;
  MPI_Comm_rank(c, &r);
  MPI_Comm_size(c, &n);
  const int v = r + 1;
  int s = 0;
  MPI_Barrier(c);
  MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, c);
  check(s == n * (n + 1) / 2, "MPI_Allreduce", s);
  int b = r == 0 ? 42 : 0;
  MPI_Bcast(&b, 1, MPI_INT, 0, c);
  check(b == 42, "MPI_Bcast", b);
  int *all = guarded(), *a = guarded(), *t = guarded();
  MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, c);
  for (int i = 0; i < n; ++i) check(all[i] == i + 1, "MPI_Allgather", all[i]);
  guards(all, "MPI_Allgather guard");
  for (int i = 0; i < n; ++i) a[i] = r * 100 + i;
  MPI_Alltoall(a, 1, MPI_INT, t, 1, MPI_INT, c);
  for (int i = 0; i < n; ++i) check(t[i] == i * 100 + r, "MPI_Alltoall", t[i]);
  guards(t, "MPI_Alltoall guard");
  MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, a, 1, MPI_INT, c);
  for (int i = 0; i < n; ++i) check(a[i] == i * 100 + r, "MPI_Alltoall in place", a[i]);
  guards(a, "MPI_Alltoall in place guard");
  s = -1;
  MPI_Reduce(&v, &s, 1, MPI_INT, MPI_MAX, n - 1, c);
  check(r != n - 1 || s == n, "MPI_Reduce", s);
  MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, c);
  check(s == (r + 1) * (r + 2) / 2, "MPI_Scan", s);
  MPI_Exscan(&v, &s, 1, MPI_INT, MPI_SUM, c);
  check(r == 0 || s == r * (r + 1) / 2, "MPI_Exscan", s);
  /* a[i] = i * 100 + r: block r summed over the ranks is n * (r * 100) + n (n - 1) / 2. */
  MPI_Reduce_scatter_block(a, &s, 1, MPI_INT, MPI_SUM, c);
  check(s == n * r * 100 + n * (n - 1) / 2, "MPI_Reduce_scatter_block", s);
  for (int i = 0; i < n; ++i) all[i] = GUARD;
  MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, 0, c);
  for (int i = 0; i < n && r == 0; ++i) check(all[i] == i + 1, "MPI_Gather", all[i]);
  guards(all, "MPI_Gather guard");
  free(all - 1), free(a - 1), free(t - 1);
  r = wr, n = wn;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm keep[KEEP], c;
  for (int i = 0; i < KEEP; ++i) MPI_Comm_dup(MPI_COMM_WORLD, &keep[i]);
  MPI_Comm_dup(keep[KEEP - 1], &c);
  collectives(c);

  const int v = r + 1, left = (r + n - 1) % n, right = (r + 1) % n;
  int dims[1] = {n}, periods[1] = {1}, nb[4] = {GUARD, GUARD, GUARD, GUARD};
  MPI_Comm cart, graph;
  MPI_Cart_create(c, 1, dims, periods, 0, &cart);
  MPI_Neighbor_allgather(&v, 1, MPI_INT, nb + 1, 1, MPI_INT, cart);
  check(nb[1] == left + 1 && nb[2] == right + 1 && nb[0] == GUARD && nb[3] == GUARD, "MPI_Neighbor_allgather", nb[1]);
  /* The block sent towards -1 lands in the receiver's +1 block and the other way round, also at
   * n = 1 and 2, where both neighbours are one rank (its edges move together when blocking). */
  int sb2[2] = {v * 10, v * 10 + 1}, rb2[4] = {GUARD, GUARD, GUARD, GUARD};
  MPI_Neighbor_alltoall(sb2, 1, MPI_INT, rb2 + 1, 1, MPI_INT, cart);
  check(rb2[1] == (left + 1) * 10 + 1 && rb2[2] == (right + 1) * 10 && rb2[0] == GUARD && rb2[3] == GUARD,
        "MPI_Neighbor_alltoall on the ring", rb2[1]);
  int srcs[1] = {left}, dsts[1] = {right}, got[3] = {GUARD, GUARD, GUARD};
  int weights[1] = {1};
  MPI_Dist_graph_create_adjacent(c, 1, srcs, weights, 1, dsts, weights, MPI_INFO_NULL, 0, &graph);
  MPI_Neighbor_alltoall(&v, 1, MPI_INT, got + 1, 1, MPI_INT, graph);
  check(got[1] == left + 1 && got[0] == GUARD && got[2] == GUARD, "MPI_Neighbor_alltoall", got[1]);

  MPI_Comm half;
  MPI_Comm_split(c, r % 2, -r, &half);
  collectives(half);
  MPI_Group g, first;
  MPI_Comm_group(c, &g);
  const int zero = 0;
  MPI_Group_incl(g, 1, &zero, &first);
  if (r == 0) {
    MPI_Comm alone;
    MPI_Comm_create_group(c, first, 5, &alone);
    collectives(alone);
    MPI_Comm_free(&alone);
  }
  MPI_Group_free(&first);
  MPI_Group_free(&g);
  if (n > 1) {
    MPI_Comm local, inter, merged;
    MPI_Comm_split(c, r < n / 2, r, &local);
    MPI_Intercomm_create(local, 0, c, r < n / 2 ? n / 2 : 0, 9, &inter);
    MPI_Intercomm_merge(inter, r < n / 2, &merged);
    collectives(merged);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
  }
  MPI_Comm_free(&half);
  MPI_Comm_free(&graph);
  MPI_Comm_free(&cart);
  MPI_Comm_free(&c);
  for (int i = 0; i < KEEP; ++i) MPI_Comm_free(&keep[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (r == 0) printf("comm_beyond_lines: OK\n");
  MPI_Finalize();
  return 0;
}
