/* coll_comm: the collectives on every kind of communicator, and the
 * communicator and group calls around them.
 *
 *   MPI_COMM_WORLD, MPI_COMM_SELF, MPI_Comm_dup, MPI_Comm_split (odd/even,
 *   reversed key order, MPI_UNDEFINED), MPI_Comm_split_type(SHARED),
 *   MPI_Comm_create (MPI_Group_incl), MPI_Comm_create_group (MPI_Group_excl);
 *   MPI_Comm_compare, group size/rank/translate_ranks/compare; the two halves
 *   of a split running different collectives of different sizes at the same
 *   time, interleaved with collectives on world and on a dup; dup/free cycles.
 *
 *   coll_comm [iters=N]   N: rounds of the concurrent phase (default 24)
 */
#include "testutil.h"

/* Pattern salts must agree among the members of a communicator; they are
 * derived from where the call is in the program, not from a counter that
 * non-members would not advance. */
static unsigned salt_of(const char *label, int it) {
  unsigned h = 2166136261u;
  for (const char *p = label; *p; ++p) h = (h ^ (unsigned char)*p) * 16777619u;
  return h ^ (unsigned)it * 0x9e3779b9u;
}

static void expect_int(int got, int want, const char *what) {
  if (got != want) tu_fail("%s = %d, expected %d", what, got, want);
}

static const char *cmpname(int r) {
  return r == MPI_IDENT ? "MPI_IDENT" : r == MPI_CONGRUENT ? "MPI_CONGRUENT" : r == MPI_SIMILAR ? "MPI_SIMILAR"
                                                                              : r == MPI_UNEQUAL ? "MPI_UNEQUAL" : "?";
}
static void expect_compare(MPI_Comm a, MPI_Comm b, int want, const char *what) {
  int r = -1;
  TU_CALL(MPI_Comm_compare(a, b, &r));
  if (r != want) tu_fail("MPI_Comm_compare(%s) = %s, expected %s", what, cmpname(r), cmpname(want));
}

/* One verified collective of each kind on comm, `c` basic elements. */
static void all_ops(MPI_Comm comm, long c, const char *label) {
  int n;
  TU_CALL(MPI_Comm_size(comm, &n));
  long *E = (long *)tu_malloc(sizeof(long) * n * n);
  for (int op = 0; op < TU_NOPS; ++op)
    for (int ip = 0; ip < 2; ++ip) {
      int v = op != TU_ALLTOALL && op != TU_ALLGATHER;
      tu_counts(E, op, n, v ? (ip ? TU_E_SPARSE : TU_E_VARIED) : TU_E_UNIFORM, c, 1, ip && !tu_is_gather(op));
      tu_run_simple(op, comm, E, tu_cat(TU_F_DOUBLE, 0), tu_cat(TU_F_DOUBLE, 0), ip, (op + ip) % TU_NDISP,
                    salt_of(label, op * 2 + ip), label);
    }
  free(E);
}

/* One collective: op `op` with c elements on comm. */
static void one_op(MPI_Comm comm, int op, long c, int ip, const char *label, int slot) {
  int n;
  TU_CALL(MPI_Comm_size(comm, &n));
  long *E = (long *)tu_malloc(sizeof(long) * n * n);
  int v = op != TU_ALLTOALL && op != TU_ALLGATHER;
  tu_counts(E, op, n, v ? (int)(c % TU_NE) : TU_E_UNIFORM, c, 1, ip && !tu_is_gather(op));
  tu_run_simple(op, comm, E, tu_cat(TU_F_INT, 0), tu_cat(TU_F_INT, 0), ip, (int)(c % TU_NDISP), salt_of(label, slot), label);
  free(E);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_comm");
  tu_catalog_init();
  const int n = tu_size, me = tu_rank;
  const int iters = (int)tu_arg_long(argc, argv, "iters", 24);
  MPI_Group gworld;
  TU_CALL(MPI_Comm_group(MPI_COMM_WORLD, &gworld));
  int gs, gr;
  TU_CALL(MPI_Group_size(gworld, &gs));
  TU_CALL(MPI_Group_rank(gworld, &gr));
  expect_int(gs, n, "MPI_Group_size(world group)");
  expect_int(gr, me, "MPI_Group_rank(world group)");

  /* world and self */
  expect_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "world, world");
  expect_compare(MPI_COMM_SELF, MPI_COMM_WORLD, n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "self, world");
  all_ops(MPI_COMM_WORLD, 7, "world");
  {
    int s, r;
    TU_CALL(MPI_Comm_size(MPI_COMM_SELF, &s));
    TU_CALL(MPI_Comm_rank(MPI_COMM_SELF, &r));
    expect_int(s, 1, "MPI_Comm_size(MPI_COMM_SELF)");
    expect_int(r, 0, "MPI_Comm_rank(MPI_COMM_SELF)");
    all_ops(MPI_COMM_SELF, 33, "self");
  }

  /* dup */
  MPI_Comm dup;
  TU_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  TU_CALL(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  expect_compare(MPI_COMM_WORLD, dup, MPI_CONGRUENT, "world, dup(world)");
  all_ops(dup, 33, "dup");

  /* split odd/even */
  MPI_Comm half;
  const int color = me % 2;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, me, &half));
  TU_CALL(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
  int hs, hr;
  TU_CALL(MPI_Comm_size(half, &hs));
  TU_CALL(MPI_Comm_rank(half, &hr));
  expect_int(hs, color ? n / 2 : (n + 1) / 2, "MPI_Comm_size(odd/even split)");
  expect_int(hr, me / 2, "MPI_Comm_rank(odd/even split)");
  expect_compare(MPI_COMM_WORLD, half, n == 1 ? MPI_CONGRUENT : MPI_UNEQUAL, "world, odd/even split");
  {
    MPI_Group gh;
    TU_CALL(MPI_Comm_group(half, &gh));
    int *r1 = (int *)tu_malloc(sizeof(int) * hs), *r2 = (int *)tu_malloc(sizeof(int) * hs);
    for (int i = 0; i < hs; ++i) r1[i] = i;
    TU_CALL(MPI_Group_translate_ranks(gh, hs, r1, gworld, r2));
    for (int i = 0; i < hs; ++i) expect_int(r2[i], 2 * i + color, "translate_ranks(half -> world)");
    int cmp;
    TU_CALL(MPI_Group_compare(gh, gworld, &cmp));
    expect_int(cmp, n == 1 ? MPI_IDENT : MPI_UNEQUAL, "MPI_Group_compare(half, world)");
    TU_CALL(MPI_Group_free(&gh));
    if (gh != MPI_GROUP_NULL) tu_fail("MPI_Group_free did not set MPI_GROUP_NULL");
    free(r1), free(r2);
  }
  all_ops(half, 7, "odd/even split");

  /* split with reversed keys: same group, reversed order */
  MPI_Comm rev;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &rev));
  TU_CALL(MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN));
  {
    int r;
    TU_CALL(MPI_Comm_rank(rev, &r));
    expect_int(r, n - 1 - me, "MPI_Comm_rank(reversed split)");
    expect_compare(MPI_COMM_WORLD, rev, n == 1 ? MPI_CONGRUENT : MPI_SIMILAR, "world, reversed split");
    MPI_Group g;
    TU_CALL(MPI_Comm_group(rev, &g));
    int zero = 0, w0 = -1;
    TU_CALL(MPI_Group_translate_ranks(g, 1, &zero, gworld, &w0));
    expect_int(w0, n - 1, "translate_ranks(reversed rank 0 -> world)");
    TU_CALL(MPI_Group_free(&g));
  }
  all_ops(rev, 7, "reversed split");

  /* split with MPI_UNDEFINED: rank 0 is left out */
  MPI_Comm drop0;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, me, &drop0));
  if (me == 0) {
    if (drop0 != MPI_COMM_NULL) tu_fail("MPI_Comm_split(MPI_UNDEFINED) did not return MPI_COMM_NULL");
  } else {
    TU_CALL(MPI_Comm_set_errhandler(drop0, MPI_ERRORS_RETURN));
    int s;
    TU_CALL(MPI_Comm_size(drop0, &s));
    expect_int(s, n - 1, "MPI_Comm_size(split without rank 0)");
    all_ops(drop0, 1, "split without rank 0");
  }

  /* split_type shared: everyone is on this node */
  MPI_Comm node;
  TU_CALL(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &node));
  TU_CALL(MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN));
  expect_compare(MPI_COMM_WORLD, node, MPI_CONGRUENT, "world, split_type(SHARED)");
  all_ops(node, 33, "split_type shared");

  /* MPI_Comm_create from MPI_Group_incl (even ranks, in reverse order) */
  MPI_Comm evens;
  {
    int ne = (n + 1) / 2;
    int *ranks = (int *)tu_malloc(sizeof(int) * ne);
    for (int i = 0; i < ne; ++i) ranks[i] = 2 * (ne - 1 - i);
    MPI_Group ge;
    TU_CALL(MPI_Group_incl(gworld, ne, ranks, &ge));
    int s, r;
    TU_CALL(MPI_Group_size(ge, &s));
    TU_CALL(MPI_Group_rank(ge, &r));
    expect_int(s, ne, "MPI_Group_size(incl evens)");
    expect_int(r, me % 2 ? MPI_UNDEFINED : ne - 1 - me / 2, "MPI_Group_rank(incl evens)");
    TU_CALL(MPI_Comm_create(MPI_COMM_WORLD, ge, &evens));
    if (me % 2) {
      if (evens != MPI_COMM_NULL) tu_fail("MPI_Comm_create: a non-member got a communicator");
    } else {
      TU_CALL(MPI_Comm_set_errhandler(evens, MPI_ERRORS_RETURN));
      TU_CALL(MPI_Comm_rank(evens, &r));
      expect_int(r, ne - 1 - me / 2, "MPI_Comm_rank(create(incl evens reversed))");
    }
    TU_CALL(MPI_Group_free(&ge));
    free(ranks);
  }
  if (evens != MPI_COMM_NULL) all_ops(evens, 7, "create(incl)");

  /* MPI_Comm_create_group from MPI_Group_excl (all but the last rank); only members call */
  MPI_Comm notlast = MPI_COMM_NULL;
  {
    int last = n - 1;
    MPI_Group gx;
    TU_CALL(MPI_Group_excl(gworld, 1, &last, &gx));
    int s, r;
    TU_CALL(MPI_Group_size(gx, &s));
    TU_CALL(MPI_Group_rank(gx, &r));
    expect_int(s, n - 1, "MPI_Group_size(excl last)");
    expect_int(r, me == last ? MPI_UNDEFINED : me, "MPI_Group_rank(excl last)");
    if (me != last) {
      TU_CALL(MPI_Comm_create_group(MPI_COMM_WORLD, gx, 7, &notlast));
      TU_CALL(MPI_Comm_set_errhandler(notlast, MPI_ERRORS_RETURN));
      expect_compare(MPI_COMM_WORLD, notlast, MPI_UNEQUAL, "world, create_group(excl last)");
    }
    TU_CALL(MPI_Group_free(&gx));
  }
  if (notlast != MPI_COMM_NULL) all_ops(notlast, 7, "create_group(excl)");

  /* concurrency: the halves run different collectives of different sizes at
   * the same time, placed differently around collectives on world and dup
   * (world and dup are always entered in the same order by everyone) */
  for (int it = 0; it < iters; ++it) {
    char label[96];
    snprintf(label, sizeof label, "concurrent round %d", it);
    int hop = color ? (it + 2) % TU_NOPS : it % TU_NOPS;
    long hc = color ? 17 + 3 * it : 5 + 101 * (it % 7);
    int place = color ? (it % 3) : ((it + 1) % 3);
    if (place == 0) one_op(half, hop, hc, it % 2, label, 1);
    one_op(dup, (it + 1) % TU_NOPS, 3 + it, (it / 2) % 2, label, 2);
    if (place == 1) one_op(half, hop, hc, it % 2, label, 1);
    if (me != 0) one_op(drop0, (it + 3) % TU_NOPS, 1 + it % 4, 0, label, 3);
    one_op(MPI_COMM_WORLD, (it + 4) % TU_NOPS, 11, (it / 3) % 2, label, 4);
    if (evens != MPI_COMM_NULL) one_op(evens, (it + 2) % TU_NOPS, 9 + it, it % 2, label, 5);
    if (notlast != MPI_COMM_NULL) one_op(notlast, it % TU_NOPS, 2 + it % 5, 1, label, 6);
    one_op(rev, (it + 3) % TU_NOPS, 4, 0, label, 7);
    if (place == 2) one_op(half, hop, hc, it % 2, label, 1);
  }

  /* dup/free cycles, nested dup of a split */
  for (int it = 0; it < 20; ++it) {
    MPI_Comm d;
    TU_CALL(MPI_Comm_dup(it % 2 ? half : MPI_COMM_WORLD, &d));
    TU_CALL(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN));
    one_op(d, it % TU_NOPS, 5 + it, it % 2, "dup/free cycle", it);
    TU_CALL(MPI_Comm_free(&d));
    if (d != MPI_COMM_NULL) tu_fail("MPI_Comm_free did not set MPI_COMM_NULL");
  }

  MPI_Comm *frees[] = {&dup, &half, &rev, &node, &drop0, &evens, &notlast};
  for (unsigned i = 0; i < sizeof frees / sizeof *frees; ++i)
    if (*frees[i] != MPI_COMM_NULL) {
      TU_CALL(MPI_Comm_free(frees[i]));
      if (*frees[i] != MPI_COMM_NULL) tu_fail("MPI_Comm_free did not set MPI_COMM_NULL");
    }
  TU_CALL(MPI_Group_free(&gworld));
  all_ops(MPI_COMM_WORLD, 1, "world after frees");
  tu_catalog_free();
  return tu_finish(NULL);
}
