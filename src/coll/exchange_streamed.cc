// Algorithm: the exchange -- lanes with inline payloads for small blocks, a
// stream through the sender's mailbox slots for the rest, and single-copy
// (CMA) pulls for large contiguous blocks.
//
// How it works.  For every pair (i, j) the sender i tells j what it sends
// through a lane: a piece of one of i's two lane areas (segment/layout.h),
// chosen by the parity of the operation's sequence number.  Lane j of the
// area belongs to reader j; an operation that sends one block to everybody
// (the allgather family, bcast) uses a single lane that all readers read.
// The lane's first line holds the tag (sequence number and context), the byte
// count and how the bytes travel:
//   - inline: a block that fits the lane (laneBytes(n) - 16 bytes, capped by
//     SHMCOLL_INLINE_MAX) is packed right behind the header.  A small block
//     costs the reader one cache-line transfer: tag, count and payload arrive
//     together, and nothing is acknowledged.
//   - single copy: a block that is contiguous in the sender and at least
//     `cmaMin` bytes -- or any contiguous block in MPI_Alloc_mem memory in
//     the segment -- is announced by its address; the reader pulls it with
//     process_vm_readv straight into its receive layout (a plain copy when
//     the buffer is MPI_Alloc_mem memory in the segment), and the sender
//     waits, before returning, until those readers say they are done.
//   - stream: everything else goes into the sender's outgoing byte stream
//     (its blocks for peers me+1, me+2, ..., me-1 one after another) at the
//     offset the lane gives.  The stream flows through the sender's two
//     mailbox slots in chunks of the slot size: chunk k goes to slot k % 2
//     once every reader of chunk k - 2 has acknowledged it, so the sender packs
//     chunk k+1 while receivers unpack chunk k.
// A receiver keeps a cursor per sender and takes whatever is ready from any
// sender, starting each sweep at me-1, me-2, ... (the order senders stream
// in, so pairs at one distance tend to move together).  Because a receiver
// never blocks on one sender while a chunk from another is waiting for its
// acknowledgement, every published chunk is eventually consumed and the
// exchange cannot deadlock, whatever the block sizes; one heavy pair does not
// hold back the others.  A rank writes its lanes first, then copies its own
// block (so peers start reading at once), then interleaves producing and
// consuming in one loop, sleeping (channel/wait.h) only when neither can move.
// At the end it raises its `consumed` line for the context.
//
// Reuse of a lane area.  A lane area is rewritten only when every reader of
// its previous use has finished that operation.  A rank announces operation
// s on a context only after finishing s - 1 there, so every lane tag we read
// tells us that its sender is done with all earlier operations on that
// context (Engine::done).  In a run of collectives on one communicator in
// which every rank hears from every other (alltoall, allgather, allreduce...),
// reading the lanes of operation s - 1 already proves that the area last
// used by s - 2 is free: the check costs no memory traffic.  Otherwise (a
// rooted operation, another communicator in between) the sender reads the
// readers' `consumed` lines, and waits if needed.  A slot is rewritten only
// after all readers of its last chunk acknowledged it; chunk tags carry
// (seq, ctx, chunk) and are checked against the full sequence number, so a
// reader never takes a stale chunk.
//
// A receiver compares the sender's byte count with its own; a difference
// gives MPI_ERR_TRUNCATE (sender sends more) or MPI_ERR_COUNT, only the
// common part is delivered, no byte is written outside the receive blocks,
// and every rank still returns.
//
// Empty pairs (ExchangeArgs::skipEmpty).  A receiver does not wait for a
// lane it expects no bytes from; senders still write every lane.  The
// skipped lanes are looked at only while the receiver waits anyway
// (sortSkipped): one that carries bytes after all (an erroneous program) is
// consumed like any other, without writing, so its sender is not held up.  A
// receiver that finished before such a lane appeared never acknowledges the
// stream chunks in it, so a slot is also free once every reader of its last
// chunk has finished that operation (slotAbandoned).
//
// Cost per rank for blocks of b bytes to each of n-1 peers: inline, n-1 lane
// writes and n-1 lane reads of ceil((b + 16) / 64) lines each, two copies per
// byte and no waiting for acknowledgements; streamed, two copies per byte and
// ceil(B / slot) chunk hand-offs of about three line transfers for a stream
// of B bytes; single copy, one copy per byte plus a system call per block.
// Memory: fixed per rank (two lane areas, two slots), any message size.
//
// Chosen as "hybrid" by default; "segment" turns single copy off,
// "single_copy" uses it for every contiguous block however small (see
// registry.cc).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <mpi.h>

#include "channel/wait.h"
#include "coll/coll.h"
#include "coll/exchange_inline.h"
#include "coll/streamed.h"
#include "common/status.h"
#include "os/shared_heap.h"
#include "copy/copy.h"

namespace shmcoll::coll {

namespace {

using segment::LaneHeader;

uint64_t makeTag(uint64_t seq, uint32_t ctx, uint64_t chunk) {
  return (seq << 32) ^ (uint64_t{ctx} << 24) ^ (chunk & 0xffffff) ^ (1ull << 63);
}

// One part of this rank's outgoing stream: the block for `peer`.
struct Part {
  uint32_t peer;
  uint64_t off;
  uint64_t bytes;
};

enum Stage { kWaitLane, kPull };

// Progress through one sender's bytes for us.
struct From {
  uint32_t teamRank;
  Stage stage;
  const LaneHeader* lane;
  uint64_t chunk, begin, end, use;
  dt::Cursor cursor;
};

// Per-process scratch reused by every exchange, so a small collective does
// not allocate.
struct Scratch {
  std::vector<Part> parts;
  std::vector<uint32_t> firstWake;
  std::vector<uint32_t> cmaReaders;  // team ranks that pull from our user buffer
  std::vector<From> from;
  // Peers we expect nothing from (ExchangeArgs::skipEmpty), whose lanes are
  // looked at only while we wait anyway: one that carries bytes after all is
  // moved to `from`, so its sender is not held up by an erroneous receiver.
  std::vector<From> skipped;
};
Scratch& scratch() {
  static Scratch s;
  return s;
}

class Run {
 public:
  Run(Team& team, const ExchangeArgs& a, const StreamParams& prm)
      : e_(engine()), seg_(e_.seg), team_(team), a_(a), prm_(prm), sc_(scratch()) {}

  int go() {
    const uint32_t n = team_.size();
    me_ = team_.rank;
    seq_ = team_.next();
    ctx_ = team_.ctxId;
    if (n == 1) {
      int status = selfCopy(a_.broadcast ? a_.send(0) : a_.send(me_), a_.recv(me_));
      return status ? fail(status, "%s", lastReason().c_str()) : 0;
    }
    slot_ = seg_.slotBytes();
    tag_ = segment::laneTag(seq_, ctx_);
    area_ = static_cast<uint32_t>(seq_ & 1);
    laneBytes_ = a_.broadcast ? seg_.laneAreaBytes() : seg_.laneBytes(n);
    inlineMax_ = std::min<uint64_t>(prm_.inlineMax, segment::laneInlineCapacity(laneBytes_));

    SHMCOLL_CHECK(publish());
    ntRecv_ = receiveNt();
    int status;
    {
      copy::NtScope nt(ntRecv_ ? kNtRecvMin : 0);
      status = selfCopy(a_.broadcast ? a_.send(0) : a_.send(me_), a_.recv(me_));
    }
    if (status) statusReason_ = lastReason();

    initConsumer();
    SHMCOLL_CHECK(drive());
    wakePending_ = false;  // (the wake-up below covers the lanes too)
    if (mismatch_ && !status) {
      status = mismatch_;
      statusReason_ = mismatchReason_;
    }
    // Everything addressed to us has been read: release the senders.
    seg_.ctx(e_.rank, ctx_)->consumed.v.store(seq_, std::memory_order_release);
    channel::wakeAll(team_.members, me_, [&](uint32_t r) { return seg_.ctl(r); });
    // Our user buffer is being read in place: stay until those readers are done.
    for (uint32_t p : sc_.cmaReaders) {
      const uint32_t r = team_.members[p];
      segment::Line64& c = seg_.ctx(r, ctx_)->consumed;
      SHMCOLL_CHECK(channel::waitUntil(e_.self(), [&] { return c.v.load(std::memory_order_acquire) >= seq_; }));
      uint64_t& d = e_.doneBy(ctx_, r);
      d = std::max(d, seq_);
    }
    if (status) return fail(status, "%s", statusReason_.c_str());
    return 0;
  }

  // Finishes an inline exchange (exchange_inline.h) whose lanes from the
  // peers in `rest` were not inline: reads them as the general consumer does.
  // This rank published only inline lanes, so it has nothing to produce.
  int resume(const InlineRun& r, const uint32_t* rest, uint32_t count) {
    me_ = team_.rank;
    seq_ = r.seq;
    ctx_ = team_.ctxId;
    slot_ = seg_.slotBytes();
    tag_ = r.tag;
    area_ = r.area;
    laneBytes_ = r.laneBytes;
    streamBytes_ = chunks_ = nextChunk_ = 0;
    sc_.parts.clear();
    sc_.cmaReaders.clear();
    sc_.from.clear();
    sc_.skipped.clear();
    const uint64_t off = a_.broadcast ? 0 : me_ * laneBytes_;
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t q = rest[i];
      const auto* lane = reinterpret_cast<const LaneHeader*>(seg_.laneArea(team_.members[q], area_) + off);
      sc_.from.push_back({q, kWaitLane, lane, 0, 0, 0, 0, {}});
    }
    if (a_.skipEmpty) {
      const uint32_t n = team_.size();
      for (uint32_t q = 0; q < n; ++q) {
        if (q == me_ || !a_.skipsEmpty(q)) continue;
        const auto* lane = reinterpret_cast<const LaneHeader*>(seg_.laneArea(team_.members[q], area_) + off);
        sc_.skipped.push_back({q, kWaitLane, lane, 0, 0, 0, 0, {}});
      }
    }
    SHMCOLL_CHECK(drive());
    if (mismatch_) return fail(mismatch_, "%s", mismatchReason_.c_str());
    return 0;
  }

 private:
  // Produces and consumes until both are done, sleeping when neither can move.
  int drive() {
    while (!(producerDone() && consumerDone())) {
      bool moved = produce();
      int rc = 0;
      moved |= consume(&rc);
      if (rc) {
        flushWake();
        return rc;
      }
      if (producerDone() && consumerDone()) break;  // (the caller's wake-up covers the lanes too)
      flushWake();
      if (!moved) {
        SHMCOLL_CHECK(channel::waitStream(e_.self(), [&] { return canProduce() || canConsume(); }));
      }
    }
    return 0;
  }

  // ---- producer ------------------------------------------------------------

  bool sendsTo(uint32_t p) const { return a_.allPairs || a_.sends(p); }
  bool receivesFrom(uint32_t p) const { return a_.receivesFrom(p); }

  bool useCma(uint64_t bytes, const dt::Cursor& cur, uint32_t peer) const {
    if (!prm_.allowCma || bytes == 0 || !cur.contiguous()) return false;
    // MPI_Alloc_mem memory in the segment, or a buffer in the shared malloc
    // heap: the reader copies straight out of it, one plain copy against the
    // stream's two, at any size (cmaMin prices a system call that this path
    // does not make).
    if (peerReadable(cur.contiguousBase(), bytes)) return true;
    return e_.cma && (bytes >= prm_.cmaMin || (peer == soloPeer_ && bytes >= prm_.cmaSoloMin && bytes < prm_.cmaSoloMax));
  }

  // The one peer this rank sends more than a slot to, if there is exactly
  // one and the team has 3 or more ranks (StreamParams::cmaSoloMin); else
  // UINT32_MAX.
  uint32_t findSoloPeer() const {
    const uint32_t n = team_.size();
    if (prm_.cmaSoloMin >= std::min(prm_.cmaMin, prm_.cmaSoloMax) || n < 3 || a_.broadcast || !e_.cma || !prm_.allowCma) return UINT32_MAX;
    uint32_t solo = UINT32_MAX;
    for (uint32_t p = 0; p < n; ++p) {
      if (p == me_ || !sendsTo(p) || a_.send(p).bytes() <= slot_) continue;
      if (solo != UINT32_MAX) return UINT32_MAX;
      solo = p;
    }
    return solo;
  }

  // Waits until every reader of lane area `area_`'s previous use is done with it.
  int reclaimArea() { return reclaimLaneArea(area_); }

  // Fills one lane (everything but its tag) for a block of `b`.
  void fillLane(LaneHeader* h, const Block& b, uint32_t peer) {
    const uint64_t bytes = b.bytes();
    char* body = reinterpret_cast<char*>(h) + segment::kLaneHeaderBytes;
    dt::Cursor cur(b.buf, b.count, b.type);
    if (bytes <= inlineMax_) {
      // (publish() stores the tag once the lane is written)
      writeInline(reinterpret_cast<char*>(h), bytes, tag_, false,
                  [&](uint64_t off, char* d, uint64_t len) { cur.pack(off, d, len); });
    } else if (useCma(bytes, cur, peer)) {
      const uint64_t where = reinterpret_cast<uint64_t>(cur.contiguousBase());
      std::memcpy(body, &where, sizeof where);
      h->bytes = bytes | segment::kLaneCma;
      if (a_.broadcast) {
        for (uint32_t p = 0; p < team_.size(); ++p)
          if (p != me_ && sendsTo(p)) sc_.cmaReaders.push_back(p);
      } else {
        sc_.cmaReaders.push_back(peer);
      }
    } else {
      std::memcpy(body, &streamBytes_, sizeof streamBytes_);
      h->bytes = bytes | segment::kLaneStream;
      sc_.parts.push_back({peer, streamBytes_, bytes});
      streamBytes_ += bytes;
    }
  }

  // Writes every lane this rank sends through and announces them.
  int publish() {
    const uint32_t n = team_.size();
    sc_.parts.clear();
    sc_.cmaReaders.clear();
    streamBytes_ = 0;
    uint32_t readers = 0;
    for (uint32_t p = 0; p < n; ++p)
      if (p != me_ && sendsTo(p)) ++readers;
    nReaders_ = readers;
    if (readers == 0) {  // nothing to announce: the area keeps its previous use
      chunks_ = nextChunk_ = 0;
      return 0;
    }
    SHMCOLL_CHECK(reclaimArea());
    LaneUse& use = e_.laneUse[area_];
    use.ctx = ctx_;
    use.seq = seq_;
    use.readers.clear();
    for (uint32_t p = 0; p < n; ++p)
      if (p != me_ && sendsTo(p)) use.readers.push_back(team_.members[p]);

    soloPeer_ = findSoloPeer();
    char* area = seg_.laneArea(e_.rank, area_);
    if (a_.broadcast) {
      auto* h = reinterpret_cast<LaneHeader*>(area);
      fillLane(h, a_.send(0), me_);
      h->tag.store(tag_, std::memory_order_release);
    } else {
      for (uint32_t d = 1; d < n; ++d) {
        const uint32_t p = (me_ + d) % n;
        if (!sendsTo(p)) continue;
        auto* h = reinterpret_cast<LaneHeader*>(area + p * laneBytes_);
        fillLane(h, a_.send(p), p);
        h->tag.store(tag_, std::memory_order_release);
      }
    }
    chunks_ = (streamBytes_ + slot_ - 1) / slot_;
    nextChunk_ = 0;
    partIdx_ = 0;
    partCursorFor_ = UINT32_MAX;
    // The readers that sleep are woken later (flushWake): the fence of a
    // wake-up waits until the lane lines have reached this core, and issued
    // after the first look at the peers' lanes it overlaps that look's misses.
    wakePending_ = true;
    return 0;
  }

  // Wakes the readers of the lanes that publish() wrote, if not done yet.
  // Called before this rank waits or returns, so no reader sleeps on lanes
  // that are already written.
  void flushWake() {
    if (!wakePending_) return;
    wakePending_ = false;
    channel::wakeAll(team_.members, me_, [&](uint32_t r) { return seg_.ctl(r); });
  }

  bool producerDone() const { return nextChunk_ >= chunks_; }

  bool canProduce() const {
    if (producerDone()) return false;
    uint32_t s = static_cast<uint32_t>(nextChunk_ % segment::kNumSlots);
    return seg_.slot(e_.rank, s)->acks.load(std::memory_order_acquire) >= e_.slotExpected[s] || slotAbandoned(s);
  }

  // Whether every reader of slot s's last chunk has finished that chunk's
  // operation, which in a correct program means each acknowledged it; in an
  // erroneous one some skipped our stream (Engine::slotReaders).
  bool slotAbandoned(uint32_t s) const {
    const Engine::SlotReaders& u = e_.slotReaders[s];
    if (u.readers.empty()) return false;
    for (uint32_t r : u.readers)
      if (!finished(r, u.ctx, u.seq)) return false;
    return true;
  }

  // Whether world rank r has finished operation `seq` on context `ctx`.
  bool finished(uint32_t r, uint32_t ctx, uint64_t seq) const {
    return seg_.ctx(r, ctx)->consumed.v.load(std::memory_order_acquire) >= seq;
  }

  // Packs as many chunks as free slots allow.
  bool produce() {
    bool moved = false;
    const std::vector<Part>& parts = sc_.parts;
    while (canProduce()) {
      const uint64_t k = nextChunk_;
      const uint32_t s = static_cast<uint32_t>(k % segment::kNumSlots);
      segment::SlotHeader* h = seg_.slot(e_.rank, s);
      char* payload = seg_.slotPayload(e_.rank, s);
      const uint64_t begin = k * slot_;
      const uint64_t end = std::min<uint64_t>(begin + slot_, streamBytes_);
      uint32_t readers = 0;
      // Pack parts overlapping [begin, end).
      while (partIdx_ < parts.size() && parts[partIdx_].off + parts[partIdx_].bytes <= begin) ++partIdx_;
      size_t i = partIdx_;
      sc_.firstWake.clear();
      for (; i < parts.size() && parts[i].off < end; ++i) {
        const Part& pt = parts[i];
        uint64_t lo = std::max(begin, pt.off), hi = std::min(end, pt.off + pt.bytes);
        if (partCursorFor_ != i) {
          Block b = a_.broadcast ? a_.send(0) : a_.send(pt.peer);
          partCursor_ = dt::Cursor(b.buf, b.count, b.type);
          partCursorFor_ = static_cast<uint32_t>(i);
        }
        partCursor_.pack(lo - pt.off, payload + (lo - begin), hi - lo);
        ++readers;
        sc_.firstWake.push_back(pt.peer);
      }
      if (a_.broadcast) readers = nReaders_;
      e_.slotExpected[s] = readers;
      Engine::SlotReaders& who = e_.slotReaders[s];
      who.readers.clear();
      if (a_.skipEmpty) {
        who.ctx = ctx_;
        who.seq = seq_;
        if (a_.broadcast) {
          who.readers = e_.laneUse[area_].readers;  // (publish(): every peer we send to)
        } else {
          for (uint32_t p : sc_.firstWake) who.readers.push_back(team_.members[p]);
        }
      }
      h->acks.store(0, std::memory_order_relaxed);
      h->seq = seq_;
      h->ctx = ctx_;
      h->streamOffset = begin;
      h->bytes = end - begin;
      h->tag.store(makeTag(seq_, ctx_, k), std::memory_order_release);
      if (a_.broadcast) {
        channel::wakeAll(team_.members, me_, [&](uint32_t r) { return seg_.ctl(r); });
      } else {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        for (uint32_t p : sc_.firstWake) channel::wakeIfSleeping(seg_.ctl(team_.members[p]));
      }
      ++nextChunk_;
      moved = true;
    }
    return moved;
  }

  // ---- consumer ------------------------------------------------------------

  void initConsumer() {
    const uint32_t n = team_.size();
    const uint64_t off = a_.broadcast ? 0 : me_ * laneBytes_;
    sc_.from.clear();
    sc_.skipped.clear();
    for (uint32_t d = 1; d < n; ++d) {
      const uint32_t q = (me_ + n - d) % n;
      if (!a_.allPairs && !a_.receives(q)) continue;
      const auto* lane = reinterpret_cast<const LaneHeader*>(seg_.laneArea(team_.members[q], area_) + off);
      std::vector<From>& list = a_.skipEmpty && a_.recv(q).bytes() == 0 ? sc_.skipped : sc_.from;
      list.push_back({q, kWaitLane, lane, 0, 0, 0, 0, {}});
    }
  }

  bool consumerDone() const { return sc_.from.empty(); }

  bool ready(const From& f) const {
    if (f.stage == kWaitLane) {
      if (f.lane->tag.load(std::memory_order_acquire) != tag_) return false;
      const uint64_t raw = f.lane->bytes;  // (an inline payload's later lines may still be on their way)
      return !(raw & segment::kLaneInline) ||
             inlineArrived(reinterpret_cast<const char*>(f.lane), raw & ~segment::kLaneKinds, tag_);
    }
    const uint32_t q = team_.members[f.teamRank];
    const uint32_t s = static_cast<uint32_t>(f.chunk % segment::kNumSlots);
    return seg_.slot(q, s)->tag.load(std::memory_order_acquire) == makeTag(seq_, ctx_, f.chunk);
  }

  bool canConsume() const {
    for (const From& f : sc_.from)
      if (ready(f)) return true;
    for (const From& f : sc_.skipped)
      if (f.lane->tag.load(std::memory_order_acquire) == tag_) return true;
    return false;
  }

  // Drops the skipped peers whose lanes arrived empty, as agreed, and moves
  // those that carry bytes to `from` (advance() reports the truncation and
  // consumes them without writing anything).
  void sortSkipped() {
    std::vector<From>& sk = sc_.skipped;
    for (size_t i = 0; i < sk.size();) {
      if (sk[i].lane->tag.load(std::memory_order_acquire) != tag_) {
        ++i;
        continue;
      }
      if ((sk[i].lane->bytes & ~segment::kLaneKinds) != 0) [[unlikely]]
        sc_.from.push_back(sk[i]);
      sk[i] = sk.back();
      sk.pop_back();
    }
  }

  void noteMismatch(uint32_t q, uint64_t theirs, uint64_t ours) {
    if (mismatch_) return;
    mismatch_ = theirs > ours ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
    char buf[256];
    snprintf(buf, sizeof buf,
             "rank %u sent %llu bytes to rank %u but the receive block holds %llu bytes "
             "(type signatures differ between sender and receiver)",
             q, (unsigned long long)theirs, me_, (unsigned long long)ours);
    mismatchReason_ = buf;
  }

  // Advances sender f as far as it can go without waiting; returns true when
  // it is finished.  Sets *moved when anything happened.
  bool advance(From& f, bool* moved, int* rc) {
    const uint32_t q = team_.members[f.teamRank];
    while (ready(f)) {
      if (f.stage == kWaitLane) {
        // The sender has entered this operation, so it finished every earlier one here.
        uint64_t& d = e_.doneBy(ctx_, q);
        if (d + 1 < seq_) d = seq_ - 1;
        const uint64_t raw = f.lane->bytes;
        const uint64_t bytes = raw & ~segment::kLaneKinds;
        const char* body = reinterpret_cast<const char*>(f.lane) + segment::kLaneHeaderBytes;
        Block rb = a_.recv(f.teamRank);
        const uint64_t want = rb.bytes();
        if (bytes != want) noteMismatch(f.teamRank, bytes, want);
        f.use = std::min(bytes, want);
        f.cursor = dt::Cursor(rb.buf, rb.count, rb.type);
        *moved = true;
        if (raw & segment::kLaneInline) {
          readInline(reinterpret_cast<const char*>(f.lane), bytes, f.use,
                     [&](uint64_t off, const char* s, uint64_t len) { f.cursor.unpack(off, s, len); });
          return true;
        }
        uint64_t where;
        std::memcpy(&where, body, sizeof where);
        if (raw & segment::kLaneCma) {
          *rc = cmaPull(q, where, f.cursor, f.use);
          return true;
        }
        if (bytes == 0) return true;
        f.begin = where;
        f.end = where + bytes;
        f.chunk = f.begin / slot_;
        f.stage = kPull;
        continue;
      }
      const uint32_t s = static_cast<uint32_t>(f.chunk % segment::kNumSlots);
      segment::SlotHeader* h = seg_.slot(q, s);
      if (h->seq != seq_ || h->ctx != ctx_) return false;  // a stale tag that happens to match: keep waiting
      const char* payload = seg_.slotPayload(q, s);
      const uint64_t cb = f.chunk * slot_;
      const uint64_t lo = std::max(cb, f.begin);
      const uint64_t hi = std::min(cb + slot_, f.end);
      const uint64_t pos = lo - f.begin;  // position within the pair's bytes
      if (pos < f.use) f.cursor.unpack(pos, payload + (lo - cb), std::min(hi, f.begin + f.use) - lo);
      h->acks.fetch_add(1, std::memory_order_acq_rel);
      channel::wakePeer(seg_.ctl(q));
      *moved = true;
      if (hi >= f.end) return true;
      ++f.chunk;
    }
    return false;
  }

  // Whether the copies into the receive buffer should bypass the cache: when
  // what the operation touches (this rank's send and receive bytes, times the
  // ranks that share each core) is at least twice the non-temporal threshold
  // (by default 3/4 of a core's share of the L3, copy/copy.cc), the received
  // data would only push the rest out of the cache before anybody reads it.
  // Measured (docs/PERFORMANCE.md): at 8 ranks on 2 cores, alltoall 1 MiB;
  // at 32, alltoall and allgather from 64 KiB.  At 2 ranks up to 1 MiB, and
  // at 8 ranks at 64 KiB, non-temporal stores lost.
  bool receiveNt() const {
    const uint64_t nt = copy::ntThreshold();
    if (nt == SIZE_MAX) return false;
    const uint32_t n = team_.size();
    uint64_t bytes = 0;
    for (uint32_t p = 0; p < n; ++p) {
      if (receivesFrom(p)) bytes += a_.recv(p).bytes();
      if (!a_.broadcast && sendsTo(p)) bytes += a_.send(p).bytes();
    }
    if (a_.broadcast) bytes += a_.send(0).bytes();
    const uint32_t cores = std::max<uint32_t>(1, seg_.header()->ncores);
    const double perCore = std::max(1.0, static_cast<double>(e_.size) / cores);
    return static_cast<double>(bytes) * perCore >= 2.0 * static_cast<double>(nt);
  }

  bool consume(int* rc) {
    copy::NtScope nt(ntRecv_ ? kNtRecvMin : 0);
    bool moved = false;
    if (!sc_.skipped.empty()) sortSkipped();
    std::vector<From>& from = sc_.from;
    for (size_t i = 0; i < from.size();) {
      if (advance(from[i], &moved, rc)) {
        from.erase(from.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
      if (*rc) return moved;
    }
    return moved;
  }

  Engine& e_;
  segment::View& seg_;
  Team& team_;
  const ExchangeArgs& a_;
  StreamParams prm_;
  Scratch& sc_;
  uint32_t me_ = 0, ctx_ = 0, area_ = 0;
  uint64_t seq_ = 0, slot_ = 0, tag_ = 0, laneBytes_ = 0, inlineMax_ = 0;
  // producer
  uint64_t streamBytes_ = 0, chunks_ = 0, nextChunk_ = 0;
  size_t partIdx_ = 0;
  uint32_t partCursorFor_ = UINT32_MAX;
  dt::Cursor partCursor_;
  uint32_t nReaders_ = 0;  // peers that read what this rank publishes
  uint32_t soloPeer_ = UINT32_MAX;  // findSoloPeer()
  bool wakePending_ = false;  // lanes written, their readers not woken yet
  // consumer
  static constexpr size_t kNtRecvMin = 16 * 1024;  // smallest receive copy that bypasses the cache
  bool ntRecv_ = false;  // receiveNt()
  int mismatch_ = 0;
  std::string mismatchReason_, statusReason_;
};

}  // namespace

// Copies the self block (sender == receiver) without going through shared memory.
int selfCopy(const Block& s, const Block& r) {
  uint64_t sb = s.bytes(), rb = r.bytes();
  int rc = 0;
  if (sb != rb)
    rc = fail(sb > rb ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
              "this rank sends %llu bytes to itself but its receive block holds %llu bytes",
              (unsigned long long)sb, (unsigned long long)rb);
  uint64_t n = std::min(sb, rb);
  if (n == 0) return rc;
  if (s.buf == r.buf && s.type == r.type && s.count == r.count) return rc;  // in place
  if (s.type->contiguous && r.type->contiguous) {  // (no cursors needed)
    moveFlat(s, r, n);
    return rc;
  }
  dt::Cursor sc(s.buf, s.count, s.type), rcur(r.buf, r.count, r.type);
  if (sc.contiguous() && rcur.contiguous()) {
    moveBytes(rcur.contiguousBase(), sc.contiguousBase(), n);
  } else if (rcur.contiguous()) {
    sc.pack(0, rcur.contiguousBase(), n);
  } else if (sc.contiguous()) {
    rcur.unpack(0, sc.contiguousBase(), n);
  } else {
    alignas(64) static thread_local char bounce[64 * 1024];
    for (uint64_t pos = 0; pos < n; pos += sizeof bounce) {
      uint64_t len = std::min<uint64_t>(sizeof bounce, n - pos);
      sc.pack(pos, bounce, len);
      rcur.unpack(pos, bounce, len);
    }
  }
  return rc;
}

namespace {

// Opens world rank `rank`'s shared heap through /proc; -1 if the kernel
// refuses, or if the descriptor is no longer that heap (the program closed
// it and the number now names another file: the inode tells).
int openPeerHeap(const segment::RankCtl* c) {
  if (c->heapFd < 0) return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%d", c->pid, c->heapFd);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != c->heapIno) {
    close(fd);
    return -1;
  }
  return fd;
}

// Our view of bytes [remote, remote + len) of world rank `rank`'s shared
// heap, or nullptr when they are not in it or it cannot be mapped.  The
// mapping covers a prefix of the heap and grows (doubling) as needed.
const char* peerHeapBytes(uint32_t rank, uint64_t remote, uint64_t len) {
  Engine& e = engine();
  if (!e.heapShared) return nullptr;
  const segment::RankCtl* c = e.seg.ctl(rank);
  if (c->heapFd < 0 || remote < c->heapBase) return nullptr;
  const uint64_t off = remote - c->heapBase;
  if (off >= c->heapBytes || len > c->heapBytes - off) return nullptr;
  if (e.peerHeap.size() != e.size) e.peerHeap.resize(e.size);
  Engine::PeerHeap& ph = e.peerHeap[rank];
  if (off + len > ph.len) {
    constexpr uint64_t kGrain = 2u << 20;
    uint64_t want = std::max(off + len, 2 * ph.len);
    want = std::min((want + kGrain - 1) / kGrain * kGrain, c->heapBytes);
    int fd = openPeerHeap(c);
    if (fd < 0) return nullptr;
    void* m = mmap(nullptr, want, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return nullptr;
    if (ph.map) munmap(const_cast<char*>(ph.map), ph.len);
    ph.map = static_cast<const char*>(m);
    ph.len = want;
  }
  return ph.map + off;
}

}  // namespace

bool canMapPeerHeap(uint32_t rank) {
  const segment::RankCtl* c = engine().seg.ctl(rank);
  int fd = openPeerHeap(c);
  if (fd < 0) return false;
  void* m = mmap(nullptr, os::SharedHeap::kPage, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return false;
  munmap(m, os::SharedHeap::kPage);
  return true;
}

bool peerReadable(const void* p, uint64_t len) {
  if (inSegment(p, len)) return true;
  const os::SharedHeap& h = os::processHeap();
  return engine().heapShared && h.shared() && h.ownsRange(p, len);
}

// Pulls `len` bytes at `remote` in rank `rank` into stream bytes [0, len) of
// `dst`: a plain copy when the bytes lie in the shared segment (MPI_Alloc_mem
// memory: the peer's address translates into our mapping), else one
// process_vm_readv per batch of receive runs.
int cmaPull(uint32_t rank, uint64_t remote, dt::Cursor& dst, uint64_t len) {
  const Engine& e = engine();
  const segment::RankCtl* peer = e.seg.ctl(rank);
  const uint64_t total = e.seg.header()->totalSize;
  if (remote >= peer->mapBase && remote - peer->mapBase <= total && len <= total - (remote - peer->mapBase)) {
    if (len) dst.unpack(0, e.seg.base() + (remote - peer->mapBase), len);
    return 0;
  }
  if (const char* src = peerHeapBytes(rank, remote, len)) {
    if (len) dst.unpack(0, src, len);
    return 0;
  }
  const pid_t pid = static_cast<pid_t>(peer->pid);
  constexpr size_t kMaxIov = 512;
  struct iovec local[kMaxIov];
  uint64_t pos = 0;
  while (pos < len) {
    uint64_t covered = 0;
    size_t k = dst.iov(pos, len - pos, local, kMaxIov, &covered);
    struct iovec rem = {reinterpret_cast<void*>(remote + pos), covered};
    ssize_t got = process_vm_readv(pid, local, k, &rem, 1, 0);
    if (got <= 0)
      return fail(MPI_ERR_OTHER, "single-copy read of %llu bytes from pid %d failed: %s (set SHMCOLL_CMA=0)",
                  (unsigned long long)covered, static_cast<int>(pid), strerror(errno));
    pos += static_cast<uint64_t>(got);
  }
  return 0;
}

int reclaimLaneArea(uint32_t area) {
  Engine& e = engine();
  LaneUse& use = e.laneUse[area];
  for (uint32_t r : use.readers) {
    uint64_t& d = e.doneBy(use.ctx, r);
    if (d >= use.seq) continue;
    segment::Line64& c = e.seg.ctx(r, use.ctx)->consumed;
    SHMCOLL_CHECK(channel::waitUntil(e.self(), [&] { return c.v.load(std::memory_order_acquire) >= use.seq; }));
    d = std::max(d, use.seq);
  }
  return 0;
}

bool inSegment(const void* p, uint64_t len) {
  const Engine& e = engine();
  const char* base = e.seg.base();
  const uint64_t total = e.seg.header()->totalSize;
  const char* q = static_cast<const char*>(p);
  return q >= base && static_cast<uint64_t>(q - base) <= total && len <= total - static_cast<uint64_t>(q - base);
}

int streamedExchange(Team& team, const ExchangeArgs& args, const StreamParams& prm) {
  Run run(team, args, prm);
  return run.go();
}

int inlineRest(const InlineRun& r, const ExchangeArgs& args, const uint32_t* rest, uint32_t count) {
  Run run(*r.team, args, {});
  return run.resume(r, rest, count);
}

}  // namespace shmcoll::coll
