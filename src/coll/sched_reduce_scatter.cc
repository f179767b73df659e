// Algorithm: sched_reduce_scatter -- nonblocking reduce_scatter(_block),
// direct.
//
// How it works.  One round: every rank sends slice p of its input (counts[p]
// elements, in rank order) to rank p and receives slice `me` of every other
// input into a private copy; then it folds the n slices in rank order
// (a0 o a1 o ... o a(n-1)) into a private accumulator and copies that to
// recvbuf.  This is round 1 of reduce_sliced on the point-to-point layer.  In
// place, the input is the whole of recvbuf: its slices are sent from there,
// and the result overwrites the start of recvbuf only after every send of the
// round has completed and every slice is folded.
//
// Cost per rank for m bytes of input: (n-1)/n * m bytes out (on average) and
// (n-1) * counts[me] elements in, in one round; n * counts[me] elements of
// temporary memory.
//
// Chosen for every nonblocking and persistent reduce_scatter(_block) on an
// intracommunicator.
#include <vector>

#include "coll/sched.h"

namespace shmcoll::coll {

namespace {

constexpr uint32_t kOps = opBit(Op::kReduceScatter) | opBit(Op::kReduceScatterBlock);

int run(Operation& o) {
  Team& team = o.team();
  const Reduction& red = *o.red;
  const uint64_t* counts = o.counts;
  auto* s = new sched::Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  s->hold(red);
  const int64_t ext = red.type->extent();
  const char* input = static_cast<const char*>(red.in ? red.in : red.out);
  std::vector<uint64_t> first(n + 1, 0);  // element offset of each slice
  for (uint32_t p = 0; p < n; ++p) first[p + 1] = first[p] + counts[p];
  auto slice = [&](uint32_t p) { return input + ext * static_cast<int64_t>(first[p]); };
  const uint64_t mine = counts[me];
  const Block out{static_cast<const char*>(red.out), mine, red.type};
  if (n == 1 || red.type->size == 0) {
    if (red.in) transport::selfCopy({slice(me), mine, red.type}, out);
    return sched::start(o, s);
  }
  sched::Schedule::Round& round = s->round();
  std::vector<const char*> in(n);
  in[me] = slice(me);
  for (uint32_t k = 1; k < n && mine > 0; ++k) {  // receives first, as in exchange()
    const uint32_t p = (me + n - k) % n;
    char* t = sched::tempLike(s, mine, red.type);
    in[p] = t;
    round.xfers.push_back({false, p, {t, mine, red.type}});
  }
  for (uint32_t k = 1; k < n; ++k) {
    const uint32_t p = (me + k) % n;
    if (counts[p] > 0) round.xfers.push_back({true, p, {slice(p), counts[p], red.type}});
  }
  if (mine == 0) return sched::start(o, s);
  char* acc = sched::tempLike(s, mine, red.type);
  sched::foldAfter(round, in, acc, red, mine, out);
  return sched::start(o, s);
}

}  // namespace

extern const Algorithm kSchedReduceScatterAlgorithm =
    Algorithm("sched_reduce_scatter", "slice p of every input to rank p in one round, then a fold in rank order", kOps,
              kNonblocking, run);

}  // namespace shmcoll::coll
