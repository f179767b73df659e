// Algorithm: sched_exchange -- the nonblocking data-moving collectives as one
// round of point-to-point messages.
//
// How it works.  One schedule round (sched.h) with every pair's block: the
// receives are posted first (most messages then find their receive already
// posted), then the sends.  This rank's own block is copied before anything
// else can write the receive blocks.  With MPI_IN_PLACE what each receive
// block holds is packed aside first and sent from there.  Alltoall(v,w) have a
// block per pair; allgather(v) and bcast send one block to every reader;
// gather(v) and scatter(v) exchange only the pairs with the root.
//
// Cost per rank for blocks of b bytes to each of n-1 peers: n-1 messages out
// and in (eager up to a cell, else rendezvous with a single-copy pull where
// the memory allows), two copies per byte for eager ones; with MPI_IN_PLACE a
// private copy of the receive buffer.
//
// Chosen for every nonblocking (and persistent) data-moving collective on an
// intracommunicator.
#include <vector>

#include "coll/cost.h"
#include "coll/sched.h"

namespace shmcoll::coll {

namespace sched {

// A round of every pair's block of `a` on `s` (the intercommunicator forms
// use it too, with their own pairs).
void exchangeRound(Schedule* s, const ExchangeArgs& a, bool inPlace) {
  const uint32_t n = s->size(), me = s->me();
  // Self copy first (before anything else can write the receive blocks).
  if (!inPlace) {
    if (int rc = transport::selfCopy(a.broadcast ? a.send(0) : a.send(me), a.recv(me))) s->setError(rc);
  }
  std::vector<Block> sends(n);
  if (inPlace) {
    // What each receive block holds now is what goes to that peer.
    std::vector<uint64_t> off(n + 1, 0);
    for (uint32_t p = 0; p < n; ++p) off[p + 1] = off[p] + (p == me ? 0 : a.recv(p).bytes());
    char* data = s->temp(off[n]);
    for (uint32_t p = 0; p < n; ++p) {
      if (p == me) continue;
      Block b = a.recv(p);
      if (b.bytes()) dt::Cursor(b.buf, b.count, b.type).pack(0, data + off[p], b.bytes());
      sends[p] = {data + off[p], off[p + 1] - off[p], dt::byteType()};
    }
  } else {
    for (uint32_t p = 0; p < n; ++p)
      if (p != me) sends[p] = a.broadcast ? a.send(0) : a.send(p);
  }
  Schedule::Round& r = s->round();
  // Receives first, so most messages find their receive already posted.
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t p = (me + n - k) % n;
    if (!a.allPairs && !a.receives(p)) continue;
    Block b = a.recv(p);
    s->hold(b.type);
    r.xfers.push_back({false, p, b});
  }
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t p = (me + k) % n;
    if (!a.allPairs && !a.sends(p)) continue;
    s->hold(sends[p].type);
    r.xfers.push_back({true, p, sends[p]});
  }
}

}  // namespace sched

namespace {

// Weighed only against bruck (alltoall, allgather), as the blocking exchange
// is: every peer's message is posted at once, so they overlap, and what grows
// with the peers is a cell in each one's queue (kPeerUs each).
double schedCost(const Operation& o) {
  const double peers = o.team().size() - 1.0;
  return cost::round(static_cast<double>(o.bytes()), 0, 1) + peers * cost::kPeerUs;
}

int run(Operation& o) {
  auto* s = new sched::Schedule(o.team());
  // (the blocks are taken now: a schedule round keeps its own copies)
  for (uint32_t k = 0; k < o.args->rounds; ++k) {
    o.args->select(k);
    sched::exchangeRound(s, *o.args, o.flags.inPlace && !o.args->broadcast);
  }
  return sched::start(o, s);
}

constexpr uint32_t kOps = opBit(Op::kAlltoall) | opBit(Op::kAlltoallv) | opBit(Op::kAlltoallw) | opBit(Op::kAllgather) |
                          opBit(Op::kAllgatherv) | opBit(Op::kBcast) | opBit(Op::kGather) | opBit(Op::kGatherv) |
                          opBit(Op::kScatter) | opBit(Op::kScatterv) | kNeighborOps;

}  // namespace

extern const Algorithm kSchedExchangeAlgorithm =
    Algorithm("sched_exchange", "one round of point-to-point messages, every pair's block", kOps, kNonblocking, run)
        .costing(schedCost);

}  // namespace shmcoll::coll
