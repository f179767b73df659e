// The non-template parts of the inline path (exchange_inline.h has how it
// works), and its registry entry.
#include "coll/exchange_inline.h"

#include <cstdio>

#include "coll/registry.h"
#include "dt/datatype.h"

namespace shmcoll::coll {

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
