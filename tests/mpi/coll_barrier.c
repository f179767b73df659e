/*
 * coll_barrier.c -- MPI_Barrier lets no rank out before every rank is in.
 *
 * Every rank owns one counter in a shared-memory window
 * (MPI_Win_allocate_shared).  In round r a rank stores r into its counter,
 * enters MPI_Barrier, and after it reads every member's counter: each must be
 * r already (the member arrived) or r + 1 (it left this barrier and started
 * the next round), never less.  A barrier that lets one rank out early shows
 * as a counter still at r - 1.  The ranks arrive in a different order every
 * round: each waits a pseudo-random while first (nothing, a few yields or a
 * short sleep), and some rounds one rank arrives far later than the rest.
 * The same runs on MPI_COMM_WORLD and on the halves of a split (teams of
 * other sizes, on other barrier lines), alternating.  With rooted=1 each
 * round first makes one rooted call (MPI_Bcast, MPI_Scatter, MPI_Gather,
 * MPI_Gatherv, or MPI_Reduce of one element or of 128 KiB, from a
 * pseudo-random root, its result checked), so that the barrier after it
 * follows a rooted collective (an implementation may let that root, or in a
 * pair the other rank, out first, or the root of a gather or reduce last).
 *
 *   coll_barrier [iters=N] [seed=S] [rooted=1]
 *
 * Written against the standard MPI API only.
 */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "testutil.h"

static uint64_t next_rand(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

/* A pseudo-random wait before arriving, the same draw sequence on every rank. */
static void arrive_late(uint64_t draw, int rank) {
  const unsigned kind = (unsigned)((draw >> (rank % 16) * 2) & 3u);
  if ((draw >> 40) % 64 == (uint64_t)rank % 64) { /* one rank far behind */
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
  } else if (kind == 1) {
    for (int i = 0; i < 3; ++i) sched_yield();
  } else if (kind == 2) {
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
  }
}

typedef struct {
  MPI_Comm comm;
  MPI_Win win;
  volatile int64_t **counters; /* every member's counter */
  int64_t round;
  int rank, size;
} team_t;

static void team_open(team_t *t, MPI_Comm comm) {
  t->comm = comm;
  TU_CALL(MPI_Comm_rank(comm, &t->rank));
  TU_CALL(MPI_Comm_size(comm, &t->size));
  int64_t *mine;
  TU_CALL(MPI_Win_allocate_shared((MPI_Aint)sizeof(int64_t), (int)sizeof(int64_t), MPI_INFO_NULL, comm, &mine,
                                  &t->win));
  TU_CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, t->win));
  *mine = 0;
  t->counters = (volatile int64_t **)tu_malloc(sizeof(int64_t *) * (size_t)t->size);
  for (int r = 0; r < t->size; ++r) {
    MPI_Aint bytes;
    int disp;
    void *p;
    TU_CALL(MPI_Win_shared_query(t->win, r, &bytes, &disp, &p));
    t->counters[r] = (volatile int64_t *)p;
  }
  t->round = 0;
  TU_CALL(MPI_Win_sync(t->win));
  TU_CALL(MPI_Barrier(comm));
  TU_CALL(MPI_Win_sync(t->win));
}

/* One rooted call from a root drawn from `draw`, its result checked. */
#define BIG 16384 /* int64s of the large MPI_Reduce: 128 KiB, past the one-exchange bound at 3 or more ranks */

static void rooted_call(team_t *t, uint64_t draw, int64_t r, const char *which) {
  const int root = (int)((draw >> 20) % (uint64_t)t->size), kind = (int)((draw >> 28) % 6);
  const int n = t->size;
  int64_t v = r * 1000 + t->rank, got = -1;
  int64_t *all = (int64_t *)tu_malloc(sizeof(int64_t) * (size_t)n);
  for (int p = 0; p < n; ++p) all[p] = (t->rank == root) ? r * 1000 + 100 + p : -1;
  int64_t want;
  const char *name;
  if (kind == 0) {
    name = "MPI_Bcast";
    got = v;
    TU_CALL(MPI_Bcast(&got, 1, MPI_INT64_T, root, t->comm));
    want = r * 1000 + root;
  } else if (kind == 1) {
    name = "MPI_Scatter";
    TU_CALL(MPI_Scatter(all, 1, MPI_INT64_T, &got, 1, MPI_INT64_T, root, t->comm));
    want = r * 1000 + 100 + t->rank;
  } else if (kind == 2) {
    name = "MPI_Gather";
    TU_CALL(MPI_Gather(&v, 1, MPI_INT64_T, all, 1, MPI_INT64_T, root, t->comm));
    got = t->rank == root ? all[(t->rank + 1) % n] : 0;
    want = t->rank == root ? r * 1000 + (t->rank + 1) % n : 0;
  } else if (kind == 3) {
    name = "MPI_Reduce";
    TU_CALL(MPI_Reduce(&v, &got, 1, MPI_INT64_T, MPI_SUM, root, t->comm));
    if (t->rank != root) got = 0;
    want = t->rank == root ? r * 1000 * n + (int64_t)n * (n - 1) / 2 : 0;
  } else if (kind == 4) {
    name = "MPI_Gatherv";
    int *counts = (int *)tu_malloc(sizeof(int) * (size_t)n), *displs = (int *)tu_malloc(sizeof(int) * (size_t)n);
    for (int p = 0; p < n; ++p) counts[p] = 1, displs[p] = n - 1 - p; /* reversed */
    TU_CALL(MPI_Gatherv(&v, 1, MPI_INT64_T, all, counts, displs, MPI_INT64_T, root, t->comm));
    got = t->rank == root ? all[0] : 0;
    want = t->rank == root ? r * 1000 + n - 1 : 0;
    free(counts);
    free(displs);
  } else {
    name = "MPI_Reduce (large)";
    int64_t *in = (int64_t *)tu_malloc(sizeof(int64_t) * BIG), *out = (int64_t *)tu_malloc(sizeof(int64_t) * BIG);
    for (int k = 0; k < BIG; ++k) in[k] = v + k, out[k] = -1;
    TU_CALL(MPI_Reduce(in, out, BIG, MPI_INT64_T, MPI_SUM, root, t->comm));
    got = t->rank == root ? out[BIG - 1] : 0;
    want = t->rank == root ? r * 1000 * n + (int64_t)n * (n - 1) / 2 + (int64_t)n * (BIG - 1) : 0;
    free(in);
    free(out);
  }
  if (got != want)
    tu_fail("%s: round %lld: %s from root %d gave %lld on rank %d, expected %lld", which, (long long)r, name, root,
            (long long)got, t->rank, (long long)want);
  free(all);
}

static int rooted = 0;

static void team_round(team_t *t, uint64_t draw, const char *which) {
  const int64_t r = ++t->round;
  if (rooted) rooted_call(t, draw, r, which);
  arrive_late(draw, t->rank);
  *t->counters[t->rank] = r;
  TU_CALL(MPI_Win_sync(t->win));
  TU_CALL(MPI_Barrier(t->comm));
  TU_CALL(MPI_Win_sync(t->win));
  for (int p = 0; p < t->size; ++p) {
    const int64_t v = *t->counters[p];
    if (v != r && v != r + 1)
      tu_fail("%s: round %lld: after MPI_Barrier rank %d's counter is %lld, expected %lld or %lld", which,
              (long long)r, p, (long long)v, (long long)r, (long long)r + 1);
  }
  ++tu_ncases;
}

static void team_close(team_t *t) {
  TU_CALL(MPI_Win_unlock_all(t->win));
  TU_CALL(MPI_Win_free(&t->win));
  free((void *)t->counters);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_barrier");
  const long iters = tu_arg_long(argc, argv, "iters", 3000);
  rooted = (int)tu_arg_long(argc, argv, "rooted", 0);
  uint64_t seed = (uint64_t)tu_arg_long(argc, argv, "seed", 1) * 0x9e3779b97f4a7c15ull + 1;
  MPI_Comm half;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_size - tu_rank, &half));
  team_t world, part;
  team_open(&world, MPI_COMM_WORLD);
  team_open(&part, half);
  for (long i = 0; i < iters; ++i) {
    const uint64_t draw = next_rand(&seed);
    if (i % 3 == 2)
      team_round(&part, draw, "split half");
    else
      team_round(&world, draw, "MPI_COMM_WORLD");
  }
  /* MPI_COMM_SELF: returns at once. */
  TU_CALL(MPI_Barrier(MPI_COMM_SELF));
  team_close(&part);
  team_close(&world);
  TU_CALL(MPI_Comm_free(&half));
  char extra[64];
  snprintf(extra, sizeof extra, "iters=%ld%s", iters, rooted ? " rooted" : "");
  return tu_finish(extra);
}
