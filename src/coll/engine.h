// State shared by every collective algorithm of this process, and the team
// (the engine's view of a communicator).
#pragma once

#include <cstdint>
#include <vector>

#include "segment/layout.h"

namespace shmcoll::coll {

// What last used one of this rank's two lane areas: the owner may rewrite it
// once every reader has finished operation `seq` on context `ctx`.
struct LaneUse {
  uint32_t ctx = 0;
  uint64_t seq = 0;
  std::vector<uint32_t> readers;  // world ranks
};

struct Engine {
  segment::View seg;
  uint32_t rank = 0;  // world rank
  uint32_t size = 1;  // world size
  bool cma = false;   // process_vm_readv works between every pair of ranks
  // Every rank can map every other rank's shared malloc heap
  // (os/shared_heap.h): a buffer in it is read with a plain copy.
  bool heapShared = false;
  // Read-only mappings of the peers' heaps, by world rank: the first `len`
  // bytes of rank r's heap at `map` (sized to the job on first use).
  struct PeerHeap {
    const char* map = nullptr;
    uint64_t len = 0;
  };
  std::vector<PeerHeap> peerHeap;
  uint64_t highSeq = 0;  // highest sequence number this rank used on any context
  LaneUse laneUse[2];
  uint32_t slotExpected[segment::kNumSlots] = {};  // acks owed on each slot's last chunk
  // Who reads each slot's last chunk (world ranks), when it belongs to an
  // exchange that skips empty pairs (ExchangeArgs::skipEmpty), else empty: a
  // receiver whose counts wrongly say it gets nothing never acknowledges, so
  // the slot is also free once all of them have finished operation `seq` on
  // context `ctx`.
  struct SlotReaders {
    uint32_t ctx = 0;
    uint64_t seq = 0;
    std::vector<uint32_t> readers;
  };
  SlotReaders slotReaders[segment::kNumSlots];
  // done[ctx][r]: an operation on `ctx` that world rank r is known to have
  // finished (every operation up to it, too).  Learnt for free from the lane
  // tags we read (a rank announces operation s only after finishing s - 1),
  // else from r's `consumed` line.  Sized to the world on a context's first use.
  std::vector<uint64_t> done[segment::kMaxContexts];
  segment::RankCtl* self() const { return seg.ctl(rank); }
  uint64_t& doneBy(uint32_t ctx, uint32_t r) {
    std::vector<uint64_t>& d = done[ctx];
    if (d.empty()) [[unlikely]]
      sizeDone(d);
    return d[r];
  }
  [[gnu::noinline, gnu::cold]] void sizeDone(std::vector<uint64_t>& d) const { d.assign(size, 0); }
};

// The process's engine: constant-initialised (no construction order to
// worry about, no guard on the hot path).
extern Engine gEngine;
inline Engine& engine() { return gEngine; }

// A communicator as the engine sees it: members in rank order (world ranks),
// this process's rank among them, the context id whose lines in every
// member's area it owns, and its operation sequence number.  All members
// advance `seq` in lockstep, one step per collective, so a (ctx, seq) pair
// names one operation everywhere.  Sequence numbers on a context only grow,
// across communicators that reuse the context id, so waits compare with >=.
struct Team {
  std::vector<uint32_t> members;
  uint32_t rank = 0;
  uint32_t ctxId = 0;
  uint64_t seq = 0;
  uint32_t nbcSeq = 0;  // nonblocking collectives started on it (p2p/nbc.h)
  uint32_t size() const { return static_cast<uint32_t>(members.size()); }
  uint64_t next() {
    ++seq;
    if (seq > engine().highSeq) engine().highSeq = seq;
    return seq;
  }
};

}  // namespace shmcoll::coll
