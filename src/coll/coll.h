// The collectives as the API layer calls them.
//
// Every data-moving collective is expressed as an exchange: for each pair of
// team members (i, j), a stream of bytes that i packs from its send block for
// j and j unpacks into its receive block for i.  Alltoall(v,w) have one send
// block per peer; allgather(v) send one block to everybody (broadcast).  The
// registry (registry.cc) picks an algorithm per operation; each algorithm
// lives in its own file with a comment saying how it works and what it costs.
#pragma once

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

enum class Op { kAlltoall, kAlltoallv, kAlltoallw, kAllgather, kAllgatherv, kCount };
const char* opName(Op op);

// What one rank contributes to an exchange.  Indexed by team rank.
class ExchangeArgs {
 public:
  Op op = Op::kAlltoall;
  bool broadcast = false;  // send(p) is the same block for every p (allgather family)
  virtual ~ExchangeArgs() = default;
  virtual Block send(uint32_t peer) const = 0;
  virtual Block recv(uint32_t peer) const = 0;
};

// Runs the exchange with the algorithm the registry picks.
// Returns 0, or MPI_ERR_TRUNCATE / MPI_ERR_COUNT when a peer's byte count
// disagrees with ours (no byte is written outside our receive blocks, and
// every rank still returns), or another error class.
int exchange(Team& team, const ExchangeArgs& args);

// Dissemination barrier over the team.
int barrier(Team& team);

// Small allgather of `bytes` raw bytes per member into out[team.size() * bytes];
// used when communicators are created.
int allgatherBytes(Team& team, const void* mine, uint64_t bytes, void* out);

}  // namespace shmcoll::coll
