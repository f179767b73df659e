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
#include <set>

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

// Whose turn it is to offer context ids at this rank, when several threads
// of it create communicators at once (MPI_THREAD_MULTIPLE).  A blocking
// creation agrees in attempts (runtime/comm.cc, runtime/comm_create.cc); in
// each, only the creation that holds the rank's turn offers its free ids, so
// two creations never pick one id at a rank, and a creation that does not
// hold it offers none and says so (`contended`), whereupon every member sees
// the attempt fail alike and all try again after backOff.  The turn goes to
// the creation with the lowest key among those registered at the rank
// (creationKey: the same on every member), and only once the rank's last
// holder has ended its attempt.
//
// A creation registers only after a first attempt without the turn, which
// every member must have reached: a creation that asked for the turn (or
// barred others from it) while some member still worked on an earlier
// creation could wait, holding it, for a member whose earlier creation
// needs a turn that another creation holds while it waits in turn: a cycle.
// Registered creations wait only for members that are all there and try
// again at once, so each holder ends its attempt soon, the lowest key
// registered anywhere gets the turn at each of its members within an attempt
// or two, and the job always moves on.  (Before, a creation kept the ids it
// had offered at each rank and tried again after a random time: four threads
// of four ranks on 2 cores, creating communicators with MPI_Comm_dup,
// MPI_Comm_split and MPI_Comm_create_group at once, retried for minutes in
// about one run in 300.)
static_assert(kCtxIds <= (1u << 16));  // (room in the keys)
struct IdTurns {
  std::multiset<uint64_t> running;  // the keys of the blocking creations running at this rank
  bool held = false;
};

// The key of a creation on a parent with context id `parentCtx`: `sub` tells
// apart the calls that may run on one parent at once (MPI_Comm_create_group's
// tag + 1; 0 for the collective creations, which the standard has threads
// call on a communicator one at a time).
inline uint64_t creationKey(uint32_t parentCtx, uint32_t sub) { return (uint64_t{parentCtx} << 32) | sub; }
// MPI_Intercomm_create's, from both groups' local communicators (the same on
// both sides), after every other creation's.
inline uint64_t intercommKey(uint32_t ctxA, uint32_t ctxB) {
  return (uint64_t{1} << 63) | (uint64_t{std::min(ctxA, ctxB)} << 40) | (uint64_t{std::max(ctxA, ctxB)} << 8);
}

// One creation at this rank, from its first attempt to its end.
class IdTurn {
 public:
  IdTurn(IdTurns& t, uint64_t key) : t_(t), key_(key) { it_ = t_.running.insert(key); }
  ~IdTurn() {
    give();
    t_.running.erase(it_);
  }
  IdTurn(const IdTurn&) = delete;
  IdTurn& operator=(const IdTurn&) = delete;
  // At the start of an attempt: whether this creation holds the turn (offers ids).
  bool take() {
    if (!mine_ && !t_.held && *t_.running.begin() == key_) mine_ = t_.held = true;
    return mine_;
  }
  // At the end of an attempt, once the creation installed its communicator
  // or saw the attempt fail.
  void give() {
    if (mine_) mine_ = t_.held = false;
  }

 private:
  IdTurns& t_;
  uint64_t key_;
  std::multiset<uint64_t>::iterator it_;
  bool mine_ = false;
};

}  // namespace shmcoll::rt
