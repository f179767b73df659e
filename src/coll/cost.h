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

// One round in which a rank copies `local` bytes within its domain and
// `remote` bytes across a link that `sharers` ranks use at once.
inline double round(double local, double remote, double sharers) {
  return kRoundUs + local / (kLocalGBs * 1e3) + std::max(1.0, sharers) * remote / (kLinkGBs * 1e3);
}

}  // namespace shmcoll::coll::cost
