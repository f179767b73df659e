/* coll_soak: a seeded random stream of verified collectives.
 *
 *   coll_soak [seed=S] [iters=N]      defaults: seed=1, iters=2000
 *
 * Each iteration draws, from a stream every rank computes alike, the
 * communicator (world, a dup, the odd/even halves of a split, a reversed
 * split); for the halves the rest is drawn from a per-half stream, so the two
 * halves run different collectives at the same time.  Then: the operation
 * (one of the five), in place or not, the count shape (incl. zero pairs and
 * skew), the count (0, small, medium, up to 16Ki elements), the displacement
 * layout, the type family, and whether derived types are used; each rank
 * picks its own layouts of the family.  Every rank verifies every byte of its
 * receive area (tu_run) and the run stops at the first wrong byte, printing
 * the seed and iteration to reproduce it.
 */
#include "testutil.h"

static uint64_t rnd(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1dull;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_soak");
  tu_catalog_init();
  const long seed = tu_arg_long(argc, argv, "seed", 1);
  const long iters = tu_arg_long(argc, argv, "iters", 2000);
  if (tu_rank == 0) printf("coll_soak: seed=%ld iters=%ld ranks=%d\n", seed, iters, tu_size), fflush(stdout);
  MPI_Comm comms[4];
  comms[0] = MPI_COMM_WORLD;
  TU_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]));
  const int color = tu_rank % 2;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, color, tu_rank, &comms[2]));
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, tu_size - tu_rank, &comms[3]));
  for (int i = 1; i < 4; ++i) TU_CALL(MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN));
  static const char *const cname[4] = {"world", "dup", "split half", "reversed split"};

  uint64_t g = tu_mix((uint64_t)seed) | 1, h = tu_mix((uint64_t)seed * 31 + 7 + (uint64_t)color) | 1;
  long *E = (long *)tu_malloc(sizeof(long) * tu_size * tu_size);
  tu_type **sv = (tu_type **)tu_malloc(sizeof(tu_type *) * tu_size);
  tu_type **rv = (tu_type **)tu_malloc(sizeof(tu_type *) * tu_size);
  char ctx[160], label[160];
  tu_context = ctx;
  double t0 = MPI_Wtime();
  for (long it = 0; it < iters; ++it) {
    const int which = (int)(rnd(&g) % 4);
    uint64_t *R = which == 2 ? &h : &g;
    MPI_Comm comm = comms[which];
    int n, me;
    TU_CALL(MPI_Comm_size(comm, &n));
    TU_CALL(MPI_Comm_rank(comm, &me));
    const int op = (int)(rnd(R) % TU_NOPS);
    const int ip = rnd(R) % 3 == 0;
    const int disp = (int)(rnd(R) % TU_NDISP);
    const int fam = (int)(rnd(R) % 3);
    const int derived = rnd(R) % 2;
    const int shape = (int)(rnd(R) % TU_NE);
    const uint64_t sz = rnd(R) % 100;
    long c = sz < 8 ? 0 : sz < 60 ? 1 + (long)(rnd(R) % 64) : sz < 95 ? 1 + (long)(rnd(R) % 2048)
                                                                      : 1 + (long)(rnd(R) % 16384);
    if (shape == TU_E_SKEWED && c > 2048) c = 2048;
    const uint64_t tpick = rnd(R);
    /* per-rank (and, for alltoallw, per-peer) layouts of the family */
    uint64_t l = tu_mix((uint64_t)seed ^ (uint64_t)it << 20 ^ (uint64_t)tu_rank) | 1;
    tu_counts(E, op, n, shape, c, derived ? 12 : 1, ip && !tu_is_gather(op));
    for (int p = 0; p < n; ++p) {
      int f = op == TU_ALLTOALLW ? (int)((fam + me + p) % 3) : fam; /* symmetric in (me, p) */
      int pf = op == TU_ALLTOALLW ? (int)((fam + p + me) % 3) : fam;
      if (!derived) {
        sv[p] = tu_cat(f, 0), rv[p] = tu_cat(pf, 0);
      } else if (op == TU_ALLGATHERV && tu_ompi_agv_sizes) {
        sv[p] = rv[p] = tu_cat(f, (int)(tpick % 16)); /* see tu_ompi_agv_sizes */
      } else {
        sv[p] = tu_cat(f, (int)(rnd(&l) % 16)), rv[p] = tu_cat(pf, (int)(rnd(&l) % 16));
      }
      if (op != TU_ALLTOALLW && p > 0) sv[p] = sv[0], rv[p] = rv[0];
    }
    snprintf(ctx, sizeof ctx, "reproduce: coll_soak seed=%ld iters=%ld (failed at iteration %ld)", seed, iters, it);
    snprintf(label, sizeof label, "soak it=%ld comm=%s shape=%s count=%ld%s", it, cname[which], tu_e_name[shape], c,
             derived ? " derived" : "");
    tu_case cs = {op, comm, ip, disp, (unsigned)it, E, sv, rv, 0, 0, 0, label};
    tu_run(&cs);
  }
  double dt = MPI_Wtime() - t0;
  for (int i = 1; i < 4; ++i) TU_CALL(MPI_Comm_free(&comms[i]));
  free(E), free(sv), free(rv);
  tu_catalog_free();
  tu_context = "";
  char extra[96];
  snprintf(extra, sizeof extra, "seed=%ld iters=%ld time=%.1fs", seed, iters, dt);
  return tu_finish(extra);
}
