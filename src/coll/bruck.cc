// Algorithm: bruck -- alltoall and allgather of small blocks on large teams,
// in ceil(log2 n) rounds of one point-to-point message each way.
//
// How it works.  A schedule (sched.h) of point-to-point rounds, blocking or
// not.  Every block is b bytes (the receive block's size, the same on every
// rank of a correct program); the rank keeps n of them in one private buffer.
//   allgather: slot 0 starts as this rank's block; in round k (d = 2^k) the
//     rank sends slots [0, c) to rank me - d and receives slots [d, d + c)
//     from rank me + d, c = min(d, n - d).  Slot i then holds the block of
//     rank me + i, copied out at the end.
//   alltoall: slot i starts as the block for rank me + i; in round k the rank
//     sends the slots whose index has bit k set, packed, to rank me + d and
//     receives the same slots from rank me - d.  Slot i then holds the block
//     from rank me - i, copied out at the end.
// (All rank arithmetic modulo n.)  The blocks travel on the point-to-point
// layer, eager through cells or pulled when long.
//
// Cost per rank: ceil(log2 n) messages each way, each with one byte more (see
// relayRounds).  allgather: b (n - 1) bytes received in all, each gathered
// into a message, copied into a cell and out of it, scattered and copied out.
// alltoall: about b n / 2 bytes per round, gathered, sent and scattered (about
// four copies per byte per round, so b n log2(n) / 2 bytes moved in all).
// Memory: n b bytes of slots, plus twice a round's largest message.
//
// Why.  The one-round exchange has every rank read a lane in every peer's
// area and every peer's control line: n - 1 cache-line transfers per rank and
// call, and on a job's first calls a page fault per peer in every rank, n^2
// faults in all (a 1024-rank job's first 4-byte alltoall faulted two million
// times).  Here a rank touches the memory of 2 log2(n) peers.
//
// Chosen for blocking and nonblocking alltoall and allgather on
// intracommunicators when the cost model (cost.h: a message per round against
// a line transfer per peer) puts it below the one-round exchange: large teams,
// small blocks.  SHMCOLL_ALGORITHM_ALLTOALL=bruck forces it at any size.
// (The choice depends on the block size, the same on every rank of a correct
// program.  An erroneous one whose ranks' counts straddle the switch may have
// ranks choose differently and wait for each other, as with numa_allgather:
// only on such large teams, for small blocks.)
#include <algorithm>
#include <cstring>
#include <vector>

#include "coll/cost.h"
#include "coll/sched.h"

namespace shmcoll::coll {

namespace {

constexpr uint32_t kOps = opBit(Op::kAlltoall) | opBit(Op::kAllgather);

// Packs the first min(block, b) bytes of `src` into `dst`; records a
// mismatch (the bytes past b are dropped, a short block leaves the rest as it was).
void packBlock(sched::Schedule* s, const Block& src, char* dst, uint64_t b) {
  const uint64_t sb = src.bytes();
  if (sb != b) {
    s->setError(sb > b ? err::kTruncate : err::kCount);
    fail(sb > b ? err::kTruncate : err::kCount,
         "this rank sends blocks of %llu bytes but receives blocks of %llu bytes (the ranks' counts or type "
         "signatures disagree)",
         static_cast<unsigned long long>(sb), static_cast<unsigned long long>(b));
  }
  const uint64_t n = std::min(sb, b);
  if (n) dt::Cursor(src.buf, src.count, src.type).pack(0, dst, n);
}

void unpackBlock(const char* src, const Block& dst) {
  const uint64_t n = dst.bytes();
  if (n) dt::Cursor(dst.buf, dst.count, dst.type).unpack(0, src, n);
}

// The receive blocks, taken now (the argument object may be gone when the
// schedule ends) and held by the schedule.
std::vector<Block> receiveBlocks(sched::Schedule* s, const ExchangeArgs& a, uint32_t n) {
  std::vector<Block> recvs(n);
  for (uint32_t p = 0; p < n; ++p) {
    recvs[p] = a.recv(p);
    // (one hold per type, not per block: the blocks of alltoall and
    // allgather usually share one, and n holds cost n atomic updates twice)
    if (p == 0 || recvs[p].type != recvs[p - 1].type) s->hold(recvs[p].type);
  }
  return recvs;
}

// The rounds.  In round k (d = 2^k) the rank sends the slots that sendOf(d)
// lists to rank me + sign * d and receives as many from rank me - sign * d
// into the slots that landOf(d) lists.  A message is the slots end to end and one byte more:
// nonzero when its sender had already failed (a block of a disagreeing count
// reached it), so that blocks relayed through a rank that failed never
// arrive as a success: the receiver fails too (err::kCount).
template <class SendOf, class LandOf>
void relayRounds(sched::Schedule* s, char* slots, uint64_t b, uint32_t n, int sign, SendOf sendOf, LandOf landOf) {
  const uint32_t me = s->me();
  uint64_t most = 0;
  for (uint32_t d = 1; d < n; d <<= 1) most = std::max<uint64_t>(most, sendOf(d).size());
  char* out = s->temp(most * b + 1);
  char* in = s->temp(most * b + 1);
  const dt::Type* bytes = dt::byteType();
  // Fills `out` for the round of distance d (before it starts).
  auto gather = [s, slots, b, out, sendOf](uint32_t d) {
    const std::vector<uint32_t> list = sendOf(d);
    for (size_t j = 0; j < list.size(); ++j) std::memcpy(out + j * b, slots + list[j] * b, b);
    out[list.size() * b] = s->status.error ? 1 : 0;
  };
  gather(1);
  for (uint32_t d = 1; d < n; d <<= 1) {
    const uint64_t len = sendOf(d).size() * b + 1;
    const uint32_t to = sign > 0 ? (me + d) % n : (me + n - d) % n;
    const uint32_t from = sign > 0 ? (me + n - d) % n : (me + d) % n;
    sched::Schedule::Round& r = s->round();
    r.xfers.push_back({false, from, {in, len, bytes}, true});
    r.xfers.push_back({true, to, {out, len, bytes}});
    const uint32_t next = d << 1;
    r.after = [s, slots, b, in, len, d, next, n, gather, landOf]() {
      if (in[len - 1] && !s->status.error) {
        s->setError(err::kCount);
        fail(err::kCount,
             "a block relayed by another rank was cut or short: the ranks' counts or type signatures "
             "disagree");
      }
      const std::vector<uint32_t> list = landOf(d);
      for (size_t j = 0; j < list.size(); ++j) std::memcpy(slots + list[j] * b, in + j * b, b);
      if (next < n) gather(next);
    };
  }
}

int runAllgather(Operation& o, sched::Schedule* s) {
  const ExchangeArgs& a = *o.args;
  const uint32_t n = s->size(), me = s->me();
  const uint64_t b = a.recv(me).bytes();
  char* slots = s->temp(b * n);
  packBlock(s, a.send(0), slots, b);
  // Round d sends slots [0, c) to rank me - d, where they land in [d, d + c).
  auto run = [n](uint32_t d, uint32_t first) {
    std::vector<uint32_t> list(std::min(d, n - d));
    for (uint32_t j = 0; j < list.size(); ++j) list[j] = first + j;
    return list;
  };
  relayRounds(
      s, slots, b, n, -1, [run](uint32_t d) { return run(d, 0); }, [run](uint32_t d) { return run(d, d); });
  std::vector<Block> recvs = receiveBlocks(s, a, n);
  s->round().after = [slots, b, n, me, recvs = std::move(recvs)]() {
    for (uint32_t i = 0; i < n; ++i) unpackBlock(slots + uint64_t{i} * b, recvs[(me + i) % n]);
  };
  return sched::start(o, s);
}

int runAlltoall(Operation& o, sched::Schedule* s) {
  const ExchangeArgs& a = *o.args;
  const uint32_t n = s->size(), me = s->me();
  const uint64_t b = a.recv(me).bytes();
  char* slots = s->temp(b * n);
  // (With MPI_IN_PLACE the receive blocks hold what is sent: all of it is
  // packed here, before anything is written.)
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t p = (me + i) % n;
    packBlock(s, o.flags.inPlace ? a.recv(p) : a.send(p), slots + uint64_t{i} * b, b);
  }
  std::vector<Block> recvs = receiveBlocks(s, a, n);
  auto withBit = [n](uint32_t d) {
    std::vector<uint32_t> list;
    for (uint32_t i = d; i < n; ++i)
      if (i & d) list.push_back(i);
    return list;
  };
  relayRounds(s, slots, b, n, +1, withBit, withBit);
  s->round().after = [slots, b, n, me, recvs = std::move(recvs)]() {
    for (uint32_t i = 0; i < n; ++i) unpackBlock(slots + uint64_t{i} * b, recvs[(me + n - i) % n]);
  };
  return sched::start(o, s);
}

int run(Operation& o) {
  auto* s = new sched::Schedule(o.team());
  return o.op == Op::kAllgather ? runAllgather(o, s) : runAlltoall(o, s);
}

using cost::log2Ceil;

double bruckCost(const Operation& o) {
  const uint32_t n = o.team().size();
  if (n < 2) return 1e30;  // (nothing to exchange: the one-round path copies the own block)
  const double b = static_cast<double>(o.bytes()) / std::max(1u, n);
  // Bytes copied per round: alltoall, about n/2 blocks gathered, sent (a copy
  // into a cell and one out), scattered; allgather, b (n - 1) in all, each
  // gathered, sent, scattered and copied out: four copies of every block.
  const double perRound = o.op == Op::kAllgather ? 4 * b * n / log2Ceil(std::max(2u, n)) : 2 * b * n;
  return cost::messageRounds(n) + log2Ceil(n) * perRound / (cost::kLocalGBs * 1e3);
}

}  // namespace

extern const Algorithm kBruckAlgorithm =
    Algorithm("bruck", "ceil(log2 n) rounds of one point-to-point message each way (large teams, small blocks)", kOps,
              kBlocking | kNonblocking, run)
        .costing(bruckCost);

}  // namespace shmcoll::coll
