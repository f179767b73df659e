// Running a round (round.h says how it works): publishing the lanes, the
// consumer that takes every sender's block, and the loop that interleaves
// them with the stream's producer.
#include "transport/round.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/status.h"
#include "copy/copy.h"
#include "transport/lane.h"
#include "transport/lanes.h"
#include "transport/parts.h"
#include "transport/pull.h"
#include "wait/wait.h"

namespace shmcoll::transport {

namespace {

enum Stage { kWaitLane, kStream };

// Progress through one sender's bytes for us.
struct From {
  uint32_t teamRank;
  Stage stage;
  const LaneHeader* lane;
  uint64_t chunk, begin, end, use;
  dt::Cursor cursor;
  bool multi = false;  // several receive parts: `parts`, not `cursor`
  PartsCursor parts;
  const LaneHeader* ring = nullptr;  // the sender's ring lane, where it may be (Pairs::ahead)
  void unpack(uint64_t pos, const char* s, uint64_t len) {
    if (multi)
      parts.unpack(pos, s, len);
    else
      cursor.unpack(pos, s, len);
  }
};

}  // namespace

struct RoundScratch {
  Outbox out;
  std::vector<uint32_t> pullReaders;  // group ranks that pull from our user buffer
  std::vector<From> from;
  // Peers we expect nothing from (Pairs::skipEmpty), whose lanes are looked
  // at only while we wait anyway: one that carries bytes after all is moved
  // to `from`, so its sender is not held up by an erroneous receiver.
  std::vector<From> skipped;
};

RoundScratch* newRoundScratch() { return new RoundScratch; }
void deleteRoundScratch(RoundScratch* s) { delete s; }

namespace {

class Round {
 public:
  Round(const Group& g, uint64_t seq, const Pairs& a, const RoundParams& prm, RoundScratch& sc)
      : w_(world()), lanes_(lanes()), g_(g), a_(a), prm_(prm), sc_(sc), seq_(seq) {}

  int go() {
    const uint32_t n = g_.size();
    me_ = g_.rank;
    ctx_ = g_.lines;
    if (n == 1) {
      int status =
          a_.multiPart ? selfCopyParts(a_, me_) : selfCopy(a_.broadcast ? a_.send(0) : a_.send(me_), a_.recv(me_));
      return status ? fail(status, "%s", lastReason().c_str()) : 0;
    }
    slot_ = w_.seg.slotBytes();
    tag_ = segment::laneTag(seq_, ctx_);
    area_ = static_cast<uint32_t>(seq_ & 1);
    laneBytes_ = a_.broadcast ? w_.seg.laneAreaBytes() : w_.seg.laneBytes(n);
    inlineMax_ = std::min<uint64_t>(prm_.inlineMax, segment::laneInlineCapacity(laneBytes_));

    SHMCOLL_CHECK(publish());
    ntRecv_ = receiveNt();
    int status;
    {
      copy::NtScope nt(ntRecv_ ? kNtRecvMin : 0);
      status = a_.multiPart ? selfCopyParts(a_, me_) : selfCopy(a_.broadcast ? a_.send(0) : a_.send(me_), a_.recv(me_));
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
    release(ctx_, seq_);
    if (listed()) {  // (readers of our lanes and chunks, senders waiting for `consumed`)
      wait::wakeFence();
      auto wake = [&](uint32_t p) { return wait::wakeIfSleeping(w_.seg.ctl(g_.members[p])), 0; };
      forSends(a_, n, me_, wake);
      forReceives(a_, n, me_, wake);
    } else {
      wait::wakeAll(g_.members, me_, [&](uint32_t r) { return w_.seg.ctl(r); });
    }
    // Our user buffer is being read in place: stay until those readers are done.
    for (uint32_t p : sc_.pullReaders) SHMCOLL_CHECK(lanes_.awaitFinished(g_.members[p], ctx_, seq_));
    if (status) return fail(status, "%s", statusReason_.c_str());
    return 0;
  }

  // Reads the lanes the inline path left over (round.h).
  int resume(const InlineLeftovers& left) {
    me_ = g_.rank;
    ctx_ = g_.lines;
    slot_ = w_.seg.slotBytes();
    tag_ = left.tag;
    area_ = left.area;
    laneBytes_ = left.laneBytes;
    sc_.out.begin(g_, seq_, slot_);
    sc_.out.seal(false, nullptr, false);
    sc_.pullReaders.clear();
    sc_.from.clear();
    sc_.skipped.clear();
    const uint64_t off = a_.broadcast ? 0 : me_ * laneBytes_;
    for (uint32_t i = 0; i < left.count; ++i) {
      const uint32_t q = left.peers[i];
      sc_.from.push_back({q, kWaitLane, peerLane(g_.members[q], area_, off), 0, 0, 0, 0, {}, false, {}});
    }
    if (a_.skipEmpty) {
      const uint32_t n = g_.size();
      for (uint32_t q = 0; q < n; ++q) {
        if (q == me_ || !a_.skipsEmpty(q)) continue;
        sc_.skipped.push_back({q, kWaitLane, peerLane(g_.members[q], area_, off), 0, 0, 0, 0, {}, false, {}});
      }
    }
    SHMCOLL_CHECK(drive());
    if (mismatch_) return fail(mismatch_, "%s", mismatchReason_.c_str());
    return 0;
  }

 private:
  // Produces and consumes until both are done, sleeping when neither can move.
  int drive() {
    // (once per round, not per poll: the copies into slots, and out of
    // lanes, slots and the senders' buffers)
    copy::RepScope rep;
    Outbox& out = sc_.out;
    while (!(out.done() && consumerDone())) {
      bool moved = out.produce();
      int rc = 0;
      moved |= consume(&rc);
      if (rc) {
        flushWake();
        return rc;
      }
      if (out.done() && consumerDone()) break;  // (the caller's wake-up covers the lanes too)
      flushWake();
      if (!moved) {
        SHMCOLL_CHECK(wait::waitStream(w_.self(), [&] { return out.canProduce() || canConsume(); }));
      }
    }
    return 0;
  }

  // ---- announcing ----------------------------------------------------------

  bool usePull(uint64_t bytes, const dt::Cursor& cur, uint32_t peer) const {
    if (!prm_.allowPull || bytes == 0 || !cur.contiguous()) return false;
    // MPI_Alloc_mem memory in the segment, or a buffer in the shared malloc
    // heap: the reader copies straight out of it, one plain copy against the
    // stream's two, at any size (cmaMin prices a system call that this path
    // does not make).
    if (pulledAnyway(cur.contiguousBase(), bytes, prm_.cmaMin)) return true;
    return pulls().cma && peer == soloPeer_ && bytes >= prm_.cmaSoloMin && bytes < prm_.cmaSoloMax;
  }

  // The one peer this rank sends more than a slot to, if there is exactly
  // one and the group has 3 or more ranks (RoundParams::cmaSoloMin); else
  // UINT32_MAX.
  uint32_t findSoloPeer() const {
    const uint32_t n = g_.size();
    if (prm_.cmaSoloMin >= std::min(prm_.cmaMin, prm_.cmaSoloMax) || n < 3 || a_.broadcast || !pulls().cma ||
        !prm_.allowPull)
      return UINT32_MAX;
    uint32_t solo = UINT32_MAX;
    for (uint32_t p = 0; p < n; ++p) {
      if (p == me_ || !a_.sendsTo(p) || a_.send(p).bytes() <= slot_) continue;
      if (solo != UINT32_MAX) return UINT32_MAX;
      solo = p;
    }
    return solo;
  }

  // Fills one lane (everything but its tag) for a block of `b`.
  void fillLane(LaneHeader* h, const Block& b, uint32_t peer) {
    if (a_.sendsParts(peer)) return fillParts(h, peer);
    const uint64_t bytes = b.bytes();
    char* body = laneBody(h);
    dt::Cursor cur(b.buf, b.count, b.type);
    if (bytes <= inlineMax_) {
      // (publish() stores the tag once the lane is written)
      writeInline(reinterpret_cast<char*>(h), bytes, tag_, false,
                  [&](uint64_t off, char* d, uint64_t len) { cur.pack(off, d, len); });
    } else if (usePull(bytes, cur, peer)) {
      const uint64_t where = reinterpret_cast<uint64_t>(cur.contiguousBase());
      std::memcpy(body, &where, sizeof where);
      h->bytes = bytes | segment::kLanePull;
      if (a_.broadcast) {
        for (uint32_t p = 0; p < g_.size(); ++p)
          if (p != me_ && a_.sendsTo(p)) sc_.pullReaders.push_back(p);
      } else {
        sc_.pullReaders.push_back(peer);
      }
    } else {
      const uint64_t off = sc_.out.add(peer, b);
      std::memcpy(body, &off, sizeof off);
      h->bytes = bytes | segment::kLaneStream;
    }
  }

  // Fills the lane of a pair with several parts (segment/layout.h has the
  // format): inline as one block when they fit; pulled when every non-empty
  // part may be and their list fits the lane; else streamed end to end.
  void fillParts(LaneHeader* h, uint32_t peer) {
    const uint64_t bytes = a_.send(peer).bytes();
    char* body = laneBody(h);
    if (bytes <= inlineMax_) {
      PartsCursor pc(&a_, peer, true);
      writeInline(reinterpret_cast<char*>(h), bytes, tag_, false,
                  [&](uint64_t off, char* d, uint64_t len) { pc.pack(off, d, len); });
      return;
    }
    const uint64_t k = a_.sendParts(peer);
    bool pull = (1 + 2 * k) * sizeof(uint64_t) <= laneBytes_ - segment::kLaneHeaderBytes;
    for (uint32_t i = 0; i < k && pull; ++i) {
      const Block b = a_.sendPart(peer, i);
      pull = b.bytes() == 0 || usePull(b.bytes(), dt::Cursor(b.buf, b.count, b.type), peer);
    }
    if (pull) {
      uint64_t list[2];
      std::memcpy(body, &k, sizeof k);
      for (uint32_t i = 0; i < k; ++i) {
        const Block b = a_.sendPart(peer, i);
        list[0] = reinterpret_cast<uint64_t>(dt::Cursor(b.buf, b.count, b.type).contiguousBase());
        list[1] = b.bytes();
        std::memcpy(body + sizeof k + i * sizeof list, list, sizeof list);
      }
      h->bytes = bytes | segment::kLanePull | segment::kLaneParts;
      sc_.pullReaders.push_back(peer);
      return;
    }
    uint64_t first = UINT64_MAX;
    for (uint32_t i = 0; i < k; ++i) {
      const Block b = a_.sendPart(peer, i);
      if (b.bytes() == 0) continue;
      const uint64_t off = sc_.out.add(peer, b);  // (consecutive: end to end in the stream)
      if (first == UINT64_MAX) first = off;
    }
    std::memcpy(body, &first, sizeof first);
    h->bytes = bytes | segment::kLaneStream;
  }

  // Writes every lane this rank sends through and announces them.
  int publish() {
    const uint32_t n = g_.size();
    sc_.pullReaders.clear();
    sc_.out.begin(g_, seq_, slot_);
    uint32_t readers = 0;
    forSends(a_, n, me_, [&](uint32_t) { return ++readers, 0; });
    if (readers == 0) {  // nothing to announce: the area keeps its previous use
      sc_.out.seal(false, nullptr, false);
      return 0;
    }
    SHMCOLL_CHECK(lanes_.claim(area_, ctx_, seq_));
    std::vector<uint32_t>& who = lanes_.readers(area_);
    forSends(a_, n, me_, [&](uint32_t p) { return who.push_back(g_.members[p]), 0; });

    soloPeer_ = findSoloPeer();
    char* area = laneArea(w_.rank, area_);
    if (a_.broadcast) {
      auto* h = reinterpret_cast<LaneHeader*>(area);
      fillLane(h, a_.send(0), me_);
      h->tag.store(tag_, std::memory_order_release);
    } else {
      forSends(a_, n, me_, [&](uint32_t p) {
        auto* h = reinterpret_cast<LaneHeader*>(area + p * laneBytes_);
        fillLane(h, a_.send(p), p);
        h->tag.store(tag_, std::memory_order_release);
        return 0;
      });
    }
    sc_.out.seal(a_.broadcast, &lanes_.readers(area_), a_.skipEmpty);
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
    if (listed()) {
      wait::wakeFence();
      forSends(a_, g_.size(), me_, [&](uint32_t p) { return wait::wakeIfSleeping(w_.seg.ctl(g_.members[p])), 0; });
      return;
    }
    wait::wakeAll(g_.members, me_, [&](uint32_t r) { return w_.seg.ctl(r); });
  }
  // The round lists its peers (Pairs::outPeers): only they may sleep on us.
  bool listed() const { return !a_.broadcast && a_.outPeers() && a_.inPeers(); }

  // ---- consuming -----------------------------------------------------------

  void initConsumer() {
    const uint32_t n = g_.size();
    const uint64_t off = a_.broadcast ? 0 : me_ * laneBytes_;
    sc_.from.clear();
    sc_.skipped.clear();
    forReceives(a_, n, me_, [&](uint32_t q) {
      if (!a_.allPairs && !a_.receives(q)) return 0;
      std::vector<From>& list = a_.skipEmpty && a_.recv(q).bytes() == 0 ? sc_.skipped : sc_.from;
      list.push_back({q, kWaitLane, peerLane(g_.members[q], area_, off), 0, 0, 0, 0, {}, false, {}});
      if (a_.ahead) list.back().ring = peerLane(g_.members[q], segment::aheadArea(seq_), a_.ringOffset(q, me_, n));
      return 0;
    });
  }

  bool consumerDone() const { return sc_.from.empty(); }

  // The lane of sender f to look at: its ring lane once that carries this
  // operation's tag (Pairs::ahead), else the area's.
  const LaneHeader* current(const From& f) const {
    return f.ring && f.ring->tag.load(std::memory_order_acquire) == tag_ ? f.ring : f.lane;
  }

  bool ready(const From& f) const {
    if (f.stage == kWaitLane) {
      const LaneHeader* l = current(f);
      return l->tag.load(std::memory_order_acquire) == tag_ && laneComplete(l, tag_);
    }
    return chunkReady(g_.members[f.teamRank], f.chunk, seq_, ctx_);
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
    mismatch_ = theirs > ours ? err::kTruncate : err::kCount;
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
    const uint32_t q = g_.members[f.teamRank];
    while (ready(f)) {
      if (f.stage == kWaitLane) {
        f.lane = current(f);  // (a ring lane is always inline)
        lanes_.noteEntered(ctx_, q, seq_);
        const uint64_t raw = f.lane->bytes;
        const uint64_t bytes = raw & ~segment::kLaneKinds;
        Block rb = a_.recv(f.teamRank);
        const uint64_t want = rb.bytes();
        if (bytes != want) noteMismatch(f.teamRank, bytes, want);
        f.use = std::min(bytes, want);
        f.multi = a_.receivesParts(f.teamRank);
        if (f.multi)
          f.parts = PartsCursor(&a_, f.teamRank, false);
        else
          f.cursor = dt::Cursor(rb.buf, rb.count, rb.type);
        *moved = true;
        if (raw & segment::kLaneInline) {
          readInline(inlineSource(f.lane, q), bytes, f.use,  // (the lane, or the wide slot it names)
                     [&](uint64_t off, const char* s, uint64_t len) { f.unpack(off, s, len); });
          return true;
        }
        const uint64_t where = laneWord(f.lane);
        if (raw & segment::kLanePull) {
          *rc = f.multi || (raw & segment::kLaneParts) ? pullParts(f, raw) : pull(q, where, f.cursor, f.use);
          return true;
        }
        if (bytes == 0) return true;
        f.begin = where;
        f.end = where + bytes;
        f.chunk = f.begin / slot_;
        f.stage = kStream;
        continue;
      }
      const uint32_t s = slotOf(f.chunk, seq_);
      segment::SlotHeader* h = w_.seg.slot(q, s);
      if (h->seq != seq_ || h->ctx != ctx_) return false;  // a stale tag that happens to match: keep waiting
      const char* payload = w_.seg.slotPayload(q, s);
      const uint64_t cb = f.chunk * slot_;
      const uint64_t lo = std::max(cb, f.begin);
      const uint64_t hi = std::min(cb + slot_, f.end);
      const uint64_t pos = lo - f.begin;  // position within the pair's bytes
      if (pos < f.use) f.unpack(pos, payload + (lo - cb), std::min(hi, f.begin + f.use) - lo);
      ackChunk(q, s);
      wait::wakePeer(w_.seg.ctl(q));
      *moved = true;
      if (hi >= f.end) return true;
      ++f.chunk;
    }
    return false;
  }

  // Pulls a pair's bytes when either side has several parts: a list of parts
  // (kLaneParts) into receive parts of the same lengths, each part by
  // itself; one block into our parts, piece by piece.  A list that does not
  // match our parts is an error (err::kTruncate or err::kCount) and nothing
  // is delivered.
  int pullParts(const From& f, uint64_t raw) {
    const uint32_t p = f.teamRank, q = g_.members[p];
    const uint32_t mine = a_.multiPart ? a_.recvParts(p) : 1;
    auto part = [&](uint32_t k) { return a_.multiPart ? a_.recvPart(p, k) : a_.recv(p); };
    const char* body = laneBody(f.lane);
    if (!(raw & segment::kLaneParts)) {
      const uint64_t where = laneWord(f.lane);
      uint64_t pos = 0;
      for (uint32_t k = 0; k < mine && pos < f.use; ++k) {
        const Block b = part(k);
        const uint64_t len = std::min(b.bytes(), f.use - pos);
        dt::Cursor c(b.buf, b.count, b.type);
        if (len) SHMCOLL_CHECK(pull(q, where + pos, c, len));
        pos += b.bytes();
      }
      return 0;
    }
    uint64_t k = 0;
    std::memcpy(&k, body, sizeof k);
    const uint64_t room = (laneBytes_ - segment::kLaneHeaderBytes - sizeof k) / (2 * sizeof(uint64_t));
    uint64_t list[2];
    if (k > room) {  // (not a list this library wrote)
      noteSplit(p, k, 0, 0, 0);
      return 0;
    }
    for (uint32_t j = 0; j < std::max<uint64_t>(k, mine); ++j) {
      uint64_t theirs = 0;
      if (j < k) {
        std::memcpy(&list, body + sizeof k + j * sizeof list, sizeof list);
        theirs = list[1];
      }
      const uint64_t ours = j < mine ? part(j).bytes() : 0;
      if (theirs != ours) {
        noteSplit(p, k, j, theirs, ours);
        return 0;
      }
    }
    for (uint32_t j = 0; j < k; ++j) {
      std::memcpy(&list, body + sizeof k + j * sizeof list, sizeof list);
      if (list[1] == 0) continue;
      const Block b = part(j);
      dt::Cursor c(b.buf, b.count, b.type);
      SHMCOLL_CHECK(pull(q, list[0], c, list[1]));
    }
    return 0;
  }

  void noteSplit(uint32_t p, uint64_t k, uint32_t j, uint64_t theirs, uint64_t ours) {
    if (mismatch_) return;
    mismatch_ = theirs > ours ? err::kTruncate : err::kCount;
    char buf[256];
    snprintf(buf, sizeof buf,
             "rank %u sent %llu blocks to rank %u, block %u of %llu bytes, but its receive block %u holds %llu bytes "
             "(type signatures differ between sender and receiver)",
             p, (unsigned long long)k, me_, j, (unsigned long long)theirs, j, (unsigned long long)ours);
    mismatchReason_ = buf;
  }

  // Whether the copies into the receive buffer should bypass the cache: when
  // what the round touches (this rank's send and receive bytes, times the
  // ranks that share each core) is at least twice the non-temporal threshold
  // (by default 3/4 of a core's share of the L3, copy/copy.cc), the received
  // data would only push the rest out of the cache before anybody reads it.
  // Measured (docs/perf-log/notebook.md): at 8 ranks on 2 cores, alltoall 1 MiB; at 32,
  // alltoall and allgather from 64 KiB.  At 2 ranks up to 1 MiB, and at 8
  // ranks at 64 KiB, non-temporal stores lost.
  bool receiveNt() const {
    const uint64_t nt = copy::ntThreshold();
    if (nt == SIZE_MAX) return false;
    const uint32_t n = g_.size();
    uint64_t bytes = 0;
    for (uint32_t p = 0; p < n; ++p) {
      if (a_.receivesFrom(p)) bytes += a_.recv(p).bytes();
      if (!a_.broadcast && a_.sendsTo(p)) bytes += a_.send(p).bytes();
    }
    if (a_.broadcast) bytes += a_.send(0).bytes();
    const uint32_t cores = std::max<uint32_t>(1, w_.seg.header()->ncores);
    const double perCore = std::max(1.0, static_cast<double>(w_.size) / cores);
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

  World& w_;
  Lanes& lanes_;
  const Group& g_;
  const Pairs& a_;
  RoundParams prm_;
  RoundScratch& sc_;
  uint64_t seq_;
  uint32_t me_ = 0, ctx_ = 0, area_ = 0;
  uint64_t slot_ = 0, tag_ = 0, laneBytes_ = 0, inlineMax_ = 0;
  uint32_t soloPeer_ = UINT32_MAX;  // findSoloPeer()
  bool wakePending_ = false;        // lanes written, their readers not woken yet
  bool ntRecv_ = false;             // receiveNt()
  int mismatch_ = 0;
  std::string mismatchReason_, statusReason_;
};

}  // namespace

int selfCopy(const Block& s, const Block& r) {
  uint64_t sb = s.bytes(), rb = r.bytes();
  int rc = 0;
  if (sb != rb)
    rc = fail(sb > rb ? err::kTruncate : err::kCount,
              "this rank sends %llu bytes to itself but its receive block holds %llu bytes", (unsigned long long)sb,
              (unsigned long long)rb);
  uint64_t n = std::min(sb, rb);
  if (n == 0) return rc;
  if (s.buf == r.buf && s.type == r.type && s.count == r.count) return rc;  // in place
  if (s.type->contiguous && r.type->contiguous) {                           // (no cursors needed)
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

int selfCopyParts(const Pairs& a, uint32_t me) {
  const uint32_t ns = a.multiPart ? a.sendParts(me) : 1, nr = a.multiPart ? a.recvParts(me) : 1;
  if (ns <= 1 && nr <= 1) return selfCopy(a.send(me), a.recv(me));
  const Block none{nullptr, 0, dt::byteType()};
  int status = 0;
  std::string reason;
  for (uint32_t k = 0; k < std::max(ns, nr); ++k) {
    const int rc = selfCopy(k < ns ? a.sendPart(me, k) : none, k < nr ? a.recvPart(me, k) : none);
    if (rc && !status) {
      status = rc;
      reason = lastReason();
    }
  }
  return status ? fail(status, "%s", reason.c_str()) : 0;
}

int runRound(const Group& group, uint64_t seq, const Pairs& pairs, const RoundParams& prm, RoundScratch& scratch) {
  Round r(group, seq, pairs, prm, scratch);
  return r.go();
}

int finishInlineRound(const Group& group, const Pairs& pairs, const InlineLeftovers& left, RoundScratch& scratch) {
  Round r(group, left.seq, pairs, {}, scratch);
  return r.resume(left);
}

}  // namespace shmcoll::transport
