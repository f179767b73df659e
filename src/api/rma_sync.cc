// One-sided synchronization: fence, locks, flushes, MPI_Win_sync and
// post/start/complete/wait/test.
//
// Operations complete in their calls (runtime/win.h), so the calls here only
// keep the epochs (what the movement calls check, MPI_ERR_RMA_SYNC) and
// order the members: a fence is a barrier; a lock is taken when
// MPI_Win_lock returns (real mutual exclusion through the window's control
// area, sleeping while another rank holds it); flushes and MPI_Win_sync are
// memory fences.  A fence opens an access epoch unless its assertion holds
// MPI_MODE_NOSUCCEED; a lock on a target this rank has locked already, or
// under MPI_Win_lock_all, is MPI_ERR_RMA_CONFLICT.  MPI_MODE_NOCHECK is
// accepted and ignored (the handshake it would skip is cheap and still correct).
#include <atomic>
#include <vector>

#include "api/check.h"
#include "runtime/win.h"

namespace shmcoll::api::impl {

namespace {

int assertBits(Call& call, int assert, int allowed, const char* which) {
  if ((assert & ~allowed) == 0) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_ASSERT, "assert = %#x holds bits other than %s", static_cast<unsigned>(assert),
                     which);
}

int rankArg(Call& call, rt::Win* w, int rank) {
  if (rank >= 0 && static_cast<uint32_t>(rank) < w->nranks) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_RANK, "rank = %d is not a rank of the window's group (size %u)", rank, w->nranks);
}

// A group's members as ranks of the window's group.
int groupRanks(Call& call, rt::Win* w, const rt::Group* g, std::vector<uint32_t>* out) {
  const auto& members = w->comm->team.members;
  out->clear();
  for (uint32_t world : g->members) {
    uint32_t r = 0;
    while (r < members.size() && members[r] != world) ++r;
    if (r == members.size())
      return check::fail(call, MPI_ERR_GROUP, "group holds world rank %u, which is not in the window's group", world);
    out->push_back(r);
  }
  return MPI_SUCCESS;
}

int engine(Call& call, int rc) { return rc ? check::engine(call, rc) : MPI_SUCCESS; }

}  // namespace

int winFence(Call& call, int assert, rt::Win* w) {
  SHMCOLL_CHECK(assertBits(call, assert, MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
                           "MPI_MODE_NOSTORE, NOPUT, NOPRECEDE and NOSUCCEED"));
  if (w->lockAll || w->locksHeld || w->started || w->posted)
    return check::fail(call, MPI_ERR_RMA_SYNC, "a lock or post/start epoch is open on win");
  SHMCOLL_CHECK(engine(call, rt::winBarrier(*w)));
  w->fenceOpen = !(assert& MPI_MODE_NOSUCCEED);
  return MPI_SUCCESS;
}

namespace {

// The fence a flush owes: the operations are done already, and their
// stores need ordering before what follows only if one ran since the last
// fence (an unlock, a fence and a flush all order everything before them).
void flushPending(rt::Win* w) {
  if (!w->pending) return;
  rt::fullFence();
  w->pending = false;
}
// A full fence, owed or not: MPI_Win_sync, and the end of an epoch that took
// no lock word (MPI_MODE_NOCHECK), where releasing it would have fenced.
void fenceAll(rt::Win* w) {
  rt::fullFence();
  w->pending = false;
}

// A lock on target `rank` taken (its lock word held, or with
// MPI_MODE_NOCHECK none: the program asserts no conflicting lock exists).
void held(rt::Win* w, int rank, int type, int assert) {
  w->locked[rank] = static_cast<uint8_t>((assert & MPI_MODE_NOCHECK) ? 3 : type == MPI_LOCK_SHARED ? 1 : 2);
  ++w->locksHeld;
}
// Ends the lock epoch on target `rank`: releases its lock word (a full
// barrier), or with MPI_MODE_NOCHECK fences.
void release(rt::Win* w, int rank) {
  const uint8_t how = w->locked[rank];
  if (how == 3)
    fenceAll(w);
  else
    rt::winUnlock(*w, static_cast<uint32_t>(rank), how == 1 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE);
  w->locked[rank] = 0;
  --w->locksHeld;
}

}  // namespace

// MPI_Win_lock's and MPI_Win_unlock's fast paths (desc/rma_sync.txt,
// fast=): the window of the last look-up, no thread serialization on,
// arguments and epochs that the checks below would pass, and for a lock one
// that is free at once.  True when the call is done; anything else (a lock
// that must be waited for included) takes the path below.
bool winLockFast(int type, int rank, int assert, MPI_Win win) {
  rt::Win* w = rt::gLastWin;
  if (wait::gSerialOn || !w || w->handle != win || (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE) ||
      rank < 0 || static_cast<uint32_t>(rank) >= w->nranks || (assert & ~MPI_MODE_NOCHECK) || w->lockAll ||
      w->locked[rank] || w->started ||
      (!(assert & MPI_MODE_NOCHECK) && !rt::winTryLock(*w, static_cast<uint32_t>(rank), type))) [[unlikely]]
    return false;
  held(w, rank, type, assert);
  return true;
}

bool winUnlockFast(int rank, MPI_Win win) {
  rt::Win* w = rt::gLastWin;
  if (wait::gSerialOn || !w || w->handle != win || rank < 0 || static_cast<uint32_t>(rank) >= w->nranks ||
      !w->locked[rank]) [[unlikely]]
    return false;
  release(w, rank);
  return true;
}

int winLock(Call& call, int type, int rank, int assert, rt::Win* w) {
  if (type != MPI_LOCK_SHARED && type != MPI_LOCK_EXCLUSIVE)
    return check::fail(call, MPI_ERR_LOCKTYPE, "lock_type = %d is neither MPI_LOCK_SHARED nor MPI_LOCK_EXCLUSIVE",
                       type);
  SHMCOLL_CHECK(rankArg(call, w, rank));
  SHMCOLL_CHECK(assertBits(call, assert, MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK"));
  if (w->lockAll)
    return check::fail(call, MPI_ERR_RMA_CONFLICT, "rank = %d: this rank holds MPI_Win_lock_all on win already", rank);
  if (w->locked[rank])
    return check::fail(call, MPI_ERR_RMA_CONFLICT, "rank = %d: this rank holds a lock on that target already", rank);
  if (w->started) return check::fail(call, MPI_ERR_RMA_SYNC, "an MPI_Win_start epoch is open on win");
  if (!(assert & MPI_MODE_NOCHECK)) SHMCOLL_CHECK(engine(call, rt::winLock(*w, static_cast<uint32_t>(rank), type)));
  held(w, rank, type, assert);
  return MPI_SUCCESS;
}

int winUnlock(Call& call, int rank, rt::Win* w) {
  SHMCOLL_CHECK(rankArg(call, w, rank));
  if (!w->locked[rank])
    return check::fail(call, MPI_ERR_RMA_SYNC, "rank = %d: this rank holds no MPI_Win_lock on that target", rank);
  release(w, rank);
  return MPI_SUCCESS;
}

int winLockAll(Call& call, int assert, rt::Win* w) {
  SHMCOLL_CHECK(assertBits(call, assert, MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK"));
  if (w->lockAll) return check::fail(call, MPI_ERR_RMA_CONFLICT, "this rank holds MPI_Win_lock_all on win already");
  if (w->locksHeld)
    return check::fail(call, MPI_ERR_RMA_CONFLICT, "this rank holds MPI_Win_lock on %u targets of win", w->locksHeld);
  if (w->started) return check::fail(call, MPI_ERR_RMA_SYNC, "an MPI_Win_start epoch is open on win");
  // (MPI_MODE_NOCHECK: no lock word at all, instead of one shared lock per member)
  const bool noCheck = (assert & MPI_MODE_NOCHECK) != 0;
  for (uint32_t r = 0; r < w->nranks && !noCheck; ++r)
    if (int rc = rt::winLock(*w, r, MPI_LOCK_SHARED)) {
      while (r-- > 0) rt::winUnlock(*w, r, MPI_LOCK_SHARED);
      return check::engine(call, rc);
    }
  w->lockAll = true;
  w->lockAllNoCheck = noCheck;
  return MPI_SUCCESS;
}

int winUnlockAll(Call& call, rt::Win* w) {
  if (!w->lockAll) return check::fail(call, MPI_ERR_RMA_SYNC, "this rank holds no MPI_Win_lock_all on win");
  if (w->lockAllNoCheck)
    fenceAll(w);
  else
    for (uint32_t r = 0; r < w->nranks; ++r) rt::winUnlock(*w, r, MPI_LOCK_SHARED);
  w->lockAll = false;
  w->lockAllNoCheck = false;
  return MPI_SUCCESS;
}

// Their fast path (desc/rma_sync.txt, fast=): the window of the last
// look-up, a target with an open passive-target epoch, no thread
// serialization on.  True when the flush is done.
[[gnu::always_inline]] inline bool winFlushFast(int rank, MPI_Win win) {
  rt::Win* w = rt::gLastWin;
  if (wait::gSerialOn || !w || w->handle != win || rank < 0 || static_cast<uint32_t>(rank) >= w->nranks ||
      !(w->lockAll || w->locked[rank])) [[unlikely]]
    return false;
  flushPending(w);
  return true;
}

// MPI_Win_flush and MPI_Win_flush_local.
int winFlush(Call& call, int rank, rt::Win* w) {
  SHMCOLL_CHECK(rankArg(call, w, rank));
  if (!w->lockAll && !w->locked[rank])
    return check::fail(call, MPI_ERR_RMA_SYNC, "rank = %d: no passive-target epoch is open to that target", rank);
  flushPending(w);
  return MPI_SUCCESS;
}

int winFlushAll(Call& call, rt::Win* w) {
  if (!w->lockAll && !w->locksHeld)
    return check::fail(call, MPI_ERR_RMA_SYNC, "no passive-target epoch is open on win");
  flushPending(w);
  return MPI_SUCCESS;
}

int winSync(Call&, rt::Win* w) {
  fenceAll(w);
  return MPI_SUCCESS;
}

int winPost(Call& call, rt::Group* g, int assert, rt::Win* w) {
  SHMCOLL_CHECK(assertBits(call, assert, MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
                           "MPI_MODE_NOCHECK, NOSTORE and NOPUT"));
  if (w->posted) return check::fail(call, MPI_ERR_RMA_SYNC, "an MPI_Win_post epoch is open on win already");
  std::vector<uint32_t> ranks;
  SHMCOLL_CHECK(groupRanks(call, w, g, &ranks));
  std::atomic_thread_fence(std::memory_order_seq_cst);
  rt::winPost(*w, ranks);
  return MPI_SUCCESS;
}

int winStart(Call& call, rt::Group* g, int assert, rt::Win* w) {
  SHMCOLL_CHECK(assertBits(call, assert, MPI_MODE_NOCHECK, "MPI_MODE_NOCHECK"));
  if (w->started) return check::fail(call, MPI_ERR_RMA_SYNC, "an MPI_Win_start epoch is open on win already");
  if (w->lockAll || w->locksHeld) return check::fail(call, MPI_ERR_RMA_SYNC, "a lock epoch is open on win");
  std::vector<uint32_t> ranks;
  SHMCOLL_CHECK(groupRanks(call, w, g, &ranks));
  SHMCOLL_CHECK(engine(call, rt::winStart(*w, ranks)));
  for (uint32_t r : ranks) w->inStart[r] = 1;
  w->startGroup = std::move(ranks);
  w->started = true;
  return MPI_SUCCESS;
}

int winComplete(Call& call, rt::Win* w) {
  if (!w->started) return check::fail(call, MPI_ERR_RMA_SYNC, "no MPI_Win_start epoch is open on win");
  std::atomic_thread_fence(std::memory_order_seq_cst);
  rt::winComplete(*w);
  for (uint32_t r : w->startGroup) w->inStart[r] = 0;
  w->startGroup.clear();
  w->started = false;
  return MPI_SUCCESS;
}

int winWait(Call& call, rt::Win* w) {
  if (!w->posted) return check::fail(call, MPI_ERR_RMA_SYNC, "no MPI_Win_post epoch is open on win");
  bool done = false;
  SHMCOLL_CHECK(engine(call, rt::winWait(*w, false, &done)));
  w->posted = false;
  return MPI_SUCCESS;
}

int winTest(Call& call, rt::Win* w, int* flag) {
  if (!w->posted) return check::fail(call, MPI_ERR_RMA_SYNC, "no MPI_Win_post epoch is open on win");
  bool done = false;
  SHMCOLL_CHECK(engine(call, rt::winWait(*w, true, &done)));
  if (done) w->posted = false;
  *flag = done ? 1 : 0;
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_rma_sync.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/rma_sync.txt)
