// Lane area reuse (lanes.h says when an area is free).
#include "transport/lanes.h"

#include <algorithm>

#include "common/status.h"
#include "wait/wait.h"

namespace shmcoll::transport {

constinit World gWorld;
constinit Lanes gLanes;

// Where ranks do not outnumber cores, a sender that finds a lane of its ring
// still in use waits until its readers have finished the call that used the
// ring half a ring ago, when that call was on the same context with the same
// readers (a run of broadcasts from one root, of gathers to one root): the
// next kAheadLanes / 2 claims then find their lanes free without reading, and
// it does not poll a reader's `consumed` line while the reader rewrites it on
// every call.  Only a call in which those readers read this rank's lane will
// do: each of them raises `consumed` past it when it finishes it, and
// finishing it needs nothing this rank has yet to write, as with two areas
// (where a sender waited for its readers to finish its call before last).
// Not with more ranks than cores: there a waiting sender sleeps, and every
// call of its reader would wake it too early.
// The same for a wide slot: the slots are taken in turn, so the one taken
// kWideSlots / 2 wide calls ago is the one half the slots away from this one.
uint64_t Lanes::ringTarget(uint32_t area, uint64_t seq, const Use& u) const {
  constexpr uint32_t kHalf = segment::kAheadLanes / 2;
  if (area < segment::kAheadArea0 || wait::gCrowd.sleepers || seq <= kHalf) return u.seq;
  const Use& h = area < segment::kWideArea0
                     ? use_[segment::aheadArea(seq - kHalf)]
                     : use_[segment::kWideArea0 + (area - segment::kWideArea0 + segment::kWideSlots / 2) %
                                                      segment::kWideSlots];
  if (h.ctx != u.ctx || h.seq <= u.seq || h.readers != u.readers) return u.seq;
  return h.seq;
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
