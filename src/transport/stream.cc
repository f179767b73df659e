// The slot stream's producer (stream.h says how the stream flows).
#include "transport/stream.h"

#include <algorithm>

#include "transport/lanes.h"
#include "wait/wait.h"

namespace shmcoll::transport {

constinit Slots gSlots;

bool Slots::abandoned(uint32_t s) const {
  const Readers& u = readers[s];
  if (u.ranks.empty()) return false;
  for (uint32_t r : u.ranks)
    if (!Lanes::finished(r, u.ctx, u.seq)) return false;
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
    const uint32_t s = static_cast<uint32_t>(k % segment::kNumSlots);
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
      wake_.push_back(pt.peer);
    }
    gSlots.expected[s] = broadcast_ ? static_cast<uint32_t>(readers_->size()) : static_cast<uint32_t>(wake_.size());
    Slots::Readers& who = gSlots.readers[s];
    who.ranks.clear();
    if (track_) {
      who.ctx = g.ctxId;
      who.seq = seq_;
      if (broadcast_) {
        who.ranks = *readers_;
      } else {
        for (uint32_t p : wake_) who.ranks.push_back(g.members[p]);
      }
    }
    h->acks.store(0, std::memory_order_relaxed);
    h->seq = seq_;
    h->ctx = g.ctxId;
    h->streamOffset = begin;
    h->bytes = end - begin;
    h->tag.store(chunkTag(seq_, g.ctxId, k), std::memory_order_release);
    if (broadcast_) {
      wait::wakeAll(g.members, g.rank, [&](uint32_t r) { return w.seg.ctl(r); });
    } else {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      for (uint32_t p : wake_) wait::wakeIfSleeping(w.seg.ctl(g.members[p]));
    }
    ++nextChunk_;
    moved = true;
  }
  return moved;
}

}  // namespace shmcoll::transport
