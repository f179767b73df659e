// The rounds every collective of the accelerator runs over the segment
// (described at the top of engine.cc): the waits on the per-rank flags, the
// piece of a block a round moves, and RunRounds, which also carries round 0's
// verdicts.  Shared by engine.cc, alltoallw.cc and reduce.cc.
#ifndef SHMCOLL_ACCEL_ROUNDS_H
#define SHMCOLL_ACCEL_ROUNDS_H

#include <sched.h>

#include <algorithm>

#include "accel.h"

namespace shmcoll_accel {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits until flag >= target: spins a little (st.spin pauses; none when the
// communicator's processes outnumber the cores: the peer it waits for is then
// most likely not running, and a spin only holds the core it needs), then
// yields the core, so a peer without a core of its own gets to run.  While
// it yields it also lets the host progress its own operations now and then (a
// peer may be blocked in the host waiting for a nonblocking operation this
// process started, e.g. an MPI_Ibarrier before this collective).
template <class Done>
void WaitUntil(Done done, unsigned spin) {
  unsigned spins = 0;
  while (!done()) {
    if (++spins < spin) {
      CpuRelax();
      continue;
    }
    sched_yield();
    if (spins % 64u == 0) HostProgress();
  }
}
inline void WaitFor(const std::atomic<uint64_t>& flag, uint64_t target, unsigned spin) {
  WaitUntil([&] { return flag.load(std::memory_order_acquire) >= target; }, spin);
}

// (every other rank's: a rank waits only after its own post)
inline void WaitPosted(const CommState& st, uint64_t s) {
  for (int k = 1; k < st.n; ++k) WaitFor(st.flags((st.me + k) % st.n)->post.posted, s, st.spin);
}
inline void WaitConsumed(const CommState& st, uint64_t s) {
  for (int k = 1; k <= st.n; ++k) WaitFor(st.flags((st.me + k) % st.n)->read.consumed, s, st.spin);
}

// The piece of a block of `total` bytes that round r moves: [*off, *off + len).
inline size_t Piece(size_t total, uint64_t r, size_t chunk, size_t* off) {
  *off = static_cast<size_t>(r) * chunk;
  return total > *off ? std::min(chunk, total - *off) : 0;
}

inline uint64_t RoundsFor(size_t bytes, size_t chunk) { return (bytes + chunk - 1) / chunk; }

// Runs the rounds; fill(r) writes my slot, drain(r) reads the others'.
// False when some rank declined (then every rank returns false).  `lead`
// (the same on every rank, or -1): that rank posts round 0 only once every
// other rank has, so it leaves the round first (a barrier, Barrier).
template <class Fill, class Drain>
bool RunRounds(CommState& st, uint64_t local_rounds, bool ok, Fill fill, Drain drain, int lead = -1) {
  RankFlags* mine = st.flags(st.me);
  if (st.area_used) {  // every rank has read the last round before any half is written again
    WaitConsumed(st, st.seq);
    st.area_used = false;
  }
  uint64_t rounds = 1;
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t s = ++st.seq;
    const int parity = static_cast<int>(s & 1);
    // My half of round s - 2 is free: every rank posted round s - 1 (the last
    // round's wait saw it), and a rank marks a round read before it posts the
    // next, so all have read s - 2.  (Every round of every call comes through
    // here, waiting for all posts: waiting for the marks too would cost a
    // cache miss per round for nothing.)
    if (r == 0) {
      mine->post.verdict[parity].store(
          std::max<uint64_t>(local_rounds, 1) << 2 | (st.push_mine ? 2 : 0) | (ok ? 1 : 0), std::memory_order_relaxed);
      st.push_mine = false;
    }
    if (ok) fill(r);
    if (r == 0 && lead == st.me) WaitPosted(st, s);
    mine->post.posted.store(s, std::memory_order_release);
    WaitPosted(st, s);
    if (r == 0) {
      bool all = true;
      // (pushed is copied, into room MapSegment made: a rank one round ahead, in the next call's
      // round 0, may rewrite it)
      for (int j = 0; j < st.n; ++j) {
        const uint64_t v = st.flags(j)->post.verdict[parity].load(std::memory_order_relaxed);
        rounds = std::max(rounds, v >> 2);
        all = all && (v & 1);
        st.pushed[static_cast<size_t>(j)] = (v & 2) != 0;
      }
      if (!all) {
        mine->read.consumed.store(s, std::memory_order_release);
        return false;
      }
    }
    drain(r);
    mine->read.consumed.store(s, std::memory_order_release);
  }
  return true;
}

}  // namespace shmcoll_accel

#endif  // SHMCOLL_ACCEL_ROUNDS_H
