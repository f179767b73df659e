// Lane area reuse (lanes.h says when an area is free).
#include "transport/lanes.h"

#include <algorithm>

#include "common/status.h"
#include "wait/wait.h"

namespace shmcoll::transport {

constinit World gWorld;
constinit Lanes gLanes;

// Where ranks do not outnumber cores, a sender that finds a lane of its ring
// still in use waits until its readers are half a ring behind on that context
// rather than a whole one: the next kAheadLanes / 2 claims then find their
// lanes free without reading, and it does not poll a reader's `consumed` line
// while the reader rewrites it on every call.  Safe: with two areas a sender
// waited for its readers to finish operation seq - 2, later than seq -
// kAheadLanes / 2.  Not with more ranks than cores: there a waiting sender
// sleeps, and every call of its reader would wake it too early.
uint64_t Lanes::ringTarget(uint32_t area, uint32_t ctx, uint64_t seq, const Use& u) {
  constexpr uint64_t kHalf = segment::kAheadLanes / 2;
  if (area < segment::kAheadArea0 || u.ctx != ctx || seq < u.seq + 2 * kHalf || wait::gCrowd.sleepers) return u.seq;
  return seq - kHalf;
}

int Lanes::awaitFinished(uint32_t r, uint32_t ctx, uint64_t seq) {
  uint64_t& d = doneBy(ctx, r);
  if (d >= seq) return 0;
  segment::Line64& c = world().seg.ctx(r, ctx)->consumed;
  // (what it read may be well past `seq`: a sender running ahead of its
  // reader, in the broadcast ring, then skips the next reads)
  uint64_t seen = 0;
  SHMCOLL_CHECK(wait::waitUntil(world().self(), [&] { return (seen = c.v.load(std::memory_order_acquire)) >= seq; }));
  d = std::max(d, seen);
  return 0;
}

}  // namespace shmcoll::transport
