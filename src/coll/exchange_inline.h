// Algorithm: inline -- the exchange's path for small blocks, when every block
// this rank sends fits its lane.
//
// How it works.  The lanes of a transport round (transport/round.h has the
// protocol, transport/lanes.h the rule for reusing a lane area), nothing else:
// the rank takes the operation's sequence number, makes sure the lane area of
// that parity is free, writes each peer's block behind the lane header and
// release-stores the tag, copies its own block, then reads each peer's lane as
// it appears: first every lane already written, then (after waking readers of
// its own lanes that sleep) the others in turn; a peer it expects no bytes
// from is not waited for (ExchangeArgs::skipEmpty).  Inline lanes need no
// answer, so waiting for one peer never holds up another.  At the end it raises its
// `consumed` line, wakes whoever sleeps on it, and asks for the lines of the
// other lane area in exclusive state (PREFETCHW): every peer has announced
// this operation, so each has finished reading that area, and the next
// operation's lane stores then find their lines in this core's cache instead
// of invalidating the readers' copies while the readers wait.
//
// Lanes keep the round's format, so a lane from a peer that did not send
// inline (its block did not fit: an erroneous program whose counts disagree,
// or different SHMCOLL_INLINE_MAX settings) is handed to the round's consumer
// (transport::finishInlineRound), and a byte count that differs from the
// receive block's gives err::kTruncate or err::kCount after the common part
// is delivered, as there.
//
// Why a separate path.  With two ranks on two cores a small collective takes
// about one cache-line transfer plus the instructions both ranks run between
// reading the peer's lane and writing the next one, and those instructions
// are on the critical path one for one (docs/perf-log/notebook.md).  This path is a
// template over the argument class, so per-peer blocks are computed inline
// (no virtual call), and it keeps no per-operation state beyond the lane area's
// readers.  With MPI_IN_PLACE it needs no copy of the receive buffer: every
// lane is written before any peer's block is read.
//
// Cost per rank for blocks of b bytes to each of n - 1 peers: n - 1 lane
// writes and n - 1 lane reads of segment::laneInlineLines(b) lines each (1 up
// to 48 bytes, then one more per 56), two copies per byte, one wake-up check
// per peer and one prefetch per peer lane line.  Up to 440 bytes, the tag goes
// out with the first line and every later line carries its own stamp, so a
// reader copies lines as they arrive rather than after the last one.  A
// sparse round that lists its peers (transport::Pairs::outPeers: the
// neighbourhood collectives) costs the same per neighbour and touches no
// other rank's lines: its loops, wake-ups and prefetches walk the lists, so a
// call costs O(degree) instead of O(n).  A pair with several blocks
// (transport::Pairs::multiPart) fills one lane with them end to end.
//
// The broadcast ring.  With two lane areas a sender is at most one call
// ahead of its slowest reader: the area of call s + 2 is the area of call s.
// A rooted collective's senders can do better, because they wait for nobody:
// the root of an MPI_Bcast, the other ranks of an MPI_Gather(v) or
// MPI_Reduce (transport::Pairs::ahead).  Such a rank, when it writes one lane
// of at most 4 KiB (and SHMCOLL_INLINE_MAX: InlineGate::ahead), writes it
// into lane seq % 64 of its ring (segment::aheadArea), which it may rewrite
// once that lane's readers have finished call seq - 64 (the claim, as for
// an area).  MPI_Scatter's root
// writes a lane to each of up to 68 readers: it splits the ring lane's 68
// lines among them (Pairs::aheadSplit, segment::aheadSplitBytes: 34 lines
// each for 2 readers, 22 for 3, 17 for 4, ..., 1 for 35 to 68) when every
// block fits its piece, and each reader knows its piece from its rank and
// the root's.  Readers look in the
// sender's ring lane and in the parity area's lane (a sender whose block did
// not fit, or with SHMCOLL_RUN_AHEAD=0, uses the area), whichever carries the
// call's tag.  With more ranks than cores this is what counts: a root that
// returns from many broadcasts in its time slice lets each reader take them
// all in its own, where before every call cost a round of context switches
// (at 8 ranks on 2 cores an 8-byte broadcast back to back went from 22-25 us
// with two areas to 3-4.5 with a ring of 16 lanes and 1.1-1.3 with 64; 32
// lanes gave 1.7-3.8, 128 gave 2.3-2.4: docs/PERFORMANCE.md).
//
// The wide slots.  Such a sender whose block is too large for a ring lane
// but still goes inline (InlineGate::aheadWide: private memory up to 12 KiB)
// writes it into its next wide slot (segment::kWideSlots, taken in turn and
// claimed like an area), in the lane format, and puts in the call's ring
// lane only a header of kind kLaneInline | kLaneWide naming the slot
// (putAny); readers look in the ring lane as before and follow the header
// (transport::inlineSource).  A scatter's root splits a slot among its
// readers as it splits a ring lane (segment::wideSplitBytes: 6192 bytes each
// for 2, 4144 for 3, 752 for 16), each reader's header in its piece of the
// ring lane.
//
// Chosen (registered as "inline") whenever every block this rank sends fits
// (SHMCOLL_INLINE_MAX, capped by the lane; 4 KiB by default up to 2 ranks a
// core: coll/registry.cc), on intracommunicators, in blocking
// calls, for operations in which every pair exchanges (alltoall family,
// allgather family, the one-exchange allreduce) and for sparse ones: the
// neighbourhood collectives, the rooted collectives (bcast, gather(v),
// scatter(v)) and the reductions' inner rounds (lanes written only to the
// ranks this one sends to, read only from those it receives from, and only
// those woken: a rank that talks to the root alone touches the root's lines
// alone); the blocking entry point
// (coll/dispatch.h) tests that before asking the registry, and forcing
// another algorithm (or SHMCOLL_PULL=always) closes its gate.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "coll/op.h"
#include "coll/team.h"
#include "common/status.h"
#include "copy/copy.h"
#include "transport/block.h"
#include "transport/lane.h"
#include "transport/lanes.h"
#include "transport/parts.h"
#include "transport/pull.h"
#include "transport/round.h"
#include "wait/wait.h"

namespace shmcoll::coll {

using transport::Block;

// What the non-template parts of one inline exchange share.
struct InlineRun {
  Team* team = nullptr;
  uint64_t seq = 0, tag = 0;
  uint32_t area = 0;
  uint64_t laneBytes = 0;                    // distance between lanes (a whole area for broadcast)
  char* mine = nullptr;                      // this rank's lane area for the operation
  uint64_t lastBytes = 0;                    // bytes of the last lane written (sizes the prefetch)
  int status = 0;                            // first error: the own block's copy or a count mismatch
  std::string reason;                        // ... and why
  std::vector<uint32_t>* pending = nullptr;  // peers whose lanes were not written yet
  std::vector<uint32_t>* rest = nullptr;     // peers whose lanes were not inline
  uint64_t* done = nullptr;                  // Lanes::doneOn the team's context, by world rank
  uint32_t sends = 0;                        // lanes this rank writes (a broadcast's: 0 or its readers)
  bool ahead = false;                        // this rank writes its lanes into its ring
  uint64_t ringStride = 0;                   // ... split among its readers (Pairs::aheadSplit), this far apart
  char* wide = nullptr;                      // ... their payloads in this wide slot (else null)
  uint64_t wideAt = 0;                       // ... at this offset from the first wide slot
  uint64_t wideStride = 0;                   // ... split among the readers, this far apart
  // This rank's lane to group rank p.
  char* laneTo(uint32_t p, uint32_t me) const {
    return ahead ? mine + segment::aheadPieceOffset(me, p, ringStride) : mine + p * laneBytes;
  }
};

// The largest block op's inline path takes on `team` (0 when it must not
// run), for a lane per reader or one shared lane (broadcast).
void fillInlineGate(Team& team, Op op);
void noteInline(Op op, uint32_t n);
inline const InlineGate& inlineGate(Team& team, Op op) {
  InlineGate& g = team.gate(op);
  if (!g.filled) [[unlikely]]
    fillInlineGate(team, op);
  return g;
}
// Records a byte count that differs from the receive block's (the first one wins).
void inlineMismatch(InlineRun& r, uint32_t q, uint64_t theirs, uint64_t ours);
// Packs or unpacks a non-contiguous block (rare on this path).
void inlinePack(char* lane, const Block& b, uint64_t bytes, uint64_t tag);
void inlineUnpack(const Block& b, const char* lane, uint64_t bytes, uint64_t use);

// Takes the sequence number and the lane area (waiting for its readers if
// needed) and fills `r`; a sender of one lane takes a lane of its ring when
// the operation allows it (Pairs::ahead) and its block is at most g.ahead
// bytes.  (Templates over the final argument class, as inlineExchange: the
// pairs' loops then call no virtual function.)
template <class A>
int inlineBegin(Team& team, const A& a, const InlineGate& g, InlineRun* r) {
  const uint64_t aheadCap = g.ahead;
  transport::Lanes& lanes = transport::lanes();
  const segment::View& seg = transport::world().seg;
  const uint32_t n = team.size();
  TeamCache& sc = team.cache();
  sc.pending.clear();
  sc.rest.clear();
  r->team = &team;
  r->pending = &sc.pending;
  r->rest = &sc.rest;
  r->seq = team.next();
  r->done = lanes.doneOn(team.lines).data();
  r->tag = segment::laneTag(r->seq, team.lines);
  r->area = static_cast<uint32_t>(r->seq & 1);
  r->laneBytes = a.broadcast ? seg.laneAreaBytes() : g.laneBytes;
  bool wide = false;          // (the wide slots: segment::kWideSlots)
  if (a.ahead && aheadCap) {  // (the broadcast ring, above)
    if (a.aheadSplit) {
      // A lane to each other member (the root; the others send nothing), each
      // fitting its piece of the ring lane, or of a wide slot.
      const uint64_t piece = segment::aheadSplitBytes(n - 1);
      uint32_t count = 0;
      uint64_t most = 0;
      const bool parts = piece && transport::forSends(a, n, team.rank, [&](uint32_t p) {
                           ++count;
                           most = std::max(most, a.send(p).bytes());
                           return a.sendsParts(p) ? 1 : 0;
                         });
      const bool each = piece && !parts && count == n - 1;
      const uint64_t widePiece = segment::wideSplitBytes(n - 1);
      r->ahead = each && most <= std::min(aheadCap, segment::laneInlineCapacity(piece));
      wide = each && !r->ahead && most <= std::min(g.aheadWide, segment::laneInlineCapacity(widePiece));
      r->ringStride = r->ahead || wide ? piece : 0;
      r->wideStride = wide ? widePiece : 0;
    } else {
      // One lane to write (a broadcast's, or a lane to one peer) that fits.
      uint32_t to = 0, count = 0;
      transport::forSends(a, n, team.rank, [&](uint32_t p) {
        to = p;
        return ++count > 1 ? 1 : 0;
      });
      const bool one = (count == 1 || (a.broadcast && count > 0)) && !a.sendsParts(to);
      const uint64_t bytes = one ? a.send(to).bytes() : UINT64_MAX;
      r->ahead = bytes <= aheadCap;
      wide = !r->ahead && bytes <= g.aheadWide;
    }
    r->ahead = r->ahead || wide;
    if (r->ahead) r->area = segment::aheadArea(r->seq);
  }
  const uint32_t self = transport::world().rank;
  r->mine = transport::laneArea(self, r->area);
  // The area is free once every reader of its previous use finished that
  // operation (usually known from the lanes read since).
  SHMCOLL_CHECK(lanes.claim(r->area, team.lines, r->seq));
  std::vector<uint32_t>& readers = lanes.readers(r->area);  // (every other member, or those we send to)
  transport::forSends(a, n, team.rank, [&](uint32_t p) {
    readers.push_back(team.members[p]);
    ++r->sends;
    return 0;
  });
  if (wide) {  // (the next wide slot, taken in turn; the same readers)
    const uint32_t w = lanes.nextWide++ % segment::kWideSlots;
    SHMCOLL_CHECK(lanes.claim(segment::kWideArea0 + w, team.lines, r->seq));
    lanes.readers(segment::kWideArea0 + w) = readers;
    r->wide = transport::laneArea(self, segment::kWideArea0 + w);
    r->wideAt = uint64_t{w} * segment::kWideBytes;
  }
  return 0;
}

// Finishes, once every peer's lane was read or is in r.rest: the round's
// consumer for r.rest, `consumed`, wake-ups, the prefetch; returns the status.
template <class A>
int inlineEnd(InlineRun& r, const A& a) {
  const transport::World& w = transport::world();
  Team& team = *r.team;
  const uint32_t n = team.size(), me = team.rank;
  if (!r.rest->empty()) [[unlikely]] {
    transport::InlineLeftovers left{r.seq,       r.tag,          r.area,
                                    r.laneBytes, r.rest->data(), static_cast<uint32_t>(r.rest->size())};
    if (int rc = transport::finishInlineRound(team, a, left, team.cache().roundScratch())) {
      if (rc != err::kTruncate && rc != err::kCount) return rc;  // the job is ending, or a pull failed
      if (!r.status) {
        r.status = rc;
        r.reason = lastReason();
      }
    }
  }
  // Everything addressed to us has been read: release the senders, then the
  // fence the wake-up check needs (none where sleepers run membarrier:
  // wait/wait.h).  Who may sleep on us: readers of our lanes, and senders
  // waiting for `consumed` (with lists, our out- and in-peers: O(degree)).
  w.seg.ctx(w.rank, team.lines)->consumed.v.store(r.seq, std::memory_order_release);
  wait::wakeFence();
  // (A sparse round -- a rooted collective, a reduction's inner round --
  // walks the pairs it has, so a rank that talks only to the root wakes
  // only the root.)
  const bool walk = !a.allPairs || (!a.broadcast && a.outPeers() && a.inPeers());
  if (walk) {
    auto wake = [&](uint32_t p) {
      wait::wakeIfSleeping(w.seg.ctl(team.members[p]));
      return 0;
    };
    const std::vector<uint32_t>*outs = a.outPeers(), *ins = a.inPeers();
    if (outs && ins) {
      // Both lists increase: merged, so that a neighbour on both (every one
      // of a symmetric topology) is woken once, not twice.  (A second
      // wake-up of a rank that has not run yet is one more futex call.)
      size_t i = 0, j = 0;
      while (i < outs->size() || j < ins->size()) {
        const uint32_t o = i < outs->size() ? (*outs)[i] : UINT32_MAX, v = j < ins->size() ? (*ins)[j] : UINT32_MAX;
        const uint32_t p = std::min(o, v);
        const bool take = (o == p && a.sendsTo(p)) || (v == p && transport::receivesFrom(a, p));
        i += o == p;
        j += v == p;
        if (take && p != me) wake(p);
      }
    } else {
      transport::forSends(a, n, me, wake);
      transport::forReceives(a, n, me, [&](uint32_t p) { return transport::receivesFrom(a, p) ? wake(p) : 0; });
    }
  } else {
    for (uint32_t i = 0; i < n; ++i)
      if (i != me) wait::wakeIfSleeping(w.seg.ctl(team.members[i]));
  }
  // Every peer announced this operation, so it is done reading the other
  // area: ask for its lines now (see exchange_inline.h).  As many lines per
  // lane as this operation wrote, at most 8 (a 440-byte block), and at most
  // 32 lanes.
  if (r.sends && copy::hasPrefetchW()) {  // (a rank that wrote no lane has none to prepare)
    char* other = transport::laneArea(w.rank, r.ahead ? segment::aheadArea(r.seq + 1) : r.area ^ 1);
    const uint64_t lines = std::min<uint64_t>(segment::laneInlineLines(r.lastBytes), 8);
    if (r.ringStride) {  // (a split ring lane: as many lines of each reader's piece)
      const uint64_t each = std::min(lines, r.ringStride / 64);
      for (uint64_t at = 0; at < (n - 1) * r.ringStride; at += r.ringStride)
        for (uint64_t l = 0; l < each; ++l) copy::prefetchW(other + at + l * 64);
    } else if (a.broadcast || r.ahead) {  // (one lane)
      for (uint64_t l = 0; l < lines; ++l) copy::prefetchW(other + l * 64);
    } else if (walk) {
      uint32_t left = 32;
      transport::forSends(a, n, me, [&](uint32_t p) {
        for (uint64_t l = 0; l < lines; ++l) copy::prefetchW(other + p * r.laneBytes + l * 64);
        return --left == 0 ? 1 : 0;
      });
    } else {
      const uint32_t peers = std::min<uint32_t>(n - 1, 32);
      for (uint32_t d = 1; d <= peers; ++d) {
        const uint32_t p = me + d < n ? me + d : me + d - n;
        for (uint64_t l = 0; l < lines; ++l) copy::prefetchW(other + p * r.laneBytes + l * 64);
      }
    }
  }
  if (r.status) [[unlikely]]
    return fail(r.status, "%s", r.reason.c_str());
  return 0;
}

namespace detail {

// The tag goes out right after the lane's first line (writeInline).
inline void putLane(InlineRun& r, char* lane, const Block& b) {
  const uint64_t bytes = b.bytes();
  if (b.type->contiguous) {
    const char* src = b.buf + b.type->trueLb;
    transport::writeInline(lane, bytes, r.tag, true,
                           [src](uint64_t off, char* d, uint64_t n) { transport::copyPiece(d, src + off, n); });
  } else {
    inlinePack(lane, b, bytes, r.tag);
  }
  r.lastBytes = bytes;
}

// The lane to group rank p (or the broadcast's, p unused) at `lane`: with a
// wide slot (InlineRun::wide), the payload in the lane format in p's piece of
// the slot, then a header that names it in `lane`, its tag stored last.
inline void putAny(InlineRun& r, char* lane, uint32_t p, uint32_t me, const Block& b) {
  if (!r.wide) [[likely]] {
    putLane(r, lane, b);
    return;
  }
  const uint64_t at = r.wideStride ? segment::aheadPieceOffset(me, p, r.wideStride) : 0;
  putLane(r, r.wide + at, b);
  auto* h = reinterpret_cast<segment::LaneHeader*>(lane);
  const uint64_t where = r.wideAt + at;
  h->bytes = b.bytes() | segment::kLaneInline | segment::kLaneWide;
  std::memcpy(transport::laneBody(h), &where, sizeof where);
  h->tag.store(r.tag, std::memory_order_release);
}

// A pair with several parts (transport::Pairs::multiPart): end to end, the
// lane of one block of their total size.
inline void putParts(InlineRun& r, char* lane, const transport::Pairs& a, uint32_t p) {
  const uint64_t bytes = a.send(p).bytes();
  transport::PartsCursor pc(&a, p, true);
  transport::writeInline(lane, bytes, r.tag, true, [&](uint64_t off, char* d, uint64_t n) { pc.pack(off, d, n); });
  r.lastBytes = bytes;
}

// Where peer q may put its lane for this operation in its ring (Pairs::ahead), else null.
inline const segment::LaneHeader* ringLane(const InlineRun& r, const transport::Pairs& a, uint32_t q) {
  if (!a.ahead) return nullptr;
  return transport::peerLane(r.team->members[q], segment::aheadArea(r.seq),
                             a.ringOffset(q, r.team->rank, r.team->size()));
}

// Peer q's lane for this operation once it is there, else null: in its ring
// lane `ring` (ringLane), or in the lane area of the operation's parity at `off`.
inline const segment::LaneHeader* arrived(const InlineRun& r, const segment::LaneHeader* ring, uint32_t q,
                                          uint64_t off) {
  if (ring && ring->tag.load(std::memory_order_acquire) == r.tag) return ring;
  const auto* lane = transport::peerLane(r.team->members[q], r.area, off);
  return lane->tag.load(std::memory_order_acquire) == r.tag ? lane : nullptr;
}

// (a block of at most kLaneFirstPayload bytes, copied here rather than in
// a call: copy::tiny up to 32 bytes, else the first and last 32)
[[gnu::always_inline]] inline void smallCopy(char* d, const char* s, uint64_t n) {
  static_assert(segment::kLaneFirstPayload <= 2 * copy::kTinyMax);
  if (n <= copy::kTinyMax)
    copy::tiny(d, s, n);
  else
    copy::detail::headTail<copy::kTinyMax>(d, s, n);
}
// The common lane of a small block, without the general calls: a
// contiguous block of at most segment::kLaneFirstPayload bytes, in the
// header's line (what putLane and writeInline do for it, inline).  False,
// nothing written, when the general path must write it.  With more ranks
// than cores every instruction of a call is one the core's other ranks wait
// for: an 8-byte MPI_Alltoall at 8 ranks on 2 cores took 3840-3894
// instructions a call (callgrind, the polls included), 3107-3168 with these
// two and transport::receivesFrom (docs/PERFORMANCE.md, 2026-12-02).
inline bool putSmall(InlineRun& r, char* lane, const Block& b) {
  const uint64_t bytes = b.bytes();
  if (r.wide || !b.type->contiguous || bytes > segment::kLaneFirstPayload) return false;
  auto* h = reinterpret_cast<segment::LaneHeader*>(lane);
  smallCopy(lane + segment::kLaneHeaderBytes, b.buf + b.type->trueLb, bytes);
  h->bytes = bytes | segment::kLaneInline;
  h->tag.store(r.tag, std::memory_order_release);
  r.lastBytes = bytes;
  return true;
}
// The same on the reading side (takeLane's common case): peer q's lane of a
// small inline block whose byte count is the receive block's, contiguous,
// in one piece.  False, nothing read, otherwise.
template <class A>
inline bool takeSmall(InlineRun& r, const A& a, uint32_t q, const segment::LaneHeader* lane) {
  const uint64_t raw = lane->bytes;
  const uint64_t bytes = raw & ~segment::kLaneKinds;
  if ((raw & segment::kLaneKinds) != segment::kLaneInline || bytes > segment::kLaneFirstPayload) return false;
  const Block b = a.recv(q);
  if (!b.type->contiguous || b.bytes() != bytes || a.receivesParts(q)) return false;
  transport::Lanes::noteEntered(r.done[r.team->members[q]], r.seq);  // (as takeLane)
  smallCopy(const_cast<char*>(b.buf) + b.type->trueLb, transport::laneBody(lane), bytes);
  return true;
}

template <class A>
int takeLane(InlineRun& r, const A& a, uint32_t q, const segment::LaneHeader* lane) {
  Team& t = *r.team;
  transport::Lanes::noteEntered(r.done[t.members[q]], r.seq);  // (it finished the earlier operations)
  const uint64_t raw = lane->bytes;
  if (!(raw & segment::kLaneInline)) [[unlikely]] {
    r.rest->push_back(q);
    return 0;
  }
  const uint64_t bytes = raw & ~segment::kLaneKinds;
  const Block b = a.recv(q);
  const uint64_t want = b.bytes();
  if (bytes != want) [[unlikely]]
    inlineMismatch(r, q, bytes, want);
  const uint64_t use = std::min(bytes, want);
  const char* l = transport::inlineSource(lane, t.members[q]);  // (the lane, or the wide slot it names)
  if (segment::laneStamped(bytes)) {
    // (where senders run ahead, the lane is usually written when its reader
    // comes; in an exchange the reader often comes first, and asking for lines
    // not yet written only costs the writer)
    if (a.ahead) transport::prefetchInline(l, bytes);
    SHMCOLL_CHECK(
        wait::waitUntil(transport::world().self(), [&] { return transport::inlineArrived(l, bytes, r.tag); }));
  }
  if (a.receivesParts(q)) [[unlikely]] {
    transport::PartsCursor pc(&a, q, false);
    transport::readInline(l, bytes, use, [&](uint64_t off, const char* s, uint64_t n) { pc.unpack(off, s, n); });
  } else if (b.type->contiguous) {
    char* dst = const_cast<char*>(b.buf) + b.type->trueLb;
    transport::readInline(l, bytes, use,
                          [dst](uint64_t off, const char* s, uint64_t n) { transport::copyPiece(dst + off, s, n); });
  } else {
    inlineUnpack(b, l, bytes, use);
  }
  return 0;
}

}  // namespace detail

// Whether block `b` goes in a lane of kind `kind` (InlineGate::cap): up to
// cap, and up to capStreamed when a round would not pull it but stream it
// through the slots (transport::pulledAnyway).  A block of several parts
// (Pairs::sendsParts) keeps cap.
inline bool fitsLane(const InlineGate& g, int kind, const Block& b, bool parts) {
  const uint64_t bytes = b.bytes();
  if (bytes <= g.cap[kind]) return true;
  if (parts || bytes > g.capStreamed[kind]) return false;
  if (!g.pulls || !b.type->contiguous) return true;
  return !transport::pulledAnyway(b.buf + b.type->trueLb, bytes, g.cmaMin);
}

// Runs the exchange on the inline path when every block this rank sends fits
// its lane: sets *taken and returns the status.  Otherwise leaves *taken
// false and touches nothing.  Call a.send / a.recv through a final class so
// they are inlined.
template <class A>
int inlineExchange(Team& team, const A& a, bool* taken) {
  const uint32_t n = team.size(), me = team.rank;
  if (n == 1) return 0;
  const InlineGate& g = inlineGate(team, a.op);
  if (!g.open) [[unlikely]]
    return 0;
  if (a.broadcast) {
    if (!fitsLane(g, 1, a.send(0), false)) return 0;
  } else if (transport::forSends(a, n, me,
                                 [&](uint32_t p) { return fitsLane(g, 0, a.send(p), a.sendsParts(p)) ? 0 : 1; })) {
    return 0;
  }
  *taken = true;
  if (g.verbose) [[unlikely]]
    noteInline(a.op, n);
  InlineRun r;
  SHMCOLL_CHECK(inlineBegin(team, a, g, &r));
  if (a.broadcast) {
    if (r.sends) detail::putAny(r, r.mine, 0, me, a.send(0));  // (an MPI_Bcast's readers write nothing)
  } else {
    transport::forSends(a, n, me, [&](uint32_t p) {
      if (a.sendsParts(p)) [[unlikely]]
        detail::putParts(r, r.laneTo(p, me), a, p);
      else if (const Block b = a.send(p); !detail::putSmall(r, r.laneTo(p, me), b))
        detail::putAny(r, r.laneTo(p, me), p, me, b);
      return 0;
    });
  }
  if (a.multiPart) [[unlikely]] {
    if (int rc = transport::selfCopyParts(a, me)) {
      r.status = rc;
      r.reason = lastReason();
    }
  } else {
    // (selfCopy's first case, without the call: this is the common one)
    // (Nothing when both are the same block: an MPI_Bcast's buffer, a gather's root in place.)
    const Block sb = a.broadcast ? a.send(0) : a.send(me), rb = a.recv(me);
    const uint64_t bytes = sb.bytes();
    const bool same = sb.buf == rb.buf && sb.type == rb.type && sb.count == rb.count;
    if (same) {
      // nothing to move
    } else if (bytes == rb.bytes() && sb.type->contiguous && rb.type->contiguous) {
      transport::moveFlat(sb, rb, bytes);
    } else if (int rc = transport::selfCopy(sb, rb)) [[unlikely]] {
      r.status = rc;
      r.reason = lastReason();
    }
  }
  // Every lane already written, in the order peers tend to arrive.
  const uint64_t off = a.broadcast ? 0 : me * r.laneBytes;
  SHMCOLL_CHECK(transport::forReceives(a, n, me, [&](uint32_t q) {
    if (!transport::receivesFrom(a, q)) return 0;  // (sparse pairs; transport::Pairs::skipEmpty)
    const segment::LaneHeader* lane = detail::arrived(r, detail::ringLane(r, a, q), q, off);
    if (!lane) {
      r.pending->push_back(q);
      return 0;
    }
    return detail::takeSmall(r, a, q, lane) ? 0 : detail::takeLane(r, a, q, lane);
  }));
  if (!r.pending->empty()) {
    // Readers of our lanes that went to sleep are woken before we wait.
    const segment::View& seg = transport::world().seg;
    if (a.allPairs && (a.broadcast || !a.outPeers())) {
      wait::wakeAll(team.members, me, [&](uint32_t w) { return seg.ctl(w); });
    } else {
      wait::wakeFence();
      transport::forSends(a, n, me, [&](uint32_t p) {
        wait::wakeIfSleeping(seg.ctl(team.members[p]));
        return 0;
      });
    }
    for (uint32_t q : *r.pending) {
      const segment::LaneHeader *lane = nullptr, *ring = detail::ringLane(r, a, q);
      SHMCOLL_CHECK(wait::waitUntil(transport::world().self(),
                                    [&] { return (lane = detail::arrived(r, ring, q, off)) != nullptr; }));
      if (!detail::takeSmall(r, a, q, lane)) SHMCOLL_CHECK(detail::takeLane(r, a, q, lane));
    }
  }
  return inlineEnd(r, a);
}

}  // namespace shmcoll::coll
