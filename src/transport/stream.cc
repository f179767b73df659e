// The slot stream's producer (stream.h says how the stream flows).
#include "transport/stream.h"

#include <algorithm>

#include "transport/lanes.h"
#include "wait/wait.h"

namespace shmcoll::transport {

constinit Slots gSlots;

bool Slots::released(uint32_t s) const {
  const World& w = world();
  const Readers& u = readers[s];
  const std::atomic<uint64_t>* bits = w.seg.slotAcks(w.rank, s);
  for (uint32_t r : u.ranks)
    if (!(bits[r / 64].load(std::memory_order_acquire) & (uint64_t{1} << (r % 64))) &&
        !Lanes::finished(r, u.ctx, u.seq))
      return false;
  return true;
}

uint64_t Outbox::add(uint32_t peer, const Block& b) {
  const uint64_t off = bytes_;
  parts_.push_back({peer, off, b.bytes(), b});
  bytes_ += b.bytes();
  return off;
}

bool Outbox::produce() {
  const World& w = world();
  const Group& g = *group_;
  bool moved = false;
  while (canProduce()) {
    const uint64_t k = nextChunk_;
    const uint32_t s = slotOf(k, seq_);
    segment::SlotHeader* h = w.seg.slot(w.rank, s);
    char* payload = w.seg.slotPayload(w.rank, s);
    const uint64_t begin = k * slot_;
    const uint64_t end = std::min<uint64_t>(begin + slot_, bytes_);
    // Pack the parts overlapping [begin, end).
    while (partIdx_ < parts_.size() && parts_[partIdx_].off + parts_[partIdx_].bytes <= begin) ++partIdx_;
    wake_.clear();
    for (size_t i = partIdx_; i < parts_.size() && parts_[i].off < end; ++i) {
      const Part& pt = parts_[i];
      const uint64_t lo = std::max(begin, pt.off), hi = std::min(end, pt.off + pt.bytes);
      if (cursorFor_ != i) {
        cursor_ = dt::Cursor(pt.block.buf, pt.block.count, pt.block.type);
        cursorFor_ = static_cast<uint32_t>(i);
      }
      cursor_.pack(lo - pt.off, payload + (lo - begin), hi - lo);
      if (wake_.empty() || wake_.back() != pt.peer) wake_.push_back(pt.peer);  // (a pair's parts are adjacent)
    }
    gSlots.expected[s] = broadcast_ ? static_cast<uint32_t>(readers_->size()) : static_cast<uint32_t>(wake_.size());
    Slots::Readers& who = gSlots.readers[s];
    who.ranks.clear();
    h->tracked = track_;
    if (track_) {
      who.ctx = g.lines;
      who.seq = seq_;
      if (broadcast_) {
        who.ranks = *readers_;
      } else {
        for (uint32_t p : wake_) who.ranks.push_back(g.members[p]);
      }
      std::atomic<uint64_t>* bits = w.seg.slotAcks(w.rank, s);
      for (uint32_t r : who.ranks) bits[r / 64].store(0, std::memory_order_relaxed);
    }
    h->acks.store(0, std::memory_order_relaxed);
    h->seq = seq_;
    h->ctx = g.lines;
    h->streamOffset = begin;
    h->bytes = end - begin;
    h->tag.store(chunkTag(seq_, g.lines, k), std::memory_order_release);
    if (broadcast_) {
      wait::wakeAll(g.members, g.rank, [&](uint32_t r) { return w.seg.ctl(r); });
    } else {
      wait::wakeFence();
      for (uint32_t p : wake_) wait::wakeIfSleeping(w.seg.ctl(g.members[p]));
    }
    ++nextChunk_;
    moved = true;
  }
  return moved;
}

}  // namespace shmcoll::transport
