// The neighbourhood collectives: MPI_Neighbor_allgather(v) and
// MPI_Neighbor_alltoall(v,w) in every form (blocking, MPI_Ineighbor_...,
// MPI_Neighbor_..._init, each with int and big (_c) counts), on a
// communicator with a process topology (runtime/topo.h).
//
// How they run.  A rank's blocks go to its out-neighbours and come from its
// in-neighbours, edge by edge, in the order of the topology's lists.  The
// engine moves per-pair blocks (coll/coll.h), so the edges are grouped by
// peer once per topology (NeighborPlan, below) and a call describes each
// pair's edge block as it is (no copy, no new type).  The pairs are sparse
// (ExchangeArgs::allPairs false): a rank writes lanes only for its
// out-neighbours and waits only for its in-neighbours, small blocks travel
// in the lanes and large contiguous ones are pulled in place, as in the
// other collectives; the inline path walks only the plan's peers
// (transport::Pairs::outPeers), so a small call costs O(degree), not O(N).
// A pair with several edges (a periodic dimension of extent 1 or 2, a
// repeated graph edge, a rank its own neighbour several times) moves them
// together in a blocking call: its edges are the pair's parts
// (transport::Pairs::multiPart), end to end in one lane when they fit, else
// pulled part by part or streamed end to end, all in the call's one round
// (before, one round per edge: at 8 ranks on a 4 x 2 grid, twice the cost
// of a call).  A nonblocking or persistent call runs the topology's `rounds`
// (the most edges of any pair, known to all ranks when the topology is
// made) as one schedule of that many rounds of point-to-point messages
// (coll/sched_exchange.cc), round k each pair's k-th edge.
//
// Which edge meets which when a pair has several.  The k-th edge from a
// rank to a peer (in the sender's out-list order) lands in the k-th edge
// from that rank in the receiver's in-list, except on a Cartesian topology,
// where the block sent in the -1 direction of dimension d arrives in the
// receiver's +1 block of that dimension and the other way round (MPI-4.1
// section 8.6; it only matters in a periodic dimension of size 1 or 2, where
// both neighbours are the same rank): the receiver orders its in-edges from
// a peer by index XOR 1.  A Cartesian MPI_PROC_NULL neighbour moves nothing
// and its receive block is not touched.
#include <algorithm>
#include <memory>
#include <vector>

#include "api/coll_common.h"
#include "common/status.h"
#include "runtime/topo.h"

namespace shmcoll::rt {

// A topology's edges grouped by peer, for one rank (the topology is this
// rank's view already).
struct NeighborPlan {
  struct Peer {
    uint32_t first = 0, count = 0;  // its edges: edges[first, first + count), in matching order
  };
  struct Side {
    std::vector<int32_t> slot;  // per communicator rank: index into peers, or -1
    std::vector<Peer> peers;
    std::vector<uint32_t> edges;  // indices into the topology's in or out list
    std::vector<uint32_t> ranks;  // the peers' ranks, increasing (transport::Pairs::outPeers)
    uint32_t degree = 0;          // the list's length (MPI_PROC_NULL entries included)
  };
  Side out, in;
};

}  // namespace shmcoll::rt

namespace shmcoll::api::impl {

namespace {

using rt::NeighborPlan;

// Groups `list` (ranks, MPI_PROC_NULL allowed) by peer; `swapPairs` orders a
// peer's edges by index XOR 1 (a Cartesian receiver), else by index.
void group(const std::vector<int>& list, uint32_t n, bool swapPairs, NeighborPlan::Side* s) {
  s->degree = static_cast<uint32_t>(list.size());
  s->slot.assign(n, -1);
  std::vector<std::pair<uint32_t, uint32_t>> byPeer;  // (peer, key)
  for (uint32_t i = 0; i < list.size(); ++i)
    if (list[i] != MPI_PROC_NULL) byPeer.push_back({static_cast<uint32_t>(list[i]), swapPairs ? i ^ 1u : i});
  std::sort(byPeer.begin(), byPeer.end());
  for (size_t k = 0; k < byPeer.size(); ++k) {
    const uint32_t p = byPeer[k].first;
    if (k == 0 || byPeer[k - 1].first != p) {
      s->slot[p] = static_cast<int32_t>(s->peers.size());
      s->peers.push_back({static_cast<uint32_t>(s->edges.size()), 0});
      s->ranks.push_back(p);
    }
    s->edges.push_back(swapPairs ? byPeer[k].second ^ 1u : byPeer[k].second);
    ++s->peers.back().count;
  }
}

std::shared_ptr<const NeighborPlan> makePlan(const rt::Topology& t, uint32_t n) {
  auto p = std::make_shared<NeighborPlan>();
  group(t.out, n, false, &p->out);
  group(t.in, n, t.kind == MPI_CART, &p->in);
  return p;
}

// The communicator's plan, made on first use; an error when it has no
// topology or its topology refuses the neighbourhood collectives.
int planOf(const Call& call, const rt::Comm* c, std::shared_ptr<const NeighborPlan>* out) {
  const rt::Topology* t = c->topo.get();
  if (!t)
    return check::fail(call, MPI_ERR_TOPOLOGY, "comm has no process topology (%s)",
                       c->inter ? "an intercommunicator" : "make one with MPI_Cart_create or MPI_Dist_graph_create");
  if (!t->refusal.empty()) return check::fail(call, MPI_ERR_TOPOLOGY, "%s", t->refusal.c_str());
  if (!t->plan) [[unlikely]]
    t->plan = makePlan(*t, c->team.size());
  *out = t->plan;
  return MPI_SUCCESS;
}

inline coll::Block none() { return {nullptr, 0, dt::byteType()}; }

// One call's blocks per peer.  Blocking (multiPart): all of a pair's edges
// at once, as the pair's parts in the matching order (transport::Pairs); a
// schedule (select() called, also for a blocking call run as one): round
// `round_` (coll::ExchangeArgs::rounds), the pair's edge of that rank, or
// nothing.  E describes the edges: sendEdge(j) is the block
// for out-edge j, recvEdge(i) the block for in-edge i.
template <class E>
class NeighborArgs final : public coll::ExchangeArgs {
 public:
  E e;
  std::shared_ptr<const NeighborPlan> plan;

  void select(uint32_t round) const override {
    round_ = round;
    selected_ = true;
  }
  coll::Block send(uint32_t p) const override { return block(plan->out, p, true); }
  coll::Block recv(uint32_t p) const override { return block(plan->in, p, false); }
  bool sends(uint32_t p) const override { return has(plan->out, p); }
  bool receives(uint32_t p) const override { return has(plan->in, p); }
  uint32_t sendParts(uint32_t p) const override { return parts(plan->out, p); }
  uint32_t recvParts(uint32_t p) const override { return parts(plan->in, p); }
  coll::Block sendPart(uint32_t p, uint32_t k) const override { return part(plan->out, p, k, true); }
  coll::Block recvPart(uint32_t p, uint32_t k) const override { return part(plan->in, p, k, false); }
  const std::vector<uint32_t>* outPeers() const override { return &plan->out.ranks; }
  const std::vector<uint32_t>* inPeers() const override { return &plan->in.ranks; }

 private:
  coll::Block edge(uint32_t i, bool out) const { return out ? e.sendEdge(i) : e.recvEdge(i); }
  bool has(const NeighborPlan::Side& side, uint32_t p) const {
    const int32_t s = side.slot[p];
    return s >= 0 && (whole() || round_ < side.peers[s].count);
  }
  uint32_t parts(const NeighborPlan::Side& side, uint32_t p) const {
    const int32_t s = side.slot[p];
    return s < 0 ? 0 : side.peers[s].count;
  }
  coll::Block part(const NeighborPlan::Side& side, uint32_t p, uint32_t k, bool out) const {
    const int32_t s = side.slot[p];
    return s < 0 || k >= side.peers[s].count ? none() : edge(side.edges[side.peers[s].first + k], out);
  }
  // A pair of several parts gives its total size only (transport::Pairs).
  coll::Block block(const NeighborPlan::Side& side, uint32_t p, bool out) const {
    const int32_t s = side.slot[p];
    if (s < 0) return none();
    const NeighborPlan::Peer& q = side.peers[s];
    if (!whole()) return round_ < q.count ? edge(side.edges[q.first + round_], out) : none();
    if (q.count == 1) [[likely]]
      return edge(side.edges[q.first], out);
    uint64_t bytes = 0;
    for (uint32_t k = 0; k < q.count; ++k) bytes += edge(side.edges[q.first + k], out).bytes();
    return {nullptr, bytes, dt::byteType()};
  }

  bool whole() const { return multiPart && !selected_; }

  mutable uint32_t round_ = 0;
  mutable bool selected_ = false;
};

// ---- the edges of each operation -----------------------------------------------

// Allgather: one block to every out-neighbour; in-edge i at block i (allgather)
// or at its displacement (allgatherv).
template <class C, class D>
struct GatherEdges {
  coll::Block mine;
  Side r;
  uint64_t rc = 0;
  const C* rcounts = nullptr;  // allgatherv
  const D* displs = nullptr;
  coll::Block sendEdge(uint32_t) const { return mine; }
  coll::Block recvEdge(uint32_t i) const {
    return rcounts ? vectorBlock(r, rcounts, displs, i) : uniformBlock(r, rc, i);
  }
};

// Alltoall: `count` elements per edge on each side.
struct UniformEdges {
  Side s, r;
  uint64_t sc = 0, rc = 0;
  coll::Block sendEdge(uint32_t j) const { return uniformBlock(s, sc, j); }
  coll::Block recvEdge(uint32_t i) const { return uniformBlock(r, rc, i); }
};

// Alltoallv: per-edge counts and displacements (in extents), one type per side.
template <class C, class D>
struct VectorEdges {
  Side s, r;
  const C *scounts = nullptr, *rcounts = nullptr;
  const D *sdispls = nullptr, *rdispls = nullptr;
  coll::Block sendEdge(uint32_t j) const { return vectorBlock(s, scounts, sdispls, j); }
  coll::Block recvEdge(uint32_t i) const { return vectorBlock(r, rcounts, rdispls, i); }
};

// Alltoallw: per-edge counts, byte displacements and types; the resolved
// types live as long as the argument object ([0, outdegree) send, then receive).
template <class C>
struct TypedEdges {
  const char *sbuf = nullptr, *rbuf = nullptr;
  const C *scounts = nullptr, *rcounts = nullptr;
  const MPI_Aint *sdispls = nullptr, *rdispls = nullptr;
  std::shared_ptr<std::vector<const dt::Type*>> types;
  uint32_t outDegree = 0;
  coll::Block sendEdge(uint32_t j) const { return {sbuf + sdispls[j], static_cast<uint64_t>(scounts[j]), (*types)[j]}; }
  coll::Block recvEdge(uint32_t i) const {
    return {rbuf + rdispls[i], static_cast<uint64_t>(rcounts[i]), (*types)[outDegree + i]};
  }
};

// ---- checks and the hand-off -------------------------------------------------------

// What every form starts with: the plan, and no MPI_IN_PLACE.
template <class E>
int begin(const Call& call, const rt::Comm* c, coll::Op op, const void* sendbuf, NeighborArgs<E>* a) {
  SHMCOLL_CHECK(planOf(call, c, &a->plan));
  if (sendbuf == MPI_IN_PLACE)
    return check::fail(call, MPI_ERR_BUFFER, "sendbuf = MPI_IN_PLACE is not allowed in a neighbourhood collective");
  a->op = op;
  a->allPairs = false;
  a->skipEmpty = true;
  return MPI_SUCCESS;
}

// Blocking, one exchange that moves each pair's edges together (its parts);
// else one schedule of all the rounds.
template <class E>
int run(Call& call, rt::Comm* c, NeighborArgs<E>& a) {
  a.rounds = c->topo->rounds;
  a.multiPart = call.blocking() && a.rounds > 1;
  return runExchange(call, c, a);
}

// A per-edge array argument: as long as the degree (null allowed when it is 0).
template <class C>
int edgeCounts(const Call& call, const char* arg, const C* v, uint32_t degree) {
  return degree ? check::counts(call, arg, v, degree) : MPI_SUCCESS;
}
template <class T>
int edgeArray(const Call& call, const char* arg, const T* v, uint32_t degree) {
  return degree ? check::notNull(call, arg, v) : MPI_SUCCESS;
}

// One side of an alltoallv: counts, displacements and a buffer for each edge.
template <class C, class D>
int vectorEdges(const Call& call, const char* bufName, const void* buf, const char* countsName, const C* counts,
                const char* displsName, const D* displs, const dt::Type* t, uint32_t degree, Side* out) {
  SHMCOLL_CHECK(edgeCounts(call, countsName, counts, degree));
  SHMCOLL_CHECK(edgeArray(call, displsName, displs, degree));
  for (uint32_t i = 0; i < degree; ++i)
    SHMCOLL_CHECK(check::buffer(call, bufName, buf, static_cast<uint64_t>(counts[i]), t));
  *out = sideOf(buf, t);
  return MPI_SUCCESS;
}

// One side of an alltoallw, its types resolved into types[0, degree).
template <class C>
int typedEdges(const Call& call, const char* bufName, const void* buf, const char* countsName, const C* counts,
               const char* displsName, const MPI_Aint* displs, const char* typesName, const MPI_Datatype* handles,
               uint32_t degree, const dt::Type** types) {
  SHMCOLL_CHECK(edgeCounts(call, countsName, counts, degree));
  SHMCOLL_CHECK(edgeArray(call, displsName, displs, degree));
  SHMCOLL_CHECK(edgeArray(call, typesName, handles, degree));
  for (uint32_t i = 0; i < degree; ++i) {
    SHMCOLL_CHECK(check::datatypeAt(call, typesName, i, handles[i], &types[i]));
    SHMCOLL_CHECK(check::buffer(call, bufName, buf, static_cast<uint64_t>(counts[i]), types[i]));
  }
  return MPI_SUCCESS;
}

}  // namespace

template <class C>
int neighborAllgather(Call& call, const void* sendbuf, C sendcount, const dt::Type* sendtype, void* recvbuf,
                      C recvcount, const dt::Type* recvtype, rt::Comm* c) {
  NeighborArgs<GatherEdges<int, int>> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kNeighborAllgather, sendbuf, &a));
  SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, static_cast<uint64_t>(sendcount), sendtype));
  SHMCOLL_CHECK(
      check::buffer(call, "recvbuf", recvbuf, a.plan->in.degree * static_cast<uint64_t>(recvcount), recvtype));
  a.e.mine = {static_cast<const char*>(sendbuf), static_cast<uint64_t>(sendcount), sendtype};
  a.e.r = sideOf(recvbuf, recvtype);
  a.e.rc = static_cast<uint64_t>(recvcount);
  return run(call, c, a);
}

template <class C, class D>
int neighborAllgatherv(Call& call, const void* sendbuf, C sendcount, const dt::Type* sendtype, void* recvbuf,
                       const C recvcounts[], const D displs[], const dt::Type* recvtype, rt::Comm* c) {
  NeighborArgs<GatherEdges<C, D>> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kNeighborAllgatherv, sendbuf, &a));
  SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, static_cast<uint64_t>(sendcount), sendtype));
  SHMCOLL_CHECK(vectorEdges(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "displs", displs, recvtype,
                            a.plan->in.degree, &a.e.r));
  a.e.mine = {static_cast<const char*>(sendbuf), static_cast<uint64_t>(sendcount), sendtype};
  a.e.rcounts = recvcounts;
  a.e.displs = displs;
  return run(call, c, a);
}

template <class C>
int neighborAlltoall(Call& call, const void* sendbuf, C sendcount, const dt::Type* sendtype, void* recvbuf, C recvcount,
                     const dt::Type* recvtype, rt::Comm* c) {
  NeighborArgs<UniformEdges> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kNeighborAlltoall, sendbuf, &a));
  const uint64_t sc = static_cast<uint64_t>(sendcount), rc = static_cast<uint64_t>(recvcount);
  SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, a.plan->out.degree * sc, sendtype));
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, a.plan->in.degree * rc, recvtype));
  a.e.s = sideOf(sendbuf, sendtype);
  a.e.r = sideOf(recvbuf, recvtype);
  a.e.sc = sc;
  a.e.rc = rc;
  return run(call, c, a);
}

template <class C, class D>
int neighborAlltoallv(Call& call, const void* sendbuf, const C sendcounts[], const D sdispls[],
                      const dt::Type* sendtype, void* recvbuf, const C recvcounts[], const D rdispls[],
                      const dt::Type* recvtype, rt::Comm* c) {
  NeighborArgs<VectorEdges<C, D>> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kNeighborAlltoallv, sendbuf, &a));
  SHMCOLL_CHECK(vectorEdges(call, "sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, sendtype,
                            a.plan->out.degree, &a.e.s));
  SHMCOLL_CHECK(vectorEdges(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, recvtype,
                            a.plan->in.degree, &a.e.r));
  a.e.scounts = sendcounts;
  a.e.sdispls = sdispls;
  a.e.rcounts = recvcounts;
  a.e.rdispls = rdispls;
  return run(call, c, a);
}

template <class C, class D>
int neighborAlltoallw(Call& call, const void* sendbuf, const C sendcounts[], const D sdispls[],
                      const MPI_Datatype sendtypes[], void* recvbuf, const C recvcounts[], const D rdispls[],
                      const MPI_Datatype recvtypes[], rt::Comm* c) {
  static_assert(std::is_same_v<D, MPI_Aint>);
  NeighborArgs<TypedEdges<C>> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kNeighborAlltoallw, sendbuf, &a));
  const uint32_t outDeg = a.plan->out.degree, inDeg = a.plan->in.degree;
  a.e.types = std::make_shared<std::vector<const dt::Type*>>(static_cast<size_t>(outDeg) + inDeg);
  const dt::Type** types = a.e.types->data();
  SHMCOLL_CHECK(typedEdges(call, "sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtypes",
                           sendtypes, outDeg, types));
  SHMCOLL_CHECK(typedEdges(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, "recvtypes",
                           recvtypes, inDeg, types + outDeg));
  a.e.sbuf = static_cast<const char*>(sendbuf);
  a.e.rbuf = static_cast<const char*>(recvbuf);
  a.e.scounts = sendcounts;
  a.e.rcounts = recvcounts;
  a.e.sdispls = sdispls;
  a.e.rdispls = rdispls;
  a.e.outDegree = outDeg;
  return run(call, c, a);
}

}  // namespace shmcoll::api::impl

#include "generated/entry_neighbor.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/neighbor.txt)
