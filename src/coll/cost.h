// The cost model the registry's estimates share (registry.h): microseconds
// for one rank's part of a call, good enough to order the algorithms that
// can run it.
//
// A round costs kRoundUs plus its bytes over the bandwidth they travel at: a
// rank copies within its NUMA domain at kLocalGBs; bytes pulled from another
// domain share that domain pair's link at kLinkGBs with every other rank of
// the domain pulling at the same time.  Rough figures of two-socket x86
// servers: this 2-core development machine has one domain and cannot
// measure them (docs/ARCHITECTURE.md says how to calibrate them).
#pragma once

#include <algorithm>
#include <cstdint>

namespace shmcoll::coll::cost {

constexpr double kRoundUs = 2.0;
constexpr double kLocalGBs = 8.0;
constexpr double kLinkGBs = 20.0;
// A one-round exchange reads a line in every peer's area (its lane and its
// control line): kPeerUs each.  A point-to-point message (matched, copied
// through a cell or pulled) costs kMessageUs: what a round of a schedule
// over messages costs besides its bytes.
constexpr double kPeerUs = 0.05;
constexpr double kMessageUs = 1.0;

// One round in which a rank copies `local` bytes within its domain and
// `remote` bytes across a link that `sharers` ranks use at once.
inline double round(double local, double remote, double sharers) {
  return kRoundUs + local / (kLocalGBs * 1e3) + std::max(1.0, sharers) * remote / (kLinkGBs * 1e3);
}

inline uint32_t log2Ceil(uint32_t n) {
  uint32_t k = 0;
  while ((uint32_t{1} << k) < n) ++k;
  return k;
}

// Whether ceil(log2 n) rounds of messages (bruck.cc) cost less than one
// round over every peer's lines, blocks aside: on large teams.
inline bool fewRoundsBeatPeers(uint32_t n) {
  return n > 1 && log2Ceil(n) * kMessageUs < kRoundUs + (n - 1.0) * kPeerUs;
}

}  // namespace shmcoll::coll::cost
