// Algorithms: inter_reduce, inter_allreduce and inter_reduce_scatter -- the
// reducing collectives of intercommunicators as schedules of point-to-point
// messages (sched.h), blocking and nonblocking alike: each
// group's result is the reduction of the OTHER group's inputs, in that
// group's rank order (so a non-commutative operation gets
// b0 o b1 o ... o b(m-1)).
//
//  - reduce (root in group A): every member of group B sends its input to the
//    root, which folds them; group A's other members do nothing.  The root
//    receives m inputs and keeps m + 1 temporary copies.
//  - allreduce: each group's leader (local rank 0) receives its group's
//    inputs and folds them, then sends the result to every member of the
//    other group.  A leader receives n - 1 inputs and sends m results; the
//    others send one message and receive one.
//  - reduce_scatter(_block): each leader folds its group's inputs as above,
//    the two leaders swap their folds, and each leader scatters the other
//    group's fold over its own group by the (local) counts.
//
// All messages travel on the intercommunicator's internal context between
// members named by their index in its schedule team (both groups), so they
// never match user messages or another operation's.
//
// Chosen for every reduce, allreduce and reduce_scatter(_block) on an
// intercommunicator (scan and exscan are defined on intracommunicators only).
#include <vector>

#include "coll/sched.h"

namespace shmcoll::coll {

namespace {

// Round 1 of allreduce and reduce_scatter: the local leader gathers its
// group's inputs and folds them into the returned buffer (only the leader's
// is meaningful).
char* gatherFold(sched::Schedule* s, const Groups& g, const Reduction& r) {
  const uint32_t me = s->me(), leader = g.localBase;
  sched::Schedule::Round& gather = s->round();
  if (me != leader) {
    gather.xfers.push_back({true, leader, {static_cast<const char*>(r.in), r.count, r.type}});
    return nullptr;
  }
  std::vector<const char*> in(g.localSize);
  in[0] = static_cast<const char*>(r.in);
  for (uint32_t p = 1; p < g.localSize; ++p) {
    char* t = sched::tempLike(s, r.count, r.type);
    in[p] = t;
    gather.xfers.push_back({false, leader + p, {t, r.count, r.type}});
  }
  char* acc = sched::tempLike(s, r.count, r.type);
  const Reduction red = r;
  gather.after = [in, acc, red]() { sched::fold(in, acc, red, red.count); };
  return acc;
}

int runReduce(Operation& o) {
  Team& peers = *o.at.peers;
  const Groups& g = o.at.groups;
  const Reduction& r = *o.red;
  const int root = o.root;
  auto* s = new sched::Schedule(peers);  // (every member makes one: the schedules' numbers must agree)
  if (root == kInterNone) return sched::start(o, s);
  s->hold(r);
  if (root >= 0) {  // a member of the root's remote group
    s->round().xfers.push_back(
        {true, g.remoteBase + static_cast<uint32_t>(root), {static_cast<const char*>(r.in), r.count, r.type}});
    return sched::start(o, s);
  }
  std::vector<const char*> in(g.remoteSize);
  sched::Schedule::Round& gather = s->round();
  for (uint32_t p = 0; p < g.remoteSize; ++p) {
    char* t = sched::tempLike(s, r.count, r.type);
    in[p] = t;
    gather.xfers.push_back({false, g.remoteBase + p, {t, r.count, r.type}});
  }
  char* acc = sched::tempLike(s, r.count, r.type);
  sched::foldAfter(gather, in, acc, r, r.count, {static_cast<const char*>(r.out), r.count, r.type});
  return sched::start(o, s);
}

int runAllreduce(Operation& o) {
  Team& peers = *o.at.peers;
  const Groups& g = o.at.groups;
  const Reduction& r = *o.red;
  auto* s = new sched::Schedule(peers);
  s->hold(r);
  char* acc = gatherFold(s, g, r);
  sched::Schedule::Round& bc = s->round();
  if (acc)
    for (uint32_t p = 0; p < g.remoteSize; ++p) bc.xfers.push_back({true, g.remoteBase + p, {acc, r.count, r.type}});
  bc.xfers.push_back({false, g.remoteBase, {static_cast<const char*>(r.out), r.count, r.type}});
  return sched::start(o, s);
}

int runReduceScatter(Operation& o) {
  Team& peers = *o.at.peers;
  const Groups& g = o.at.groups;
  const Reduction& r = *o.red;
  const uint64_t* counts = o.counts;
  auto* s = new sched::Schedule(peers);
  s->hold(r);
  const uint32_t me = s->me(), leader = g.localBase;
  char* acc = gatherFold(s, g, r);
  sched::Schedule::Round& swap = s->round();
  char* theirs = nullptr;
  if (acc) {
    theirs = sched::tempLike(s, r.count, r.type);
    swap.xfers.push_back({true, g.remoteBase, {acc, r.count, r.type}});
    swap.xfers.push_back({false, g.remoteBase, {theirs, r.count, r.type}});
  }
  sched::Schedule::Round& scatter = s->round();
  const char* out = static_cast<const char*>(r.out);
  if (me != leader) {
    scatter.xfers.push_back({false, leader, {out, counts[me - leader], r.type}});
    return sched::start(o, s);
  }
  const int64_t ext = r.type->extent();
  uint64_t off = counts[0];
  for (uint32_t p = 1; p < g.localSize; ++p) {
    scatter.xfers.push_back({true, leader + p, {theirs + ext * static_cast<int64_t>(off), counts[p], r.type}});
    off += counts[p];
  }
  const Block own{theirs, counts[0], r.type}, dst{out, counts[0], r.type};
  scatter.after = [own, dst]() { transport::selfCopy(own, dst); };
  return sched::start(o, s);
}

}  // namespace

extern const Algorithm kInterReduceAlgorithm =
    Algorithm("inter_reduce", "the other group's inputs to the root, folded in their rank order", opBit(Op::kReduce),
              kBlocking | kNonblocking, runReduce)
        .onIntercommunicators();

extern const Algorithm kInterAllreduceAlgorithm =
    Algorithm("inter_allreduce", "each leader folds its group's inputs and sends the fold to the other group",
              opBit(Op::kAllreduce), kBlocking | kNonblocking, runAllreduce)
        .onIntercommunicators();

extern const Algorithm kInterReduceScatterAlgorithm =
    Algorithm("inter_reduce_scatter", "the leaders fold their groups' inputs, swap the folds and scatter them",
              opBit(Op::kReduceScatter) | opBit(Op::kReduceScatterBlock), kBlocking | kNonblocking, runReduceScatter)
        .onIntercommunicators();

}  // namespace shmcoll::coll
