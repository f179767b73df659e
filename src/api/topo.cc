// Process topologies (MPI-4.0 chapter 8, without the neighbourhood
// collectives): MPI_Dims_create, the Cartesian and graph constructors and
// queries, the distributed graph constructors and queries, MPI_Topo_test.
// The generated entry points have checked the communicators, the info
// argument and the scalar outputs; arrays are checked here against the
// lengths that make them significant.  The pure parts (factorisation,
// coordinates, neighbour lists) are in runtime/topo.cc, the collective part
// of the distributed graph constructors in api/dist_graph.cc; the new
// communicators come from rt::splitComm and rt::dupComm with the identity
// order whatever `reorder` says (docs/TOPOLOGIES.md).
#include "runtime/topo.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "api/check.h"
#include "api/dist_graph.h"
#include "runtime/comm.h"

namespace shmcoll::api::impl {

namespace {

const char* kindName(int kind) {
  switch (kind) {
    case MPI_CART:
      return "a Cartesian topology";
    case MPI_GRAPH:
      return "a graph topology";
    case MPI_DIST_GRAPH:
      return "a distributed graph topology";
    default:
      return "no topology";
  }
}

// c carries a topology of `kind` (MPI_ERR_TOPOLOGY).
int topologyOf(const Call& call, const rt::Comm* c, int kind, const rt::Topology** t) {
  const int has = c->topo ? c->topo->kind : MPI_UNDEFINED;
  if (has != kind)
    return check::fail(call, MPI_ERR_TOPOLOGY, "comm has %s, where %s is needed%s", kindName(has), kindName(kind),
                       c->inter ? " (it is an intercommunicator)" : "");
  *t = c->topo.get();
  return MPI_SUCCESS;
}

// An array of n elements the call reads or writes: not NULL when n > 0.
int array(const Call& call, const char* arg, const void* p, int64_t n) {
  return n <= 0 || p ? MPI_SUCCESS : check::cold::isNull(call, arg);
}

// A length argument (ndims, maxdims, ...): not negative (MPI_ERR_ARG).
int notNegative(const Call& call, const char* arg, int n) {
  return n >= 0 ? MPI_SUCCESS : check::cold::negative(call, MPI_ERR_ARG, arg, n);
}

// MPI_Cart_create's and MPI_Cart_map's grid: ndims >= 0 (MPI_ERR_ARG), every
// dimension positive (MPI_ERR_DIMS), no more nodes than c has (MPI_ERR_ARG).
int grid(const Call& call, const rt::Comm* c, int ndims, const int* dims, const int* periods, int64_t* size) {
  SHMCOLL_CHECK(notNegative(call, "ndims", ndims));
  SHMCOLL_CHECK(array(call, "dims", dims, ndims));
  SHMCOLL_CHECK(array(call, "periods", periods, ndims));
  for (int d = 0; d < ndims; ++d)
    if (dims[d] <= 0)
      return check::fail(call, MPI_ERR_DIMS, "dims[%d] = %d is not positive (the grid's extent in dimension %d)", d,
                         dims[d], d);
  *size = rt::gridSize(std::vector<int>(dims, dims + ndims));
  if (*size > c->team.size()) {
    if (*size == INT64_MAX)
      return check::fail(call, MPI_ERR_ARG, "the grid dims describe has more than %d nodes, comm only %u processes",
                         INT32_MAX, c->team.size());
    return check::fail(call, MPI_ERR_ARG, "the grid dims describe has %lld nodes but comm only %u processes",
                       static_cast<long long>(*size), c->team.size());
  }
  return MPI_SUCCESS;
}

// MPI_Graph_create's and MPI_Graph_map's graph: 0 <= nnodes <= c's size
// (MPI_ERR_ARG), index non-decreasing from 0 up (MPI_ERR_ARG), every edge a
// node (MPI_ERR_RANK).
int graph(const Call& call, const rt::Comm* c, int nnodes, const int* index, const int* edges) {
  SHMCOLL_CHECK(notNegative(call, "nnodes", nnodes));
  if (static_cast<uint32_t>(nnodes) > c->team.size())
    return check::fail(call, MPI_ERR_ARG, "nnodes = %d is more than the %u processes of comm", nnodes, c->team.size());
  SHMCOLL_CHECK(array(call, "index", index, nnodes));
  for (int i = 0; i < nnodes; ++i) {
    const int before = i ? index[i - 1] : 0;
    if (index[i] < before)
      return check::fail(call, MPI_ERR_ARG, "index[%d] = %d is less than %s = %d (index holds running totals)", i,
                         index[i], i ? "index[i - 1]" : "0", before);
  }
  const int nedges = nnodes ? index[nnodes - 1] : 0;
  SHMCOLL_CHECK(array(call, "edges", edges, nedges));
  for (int e = 0; e < nedges; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes)
      return check::fail(call, MPI_ERR_RANK, "edges[%d] = %d is not a node of the graph (0 .. %d)", e, edges[e],
                         nnodes - 1);
  return MPI_SUCCESS;
}

// A graph node or grid rank: 0 <= rank < n (MPI_ERR_RANK).
int node(const Call& call, const char* arg, int rank, int64_t n, const char* what) {
  if (rank >= 0 && rank < n) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_RANK, "%s = %d is not a %s (0 .. %lld)", arg, rank, what,
                     static_cast<long long>(n - 1));
}

// Copies min(n, max) elements, the standard's "as much as fits" of the *_get
// queries.
void copyOut(const std::vector<int>& v, int max, int* out) {
  std::copy_n(v.begin(), std::min<size_t>(v.size(), static_cast<size_t>(max)), out);
}

// The communicator made by a constructor that ran on every member.
int created(const Call& call, int rc, rt::Comm* nc, MPI_Comm* newcomm) {
  if (rc) return check::engine(call, rc);
  *newcomm = nc ? nc->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}

}  // namespace

// ---- MPI_Dims_create -----------------------------------------------------------------

int dimsCreate(Call& call, int nnodes, int ndims, int dims[]) {
  SHMCOLL_CHECK(notNegative(call, "nnodes", nnodes));
  SHMCOLL_CHECK(notNegative(call, "ndims", ndims));
  SHMCOLL_CHECK(array(call, "dims", dims, ndims));
  if (nnodes == 0) return check::fail(call, MPI_ERR_DIMS, "nnodes = 0: no grid of positive extents has 0 nodes");
  int64_t fixed = 1;  // (saturates above nnodes, which is then no multiple of it)
  int free = 0;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] < 0)
      return check::fail(call, MPI_ERR_DIMS, "dims[%d] = %d is negative (0: to be chosen, or a fixed extent)", d,
                         dims[d]);
    if (dims[d] == 0) ++free;
    fixed = std::min<int64_t>(fixed * std::max(dims[d], 1), int64_t{nnodes} + 1);
  }
  if (nnodes % fixed)
    return check::fail(call, MPI_ERR_DIMS, "nnodes = %d is not a multiple of the product of the nonzero dims", nnodes);
  std::vector<int> chosen;
  if (!rt::balancedFactors(static_cast<int>(nnodes / fixed), free, &chosen)) {
    if (ndims == 0)
      return check::fail(call, MPI_ERR_DIMS, "ndims = 0: a grid of no dimension has 1 node, not %d", nnodes);
    return check::fail(call, MPI_ERR_DIMS, "the dims multiply to %lld, not nnodes = %d, and none is 0 (to be chosen)",
                       static_cast<long long>(fixed), nnodes);
  }
  for (int d = 0, next = 0; d < ndims; ++d)
    if (dims[d] == 0) dims[d] = chosen[next++];
  return MPI_SUCCESS;
}

// ---- Cartesian topologies ------------------------------------------------------------

int cartCreate(Call& call, rt::Comm* c, int ndims, const int dims[], const int periods[], int reorder,
               MPI_Comm* commCart) {
  int64_t size = 0;
  SHMCOLL_CHECK(grid(call, c, ndims, dims, periods, &size));
  // Identity placement: grid rank i is rank i of comm_old (reorder changes
  // nothing).
  (void)reorder;
  const int rank = static_cast<int>(c->team.rank);
  rt::Comm* nc = nullptr;
  const int rc = rt::splitComm(*c, rank < size ? 0 : MPI_UNDEFINED, rank, &nc);
  if (rc == 0 && nc)
    nc->topo = rt::makeCart(std::vector<int>(dims, dims + ndims), std::vector<int>(periods, periods + ndims),
                            static_cast<int>(nc->team.rank));
  return created(call, rc, nc, commCart);
}

int cartMap(Call& call, rt::Comm* c, int ndims, const int dims[], const int periods[], int* newrank) {
  int64_t size = 0;
  SHMCOLL_CHECK(grid(call, c, ndims, dims, periods, &size));
  return answer(newrank, c->team.rank < size ? static_cast<int>(c->team.rank) : MPI_UNDEFINED);
}

int cartdimGet(Call& call, rt::Comm* c, int* ndims) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_CART, &t));
  return answer(ndims, t->dims.size());
}

int cartGet(Call& call, rt::Comm* c, int maxdims, int dims[], int periods[], int coords[]) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_CART, &t));
  SHMCOLL_CHECK(notNegative(call, "maxdims", maxdims));
  const int n = std::min<int>(maxdims, static_cast<int>(t->dims.size()));
  SHMCOLL_CHECK(array(call, "dims", dims, n));
  SHMCOLL_CHECK(array(call, "periods", periods, n));
  SHMCOLL_CHECK(array(call, "coords", coords, n));
  std::vector<int> mine(t->dims.size());
  rt::cartCoords(t->dims, static_cast<int>(c->team.rank), mine.data());
  copyOut(t->dims, n, dims);
  copyOut(t->periods, n, periods);
  copyOut(mine, n, coords);
  return MPI_SUCCESS;
}

int cartCoords(Call& call, rt::Comm* c, int rank, int maxdims, int coords[]) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_CART, &t));
  SHMCOLL_CHECK(node(call, "rank", rank, c->team.size(), "rank of comm"));
  SHMCOLL_CHECK(notNegative(call, "maxdims", maxdims));
  const int n = std::min<int>(maxdims, static_cast<int>(t->dims.size()));
  SHMCOLL_CHECK(array(call, "coords", coords, n));
  std::vector<int> all(t->dims.size());
  rt::cartCoords(t->dims, rank, all.data());
  copyOut(all, n, coords);
  return MPI_SUCCESS;
}

int cartRank(Call& call, rt::Comm* c, const int coords[], int* rank) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_CART, &t));
  const int ndims = static_cast<int>(t->dims.size());
  SHMCOLL_CHECK(array(call, "coords", coords, ndims));
  std::vector<int> at(coords, coords + ndims);
  for (int d = 0; d < ndims; ++d) {
    const int n = t->dims[d];
    if (at[d] >= 0 && at[d] < n) continue;
    if (!t->periods[d])
      return check::fail(call, MPI_ERR_ARG, "coords[%d] = %d is outside dimension %d (0 .. %d), which is not periodic",
                         d, at[d], d, n - 1);
    at[d] = ((at[d] % n) + n) % n;  // a periodic dimension wraps
  }
  return answer(rank, rt::cartRankAt(t->dims, at.data()));
}

int cartShift(Call& call, rt::Comm* c, int direction, int disp, int* rankSource, int* rankDest) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_CART, &t));
  const int ndims = static_cast<int>(t->dims.size());
  if (direction < 0 || direction >= ndims) {
    if (ndims == 0)
      return check::fail(call, MPI_ERR_ARG, "direction = %d: comm's Cartesian topology has no dimension", direction);
    return check::fail(call, MPI_ERR_ARG, "direction = %d is not a dimension of comm's grid (0 .. %d)", direction,
                       ndims - 1);
  }
  std::vector<int> mine(ndims);
  rt::cartCoords(t->dims, static_cast<int>(c->team.rank), mine.data());
  // (int64_t: disp may be INT_MIN)
  *rankSource = rt::cartStep(*t, mine.data(), direction, -static_cast<int64_t>(disp));
  *rankDest = rt::cartStep(*t, mine.data(), direction, disp);
  return MPI_SUCCESS;
}

int cartSub(Call& call, rt::Comm* c, const int remainDims[], MPI_Comm* newcomm) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_CART, &t));
  const int ndims = static_cast<int>(t->dims.size());
  SHMCOLL_CHECK(array(call, "remain_dims", remainDims, ndims));
  // The sub-grids are told apart by the coordinates in the dropped
  // dimensions (the color); inside one, comm's order is the row-major order
  // of the kept dimensions (the key).
  std::vector<int> mine(ndims), dims, periods;
  rt::cartCoords(t->dims, static_cast<int>(c->team.rank), mine.data());
  int color = 0;
  for (int d = 0; d < ndims; ++d) {
    if (remainDims[d]) {
      dims.push_back(t->dims[d]);
      periods.push_back(t->periods[d]);
    } else {
      color = color * t->dims[d] + mine[d];
    }
  }
  rt::Comm* nc = nullptr;
  const int rc = rt::splitComm(*c, color, static_cast<int>(c->team.rank), &nc);
  if (rc == 0 && nc) nc->topo = rt::makeCart(std::move(dims), std::move(periods), static_cast<int>(nc->team.rank));
  return created(call, rc, nc, newcomm);
}

// ---- graph topologies ----------------------------------------------------------------

int graphCreate(Call& call, rt::Comm* c, int nnodes, const int index[], const int edges[], int reorder,
                MPI_Comm* commGraph) {
  SHMCOLL_CHECK(graph(call, c, nnodes, index, edges));
  (void)reorder;  // identity placement, as for MPI_Cart_create
  const int rank = static_cast<int>(c->team.rank);
  rt::Comm* nc = nullptr;
  const int rc = rt::splitComm(*c, rank < nnodes ? 0 : MPI_UNDEFINED, rank, &nc);
  if (rc == 0 && nc) {
    const int nedges = index[nnodes - 1];
    nc->topo = rt::makeGraph(std::vector<int>(index, index + nnodes), std::vector<int>(edges, edges + nedges),
                             static_cast<int>(nc->team.rank));
  }
  return created(call, rc, nc, commGraph);
}

int graphMap(Call& call, rt::Comm* c, int nnodes, const int index[], const int edges[], int* newrank) {
  SHMCOLL_CHECK(graph(call, c, nnodes, index, edges));
  return answer(newrank, c->team.rank < static_cast<uint32_t>(nnodes) ? static_cast<int>(c->team.rank) : MPI_UNDEFINED);
}

int graphdimsGet(Call& call, rt::Comm* c, int* nnodes, int* nedges) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_GRAPH, &t));
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPI_SUCCESS;
}

int graphGet(Call& call, rt::Comm* c, int maxindex, int maxedges, int index[], int edges[]) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_GRAPH, &t));
  SHMCOLL_CHECK(notNegative(call, "maxindex", maxindex));
  SHMCOLL_CHECK(notNegative(call, "maxedges", maxedges));
  SHMCOLL_CHECK(array(call, "index", index, std::min<int64_t>(maxindex, t->index.size())));
  SHMCOLL_CHECK(array(call, "edges", edges, std::min<int64_t>(maxedges, t->edges.size())));
  copyOut(t->index, maxindex, index);
  copyOut(t->edges, maxedges, edges);
  return MPI_SUCCESS;
}

namespace {
// Node `rank`'s neighbours in an MPI_Graph_create graph.
std::vector<int> neighborsOf(const rt::Topology* t, int rank) {
  const int first = rank ? t->index[rank - 1] : 0;
  return std::vector<int>(t->edges.begin() + first, t->edges.begin() + t->index[rank]);
}
}  // namespace

int graphNeighborsCount(Call& call, rt::Comm* c, int rank, int* nneighbors) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_GRAPH, &t));
  SHMCOLL_CHECK(node(call, "rank", rank, t->index.size(), "node of comm's graph"));
  return answer(nneighbors, neighborsOf(t, rank).size());
}

int graphNeighbors(Call& call, rt::Comm* c, int rank, int maxneighbors, int neighbors[]) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_GRAPH, &t));
  SHMCOLL_CHECK(node(call, "rank", rank, t->index.size(), "node of comm's graph"));
  SHMCOLL_CHECK(notNegative(call, "maxneighbors", maxneighbors));
  const std::vector<int> v = neighborsOf(t, rank);
  SHMCOLL_CHECK(array(call, "neighbors", neighbors, std::min<int64_t>(maxneighbors, v.size())));
  copyOut(v, maxneighbors, neighbors);
  return MPI_SUCCESS;
}

// ---- distributed graph topologies ----------------------------------------------------

int distGraphCreate(Call& call, rt::Comm* c, int n, const int sources[], const int degrees[], const int destinations[],
                    const int weights[], rt::Info* info, int reorder, MPI_Comm* commDistGraph) {
  (void)info, (void)reorder;  // no hint is used; identity placement
  return createDistGraph(call, c, DistGraphArgs::general(n, sources, degrees, destinations, weights), commDistGraph);
}

int distGraphCreateAdjacent(Call& call, rt::Comm* c, int indegree, const int sources[], const int sourceweights[],
                            int outdegree, const int destinations[], const int destweights[], rt::Info* info,
                            int reorder, MPI_Comm* commDistGraph) {
  (void)info, (void)reorder;
  return createDistGraph(
      call, c, DistGraphArgs::adjacent(indegree, sources, sourceweights, outdegree, destinations, destweights),
      commDistGraph);
}

int distGraphNeighborsCount(Call& call, rt::Comm* c, int* indegree, int* outdegree, int* weighted) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_DIST_GRAPH, &t));
  *indegree = static_cast<int>(t->in.size());
  *outdegree = static_cast<int>(t->out.size());
  *weighted = t->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

int distGraphNeighbors(Call& call, rt::Comm* c, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
                       int destinations[], int destweights[]) {
  const rt::Topology* t = nullptr;
  SHMCOLL_CHECK(topologyOf(call, c, MPI_DIST_GRAPH, &t));
  SHMCOLL_CHECK(notNegative(call, "maxindegree", maxindegree));
  SHMCOLL_CHECK(notNegative(call, "maxoutdegree", maxoutdegree));
  // Fewer places than neighbours: the first ones (MPI-4.0 section 8.5.5).
  const int64_t nin = std::min<int64_t>(maxindegree, t->in.size());
  const int64_t nout = std::min<int64_t>(maxoutdegree, t->out.size());
  SHMCOLL_CHECK(array(call, "sources", sources, nin));
  SHMCOLL_CHECK(array(call, "destinations", destinations, nout));
  // Weights are written only for a weighted graph, and never through the
  // MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY sentinels.
  const auto wanted = [](const int* w) { return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY; };
  const bool inW = t->weighted && wanted(sourceweights), outW = t->weighted && wanted(destweights);
  if (inW) SHMCOLL_CHECK(array(call, "sourceweights", sourceweights, nin));
  if (outW) SHMCOLL_CHECK(array(call, "destweights", destweights, nout));
  copyOut(t->in, maxindegree, sources);
  copyOut(t->out, maxoutdegree, destinations);
  if (inW) copyOut(t->inWeights, maxindegree, sourceweights);
  if (outW) copyOut(t->outWeights, maxoutdegree, destweights);
  return MPI_SUCCESS;
}

// ---- MPI_Topo_test -------------------------------------------------------------------

int topoTest(Call&, rt::Comm* c, int* status) { return answer(status, c->topo ? c->topo->kind : MPI_UNDEFINED); }

}  // namespace shmcoll::api::impl

#include "generated/entry_topo.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/topo.txt)
