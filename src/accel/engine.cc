// The collectives over the segment, in rounds.  Each rank owns one slot of
// CommState::slot bytes in two halves, used by rounds of alternate parity
// (sequence numbers run on across calls); round s is:
//   1. wait until every rank has read round s - 2 (my half for s is free);
//   2. write my part of this round into my half, then post the round;
//   3. wait until every rank has posted it, and copy my parts out of theirs;
//   4. mark the round read.
// So one wait over all ranks per round is usually the only one that waits:
// step 1 waits only for a rank two rounds behind.
// Round 0 also carries each rank's verdict (take or decline) and the number
// of rounds it needs; every rank reads all of them before writing anything
// into a receive buffer, so either all take the call or all pass it to the
// host, and all run the largest number of rounds.  Blocks longer than a
// round's share of the half-slot move in pieces, one per round.
//   alltoall(v): a half holds n pieces of slot/2/n bytes, piece j for rank j;
//   allgather(v), bcast: a half holds one piece of my block, for everyone.
// Per round each rank writes at most one half and reads its parts of the
// others' halves: (n-1) * block bytes in and out per rank in all, each byte
// copied twice (into the segment, out of it).
#include <sched.h>

#include <algorithm>
#include <cstring>

#include "accel.h"

namespace shmcoll_accel {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Waits until flag >= target: spins a little, then yields the core, so a
// peer without a core of its own (more ranks than cores) gets to run.  While
// it yields it also lets the host progress its own operations now and then (a
// peer may be blocked in the host waiting for a nonblocking operation this
// process started, e.g. an MPI_Ibarrier before this collective).
inline void WaitFor(const std::atomic<uint64_t>& flag, uint64_t target) {
  unsigned spins = 0;
  while (flag.load(std::memory_order_acquire) < target) {
    if (++spins < 256u) {
      CpuRelax();
      continue;
    }
    sched_yield();
    if (spins % 64u == 0) HostProgress();
  }
}

void WaitPosted(const CommState& st, uint64_t s) {
  for (int k = 1; k <= st.n; ++k) WaitFor(st.flags((st.me + k) % st.n)->post.posted, s);
}
void WaitConsumed(const CommState& st, uint64_t s) {
  for (int k = 1; k <= st.n; ++k) WaitFor(st.flags((st.me + k) % st.n)->read.consumed, s);
}

// The piece of a block of `total` bytes that round r moves: [*off, *off + len).
inline size_t Piece(size_t total, uint64_t r, size_t chunk, size_t* off) {
  *off = static_cast<size_t>(r) * chunk;
  return total > *off ? std::min(chunk, total - *off) : 0;
}

inline uint64_t RoundsFor(size_t bytes, size_t chunk) { return (bytes + chunk - 1) / chunk; }

// Runs the rounds; fill(r) writes my slot, drain(r) reads the others'.
// False when some rank declined (then every rank returns false).
template <class Fill, class Drain>
bool RunRounds(CommState& st, uint64_t local_rounds, bool ok, Fill fill, Drain drain) {
  RankFlags* mine = st.flags(st.me);
  uint64_t rounds = 1;
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t s = ++st.seq;
    const int parity = static_cast<int>(s & 1);
    if (s >= 2) WaitConsumed(st, s - 2);  // everyone has read my half of round s - 2
    if (r == 0) {
      mine->post.nrounds[parity].store(std::max<uint64_t>(local_rounds, 1), std::memory_order_relaxed);
      mine->post.ok[parity].store(ok ? 1 : 0, std::memory_order_relaxed);
    }
    if (ok) fill(r);
    mine->post.posted.store(s, std::memory_order_release);
    WaitPosted(st, s);
    if (r == 0) {
      bool all = true;
      for (int j = 0; j < st.n; ++j) {
        const PostLine& p = st.flags(j)->post;
        rounds = std::max(rounds, p.nrounds[parity].load(std::memory_order_relaxed));
        all = all && p.ok[parity].load(std::memory_order_relaxed) == 1;
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

}  // namespace

bool Alltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm) {
  if (st.nodes) return HierAlltoall(st, send, recv, ok, comm);  // several nodes
  const int n = st.n, me = st.me;
  ok = ok && PackSends(send, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const size_t chunk = st.half() / static_cast<size_t>(n) / kLine * kLine;
  uint64_t need = 1;
  if (ok)
    for (int j = 0; j < n; ++j)
      if (j != me) need = std::max(need, RoundsFor(std::max(send[j].bytes, recv[j].bytes), chunk));
  auto fill = [&](uint64_t r) {
    char* out = st.slot_of(me);
    for (int j = 0; j < n; ++j) {
      size_t off, len = Piece(send[j].bytes, r, chunk, &off);
      if (j != me && len) std::memcpy(out + chunk * static_cast<size_t>(j), send[j].ptr + off, len);
    }
  };
  auto drain = [&](uint64_t r) {
    if (r == 0 && recv[me].bytes && recv[me].ptr != send[me].ptr)
      std::memcpy(recv[me].ptr, send[me].ptr, std::min(recv[me].bytes, send[me].bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      size_t off, len = Piece(recv[j].bytes, r, chunk, &off);
      if (len) std::memcpy(recv[j].ptr + off, st.slot_of(j) + chunk * static_cast<size_t>(me), len);
    }
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  return true;
}

bool Allgather(CommState& st, Side& send, std::vector<Side>& recv, bool in_place, bool ok, MPI_Comm comm) {
  if (st.nodes) return HierAllgather(st, send, recv, ok, comm);  // several nodes
  const int n = st.n, me = st.me;
  std::vector<Side> one(1, send);
  ok = ok && PackSends(one, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const Side& src = one[0];
  const size_t chunk = st.half();
  uint64_t need = 1;
  if (ok) {
    need = std::max(need, RoundsFor(src.bytes, chunk));
    for (int j = 0; j < n; ++j) need = std::max(need, RoundsFor(recv[j].bytes, chunk));
  }
  auto fill = [&](uint64_t r) {
    size_t off, len = Piece(src.bytes, r, chunk, &off);
    if (len) std::memcpy(st.slot_of(me), src.ptr + off, len);
  };
  auto drain = [&](uint64_t r) {
    // In place, my block already is where it belongs (and packed, it is
    // unpacked onto itself below): copy it only from a separate send buffer.
    if (r == 0 && recv[me].bytes && recv[me].ptr != src.ptr && !(in_place && !recv[me].packed))
      std::memcpy(recv[me].ptr, src.ptr, std::min(recv[me].bytes, src.bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      size_t off, len = Piece(recv[j].bytes, r, chunk, &off);
      if (len) std::memcpy(recv[j].ptr + off, st.slot_of(j), len);
    }
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  return true;
}

bool Bcast(CommState& st, Side& side, int root, bool ok, MPI_Comm comm) {
  if (st.nodes) return HierBcast(st, side, root, ok);  // several nodes
  std::vector<Side> one(1, side);
  const bool am_root = st.me == root;
  ok = ok && (am_root ? PackSends(one, st.stmp, comm) : LayoutRecvs(one, st.rtmp));
  const Side& s = one[0];
  const size_t chunk = st.half();
  const uint64_t need = ok ? std::max<uint64_t>(1, RoundsFor(s.bytes, chunk)) : 1;
  auto fill = [&](uint64_t r) {
    size_t off, len = Piece(s.bytes, r, chunk, &off);
    if (am_root && len) std::memcpy(st.slot_of(root), s.ptr + off, len);
  };
  auto drain = [&](uint64_t r) {
    size_t off, len = Piece(s.bytes, r, chunk, &off);
    if (!am_root && len) std::memcpy(s.ptr + off, st.slot_of(root), len);
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  if (!am_root) UnpackRecvs(one, st.rtmp, comm);
  return true;
}

bool Barrier(CommState& st) {
  if (st.nodes) return HierBarrier(st);  // several nodes
  return RunRounds(
      st, 1, true, [](uint64_t) {}, [](uint64_t) {});
}

bool Rounds(CommState& st, uint64_t rounds, bool ok, const std::function<void(uint64_t)>& fill,
            const std::function<void(uint64_t)>& drain) {
  return RunRounds(st, rounds, ok, fill, drain);
}

}  // namespace shmcoll_accel
