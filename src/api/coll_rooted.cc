// The rooted collectives MPI_Bcast, MPI_Gather(v) and MPI_Scatter(v) in
// every form (blocking, nonblocking, persistent; int and big counts).
//
// Each is one exchange (coll::exchange) in which only the pairs that involve
// the root carry data; the others are marked empty on both sides
// (ExchangeArgs::allPairs = false), so a non-root rank writes or reads one
// lane and nothing else.  MPI_Bcast is the root's block broadcast to
// everybody (its mailbox chunks are read by all, or its buffer is pulled in
// place by each rank when it is large and contiguous); MPI_Gather is an
// alltoallv in which everybody sends only to the root; MPI_Scatter the
// reverse.  Arguments that the standard calls significant only at the root
// are only checked there.  On an intercommunicator the root's group sends to
// or receives from the other group, as point-to-point schedules (see
// coll_common.h).
#include <type_traits>

#include "api/coll_common.h"

namespace shmcoll::api::impl {

namespace {

class BcastArgs final : public coll::ExchangeArgs {
 public:
  coll::Block block;
  uint32_t root = 0, me = 0;
  coll::Block send(uint32_t) const override { return block; }
  coll::Block recv(uint32_t) const override { return block; }
  bool sends(uint32_t) const override { return me == root; }
  bool receives(uint32_t p) const override { return me != root && p == root; }
};

// The root's side of a gather (its receive blocks) or a scatter (its send
// blocks), and the one block every other rank moves.
template <class C, class D>
class RootedArgs : public coll::ExchangeArgs {
 public:
  coll::Block mine;  // what this rank moves (an in-place root: its own block of `side`)
  Side side;         // root only
  uint64_t count = 0;
  const C* counts = nullptr;  // the v forms
  const D* displs = nullptr;
  uint32_t root = 0, me = 0;
  bool atRoot() const { return me == root; }
  coll::Block rootBlock(uint32_t p) const {
    return counts ? vectorBlock(side, counts, displs, p) : uniformBlock(side, count, p);
  }
};

template <class C, class D>
class GatherArgs final : public RootedArgs<C, D> {
 public:
  static constexpr bool kGather = true;
  coll::Block send(uint32_t) const override { return this->mine; }
  coll::Block recv(uint32_t p) const override { return this->atRoot() ? this->rootBlock(p) : this->mine; }
  bool sends(uint32_t p) const override { return !this->atRoot() && p == this->root; }
  bool receives(uint32_t) const override { return this->atRoot(); }
};

template <class C, class D>
class ScatterArgs final : public RootedArgs<C, D> {
 public:
  static constexpr bool kGather = false;
  coll::Block send(uint32_t p) const override { return this->atRoot() ? this->rootBlock(p) : this->mine; }
  coll::Block recv(uint32_t) const override { return this->mine; }
  bool sends(uint32_t) const override { return this->atRoot(); }
  bool receives(uint32_t p) const override { return !this->atRoot() && p == this->root; }
};

// A buffer argument with its count and datatype, as the caller passed them.
struct BufArg {
  const char* bufName;
  const void* buf;
  const char* countName;
  int64_t count;
  const char* typeName;
  MPI_Datatype type;
};

// The root's side: per-peer counts (the v forms, a->counts) or `count` each.
template <class C, class D>
int rootSide(const Call& call, const BufArg& b, uint32_t n, RootedArgs<C, D>* a) {
  if (a->counts)
    return vectorSide(call, b.bufName, b.buf, b.countName, a->counts, "displs", a->displs, b.typeName, b.type, n,
                      &a->side);
  SHMCOLL_CHECK(uniformSide(call, b.bufName, b.buf, b.countName, b.count, b.typeName, b.type, n, &a->side));
  a->count = static_cast<uint64_t>(b.count);
  return MPI_SUCCESS;
}

// One block of `count` elements (the non-root ranks' side, a broadcast's buffer).
int oneBlock(const Call& call, const BufArg& b, coll::Block* out) {
  Side s;
  SHMCOLL_CHECK(uniformSide(call, b.bufName, b.buf, b.countName, b.count, b.typeName, b.type, 1, &s));
  *out = {s.buf, static_cast<uint64_t>(b.count), s.type};
  return MPI_SUCCESS;
}

// An intracommunicator's gather (A a GatherArgs) or scatter of n ranks from
// or to `root`, seen by rank `me`.
template <class A>
void intraRooted(A* a, uint32_t root, uint32_t me, uint32_t n) {
  constexpr bool kGather = A::kGather;
  a->allPairs = false;
  // A non-root's one lane of a gather may go in its broadcast ring, and the
  // lanes of a scatter's root in pieces of its ring lane (transport::Pairs::ahead).
  a->ahead = kGather || segment::aheadSplitBytes(n - 1) != 0;
  a->aheadSplit = !kGather;
  a->root = root;
  a->me = me;
  // (The walks' shortcuts, transport::Pairs::onlyPeer: the root pairs with
  // every rank in one direction, a non-root with the root alone.)
  if (me == root) {
    (kGather ? a->noSends : a->noReceives) = true;
  } else {
    (kGather ? a->noReceives : a->noSends) = true;
    a->onlyPeer = root;
  }
}

// Gather (A a GatherArgs) and scatter: `root` is the root's side (the receive
// side of a gather, the send side of a scatter; per-peer `counts` and
// `displs` in the v forms, else null), `leaf` the one block every rank moves
// (the send side of a gather).  MPI_IN_PLACE is the root's leaf buffer.
template <class A, class C, class D>
int rooted(Call& call, coll::Op op, const C* counts, const D* displs, const BufArg& root, const BufArg& leaf,
           int rootRank, rt::Comm* c) {
  constexpr bool kGather = A::kGather;
  A a;
  a.op = op;
  a.counts = counts;
  a.displs = displs;
  const uint32_t n = rt::peerCount(*c);
  if (c->inter) {
    InterPlan plan;
    if (rootRank == MPI_ROOT) {  // moves a block with every remote rank; a.me == a.root picks them
      SHMCOLL_CHECK(check::interNotInPlace(call, root.bufName, root.buf));
      SHMCOLL_CHECK(rootSide(call, root, n, &a));
      (kGather ? plan.recvAll : plan.sendAll) = true;
    } else if (rootRank != MPI_PROC_NULL) {
      SHMCOLL_CHECK(check::interNotInPlace(call, leaf.bufName, leaf.buf));
      SHMCOLL_CHECK(oneBlock(call, leaf, &a.mine));
      a.me = 1;
      (kGather ? plan.sendTo : plan.recvFrom) = rootRank;
    }
    return runInter(call, c, a, plan);
  }
  intraRooted(&a, static_cast<uint32_t>(rootRank), c->team.rank, n);
  const bool inPlace = leaf.buf == MPI_IN_PLACE;
  if (inPlace && !a.atRoot())
    return check::fail(call, MPI_ERR_BUFFER, "%s = MPI_IN_PLACE is only allowed at the root (rank %d)", leaf.bufName,
                       rootRank);
  if (a.atRoot()) {
    SHMCOLL_CHECK(kGather ? check::recvNotInPlace(call, root.bufName, root.buf)
                          : check::notInPlace(call, root.bufName, root.buf));
    SHMCOLL_CHECK(rootSide(call, root, n, &a));
  }
  if (inPlace) {
    a.mine = a.rootBlock(a.me);
  } else {
    SHMCOLL_CHECK(oneBlock(call, leaf, &a.mine));
  }
  return runExchange(call, c, a);
}

}  // namespace

// ---- MPI_Bcast ----------------------------------------------------------------------

namespace {

// An intracommunicator's broadcast from `root`, seen by rank `me`.
void intraBcast(BcastArgs* a, uint32_t root, uint32_t me) {
  a->allPairs = false;
  a->root = root;
  a->me = me;
  a->broadcast = true;  // on every rank: receivers read the root's one shared lane
  a->ahead = true;      // ... or its broadcast ring's
  if (me == root) {     // (the walks' shortcuts, transport::Pairs::onlyPeer)
    a->noReceives = true;
  } else {
    a->noSends = true;
    a->onlyPeer = root;
  }
}

}  // namespace

template <class C>
int bcast(Call& call, void* buffer, C count, MPI_Datatype datatype, int root, rt::Comm* c) {
  const BufArg b{"buffer", buffer, "count", count, "datatype", datatype};
  BcastArgs a;
  a.op = coll::Op::kBcast;
  if (c->inter) {
    // The root passes MPI_ROOT, the rest of its group MPI_PROC_NULL (nothing
    // of theirs is significant), the other group the root's rank.
    InterPlan plan;
    if (root != MPI_PROC_NULL) {
      SHMCOLL_CHECK(check::interNotInPlace(call, "buffer", buffer));
      SHMCOLL_CHECK(oneBlock(call, b, &a.block));
      if (root == MPI_ROOT) {
        plan.sendAll = true;
      } else {
        plan.recvFrom = root;
      }
    }
    return runInter(call, c, a, plan);
  }
  SHMCOLL_CHECK(check::notInPlace(call, "buffer", buffer));
  SHMCOLL_CHECK(oneBlock(call, b, &a.block));
  intraBcast(&a, static_cast<uint32_t>(root), c->team.rank);
  return runExchange(call, c, a);
}

// MPI_Bcast's fast path (desc/coll_rooted.txt, fastrc=): the blocking call
// on an intracommunicator whose arguments pass every check, run without a
// Call (one is made only to report an error of the exchange).
int bcastFast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  rt::Comm* c = fastComm(comm, root);
  BcastArgs a;
  if (!c || !fastBlock(buffer, count, datatype, &a.block)) return kDeclined;
  if (c->team.size() == 1) return MPI_SUCCESS;  // (the root's buffer is the result)
  a.op = coll::Op::kBcast;
  intraBcast(&a, static_cast<uint32_t>(root), c->team.rank);
  if (const int rc = coll::exchange(rt::placeOf(*c), a, coll::Flags{})) [[unlikely]]
    return fastFailed("MPI_Bcast", comm, rc);
  return MPI_SUCCESS;
}

// ---- MPI_Gather(v) and MPI_Scatter(v) ------------------------------------------------

// MPI_Gather (kGather) and MPI_Scatter, which take the same arguments.
template <bool kGather, class C>
int gatherScatter(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
                  MPI_Datatype recvtype, int root, rt::Comm* c) {
  const BufArg send{"sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype};
  const BufArg recv{"recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype};
  using A = std::conditional_t<kGather, GatherArgs<C, MPI_Aint>, ScatterArgs<C, MPI_Aint>>;
  return rooted<A, C, MPI_Aint>(call, kGather ? coll::Op::kGather : coll::Op::kScatter, nullptr, nullptr,
                                kGather ? recv : send, kGather ? send : recv, root, c);
}

// MPI_Gather's and MPI_Scatter's fast paths (desc/coll_rooted.txt, fastrc=),
// as bcastFast.
template <bool kGather>
int gatherScatterFast(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                      MPI_Datatype recvtype, int root, MPI_Comm comm) {
  rt::Comm* c = fastComm(comm, root);
  if (!c) return kDeclined;
  using A = std::conditional_t<kGather, GatherArgs<int, MPI_Aint>, ScatterArgs<int, MPI_Aint>>;
  const void* rootBuf = kGather ? recvbuf : sendbuf;
  const void* leafBuf = kGather ? sendbuf : recvbuf;
  const int rootCount = kGather ? recvcount : sendcount, leafCount = kGather ? sendcount : recvcount;
  const MPI_Datatype rootType = kGather ? recvtype : sendtype, leafType = kGather ? sendtype : recvtype;
  const uint32_t n = c->team.size();
  A a;
  a.op = kGather ? coll::Op::kGather : coll::Op::kScatter;
  intraRooted(&a, static_cast<uint32_t>(root), c->team.rank, n);
  if (a.atRoot()) {
    const dt::Type* t = fastSide(rootBuf, rootCount, rootType, n);
    if (!t) return kDeclined;
    a.side = sideOf(rootBuf, t);
    a.count = static_cast<uint64_t>(rootCount);
    if (leafBuf == MPI_IN_PLACE) {
      a.mine = a.rootBlock(a.me);
    } else if (!fastBlock(leafBuf, leafCount, leafType, &a.mine)) {
      return kDeclined;
    }
  } else if (!fastBlock(leafBuf, leafCount, leafType, &a.mine)) {
    return kDeclined;
  }
  if (const int rc = coll::exchange(rt::placeOf(*c), a, coll::Flags{})) [[unlikely]]
    return fastFailed(kGather ? "MPI_Gather" : "MPI_Scatter", comm, rc);
  return MPI_SUCCESS;
}

template <class C, class D>
int gatherv(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, const C recvcounts[],
            const D displs[], MPI_Datatype recvtype, int root, rt::Comm* c) {
  return rooted<GatherArgs<C, D>>(call, coll::Op::kGatherv, recvcounts, displs,
                                  {"recvbuf", recvbuf, "recvcounts", 0, "recvtype", recvtype},
                                  {"sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype}, root, c);
}

template <class C, class D>
int scatterv(Call& call, const void* sendbuf, const C sendcounts[], const D displs[], MPI_Datatype sendtype,
             void* recvbuf, C recvcount, MPI_Datatype recvtype, int root, rt::Comm* c) {
  return rooted<ScatterArgs<C, D>>(call, coll::Op::kScatterv, sendcounts, displs,
                                   {"sendbuf", sendbuf, "sendcounts", 0, "sendtype", sendtype},
                                   {"recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype}, root, c);
}

}  // namespace shmcoll::api::impl

#include "generated/entry_coll_rooted.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/coll_rooted.txt)
