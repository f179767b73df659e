// The non-template parts of the inline path (exchange_inline.h has how it
// works), and its registry entry.
#include "coll/exchange_inline.h"

#include <cstdio>

#include "coll/registry.h"
#include "dt/datatype.h"

namespace shmcoll::coll {

int inlineBegin(Team& team, const transport::Pairs& a, const InlineGate& g, InlineRun* r) {
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
  r->tag = segment::laneTag(r->seq, team.lines);
  r->area = static_cast<uint32_t>(r->seq & 1);
  r->laneBytes = a.broadcast ? seg.laneAreaBytes() : g.laneBytes;
  if (a.ahead && aheadCap) {  // (the broadcast ring: exchange_inline.h)
    if (a.aheadSplit) {
      // A lane to each other member (the root; the others send nothing), each
      // fitting its piece of the ring lane.
      const uint64_t piece = segment::aheadSplitBytes(n - 1);
      const uint64_t cap = std::min(aheadCap, segment::laneInlineCapacity(piece));
      uint32_t count = 0;
      const bool fits = piece && !transport::forSends(a, n, team.rank, [&](uint32_t p) {
                          ++count;
                          return a.sendsParts(p) || a.send(p).bytes() > cap ? 1 : 0;
                        });
      r->ahead = fits && count == n - 1;
      r->ringStride = r->ahead ? piece : 0;
    } else {
      // One lane to write (a broadcast's, or a lane to one peer) that fits.
      uint32_t to = 0, count = 0;
      transport::forSends(a, n, team.rank, [&](uint32_t p) {
        to = p;
        return ++count > 1 ? 1 : 0;
      });
      const bool one = count == 1 || (a.broadcast && count > 0);
      r->ahead = one && !a.sendsParts(to) && a.send(to).bytes() <= aheadCap;
    }
    if (r->ahead) r->area = segment::aheadArea(r->seq);
  }
  r->mine = transport::laneArea(transport::world().rank, r->area);
  // The area is free once every reader of its previous use finished that
  // operation (usually known from the lanes read since).
  SHMCOLL_CHECK(lanes.claim(r->area, team.lines, r->seq));
  std::vector<uint32_t>& readers = lanes.readers(r->area);  // (every other member, or those we send to)
  transport::forSends(a, n, team.rank, [&](uint32_t p) {
    readers.push_back(team.members[p]);
    return 0;
  });
  return 0;
}

void inlineMismatch(InlineRun& r, uint32_t q, uint64_t theirs, uint64_t ours) {
  if (r.status) return;
  r.status = theirs > ours ? err::kTruncate : err::kCount;
  char buf[256];
  snprintf(buf, sizeof buf,
           "rank %u sent %llu bytes to rank %u but the receive block holds %llu bytes "
           "(type signatures differ between sender and receiver)",
           q, (unsigned long long)theirs, r.team->rank, (unsigned long long)ours);
  r.reason = buf;
}

void inlinePack(char* lane, const Block& b, uint64_t bytes, uint64_t tag) {
  dt::Cursor cur(b.buf, b.count, b.type);
  transport::writeInline(lane, bytes, tag, true, [&](uint64_t off, char* d, uint64_t n) {
    if (n) cur.pack(off, d, n);
  });
}

void inlineUnpack(const Block& b, const char* lane, uint64_t bytes, uint64_t use) {
  dt::Cursor cur(b.buf, b.count, b.type);
  transport::readInline(lane, bytes, use, [&](uint64_t off, const char* s, uint64_t n) {
    if (n) cur.unpack(off, s, n);
  });
}

int inlineEnd(InlineRun& r, const transport::Pairs& a) {
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
        const bool take = (o == p && a.sendsTo(p)) || (v == p && a.receivesFrom(p));
        i += o == p;
        j += v == p;
        if (take && p != me) wake(p);
      }
    } else {
      transport::forSends(a, n, me, wake);
      transport::forReceives(a, n, me, [&](uint32_t p) { return a.receivesFrom(p) ? wake(p) : 0; });
    }
  } else {
    for (uint32_t i = 0; i < n; ++i)
      if (i != me) wait::wakeIfSleeping(w.seg.ctl(team.members[i]));
  }
  // Every peer announced this operation, so it is done reading the other
  // area: ask for its lines now (see exchange_inline.h).  As many lines per
  // lane as this operation wrote, at most 8 (a 440-byte block), and at most
  // 32 lanes.
  if (copy::hasPrefetchW()) {
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

namespace {

constexpr uint32_t kInlineOps = opBit(Op::kAlltoall) | opBit(Op::kAlltoallv) | opBit(Op::kAlltoallw) |
                                opBit(Op::kAllgather) | opBit(Op::kAllgatherv) | opBit(Op::kBcast) |
                                opBit(Op::kGather) | opBit(Op::kGatherv) | opBit(Op::kScatter) | opBit(Op::kScatterv) |
                                kNeighborOps;

// The blocking exchanges try the gate before they dispatch (exchangeGeneral,
// innerExchange), so dispatch passes over this entry; it is registered so
// that it can be named, forced and reported, and run() serves a caller that
// dispatches without trying the gate (on the base class, virtual calls).
bool eligible(const Operation& o) {
  if (!o.args || o.team().size() == 1) return false;
  const InlineGate& g = inlineGate(o.team(), o.args->op);
  if (!g.open) return false;
  const uint64_t cap = g.cap[o.args->broadcast ? 1 : 0];
  const uint32_t n = o.team().size(), me = o.team().rank;
  if (o.args->broadcast) return o.args->send(0).bytes() <= cap;
  return !transport::forSends(*o.args, n, me, [&](uint32_t p) { return o.args->send(p).bytes() > cap ? 1 : 0; });
}

int run(Operation& o) {
  bool taken = false;
  const int rc = inlineExchange<ExchangeArgs>(o.team(), *o.args, &taken);
  return taken ? rc : fail(err::kIntern, "the inline path declined an operation it accepted");
}

}  // namespace

extern const Algorithm kInlineAlgorithm =
    Algorithm("inline", "every block in its lane, with its announcement (small blocks)", kInlineOps, kBlocking, run)
        .when(eligible)
        .costing([](const Operation&) { return 0.0; });

}  // namespace shmcoll::coll
