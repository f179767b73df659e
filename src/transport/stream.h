// The slot stream: how a rank hands its peers the blocks that neither fit a
// lane nor are pulled.
//
// A sender lays the blocks of one operation end to end in its outgoing byte
// stream (its blocks for peers me+1, me+2, ..., me-1, in that order; lanes
// tell each reader the offset of its block).  The stream flows through the
// sender's two mailbox slots (segment/layout.h) in chunks of the slot size:
// chunk k of operation seq goes to slot (k + seq) % 2 (slotOf) once every
// reader of that slot's last chunk has acknowledged it, so the sender packs
// chunk k + 1 while its readers unpack chunk k, and the one chunk of the
// team's next operation while they unpack this operation's.  A chunk's tag
// carries (seq, ctx, chunk) and the slot header the full sequence number and
// context, so a reader never takes a stale chunk.
//
// A reader that expects nothing from a sender may skip its stream
// (Pairs::skipEmpty) and never acknowledge a chunk it wrongly received, while
// the chunk's other readers do.  In an operation whose readers may skip, a
// chunk is therefore `tracked`: each reader acknowledges it by setting its
// own bit in the slot (segment::View::slotAcks) rather than by counting, and
// the slot is free once each reader of its last chunk either set its bit or
// finished that chunk's operation (Slots::released).  A count would not do:
// with one reader done without acknowledging and another that acknowledged
// and now waits for the slot's next chunk, the sender could not tell the
// acknowledgement that is missing from the one it has.
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

// The slot that carries chunk `chunk` of an operation with sequence number
// `seq`: the two slots alternate within an operation and, for operations of
// one chunk, from one operation of a team to the next, so that a sender may
// pack the next operation's chunk while its readers still unpack this one
// (with every operation starting at slot 0 it waited for their
// acknowledgement first).
inline uint32_t slotOf(uint64_t chunk, uint64_t seq) {
  return static_cast<uint32_t>((chunk + seq) % segment::kNumSlots);
}

// What this rank's slots last held, across operations.
struct Slots {
  uint32_t expected[segment::kNumSlots] = {};  // acknowledgements owed on each untracked slot's last chunk
  // Who reads each slot's last chunk (world ranks) when it is tracked (see
  // above; a chunk has at least one reader), else empty.
  struct Readers {
    uint32_t ctx = 0;
    uint64_t seq = 0;
    std::vector<uint32_t> ranks;
  };
  Readers readers[segment::kNumSlots];
  // Whether every reader of tracked slot s's last chunk set its bit or
  // finished that chunk's operation.
  bool released(uint32_t s) const;
  // Whether slot s may take a new chunk.
  bool free(uint32_t s) const {
    if (!readers[s].ranks.empty()) return released(s);  // tracked
    return world().seg.slot(world().rank, s)->acks.load(std::memory_order_acquire) >= expected[s];
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
  // part (the chunks are tracked, Slots::released).
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
  bool canProduce() const { return !done() && gSlots.free(slotOf(nextChunk_, seq_)); }
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
  const uint32_t s = slotOf(k, seq);
  return world().seg.slot(sender, s)->tag.load(std::memory_order_acquire) == chunkTag(seq, ctx, k);
}

// This rank is done with the chunk in `sender`'s slot s (the last access it
// makes to the slot).
inline void ackChunk(uint32_t sender, uint32_t s) {
  const World& w = world();
  segment::SlotHeader* h = w.seg.slot(sender, s);
  if (h->tracked) {
    w.seg.slotAcks(sender, s)[w.rank / 64].fetch_or(uint64_t{1} << (w.rank % 64), std::memory_order_acq_rel);
  } else {
    h->acks.fetch_add(1, std::memory_order_acq_rel);
  }
}

}  // namespace shmcoll::transport
