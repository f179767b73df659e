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
static_assert(kCtxIds <= (1u << 30));  // (below p2p's internal and create-group context bits)

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

}  // namespace shmcoll::rt
