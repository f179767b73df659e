// The collective operations, as the engine names them: algorithm forcing
// (SHMCOLL_ALGORITHM_<OP>), the decision table's per-operation rules and
// SHMCOLL_VERBOSE go by these names.
#pragma once

#include <cstdint>

namespace shmcoll::coll {

enum class Op : uint8_t {
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kAllgather,
  kAllgatherv,
  kBcast,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kReduce,
  kAllreduce,
  kReduceScatter,
  kReduceScatterBlock,
  kScan,
  kExscan,
  kBarrier,
  // On a communicator with a process topology: per-edge blocks between a
  // rank and its neighbours (api/neighbor.cc).
  kNeighborAlltoall,
  kNeighborAlltoallv,
  kNeighborAlltoallw,
  kNeighborAllgather,
  kNeighborAllgatherv,
};
constexpr int kOpCount = static_cast<int>(Op::kNeighborAllgatherv) + 1;
constexpr bool neighborOp(Op op) { return op >= Op::kNeighborAlltoall; }

// "alltoall", "reduce_scatter_block", ... (lower case, as in the decision table).
const char* opName(Op op);
// The operation named `name`, or false.
bool opByName(const char* name, Op* out);

}  // namespace shmcoll::coll
