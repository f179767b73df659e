// Communicator context ids and the engine's line sets: how many there are,
// how they are split between blocking creations and MPI_Comm_idup, and the
// record of those this rank's communicators hold.
//
// A context id is what a communicator's messages match on (user messages on
// the id, its schedules' on p2p::kInternalCtx | id); it costs nothing in the
// segment, so there are many.  A line set is a communicator's lines in every
// member's area (segment::CtxLines: its `consumed` and barrier lines), which
// its blocking collectives run on; the segment holds segment::kMaxContexts
// of them per rank.  A new communicator takes the lowest line set free on
// every member if there is one, else none (transport::Group::kNoLines): its
// blocking collectives then run as the nonblocking schedules, waited for
// (coll/dispatch.cc), slower but with no limit.
//
// Blocking creations take ids and line sets below kAsyncCtxFirst and
// kAsyncLinesFirst, MPI_Comm_idup the kAsyncIds ids and 64 line sets from
// there (runtime/idup.cc says why the ranges are apart).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "segment/layout.h"
#include "transport/group.h"

namespace shmcoll::rt {

constexpr uint32_t kCtxIds = 32768;
constexpr uint32_t kAsyncIds = 1024;
constexpr uint32_t kAsyncCtxFirst = kCtxIds - kAsyncIds;
constexpr size_t kCtxWords = kCtxIds / 64;
constexpr uint32_t kAsyncLinesFirst = segment::kMaxContexts - 64;
constexpr size_t kLineWords = segment::kMaxContexts / 64;
constexpr uint32_t kNoLines = transport::Group::kNoLines;
static_assert(kAsyncCtxFirst % 64 == 0 && kAsyncLinesFirst % 64 == 0);
static_assert(kCtxIds <= (1u << 29));  // (below p2p's internal and create-group context bits)

// A set of ids below N, as bits.
template <uint32_t N>
struct IdSet {
  uint64_t w[N / 64] = {};
  bool test(uint32_t i) const { return (w[i / 64] >> (i % 64)) & 1; }
  void set(uint32_t i) { w[i / 64] |= 1ull << (i % 64); }
  void reset(uint32_t i) { w[i / 64] &= ~(1ull << (i % 64)); }
  size_t count() const {
    size_t n = 0;
    for (uint64_t x : w) n += static_cast<size_t>(__builtin_popcountll(x));
    return n;
  }
  // out[] (N / 64 words): the ids in [first, last) not in the set.
  void freeIn(uint32_t first, uint32_t last, uint64_t* out) const {
    for (uint32_t k = 0; k < N / 64; ++k) out[k] = k >= first / 64 && k < last / 64 ? ~w[k] : 0;
  }
};

// The lowest id whose bit is set in w[0, n), or UINT32_MAX.
inline uint32_t lowestSet(const uint64_t* w, size_t n) {
  for (size_t k = 0; k < n; ++k)
    if (w[k]) return static_cast<uint32_t>(k * 64 + __builtin_ctzll(w[k]));
  return UINT32_MAX;
}

// What a member offers when a communicator is made: the ids and line sets
// free at it (in one range).
struct FreeIds {
  uint64_t ctx[kCtxWords];
  uint64_t lines[kLineWords];
  void intersect(const FreeIds& o) {
    for (size_t k = 0; k < kCtxWords; ++k) ctx[k] &= o.ctx[k];
    for (size_t k = 0; k < kLineWords; ++k) lines[k] &= o.lines[k];
  }
};

// A member's offer of context ids in a few bytes, for the agreement of a
// blocking creation (runtime/comm.cc): the lowest word of its free set that
// holds a free id, and kWindowWords words from there.  When every member's
// window covers the words from the highest `first` on (no id below it is free
// on that member), the lowest id free on all of them lies there or after all
// the windows end; decide() finds it in the first case, and says that the
// windows cannot tell in the second, where the members exchange their whole
// free sets (kCtxWords words each) instead.  Members create and free their
// communicators in much the same order, so their windows nearly always agree:
// 72 bytes a member instead of 4 KiB, which at 1024 ranks is what the
// allgather of every creation moves per rank, 72 KiB against 4 MiB.
constexpr uint32_t kWindowWords = 8;
struct FreeWindow {
  uint32_t first = kCtxWords;  // word index; kCtxWords when no id is free
  uint32_t pad = 0;
  uint64_t w[kWindowWords] = {};

  FreeWindow() = default;
  explicit FreeWindow(const uint64_t* ctx) {
    for (uint32_t k = 0; k < kCtxWords; ++k)
      if (ctx[k]) {
        first = k;
        break;
      }
    for (uint32_t k = 0; k < kWindowWords && first + k < kCtxWords; ++k) w[k] = ctx[first + k];
  }
  // Of n windows win(i): true when they decide, with *id the lowest id free in
  // all of them or UINT32_MAX when some member has none free; false when only
  // the whole sets can tell.
  template <class Win>
  static bool decide(size_t n, Win&& win, uint32_t* id) {
    uint32_t from = 0, to = kCtxWords;
    for (size_t i = 0; i < n; ++i) {
      const FreeWindow& f = win(i);
      if (f.first >= kCtxWords) {
        *id = UINT32_MAX;
        return true;
      }
      from = std::max(from, f.first);
      to = std::min<uint32_t>(to, f.first + kWindowWords);
    }
    for (uint32_t k = from; k < to; ++k) {
      uint64_t all = ~0ull;
      for (size_t i = 0; i < n; ++i) all &= win(i).w[k - win(i).first];
      if (all) {
        *id = k * 64 + static_cast<uint32_t>(__builtin_ctzll(all));
        return true;
      }
    }
    return false;
  }
};
static_assert(sizeof(FreeWindow) == 8 + 8 * kWindowWords);

// The ids one blocking creation offers, held in `held` (Context::ctxHeld)
// until the creation has installed its communicator or given up: a creation
// that another thread of the rank starts meanwhile (MPI_THREAD_MULTIPLE)
// does not offer them, so two creations never pick one id at a rank.  When a
// creation finds no common id while some member had ids held this way, the
// shortage may pass: every member sees so alike and they agree again.
class IdHold {
 public:
  explicit IdHold(IdSet<kCtxIds>& held) : held_(held) {}
  ~IdHold() {
    for (size_t k = 0; k < kCtxWords; ++k) held_.w[k] &= ~mine_[k];
  }
  IdHold(const IdHold&) = delete;
  IdHold& operator=(const IdHold&) = delete;
  // Holds the ids set in words[0, n), which stand for words first.. of the set.
  void hold(const uint64_t* words, size_t first, size_t n) {
    for (size_t k = 0; k < n && first + k < kCtxWords; ++k) {
      const uint64_t add = words[k] & ~held_.w[first + k];
      mine_[first + k] |= add;
      held_.w[first + k] |= add;
    }
  }
  // Adds to a free set (kCtxWords words) the ids this hold holds and `used` does not have.
  void addMine(uint64_t* free, const IdSet<kCtxIds>& used) const {
    for (size_t k = 0; k < kCtxWords; ++k) free[k] |= mine_[k] & ~used.w[k];
  }

 private:
  IdSet<kCtxIds>& held_;
  uint64_t mine_[kCtxWords] = {};
};

}  // namespace shmcoll::rt
