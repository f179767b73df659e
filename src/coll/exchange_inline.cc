// The non-template parts of the inline path (exchange_inline.h has how it works).
#include "coll/exchange_inline.h"

#include <mpi.h>

#include <cstdio>

#include "dt/datatype.h"

namespace shmcoll::coll {

namespace {

// Reused by every inline exchange of this process, so none allocates.
struct InlineScratch {
  std::vector<uint32_t> pending, rest;
};
constinit InlineScratch* gScratch = nullptr;

InlineScratch& scratch() {
  if (!gScratch) [[unlikely]]
    gScratch = new InlineScratch;
  return *gScratch;
}

}  // namespace

int inlineBegin(Team& team, const ExchangeArgs& a, InlineRun* r) {
  Engine& e = engine();
  const uint32_t n = team.size();
  InlineScratch& sc = scratch();
  sc.pending.clear();
  sc.rest.clear();
  r->team = &team;
  r->pending = &sc.pending;
  r->rest = &sc.rest;
  r->seq = team.next();
  r->tag = segment::laneTag(r->seq, team.ctxId);
  r->area = static_cast<uint32_t>(r->seq & 1);
  r->laneBytes = a.broadcast ? e.seg.laneAreaBytes() : e.seg.laneBytes(n);
  r->mine = e.seg.laneArea(e.rank, r->area);
  // The area is free once every reader of its previous use finished that
  // operation (exchange_streamed.cc: usually known from the lanes read since).
  SHMCOLL_CHECK(reclaimLaneArea(r->area));
  LaneUse& use = e.laneUse[r->area];
  // Every other member reads this use.
  use.readers.resize(n - 1);
  for (uint32_t p = 0, k = 0; p < n; ++p)
    if (p != team.rank) use.readers[k++] = team.members[p];
  use.ctx = team.ctxId;
  use.seq = r->seq;
  return 0;
}

void inlineMismatch(InlineRun& r, uint32_t q, uint64_t theirs, uint64_t ours) {
  if (r.status) return;
  r.status = theirs > ours ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
  char buf[256];
  snprintf(buf, sizeof buf,
           "rank %u sent %llu bytes to rank %u but the receive block holds %llu bytes "
           "(type signatures differ between sender and receiver)",
           q, (unsigned long long)theirs, r.team->rank, (unsigned long long)ours);
  r.reason = buf;
}

void inlinePack(char* lane, const Block& b, uint64_t bytes, uint64_t tag) {
  dt::Cursor cur(b.buf, b.count, b.type);
  writeInline(lane, bytes, tag, true, [&](uint64_t off, char* d, uint64_t n) {
    if (n) cur.pack(off, d, n);
  });
}

void inlineUnpack(const Block& b, const char* lane, uint64_t bytes, uint64_t use) {
  dt::Cursor cur(b.buf, b.count, b.type);
  readInline(lane, bytes, use, [&](uint64_t off, const char* s, uint64_t n) {
    if (n) cur.unpack(off, s, n);
  });
}

int inlineEnd(InlineRun& r, const ExchangeArgs& a) {
  Engine& e = engine();
  Team& team = *r.team;
  const uint32_t n = team.size(), me = team.rank;
  if (!r.rest->empty()) [[unlikely]] {
    // (inlineRest reuses the streamed exchange's scratch, not ours)
    if (int rc = inlineRest(r, a, r.rest->data(), static_cast<uint32_t>(r.rest->size()))) {
      if (rc != MPI_ERR_TRUNCATE && rc != MPI_ERR_COUNT) return rc;  // the job is ending, or a pull failed
      if (!r.status) {
        r.status = rc;
        r.reason = lastReason();
      }
    }
  }
  // Everything addressed to us has been read: release the senders.  The
  // exchange is a full fence, which the wake-up check after it needs.
  e.seg.ctx(e.rank, team.ctxId)->consumed.v.exchange(r.seq, std::memory_order_seq_cst);
  for (uint32_t i = 0; i < n; ++i)
    if (i != me) channel::wakeIfSleeping(e.seg.ctl(team.members[i]));
  // Every peer announced this operation, so it is done reading the other
  // area: ask for its lines now (see exchange_inline.h).  As many lines per
  // lane as this operation wrote, at most 8 (a 440-byte block), and at most
  // 32 lanes.
  if (copy::hasPrefetchW()) {
    char* other = e.seg.laneArea(e.rank, r.area ^ 1);
    const uint64_t lines = std::min<uint64_t>(segment::laneInlineLines(r.lastBytes), 8);
    if (a.broadcast) {
      for (uint64_t l = 0; l < lines; ++l) copy::prefetchW(other + l * 64);
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

}  // namespace shmcoll::coll
