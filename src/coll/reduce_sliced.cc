// Algorithm: reduce_sliced -- a reduction as reduce-scatter plus a second
// round, every rank folding one slice.
//
// How it works.  The elements are cut into one slice per rank and rank k
// computes slice k for everybody:
//   round 1  (an alltoallv round) every rank sends slice k of its input to
//            rank k, which receives all n contributions to its slice into a
//            private buffer T[0..n-1] laid out like the user's;
//   fold     rank k folds T in rank order (reduce_common.h); scan keeps every
//            prefix T[j] = T[j-1] (op) T[j];
//   round 2  allreduce: an allgatherv of the slices (each rank's slice lands
//            in place in everyone's out); reduce: a gatherv of the slices to
//            the root; reduce_scatter: none (the slices are the caller's
//            recvcounts); scan/exscan: rank k returns prefix j (or j-1) of its
//            slice to rank j.
// Only pairs that carry data take part, and both sides know them from the
// counts alone: with fewer elements than ranks most ranks own an empty slice
// and exchange nothing in round 1.
//
// Cost per rank for m bytes of input: (n-1)/n m bytes out and in per round,
// (n-1) m/n bytes folded, temporary memory m (the n slices of m/n).  That is
// the bandwidth-optimal reduce-scatter + allgather scheme, and it needs no
// tree: a round moves all pairs at once.
//
// Chosen for blocking reductions on intracommunicators whose inputs are too
// large for reduce_direct (see there), and for every MPI_Reduce_scatter(_block).
#include "coll/reduce_common.h"

namespace shmcoll::coll {

namespace {

using reduction::FnArgs;
using reduction::Reducer;
using reduction::Slices;
using reduction::TypedBuf;

int allreduce(Reducer& x) {
  const Slices s(x.n_, x.r_.count, Slices::Even{});
  TypedBuf t(uint64_t{x.n_} * s.len[x.me_], x.r_.type);
  SHMCOLL_CHECK(x.foldSlice(s, t, x.out_ + x.off(s.start[x.me_]), x.in_ != x.out_));
  return x.allgatherSlices(s);
}

int reduce(Reducer& x, uint32_t root) {
  const uint32_t me = x.me_;
  const dt::Type* type = x.r_.type;
  const Slices s(x.n_, x.r_.count, Slices::Even{});
  const uint64_t mine = s.len[me];
  TypedBuf t(uint64_t{x.n_} * mine, type);
  TypedBuf acc(me == root ? 0 : mine, type);
  char* dst = me == root ? x.out_ + x.off(s.start[me]) : acc.at(0);
  SHMCOLL_CHECK(x.foldSlice(s, t, dst, me != root || x.in_ != x.out_));
  // Gather the slices at the root.
  FnArgs a;
  a.op = x.opc_;
  a.allPairs = false;
  a.sendFn = [&](uint32_t) { return Block{dst, mine, type}; };
  a.recvFn = [&](uint32_t p) { return me == root ? x.outSlice(s, p) : Block{dst, mine, type}; };
  a.sendsFn = [&](uint32_t p) { return me != root && p == root && mine > 0; };
  a.receivesFn = [&](uint32_t p) { return me == root && s.len[p] > 0; };
  return innerExchange(x.team_, a);
}

int reduceScatter(Reducer& x, const uint64_t* counts) {
  const Slices s(x.n_, counts);
  TypedBuf t(uint64_t{x.n_} * s.len[x.me_], x.r_.type);
  return x.foldSlice(s, t, x.out_, x.in_ != x.out_);
}

int scan(Reducer& x, bool exclusive) {
  const uint32_t n = x.n_, me = x.me_;
  const dt::Type* type = x.r_.type;
  const Slices s(n, x.r_.count, Slices::Even{});
  const uint64_t mine = s.len[me];
  TypedBuf t(uint64_t{n} * mine, type);
  SHMCOLL_CHECK(x.toOwners(s, t));
  // Prefixes of this rank's slice: T[j] = T[j-1] (op) T[j].
  if (mine > 0)
    for (uint32_t j = 1; j < n; ++j) x.r_.op(t.at((j - 1) * mine), t.at(j * mine), mine, type);
  // Prefix j (exclusive: j-1) of slice k goes to rank j.
  const uint32_t shift = exclusive ? 1 : 0;
  const Block none{x.out_, 0, type};
  FnArgs a;
  a.op = x.opc_;
  a.allPairs = false;
  a.sendFn = [&](uint32_t p) { return p >= shift ? Block{t.at((p - shift) * mine), mine, type} : none; };
  a.recvFn = [&](uint32_t p) { return me >= shift ? x.outSlice(s, p) : none; };
  a.sendsFn = [&](uint32_t p) { return mine > 0 && p >= shift; };
  a.receivesFn = [&](uint32_t p) { return s.len[p] > 0 && me >= shift; };
  return innerExchange(x.team_, a);
}

int run(Operation& o) {
  return reduction::reduceWith(o, [&](Reducer& x) {
    switch (o.op) {
      case Op::kAllreduce:
        return allreduce(x);
      case Op::kReduce:
        return reduce(x, static_cast<uint32_t>(o.root));
      case Op::kReduceScatter:
      case Op::kReduceScatterBlock:
        return reduceScatter(x, o.counts);
      default:
        return scan(x, o.exclusive);
    }
  });
}

}  // namespace

extern const Algorithm kReduceSlicedAlgorithm =
    Algorithm("reduce_sliced",
              "reduce-scatter round, a fold of one slice per rank, then a round that returns the slices",
              opBit(Op::kAllreduce) | opBit(Op::kReduce) | opBit(Op::kReduceScatter) | opBit(Op::kReduceScatterBlock) |
                  opBit(Op::kScan) | opBit(Op::kExscan),
              kBlocking, run)
        .costing([](const Operation&) { return reduction::kSlicedCost; });

}  // namespace shmcoll::coll
