// Algorithms: inter_exchange and inter_barrier -- the collectives of
// intercommunicators that move blocks, and their barrier, as schedules over
// both groups.
//
// How they work.  An intercommunicator's collectives run as point-to-point
// schedules (sched.h), blocking or not, on the team of both its groups
// (Place::peers) and its internal context.  The data-moving ones are one
// round over the pairs across the groups: alltoall(v,w) and allgather(v)
// every pair; bcast, gather(v) and scatter(v) only the pairs between the root
// (MPI_ROOT) and the other group, while the rest of the root's group
// (MPI_PROC_NULL) takes part in none (InterPlan).  The argument blocks are
// indexed by remote rank.  The barrier is a dissemination over both groups
// (each group leaves once the other has entered, as the standard asks, and
// more).
//
// Cost: one round of point-to-point messages, one per pair that carries data
// (two copies per byte for eager messages, one for pulled rendezvous ones);
// the barrier ceil(log2 (n + m)) rounds of empty messages.
//
// Chosen for every collective on an intercommunicator, blocking (the
// schedule is waited for) or not.
#include "coll/sched.h"

namespace shmcoll::coll {

namespace {

// The blocks of an intercommunicator's collective over both groups: pair
// (local, remote u) carries the argument block of remote rank u - base.
class InterArgs final : public ExchangeArgs {
 public:
  InterArgs(const ExchangeArgs& inner, const Groups& g, InterPlan plan)
      : inner_(inner), base_(g.remoteBase), n_(g.remoteSize), plan_(plan) {
    op = inner.op;
    allPairs = false;
  }
  Block send(uint32_t u) const override { return sends(u) ? inner_.send(u - base_) : none(); }
  Block recv(uint32_t u) const override { return receives(u) ? inner_.recv(u - base_) : none(); }
  bool sends(uint32_t u) const override {
    return remote(u) && (plan_.sendAll || u - base_ == static_cast<uint32_t>(plan_.sendTo));
  }
  bool receives(uint32_t u) const override {
    return remote(u) && (plan_.recvAll || u - base_ == static_cast<uint32_t>(plan_.recvFrom));
  }

 private:
  bool remote(uint32_t u) const { return u >= base_ && u - base_ < n_; }
  static Block none() { return {nullptr, 0, dt::byteType()}; }
  const ExchangeArgs& inner_;
  uint32_t base_, n_;
  InterPlan plan_;
};

constexpr uint32_t kOps = opBit(Op::kAlltoall) | opBit(Op::kAlltoallv) | opBit(Op::kAlltoallw) | opBit(Op::kAllgather) |
                          opBit(Op::kAllgatherv) | opBit(Op::kBcast) | opBit(Op::kGather) | opBit(Op::kGatherv) |
                          opBit(Op::kScatter) | opBit(Op::kScatterv);

int runExchange(Operation& o) {
  auto* s = new sched::Schedule(*o.at.peers);
  const InterArgs ia(*o.args, o.at.groups, o.flags.plan);
  sched::exchangeRound(s, ia, false);
  return sched::start(o, s);
}

int runBarrier(Operation& o) {
  auto* s = new sched::Schedule(*o.at.peers);
  sched::barrierRounds(s);
  return sched::start(o, s);
}

}  // namespace

extern const Algorithm kInterExchangeAlgorithm =
    Algorithm("inter_exchange", "one round of point-to-point messages over the pairs across the two groups", kOps,
              kBlocking | kNonblocking, runExchange)
        .onIntercommunicators();

extern const Algorithm kInterBarrierAlgorithm = Algorithm("inter_barrier", "dissemination over both groups' members",
                                                          opBit(Op::kBarrier), kBlocking | kNonblocking, runBarrier)
                                                    .onIntercommunicators();

}  // namespace shmcoll::coll
