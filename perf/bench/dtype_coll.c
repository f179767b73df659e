/*
 * perf/bench/dtype_coll.c -- collectives over derived datatypes, standard MPI only.
 *
 * Built with a host MPI's mpicc by perf/accel_dtype.sh, which runs it with the
 * host alone and with the accelerator (its derived types packed by the host,
 * then decoded into the engine's description).  Buffers from plain malloc.
 *
 * Types (the block a rank sends each peer is `count` elements):
 *   double   MPI_DOUBLE (the contiguous reference)
 *   vec1     MPI_Type_vector(n, 1, 2, MPI_DOUBLE): every other double
 *   vec8     MPI_Type_vector(n/8, 8, 16, MPI_DOUBLE): blocks of 64 B with gaps of 64 B
 *   struct   struct {char c; double d; int i;} (13 B of data in 24), resized to sizeof
 * A block of P payload bytes is one element of the vector types (built per size) and
 * P/13 structs or P/8 doubles.
 *
 * For each op (alltoall, allgather, bcast from rank 0), type and payload size:
 * one checked call (every received double/field compared with what its sender
 * wrote), 5 warm-up calls, then a timed loop of back-to-back calls sized to
 * --time seconds from the warm-up's slowest rank; the time per call is the
 * slowest rank's mean.
 *
 * Output, one CSV line per point on rank 0:
 *   label,op,type,payload_bytes,ranks,us_per_call
 *
 *   dtype_coll [--label L] [--ops alltoall,allgather,bcast] [--types double,vec1,vec8,struct]
 *              [--sizes 4096,65536,1048576] [--time 0.3]
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char c;
  double d;
  int i;
} cdi;

static int me, n;

static void die(const char *msg) {
  fprintf(stderr, "dtype_coll: rank %d: %s\n", me, msg);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* the value a sender writes for element k of its block to `to` */
static double val(int from, int to, long k) { return (double)from * 1e9 + (double)to * 1e6 + (double)k; }

typedef struct {
  MPI_Datatype t;
  long count;      /* elements per block */
  long slots;      /* doubles (or structs) a block spans in memory */
  long items;      /* values carried per block */
  int kind;        /* 0 double, 1 vec1, 2 vec8, 3 struct */
  MPI_Aint extent; /* bytes of one element */
} Ty;

static Ty make(const char *name, long payload) {
  Ty y = {MPI_DATATYPE_NULL, 0, 0, 0, 0, 0};
  long nd = payload / 8 > 0 ? payload / 8 : 1;
  if (!strcmp(name, "double")) {
    y.t = MPI_DOUBLE, y.count = nd, y.slots = nd, y.items = nd, y.kind = 0;
  } else if (!strcmp(name, "vec1")) {
    MPI_Type_vector((int)nd, 1, 2, MPI_DOUBLE, &y.t);
    y.count = 1, y.slots = 2 * nd, y.items = nd, y.kind = 1;
  } else if (!strcmp(name, "vec8")) {
    long nb = nd / 8 > 0 ? nd / 8 : 1;
    MPI_Type_vector((int)nb, 8, 16, MPI_DOUBLE, &y.t);
    y.count = 1, y.slots = 16 * nb, y.items = 8 * nb, y.kind = 2;
  } else if (!strcmp(name, "struct")) {
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(cdi, c), offsetof(cdi, d), offsetof(cdi, i)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, s;
    MPI_Type_create_struct(3, bl, d, ty, &s);
    MPI_Type_create_resized(s, 0, sizeof(cdi), &y.t);
    MPI_Type_free(&s);
    long ne = payload / 13 > 0 ? payload / 13 : 1;
    y.count = ne, y.slots = ne, y.items = ne, y.kind = 3;
  } else {
    die("unknown type");
  }
  if (y.kind) MPI_Type_commit(&y.t);
  MPI_Aint lb;
  MPI_Type_get_extent(y.t, &lb, &y.extent);
  return y;
}

static size_t block_bytes(const Ty *y) { return (size_t)y->count * (size_t)y->extent; }

static void put(const Ty *y, char *blk, int from, int to) {
  for (long k = 0; k < y->items; ++k) {
    double v = val(from, to, k);
    if (y->kind == 3) {
      cdi *s = (cdi *)blk + k;
      s->c = (char)(k & 0x7f), s->d = v, s->i = (int)k;
    } else {
      long at = y->kind == 0 ? k : y->kind == 1 ? 2 * k : (k / 8) * 16 + k % 8;
      ((double *)blk)[at] = v;
    }
  }
}

static int check(const Ty *y, const char *blk, int from, int to) {
  for (long k = 0; k < y->items; ++k) {
    double v = val(from, to, k);
    if (y->kind == 3) {
      const cdi *s = (const cdi *)blk + k;
      if (s->c != (char)(k & 0x7f) || s->d != v || s->i != (int)k) return 0;
    } else {
      long at = y->kind == 0 ? k : y->kind == 1 ? 2 * k : (k / 8) * 16 + k % 8;
      if (((const double *)blk)[at] != v) return 0;
    }
  }
  return 1;
}

static void call(const char *op, const Ty *y, char *s, char *r) {
  if (!strcmp(op, "alltoall"))
    MPI_Alltoall(s, (int)y->count, y->t, r, (int)y->count, y->t, MPI_COMM_WORLD);
  else if (!strcmp(op, "allgather"))
    MPI_Allgather(s, (int)y->count, y->t, r, (int)y->count, y->t, MPI_COMM_WORLD);
  else
    MPI_Bcast(me == 0 ? s : r, (int)y->count, y->t, 0, MPI_COMM_WORLD);
}

static void point(const char *label, const char *op, const char *tname, long payload, double budget) {
  Ty y = make(tname, payload);
  const size_t bb = block_bytes(&y);
  const int all = strcmp(op, "bcast") != 0;
  char *s = malloc(bb * (all ? n : 1)), *r = malloc(bb * (all ? n : 1));
  if (!s || !r) die("out of memory");
  memset(s, 0, bb * (all ? n : 1));
  memset(r, 0, bb * (all ? n : 1));
  /* what this rank sends: alltoall a block per peer; allgather and bcast one block (to "everyone": to = -1) */
  if (!strcmp(op, "alltoall"))
    for (int p = 0; p < n; ++p) put(&y, s + p * bb, me, p);
  else
    put(&y, s, me, -1);
  call(op, &y, s, r);
  int ok = 1;
  if (!strcmp(op, "alltoall"))
    for (int p = 0; p < n; ++p) ok &= check(&y, r + p * bb, p, me);
  else if (!strcmp(op, "allgather"))
    for (int p = 0; p < n; ++p) ok &= check(&y, r + p * bb, p, -1);
  else if (me != 0)
    ok = check(&y, r, 0, -1);
  if (!ok) die("wrong data received");
  /* warm-up (the same number of calls on every rank), then a loop sized from it */
  double t0 = MPI_Wtime();
  for (int w = 0; w < 5; ++w) call(op, &y, s, r);
  double per = (MPI_Wtime() - t0) / 5;
  MPI_Allreduce(MPI_IN_PLACE, &per, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  long iters = (long)(budget / per);
  if (iters < 5) iters = 5;
  MPI_Barrier(MPI_COMM_WORLD);
  t0 = MPI_Wtime();
  for (long i = 0; i < iters; ++i) call(op, &y, s, r);
  double us = (MPI_Wtime() - t0) / (double)iters * 1e6;
  MPI_Reduce(me ? &us : MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (me == 0) printf("%s,%s,%s,%ld,%d,%.3f\n", label, op, tname, payload, n, us);
  fflush(stdout);
  if (y.kind) MPI_Type_free(&y.t);
  free(s), free(r);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const char *label = "run", *ops = "alltoall,allgather,bcast", *types = "double,vec1,vec8,struct",
             *sizes = "4096,65536,1048576";
  double budget = 0.3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--label")) label = argv[i + 1];
    else if (!strcmp(argv[i], "--ops")) ops = argv[i + 1];
    else if (!strcmp(argv[i], "--types")) types = argv[i + 1];
    else if (!strcmp(argv[i], "--sizes")) sizes = argv[i + 1];
    else if (!strcmp(argv[i], "--time")) budget = atof(argv[i + 1]);
    else die("unknown option");
  }
  char ob[256], tb[256], sb[256];
  snprintf(ob, sizeof ob, "%s", ops);
  for (char *o = strtok(ob, ","); o; o = strtok(NULL, ",")) {
    /* (the inner lists are walked by hand: strtok keeps one position) */
    snprintf(tb, sizeof tb, "%s", types);
    for (char *t = tb; t && *t;) {
      char *tn = strchr(t, ',');
      if (tn) *tn = 0;
      snprintf(sb, sizeof sb, "%s", sizes);
      for (char *z = sb; z && *z;) {
        char *zn = strchr(z, ',');
        if (zn) *zn = 0;
        point(label, o, t, atol(z), budget);
        z = zn ? zn + 1 : NULL;
      }
      t = tn ? tn + 1 : NULL;
    }
  }
  MPI_Finalize();
  return 0;
}
