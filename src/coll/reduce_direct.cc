// Algorithm: reduce_direct -- a reduction in one round of whole inputs.
//
// How it works.  Every rank sends its whole input to the ranks that need it,
// in one exchange round, and each of those folds all the inputs it got in
// rank order (reduce_common.h):
//   allreduce  every input to everybody (a broadcast round); every rank folds n;
//   reduce     every input to the root, which folds;
//   scan       each input to the higher ranks only; rank k folds inputs
//              0..k (exscan: 0..k-1; rank 0's output is not touched).
//
// Cost per rank for m bytes of input: one round; allreduce receives (n-1) m
// bytes and folds n inputs, with n m bytes of temporary memory.  Latency is
// one round plus the fold, against two rounds for reduce_sliced, so it wins
// while the inputs are small.
//
// Chosen for blocking reductions on intracommunicators while the bytes a
// rank receives, (n-1) m, are at most SHMCOLL_REDUCE_SMALL (the decision
// table's reduce_small, 16 KiB by default, 256 KiB for MPI_Allreduce and
// 1 MiB for MPI_Reduce, whose one exchange feeds the root alone: registry.cc):
// the cost estimates of the two algorithms cross there.  A folding rank's own
// input stays where it is and the last rank's arrives straight in the
// result (not in place), so the fold reads each input once and copies none.  MPI_Reduce_scatter(_block) always take
// reduce_sliced (its slices are the result).
#include "coll/reduce_common.h"

namespace shmcoll::coll {

namespace {

using reduction::Reducer;
using reduction::TypedBuf;

// The one round: each rank's whole input to the ranks that need it, into
// `t` there (to everybody; to the root; to the higher ranks).  A final
// class, so that the inline path's template computes its blocks without
// virtual calls (an 8-byte reduction is mostly its round's instructions).
class Inputs final : public ExchangeArgs {
 public:
  enum Who { kEverybody, kRoot, kHigher };
  Inputs(const Reducer& x, Who who, uint32_t root, const TypedBuf& t)
      : in_(x.in_),
        out_(x.out_),
        count_(x.r_.count),
        type_(x.r_.type),
        t_(t),
        who_(who),
        root_(root),
        me_(x.me_),
        last_(x.n_ - 1),
        // (a rank that folds, not in place: its own input stays where it is, the last rank's
        // arrives straight in the result; in place, its input is in the result's place)
        direct_(who != kHigher && x.in_ != x.out_ && (who == kEverybody || x.me_ == root)) {
    op = x.opc_;
    broadcast = who != kRoot;
    allPairs = who == kEverybody;
    ahead = who == kRoot;  // a non-root's one lane may go in its ring: it runs ahead of the root
    if (who == kRoot) {    // (the walks' shortcuts, transport::Pairs::onlyPeer)
      if (me_ == root_) {
        noSends = true;
      } else {
        noReceives = true;
        onlyPeer = root_;
      }
    }
  }
  Block send(uint32_t) const override { return {in_, count_, type_}; }
  // (a non-root of reduce receives nothing: its own block is its input)
  Block recv(uint32_t p) const override {
    if (who_ == kRoot && me_ != root_) return send(p);
    return Block{const_cast<char*>(at(p)), count_, type_};
  }
  // Where input p is once the exchange is done, on a rank that folds: its own
  // input, the result, or its place in the temporary buffer.
  const char* at(uint32_t p) const {
    if (direct_ && p == me_) return in_;
    if (direct_ && p == last_) return out_;
    return t_.at(p * count_);
  }
  bool sends(uint32_t p) const override {
    return who_ == kEverybody || (who_ == kRoot ? me_ != root_ && p == root_ : p > me_);
  }
  bool receives(uint32_t p) const override { return who_ == kEverybody || (who_ == kRoot ? me_ == root_ : p < me_); }

 private:
  const char* in_;
  char* out_;
  uint64_t count_;
  const dt::Type* type_;
  const TypedBuf& t_;
  Who who_;
  uint32_t root_, me_, last_;
  bool direct_;
};

int allreduce(Reducer& x) {
  const Reduction& r = x.r_;
  const uint32_t n = x.n_;
  // Everybody gets every input and folds all of them.
  TypedBuf t(uint64_t{n} * r.count, r.type);
  const Inputs a(x, Inputs::kEverybody, 0, t);
  SHMCOLL_CHECK(innerExchangeFinal(x.team_, a));
  x.foldFrom(x.out_, [&](uint32_t j) { return a.at(j); }, n, r.count);
  return 0;
}

int reduce(Reducer& x, uint32_t root) {
  const Reduction& r = x.r_;
  const uint32_t n = x.n_, me = x.me_;
  // The root gathers every input and folds.
  TypedBuf t(me == root ? uint64_t{n} * r.count : 0, r.type);
  const Inputs a(x, Inputs::kRoot, root, t);
  SHMCOLL_CHECK(innerExchangeFinal(x.team_, a));
  if (me == root) x.foldFrom(x.out_, [&](uint32_t j) { return a.at(j); }, n, r.count);
  return 0;
}

int scan(Reducer& x, bool exclusive) {
  const Reduction& r = x.r_;
  const uint32_t me = x.me_;
  // Each input goes to the higher ranks only.
  TypedBuf t(uint64_t{me + 1} * r.count, r.type);
  SHMCOLL_CHECK(innerExchangeFinal(x.team_, Inputs(x, Inputs::kHigher, 0, t)));
  x.fold(x.out_, t, exclusive ? me : me + 1, r.count);
  return 0;
}

int run(Operation& o) {
  return reduction::reduceWith(o, [&](Reducer& x) {
    if (o.op == Op::kAllreduce) return allreduce(x);
    if (o.op == Op::kReduce) return reduce(x, static_cast<uint32_t>(o.root));
    return scan(x, o.exclusive);
  });
}

}  // namespace

extern const Algorithm kReduceDirectAlgorithm =
    Algorithm("reduce_direct", "one round of whole inputs to the ranks that need them, then a fold in rank order",
              opBit(Op::kAllreduce) | opBit(Op::kReduce) | opBit(Op::kScan) | opBit(Op::kExscan), kBlocking, run)
        .costing(reduction::directCost);

}  // namespace shmcoll::coll
