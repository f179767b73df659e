// Lane area reuse (lanes.h says when an area is free).
#include "transport/lanes.h"

#include <algorithm>

#include "common/status.h"
#include "wait/wait.h"

namespace shmcoll::transport {

constinit World gWorld;
constinit Lanes gLanes;

int Lanes::awaitFinished(uint32_t r, uint32_t ctx, uint64_t seq) {
  uint64_t& d = doneBy(ctx, r);
  if (d >= seq) return 0;
  segment::Line64& c = world().seg.ctx(r, ctx)->consumed;
  SHMCOLL_CHECK(wait::waitUntil(world().self(), [&] { return c.v.load(std::memory_order_acquire) >= seq; }));
  d = std::max(d, seq);
  return 0;
}

}  // namespace shmcoll::transport
