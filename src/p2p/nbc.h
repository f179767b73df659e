// Nonblocking collectives: schedules of point-to-point messages.
//
// The blocking collectives use the per-rank mailbox slots and tables, which
// one operation at a time holds; a nonblocking collective may be outstanding
// alongside others on any communicators, in any completion order, so it runs
// on the point-to-point layer instead, which buffers as much as needed.  A
// schedule is a list of rounds; each round posts its sends and receives, and
// when all have completed runs a local step (a fold, a copy) and starts the
// next.  progress() steps every schedule, so a schedule advances in any MPI
// call (and in every wait) of the process, and always completes in
// MPI_Wait/MPI_Test.
//
// Messages of schedules travel on the context p2p::kInternalCtx | ctx (never
// matched by user receives) with the operation's number on the communicator
// as tag: all members start nonblocking collectives on a communicator in the
// same order, so the numbers agree, and several outstanding operations on
// one communicator never match each other's messages.
#pragma once

#include <mpi.h>

#include "coll/coll.h"
#include "p2p/p2p.h"

namespace shmcoll::nbc {

// Persistent collectives (api/coll_persistent.cc) take their operation number
// once, at initialisation: MPI-4.0 orders the _init calls like any collective
// but lets the requests be started in any order, even a different one on each
// rank.  While a FixedNumber lives, a schedule started on `team` takes
// `number` instead of the next one.  Successive instances of one request
// reuse its number: a rank starts instance k+1 only once its instance k has
// completed, and messages of one sender on one tag match in order, so a
// message of instance k+1 that arrives early waits for instance k+1's receive.
class FixedNumber {
 public:
  FixedNumber(coll::Team& team, uint32_t number) : team_(team), saved_(team.nbcSeq) { team.nbcSeq = number; }
  ~FixedNumber() { team_.nbcSeq = saved_; }
  FixedNumber(const FixedNumber&) = delete;
  FixedNumber& operator=(const FixedNumber&) = delete;

 private:
  coll::Team& team_;
  uint32_t saved_;
};

// Starts the exchange `a` (any of the data-moving collectives as per-pair
// blocks, coll/coll.h).  The argument object may go away after the call: the
// blocks are copied, and with `inPlace` what the receive blocks hold is packed
// aside first and sent from there.
p2p::Request* exchange(coll::Team& team, const coll::ExchangeArgs& a, bool inPlace);

// Dissemination barrier.
p2p::Request* barrier(coll::Team& team);

// r.in == nullptr: MPI_IN_PLACE (the input is in r.out).  root < 0: the result
// lands on every rank (MPI_Iallreduce), else on `root` only.
p2p::Request* reduce(coll::Team& team, const coll::Reduction& r, int root);

// reduce_scatter(_block): slice p (counts[p] elements, in rank order; they add
// up to r.count) of the reduction lands in r.out on rank p.  In place
// (r.in == nullptr) the whole input is in r.out.
p2p::Request* reduceScatter(coll::Team& team, const coll::Reduction& r, const uint64_t* counts);

// scan (out = in_0 o ... o in_me) and exscan (out = in_0 o ... o in_{me-1};
// rank 0's out is never written).
p2p::Request* scan(coll::Team& team, const coll::Reduction& r, bool exclusive);

// Intercommunicators (nbc_inter.cc).  `peers` is the schedule team holding
// both groups (rt::Comm::peers); each group is a run of it.  The exchanges
// above work on it unchanged (an intercommunicator's pairs are the ones
// across the groups); the reductions need these.
struct Groups {
  uint32_t localBase, localSize, remoteBase, remoteSize;
};
constexpr int kInterRoot = -1;  // this rank is the root (MPI_ROOT)
constexpr int kInterNone = -2;  // this rank takes no part (MPI_PROC_NULL)
// The root's result is the other group's inputs reduced; `root` is
// kInterRoot, kInterNone or the root's rank in the remote group.
p2p::Request* interReduce(coll::Team& peers, const Groups& g, const coll::Reduction& r, int root);
// Every member's out is the other group's inputs reduced.
p2p::Request* interAllreduce(coll::Team& peers, const Groups& g, const coll::Reduction& r);
// The other group's inputs (r.count elements each) reduced, then cut in
// blocks of counts[i] elements (one per local rank; they add up to r.count).
p2p::Request* interReduceScatter(coll::Team& peers, const Groups& g, const coll::Reduction& r,
                                 const uint64_t* counts);

}  // namespace shmcoll::nbc
