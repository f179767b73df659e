/*
 * rma_basic.c -- one-sided communication, byte-exact: every window flavor
 * (MPI_Win_create on malloc'd and on MPI_Alloc_mem memory, MPI_Win_allocate,
 * MPI_Win_allocate_shared contiguous and not, MPI_Win_create_dynamic) under
 * every synchronization mode (fence, lock, lock_all with flushes,
 * post/start/complete/wait), with derived datatypes on origin and target;
 * MPI_Win_c2f / MPI_Win_f2c (round trips of a window and of MPI_WIN_NULL).
 *
 * Each rank's window is NG guard ints, then one slot of NS ints per origin
 * rank, then NG guard ints, all starting at a sentinel.  Origins write only
 * into their own slot of their targets; afterwards every rank compares its
 * whole window (guards, slots, the holes a derived target type leaves) with
 * the image it must hold, and gets copies of other windows to compare too.
 * Standard API only (also run against Open MPI and MPICH: tests/crosslib).
 */
#include "testutil.h"

#define NG 16
#define NS 64
#define SENT (-7)

static int n, me;
static int win_ints(void) { return 2 * NG + n * NS; }
static int val(int o, int t, int k, int phase) { return 1000000 * phase + 10000 * o + 100 * t + k; }

/* The image rank t's window must hold after the phases run so far. */
static void expect(int t, int phases, int *img) {
  for (int i = 0; i < win_ints(); ++i) img[i] = SENT;
  int o = (t - 1 + n) % n; /* phase 1 (fence): o put a vector pattern into its slot of t */
  if (phases >= 1)
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 2; ++j) img[NG + o * NS + i * 4 + j] = val(o, t, 2 * i + j, 1);
  if (phases >= 2) /* phase 2 (lock exclusive): every origin wrote 4 ints at +40 of its slot */
    for (int oo = 0; oo < n; ++oo)
      for (int k = 0; k < 4; ++k) img[NG + oo * NS + 40 + k] = val(oo, t, k, 2);
  if (phases >= 3) /* phase 3 (lock_all): every origin accumulated (sum) 1..3 into +50..52 of its slot */
    for (int oo = 0; oo < n; ++oo)
      for (int k = 0; k < 3; ++k) img[NG + oo * NS + 50 + k] = SENT + k + 1;
  if (phases >= 4) { /* phase 4 (PSCW): t's right neighbour put 2 ints at +60 of its slot */
    int p = (t + 1) % n;
    img[NG + p * NS + 60] = val(p, t, 0, 4);
    img[NG + p * NS + 61] = val(p, t, 1, 4);
  }
}

static void compare(const int *got, const int *want, int t, const char *what) {
  for (int i = 0; i < win_ints(); ++i)
    if (got[i] != want[i])
      tu_fail("%s: window of rank %d, int %d (%s): got %d, want %d", what, t, i,
              i < NG             ? "front guard"
              : i >= NG + n * NS ? "back guard"
                                 : "slot",
              got[i], want[i]);
}

/* Every rank gets a copy of every window (origin type with holes) and checks it. */
static void check_all(MPI_Win win, const MPI_Aint *base, int phases, const char *flavor) {
  int *img = (int *)tu_malloc(sizeof(int) * win_ints());
  int *got = (int *)tu_malloc(sizeof(int) * 2 * win_ints());
  MPI_Datatype holes; /* every other int of the origin buffer */
  TU_CALL(MPI_Type_vector(win_ints(), 1, 2, MPI_INT, &holes));
  TU_CALL(MPI_Type_commit(&holes));
  TU_CALL(MPI_Win_lock_all(0, win));
  for (int t = 0; t < n; ++t) {
    for (int i = 0; i < 2 * win_ints(); ++i) got[i] = -99;
    TU_CALL(MPI_Get(got, 1, holes, t, base[t], win_ints(), MPI_INT, win));
    TU_CALL(MPI_Win_flush(t, win));
    expect(t, phases, img);
    for (int i = 0; i < win_ints(); ++i) {
      if (got[2 * i + 1] != -99)
        tu_fail("%s: MPI_Get wrote into a hole of the origin type at int %d", flavor, 2 * i + 1);
      got[i] = got[2 * i];
    }
    char what[128];
    snprintf(what, sizeof what, "%s, read with MPI_Get after phase %d", flavor, phases);
    compare(got, img, t, what);
    ++tu_ncases;
  }
  TU_CALL(MPI_Win_unlock_all(win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* (before a dynamic window's memory is detached) */
  MPI_Type_free(&holes);
  free(img);
  free(got);
}

/* Runs the four phases on `win`, whose memory on this rank is `mem`; target
 * displacements are `base[t]` (dynamic windows: absolute addresses) plus int
 * offsets times sizeof(int) / disp_unit. */
static void run(MPI_Win win, int *mem, const MPI_Aint *base, int disp_unit, const char *flavor) {
  const int scale = (int)sizeof(int) / disp_unit;
  int *img = (int *)tu_malloc(sizeof(int) * win_ints());
  int buf[64];
  MPI_Datatype tvec, ovec;
  TU_CALL(MPI_Type_vector(8, 2, 4, MPI_INT, &tvec)); /* target: 8 pairs, 2 ints apart */
  TU_CALL(MPI_Type_commit(&tvec));
  TU_CALL(MPI_Type_vector(4, 1, 3, MPI_INT, &ovec)); /* origin: 4 ints, 3 apart */
  TU_CALL(MPI_Type_commit(&ovec));

  /* phase 1: fence, one put with a derived target type */
  int t = (me + 1) % n;
  for (int k = 0; k < 16; ++k) buf[k] = val(me, t, k, 1);
  TU_CALL(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  TU_CALL(MPI_Put(buf, 16, MPI_INT, t, base[t] + (MPI_Aint)(NG + me * NS) * scale, 1, tvec, win));
  TU_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  expect(me, 1, img);
  compare(mem, img, me, flavor);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* (before the next phase writes into us) */

  /* phase 2: an exclusive lock on every target in turn, derived origin type */
  for (int tt = 0; tt < n; ++tt) {
    int src[12];
    for (int k = 0; k < 12; ++k) src[k] = -1;
    for (int k = 0; k < 4; ++k) src[3 * k] = val(me, tt, k, 2);
    TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tt, 0, win));
    TU_CALL(MPI_Put(src, 1, ovec, tt, base[tt] + (MPI_Aint)(NG + me * NS + 40) * scale, 4, MPI_INT, win));
    TU_CALL(MPI_Win_unlock(tt, win));
  }
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win)); /* (our own memory, read directly) */
  TU_CALL(MPI_Win_sync(win));
  expect(me, 2, img);
  compare(mem, img, me, flavor);
  TU_CALL(MPI_Win_unlock(me, win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* (before the next phase writes into us) */

  /* phase 3: lock_all, accumulates with flushes, request forms */
  TU_CALL(MPI_Win_lock_all(0, win));
  for (int tt = 0; tt < n; ++tt) {
    int one[3] = {1, 2, 3};
    MPI_Request rq;
    TU_CALL(MPI_Raccumulate(one, 3, MPI_INT, tt, base[tt] + (MPI_Aint)(NG + me * NS + 50) * scale, 3, MPI_INT, MPI_SUM,
                            win, &rq));
    TU_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    TU_CALL(MPI_Win_flush_local(tt, win));
  }
  TU_CALL(MPI_Win_flush_all(win));
  TU_CALL(MPI_Win_unlock_all(win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
  TU_CALL(MPI_Win_sync(win));
  expect(me, 3, img);
  compare(mem, img, me, flavor);
  TU_CALL(MPI_Win_unlock(me, win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* (before the next phase writes into us) */

  /* phase 4: post/start/complete/wait around a ring */
  MPI_Group world, left, right;
  TU_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int l = (me - 1 + n) % n, r = (me + 1) % n;
  TU_CALL(MPI_Group_incl(world, 1, &l, &left));
  TU_CALL(MPI_Group_incl(world, 1, &r, &right));
  TU_CALL(MPI_Win_post(right, 0, win)); /* our right neighbour writes into us */
  TU_CALL(MPI_Win_start(left, 0, win));
  int two[2] = {val(me, l, 0, 4), val(me, l, 1, 4)};
  TU_CALL(MPI_Put(two, 2, MPI_INT, l, base[l] + (MPI_Aint)(NG + me * NS + 60) * scale, 2, MPI_INT, win));
  TU_CALL(MPI_Win_complete(win));
  int flag = 0;
  TU_CALL(MPI_Win_test(win, &flag));
  if (!flag) TU_CALL(MPI_Win_wait(win));
  expect(me, 4, img);
  compare(mem, img, me, flavor);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD)); /* (before the next phase writes into us) */
  MPI_Group_free(&left);
  MPI_Group_free(&right);
  MPI_Group_free(&world);

  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  check_all(win, base, 4, flavor);
  MPI_Type_free(&tvec);
  MPI_Type_free(&ovec);
  free(img);
  ++tu_ncases;
}

static void fill(int *mem) {
  for (int i = 0; i < win_ints(); ++i) mem[i] = SENT;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "rma_basic");
  n = tu_size, me = tu_rank;
  const MPI_Aint bytes = (MPI_Aint)sizeof(int) * win_ints();
  MPI_Aint *zero = (MPI_Aint *)calloc(n, sizeof(MPI_Aint));
  MPI_Win win;

  { /* MPI_Win_create on malloc'd memory, disp_unit sizeof(int) */
    int *mem = (int *)tu_malloc(bytes);
    fill(mem);
    TU_CALL(MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(win, mem, zero, sizeof(int), "MPI_Win_create(malloc)");
    TU_CALL(MPI_Win_free(&win));
    free(mem);
  }
  { /* MPI_Win_create on MPI_Alloc_mem memory, disp_unit 1 */
    int *mem;
    TU_CALL(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
    fill(mem);
    TU_CALL(MPI_Win_create(mem, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(win, mem, zero, 1, "MPI_Win_create(MPI_Alloc_mem)");
    TU_CALL(MPI_Win_free(&win));
    MPI_Free_mem(mem);
  }
  { /* MPI_Win_allocate */
    int *mem;
    TU_CALL(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    fill(mem);
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    run(win, mem, zero, sizeof(int), "MPI_Win_allocate");
    { /* MPI_Win_c2f / MPI_Win_f2c: the round trip gives the same window, which still works */
      MPI_Fint f = MPI_Win_c2f(win);
      MPI_Win back = MPI_Win_f2c(f);
      if (back != win) tu_fail("MPI_Win_f2c(MPI_Win_c2f(win)) is not the window");
      void *base = NULL;
      int flag = 0;
      TU_CALL(MPI_Win_get_attr(back, MPI_WIN_BASE, &base, &flag));
      if (!flag || base != (void *)mem)
        tu_fail("MPI_WIN_BASE through the round-tripped handle: %p, want %p", base, (void *)mem);
      if (MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) != MPI_WIN_NULL) tu_fail("MPI_WIN_NULL does not round-trip");
      if (PMPI_Win_f2c(PMPI_Win_c2f(win)) != win) tu_fail("PMPI_Win_f2c(PMPI_Win_c2f(win)) is not the window");
      ++tu_ncases;
    }
    TU_CALL(MPI_Win_free(&win));
  }
  for (int nc = 0; nc < 2; ++nc) { /* MPI_Win_allocate_shared, contiguous and not */
    int *mem;
    MPI_Info info;
    TU_CALL(MPI_Info_create(&info));
    if (nc) TU_CALL(MPI_Info_set(info, "alloc_shared_noncontig", "true"));
    TU_CALL(MPI_Win_allocate_shared(bytes, sizeof(int), info, MPI_COMM_WORLD, &mem, &win));
    MPI_Info_free(&info);
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    fill(mem);
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    run(win, mem, zero, sizeof(int), nc ? "MPI_Win_allocate_shared(noncontig)" : "MPI_Win_allocate_shared");
    TU_CALL(MPI_Win_free(&win));
  }
  { /* MPI_Win_create_dynamic: each rank attaches malloc'd memory and shares its address */
    int *mem = (int *)tu_malloc(bytes);
    fill(mem);
    TU_CALL(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    TU_CALL(MPI_Win_attach(win, mem, bytes));
    MPI_Aint mine, *addrs = (MPI_Aint *)tu_malloc(sizeof(MPI_Aint) * n);
    TU_CALL(MPI_Get_address(mem, &mine));
    TU_CALL(MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD));
    run(win, mem, addrs, 1, "MPI_Win_create_dynamic");
    TU_CALL(MPI_Win_detach(win, mem));
    TU_CALL(MPI_Win_free(&win));
    free(addrs);
    free(mem);
  }
#if MPI_VERSION >= 4
  { /* the big-count forms: MPI_Win_allocate_shared_c, MPI_Win_shared_query_c, MPI_Put_c, MPI_Get_c,
       MPI_Accumulate_c, MPI_Get_accumulate_c, MPI_Rput_c */
    long long *mem, *right;
    MPI_Aint size, du;
    TU_CALL(
        MPI_Win_allocate_shared_c(8 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    int r = (me + 1) % n;
    TU_CALL(MPI_Win_shared_query_c(win, r, &size, &du, &right));
    if (size != 8 * (MPI_Aint)sizeof(long long) || du != (MPI_Aint)sizeof(long long))
      tu_fail("MPI_Win_shared_query_c: size %ld, disp_unit %ld", (long)size, (long)du);
    for (int k = 0; k < 8; ++k) mem[k] = -1;
    TU_CALL(MPI_Win_fence(0, win));
    long long src[3] = {me * 10LL, me * 10LL + 1, me * 10LL + 2}, got[3], res[2];
    TU_CALL(MPI_Put_c(src, 3, MPI_LONG_LONG, r, 0, 3, MPI_LONG_LONG, win));
    TU_CALL(MPI_Win_fence(0, win));
    TU_CALL(MPI_Get_c(got, 3, MPI_LONG_LONG, r, 0, 3, MPI_LONG_LONG, win));
    TU_CALL(MPI_Accumulate_c(src, 2, MPI_LONG_LONG, r, 4, 2, MPI_LONG_LONG, MPI_SUM, win));
    TU_CALL(MPI_Win_fence(0, win));
    TU_CALL(MPI_Get_accumulate_c(src, 2, MPI_LONG_LONG, res, 2, MPI_LONG_LONG, r, 4, 2, MPI_LONG_LONG, MPI_SUM, win));
    TU_CALL(MPI_Win_fence(0, win));
    for (int k = 0; k < 3; ++k)
      if (got[k] != me * 10LL + k || right[k] != me * 10LL + k)
        tu_fail("MPI_Put_c/MPI_Get_c: element %d is %lld / %lld", k, got[k], right[k]);
    for (int k = 0; k < 2; ++k)
      if (res[k] != -1 + me * 10LL + k || right[4 + k] != -1 + 2 * (me * 10LL + k))
        tu_fail("MPI_Accumulate_c/MPI_Get_accumulate_c: element %d is %lld / %lld", k, res[k], right[4 + k]);
    if (right[3] != -1 || right[6] != -1 || right[7] != -1) tu_fail("big-count forms wrote outside their target");
    TU_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    TU_CALL(MPI_Win_lock_all(0, win));
    MPI_Request rq;
    TU_CALL(MPI_Rput_c(src, 1, MPI_LONG_LONG, r, 7, 1, MPI_LONG_LONG, win, &rq));
    TU_CALL(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    TU_CALL(MPI_Win_unlock_all(win));
    TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
    TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
    TU_CALL(MPI_Win_sync(win));
    int l = (me - 1 + n) % n;
    if (mem[7] != l * 10LL) tu_fail("MPI_Rput_c: got %lld, want %lld", mem[7], l * 10LL);
    TU_CALL(MPI_Win_unlock(me, win));
    TU_CALL(MPI_Win_free(&win));
    ++tu_ncases;
  }
#endif
  free(zero);
  return tu_finish("");
}
