// Waiting for a peer: spin briefly, then yield, then sleep on a futex.
//
// Every rank owns one wake word (RankCtl::wake) and one `sleeping` flag on the
// same cache line.  A waiter announces itself by setting `sleeping`, re-checks
// its condition, and futex-waits on `wake`; a rank that changes state a peer
// may be waiting for calls wakePeer(), which costs one load of the peer's line
// unless the peer really sleeps.  The store/fence/load pairs on both sides
// (Dekker style) guarantee that either the waiter sees the change or the waker
// sees `sleeping` and bumps the word, so no wake-up is lost.
//
// Announcing without a fence.  The waker's fence is on the critical path of
// every small collective: it waits until the announcing store owns its line,
// which a peer polling that line has in its cache, so it costs one more
// cache-line round trip per call (2 ranks on a 2-core AMD EPYC VM, 8 bytes:
// MPI_Bcast back to back 0.43 -> 0.33 us without it, MPI_Alltoall with a
// barrier first 0.65 -> 0.43; docs/PERFORMANCE.md).  So where ranks do not
// outnumber cores (a sleep is then rare: it follows the whole spin), the
// fence moves to the sleeper: a rank about to sleep runs membarrier(2)
// (MEMBARRIER_CMD_GLOBAL_EXPEDITED), which makes every running thread of
// every registered process pass a full barrier, and the waker keeps only a
// compiler barrier between its store and its load of `sleeping`.  Either the
// waker's load comes after that barrier point and sees `sleeping`, or its
// store came before it and the sleeper's re-check sees the store.  All ranks
// must sleep that way before any waker leaves its fence out, so the runtime
// turns it on only when every rank registered (SegmentHeader::fenceRefused,
// counted before MPI_Init's first barrier); with more ranks than cores, where
// ranks sleep in almost every call and a membarrier costs several
// microseconds, both sides fence as before (SHMCOLL_WAKE_FENCE).
//
// With more ranks than cores, spinning burns the core the peer needs, so the
// rank skips the spin phase and sleeps after a few yields (runtime/context.cc):
// progress then runs at context-switch speed, not at time-slice speed.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "segment/layout.h"
#include "wait/serial.h"

namespace shmcoll::wait {

// Blocks on `ctl->wake` until it differs from `seen` or `timeoutNs` passes.
void futexWait(std::atomic<uint32_t>* word, uint32_t seen, long timeoutNs);
// Wakes every waiter on `word`.
void futexWakeAll(std::atomic<uint32_t>* word);

// sched_yield().
void yieldCpu();

// Set by the runtime at MPI_Init (see "Announcing without a fence" above):
// gSleepBarrier, this rank runs membarrier(2) before it sleeps; gWakeNoFence,
// every rank does, so wakers need no fence.
extern bool gSleepBarrier;
extern bool gWakeNoFence;
// Registers the process for membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
// false when the kernel refuses it.
bool registerSleepBarrier();
// The fence between a waker's announcing store and its load of `sleeping`.
inline void wakeFence() {
  if (gWakeNoFence)
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
}
// The fence between a sleeper's store of `sleeping` and its re-check.
void sleepFence();

// Wakes rank `peer` if it is asleep.  Call after the release-store that made
// the peer's condition true.
inline void wakeIfSleeping(segment::RankCtl* peer) {
  if (__builtin_expect(peer->sleeping.load(std::memory_order_relaxed) != 0, 0)) {
    peer->wake.fetch_add(1, std::memory_order_relaxed);
    futexWakeAll(&peer->wake);
  }
}
inline void wakePeer(segment::RankCtl* peer) {
  wakeFence();
  wakeIfSleeping(peer);
}
// Wakes every rank in world[members[i]] except `skip`, after one fence.
template <class Members, class CtlOf>
void wakeAll(const Members& members, uint32_t skip, CtlOf&& ctlOf) {
  wakeFence();
  for (uint32_t i = 0; i < members.size(); ++i)
    if (i != skip) wakeIfSleeping(ctlOf(members[i]));
}

// Wait policy, fixed at start-up.
struct WaitPolicy {
  uint32_t spins = 20000;  // pause-loop polls before yielding (SHMCOLL_WAIT_SPINS sets it at start-up)
  uint32_t yields = 8;     // sched_yield polls before sleeping (SHMCOLL_WAIT_YIELDS)
  long sleepNs = 2000000;  // first futex timeout: a safety net; wake-ups normally come first (0: none)
  // Waits inside a running stream (waitStream) with more ranks than cores:
  // the longest spin, in nanoseconds, before the policy above takes over.
  uint32_t streamSpinNs = 0;
};

// The longest a sleeping waiter stays asleep without a wake-up (the timeout
// doubles from WaitPolicy::sleepNs up to this).
constexpr long kMaxSleepNs = 64'000'000;

// Set once by the runtime (oversubscription shrinks spinning).
void setPolicy(const WaitPolicy& p);
const WaitPolicy& policy();

// Called from the slow path of every wait: returns non-zero (an MPI error
// class) when the job is being torn down, so a waiter never hangs on a dead peer.
int checkJobAlive();

// Progress of point-to-point traffic while a rank waits for anything else
// (p2p/ installs it): a rank blocked in a collective must still answer the
// messages, handshakes and freed cells its peers' sends and receives wait
// for.  Returns true when it did something.  Peers that give this rank work
// wake it, so it also runs before every sleep.
using ProgressHook = bool (*)();
extern ProgressHook gProgressHook;
inline bool runProgressHook() { return gProgressHook && gProgressHook(); }

// Jobs with more ranks than cores: the segment's count of ranks asleep on
// their futex, the ranks and the cores (set with the policy; null otherwise).
struct Crowd {
  std::atomic<uint32_t>* sleepers = nullptr;
  uint32_t ranks = 0, cores = 0;
};
extern Crowd gCrowd;
uint64_t nowNs();

// waitUntil at MPI_THREAD_MULTIPLE (wait/serial.h): the condition and the
// progress hook run with the process's lock held, the spinning, yielding and
// sleeping without it, and several threads of the rank may sleep at once
// (`sleeping` counts them).
template <class Cond>
int waitSerial(segment::RankCtl* self, Cond&& cond) {
  const WaitPolicy& p = policy();
  // (a round of 8 pauses: a pause costs up to ~65 cycles on some cores, and
  // the lock is taken again at the end of every round to test the condition)
  const uint32_t spinRounds = p.spins / 8, yieldRounds = p.yields;
  long sleepNs = p.sleepNs;
  // Whether this thread may have changed what the rank's other threads wait
  // for since it last let the lock go (releaseSerialFor): at first, by what
  // the caller did before it waited; later, by a progress step that did something.
  bool changed = true;
  for (uint32_t round = 0;; ++round) {
    changed |= runProgressHook();
    if (cond()) return 0;
    if (round < spinRounds + yieldRounds) {
      const uint32_t depth = releaseSerialFor(changed, nullptr);
      changed = false;
      if (round < spinRounds) {
        for (int i = 0; i < 8; ++i) __builtin_ia32_pause();
      } else {
        yieldCpu();
      }
      reacquireSerial(depth);
      continue;
    }
    uint32_t seen = self->wake.load(std::memory_order_acquire);
    gLocalSleepers.fetch_add(1, std::memory_order_seq_cst);
    self->sleeping.fetch_add(1, std::memory_order_relaxed);
    sleepFence();
    const bool progressed = runProgressHook();
    changed |= progressed;
    const bool met = !progressed && cond();
    if (!progressed && !met) {
      if (gCrowd.sleepers) gCrowd.sleepers->fetch_add(1, std::memory_order_relaxed);
      const uint32_t depth = releaseSerialFor(changed, &seen);
      changed = false;
      futexWait(&self->wake, seen, sleepNs);
      reacquireSerial(depth);
      if (sleepNs < kMaxSleepNs) sleepNs = std::min(2 * sleepNs, kMaxSleepNs);
      if (gCrowd.sleepers) gCrowd.sleepers->fetch_sub(1, std::memory_order_relaxed);
    }
    self->sleeping.fetch_sub(1, std::memory_order_relaxed);
    gLocalSleepers.fetch_sub(1, std::memory_order_relaxed);
    if (met || cond()) return 0;
    if (int rc = checkJobAlive()) return rc;
  }
}

// Waits until cond() is true.  `self` is the caller's own RankCtl.
// Returns 0, or an error class from checkJobAlive().  cond() is never called
// again once it returned true, so a condition may act when it holds (a
// matched probe takes the message it found).
template <class Cond>
int waitUntil(segment::RankCtl* self, Cond&& cond) {
  if (__builtin_expect(cond(), 1)) return 0;
  if (__builtin_expect(gSerialOn, 0)) return waitSerial(self, cond);
  const WaitPolicy& p = policy();
  for (uint32_t i = 0; i < p.spins; ++i) {
    __builtin_ia32_pause();
    if ((i & 31) == 31) runProgressHook();
    if (cond()) return 0;
  }
  for (uint32_t i = 0; i < p.yields; ++i) {
    yieldCpu();
    runProgressHook();
    if (cond()) return 0;
  }
  // The futex timeout is a safety net (wake-ups come first), and it grows
  // while the wait goes on: a rank waiting for a peer that has not even
  // started (hundreds of ranks exec'ing on a few cores) must not wake every
  // few milliseconds, taking the cores the starting ranks need.
  long sleepNs = p.sleepNs;
  for (;;) {
    uint32_t seen = self->wake.load(std::memory_order_acquire);
    self->sleeping.store(1, std::memory_order_relaxed);
    sleepFence();
    bool met = false;
    if (runProgressHook() || (met = cond())) {
      self->sleeping.store(0, std::memory_order_relaxed);
      if (met || cond()) return 0;
      continue;
    }
    if (gCrowd.sleepers) gCrowd.sleepers->fetch_add(1, std::memory_order_relaxed);
    futexWait(&self->wake, seen, sleepNs);
    if (sleepNs < kMaxSleepNs) sleepNs = std::min(2 * sleepNs, kMaxSleepNs);
    if (gCrowd.sleepers) gCrowd.sleepers->fetch_sub(1, std::memory_order_relaxed);
    self->sleeping.store(0, std::memory_order_relaxed);
    if (cond()) return 0;
    if (int rc = checkJobAlive()) return rc;
  }
}

// Waits for a peer in the middle of the same stream as we are, whose next
// step is usually one chunk copy away.  With more ranks than cores waitUntil
// yields at once, and a pipeline whose two ends sleep and wake at every chunk
// runs at the speed of wake-ups, not of copies.  So when the ranks not asleep
// fit the cores -- the peer is then most likely running -- spin for up to
// policy().streamSpinNs first; when they do not, a spin would only hold a
// core the peer may need.  Then as waitUntil.
template <class Cond>
int waitStream(segment::RankCtl* self, Cond&& cond) {
  if (__builtin_expect(cond(), 1)) return 0;
  if (__builtin_expect(gSerialOn, 0)) return waitSerial(self, cond);
  const uint32_t budget = policy().streamSpinNs;
  if (budget && gCrowd.sleepers &&
      gCrowd.ranks - std::min(gCrowd.ranks, gCrowd.sleepers->load(std::memory_order_relaxed)) <= gCrowd.cores) {
    const uint64_t t0 = nowNs();
    for (uint32_t i = 1;; ++i) {
      __builtin_ia32_pause();
      if (cond()) return 0;
      if ((i & 15) == 0 && nowNs() - t0 > budget) break;
    }
  }
  return waitUntil(self, cond);
}

}  // namespace shmcoll::wait
