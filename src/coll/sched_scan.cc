// Algorithm: sched_scan -- nonblocking scan and exscan, recursive doubling.
//
// How it works.  In round k (mask = 2^k) rank me swaps its partial P with
// partner me ^ mask (when that rank exists); P is then the reduction of the
// aligned run of 2 * mask ranks holding me, kept in rank order: P = T o P when
// the partner is below, else P = P o T.  A partner below also extends the
// result: R = T o R (exscan: R = T the first time).  R lives in recvbuf itself
// (inclusive: it starts as this rank's input), so rank 0 of an exscan never
// writes its recvbuf.  Which rounds fold what, and which of the two private
// buffers is P, is fixed when the schedule is built.
//
// Cost: ceil(log2 n) rounds of one message of m bytes each way and at most
// two folds of m bytes; 2m bytes of temporary memory.
//
// Chosen for every nonblocking and persistent scan and exscan.
#include <vector>

#include "coll/sched.h"

namespace shmcoll::coll {

namespace {

constexpr uint32_t kOps = opBit(Op::kScan) | opBit(Op::kExscan);

int run(Operation& o) {
  Team& team = o.team();
  const Reduction& red = *o.red;
  const bool exclusive = o.exclusive;
  auto* s = new sched::Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  s->hold(red);
  const uint64_t count = red.count;
  const Block input{static_cast<const char*>(red.in ? red.in : red.out), count, red.type};
  const Block out{static_cast<const char*>(red.out), count, red.type};
  if (count == 0 || red.type->size == 0) return sched::start(o, s);
  std::vector<uint32_t> partners;
  for (uint32_t mask = 1; mask < n; mask <<= 1)
    if ((me ^ mask) < n) partners.push_back(me ^ mask);
  if (!exclusive && red.in) transport::selfCopy(input, out);
  if (partners.empty()) return sched::start(o, s);
  char* p = sched::tempLike(s, count, red.type);
  char* t = sched::tempLike(s, count, red.type);
  transport::selfCopy(input, {p, count, red.type});  // (in place: before recvbuf changes)
  char* result = static_cast<char*>(red.out);
  bool haveResult = !exclusive;
  const Reduction r = red;
  for (size_t i = 0; i < partners.size(); ++i) {
    const uint32_t partner = partners[i];
    const bool last = i + 1 == partners.size();  // P is not needed after the last round
    sched::Schedule::Round& round = s->round();
    round.xfers.push_back({false, partner, {t, count, red.type}});
    round.xfers.push_back({true, partner, {p, count, red.type}});
    if (partner < me) {
      const bool first = !haveResult;
      round.after = [r, p, t, result, count, first, last]() {
        if (first)
          transport::selfCopy({t, count, r.type}, {result, count, r.type});
        else
          sched::combine(r, t, result, count);
        if (!last) sched::combine(r, t, p, count);
      };
      haveResult = true;
    } else {
      if (!last) round.after = [r, p, t, count]() { sched::combine(r, p, t, count); };
      std::swap(p, t);  // the fold landed in t, which becomes P
    }
  }
  return sched::start(o, s);
}

}  // namespace

extern const Algorithm kSchedScanAlgorithm =
    Algorithm("sched_scan", "recursive doubling: ceil(log2 n) rounds of one exchange with rank me ^ 2^k", kOps,
              kNonblocking, run);

}  // namespace shmcoll::coll
