// The collectives as the front end (api/) calls them.
//
// Every data-moving collective is described as per-pair blocks: for each pair
// of team members (i, j), what i sends j and where j receives it from i
// (ExchangeArgs, a transport::Pairs that also names its operation).  The
// reductions add an operator and the way the result is cut (Reduction).  An
// operation runs in one of two modes:
//   - blocking: run now, through the algorithm the registry picks for the
//     operation, the team and the sizes (registry.h), the inline path first;
//   - nonblocking: started as a schedule of point-to-point messages
//     (coll/sched.h) that the progress engine advances; the returned request
//     completes when it is done.  A persistent collective keeps its prepared
//     arguments and starts one such schedule at every MPI_Start.
// Both go through one dispatch point (registry.cc), which also serves the
// intercommunicator forms (coll/inter_exchange.cc, coll/inter_reduce.cc).
//
// Nothing here names an MPI handle: the front end turns handles into teams,
// dt::Types, buffers and an Operator.
#pragma once

#include <cstdint>

#include "coll/op.h"
#include "coll/team.h"
#include "dt/datatype.h"
#include "p2p/p2p.h"
#include "transport/block.h"
#include "transport/round.h"

namespace shmcoll::coll {

using transport::Block;

// What one rank contributes to a data-moving collective, indexed by team rank
// (the remote group's rank on an intercommunicator).
class ExchangeArgs : public transport::Pairs {
 public:
  Op op = Op::kAlltoall;
  // Pairs that carry several blocks (a neighbourhood collective's repeated
  // edges) move them in `rounds` rounds, the same number on every rank:
  // select(k) makes send() and recv() describe round k, each pair's k-th
  // block.  A blocking caller runs one exchange per round; a schedule
  // (sched_exchange.cc) one schedule round per round.
  uint32_t rounds = 1;
  virtual void select(uint32_t round) const {}
};

// The reduction operator, as the front end supplies it: apply(o, in, inout,
// count, type) computes inout[i] = in[i] (op) inout[i] for `count` elements
// of `type` laid out as in a user buffer (the order the standard gives user
// functions); hold(o, true/false) takes and drops a reference on what it
// refers to while a nonblocking schedule may still call it (nullptr: nothing
// to hold).  `a` and `b` are the front end's own words (api/: its operation
// and datatype handles).
struct Operator {
  void (*apply)(const Operator& o, const void* in, void* inout, uint64_t count, const dt::Type* type) = nullptr;
  void (*hold)(const Operator& o, bool take) = nullptr;
  uint64_t a = 0, b = 0;
  void operator()(const void* in, void* inout, uint64_t count, const dt::Type* type) const {
    apply(*this, in, inout, count, type);
  }
};

// One rank's part of a reduction: `count` elements of `type` at `in`, laid
// out as in a user buffer, or in `out` already (in == nullptr: MPI_IN_PLACE).
struct Reduction {
  const void* in = nullptr;
  void* out = nullptr;
  uint64_t count = 0;
  const dt::Type* type = nullptr;
  Operator op;
};

// Where an operation runs: a team, or both groups of an intercommunicator.
struct Groups {
  uint32_t localBase, localSize, remoteBase, remoteSize;  // each group's run of `peers`
};
struct Place {
  Team* team = nullptr;   // an intracommunicator's team; an intercommunicator's local group
  Team* peers = nullptr;  // an intercommunicator: both groups in the order all members share
  Groups groups{};
  bool inter() const { return peers != nullptr; }
  // The team nonblocking schedules run on.
  Team& scheduleTeam() const { return peers ? *peers : *team; }
};

// On an intercommunicator, which pairs across the groups a rank takes part in
// (the blocks of ExchangeArgs are then indexed by remote rank).
struct InterPlan {
  bool sendAll = false, recvAll = false;  // to / from every member of the remote group
  int sendTo = -1, recvFrom = -1;         // to / from one remote rank (rooted collectives)
};

// How a data-moving collective is run: with MPI_IN_PLACE (the receive blocks
// hold what is sent; the alltoall family) and, on an intercommunicator, its plan.
struct Flags {
  bool inPlace = false;
  InterPlan plan;
};

// ---- blocking -------------------------------------------------------------
// Each returns 0 or an error class with the reason recorded (err::kTruncate /
// err::kCount when a peer's byte count disagrees with ours: no byte is
// written outside our receive blocks, and every rank still returns).

// A data-moving collective.  Call it with the argument class itself (a
// `final` class), so the inline path computes its blocks without virtual calls.
template <class A>
int exchange(const Place& at, const A& a, const Flags& f = {});
int barrier(const Place& at);
// out = in_0 (op) in_1 (op) ... (op) in_{n-1} on every rank.
int allreduce(const Place& at, const Reduction& r);
// The same on `root` only (out is not touched elsewhere).  On an
// intercommunicator `root` is kInterRoot, kInterNone or the root's rank in the
// remote group, and the result is the other group's inputs reduced.
int reduce(const Place& at, const Reduction& r, int root);
// Element block p (counts[p] elements, in rank order) of the reduction lands
// in `out` on rank p; r.count is the sum of counts.  `block`: called as
// MPI_Reduce_scatter_block (for the algorithm's name).
int reduceScatter(const Place& at, const Reduction& r, const uint64_t* counts, bool block);
// out = in_0 (op) ... (op) in_me (inclusive) or ... in_{me-1} (exclusive;
// rank 0's out is not touched).  Intracommunicators only.
int scan(const Place& at, const Reduction& r, bool exclusive);

constexpr int kInterRoot = -1;  // on an intercommunicator: this rank is the root (MPI_ROOT)
constexpr int kInterNone = -2;  // this rank takes no part (MPI_PROC_NULL)

// ---- nonblocking ----------------------------------------------------------
// Each starts a schedule and hands out its request in *out (owned by the
// caller until p2p::release); returns 0 or an error class.  The argument
// object may go away after the call; buffers must stay valid until the
// request completes.  A persistent request calls these again at each
// MPI_Start, with the number it took at its _init call (FixedNumber).

int startExchange(const Place& at, const ExchangeArgs& a, const Flags& f, p2p::Request** out);
int startBarrier(const Place& at, p2p::Request** out);
int startAllreduce(const Place& at, const Reduction& r, p2p::Request** out);
int startReduce(const Place& at, const Reduction& r, int root, p2p::Request** out);
int startReduceScatter(const Place& at, const Reduction& r, const uint64_t* counts, bool block, p2p::Request** out);
int startScan(const Place& at, const Reduction& r, bool exclusive, p2p::Request** out);

// Persistent collectives take their operation number once, at
// initialisation: MPI-4.0 orders the _init calls like any collective but lets
// the requests be started in any order, even a different one on each rank.
// While a FixedNumber lives, a schedule started on `team` takes `number`
// instead of the next one.  Successive instances of one request reuse its
// number: a rank starts instance k+1 only once its instance k has completed,
// and messages of one sender on one tag match in order, so a message of
// instance k+1 that arrives early waits for instance k+1's receive.
class FixedNumber {
 public:
  FixedNumber(Team& team, uint32_t number) : team_(team), saved_(team.nbcSeq) { team.nbcSeq = number; }
  ~FixedNumber() { team_.nbcSeq = saved_; }
  FixedNumber(const FixedNumber&) = delete;
  FixedNumber& operator=(const FixedNumber&) = delete;

 private:
  Team& team_;
  uint32_t saved_;
};

// The barrier on `team` that MPI_Barrier would run, without the dispatcher
// (MPI_Init, MPI_Finalize and communicator teardown use it).
int barrierOn(Team& team);

// Team::lead after a blocking collective `op` from `root` on a team of n:
// the root of a bcast or scatter(v), which has the data its readers wait for
// when the same call follows the next barrier, as in a loop; in a team of 2,
// the rank that is not the root of a gather(v) or reduce, whose block the
// root waits for, and in a larger team that root, to leave last
// (Team::kLast); no one after any other collective.
inline uint32_t leadAfter(Op op, uint32_t root, uint32_t n) {
  switch (op) {
    case Op::kBcast:
    case Op::kScatter:
    case Op::kScatterv: return root;
    case Op::kGather:
    case Op::kGatherv:
    case Op::kReduce: return n == 2 ? 1 - root : root | Team::kLast;
    default: return Team::kNoLead;
  }
}

// Small allgather of `bytes` raw bytes per member into out[team.size() * bytes]
// (communicator creation).
int allgatherBytes(Team& team, const void* mine, uint64_t bytes, void* out);

}  // namespace shmcoll::coll

#include "coll/dispatch.h"  // (the template above)
