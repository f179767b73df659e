// The job as this process's transport sees it: the mapped segment, this
// rank's world rank and the job size.  Filled once by the runtime at
// MPI_Init (runtime/context.cc), read everywhere after.
#pragma once

#include <cstdint>

#include "segment/layout.h"

namespace shmcoll::transport {

struct World {
  segment::View seg;
  uint32_t rank = 0;  // world rank
  uint32_t size = 1;  // world size
  segment::RankCtl* self() const { return seg.ctl(rank); }
};

// Constant-initialised: no construction order to worry about, no guard on
// the hot path.
extern constinit World gWorld;
inline World& world() { return gWorld; }

}  // namespace shmcoll::transport
