/* coll_mismatch: shmcoll's behaviour on erroneous programs whose ranks
 * disagree, and its exact error classes.  Only meaningful against shmcoll
 * (the standard leaves erroneous programs undefined); elsewhere it prints a
 * SKIP line and exits 0.
 *
 * Expectations (shmcoll):
 *  - a sender that sends more bytes than the receiver posted: the receiver's
 *    call returns MPI_ERR_TRUNCATE; no byte outside the posted blocks
 *    (guards, gaps between blocks) is written on any rank; every rank returns;
 *    a rank whose call returns MPI_SUCCESS received exactly the right data;
 *  - a sender that sends fewer bytes: every rank returns, nothing is written
 *    outside the posted blocks;
 *  - a sender that sends nothing to a receiver that posted something: that
 *    receiver's call returns MPI_ERR_COUNT (shmcoll skips empty pairs on each
 *    side, and the receiver notices that the sender finished without a lane);
 *  - a receiver that posted nothing from a sender that sends something (a
 *    few bytes, or 1.2 MB through the mailbox stream or a single-copy pull):
 *    every rank returns and the receive buffer is untouched, but the excess
 *    is not reported (that receiver skips the pair; only its own block, when
 *    it is the sender, gives MPI_ERR_TRUNCATE);
 *  - one rank of an alltoall or allgather with counts of its own: that
 *    rank sees MPI_ERR_TRUNCATE, and a rank that returns MPI_SUCCESS has the
 *    right data, also when blocks are relayed through other ranks (bruck);
 *  - afterwards the communicator works;
 *  - argument errors have exactly the classes MPI_ERR_COUNT, MPI_ERR_TYPE,
 *    MPI_ERR_COMM, MPI_ERR_BUFFER (also for recvbuf = MPI_IN_PLACE).
 */
#include "testutil.h"

#ifndef SHMCOLL
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("coll_mismatch: SKIP (expectations specific to shmcoll; this is another MPI library)\n");
  MPI_Finalize();
  return 0;
}
#else

enum { C = 40 }; /* ints per block as posted by the receiver */

/* S[i*n+j]: ints rank i sends to j; R[i*n+j]: ints j posts for i.  For the
 * gather ops only row i = sender matters and every receiver posts R. */
/* Returns this rank's error class. */
static int mismatch_case(int op, MPI_Comm comm, const int *S, const int *R, const char *label, unsigned salt) {
  int n, me;
  TU_CALL(MPI_Comm_size(comm, &n));
  TU_CALL(MPI_Comm_rank(comm, &me));
  const int w = op == TU_ALLTOALLW, gather = tu_is_gather(op);
  int *sc = (int *)tu_malloc(sizeof(int) * n), *rc = (int *)tu_malloc(sizeof(int) * n);
  int *sd = (int *)tu_malloc(sizeof(int) * n), *rd = (int *)tu_malloc(sizeof(int) * n);
  MPI_Datatype *tv = (MPI_Datatype *)tu_malloc(sizeof(MPI_Datatype) * n);
  /* receive blocks in reverse order with gaps of 3 ints (v/w), packed for alltoall/allgather */
  const int uniform = op == TU_ALLTOALL || op == TU_ALLGATHER;
  long pos = uniform ? 0 : 3;
  for (int i = uniform ? 0 : n - 1; uniform ? i < n : i >= 0; i += uniform ? 1 : -1) {
    rc[i] = R[i * n + me];
    rd[i] = (int)pos;
    pos += rc[i] + (uniform ? 0 : 3);
  }
  long spos = 0;
  for (int j = 0; j < n; ++j) {
    sc[j] = gather ? S[me * n] : S[me * n + j];
    sd[j] = (int)spos;
    spos += sc[j];
    tv[j] = MPI_INT;
  }
  const size_t rbytes = (size_t)pos * 4 + 2 * TU_GUARD, sbytes = (size_t)spos * 4 + 4;
  unsigned char *ralloc = (unsigned char *)tu_malloc(rbytes), *image = (unsigned char *)tu_malloc(rbytes);
  unsigned char *sbuf = (unsigned char *)tu_malloc(sbytes), *rbuf = ralloc + TU_GUARD;
  tu_fill_sentinel(ralloc, rbytes);
  memcpy(image, ralloc, rbytes);
  if (gather) tu_pattern(sbuf, tu_key(me, TU_ALL, salt), 0, (size_t)sc[0] * 4);
  else
    for (int j = 0; j < n; ++j) tu_pattern(sbuf + (size_t)sd[j] * 4, tu_key(me, j, salt), 0, (size_t)sc[j] * 4);
  int truncated = 0;
  for (int i = 0; i < n; ++i) {
    long got = gather ? S[i * n] : S[i * n + me];
    if (got > rc[i] && (rc[i] > 0 || i == me)) truncated = 1; /* (an empty receive block is skipped) */
    tu_pattern(image + TU_GUARD + (size_t)rd[i] * 4, tu_key(i, gather ? TU_ALL : me, salt), 0, (size_t)rc[i] * 4);
  }
  if (w)
    for (int p = 0; p < n; ++p) sd[p] *= 4, rd[p] *= 4;
  int r = MPI_ERR_UNKNOWN;
  switch (op) {
    case TU_ALLTOALL: r = MPI_Alltoall(sbuf, sc[0], MPI_INT, rbuf, rc[0], MPI_INT, comm); break;
    case TU_ALLTOALLV: r = MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm); break;
    case TU_ALLTOALLW: r = MPI_Alltoallw(sbuf, sc, sd, tv, rbuf, rc, rd, tv, comm); break;
    case TU_ALLGATHER: r = MPI_Allgather(sbuf, sc[0], MPI_INT, rbuf, rc[0], MPI_INT, comm); break;
    case TU_ALLGATHERV: r = MPI_Allgatherv(sbuf, sc[0], MPI_INT, rbuf, rc, rd, MPI_INT, comm); break;
  }
  if (w)
    for (int p = 0; p < n; ++p) sd[p] /= 4, rd[p] /= 4;
  int cls = MPI_SUCCESS;
  if (r != MPI_SUCCESS) {
    MPI_Error_class(r, &cls);
    /* the error string names the function ("MPI_Alltoall: ...") */
    char es[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(r, es, &len);
    const size_t k = strlen(tu_opname[op]);
    if (strncmp(es, tu_opname[op], k) != 0 || es[k] != ':')
      tu_fail("%s '%s': the error string \"%s\" does not name the function", tu_opname[op], label, es);
  }
  if (truncated && cls != MPI_ERR_TRUNCATE)
    tu_fail("%s '%s': a peer sent more than this rank posted, expected MPI_ERR_TRUNCATE, got class %d", tu_opname[op],
            label, cls);
  /* nothing outside the posted blocks; all of it right when MPI_SUCCESS */
  for (size_t o = 0; o < rbytes; ++o) {
    long rel = (long)o - TU_GUARD;
    int inblock = -1;
    for (int i = 0; i < n; ++i)
      if (rel >= (long)rd[i] * 4 && rel < (long)(rd[i] + rc[i]) * 4) inblock = i;
    if (ralloc[o] == image[o] || (inblock >= 0 && cls != MPI_SUCCESS)) continue;
    if (inblock >= 0)
      tu_fail("%s '%s': returned MPI_SUCCESS but byte %ld of the block from rank %d is wrong", tu_opname[op], label,
              rel - (long)rd[inblock] * 4, inblock);
    tu_fail("%s '%s' (returned class %d): byte at recvbuf%+ld outside every posted block was written", tu_opname[op],
            label, cls, rel);
  }
  tu_ncases++;
  free(sc), free(rc), free(sd), free(rd), free(tv), free(ralloc), free(image), free(sbuf);
  return cls;
}

static void expect_class(int rc, int want, const char *what) {
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != want) tu_fail("%s: error class %d, expected %d", what, cls, want);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_mismatch");
  tu_catalog_init();
  MPI_Comm comm;
  TU_CALL(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  TU_CALL(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  const int n = tu_size;
  int *S = (int *)tu_malloc(sizeof(int) * n * n), *R = (int *)tu_malloc(sizeof(int) * n * n);
  long *E = (long *)tu_malloc(sizeof(long) * n * n);
  unsigned salt = 1;
#define FILL(sexpr, rexpr)                   \
  for (int i = 0; i < n; ++i)                \
    for (int j = 0; j < n; ++j) {            \
      S[i * n + j] = (sexpr);                \
      R[i * n + j] = (rexpr);                \
    }
  for (int round = 0; round < 2; ++round) {
    for (int op = 0; op < TU_NOPS; ++op) {
      const int uniform = op == TU_ALLTOALL || op == TU_ALLGATHER;
      /* everyone sends twice what everyone posts */
      FILL(2 * C, C);
      mismatch_case(op, comm, S, R, "all senders send 2x", salt++);
      if (!uniform) {
        /* one pair (one sender for allgatherv): rank 0 -> rank n-1 sends C + 1 */
        FILL((i == 0 && (j == n - 1 || op == TU_ALLGATHERV)) ? C + 1 : C, C);
        mismatch_case(op, comm, S, R, "one sender sends 1 int more", salt++);
        /* a large excess through the streamed path */
        FILL((i == n - 1 && (j == 0 || op == TU_ALLGATHERV)) ? 300000 : C, C);
        mismatch_case(op, comm, S, R, "one sender sends 300000 ints", salt++);
        /* fewer than posted */
        FILL((i == 0 && (j == n - 1 || op == TU_ALLGATHERV)) ? C / 2 : C, C);
        mismatch_case(op, comm, S, R, "one sender sends fewer", salt++);
        /* nothing, where something is posted: the receivers must not wait for a lane forever */
        FILL((i == 0 && (j == n - 1 || op == TU_ALLGATHERV)) ? 0 : C, C);
        int cls = mismatch_case(op, comm, S, R, "one sender sends nothing", salt++);
        if ((tu_rank == n - 1 || op == TU_ALLGATHERV) && cls != MPI_ERR_COUNT)
          tu_fail("%s 'one sender sends nothing': expected MPI_ERR_COUNT on rank %d, got class %d", tu_opname[op], tu_rank,
                  cls);
        /* something, where nothing is posted: a few bytes, and 1.2 MB (stream or pull) */
        FILL(C, (i == 0 && (j == n - 1 || op == TU_ALLGATHERV)) ? 0 : C);
        mismatch_case(op, comm, S, R, "one receiver posts nothing", salt++);
        FILL((i == n - 1 && (j == 0 || op == TU_ALLGATHERV)) ? 300000 : C,
             (i == n - 1 && (j == 0 || op == TU_ALLGATHERV)) ? 0 : C);
        mismatch_case(op, comm, S, R, "300000 ints where nothing is posted", salt++);
      } else {
        FILL(C / 2, C);
        mismatch_case(op, comm, S, R, "all senders send half", salt++);
        FILL(0, C);
        if (mismatch_case(op, comm, S, R, "all senders send nothing", salt++) != MPI_ERR_COUNT)
          tu_fail("%s 'all senders send nothing': expected MPI_ERR_COUNT", tu_opname[op]);
        FILL(C, 0);
        mismatch_case(op, comm, S, R, "nothing posted", salt++);
        /* one rank's counts are half the others' (it sends and posts C / 2):
         * it must see MPI_ERR_TRUNCATE; the others may fail or not, but a
         * rank that succeeds has exactly the right data, also where blocks
         * travel through other ranks (bruck) */
        FILL(i == 0 ? C / 2 : C, j == 0 ? C / 2 : C);
        mismatch_case(op, comm, S, R, "one rank's counts are half", salt++);
      }
      /* the communicator still works */
      tu_counts(E, op, n, TU_E_VARIED, 36, 12, 0);
      tu_run_simple(op, comm, E, tu_cat(TU_F_DOUBLE, 1), tu_cat(TU_F_DOUBLE, 3), 0, TU_DISP_ROTATED, salt++,
                    "after mismatches");
    }
  }

  /* shmcoll's exact classes for argument errors */
  int buf[8] = {0}, cnt[1] = {1}, dis[1] = {0};
  MPI_Datatype unc, ty[1] = {MPI_INT};
  TU_CALL(MPI_Type_contiguous(2, MPI_INT, &unc));
  if (n == 1) {
    expect_class(MPI_Alltoall(buf, -1, MPI_INT, buf + 4, 1, MPI_INT, comm), MPI_ERR_COUNT, "alltoall count -1");
    expect_class(MPI_Alltoallv(buf, cnt, dis, unc, buf + 4, cnt, dis, MPI_INT, comm), MPI_ERR_TYPE,
                 "alltoallv uncommitted");
    expect_class(MPI_Alltoallw(buf, cnt, dis, ty, MPI_IN_PLACE, cnt, dis, ty, comm), MPI_ERR_BUFFER,
                 "alltoallw recvbuf MPI_IN_PLACE");
    expect_class(MPI_Allgather(NULL, 1, MPI_INT, buf, 1, MPI_INT, comm), MPI_ERR_BUFFER, "allgather NULL sendbuf");
    expect_class(MPI_Allgatherv(buf, 1, MPI_DATATYPE_NULL, buf + 4, cnt, dis, MPI_INT, comm), MPI_ERR_TYPE,
                 "allgatherv MPI_DATATYPE_NULL");
  }
  expect_class(MPI_Allgather(buf, 1, MPI_INT, buf + 4, 1, MPI_INT, MPI_COMM_NULL), MPI_ERR_COMM,
               "allgather MPI_COMM_NULL");
  expect_class(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm), MPI_ERR_BUFFER,
               "alltoall recvbuf MPI_IN_PLACE");
  TU_CALL(MPI_Type_free(&unc));
  TU_CALL(MPI_Comm_free(&comm));
  free(S), free(R), free(E);
  tu_catalog_free();
  return tu_finish(NULL);
}
#endif
