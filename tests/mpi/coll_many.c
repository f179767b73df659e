/* coll_many: alltoall and allgather of small blocks on a large team, where
 * shmcoll runs them in ceil(log2 n) rounds of messages (coll/bruck.cc), and
 * on a split of it into halves: 1 to 32 bytes per block, predefined and
 * derived types (different on the two sides), MPI_IN_PLACE, the nonblocking
 * forms; every receive buffer checked byte for byte with its guards, the
 * send buffers unchanged (testutil.h).  Few cases: the team is large.
 *
 *   coll_many
 */
#include "testutil.h"

static void run_all(MPI_Comm comm, unsigned *salt, const char *where) {
  int n;
  TU_CALL(MPI_Comm_size(comm, &n));
  long *E = (long *)tu_malloc(sizeof(long) * n * n);
  const int ops[2] = {TU_ALLTOALL, TU_ALLGATHER};
  for (int k = 0; k < 2; ++k) {
    const int op = ops[k];
    char label[96];
    /* bytes: 1, 3, 8 and 24 per block */
    snprintf(label, sizeof label, "%s: 1 byte", where);
    tu_counts(E, op, n, TU_E_UNIFORM, 1, 1, 0);
    tu_run_simple(op, comm, E, &tu_t_byte, &tu_t_byte, 0, 0, (*salt)++, label);
    snprintf(label, sizeof label, "%s: 3 chars", where);
    tu_counts(E, op, n, TU_E_UNIFORM, 3, 1, 0);
    tu_run_simple(op, comm, E, tu_cat(TU_F_CHAR, 0), tu_cat(TU_F_CHAR, 1), 0, 0, (*salt)++, label);
    snprintf(label, sizeof label, "%s: 2 ints, in place", where);
    tu_counts(E, op, n, TU_E_UNIFORM, 2, 1, 0);
    tu_run_simple(op, comm, E, tu_cat(TU_F_INT, 0), tu_cat(TU_F_INT, 1), 1, 0, (*salt)++, label);
    snprintf(label, sizeof label, "%s: 4 doubles, derived on both sides", where);
    tu_counts(E, op, n, TU_E_UNIFORM, 4, 4, 0);
    tu_run_simple(op, comm, E, tu_cat(TU_F_DOUBLE, 3), tu_cat(TU_F_DOUBLE, 6), 0, 0, (*salt)++, label);
  }
  free(E);
}

/* The nonblocking forms, checked directly: block (me, p) holds me * 65536 + p. */
static void nonblocking(MPI_Comm comm) {
  int n, me;
  TU_CALL(MPI_Comm_size(comm, &n));
  TU_CALL(MPI_Comm_rank(comm, &me));
  int *s = (int *)tu_malloc(sizeof(int) * n), *r = (int *)tu_malloc(sizeof(int) * (n + 2));
  for (int p = 0; p < n; ++p) s[p] = me * 65536 + p;
  for (int p = 0; p < n + 2; ++p) r[p] = -1;
  MPI_Request q;
  TU_CALL(MPI_Ialltoall(s, 1, MPI_INT, r + 1, 1, MPI_INT, comm, &q));
  TU_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
  if (r[0] != -1 || r[n + 1] != -1) tu_fail("MPI_Ialltoall wrote outside the receive buffer");
  for (int p = 0; p < n; ++p)
    if (r[p + 1] != p * 65536 + me) tu_fail("MPI_Ialltoall: block from %d is %d, expected %d", p, r[p + 1], p * 65536 + me);
  TU_CALL(MPI_Iallgather(&s[0], 1, MPI_INT, r + 1, 1, MPI_INT, comm, &q));
  TU_CALL(MPI_Wait(&q, MPI_STATUS_IGNORE));
  if (r[0] != -1 || r[n + 1] != -1) tu_fail("MPI_Iallgather wrote outside the receive buffer");
  for (int p = 0; p < n; ++p)
    if (r[p + 1] != p * 65536) tu_fail("MPI_Iallgather: block from %d is %d, expected %d", p, r[p + 1], p * 65536);
  tu_ncases += 2;
  free(s), free(r);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_many");
  tu_catalog_init();
  unsigned salt = 1;
  run_all(MPI_COMM_WORLD, &salt, "world");
  nonblocking(MPI_COMM_WORLD);
  MPI_Comm half;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_size - tu_rank, &half));
  TU_CALL(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
  run_all(half, &salt, "half (split by parity, reversed)");
  TU_CALL(MPI_Comm_free(&half));
  tu_catalog_free();
  return tu_finish(NULL);
}
