// The slot stream: how a rank hands its peers the blocks that neither fit a
// lane nor are pulled.
//
// A sender lays the blocks of one operation end to end in its outgoing byte
// stream (its blocks for peers me+1, me+2, ..., me-1, in that order; lanes
// tell each reader the offset of its block).  The stream flows through the
// sender's two mailbox slots (segment/layout.h) in chunks of the slot size:
// chunk k goes to slot k % 2 once every reader of chunk k - 2 has
// acknowledged it, so the sender packs chunk k + 1 while its readers unpack
// chunk k.  A chunk's tag carries (seq, ctx, chunk) and the slot header the
// full sequence number and context, so a reader never takes a stale chunk.
//
// A reader that expects nothing from a sender may skip its stream
// (Pairs::skipEmpty) and never acknowledge a chunk it wrongly received: a
// slot is then also free once every reader of its last chunk has finished
// that chunk's operation (Slots::abandoned).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "dt/datatype.h"
#include "segment/layout.h"
#include "transport/block.h"
#include "transport/group.h"
#include "transport/world.h"

namespace shmcoll::transport {

// The tag of chunk `chunk` of operation `seq` on `ctx` (never 0).
inline uint64_t chunkTag(uint64_t seq, uint32_t ctx, uint64_t chunk) {
  return (seq << 32) ^ (uint64_t{ctx} << 24) ^ (chunk & 0xffffff) ^ (1ull << 63);
}

// What this rank's slots last held, across operations.
struct Slots {
  uint32_t expected[segment::kNumSlots] = {};  // acknowledgements owed on each slot's last chunk
  // Who reads each slot's last chunk (world ranks), when it belongs to an
  // operation whose readers may skip empty pairs, else empty; see abandoned().
  struct Readers {
    uint32_t ctx = 0;
    uint64_t seq = 0;
    std::vector<uint32_t> ranks;
  };
  Readers readers[segment::kNumSlots];
  // Whether every reader of slot s's last chunk has finished that chunk's
  // operation, which in a correct program means each acknowledged it.
  bool abandoned(uint32_t s) const;
  // Whether slot s may take a new chunk.
  bool free(uint32_t s) const {
    return world().seg.slot(world().rank, s)->acks.load(std::memory_order_acquire) >= expected[s] || abandoned(s);
  }
};
extern constinit Slots gSlots;

// The outgoing stream of one operation.
class Outbox {
 public:
  // Starts an empty stream for operation `seq` on `group` in slots of `slotBytes`.
  void begin(const Group& group, uint64_t seq, uint64_t slotBytes) {
    group_ = &group;
    seq_ = seq;
    slot_ = slotBytes;
    parts_.clear();
    bytes_ = chunks_ = nextChunk_ = 0;
  }
  // Appends `b` for team rank `peer`; returns its offset in the stream.
  uint64_t add(uint32_t peer, const Block& b);
  // No more parts.  `broadcast`: every part is read by all `readers` (world
  // ranks) rather than by its peer; `trackReaders`: readers may skip their
  // part (Slots::abandoned).
  void seal(bool broadcast, const std::vector<uint32_t>* readers, bool trackReaders) {
    broadcast_ = broadcast;
    readers_ = readers;
    track_ = trackReaders;
    chunks_ = (bytes_ + slot_ - 1) / slot_;
    nextChunk_ = 0;
    partIdx_ = 0;
    cursorFor_ = UINT32_MAX;
  }
  uint64_t bytes() const { return bytes_; }
  bool done() const { return nextChunk_ >= chunks_; }
  bool canProduce() const { return !done() && gSlots.free(static_cast<uint32_t>(nextChunk_ % segment::kNumSlots)); }
  // Packs as many chunks as free slots allow and wakes their readers; true
  // when it packed any.
  bool produce();

 private:
  struct Part {
    uint32_t peer;  // team rank
    uint64_t off, bytes;
    Block block;
  };
  const Group* group_ = nullptr;
  uint64_t seq_ = 0, slot_ = 0;
  std::vector<Part> parts_;
  std::vector<uint32_t> wake_;  // scratch: the readers of the chunk being packed
  uint64_t bytes_ = 0, chunks_ = 0, nextChunk_ = 0;
  size_t partIdx_ = 0;
  uint32_t cursorFor_ = UINT32_MAX;
  dt::Cursor cursor_;
  bool broadcast_ = false, track_ = false;
  const std::vector<uint32_t>* readers_ = nullptr;
};

// Reading a sender's chunk k of operation (seq, ctx): whether it is in the
// slot, and the acknowledgement once it was unpacked.
inline bool chunkReady(uint32_t sender, uint64_t k, uint64_t seq, uint32_t ctx) {
  const uint32_t s = static_cast<uint32_t>(k % segment::kNumSlots);
  return world().seg.slot(sender, s)->tag.load(std::memory_order_acquire) == chunkTag(seq, ctx, k);
}

}  // namespace shmcoll::transport
