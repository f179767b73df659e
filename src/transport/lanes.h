// This rank's two lane areas, and what it knows of its peers' progress.
//
// Every rank owns two lane areas (segment/layout.h), used by the parity of an
// operation's sequence number.  An area is rewritten only when every reader
// of its previous use has finished that operation.  A rank announces
// operation s on a context only after finishing s - 1 there, so every lane tag
// we read tells us that its sender is done with every earlier operation on
// that context (noteEntered): in a run of collectives on one communicator in
// which every rank hears from every other, reading the lanes of operation
// s - 1 already proves that the area last used by s - 2 is free, and the
// check costs no memory traffic; so does a barrier passed since (every
// member entered it: coll/barrier_dissemination.cc).  Otherwise (a rooted
// operation, another communicator in between) claim() reads the readers' `consumed` lines, and
// waits if needed.  release() raises this rank's `consumed` line: it has read
// everything addressed to it in that operation.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "segment/layout.h"
#include "transport/lane.h"
#include "transport/world.h"

namespace shmcoll::transport {

class Lanes {
 public:
  // What last used one of this rank's lane areas: it may be rewritten once
  // every reader (world ranks) has finished operation `seq` on context `ctx`.
  struct Use {
    uint32_t ctx = 0;
    uint64_t seq = 0;
    std::vector<uint32_t> readers;
  };

  // Waits until lane area `area` (0 or 1, a lane of the broadcast ring:
  // segment::aheadArea, or a wide slot: kWideArea0 + i) is free, then records its next use
  // (operation `seq` on `ctx`); the caller fills readers() with who reads it.
  // Returns 0 or an error class from the wait.
  int claim(uint32_t area, uint32_t ctx, uint64_t seq) {
    Use& u = use_[area];
    uint64_t target = 0;
    const std::vector<uint64_t>& done = doneOn(u.ctx);
    for (uint32_t r : u.readers)
      if (done[r] < u.seq) [[unlikely]] {
        if (!target) target = ringTarget(area, seq, u);
        if (int rc = awaitFinished(r, u.ctx, target)) return rc;
      }
    u.ctx = ctx;
    u.seq = seq;
    u.readers.clear();
    return 0;
  }
  std::vector<uint32_t>& readers(uint32_t area) { return use_[area].readers; }
  // What to wait for when area `area`, last used as `u`, is not free yet for
  // operation `seq` (lanes.cc): u.seq, or a later use of the broadcast ring.
  uint64_t ringTarget(uint32_t area, uint64_t seq, const Use& u) const;
  const Use& use(uint32_t area) const { return use_[area]; }

  // The last operation on `ctx` that each world rank is known to have
  // finished (indexed by world rank), and that of world rank r.
  std::vector<uint64_t>& doneOn(uint32_t ctx) {
    std::vector<uint64_t>& d = done_[ctx];
    if (d.empty()) [[unlikely]]
      sizeDone(d);
    return d;
  }
  uint64_t& doneBy(uint32_t ctx, uint32_t r) { return doneOn(ctx)[r]; }
  // World rank r announced operation `seq` on `ctx`: it finished every earlier one.
  void noteEntered(uint32_t ctx, uint32_t r, uint64_t seq) { noteEntered(doneBy(ctx, r), seq); }
  // The same on its entry of doneOn(ctx), where the caller holds it.
  static void noteEntered(uint64_t& done, uint64_t seq) {
    if (done + 1 < seq) done = seq - 1;
  }
  // Whether world rank r has finished operation `seq` on `ctx` (its `consumed` line).
  static bool finished(uint32_t r, uint32_t ctx, uint64_t seq) {
    return world().seg.ctx(r, ctx)->consumed.v.load(std::memory_order_acquire) >= seq;
  }
  // Waits until world rank r has finished operation `seq` on `ctx`.
  int awaitFinished(uint32_t r, uint32_t ctx, uint64_t seq);

  // The wide slot the next call that needs one takes (segment::kWideSlots, in turn).
  uint32_t nextWide = 0;

  // The highest sequence number this rank used on any context (new
  // communicators start above it, so sequence numbers on a context only grow).
  uint64_t highSeq = 0;

 private:
  [[gnu::noinline, gnu::cold]] void sizeDone(std::vector<uint64_t>& d) const { d.assign(world().size, 0); }
  Use use_[segment::kWideArea0 + segment::kWideSlots];
  std::vector<uint64_t> done_[segment::kMaxContexts];
};

extern constinit Lanes gLanes;
inline Lanes& lanes() { return gLanes; }

// This rank has read everything addressed to it in operation `seq` on `ctx`:
// its senders may reuse what they published for it.  Call wakeReaders or
// wait::wakeAll after it.
inline void release(uint32_t ctx, uint64_t seq) {
  World& w = world();
  w.seg.ctx(w.rank, ctx)->consumed.v.store(seq, std::memory_order_release);
}

// Where the payload of an inline lane that world rank `sender` wrote is, in
// the lane format: the lane itself, or the sender's wide slot it names
// (segment::kLaneWide).
inline const char* inlineSource(const segment::LaneHeader* lane, uint32_t sender) {
  if (!(lane->bytes & segment::kLaneWide)) [[likely]]
    return reinterpret_cast<const char*>(lane);
  return world().seg.laneArea(sender, segment::kWideArea0) + laneWord(lane);
}

// This rank's lane area `area` and one lane of it.
inline char* laneArea(uint32_t rank, uint32_t area) { return world().seg.laneArea(rank, area); }
inline const segment::LaneHeader* peerLane(uint32_t worldRank, uint32_t area, uint64_t offset) {
  return reinterpret_cast<const segment::LaneHeader*>(world().seg.laneArea(worldRank, area) + offset);
}

}  // namespace shmcoll::transport
