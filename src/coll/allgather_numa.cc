// Algorithm: numa_allgather -- allgather(v) in two rounds over NUMA domains,
// so that each block crosses between two domains once per domain instead of
// once per rank.
//
// How it works.  The team's NUMA level (levels.h) cuts it into domains, each
// with a leader (its lowest rank).
//   round 1  every rank announces its block in one shared lane; it is read
//            by the members of its own domain and by the leaders of the other
//            domains: every rank now holds its domain's blocks, and every
//            leader holds all blocks;
//   round 2  each leader announces the other domains' blocks (one datatype
//            over its receive buffer that covers exactly them) to the members
//            of its domain, which read them from the leader's buffer, inside
//            the domain.
// Both rounds are transport rounds (transport/round.h), so a block moves
// inline, pulled or streamed by its size as in any exchange; the receive
// layouts are the same on every rank (the standard makes recvcounts and
// displs significant everywhere), so round 2's datatype has the same
// signature on both sides.
//
// Cost per rank, n ranks, B bytes received in all, a domain of d ranks,
// remote share r = (n - d) / (n - 1): a leader reads B (r of it across the
// interconnect, once for its whole domain); a member reads B (1 - r) in round
// 1 and B r from its leader in round 2, all local; two rounds instead of one.
// The exchange instead has all d members of a domain pull B r across the
// interconnect at once.  So this wins when many ranks share a domain's link
// and the blocks are large (coll/cost.h has the model); it never runs on a
// team within one domain.
//
// Chosen for blocking allgather(v) on intracommunicators that span more than
// one NUMA domain, when the cost model says so (or forced with
// SHMCOLL_ALGORITHM_ALLGATHER(V)=numa_allgather).
#include <algorithm>
#include <vector>

#include "coll/cost.h"
#include "coll/exchange_inline.h"
#include "coll/levels.h"
#include "coll/registry.h"
#include "common/status.h"

namespace shmcoll::coll {

namespace {

struct Shape {
  double n, d, remoteShare;  // ranks, ranks of the largest domain, share of blocks from other domains
};

Shape shapeOf(const Operation& o) {
  const Level& l = levelsOf(o.team()).numa;
  size_t d = 1;
  for (const auto& dom : l.domains) d = std::max(d, dom.size());  // (the largest domain sets the pace)
  const double n = o.team().size();
  return {n, static_cast<double>(d), (n - static_cast<double>(d)) / std::max(1.0, n - 1)};
}

}  // namespace

// What the exchange costs for a blocking allgather(v) (exchange.cc): one
// round in which every member of a domain pulls the other domains' blocks.
double flatAllgatherCost(const Operation& o) {
  const Shape s = shapeOf(o);
  const double b = static_cast<double>(o.bytes());
  return cost::round(b * (1 - s.remoteShare), b * s.remoteShare, s.d);
}

namespace {

// Round 1 on a leader (the critical path): its domain's blocks, and the
// other domains' blocks once over the link; round 2 on a member: the other
// domains' blocks from its leader, locally.
double hierarchicalCost(const Operation& o) {
  const Shape s = shapeOf(o);
  const double b = static_cast<double>(o.bytes());
  return cost::round(b * (s.d - 1) / std::max(1.0, s.n - 1), b * s.remoteShare, 1) +
         cost::round(b * s.remoteShare, 0, 1);
}

// Every rank must make the same choice: where the inline path is open, a rank
// whose own block fits its lane takes it (its lanes are a round's, which the
// exchange reads, but not this algorithm's two rounds), so this runs only when
// no rank's block fits -- which every rank knows, the receive layout being
// significant everywhere.
bool eligible(const Operation& o) {
  if (!o.args || !o.args->broadcast || !o.args->allPairs || o.at.inter()) return false;
  Team& team = o.team();
  if (!levelsOf(team).numa.spansMany()) return false;
  const InlineGate& g = inlineGate(team, o.args->op);
  if (!g.open) return true;
  for (uint32_t q = 0; q < team.size(); ++q)
    if (o.args->recv(q).bytes() <= g.cap[1]) return false;
  return true;
}

// Round 1: my block to my domain and to the other domains' leaders.
class DomainRound final : public ExchangeArgs {
 public:
  DomainRound(const ExchangeArgs& a, const Level& l, uint32_t me) : a_(a), l_(l), me_(me) {
    op = a.op;
    broadcast = true;
    allPairs = false;
    skipEmpty = a.skipEmpty;
  }
  Block send(uint32_t) const override { return a_.send(0); }
  Block recv(uint32_t q) const override { return a_.recv(q); }
  bool sends(uint32_t p) const override { return l_.sameDomain(me_, p) || l_.isLeader(p); }
  bool receives(uint32_t q) const override { return l_.sameDomain(me_, q) || l_.isLeader(me_); }

 private:
  const ExchangeArgs& a_;
  const Level& l_;
  uint32_t me_;
};

// Round 2: the leader's copy of the other domains' blocks to its domain.
class ShareRound final : public ExchangeArgs {
 public:
  ShareRound(Op o, const Level& l, uint32_t me, Block remote) : l_(l), me_(me), remote_(remote) {
    op = o;
    broadcast = true;
    allPairs = false;
    skipEmpty = true;
  }
  Block send(uint32_t) const override { return remote_; }
  Block recv(uint32_t) const override { return remote_; }
  bool sends(uint32_t p) const override { return l_.isLeader(me_) && p != me_ && l_.sameDomain(me_, p); }
  bool receives(uint32_t q) const override { return !l_.isLeader(me_) && q == l_.leader(l_.mine); }

 private:
  const Level& l_;
  uint32_t me_;
  Block remote_;
};

// The blocks of the ranks outside my domain, in my receive buffer, as one
// type over absolute addresses (a block at MPI_BOTTOM).
int remoteType(const ExchangeArgs& a, const Level& l, uint32_t n, dt::Type** out) {
  std::vector<uint64_t> lens;
  std::vector<int64_t> disps;
  const dt::Type* elem = nullptr;
  for (uint32_t q = 0; q < n; ++q) {
    if (l.domainOf[q] == l.mine) continue;
    const Block b = a.recv(q);
    elem = b.type;
    lens.push_back(b.count);
    disps.push_back(static_cast<int64_t>(reinterpret_cast<intptr_t>(b.buf)));
  }
  SHMCOLL_CHECK(dt::makeHindexed(lens.size(), lens.data(), disps.data(), elem, out));
  dt::retain(*out);
  dt::commit(*out);
  return 0;
}

int run(Operation& o) {
  Team& team = o.team();
  const ExchangeArgs& a = *o.args;
  const Level& l = levelsOf(team).numa;
  const uint32_t me = team.rank;
  const DomainRound first(a, l, me);
  const int rc1 = innerExchange(team, first);
  if (rc1 && rc1 != err::kTruncate && rc1 != err::kCount) return rc1;
  dt::Type* t = nullptr;
  SHMCOLL_CHECK(remoteType(a, l, team.size(), &t));
  const ShareRound second(a.op, l, me, Block{nullptr, 1, t});
  const int rc2 = innerExchange(team, second);
  dt::release(t);
  return rc1 ? rc1 : rc2;
}

}  // namespace

extern const Algorithm kNumaAllgatherAlgorithm =
    Algorithm("numa_allgather", "two rounds: within each NUMA domain and to the domain leaders, then leader to domain",
              opBit(Op::kAllgather) | opBit(Op::kAllgatherv), kBlocking, run)
        .when(eligible)
        .costing(hierarchicalCost);

}  // namespace shmcoll::coll
