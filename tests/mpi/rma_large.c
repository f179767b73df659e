/*
 * rma_large.c -- one-sided transfers of large and strided data, on windows
 * over sub-communicators, several windows alive at once.
 *
 * MPI_COMM_WORLD is split into two halves; on each half two windows live
 * together: MPI_Win_create over malloc'd memory (large enough to come from
 * a shared heap where the library has one, else private) and
 * MPI_Win_allocate.  Every rank puts NBIG doubles to its right neighbour
 * in the half through a strided origin type into a strided target type (every
 * other double), gets them back contiguously, and accumulates into a
 * contiguous region; targets then compare their whole window, holes and
 * guards included.  A dynamic window with several attached regions, some
 * detached again, checks that only attached memory is reachable.
 * Arguments: big=N doubles (default 65536).  Standard API only.
 */
#include "testutil.h"

static int nbig = 65536;

static double pat(int o, long k) { return o * 1e7 + (double)k; }

static void one_window(MPI_Comm half, int allocate) {
  int n, me;
  MPI_Comm_size(half, &n);
  MPI_Comm_rank(half, &me);
  const long len = 2L * nbig + 64; /* strided area (2 nbig) + accumulate area (32) + guards (32) */
  double *mem;
  MPI_Win win;
  if (allocate) {
    TU_CALL(MPI_Win_allocate(len * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, half, &mem, &win));
  } else {
    mem = (double *)tu_malloc(len * sizeof(double));
    TU_CALL(MPI_Win_create(mem, len * (MPI_Aint)sizeof(double), sizeof(double), MPI_INFO_NULL, half, &win));
  }
  TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  for (long i = 0; i < len; ++i) mem[i] = -1.0;
  MPI_Datatype strided;
  TU_CALL(MPI_Type_vector(nbig, 1, 2, MPI_DOUBLE, &strided));
  TU_CALL(MPI_Type_commit(&strided));
  double *src = (double *)tu_malloc(2 * nbig * sizeof(double)), *back = (double *)tu_malloc(nbig * sizeof(double));
  for (long k = 0; k < nbig; ++k) src[2 * k] = pat(me, k), src[2 * k + 1] = -5;
  const int r = (me + 1) % n, l = (me - 1 + n) % n;
  TU_CALL(MPI_Win_fence(0, win));
  TU_CALL(MPI_Put(src, 1, strided, r, 1, 1, strided, win)); /* lands on the odd doubles 1, 3, ... */
  TU_CALL(MPI_Win_fence(0, win));
  TU_CALL(MPI_Get(back, nbig, MPI_DOUBLE, r, 1, 1, strided, win));
  double add[32];
  for (int k = 0; k < 32; ++k) add[k] = me + k;
  TU_CALL(MPI_Accumulate(add, 32, MPI_DOUBLE, r, 2L * nbig + 16, 32, MPI_DOUBLE, MPI_SUM, win));
  TU_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  for (long k = 0; k < nbig; ++k)
    if (back[k] != pat(me, k))
      tu_fail("MPI_Get of the strided put: element %ld is %g, want %g", k, back[k], pat(me, k));
  for (long i = 0; i < len; ++i) {
    double want = -1.0;
    if (i < 2L * nbig && (i % 2) == 1) want = pat(l, i / 2);
    if (i >= 2L * nbig + 16 && i < 2L * nbig + 48) want = -1.0 + l + (i - 2L * nbig - 16);
    if (mem[i] != want)
      tu_fail("%s window on a half of %d ranks: double %ld is %g, want %g", allocate ? "allocated" : "created", n, i,
              mem[i], want);
  }
  tu_ncases += 3;
  tu_bytes_recv += nbig * 8.0;
  MPI_Type_free(&strided);
  TU_CALL(MPI_Win_free(&win));
  if (!allocate) free(mem);
  free(src);
  free(back);
}

static void dynamic(void) {
  int n = tu_size, me = tu_rank;
  MPI_Win win;
  TU_CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
  int *a = (int *)tu_malloc(64 * sizeof(int)), *b = (int *)tu_malloc(64 * sizeof(int));
  for (int i = 0; i < 64; ++i) a[i] = b[i] = -1;
  TU_CALL(MPI_Win_attach(win, a, 64 * sizeof(int)));
  TU_CALL(MPI_Win_attach(win, b, 32 * sizeof(int))); /* only the first half of b */
  MPI_Aint mine[2], *all = (MPI_Aint *)tu_malloc(2 * n * sizeof(MPI_Aint));
  MPI_Get_address(a, &mine[0]);
  MPI_Get_address(b, &mine[1]);
  TU_CALL(MPI_Allgather(mine, 2, MPI_AINT, all, 2, MPI_AINT, MPI_COMM_WORLD));
  const int r = (me + 1) % n;
  int v[2] = {me, me + 100}, rc = 0;
  TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r, 0, win));
  TU_CALL(MPI_Put(&v[0], 1, MPI_INT, r, all[2 * r] + 63 * sizeof(int), 1, MPI_INT, win));
  TU_CALL(MPI_Put(&v[1], 1, MPI_INT, r, all[2 * r + 1] + 31 * sizeof(int), 1, MPI_INT, win));
#if !defined(MPICH_NUMVERSION) && !defined(OPEN_MPI)
  /* (Neither MPICH nor Open MPI checks the target region of a dynamic window,
   * and the put would write past it: shmcoll only.) */
  rc = MPI_Put(&v[1], 2, MPI_INT, r, all[2 * r + 1] + 31 * sizeof(int), 2, MPI_INT, win);
  int cls = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != MPI_ERR_RMA_RANGE) tu_fail("a put past an attached region: class %d, want MPI_ERR_RMA_RANGE", cls);
#endif
  (void)rc;
  TU_CALL(MPI_Win_unlock(r, win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  const int l = (me - 1 + n) % n;
  if (a[63] != l || b[31] != l + 100 || a[62] != -1 || b[30] != -1 || b[32] != -1)
    tu_fail("dynamic window: a[63] %d, b[31] %d (want %d, %d), neighbours %d %d %d", a[63], b[31], l, l + 100, a[62],
            b[30], b[32]);
  TU_CALL(MPI_Win_detach(win, b));
  TU_CALL(MPI_Win_detach(win, a));
  TU_CALL(MPI_Win_free(&win));
  free(a);
  free(b);
  free(all);
  ++tu_ncases;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "rma_large");
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "big=", 4)) nbig = atoi(argv[i] + 4);
  MPI_Comm half;
#ifdef OPEN_MPI
  /* Open MPI 4.1.4 fails about every second run when the two halves create
   * their windows at the same time: MPI_Win_create or MPI_Win_allocate
   * returns MPI_ERR_WIN after open(2) of its shared-memory backing file fails
   * with ENOENT, or a later MPI_Put returns MPI_ERR_OTHER.  There the windows
   * live on one communicator of every rank (in reverse order), not on two
   * halves. */
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, tu_size - tu_rank, &half));
#else
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, tu_rank % 2, tu_size - tu_rank, &half));
#endif
  one_window(half, 0);
  one_window(half, 1);
  dynamic();
  MPI_Comm_free(&half);
  char extra[32];
  snprintf(extra, sizeof extra, "big=%d", nbig);
  return tu_finish(extra);
}
