/*
 * redref.h -- what the nonblocking and persistent collective tests (nbc.c,
 * pcoll.c, nbc_reduce_scatter_scan.c) share: the reference of a reduction
 * in rank order (each rank's contribution, a hash of rank, element and
 * salt; the operations folded with C arithmetic in the element's own type;
 * the non-commutative 2x2 matrix product mod 251), the small helpers
 * around their requests (an error code's text, a started call's check,
 * MPI_Testall polling with a little work in between) and lcm.
 * nbc_reduce_scatter_scan.c has element kinds of its own and takes only
 * mod251, t_mat and op_matmul of the reduction part.  Standard MPI API only;
 * builds on testutil.h.
 */
#ifndef SHMCOLL_TESTS_MPI_REDREF_H
#define SHMCOLL_TESTS_MPI_REDREF_H

#include "testutil.h"

/* ---- reductions: operation and element type ----------------------------------- */

enum { R_SUM, R_MAX, R_PROD, R_MINLOC, R_MAXLOC, R_MATMUL };
static const char *const rname[] TU_UNUSED = {"MPI_SUM", "MPI_MAX", "MPI_PROD", "MPI_MINLOC", "MPI_MAXLOC", "matmul"};
enum { Y_INT, Y_DOUBLE, Y_DOUBLE_INT, Y_MAT };
static const char *const yname[] TU_UNUSED = {"MPI_INT", "MPI_DOUBLE", "MPI_DOUBLE_INT", "contiguous(4,MPI_DOUBLE)"};
typedef struct { double v; int i; } double_int;
static const size_t ysize[] TU_UNUSED = {sizeof(int), sizeof(double), sizeof(double_int), 4 * sizeof(double)};
static MPI_Datatype t_mat TU_UNUSED; /* contiguous(4, MPI_DOUBLE); the program makes and frees it */
static MPI_Op op_matmul TU_UNUSED;   /* non-commutative; the program makes and frees it */

/* Contribution of rank r at element i under salt s (written at dst). */
TU_UNUSED static void contrib(int rop, int rty, int r, long i, unsigned s, void *dst) {
  uint64_t h = tu_mix(((uint64_t)(uint32_t)r << 40) ^ ((uint64_t)i << 8) ^ s);
  switch (rty) {
    case Y_INT: {
      int v = rop == R_MAX ? (int)(uint32_t)h : (int)(h % 120) - 40;
      memcpy(dst, &v, sizeof v);
    } break;
    case Y_DOUBLE: {
      double v = rop == R_PROD ? (h % 13 == 0 ? 2.0 : h % 29 == 0 ? -1.0 : 1.0) : (double)((int)(h % 120) - 40);
      memcpy(dst, &v, sizeof v);
    } break;
    case Y_DOUBLE_INT: {
      double_int v;
      memset(&v, 0, sizeof v);
      v.v = (double)(h % 4) - 1.5; /* many ties: the lowest index wins */
      v.i = r * 3 + 1;
      memcpy(dst, &v, sizeof v);
    } break;
    default: {
      double m[4];
      for (int k = 0; k < 4; ++k) m[k] = (double)((h >> (8 * k)) % 251);
      memcpy(dst, m, sizeof m);
    } break;
  }
}

/* The non-commutative operation: inout = in * inout, 2x2 matrices mod 251
 * (entries below 251: every intermediate is an exact integer in double). */
static inline double mod251(double x) { return (double)((long long)x % 251); }
TU_UNUSED static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  const double *a = (const double *)in;
  double *b = (double *)inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    double c0 = mod251(a[0] * b[0] + a[1] * b[2]), c1 = mod251(a[0] * b[1] + a[1] * b[3]);
    double c2 = mod251(a[2] * b[0] + a[3] * b[2]), c3 = mod251(a[2] * b[1] + a[3] * b[3]);
    b[0] = c0, b[1] = c1, b[2] = c2, b[3] = c3;
  }
}

/* acc = x (op) acc, in the element's own type. */
TU_UNUSED static void combine(int rop, int rty, const void *x, void *acc) {
  switch (rty) {
    case Y_INT: {
      int a, b;
      memcpy(&a, x, sizeof a), memcpy(&b, acc, sizeof b);
      b = rop == R_MAX ? (a > b ? a : b) : (int)((unsigned)a + (unsigned)b);
      memcpy(acc, &b, sizeof b);
    } break;
    case Y_DOUBLE: {
      double a, b;
      memcpy(&a, x, sizeof a), memcpy(&b, acc, sizeof b);
      b = rop == R_PROD ? a * b : rop == R_MAX ? (a > b ? a : b) : a + b;
      memcpy(acc, &b, sizeof b);
    } break;
    case Y_DOUBLE_INT: {
      double_int a, b;
      memcpy(&a, x, sizeof a), memcpy(&b, acc, sizeof b);
      int better = rop == R_MAXLOC ? a.v > b.v : a.v < b.v;
      if (better) b.v = a.v, b.i = a.i;
      else if (a.v == b.v && a.i < b.i) b.i = a.i;
      memcpy(acc, &b, sizeof b);
    } break;
    default: {
      int one = 1;
      matmul((void *)x, acc, &one, NULL);
    } break;
  }
}

TU_UNUSED static MPI_Op mpi_op(int rop) {
  switch (rop) {
    case R_SUM: return MPI_SUM;
    case R_MAX: return MPI_MAX;
    case R_PROD: return MPI_PROD;
    case R_MINLOC: return MPI_MINLOC;
    case R_MAXLOC: return MPI_MAXLOC;
    default: return op_matmul;
  }
}
TU_UNUSED static MPI_Datatype mpi_ty(int rty) {
  switch (rty) {
    case Y_INT: return MPI_INT;
    case Y_DOUBLE: return MPI_DOUBLE;
    case Y_DOUBLE_INT: return MPI_DOUBLE_INT;
    default: return t_mat;
  }
}

/* The reduction of ranks lo .. hi-1 (in rank order) at element i into acc. */
TU_UNUSED static void fold_ranks(int rop, int rty, int lo, int hi, long i, unsigned s, unsigned char *acc) {
  unsigned char tmp[64];
  contrib(rop, rty, hi - 1, i, s, acc);
  for (int r = hi - 2; r >= lo; --r) {
    contrib(rop, rty, r, i, s, tmp);
    combine(rop, rty, tmp, acc);
  }
}

/* The 4 padding bytes of a double_int carry nothing: the image takes them
 * from the buffer. */
TU_UNUSED static void copy_padding(gb *g, long count) {
  for (long i = 0; i < count; ++i) {
    size_t e = (size_t)i * sizeof(double_int), pad = offsetof(double_int, i) + sizeof(int);
    memcpy(g->ip + e + pad, g->p + e + pad, sizeof(double_int) - pad);
  }
}

/* ---- requests: errors and polling ---------------------------------------------- */

static long long npolls TU_UNUSED; /* MPI_Test* calls while polling, on this rank */
static volatile double sink TU_UNUSED;

TU_UNUSED static void compute(int k) { /* a little "work" between polls */
  double s = 0;
  for (int i = 0; i < k; ++i) s += (double)i * 0.5;
  sink += s;
}

/* MPI's text for the error code rc, in s (MPI_MAX_ERROR_STRING bytes). */
TU_UNUSED static const char *err_text(int rc, char *s) {
  int len = 0;
  s[0] = 0;
  MPI_Error_string(rc, s, &len);
  return s;
}

/* The call that starts the nonblocking operation of case `desc` returned rc
 * and req: it must have succeeded and made a request. */
TU_UNUSED static void expect_started(int rc, MPI_Request req, const char *desc) {
  if (rc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING];
    tu_fail("case '%s': the call returned %d (%s)", desc, rc, err_text(rc, s));
  }
  if (req == MPI_REQUEST_NULL) tu_fail("case '%s': the call returned MPI_REQUEST_NULL", desc);
}

/* MPI_Testall over r[0..k) until all are complete (statuses in st), with
 * compute(work) between the polls (none when work is 0). */
TU_UNUSED static void testall_poll(int k, MPI_Request *r, MPI_Status *st, int work) {
  int flag = 0;
  while (!flag) {
    TU_CALL(MPI_Testall(k, r, &flag, st));
    npolls++;
    if (!flag && work) compute(work);
  }
}

/* ---- counts -------------------------------------------------------------------- */

/* The least common multiple of a and b (both positive). */
TU_UNUSED static long lcm(long a, long b) {
  long x = a, y = b;
  while (y) {
    long t = x % y;
    x = y, y = t;
  }
  return a / x * b;
}

#endif /* SHMCOLL_TESTS_MPI_REDREF_H */
