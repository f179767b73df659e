/*
 * pcoll_scan.c -- the persistent reduce-scatter and scan collectives of
 * MPI-4 (MPI_Reduce_scatter_init, MPI_Reduce_scatter_block_init,
 * MPI_Scan_init, MPI_Exscan_init and their _c forms), byte for byte.
 *
 * Each request is made once and started several times with new inputs; every
 * result is compared with a fold computed locally in rank order, and the
 * guard bytes around each receive buffer (and, for an exscan, rank 0's whole
 * receive buffer) must keep their sentinel.  Two operations: MPI_SUM on int
 * and a non-commutative user operation (composition of affine maps x -> a*x+b
 * modulo 2^32, on a contiguous type of two unsigned ints), so a fold in the
 * wrong order is caught.  Also: MPI_IN_PLACE, zero counts, MPI_Startall over
 * all of them at once, a negative count refused at the _init call, and the
 * operation and datatype freed (and new ones made) between _init and MPI_Start.
 *
 * Written against the standard only.  With an MPI older than 4.0 (no
 * persistent collectives) it reports that and exits 77 (CTest: skipped).
 * "pcoll_scan [reps=N]"
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64

static int me, np;
static long checks;

__attribute__((format(printf, 1, 2))) static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "pcoll_scan: rank %d: ", me);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void call(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    fprintf(stderr, "pcoll_scan: rank %d: %s failed: %s\n", me, what, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}
#define CALL(x) call((x), #x)

#if MPI_VERSION >= 4

/* ---- the two operations ---------------------------------------------------- */

typedef struct {
  uint32_t a, b;
} affine; /* x -> a*x + b */

/* inout = in o inout, "in first, then inout" (the standard's order: in is the lower rank). */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  const affine *x = in;
  affine *y = inout;
  for (int i = 0; i < *len; ++i) {
    affine r = {y[i].a * x[i].a, y[i].a * x[i].b + y[i].b};
    y[i] = r;
  }
}

/* Made after the request's own operation was freed, so it may take over that
 * handle: a request that still looked its operation up by handle would call
 * this one, and every result it touched would be wrong. */
static void decoy(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)in, (void)dt;
  memset(inout, 0xee, (size_t)*len * 8);
}

enum { OP_SUM, OP_AFFINE, NOPS };
static MPI_Op ops[NOPS];
static MPI_Datatype types[NOPS];
static const size_t esize[NOPS] = {sizeof(int), sizeof(affine)};
static const char *const opname[NOPS] = {"MPI_SUM on MPI_INT", "affine composition (non-commutative)"};

/* Input element i of rank r at round s. */
static void input(int op, int r, long i, unsigned s, void *out) {
  uint32_t h = (uint32_t)(r * 2654435761u) ^ (uint32_t)(i * 40503u) ^ (s * 97u);
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  if (op == OP_SUM) {
    int v = (int)(h % 2001) - 1000;
    memcpy(out, &v, sizeof v);
  } else {
    affine v = {h | 1u, h >> 7};
    memcpy(out, &v, sizeof v);
  }
}

static void combine(int op, const void *x, void *acc) { /* acc = x o acc */
  if (op == OP_SUM) {
    int a, b;
    memcpy(&a, x, sizeof a);
    memcpy(&b, acc, sizeof b);
    b += a;
    memcpy(acc, &b, sizeof b);
  } else {
    int one = 1;
    MPI_Datatype t = types[OP_AFFINE];
    affine xv, av;
    memcpy(&xv, x, sizeof xv);
    memcpy(&av, acc, sizeof av);
    compose(&xv, &av, &one, &t);
    memcpy(acc, &av, sizeof av);
  }
}

/* Fold of element i over ranks lo..hi-1 (hi > lo), in rank order. */
static void fold(int op, int lo, int hi, long i, unsigned s, unsigned char *out) {
  unsigned char acc[16], x[16];
  input(op, hi - 1, i, s, acc);
  for (int r = hi - 2; r >= lo; --r) { /* acc = in_r o acc, from the top down */
    input(op, r, i, s, x);
    combine(op, x, acc);
  }
  memcpy(out, acc, esize[op]);
}

/* ---- buffers ---------------------------------------------------------------- */

static unsigned char sentinel(size_t k) { return (unsigned char)(0x5a ^ (k * 29)); }

typedef struct {
  unsigned char *mem; /* GUARD + bytes + GUARD */
  size_t bytes;
} gbuf;

static void gb_init(gbuf *g, size_t bytes) {
  g->bytes = bytes;
  g->mem = malloc(bytes + 2 * GUARD);
  if (!g->mem) die("out of memory (%ld bytes)", (long)bytes);
}
static void gb_reset(gbuf *g) {
  for (size_t k = 0; k < g->bytes + 2 * GUARD; ++k) g->mem[k] = sentinel(k);
}
static unsigned char *gb_data(gbuf *g) { return g->mem + GUARD; }
static void gb_check_guards(const gbuf *g, const char *what) {
  for (size_t k = 0; k < GUARD; ++k)
    if (g->mem[k] != sentinel(k)) die("%s: guard byte %ld before the receive buffer changed", what, (long)k);
  for (size_t k = GUARD + g->bytes; k < g->bytes + 2 * GUARD; ++k)
    if (g->mem[k] != sentinel(k))
      die("%s: guard byte %ld after the receive buffer changed", what, (long)(k - GUARD - g->bytes));
}

/* ---- one persistent request ------------------------------------------------- */

enum { RS, RSB, SCAN, EXSCAN, NKINDS };
static const char *const kindname[NKINDS] = {"MPI_Reduce_scatter_init", "MPI_Reduce_scatter_block_init",
                                             "MPI_Scan_init", "MPI_Exscan_init"};

typedef struct {
  int kind, op, inplace, big;
  long counts[64]; /* reduce_scatter: per rank */
  long count;                      /* scan, exscan, block: elements per rank */
  long total;                      /* elements in the input */
  unsigned char *send;
  gbuf recv;
  MPI_Request req;
  char name[160];
} job;

static void job_make(job *j, int kind, int op, int inplace, int big) {
  memset(j, 0, sizeof *j);
  j->kind = kind, j->op = op, j->inplace = inplace, j->big = big;
  if (kind == RS) {
    for (int p = 0; p < np; ++p) j->total += (j->counts[p] = (p * 5 + op + 2) % 4); /* some zero */
  } else if (kind == RSB) {
    j->count = 3 + op;
    j->total = j->count * np;
  } else {
    j->count = 5 + 3 * op;
    j->total = j->count;
  }
  const size_t es = esize[op];
  const long mine = kind == RS ? j->counts[me] : j->count;
  /* In place, reduce-scatter's input is the whole of recvbuf. */
  const long rlen = inplace && (kind == RS || kind == RSB) ? j->total : mine;
  gb_init(&j->recv, (size_t)rlen * es);
  j->send = malloc((size_t)(j->total ? j->total : 1) * es);
  snprintf(j->name, sizeof j->name, "%s%s (%s%s)", kindname[kind], big ? "_c" : "", opname[op],
           inplace ? ", MPI_IN_PLACE" : "");
  const void *sb = inplace ? MPI_IN_PLACE : j->send;
  void *rb = gb_data(&j->recv);
  MPI_Datatype t = types[op];
  MPI_Op o = ops[op];
  MPI_Info info = MPI_INFO_NULL;
  int rc;
  if (kind == RS) {
    int ic[64];
    MPI_Count cc[64];
    for (int p = 0; p < np; ++p) ic[p] = (int)j->counts[p], cc[p] = j->counts[p];
    rc = big ? MPI_Reduce_scatter_init_c(sb, rb, cc, t, o, MPI_COMM_WORLD, info, &j->req)
             : MPI_Reduce_scatter_init(sb, rb, ic, t, o, MPI_COMM_WORLD, info, &j->req);
  } else if (kind == RSB) {
    rc = big ? MPI_Reduce_scatter_block_init_c(sb, rb, (MPI_Count)j->count, t, o, MPI_COMM_WORLD, info, &j->req)
             : MPI_Reduce_scatter_block_init(sb, rb, (int)j->count, t, o, MPI_COMM_WORLD, info, &j->req);
  } else if (kind == SCAN) {
    rc = big ? MPI_Scan_init_c(sb, rb, (MPI_Count)j->count, t, o, MPI_COMM_WORLD, info, &j->req)
             : MPI_Scan_init(sb, rb, (int)j->count, t, o, MPI_COMM_WORLD, info, &j->req);
  } else {
    rc = big ? MPI_Exscan_init_c(sb, rb, (MPI_Count)j->count, t, o, MPI_COMM_WORLD, info, &j->req)
             : MPI_Exscan_init(sb, rb, (int)j->count, t, o, MPI_COMM_WORLD, info, &j->req);
  }
  call(rc, j->name);
}

/* Writes round s's input (into sendbuf, or recvbuf in place) and resets the rest. */
static void job_fill(job *j, unsigned s) {
  const size_t es = esize[j->op];
  gb_reset(&j->recv);
  unsigned char *in = j->inplace ? gb_data(&j->recv) : j->send;
  for (long i = 0; i < j->total; ++i) input(j->op, me, i, s, in + (size_t)i * es);
}

static void job_verify(job *j, unsigned s) {
  const size_t es = esize[j->op];
  unsigned char want[16];
  const unsigned char *got = gb_data(&j->recv);
  gb_check_guards(&j->recv, j->name);
  if (j->kind == RS || j->kind == RSB) {
    long first = 0;
    if (j->kind == RS)
      for (int p = 0; p < me; ++p) first += j->counts[p];
    else
      first = j->count * me;
    const long mine = j->kind == RS ? j->counts[me] : j->count;
    for (long i = 0; i < mine; ++i) {
      fold(j->op, 0, np, first + i, s, want);
      if (memcmp(got + (size_t)i * es, want, es)) die("%s: element %ld of the result is wrong (round %u)", j->name, i, s);
    }
  } else if (j->kind == SCAN || me > 0) {
    const int hi = j->kind == SCAN ? me + 1 : me;
    for (long i = 0; i < j->count; ++i) {
      fold(j->op, 0, hi, i, s, want);
      if (memcmp(got + (size_t)i * es, want, es)) die("%s: element %ld of the result is wrong (round %u)", j->name, i, s);
    }
  } else if (!j->inplace) { /* exscan, rank 0: its recvbuf is not written */
    for (size_t k = 0; k < j->recv.bytes; ++k)
      if (j->recv.mem[GUARD + k] != sentinel(GUARD + k))
        die("%s: rank 0's recvbuf byte %ld was written (round %u)", j->name, (long)k, s);
  }
  ++checks;
}

static void job_free(job *j) {
  CALL(MPI_Request_free(&j->req));
  if (j->req != MPI_REQUEST_NULL) die("%s: MPI_Request_free left the handle set", j->name);
  free(j->recv.mem);
  free(j->send);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int reps = 3;
  for (int a = 1; a < argc; ++a)
    if (!strncmp(argv[a], "reps=", 5)) reps = atoi(argv[a] + 5);
  if (np > 64) {
    if (me == 0) printf("pcoll_scan: at most 64 ranks\n");
    MPI_Finalize();
    return 77;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  ops[OP_SUM] = MPI_SUM;
  types[OP_SUM] = MPI_INT;
  CALL(MPI_Type_contiguous(2, MPI_UINT32_T, &types[OP_AFFINE]));
  CALL(MPI_Type_commit(&types[OP_AFFINE]));
  CALL(MPI_Op_create(compose, 0, &ops[OP_AFFINE]));

  /* Every kind, op, in place or not, int and _c counts: made once, started `reps` times each. */
  enum { NJOBS = NKINDS * NOPS * 2 * 2 };
  static job jobs[NJOBS];
  int nj = 0;
  for (int kind = 0; kind < NKINDS; ++kind)
    for (int op = 0; op < NOPS; ++op)
      for (int inplace = 0; inplace < 2; ++inplace)
        for (int big = 0; big < 2; ++big) job_make(&jobs[nj++], kind, op, inplace, big);

  unsigned salt = 1;
  for (int j = 0; j < nj; ++j)
    for (int r = 0; r < reps; ++r, ++salt) {
      job_fill(&jobs[j], salt);
      CALL(MPI_Start(&jobs[j].req));
      MPI_Status st;
      CALL(MPI_Wait(&jobs[j].req, &st));
      if (jobs[j].req == MPI_REQUEST_NULL) die("%s: MPI_Wait freed a persistent request", jobs[j].name);
      job_verify(&jobs[j], salt);
    }

  /* All at once, with MPI_Startall, in the same order everywhere. */
  MPI_Request all[NJOBS];
  for (int r = 0; r < reps; ++r, ++salt) {
    for (int j = 0; j < nj; ++j) job_fill(&jobs[j], salt + (unsigned)j * 1000);
    for (int j = 0; j < nj; ++j) all[j] = jobs[j].req;
    CALL(MPI_Startall(nj, all));
    static MPI_Status sts[NJOBS];
    CALL(MPI_Waitall(nj, all, sts));
    for (int j = 0; j < nj; ++j) job_verify(&jobs[j], salt + (unsigned)j * 1000);
  }
  for (int j = 0; j < nj; ++j) job_free(&jobs[j]);

  /* The operation and the datatype may be freed as soon as the request is made:
   * the request keeps using them.  A new operation and type made afterwards may
   * take over the freed handles and must not be used instead. */
  {
    const MPI_Op own_op = ops[OP_AFFINE];
    const MPI_Datatype own_ty = types[OP_AFFINE];
    CALL(MPI_Type_contiguous(2, MPI_UINT32_T, &types[OP_AFFINE]));
    CALL(MPI_Type_commit(&types[OP_AFFINE]));
    CALL(MPI_Op_create(compose, 0, &ops[OP_AFFINE]));
    enum { NF = 4 };
    static job fj[NF];
    job_make(&fj[0], SCAN, OP_AFFINE, 0, 0);
    job_make(&fj[1], EXSCAN, OP_AFFINE, 1, 1);
    job_make(&fj[2], RS, OP_AFFINE, 0, 1);
    job_make(&fj[3], RSB, OP_AFFINE, 1, 0);
    CALL(MPI_Op_free(&ops[OP_AFFINE]));
    CALL(MPI_Type_free(&types[OP_AFFINE]));
    MPI_Op decoy_op;
    MPI_Datatype decoy_ty;
    CALL(MPI_Op_create(decoy, 0, &decoy_op));
    CALL(MPI_Type_contiguous(2, MPI_UINT32_T, &decoy_ty));
    CALL(MPI_Type_commit(&decoy_ty));
    ops[OP_AFFINE] = own_op, types[OP_AFFINE] = own_ty; /* for the local fold */
    for (int r = 0; r < reps; ++r, ++salt)
      for (int j = 0; j < NF; ++j) {
        job_fill(&fj[j], salt);
        CALL(MPI_Start(&fj[j].req));
        CALL(MPI_Wait(&fj[j].req, MPI_STATUS_IGNORE));
        job_verify(&fj[j], salt);
      }
    for (int j = 0; j < NF; ++j) job_free(&fj[j]);
    CALL(MPI_Op_free(&decoy_op));
    CALL(MPI_Type_free(&decoy_ty));
  }

  /* A negative count is refused when the request is made (MPICH 4.0.2 answers
   * MPI_ERR_OTHER for these: the class is not checked for it). */
#if !defined(MPICH_VERSION)
  {
    int x[4] = {0}, y[4] = {0};
    MPI_Request rq = MPI_REQUEST_NULL;
    int rc = MPI_Scan_init(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq), cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COUNT) die("MPI_Scan_init with count -1 gave error class %d, expected MPI_ERR_COUNT (%d)", cls, MPI_ERR_COUNT);
    int cnts[64];
    for (int p = 0; p < np; ++p) cnts[p] = p == np - 1 ? -2 : 1;
    rc = MPI_Reduce_scatter_init(x, y, cnts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &rq);
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_COUNT)
      die("MPI_Reduce_scatter_init with a negative count gave error class %d, expected MPI_ERR_COUNT (%d)", cls,
          MPI_ERR_COUNT);
    ++checks;
  }
#endif

  MPI_Op_free(&ops[OP_AFFINE]);
  MPI_Type_free(&types[OP_AFFINE]);
  long total = 0;
  MPI_Reduce(&checks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) printf("pcoll_scan: PASS ranks=%d checks(sum over ranks)=%ld reps=%d\n", np, total, reps);
  MPI_Finalize();
  return 0;
}

#else /* MPI_VERSION < 4 */

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me == 0) printf("pcoll_scan: this MPI (version %d.%d) has no persistent collectives: skipped\n", MPI_VERSION,
                      MPI_SUBVERSION);
  MPI_Finalize();
  return 77;
}

#endif
