// Process topologies: what MPI_Cart_create, MPI_Graph_create and the
// MPI_Dist_graph_create functions attach to the communicator they make, and
// what the topology queries and the neighbourhood collectives read.
//
// A topology is immutable once made and shared (MPI_Comm_dup and
// MPI_Comm_idup keep it: the copy points at the same one).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shmcoll::rt {

// Who a rank exchanges with in a neighbourhood collective, grouped by peer
// (api/neighbor.cc builds it).
struct NeighborPlan;

struct Topology {
  int kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH

  // MPI_CART: the grid, row-major (the last dimension varies fastest).
  std::vector<int> dims, periods;  // periods: 0 or 1
  // MPI_GRAPH: the whole graph as given to MPI_Graph_create.
  std::vector<int> index, edges;

  // This rank's neighbour lists in the standard's order, for every kind:
  //   MPI_CART: for each dimension d, the source then the destination of
  //     MPI_Cart_shift(comm, d, 1), MPI_PROC_NULL where a non-periodic
  //     dimension ends (both lists are the same);
  //   MPI_GRAPH: the rank's neighbours as given (both lists are the same);
  //   MPI_DIST_GRAPH: its sources (in) and destinations (out).
  std::vector<int> in, out;
  // MPI_DIST_GRAPH: the weights, when given (weighted); empty otherwise.
  bool weighted = false;
  std::vector<int> inWeights, outWeights;

  // The most edges between one pair of ranks (a rank and itself included),
  // over the whole topology: the same on every rank.  A nonblocking or
  // persistent neighbourhood collective runs that many schedule rounds,
  // round k moving each pair's k-th edge; a blocking one moves a pair's
  // edges together in one round when this is more than 1 (api/neighbor.cc).
  // 1 unless a periodic dimension has extent 1 or 2, a graph repeats an
  // edge, or a rank is its own neighbour.
  uint32_t rounds = 1;
  // The same without a rank's edges to itself.
  uint32_t pairRounds = 1;

  // Why the neighbourhood collectives refuse this topology (empty: they
  // don't), the same on every rank: an MPI_Graph_create graph in which a
  // rank lists another more often than it is listed back.
  std::string refusal;

  // Built once, by api/neighbor.cc, on the first neighbourhood collective.
  mutable std::shared_ptr<const NeighborPlan> plan;
};

// ---- the pure parts of the topology functions (runtime/topo.cc) ----------------------

// MPI_Dims_create's factorisation: `m` (> 0) split into `k` (>= 0) factors
// as close to each other as possible (the smallest spread between the
// largest and the smallest; among equal spreads, the smallest largest
// factor), in non-increasing order.  False when k == 0 and m != 1.
bool balancedFactors(int m, int k, std::vector<int>* out);

// The number of nodes of a grid (the product of dims; 1 for no dimension).
int64_t gridSize(const std::vector<int>& dims);
// The coordinates of `rank` (0 <= rank < gridSize) in a row-major grid.
void cartCoords(const std::vector<int>& dims, int rank, int* coords);
// The rank at `coords` (each already within its dimension).
int cartRankAt(const std::vector<int>& dims, const int* coords);
// The rank `disp` steps from `coords` along `direction`: wrapped on a
// periodic dimension, MPI_PROC_NULL past the end of another.
int cartStep(const Topology& t, const int* coords, int direction, int64_t disp);

// A Cartesian topology as seen by grid rank `rank` (neighbour lists filled).
std::shared_ptr<Topology> makeCart(std::vector<int> dims, std::vector<int> periods, int rank);
// An MPI_Graph_create topology as seen by node `rank`, with its `refusal`
// when some pair of nodes list each other a different number of times.
std::shared_ptr<Topology> makeGraph(std::vector<int> index, std::vector<int> edges, int rank);
// Why a graph (index and edges as MPI_Graph_create takes them) is not
// symmetric counting multiplicities: the first pair (i, j), in order, where
// i lists j a different number of times than j lists i; empty if none.
std::string graphAsymmetry(const std::vector<int>& index, const std::vector<int>& edges);
// The most times one list names one rank (1 for an empty list; MPI_PROC_NULL
// entries are not counted, nor `skip`'s).
uint32_t mostRepeats(const int* list, size_t n, int skip = MPI_PROC_NULL);

}  // namespace shmcoll::rt
