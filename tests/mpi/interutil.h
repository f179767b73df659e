/*
 * interutil.h -- what the intercommunicator tests (intercomm.c,
 * intercomm_coll.c) share: two groups of MPI_COMM_WORLD ("layouts"), the
 * intercommunicator between them, member-by-member group checks, and a
 * counted EXPECT.  Standard MPI API only; builds on testutil.h.
 */
#ifndef SHMCOLL_TESTS_MPI_INTERUTIL_H
#define SHMCOLL_TESTS_MPI_INTERUTIL_H

#include "testutil.h"

#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which GCC's
 * -Wstringop-overflow takes for an array of size 0 at every MPI_Waitall. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static long long nchecks; /* checks passed on this rank */

#define EXPECT(cond, ...)          \
  do {                             \
    if (!(cond)) tu_fail(__VA_ARGS__); \
    ++nchecks;                     \
  } while (0)

/* The error class of rc (or -1 for success). */
TU_UNUSED static int err_class(int rc) {
  int cls = -1;
  if (rc == MPI_SUCCESS) return -1;
  MPI_Error_class(rc, &cls);
  return cls;
}

/* ---- layouts: two groups of MPI_COMM_WORLD --------------------------------------- */

typedef struct layout {
  char name[96];
  int n[2];      /* group sizes: group 0 ("A") and group 1 ("B") */
  int *world[2]; /* world ranks of each group in local rank order */
  int mine;      /* my group */
  int lrank;     /* my local rank */
  MPI_Comm half; /* my group as an intracommunicator */
} layout;

/* grp[w]: the group of world rank w; key[w]: its split key (ties: world rank). */
TU_UNUSED static void layout_make(layout *L, const char *name, const int *grp, const int *key) {
  snprintf(L->name, sizeof L->name, "%s", name);
  for (int g = 0; g < 2; ++g) {
    L->n[g] = 0;
    L->world[g] = (int *)tu_malloc(sizeof(int) * tu_size);
    for (int w = 0; w < tu_size; ++w)
      if (grp[w] == g) L->world[g][L->n[g]++] = w;
    for (int i = 1; i < L->n[g]; ++i) /* insertion sort by (key, world rank) */
      for (int j = i; j > 0 && key[L->world[g][j]] < key[L->world[g][j - 1]]; --j) {
        int t = L->world[g][j];
        L->world[g][j] = L->world[g][j - 1];
        L->world[g][j - 1] = t;
      }
  }
  L->mine = grp[tu_rank];
  for (int i = 0; i < L->n[L->mine]; ++i)
    if (L->world[L->mine][i] == tu_rank) L->lrank = i;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, L->mine, key[tu_rank], &L->half));
}

TU_UNUSED static void layout_free(layout *L) {
  TU_CALL(MPI_Comm_free(&L->half));
  free(L->world[0]), free(L->world[1]);
}

/* Builds the intercommunicator of L with the leaders at local ranks lead[0]
 * (group A) and lead[1] (group B); peer is MPI_COMM_WORLD or a communicator
 * whose rank of world rank w is peer_rank[w]. */
TU_UNUSED static MPI_Comm make_inter(const layout *L, const int lead[2], MPI_Comm peer, const int *peer_rank,
                                     int tag) {
  const int me = L->mine, other = 1 - me;
  const int rw = L->world[other][lead[other]];
  MPI_Comm ic;
  TU_CALL(MPI_Intercomm_create(L->half, lead[me], peer, peer_rank ? peer_rank[rw] : rw, tag, &ic));
  return ic;
}

/* The world ranks of a group, in its rank order. */
TU_UNUSED static void world_of(MPI_Group g, int n, int *out) {
  MPI_Group wg;
  int *idx = (int *)tu_malloc(sizeof(int) * n);
  for (int i = 0; i < n; ++i) idx[i] = i;
  TU_CALL(MPI_Comm_group(MPI_COMM_WORLD, &wg));
  TU_CALL(MPI_Group_translate_ranks(g, n, idx, wg, out));
  TU_CALL(MPI_Group_free(&wg));
  free(idx);
}

TU_UNUSED static void expect_members(MPI_Group g, int n, const int *want, const char *what, const char *which) {
  int size = -1;
  TU_CALL(MPI_Group_size(g, &size));
  EXPECT(size == n, "%s: %s has %d members, expected %d", what, which, size, n);
  int *got = (int *)tu_malloc(sizeof(int) * (n ? n : 1));
  world_of(g, n, got);
  for (int i = 0; i < n; ++i)
    EXPECT(got[i] == want[i], "%s: %s rank %d is world rank %d, expected %d", what, which, i, got[i], want[i]);
  free(got);
}

/* An intercommunicator between local group `local` (n members, world ranks)
 * and `remote` (m): its answers to every query. */
TU_UNUSED static void check_shape(MPI_Comm ic, const int *local, int n, const int *remote, int m, const char *what) {
  int flag = -1, size = -1, rank = -1, rsize = -1;
  TU_CALL(MPI_Comm_test_inter(ic, &flag));
  EXPECT(flag == 1, "%s: MPI_Comm_test_inter says %d", what, flag);
  TU_CALL(MPI_Comm_size(ic, &size));
  TU_CALL(MPI_Comm_rank(ic, &rank));
  TU_CALL(MPI_Comm_remote_size(ic, &rsize));
  EXPECT(size == n && rsize == m, "%s: size %d remote size %d, expected %d and %d", what, size, rsize, n, m);
  EXPECT(rank >= 0 && rank < n && local[rank] == tu_rank, "%s: MPI_Comm_rank says %d", what, rank);
  MPI_Group g;
  TU_CALL(MPI_Comm_group(ic, &g));
  expect_members(g, n, local, what, "the local group");
  TU_CALL(MPI_Group_free(&g));
  TU_CALL(MPI_Comm_remote_group(ic, &g));
  expect_members(g, m, remote, what, "the remote group");
  TU_CALL(MPI_Group_free(&g));
}

TU_UNUSED static void check_layout(MPI_Comm ic, const layout *L, const char *what) {
  check_shape(ic, L->world[L->mine], L->n[L->mine], L->world[1 - L->mine], L->n[1 - L->mine], what);
}

TU_UNUSED static void expect_class(int rc, int want, int alt, const char *what) {
  const int cls = err_class(rc);
  EXPECT(cls == want || cls == alt, "%s: returned class %d, expected %d%s", what, cls, want,
         alt != want ? " (or the alternative another library uses)" : "");
}

#endif /* SHMCOLL_TESTS_MPI_INTERUTIL_H */
