/*
 * nbc_reduce_scatter_scan.c -- MPI_Ireduce_scatter, MPI_Ireduce_scatter_block,
 * MPI_Iscan and MPI_Iexscan, and their MPI-4 big-count (_c) forms.
 *
 * Written against the standard MPI C API only (the same source builds with
 * Open MPI's and MPICH's mpicc; the _c forms only where MPI_VERSION >= 4).
 * "nbc_reduce_scatter_scan [quick] [verbose]": quick trims the sizes and the
 * kinds; verbose names each operation as it starts (on stderr).
 *
 * Every result is checked byte for byte against a reference computed here:
 * each element of each rank's input is a hash of (contributor, element,
 * salt), and the expected element is the fold of the contributions in rank
 * order with C arithmetic in the element's own type.  Every receive buffer is
 * bracketed by guard regions that must keep their sentinel, as must the holes
 * inside derived types; send buffers must not change; rank 0's recvbuf of an
 * exscan must stay untouched (in place too).  With MPI_IN_PLACE, the data
 * bytes of the elements of a reduce-scatter's recvbuf beyond this rank's
 * result are left undefined by the standard and are not compared (their
 * holes are).
 *
 * Element kinds: MPI_INT with MPI_SUM, MPI_DOUBLE with MPI_MAX, MPI_2INT with
 * MPI_MAXLOC (many ties: the lowest index wins), a non-commutative user
 * operation (the product of 2x2 matrices over the integers mod 251, exact in
 * doubles) on a contiguous type and on a type with holes, and a commutative
 * user operation on a strided int vector with holes.
 *
 *  1. The four operations at 0, 1, 7, 100 and 4099 elements and at 256 KiB
 *     per slice (scaled down above 8 ranks), every kind, in place and not,
 *     reduce-scatter counts uniform, varied, sparse (zeros) and skewed; the
 *     four are started back to back on one communicator and completed
 *     together (MPI_Waitall, MPI_Waitany, MPI_Testall, MPI_Test round-robin,
 *     MPI_Wait in reverse order, MPI_Waitsome in turn).  MPI_COMM_WORLD, and
 *     a communicator with reversed ranks.
 *  2. Outstanding operations on three communicators (world, reversed, an
 *     even/odd split), two per communicator, started in a different order on
 *     even and odd ranks (the standard fixes the order per communicator only)
 *     and completed in yet another order.
 *  3. Intercommunicators (two splits of MPI_COMM_WORLD, one uneven):
 *     MPI_Ireduce_scatter(_block)(_c) of MPI_INT and of the non-commutative
 *     operation, each group getting the other group's inputs reduced in its
 *     rank order and cut by its own counts; both started before either is
 *     completed.
 *  4. A datatype and an operation freed while an MPI_Iscan that uses them is
 *     outstanding: the operation completes normally.
 *  5. Argument errors with MPI_ERRORS_RETURN: MPI_OP_NULL (MPI_ERR_OP),
 *     negative counts (MPI_ERR_COUNT), MPI_Iscan and MPI_Iexscan on an
 *     intercommunicator (MPI_ERR_COMM); the communicator works afterwards.
 *
 * On a wrong result the rank, the case and the first differing byte offset
 * are printed and the program calls MPI_Abort(MPI_COMM_WORLD, 1).
 */
#include "interutil.h"
#include "redref.h"

#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static int quick, verbose;
static unsigned salt = 1;

/* ---- element kinds ---------------------------------------------------------------- */

enum { K_INT_SUM, K_DBL_MAX, K_2INT_MAXLOC, K_MAT, K_MAT_HOLES, K_VEC_SUM, K_N };
typedef struct kind {
  const char *name;
  MPI_Datatype dt;
  MPI_Op op;
  int ext, nseg, off[4], len[4];
} kind;
static kind K[K_N];
static MPI_Datatype t_math, t_vec; /* t_mat and op_matmul are redref.h's, made in kinds_init */
static MPI_Op op_vsum;

/* The 4 matrix entries of an element of t_mat (contiguous) or t_math (holes
 * at 16..24 and 40..48). */
static const int mat_off[2][4] = {{0, 8, 16, 24}, {0, 8, 24, 32}};

/* inout = in * inout (2x2 matrices mod 251): not commutative. */
static void mat_mul(const unsigned char *a, unsigned char *b, int holes) {
  const int *o = mat_off[holes];
  double x[4], y[4], z[4];
  for (int k = 0; k < 4; ++k) memcpy(&x[k], a + o[k], 8), memcpy(&y[k], b + o[k], 8);
  z[0] = mod251(x[0] * y[0] + x[1] * y[2]), z[1] = mod251(x[0] * y[1] + x[1] * y[3]);
  z[2] = mod251(x[2] * y[0] + x[3] * y[2]), z[3] = mod251(x[2] * y[1] + x[3] * y[3]);
  for (int k = 0; k < 4; ++k) memcpy(b + o[k], &z[k], 8);
}
static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  const int holes = *dt == t_math;
  const size_t ext = holes ? 48 : 32;
  for (int k = 0; k < *len; ++k) mat_mul((unsigned char *)in + k * ext, (unsigned char *)inout + k * ext, holes);
}

/* The two ints of a t_vec element (at 0 and 12 of 16 bytes), added with wrap-around. */
static void vec_add(const unsigned char *a, unsigned char *b) {
  for (int k = 0; k < 2; ++k) {
    unsigned x, y;
    memcpy(&x, a + 12 * k, 4), memcpy(&y, b + 12 * k, 4);
    y += x;
    memcpy(b + 12 * k, &y, 4);
  }
}
static void vsum_fn(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  for (int k = 0; k < *len; ++k) vec_add((unsigned char *)in + 16 * k, (unsigned char *)inout + 16 * k);
}

static void kinds_init(void) {
  MPI_Datatype u;
  TU_CALL(MPI_Type_contiguous(4, MPI_DOUBLE, &t_mat));
  TU_CALL(MPI_Type_commit(&t_mat));
  {
    int bl[2] = {2, 2};
    MPI_Aint d[2] = {0, 24};
    TU_CALL(MPI_Type_create_hindexed(2, bl, d, MPI_DOUBLE, &u));
    TU_CALL(MPI_Type_create_resized(u, 0, 48, &t_math));
    TU_CALL(MPI_Type_free(&u));
    TU_CALL(MPI_Type_commit(&t_math));
  }
  TU_CALL(MPI_Type_vector(2, 1, 3, MPI_INT, &u));
  TU_CALL(MPI_Type_create_resized(u, 0, 16, &t_vec));
  TU_CALL(MPI_Type_free(&u));
  TU_CALL(MPI_Type_commit(&t_vec));
  TU_CALL(MPI_Op_create(matmul_fn, 0, &op_matmul));
  TU_CALL(MPI_Op_create(vsum_fn, 1, &op_vsum));
  kind k[K_N] = {
      {"MPI_INT/MPI_SUM", MPI_INT, MPI_SUM, 4, 1, {0}, {4}},
      {"MPI_DOUBLE/MPI_MAX", MPI_DOUBLE, MPI_MAX, 8, 1, {0}, {8}},
      {"MPI_2INT/MPI_MAXLOC", MPI_2INT, MPI_MAXLOC, 8, 1, {0}, {8}},
      {"contiguous(4,MPI_DOUBLE)/matmul (non-commutative)", t_mat, op_matmul, 32, 1, {0}, {32}},
      {"resized(hindexed({2,2},{0,24},MPI_DOUBLE),0,48)/matmul (non-commutative, holes)", t_math, op_matmul, 48, 2,
       {0, 24}, {16, 16}},
      {"resized(vector(2,1,3,MPI_INT),0,16)/user sum (holes)", t_vec, op_vsum, 16, 2, {0, 12}, {4, 4}},
  };
  memcpy(K, k, sizeof k);
}

static void kinds_free(void) {
  TU_CALL(MPI_Op_free(&op_matmul));
  TU_CALL(MPI_Op_free(&op_vsum));
  TU_CALL(MPI_Type_free(&t_mat));
  TU_CALL(MPI_Type_free(&t_math));
  TU_CALL(MPI_Type_free(&t_vec));
}

/* Element i of contributor `key` (an element of K[k]'s layout at el; only
 * the data bytes are written). */
static void kind_contrib(int k, int key, long i, unsigned sl, unsigned char *el) {
  const uint64_t h = tu_mix(((uint64_t)(key + 1) << 40) ^ ((uint64_t)i << 8) ^ sl);
  switch (k) {
    case K_INT_SUM: {
      int v = (int)(h % 2001) - 1000;
      memcpy(el, &v, 4);
    } break;
    case K_DBL_MAX: {
      double v = (double)((int)(h % 2001) - 1000);
      memcpy(el, &v, 8);
    } break;
    case K_2INT_MAXLOC: {
      int v[2] = {(int)(h % 5), key * 3 + 1}; /* many ties */
      memcpy(el, v, 8);
    } break;
    case K_MAT:
    case K_MAT_HOLES:
      for (int e = 0; e < 4; ++e) {
        double v = (double)((h >> (8 * e)) % 251);
        memcpy(el + mat_off[k == K_MAT_HOLES][e], &v, 8);
      }
      break;
    default:
      for (int e = 0; e < 2; ++e) {
        int v = (int)(uint32_t)(h >> (32 * e));
        memcpy(el + 12 * e, &v, 4);
      }
      break;
  }
}

/* acc = x (op) acc. */
static void kind_combine(int k, const unsigned char *x, unsigned char *acc) {
  switch (k) {
    case K_INT_SUM: {
      unsigned a, b;
      memcpy(&a, x, 4), memcpy(&b, acc, 4);
      b += a;
      memcpy(acc, &b, 4);
    } break;
    case K_DBL_MAX: {
      double a, b;
      memcpy(&a, x, 8), memcpy(&b, acc, 8);
      if (a > b) memcpy(acc, &a, 8);
    } break;
    case K_2INT_MAXLOC: {
      int a[2], b[2];
      memcpy(a, x, 8), memcpy(b, acc, 8);
      if (a[0] > b[0] || (a[0] == b[0] && a[1] < b[1])) memcpy(acc, a, 8);
    } break;
    case K_MAT: mat_mul(x, acc, 0); break;
    case K_MAT_HOLES: mat_mul(x, acc, 1); break;
    default: vec_add(x, acc); break;
  }
}

/* Writes into `dst` (an element slot) the data bytes of element i folded over
 * contributors keys[0..m) in that order: keys[0] o keys[1] o ... o keys[m-1]. */
static void expect_elem(int k, const int *keys, int m, long i, unsigned sl, unsigned char *dst) {
  unsigned char acc[64], x[64];
  kind_contrib(k, keys[m - 1], i, sl, acc);
  for (int r = m - 2; r >= 0; --r) {
    kind_contrib(k, keys[r], i, sl, x);
    kind_combine(k, x, acc);
  }
  for (int s = 0; s < K[k].nseg; ++s) memcpy(dst + K[k].off[s], acc + K[k].off[s], (size_t)K[k].len[s]);
}

/* ---- jobs ------------------------------------------------------------------------- */

enum { O_RS, O_RSB, O_SCAN, O_EXSCAN, O_N };
static const char *const oname[O_N] = {"MPI_Ireduce_scatter", "MPI_Ireduce_scatter_block", "MPI_Iscan",
                                       "MPI_Iexscan"};
enum { S_UNIFORM, S_VARIED, S_SPARSE, S_SKEWED, S_N };
static const char *const sname[S_N] = {"uniform", "varied", "sparse", "skewed"};

/* Who contributes to a communicator's operations: intracommunicator: its
 * ranks (keys 0..n-1); intercommunicator: both groups (keys g*1000 + local
 * rank). */
typedef struct cinfo {
  MPI_Comm comm;
  const char *name;
  int inter;
  int n, me;     /* local group size, my rank in it */
  int m, mine;   /* intercommunicators: remote group size, my group (0 or 1) */
} cinfo;

static cinfo intra_info(MPI_Comm comm, const char *name) {
  cinfo c;
  memset(&c, 0, sizeof c);
  c.comm = comm, c.name = name;
  TU_CALL(MPI_Comm_size(comm, &c.n));
  TU_CALL(MPI_Comm_rank(comm, &c.me));
  return c;
}

typedef struct job {
  int op, kind, inplace, big, skip;
  const cinfo *c;
  int *counts;       /* reduce_scatter(_block): per local rank */
  void *ccounts;     /* the same as MPI_Count (the _c forms) */
  long total;        /* input elements per rank */
  long first, mine;  /* this rank's result: elements [first, first + mine) of the reduction */
  long dc_from, dc_to; /* elements of recvbuf whose data bytes are undefined afterwards */
  gb rb, sb;
  int has_sb;
  unsigned sl;
  MPI_Request req;
  char desc[400];
} job;

/* Counts of a reduce-scatter over the local group (n ranks) whose total is
 * `total` (inter) or follows from `c` and the shape (intra). */
static long make_counts(int *counts, int n, long c, int shape, long total) {
  if (total < 0) {
    total = 0;
    for (int p = 0; p < n; ++p) {
      long v = c;
      switch (shape) {
        case S_VARIED: v = c + (p * 5 + 3) % 7; break;
        case S_SPARSE: v = p % 3 == 1 ? 0 : c + p % 4; break;
        case S_SKEWED: v = p == n - 1 ? c * n + 3 : p % 2; break;
        default: break;
      }
      counts[p] = (int)v;
      total += v;
    }
    return total;
  }
  /* a given total: even, then moved between neighbours (skewed: all on the last) */
  long base = total / n, sum = 0;
  for (int p = 0; p < n; ++p) counts[p] = shape == S_SKEWED ? 0 : (int)base;
  if (shape == S_VARIED || shape == S_SPARSE)
    for (int p = 0; p + 1 < n; p += 2) {
      const long d = shape == S_SPARSE ? base : (base < p + 1 ? base : p + 1);
      counts[p] -= (int)d, counts[p + 1] += (int)d;
    }
  for (int p = 0; p < n; ++p) sum += counts[p];
  counts[n - 1] += (int)(total - sum);
  return total;
}

/* Known defects of the reference libraries (Open MPI 4.1.4 and MPICH 4.0.2
 * from Debian) that this program would otherwise report; decided from
 * arguments every rank shares, so all ranks skip the same operations.
 * Skipped (and counted) for that library only, never on shmcoll.
 *  - MPICH: MPI_Reduce_scatter and MPI_Ireduce_scatter (blocking too) with a
 *    non-commutative operation on a communicator of 2 or 4 ranks (its
 *    recursive-halving algorithm for powers of two), on a datatype whose
 *    extent exceeds its true extent (here 48 and 40 bytes), corrupt the heap
 *    ("corrupted size vs. prev_size", "free(): invalid pointer") from 4
 *    elements per rank on; right at 3 ranks, with a commutative operation or
 *    a contiguous type.  Reduce-scatter(_block) of that kind on a
 *    power-of-two intracommunicator is not run for it.
 *  - MPICH: MPI_Reduce_scatter and MPI_Ireduce_scatter (blocking too) with
 *    MPI_IN_PLACE and counts that are not all equal fail an assertion
 *    ("memcpy argument memory ranges overlap" in typerep_yaksa_pack.c) once
 *    the input reaches about 512 KiB (3 ranks, MPI_INT, MPI_SUM: right at
 *    40000 + p % 4 elements for rank p, wrong at 50000 + p % 4).  Not run
 *    for it from 400 KiB of input on. */
static int known_defect(const job *j) {
#if defined(MPICH_VERSION)
  const int n = j->c->n;
  if ((j->op == O_RS || j->op == O_RSB) && j->kind == K_MAT_HOLES && !j->c->inter && n > 1 && (n & (n - 1)) == 0)
    return 1;
  if (j->op == O_RS && j->inplace && j->total * K[j->kind].ext >= 400 * 1024) {
    for (int p = 1; p < n; ++p)
      if (j->counts[p] != j->counts[0]) return 1;
  }
#endif
  (void)j;
  return 0;
}

/* Builds the buffers and images of one operation (not started). `c_or_total`
 * is the element count (scan), the per-rank count (intra reduce-scatter, by
 * shape) or the per-rank input total (inter reduce-scatter). */
static job *job_new(int op, int k, const cinfo *c, long cnt, int shape, int inplace, int big, const char *label) {
  job *j = (job *)calloc(1, sizeof(job));
  if (!j) tu_fail("out of memory");
  j->op = op, j->kind = k, j->c = c, j->inplace = inplace, j->req = MPI_REQUEST_NULL, j->sl = salt++;
#if MPI_VERSION < 4
  big = 0;
#endif
  j->big = big;
  const int n = c->n, me = c->me, ext = K[k].ext;
  j->counts = (int *)tu_malloc(sizeof(int) * (size_t)n);
  if (op == O_RS || op == O_RSB) {
    if (c->inter) {
      const long total = (long)c->n * c->m * cnt;
      if (op == O_RS) make_counts(j->counts, n, 0, shape, total);
      else
        for (int p = 0; p < n; ++p) j->counts[p] = (int)(c->m * cnt);
      j->total = total;
    } else if (op == O_RS) {
      j->total = make_counts(j->counts, n, cnt, shape, -1);
    } else {
      for (int p = 0; p < n; ++p) j->counts[p] = (int)cnt;
      j->total = (long)n * cnt;
    }
    for (int p = 0; p < me; ++p) j->first += j->counts[p];
    j->mine = j->counts[me];
  } else {
    j->total = j->mine = cnt;
  }
  snprintf(j->desc, sizeof j->desc, "%s: %s%s on %s (%s, n=%d) of %s, %ld elements per rank%s%s%s", label, oname[op],
           big ? "_c" : "", c->name, c->inter ? "intercommunicator" : "intracommunicator", n, K[k].name, j->total,
           op == O_RS ? " counts " : "", op == O_RS ? sname[shape] : "", inplace ? " MPI_IN_PLACE" : "");
  j->skip = known_defect(j);

  /* contributors: this rank's key, and whose inputs are folded into its result */
  int mykey = c->inter ? c->mine * 1000 + me : me, m = c->inter ? c->m : n;
  int *keys = (int *)tu_malloc(sizeof(int) * (size_t)m);
  for (int r = 0; r < m; ++r) keys[r] = c->inter ? (1 - c->mine) * 1000 + r : r;
  if (op == O_SCAN) m = me + 1;
  if (op == O_EXSCAN) m = me;

  const long nrecv = inplace && (op == O_RS || op == O_RSB) ? j->total : j->mine;
  gb_new(&j->rb, (size_t)nrecv * (size_t)ext);
  unsigned char *in;
  if (inplace) {
    in = j->rb.p;
  } else {
    gb_new(&j->sb, (size_t)j->total * (size_t)ext);
    j->has_sb = 1;
    in = j->sb.p;
  }
  for (long i = 0; i < j->total; ++i) kind_contrib(k, mykey, i, j->sl, in + i * ext);
  if (inplace) memcpy(j->rb.img, j->rb.all, j->rb.len + 2 * TU_GUARD);
  else memcpy(j->sb.img, j->sb.all, j->sb.len + 2 * TU_GUARD);
  if (m > 0)
    for (long i = 0; i < j->mine; ++i) expect_elem(k, keys, m, j->first + i, j->sl, j->rb.ip + i * ext);
  if (inplace && (op == O_RS || op == O_RSB)) j->dc_from = j->mine, j->dc_to = j->total;
  free(keys);
  return j;
}

static void job_start(job *j) {
  if (verbose) fprintf(stderr, "rank %d: start %s\n", tu_rank, j->desc);
  if (j->skip) return;
  const void *s = j->inplace ? MPI_IN_PLACE : (const void *)j->sb.p;
  void *r = j->rb.p;
  const MPI_Datatype dt = K[j->kind].dt;
  const MPI_Op o = K[j->kind].op;
  const MPI_Comm comm = j->c->comm;
  int rc = MPI_ERR_UNKNOWN;
#if MPI_VERSION >= 4
  if (j->big) {
    /* (the count array must stay as it is until the operation completes) */
    MPI_Count *cc = (MPI_Count *)tu_malloc(sizeof(MPI_Count) * (size_t)j->c->n);
    for (int p = 0; p < j->c->n; ++p) cc[p] = j->counts[p];
    j->ccounts = cc;
    switch (j->op) {
      case O_RS: rc = MPI_Ireduce_scatter_c(s, r, cc, dt, o, comm, &j->req); break;
      case O_RSB: rc = MPI_Ireduce_scatter_block_c(s, r, cc[0], dt, o, comm, &j->req); break;
      case O_SCAN: rc = MPI_Iscan_c(s, r, (MPI_Count)j->total, dt, o, comm, &j->req); break;
      default: rc = MPI_Iexscan_c(s, r, (MPI_Count)j->total, dt, o, comm, &j->req); break;
    }
  }
#endif
  if (!j->big) switch (j->op) {
      case O_RS: rc = MPI_Ireduce_scatter(s, r, j->counts, dt, o, comm, &j->req); break;
      case O_RSB: rc = MPI_Ireduce_scatter_block(s, r, j->counts[0], dt, o, comm, &j->req); break;
      case O_SCAN: rc = MPI_Iscan(s, r, (int)j->total, dt, o, comm, &j->req); break;
      default: rc = MPI_Iexscan(s, r, (int)j->total, dt, o, comm, &j->req); break;
    }
  expect_started(rc, j->req, j->desc);
}

/* Checks a completed job and frees it. */
static void job_verify(job *j) {
  if (j->req != MPI_REQUEST_NULL) tu_fail("case '%s': request not MPI_REQUEST_NULL after completion", j->desc);
  if (j->skip) {
    tu_nskipped++;
  } else {
    const kind *kk = &K[j->kind];
    for (long i = j->dc_from; i < j->dc_to; ++i)
      for (int s = 0; s < kk->nseg; ++s) {
        const size_t o = (size_t)(i * kk->ext + kk->off[s]);
        memcpy(j->rb.ip + o, j->rb.p + o, (size_t)kk->len[s]);
      }
    const char *which = j->op == O_EXSCAN && j->c->me == 0 ? "rank 0's recvbuf of an exscan (must stay untouched)"
                                                            : "receive buffer";
    gb_check(&j->rb, j->desc, which);
    if (j->has_sb) gb_check(&j->sb, j->desc, "send buffer (must not change)");
    nchecks++;
  }
  gb_free(&j->rb);
  if (j->has_sb) gb_free(&j->sb);
  free(j->counts), free(j->ccounts);
  free(j);
}

/* ---- completion ------------------------------------------------------------------- */

enum { M_WAITALL, M_WAITANY, M_TESTALL, M_TEST, M_WAIT_REVERSE, M_WAITSOME, M_N };

/* Completes the k started jobs with `mode`, then verifies and frees them. */
static void complete(job **js, int k, int mode, const char *what) {
  MPI_Request *r = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * (size_t)k);
  int *idx = (int *)tu_malloc(sizeof(int) * (size_t)k);
  MPI_Status *st = (MPI_Status *)tu_malloc(sizeof(MPI_Status) * (size_t)k);
  int active = 0;
  for (int i = 0; i < k; ++i) {
    r[i] = js[i]->req;
    active += r[i] != MPI_REQUEST_NULL;
  }
  switch (mode) {
    case M_WAITALL: TU_CALL(MPI_Waitall(k, r, st)); break;
    case M_WAITANY:
      while (active) {
        int ix = -1;
        TU_CALL(MPI_Waitany(k, r, &ix, MPI_STATUS_IGNORE));
        if (ix < 0 || ix >= k) tu_fail("%s: MPI_Waitany returned index %d", what, ix);
        active--;
      }
      break;
    case M_TESTALL: testall_poll(k, r, st, 0); break;
    case M_TEST:
      while (active) {
        for (int i = 0; i < k; ++i) {
          if (r[i] == MPI_REQUEST_NULL) continue;
          int flag = 0;
          TU_CALL(MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE));
          npolls++;
          if (flag) {
            if (r[i] != MPI_REQUEST_NULL) tu_fail("%s: MPI_Test left a completed request active", what);
            active--;
          }
        }
      }
      break;
    case M_WAIT_REVERSE:
      for (int i = k - 1; i >= 0; --i) TU_CALL(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
      break;
    default:
      while (active) {
        int out = 0;
        TU_CALL(MPI_Waitsome(k, r, &out, idx, st));
        if (out < 1 || out > active) tu_fail("%s: MPI_Waitsome completed %d of %d", what, out, active);
        active -= out;
      }
      break;
  }
  for (int i = 0; i < k; ++i) {
    js[i]->req = r[i];
    job_verify(js[i]);
  }
  free(r), free(idx), free(st);
}

/* ---- 1. every operation, size, kind; four outstanding at once ----------------------- */

static long sizes[6];
static int nsizes;

static void part1(const cinfo *c, int full) {
  static int mode = 0;
  char label[160];
  for (int si = 0; si < nsizes; ++si)
    for (int k = 0; k < K_N; ++k) {
      if (!full && k % 2 != si % 2) continue;
      if (quick && si >= 4 && k != K_INT_SUM && k != K_MAT_HOLES) continue;
      /* the largest size: the same number of bytes for every kind */
      const long cnt = si == nsizes - 1 ? sizes[si] / K[k].ext : sizes[si];
      for (int ip = 0; ip < 2; ++ip) {
        snprintf(label, sizeof label, "part 1, size %ld", cnt);
        job *js[O_N];
        for (int op = 0; op < O_N; ++op)
          js[op] = job_new(op, k, c, cnt, (k + ip + si) % S_N, ip, (k + ip + op) % 2, label);
        /* started back to back, in an order that rotates */
        for (int i = 0; i < O_N; ++i) job_start(js[(i + si + k) % O_N]);
        complete(js, O_N, mode++ % M_N, label);
      }
    }
}

/* ---- 2. outstanding on three communicators ------------------------------------------ */

static void part2(const cinfo *world, const cinfo *rev, const cinfo *half, int reps) {
  char label[160];
  const cinfo *cs[3] = {world, rev, half};
  for (int rep = 0; rep < reps; ++rep) {
    snprintf(label, sizeof label, "part 2, three communicators, rep %d", rep);
    job *js[6];
    for (int i = 0; i < 6; ++i) {
      const cinfo *c = cs[i / 2];
      const int op = (i + rep) % O_N, k = (i * 5 + rep) % K_N;
      const long cnt = (rep % 3 == 2) ? 3000 + i : 13 + 7 * i;
      js[i] = job_new(op, k, c, cnt, (i + rep) % S_N, (i + rep) % 3 == 0, (i + rep) % 2, label);
    }
    /* per communicator the same order everywhere (job 2c before 2c+1); the
     * communicators in a different order on odd ranks */
    static const int even[6] = {0, 2, 4, 1, 3, 5}, odd[6] = {4, 5, 2, 0, 3, 1};
    const int *ord = tu_rank % 2 ? odd : even;
    for (int i = 0; i < 6; ++i) job_start(js[ord[i]]);
    job *rj[6];
    for (int i = 0; i < 6; ++i) rj[i] = js[5 - ord[i]]; /* completion order: yet another */
    complete(rj, 6, rep % M_N, label);
  }
}

/* ---- 3. intercommunicators ---------------------------------------------------------- */

static void part3(void) {
  if (tu_size < 2) return;
  int *grp = (int *)tu_malloc(sizeof(int) * (size_t)tu_size), *key = (int *)tu_malloc(sizeof(int) * (size_t)tu_size);
  char label[160];
  for (int lay = 0; lay < 2; ++lay) {
    for (int w = 0; w < tu_size; ++w) {
      grp[w] = lay == 0 ? w % 2 : (w < (tu_size + 2) / 3 ? 0 : 1); /* parity; an uneven split */
      key[w] = lay == 0 ? w : tu_size - w;                         /* the second in reverse order */
    }
    layout L;
    layout_make(&L, lay == 0 ? "even/odd" : "first third/the rest, reversed", grp, key);
    const int lead[2] = {0, L.n[1] - 1};
    MPI_Comm ic = make_inter(&L, lead, MPI_COMM_WORLD, NULL, 600 + lay);
    TU_CALL(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    cinfo c;
    memset(&c, 0, sizeof c);
    c.comm = ic, c.name = L.name, c.inter = 1, c.mine = L.mine, c.me = L.lrank;
    c.n = L.n[L.mine], c.m = L.n[1 - L.mine];
    static const long units[] = {0, 1, 3, 100, 700};
    for (int ui = 0; ui < 5; ++ui) {
      if (quick && ui == 3) continue;
      for (int k = 0; k < 2; ++k) {
        const int kk = k ? K_MAT_HOLES : K_INT_SUM;
        snprintf(label, sizeof label, "part 3, unit %ld", units[ui]);
        job *js[3];
        js[0] = job_new(O_RS, kk, &c, units[ui], (ui + k) % S_N, 0, (ui + k) % 2, label);
        js[1] = job_new(O_RSB, kk, &c, units[ui], 0, 0, (ui + k + 1) % 2, label);
        js[2] = job_new(O_RS, kk, &c, units[ui] + 1, (ui + k + 2) % S_N, 0, ui % 2, label);
        for (int i = 0; i < 3; ++i) job_start(js[i]);
        complete(js, 3, (ui * 2 + k) % M_N, label);
      }
    }
    TU_CALL(MPI_Comm_free(&ic));
    layout_free(&L);
  }
  free(grp), free(key);
}

/* ---- 4. handles freed while the operation is outstanding --------------------------- */

static void part4(const cinfo *world) {
  /* a duplicate of t_vec with its own user operation; both freed after the start */
  MPI_Datatype keep_vec = t_vec;
  MPI_Op keep_op = op_vsum;
  for (int rep = 0; rep < 2; ++rep) {
    MPI_Datatype d;
    MPI_Op o;
    TU_CALL(MPI_Type_dup(keep_vec, &d));
    TU_CALL(MPI_Op_create(vsum_fn, 1, &o));
    K[K_VEC_SUM].dt = d, K[K_VEC_SUM].op = o;
    job *js[2];
    js[0] = job_new(O_SCAN, K_VEC_SUM, world, rep ? 5000 : 33, 0, rep, 0, "part 4, handles freed while outstanding");
    js[1] = job_new(O_RSB, K_VEC_SUM, world, rep ? 2000 : 9, 0, 1 - rep, 0, "part 4, handles freed while outstanding");
    job_start(js[0]), job_start(js[1]);
    TU_CALL(MPI_Type_free(&d));
    TU_CALL(MPI_Op_free(&o));
    complete(js, 2, rep ? M_TEST : M_WAITALL, "part 4");
    K[K_VEC_SUM].dt = keep_vec, K[K_VEC_SUM].op = keep_op;
  }
}

/* ---- 5. argument errors ------------------------------------------------------------ */

static void part5(const cinfo *c) {
  const MPI_Comm comm = c->comm;
  int a[64] = {0}, b[64 * 16] = {0};
  int *cnts = (int *)tu_malloc(sizeof(int) * (size_t)c->n);
  for (int p = 0; p < c->n; ++p) cnts[p] = 1;
  MPI_Request r = MPI_REQUEST_NULL;
  expect_class(MPI_Iscan(a, b, 1, MPI_INT, MPI_OP_NULL, comm, &r), MPI_ERR_OP, MPI_ERR_OP, "MPI_Iscan MPI_OP_NULL");
  expect_class(MPI_Iexscan(a, b, 1, MPI_INT, MPI_OP_NULL, comm, &r), MPI_ERR_OP, MPI_ERR_OP,
               "MPI_Iexscan MPI_OP_NULL");
  expect_class(MPI_Ireduce_scatter(a, b, cnts, MPI_INT, MPI_OP_NULL, comm, &r), MPI_ERR_OP, MPI_ERR_OP,
               "MPI_Ireduce_scatter MPI_OP_NULL");
  expect_class(MPI_Ireduce_scatter_block(a, b, 1, MPI_INT, MPI_OP_NULL, comm, &r), MPI_ERR_OP, MPI_ERR_OP,
               "MPI_Ireduce_scatter_block MPI_OP_NULL");
#if !defined(MPICH_VERSION)
  /* MPICH 4.0.2 checks no count in its nonblocking reductions (count -1
   * smashes the stack, as with MPI_Ireduce in nbc.c): elsewhere only. */
  expect_class(MPI_Iscan(a, b, -1, MPI_INT, MPI_SUM, comm, &r), MPI_ERR_COUNT, MPI_ERR_COUNT, "MPI_Iscan count=-1");
  expect_class(MPI_Iexscan(a, b, -1, MPI_INT, MPI_SUM, comm, &r), MPI_ERR_COUNT, MPI_ERR_COUNT,
               "MPI_Iexscan count=-1");
  expect_class(MPI_Ireduce_scatter_block(a, b, -1, MPI_INT, MPI_SUM, comm, &r), MPI_ERR_COUNT, MPI_ERR_COUNT,
               "MPI_Ireduce_scatter_block recvcount=-1");
  cnts[c->n - 1] = -2;
  expect_class(MPI_Ireduce_scatter(a, b, cnts, MPI_INT, MPI_SUM, comm, &r), MPI_ERR_COUNT, MPI_ERR_COUNT,
               "MPI_Ireduce_scatter recvcounts[n-1]=-2");
  cnts[c->n - 1] = 1;
#endif
  expect_class(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL, &r), MPI_ERR_COMM, MPI_ERR_COMM,
               "MPI_Iscan MPI_COMM_NULL");
  /* scan and exscan on an intercommunicator */
  if (tu_size >= 2) {
    int *grp = (int *)tu_malloc(sizeof(int) * (size_t)tu_size);
    for (int w = 0; w < tu_size; ++w) grp[w] = w % 2;
    layout L;
    layout_make(&L, "even/odd", grp, grp);
    const int lead[2] = {0, 0};
    MPI_Comm ic = make_inter(&L, lead, MPI_COMM_WORLD, NULL, 700);
    TU_CALL(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
#if !defined(OPEN_MPI)
    /* Open MPI 4.1.4 does not refuse an intercommunicator in MPI_Iscan and
     * MPI_Iexscan (its blocking MPI_Exscan calls a null function pointer,
     * see intercomm_coll.c): elsewhere only. */
    expect_class(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_COMM, MPI_ERR_COMM,
                 "MPI_Iscan on an intercommunicator");
    expect_class(MPI_Iexscan(a, b, 1, MPI_INT, MPI_SUM, ic, &r), MPI_ERR_COMM, MPI_ERR_COMM,
                 "MPI_Iexscan on an intercommunicator");
#endif
    TU_CALL(MPI_Comm_free(&ic));
    layout_free(&L);
    free(grp);
  }
  free(cnts);
  /* the communicator still works */
  job *j = job_new(O_EXSCAN, K_MAT, c, 5, 0, 0, 0, "after the errors");
  job_start(j);
  complete(&j, 1, M_WAITALL, "after the errors");
}

/* ---- main --------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "nbc_reduce_scatter_scan");
  quick = tu_arg_flag(argc, argv, "quick");
  verbose = tu_arg_flag(argc, argv, "verbose");
  kinds_init();
  double t0 = MPI_Wtime();
  MPI_Comm rev, half;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, tu_size - tu_rank, &rev));
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_rank, &half));
  TU_CALL(MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN));
  TU_CALL(MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN));
  const cinfo world = intra_info(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  const cinfo crev = intra_info(rev, "reversed"), chalf = intra_info(half, "even/odd split");

  /* element counts; the last is in bytes per slice (256 KiB, less above 8 ranks) */
  long big = 256 * 1024;
  if (tu_size > 8) big = big * 8 / tu_size;
  if (quick) big /= 8;
  sizes[0] = 0, sizes[1] = 1, sizes[2] = 7, sizes[3] = 100, sizes[4] = 4099, sizes[5] = big;
  nsizes = 6;

  part1(&world, 1);
  if (!quick) part1(&crev, 0);
  part2(&world, &crev, &chalf, quick ? 4 : 8);
  part3();
  part4(&world);
  part5(&world);
  part5(&chalf);

  TU_CALL(MPI_Comm_free(&rev));
  TU_CALL(MPI_Comm_free(&half));
  kinds_free();
  long long tot = 0, skipped = 0, polls = 0;
  TU_CALL(MPI_Allreduce(&nchecks, &tot, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  TU_CALL(MPI_Allreduce(&tu_nskipped, &skipped, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  TU_CALL(MPI_Allreduce(&npolls, &polls, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
  if (tu_rank == 0) {
    printf("nbc_reduce_scatter_scan: ok ranks=%d checks=%lld (summed over ranks) polls=%lld time=%.1fs%s", tu_size,
           tot, polls, MPI_Wtime() - t0, quick ? " quick" : "");
    if (skipped) printf(" (skipped %lld rank-cases hitting a known defect of this MPI library)", skipped);
    printf("\n");
    fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
