// The collectives as the API layer calls them.
//
// Every data-moving collective is expressed as an exchange: for each pair of
// team members (i, j), a stream of bytes that i packs from its send block for
// j and j unpacks into its receive block for i.  Alltoall(v,w) have one send
// block per peer; allgather(v) send one block to everybody (broadcast).  The
// registry (registry.cc) picks an algorithm per operation; each algorithm
// lives in its own file with a comment saying how it works and what it costs.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "coll/engine.h"
#include "dt/datatype.h"

namespace shmcoll::coll {

// `count` elements of `type` at `buf`: one side of one pair.
struct Block {
  const char* buf = nullptr;
  uint64_t count = 0;
  const dt::Type* type = nullptr;
  uint64_t bytes() const { return count * type->size; }
};

// The operation an exchange belongs to (algorithm forcing and SHMCOLL_VERBOSE
// go by it; the reducing collectives run their exchanges under their own name).
enum class Op {
  kAlltoall, kAlltoallv, kAlltoallw, kAllgather, kAllgatherv,
  kBcast, kGather, kGatherv, kScatter, kScatterv,
  kReduce, kAllreduce, kReduceScatter, kReduceScatterBlock, kScan, kExscan,
  kCount
};
const char* opName(Op op);

// What one rank contributes to an exchange.  Indexed by team rank.
class ExchangeArgs {
 public:
  Op op = Op::kAlltoall;
  // send(p) is the same block for every p (allgather family, bcast): the
  // sender announces it once, in a lane all readers share.  Must be the same
  // on every rank of the operation, senders or not (readers look for it).
  bool broadcast = false;
  virtual ~ExchangeArgs() = default;
  virtual Block send(uint32_t peer) const = 0;
  virtual Block recv(uint32_t peer) const = 0;
  // Pairs that the operation leaves empty by definition, on both sides (the
  // non-root ranks of a rooted collective exchange nothing with each other):
  // the engine skips them without publishing or reading a table entry, so a
  // rooted operation costs O(1) control traffic on a non-root rank.  When
  // `allPairs` is false, sends(p) on rank i must equal receives(i) on rank p.
  bool allPairs = true;
  virtual bool sends(uint32_t peer) const { return true; }
  virtual bool receives(uint32_t peer) const { return true; }
  // A receiver does not wait for the pairs it expects no bytes from (the
  // alltoall and allgather families): in a sparse alltoallv no rank waits
  // for a peer that sends it nothing.  Senders still write every lane, so a
  // receiver that expects bytes from a peer that sends none reads the empty
  // lane and returns MPI_ERR_COUNT.  The other disagreement (bytes sent to a
  // receiver that expects none) is not reported: the receiver consumes a
  // stream or pull it finds while it waits anyway, else the sender gives up
  // once the receiver has finished (Engine::slotReaders); the receive buffer
  // is never touched.
  bool skipEmpty = false;
  bool receivesFrom(uint32_t peer) const {
    return (allPairs || receives(peer)) && (!skipEmpty || recv(peer).bytes() != 0);
  }
  // A pair this rank skips only because its receive block is empty.
  bool skipsEmpty(uint32_t peer) const {
    return skipEmpty && (allPairs || receives(peer)) && recv(peer).bytes() == 0;
  }
};

// Runs the exchange with the algorithm the registry picks.
// Returns 0, or MPI_ERR_TRUNCATE / MPI_ERR_COUNT when a peer's byte count
// disagrees with ours (no byte is written outside our receive blocks, and
// every rank still returns), or another error class.
int exchange(Team& team, const ExchangeArgs& args);
// The same without trying the inline path (exchange_inline.h) first: for
// callers that already did.
int exchangeGeneral(Team& team, const ExchangeArgs& args);

// The reducing collectives (reduce.cc).  `in` is this rank's contribution,
// `count` elements of `type` laid out as in a user buffer, or nullptr when it
// is already in `out` (MPI_IN_PLACE).  `dtype` is the handle of `type` (user
// operations receive it); `op` must have passed op::check for it.
struct Reduction {
  const void* in = nullptr;
  void* out = nullptr;
  uint64_t count = 0;
  const dt::Type* type = nullptr;
  MPI_Datatype dtype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
// out = in_0 (op) in_1 (op) ... (op) in_{n-1} on every rank.
int allreduce(Team& team, const Reduction& r);
// The same, on `root` only (out is not touched elsewhere).
int reduce(Team& team, const Reduction& r, uint32_t root);
// Element block p (counts[p] elements, in rank order) of the reduction lands
// in `out` on rank p; r.count is the sum of counts.  `block` says whether the
// caller is MPI_Reduce_scatter_block (for algorithm naming).
int reduceScatter(Team& team, const Reduction& r, const uint64_t* counts, bool block);
// out = in_0 (op) ... (op) in_me (inclusive) or ... in_{me-1} (exclusive; rank
// 0's out is not touched).
int scan(Team& team, const Reduction& r, bool exclusive);

// Dissemination barrier over the team.
int barrier(Team& team);

// Small allgather of `bytes` raw bytes per member into out[team.size() * bytes];
// used when communicators are created.
int allgatherBytes(Team& team, const void* mine, uint64_t bytes, void* out);

}  // namespace shmcoll::coll
