// A communicator whose processes lie on several nodes (real ones, or the
// pretend nodes of SHMCOLL_FAKE_NODES): its node split, its leaders and the
// node stages the hierarchical algorithms (hier.cc, hier_alltoall.cc) are
// made of.  Set up once per communicator by nodes.cc and cached with its
// CommState (freed by the attribute's delete callback).
#ifndef SHMCOLL_ACCEL_NODES_H
#define SHMCOLL_ACCEL_NODES_H

#include <vector>

#include "accel.h"

namespace shmcoll_accel {

struct Nodes {
  int count = 0;                       // nodes of the communicator, numbered in the order of their lowest rank
  int node = 0;                        // mine
  int lrank = 0;                       // my rank in my node (the ranks of a node keep their order in the communicator)
  int ln = 0;                          // processes of my node
  std::vector<int> node_of, local_of;  // by rank of the communicator
  std::vector<std::vector<int>> members;  // by node: its ranks, in local order
  MPI_Comm node_comm = MPI_COMM_NULL;     // my node (host communicator, for packing)
  MPI_Comm leaders = MPI_COMM_NULL;       // the local ranks 0, ranked by node; MPI_COMM_NULL elsewhere
  CommState* seg = nullptr;               // my node's segment (its own rounds, engine.cc)
  MPI_Comm peers = MPI_COMM_NULL;         // a duplicate of the communicator: direct alltoalls, eager reduces
  // bytes of one block a round of the hierarchical alltoall moves (hier_alltoall.cc), the same on
  // every process of the communicator: the smallest slot over all nodes / (2 (n - smallest node)),
  // so that a round's blocks to or from other nodes fit half of any node's slots; 0: too small
  size_t chunk = 0;
  // bytes of one block a round of the hierarchical allgather moves (hier.cc), the same everywhere:
  // m * slot / (m + n) for the smallest node and slot, so that a round's pieces fit any node's slots
  size_t gchunk = 0;
  size_t least_half = 0;  // the smallest half-slot of any node (a choice every node must make alike)
  // bcasts and reduces of at most this many bytes go eager across the nodes (hier.cc,
  // hier_reduce.cc): the least eager bound of any node's segment; 0 (none) where a node has one
  // process, whose invalid call nobody would see (peers is made with it)
  size_t eager = 0;
  // the leader's staging buffers, kept between calls
  std::vector<std::vector<struct Span>> out;  // by local rank: what it receives, where it lies (NodeScatter)
  std::vector<char> sbuf, rbuf;
  std::vector<int> scounts, sdispls, rcounts, rdispls;

  bool leader() const { return lrank == 0; }
};

// A run of contiguous bytes; a list of them is read or written in order.
struct Span {
  char* p;
  size_t n;
};

// A leader's staging buffer sized to `bytes`; false when memory is short.
inline bool Stage(std::vector<char>& v, size_t bytes) {
  try {
    v.resize(bytes);
    return true;
  } catch (...) {
    return false;
  }
}

// The node stages, each a sequence of rounds on the node's segment whose
// round 0 carries every local rank's verdict (false: some rank of the node
// passed ok = false, and nothing was written).
//   NodeScatter: the bytes of the leader's spans nd.out[l] reach local rank l,
//     written into its own spans (which add up to the same size).
//   NodeBcast: the leader's `data` (bytes) reaches every local rank, written
//     into its spans (which add up to bytes).
bool NodeScatter(Nodes& nd, const std::vector<Span>& mine, bool ok);
bool NodeBcast(Nodes& nd, const char* data, size_t bytes, const std::vector<Span>& mine, bool ok);
// The leaders' agreement: every node's verdict, PMPI_Allreduce(MIN) over the leaders.
bool LeadersAgree(Nodes& nd, bool ok);
// The same, the largest of the nodes' *pieces (set to it) and, when given,
// whether every node has *all set (set to that): one PMPI_Allreduce(MAX).
bool LeadersAgreeMax(Nodes& nd, bool ok, uint64_t* pieces, bool* all = nullptr);

}  // namespace shmcoll_accel

#endif  // SHMCOLL_ACCEL_NODES_H
