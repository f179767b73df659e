/*
 * rma_direct.c -- MPI_Put and MPI_Get of contiguous data, byte-exact, at the
 * edges of the window: the cases a library may serve with one copy into
 * mapped memory (first byte, last byte, a type whose data starts past its
 * origin, a rank moving data inside its own window) under every
 * synchronization mode (an exclusive lock and lock_all with MPI_MODE_NOCHECK
 * too, which take no lock word), next to the calls that must be refused there
 * (one byte past the end, a negative displacement, a rank outside the group,
 * a request form outside a lock epoch), which must leave every byte alone.
 *
 * Each rank r puts into t = r + 1 mod N.  Every window holds W bytes that
 * start as a sentinel pattern; region i of the table below is written by
 * step i with a pattern of (origin, target, step).  Gets read the target's
 * window back into a buffer bracketed by guard bytes.  At the end every rank
 * compares its whole window with the image it must hold.  Four flavors:
 * MPI_Win_allocate (disp_unit 1), MPI_Win_allocate_shared (disp_unit 4),
 * MPI_Win_create on malloc'd memory (disp_unit 1) and on MPI_Alloc_mem
 * memory (disp_unit 2).  Standard API only.
 */
#include "testutil.h"

#define W 256 /* window bytes per rank */
#define G 16  /* guard bytes on each side of a get's buffer */

static int n, me;

/* The regions the origin writes (byte offsets, multiples of 4) and the one a rank moves inside its own window. */
enum { kFence, kLockEnd, kLockAll, kPscw, kRequest, kShifted, kNoCheck, kSteps };
static const int kOff[kSteps] = {0, W - 12, 100, 64, 200, 128, 80};
static const int kLen[kSteps] = {1, 12, 7, 8, 16, 20, 10}; /* kShifted: bytes [8, 20) of the region move */
#define SELF_SRC 32
#define SELF_DST 40
#define SELF_LEN 24

static unsigned char pat(int o, int t, int step, int k) { return tu_byte(tu_key(o, t, 100 + step), (uint64_t)k); }

/* What step `step` writes, as origin o into t: applied to an image of t's window. */
static void apply(unsigned char *img, int o, int t, int step) {
  const int from = step == kShifted ? 8 : 0;
  for (int k = from; k < kLen[step]; ++k) img[kOff[step] + k] = pat(o, t, step, k);
}

/* The image of t's window after steps [0, upto) and, with `self`, t's own move. */
static void image(unsigned char *img, int t, int upto, int self) {
  tu_fill_sentinel(img, W);
  const int o = (t - 1 + n) % n;
  for (int s = 0; s < upto; ++s) apply(img, o, t, s);
  if (self) memmove(img + SELF_DST, img + SELF_SRC, SELF_LEN);
}

static void compare(const unsigned char *got, const unsigned char *want, const char *flavor, const char *what) {
  for (int i = 0; i < W; ++i)
    if (got[i] != want[i]) tu_fail("%s, %s: byte %d is %#x, want %#x", flavor, what, i, got[i], want[i]);
}

/* Gets t's whole window (contiguous, into the middle of a guarded buffer) and compares. */
static void get_and_check(MPI_Win win, int t, int upto, int self, const char *flavor, const char *what) {
  unsigned char buf[W + 2 * G], img[W];
  tu_fill_sentinel(buf, sizeof buf);
  TU_CALL(MPI_Get(buf + G, W, MPI_BYTE, t, 0, W, MPI_BYTE, win));
  TU_CALL(MPI_Win_flush(t, win));
  for (int i = 0; i < G; ++i)
    if (buf[i] != tu_sentinel(i) || buf[G + W + i] != tu_sentinel(G + W + i))
      tu_fail("%s, %s: MPI_Get wrote into the guard bytes of its buffer", flavor, what);
  image(img, t, upto, self);
  compare(buf + G, img, flavor, what);
  ++tu_ncases;
}

static void expect_error(int rc, int cls, const char *flavor, const char *what) {
  int got = MPI_SUCCESS;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &got);
  if (got != cls) tu_fail("%s: %s returned class %d, want %d", flavor, what, got, cls);
  ++tu_ncases;
}

static void run(MPI_Win win, unsigned char *mem, int du, const char *flavor) {
  const int t = (me + 1) % n;
  unsigned char src[kSteps][32];
  for (int s = 0; s < kSteps; ++s)
    for (int k = 0; k < 32; ++k) src[s][k] = (s == kShifted && k < 8) ? 0xee : pat(me, t, s, k);
  tu_fill_sentinel(mem, W);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  /* fence: the window's first byte */
  TU_CALL(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
  TU_CALL(MPI_Put(src[kFence], 1, MPI_BYTE, t, kOff[kFence] / du, 1, MPI_BYTE, win));
  expect_error(MPI_Rput(src[kFence], 1, MPI_BYTE, t, 0, 1, MPI_BYTE, win, &(MPI_Request){MPI_REQUEST_NULL}),
               MPI_ERR_RMA_SYNC, flavor, "MPI_Rput under a fence");
  TU_CALL(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));

  /* exclusive lock: the window's last 12 bytes */
  TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win));
  TU_CALL(MPI_Put(src[kLockEnd], 12, MPI_BYTE, t, kOff[kLockEnd] / du, 12, MPI_BYTE, win));
  expect_error(MPI_Put(src[kLockEnd], 5, MPI_BYTE, t, (W - 4) / du, 5, MPI_BYTE, win), MPI_ERR_RMA_RANGE, flavor,
               "MPI_Put past the window's end");
  expect_error(MPI_Put(src[kLockEnd], 4, MPI_BYTE, t, -1, 4, MPI_BYTE, win), MPI_ERR_RMA_RANGE, flavor,
               "MPI_Put at a negative displacement");
  expect_error(MPI_Put(src[kLockEnd], 4, MPI_BYTE, n, 0, 4, MPI_BYTE, win), MPI_ERR_RANK, flavor, "MPI_Put to rank n");
  TU_CALL(MPI_Win_unlock(t, win));

  /* lock_all and flushes: a put, then the whole window read back */
  TU_CALL(MPI_Win_lock_all(0, win));
  TU_CALL(MPI_Put(src[kLockAll], 7, MPI_BYTE, t, kOff[kLockAll] / du, 7, MPI_BYTE, win));
  TU_CALL(MPI_Win_flush(t, win));
  get_and_check(win, t, kLockAll + 1, 0, flavor, "lock_all, after a put and a flush");
  /* the put's bytes read back into a user type whose data starts 8 bytes in */
  MPI_Datatype late;
  const int len7 = kLen[kLockAll];
  const MPI_Aint at8 = 8;
  TU_CALL(MPI_Type_create_hindexed(1, &len7, &at8, MPI_BYTE, &late));
  TU_CALL(MPI_Type_commit(&late));
  unsigned char mid[7 + 2 * G];
  tu_fill_sentinel(mid, sizeof mid);
  TU_CALL(MPI_Get(mid + G - 8, 1, late, t, kOff[kLockAll] / du, len7, MPI_BYTE, win));
  for (size_t i = 0; i < sizeof mid; ++i) {
    const unsigned char want = i < G || i >= G + 7 ? tu_sentinel(i) : src[kLockAll][i - G];
    if (mid[i] != want) tu_fail("%s: MPI_Get into a user type, byte %zu is %#x, want %#x", flavor, i, mid[i], want);
  }
  MPI_Type_free(&late);
  unsigned char tail[5 + 2 * G];
  tu_fill_sentinel(tail, sizeof tail);
  expect_error(MPI_Get(tail + G, 5, MPI_BYTE, t, (W - 4) / du, 5, MPI_BYTE, win), MPI_ERR_RMA_RANGE, flavor,
               "MPI_Get past the window's end");
  for (size_t i = 0; i < sizeof tail; ++i)
    if (tail[i] != tu_sentinel(i)) tu_fail("%s: a refused MPI_Get wrote into its buffer at byte %zu", flavor, i);
  TU_CALL(MPI_Win_unlock_all(win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  /* post/start/complete/wait around the ring: 2 ints */
  MPI_Group world, left, right;
  TU_CALL(MPI_Comm_group(MPI_COMM_WORLD, &world));
  const int l = (me - 1 + n) % n;
  TU_CALL(MPI_Group_incl(world, 1, &l, &left));
  TU_CALL(MPI_Group_incl(world, 1, &t, &right));
  TU_CALL(MPI_Win_post(left, 0, win));
  TU_CALL(MPI_Win_start(right, 0, win));
  TU_CALL(MPI_Put(src[kPscw], 2, MPI_INT, t, kOff[kPscw] / du, 2, MPI_INT, win));
  TU_CALL(MPI_Win_complete(win));
  TU_CALL(MPI_Win_wait(win));
  MPI_Group_free(&left);
  MPI_Group_free(&right);
  MPI_Group_free(&world);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  /* request forms under a shared lock, then a type whose data starts 8 bytes in */
  MPI_Datatype shifted;
  const int blen = 3;
  const MPI_Aint at = 8;
  TU_CALL(MPI_Type_create_hindexed(1, &blen, &at, MPI_INT, &shifted));
  TU_CALL(MPI_Type_commit(&shifted));
  TU_CALL(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win));
  MPI_Request rq[2];
  unsigned char back[16 + 2 * G];
  tu_fill_sentinel(back, sizeof back);
  TU_CALL(MPI_Rput(src[kRequest], 16, MPI_BYTE, t, kOff[kRequest] / du, 16, MPI_BYTE, win, &rq[0]));
  TU_CALL(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
  TU_CALL(MPI_Win_flush(t, win));
  TU_CALL(MPI_Rget(back + G, 16, MPI_BYTE, t, kOff[kRequest] / du, 16, MPI_BYTE, win, &rq[1]));
  TU_CALL(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
  for (size_t i = 0; i < sizeof back; ++i) {
    const unsigned char want = i < G || i >= G + 16 ? tu_sentinel(i) : src[kRequest][i - G];
    if (back[i] != want) tu_fail("%s: MPI_Rget byte %zu is %#x, want %#x", flavor, i, back[i], want);
  }
  TU_CALL(MPI_Put(src[kShifted], 1, shifted, t, kOff[kShifted] / du, 1, shifted, win));
  TU_CALL(MPI_Win_unlock(t, win));
  MPI_Type_free(&shifted);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  /* MPI_MODE_NOCHECK: an exclusive lock nobody else asks for (each target has one origin here) */
  TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, MPI_MODE_NOCHECK, win));
  TU_CALL(MPI_Put(src[kNoCheck], 10, MPI_BYTE, t, kOff[kNoCheck] / du, 10, MPI_BYTE, win));
  expect_error(MPI_Win_lock(MPI_LOCK_SHARED, t, MPI_MODE_NOCHECK, win), MPI_ERR_RMA_CONFLICT, flavor,
               "a second MPI_Win_lock on the same target");
  TU_CALL(MPI_Win_unlock(t, win));
  expect_error(MPI_Win_unlock(t, win), MPI_ERR_RMA_SYNC, flavor, "MPI_Win_unlock after the epoch ended");
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  /* a move inside our own window, overlapping itself (a region nobody else writes) */
  TU_CALL(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win));
  TU_CALL(MPI_Put(mem + SELF_SRC, SELF_LEN, MPI_BYTE, me, SELF_DST / du, SELF_LEN, MPI_BYTE, win));
  TU_CALL(MPI_Win_sync(win));
  unsigned char img[W];
  image(img, me, kSteps, 1);
  compare(mem, img, flavor, "the whole window at the end");
  TU_CALL(MPI_Win_unlock(me, win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));

  TU_CALL(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
  get_and_check(win, t, kSteps, 1, flavor, "the neighbour's window read back at the end, under lock_all(NOCHECK)");
  TU_CALL(MPI_Win_unlock_all(win));
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  ++tu_ncases;
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "rma_direct");
  n = tu_size, me = tu_rank;
  MPI_Win win;
  unsigned char *mem;
  {
    TU_CALL(MPI_Win_allocate(W, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(win, mem, 1, "MPI_Win_allocate");
    TU_CALL(MPI_Win_free(&win));
  }
  {
    TU_CALL(MPI_Win_allocate_shared(W, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(win, mem, 4, "MPI_Win_allocate_shared");
    TU_CALL(MPI_Win_free(&win));
  }
  {
    mem = (unsigned char *)tu_malloc(W);
    TU_CALL(MPI_Win_create(mem, W, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(win, mem, 1, "MPI_Win_create(malloc)");
    TU_CALL(MPI_Win_free(&win));
    free(mem);
  }
  {
    TU_CALL(MPI_Alloc_mem(W, MPI_INFO_NULL, &mem));
    TU_CALL(MPI_Win_create(mem, W, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    TU_CALL(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN));
    run(win, mem, 2, "MPI_Win_create(MPI_Alloc_mem)");
    TU_CALL(MPI_Win_free(&win));
    MPI_Free_mem(mem);
  }
  return tu_finish(NULL);
}
