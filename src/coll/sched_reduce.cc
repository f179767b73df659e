// Algorithm: sched_reduce -- nonblocking reduce and allreduce: every input to
// one rank, a fold in rank order there, and (allreduce) the result back.
//
// How it works.  Round 1: every rank sends its input to the root (allreduce:
// rank 0), which receives each into a private copy laid out like the user's
// buffer and folds them in rank order: acc = in[n-1], then acc = in[j] (op)
// acc for j = n-2 .. 0, which gives a non-commutative operation
// a0 o a1 o ... o a(n-1).  Round 2 (allreduce): the root sends the result to
// every other rank.  The schedule holds the datatype and the operator, so
// the user may free both while it runs.
//
// Cost: the root receives n-1 inputs of m bytes, folds n and keeps n + 1
// temporary copies; every other rank sends one message (allreduce: and
// receives one).
//
// Chosen for every nonblocking and persistent reduce and allreduce on an
// intracommunicator.
#include <vector>

#include "coll/sched.h"

namespace shmcoll::coll {

namespace {

constexpr uint32_t kOps = opBit(Op::kReduce) | opBit(Op::kAllreduce);

int run(Operation& o) {
  Team& team = o.team();
  const Reduction& red = *o.red;
  const int root = o.op == Op::kAllreduce ? -1 : o.root;
  auto* s = new sched::Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  const uint32_t target = root < 0 ? 0 : static_cast<uint32_t>(root);
  s->hold(red);
  const char* mine = static_cast<const char*>(red.in ? red.in : red.out);
  const Block out{static_cast<const char*>(red.out), red.count, red.type};
  if (n == 1) {
    if (red.in) transport::selfCopy({mine, red.count, red.type}, out);
    return sched::start(o, s);
  }
  if (me != target) {
    s->round().xfers.push_back({true, target, {mine, red.count, red.type}});
    if (root < 0) s->round().xfers.push_back({false, target, out});
    return sched::start(o, s);
  }
  // The target receives every input into a private copy laid out like the
  // user's buffer, then folds them in rank order: acc = in[n-1], then
  // acc = in[j] (op) acc for j = n-2 .. 0, which gives a non-commutative
  // operation a0 o a1 o ... o a(n-1).
  std::vector<const char*> in(n);
  sched::Schedule::Round& gather = s->round();
  for (uint32_t p = 0; p < n; ++p) {
    if (p == me) {
      in[p] = mine;
      continue;
    }
    char* t = sched::tempLike(s, red.count, red.type);
    in[p] = t;
    gather.xfers.push_back({false, p, {t, red.count, red.type}});
  }
  char* acc = sched::tempLike(s, red.count, red.type);
  sched::foldAfter(gather, in, acc, red, red.count, out);
  if (root < 0) {
    sched::Schedule::Round& bc = s->round();
    for (uint32_t p = 0; p < n; ++p)
      if (p != me) bc.xfers.push_back({true, p, out});
  }
  return sched::start(o, s);
}

}  // namespace

extern const Algorithm kSchedReduceAlgorithm =
    Algorithm("sched_reduce", "every input to the root, a fold in rank order, (allreduce) the result back", kOps,
              kNonblocking, run);

}  // namespace shmcoll::coll
