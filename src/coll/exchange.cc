// Algorithm: exchange -- every pair's block in one transport round.
//
// How it works.  Every rank announces, in one round (transport/round.h), the
// block it sends each peer and takes the block each peer sends it: all pairs
// move at once, each block inline in its lane when small, pulled straight out
// of the sender's buffer when large and contiguous (and the reader can reach
// that memory), else streamed through the sender's mailbox slots.  The
// alltoall family has a block per pair; the allgather family and bcast send
// one block that every reader reads from one shared lane; gather(v) and
// scatter(v) exchange only the pairs with the root (the others are empty on
// both sides and cost nothing), so a non-root rank does O(1) control work.
//
// Cost per rank for blocks of b bytes to each of n-1 peers: one round --
// two copies per byte through the slots or lanes, or one when pulled; n-1
// lane writes and reads; waiting overlaps with copying, so the time is about
// that of the slowest pair's bytes, not the sum.  Memory: none beyond the
// segment's fixed per-rank areas.
//
// Chosen for every blocking data-moving collective on an intracommunicator
// that the inline path does not take (its blocks do not fit their lanes),
// except where numa_allgather is cheaper.  SHMCOLL_PULL picks how blocks
// move: auto (above), off (every byte through the segment), always (every
// contiguous block pulled).
#include "coll/cost.h"
#include "coll/levels.h"
#include "coll/registry.h"
#include "common/status.h"

namespace shmcoll::coll {

double flatAllgatherCost(const Operation& o);  // allgather_numa.cc

namespace {

constexpr uint32_t kOps = opBit(Op::kAlltoall) | opBit(Op::kAlltoallv) | opBit(Op::kAlltoallw) | opBit(Op::kAllgather) |
                          opBit(Op::kAllgatherv) | opBit(Op::kBcast) | opBit(Op::kGather) | opBit(Op::kGatherv) |
                          opBit(Op::kScatter) | opBit(Op::kScatterv) | kNeighborOps;

// One round: its bytes at the local rate, except that an allgather(v) on a
// team that spans NUMA domains has every member of a domain pull the other
// domains' blocks over their link at once (allgather_numa.cc).
double exchangeCost(const Operation& o) {
  if ((o.op == Op::kAllgather || o.op == Op::kAllgatherv) && levelsOf(o.team()).numa.spansMany())
    return flatAllgatherCost(o);
  // (the per-peer lines weigh against bruck's rounds for the operations it runs)
  const double peers = o.op == Op::kAlltoall || o.op == Op::kAllgather ? o.team().size() - 1.0 : 0.0;
  return cost::round(static_cast<double>(o.bytes()), 0, 1) + peers * cost::kPeerUs;
}

int run(Operation& o) {
  Team& t = o.team();
  return transport::runRound(t, t.next(), *o.args, roundParams(t, o.args->op), t.cache().roundScratch());
}

}  // namespace

// (The reductions' and numa_allgather's rounds run it too, through
// innerExchange, under their own operation's thresholds.)
extern const Algorithm kExchangeAlgorithm =
    Algorithm("exchange", "one round: blocks inline, pulled in place, or streamed through the mailbox slots", kOps,
              kBlocking, run)
        .costing(exchangeCost);

}  // namespace shmcoll::coll
