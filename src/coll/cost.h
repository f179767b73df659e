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
// control line): kPeerUs each, the misses partly overlapped.  A round of a
// schedule over point-to-point messages costs kRoundUs plus kMessageUs (a
// cell to fill, link and match) besides its bytes.
constexpr double kPeerUs = 0.1;
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

// The rounds of ceil(log2 n) messages each way (bruck.cc), blocks aside.
inline double messageRounds(uint32_t n) { return log2Ceil(n) * (kRoundUs + kMessageUs); }
// Whether they cost less than one round over every peer's lines: on large
// teams (from about 200 ranks).
inline bool fewRoundsBeatPeers(uint32_t n) { return n > 1 && messageRounds(n) < kRoundUs + (n - 1.0) * kPeerUs; }

}  // namespace shmcoll::coll::cost
