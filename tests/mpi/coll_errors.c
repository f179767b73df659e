/* coll_errors: argument errors of the five collectives are reported, with
 * MPI_ERRORS_RETURN, as the standard's error classes, consistently on every
 * rank (all ranks pass the same bad argument, so none waits for the others),
 * and the communicator works afterwards.
 *
 * Accepted classes are those the standard allows an implementation to
 * return; MPI_ERR_ARG is accepted as the generic alternative wherever a more
 * specific class exists.  Checks the standard leaves to the implementation's
 * discretion and that Open MPI or MPICH do not make (a NULL buffer with a
 * non-zero count) run only on shmcoll; shmcoll's exact classes are checked
 * in coll_mismatch.
 */
#include "testutil.h"

static int nchecks;

static int in_set(int cls, const int *ok) {
  for (; *ok >= 0; ++ok)
    if (cls == *ok) return 1;
  return 0;
}
static int survey; /* "survey": print what every check returns (one rank only) */
static void expect_error(int rc, const int *ok, const char *fn, const char *what) {
  char s[MPI_MAX_ERROR_STRING] = "";
  int len = 0, cls = -1;
  if (survey) {
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls), MPI_Error_string(rc, s, &len);
    printf("survey: %s with %s: rc %d class %d %s%s\n", fn, what, rc, cls, s,
           rc != MPI_SUCCESS && in_set(cls, ok) ? "" : "   <-- NOT ACCEPTED");
    return;
  }
  if (rc == MPI_SUCCESS) tu_fail("%s with %s returned MPI_SUCCESS, expected an error", fn, what);
  MPI_Error_class(rc, &cls);
  MPI_Error_string(rc, s, &len);
  if (!in_set(cls, ok)) {
    char list[128] = "";
    for (const int *o = ok; *o >= 0; ++o) snprintf(list + strlen(list), sizeof list - strlen(list), " %d", *o);
    tu_fail("%s with %s: error class %d (%s), expected one of {%s }", fn, what, cls, s, list);
  }
  ++nchecks;
}

static const int K_COUNT[] = {MPI_ERR_COUNT, MPI_ERR_ARG, -1};
static const int K_TYPE[] = {MPI_ERR_TYPE, MPI_ERR_ARG, -1};
static const int K_COMM[] = {MPI_ERR_COMM, -1};
static const int K_BUFFER[] = {MPI_ERR_BUFFER, MPI_ERR_ARG, -1};

enum { BAD_NONE, BAD_SCOUNT, BAD_RCOUNT, BAD_STYPE_NULL, BAD_RTYPE_NULL, BAD_STYPE_UNCOMMITTED,
       BAD_RTYPE_UNCOMMITTED, BAD_COMM, BAD_SBUF_NULL, BAD_RBUF_NULL, BAD_RBUF_INPLACE, BAD_N };
static const char *const bad_name[BAD_N] = {
    "no error", "a negative send count", "a negative receive count", "sendtype MPI_DATATYPE_NULL",
    "recvtype MPI_DATATYPE_NULL", "an uncommitted sendtype", "an uncommitted recvtype", "comm MPI_COMM_NULL",
    "sendbuf NULL and a non-zero count", "recvbuf NULL and a non-zero count", "recvbuf MPI_IN_PLACE"};
static const int *const bad_ok[BAD_N] = {NULL,   K_COUNT, K_COUNT, K_TYPE,   K_TYPE,  K_TYPE,
                                         K_TYPE, K_COMM,  K_BUFFER, K_BUFFER, K_BUFFER};

/* Checks the reference implementations get wrong (skipped there only). */
static int impl_skips(int op, int bad) {
#ifdef OPEN_MPI
  /* Open MPI 4.1.4 MPI_Allgather: an uncommitted recvtype is not detected
   * (MPI_SUCCESS), and MPI_COMM_NULL crashes (SIGSEGV) instead of returning
   * MPI_ERR_COMM. */
  if (op == TU_ALLGATHER && (bad == BAD_RTYPE_UNCOMMITTED || bad == BAD_COMM)) return 1;
  /* MPI_Allgatherv: negative recvcounts and an uncommitted recvtype are not
   * checked (MPI_SUCCESS, or SIGSEGV on one rank); MPI_COMM_NULL as in
   * MPI_Allgather. */
  if (op == TU_ALLGATHERV && (bad == BAD_RCOUNT || bad == BAD_RTYPE_UNCOMMITTED || bad == BAD_COMM)) return 1;
#endif
  (void)op, (void)bad;
  return 0;
}

/* Calls `op` on comm with valid arguments (4 ints per peer) except `bad`. */
static int call(int op, MPI_Comm comm, int bad, MPI_Datatype uncommitted, int n) {
  enum { C = 4 };
  int *sbuf = (int *)tu_malloc(sizeof(int) * C * n), *rbuf = (int *)tu_malloc(sizeof(int) * C * n);
  int *sc = (int *)tu_malloc(sizeof(int) * n), *rc = (int *)tu_malloc(sizeof(int) * n);
  int *sd = (int *)tu_malloc(sizeof(int) * n), *rd = (int *)tu_malloc(sizeof(int) * n);
  MPI_Datatype *st = (MPI_Datatype *)tu_malloc(sizeof(MPI_Datatype) * n);
  MPI_Datatype *rt = (MPI_Datatype *)tu_malloc(sizeof(MPI_Datatype) * n);
  const int w = op == TU_ALLTOALLW;
  for (int p = 0; p < n; ++p) {
    sc[p] = rc[p] = C;
    sd[p] = rd[p] = w ? p * C * (int)sizeof(int) : p * C;
    st[p] = rt[p] = MPI_INT;
    sbuf[p] = p;
  }
  int scount = C, rcount = C;
  MPI_Datatype stype = MPI_INT, rtype = MPI_INT;
  const void *sb = sbuf;
  void *rb = rbuf;
  const int last = n - 1;
  switch (bad) {
    case BAD_SCOUNT: scount = -1, sc[last] = -1; break;
    case BAD_RCOUNT: rcount = -1, rc[last] = -1; break;
    case BAD_STYPE_NULL: stype = st[last] = MPI_DATATYPE_NULL; break;
    case BAD_RTYPE_NULL: rtype = rt[last] = MPI_DATATYPE_NULL; break;
    case BAD_STYPE_UNCOMMITTED: stype = st[last] = uncommitted; break;
    case BAD_RTYPE_UNCOMMITTED: rtype = rt[last] = uncommitted; break;
    case BAD_COMM: comm = MPI_COMM_NULL; break;
    case BAD_SBUF_NULL: sb = NULL; break;
    case BAD_RBUF_NULL: rb = NULL; break;
    case BAD_RBUF_INPLACE: rb = MPI_IN_PLACE; break;
  }
  int r = MPI_ERR_UNKNOWN;
  switch (op) {
    case TU_ALLTOALL: r = MPI_Alltoall(sb, scount, stype, rb, rcount, rtype, comm); break;
    case TU_ALLTOALLV: r = MPI_Alltoallv(sb, sc, sd, stype, rb, rc, rd, rtype, comm); break;
    case TU_ALLTOALLW: r = MPI_Alltoallw(sb, sc, sd, st, rb, rc, rd, rt, comm); break;
    case TU_ALLGATHER: r = MPI_Allgather(sb, scount, stype, rb, rcount, rtype, comm); break;
    case TU_ALLGATHERV: r = MPI_Allgatherv(sb, scount, stype, rb, rc, rd, rtype, comm); break;
  }
  free(sbuf), free(rbuf), free(sc), free(rc), free(sd), free(rd), free(st), free(rt);
  return r;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_errors");
  tu_catalog_init();
  MPI_Comm comm;
  TU_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  TU_CALL(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  MPI_Errhandler eh;
  TU_CALL(MPI_Comm_get_errhandler(comm, &eh));
  if (eh != MPI_ERRORS_RETURN) tu_fail("MPI_Comm_get_errhandler did not return MPI_ERRORS_RETURN");
  MPI_Datatype unc;
  TU_CALL(MPI_Type_contiguous(2, MPI_INT, &unc)); /* never committed */
  const int n = tu_size;
  survey = tu_arg_flag(argc, argv, "survey") && n == 1;
  long *E = (long *)tu_malloc(sizeof(long) * n * n);
  int skipped = 0;
  for (int op = 0; op < TU_NOPS; ++op) {
    for (int bad = 1; bad < BAD_N; ++bad) {
#ifndef SHMCOLL
      /* Detecting a NULL buffer is left to the implementation; Open MPI and
       * MPICH do not check it in collectives (they would crash here). */
      if (bad == BAD_SBUF_NULL || bad == BAD_RBUF_NULL) {
        ++skipped;
        continue;
      }
#endif
      if (impl_skips(op, bad)) {
        ++skipped;
        continue;
      }
      int rc = call(op, comm, bad, unc, n);
      expect_error(rc, bad_ok[bad], tu_opname[op], bad_name[bad]);
    }
    /* the communicator still works, on every rank */
    tu_counts(E, op, n, TU_E_VARIED, 7, 1, 0);
    tu_run_simple(op, comm, E, tu_cat(TU_F_INT, 0), tu_cat(TU_F_INT, 0), 0, TU_DISP_REVERSE, 77 + op,
                  "after argument errors");
    if (call(op, comm, BAD_NONE, unc, n) != MPI_SUCCESS) tu_fail("%s with valid arguments failed", tu_opname[op]);
  }
  TU_CALL(MPI_Type_free(&unc));
  TU_CALL(MPI_Comm_free(&comm));
  free(E);
  tu_catalog_free();
  char extra[64];
  snprintf(extra, sizeof extra, "error-checks=%d skipped=%d", nchecks, skipped);
  return tu_finish(extra);
}
