// The rooted collectives MPI_Bcast, MPI_Gather(v) and MPI_Scatter(v) in
// every form (blocking, nonblocking, persistent; int and big counts).
//
// Each is one exchange (coll::exchange) in which only the pairs that involve
// the root carry data; the others are marked empty on both sides
// (ExchangeArgs::allPairs = false), so a non-root rank publishes or reads one
// table entry and nothing else.  MPI_Bcast is the root's block broadcast to
// everybody (its mailbox chunks are read by all, or its buffer is pulled in
// place by each rank when it is large and contiguous); MPI_Gather is an
// alltoallv in which everybody sends only to the root; MPI_Scatter the
// reverse.  Arguments that the standard calls significant only at the root
// are only checked there.  On an intercommunicator the root's group sends to
// or receives from the other group, as point-to-point schedules (see
// coll_common.h).
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
  coll::Block send(uint32_t) const override { return this->mine; }
  coll::Block recv(uint32_t p) const override { return this->atRoot() ? this->rootBlock(p) : this->mine; }
  bool sends(uint32_t p) const override { return !this->atRoot() && p == this->root; }
  bool receives(uint32_t) const override { return this->atRoot(); }
};

template <class C, class D>
class ScatterArgs final : public RootedArgs<C, D> {
 public:
  coll::Block send(uint32_t p) const override { return this->atRoot() ? this->rootBlock(p) : this->mine; }
  coll::Block recv(uint32_t) const override { return this->mine; }
  bool sends(uint32_t) const override { return this->atRoot(); }
  bool receives(uint32_t p) const override { return !this->atRoot() && p == this->root; }
};

// The root's side: per-peer counts (the v forms, a->counts) or `count` each.
template <class C, class D>
int rootSide(const Call& call, const char* bufName, const void* buf, const char* countName, C count,
             const char* typeName, MPI_Datatype type, uint32_t n, RootedArgs<C, D>* a) {
  if (a->counts)
    return vectorSide(call, bufName, buf, countName, a->counts, "displs", a->displs, typeName, type, n, &a->side);
  SHMCOLL_CHECK(uniformSide(call, bufName, buf, countName, count, typeName, type, n, &a->side));
  a->count = static_cast<uint64_t>(count);
  return MPI_SUCCESS;
}

// One block of `count` elements (the non-root ranks' side).
int oneBlock(const Call& call, const char* bufName, const void* buf, const char* countName, int64_t count,
             const char* typeName, MPI_Datatype type, coll::Block* out) {
  Side s;
  SHMCOLL_CHECK(uniformSide(call, bufName, buf, countName, count, typeName, type, 1, &s));
  *out = {s.buf, static_cast<uint64_t>(count), s.type};
  return MPI_SUCCESS;
}

}  // namespace

// ---- MPI_Bcast ----------------------------------------------------------------------

template <class C>
int bcast(Call& call, void* buffer, C count, MPI_Datatype datatype, int root, rt::Comm* c) {
  BcastArgs a;
  a.op = coll::Op::kBcast;
  if (c->inter) {
    // The root passes MPI_ROOT, the rest of its group MPI_PROC_NULL (nothing
    // of theirs is significant), the other group the root's rank.
    InterPlan plan;
    if (root != MPI_PROC_NULL) {
      SHMCOLL_CHECK(check::interNotInPlace(call, "buffer", buffer));
      SHMCOLL_CHECK(oneBlock(call, "buffer", buffer, "count", count, "datatype", datatype, &a.block));
      if (root == MPI_ROOT) {
        plan.sendAll = true;
      } else {
        plan.recvFrom = root;
      }
    }
    return runInter(call, c, a, plan);
  }
  SHMCOLL_CHECK(check::notInPlace(call, "buffer", buffer));
  SHMCOLL_CHECK(oneBlock(call, "buffer", buffer, "count", count, "datatype", datatype, &a.block));
  a.allPairs = false;
  a.root = static_cast<uint32_t>(root);
  a.me = c->team.rank;
  a.broadcast = true;  // on every rank: receivers read the root's one shared lane
  return runExchange(call, c, a);
}

// ---- MPI_Gather(v) ------------------------------------------------------------------

namespace {

// Gather and gatherv: `recvcounts` is null for the uniform form.
template <class C, class D>
int gatherAny(Call& call, coll::Op op, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf,
              C recvcount, const C* recvcounts, const D* displs, MPI_Datatype recvtype, int root, rt::Comm* c) {
  GatherArgs<C, D> a;
  a.op = op;
  a.counts = recvcounts;
  a.displs = displs;
  const uint32_t n = rt::peerCount(*c);
  if (c->inter) {
    InterPlan plan;
    if (root == MPI_ROOT) {  // receives a block from every remote rank; a.me == a.root picks them
      SHMCOLL_CHECK(check::interNotInPlace(call, "recvbuf", recvbuf));
      SHMCOLL_CHECK(rootSide(call, "recvbuf", recvbuf, recvcounts ? "recvcounts" : "recvcount", recvcount,
                             "recvtype", recvtype, n, &a));
      plan.recvAll = true;
    } else if (root != MPI_PROC_NULL) {
      SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
      SHMCOLL_CHECK(oneBlock(call, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, &a.mine));
      a.me = 1;
      plan.sendTo = root;
    }
    return runInter(call, c, a, plan);
  }
  a.allPairs = false;
  a.root = static_cast<uint32_t>(root);
  a.me = c->team.rank;
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace && !a.atRoot())
    return check::fail(call, MPI_ERR_BUFFER, "sendbuf = MPI_IN_PLACE is only allowed at the root (rank %d)", root);
  if (a.atRoot()) {
    SHMCOLL_CHECK(check::recvNotInPlace(call, "recvbuf", recvbuf));
    SHMCOLL_CHECK(rootSide(call, "recvbuf", recvbuf, recvcounts ? "recvcounts" : "recvcount", recvcount,
                           "recvtype", recvtype, n, &a));
  }
  if (inPlace) {
    a.mine = a.rootBlock(a.me);
  } else {
    SHMCOLL_CHECK(oneBlock(call, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, &a.mine));
  }
  return runExchange(call, c, a);
}

}  // namespace

template <class C>
int gather(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
           MPI_Datatype recvtype, int root, rt::Comm* c) {
  return gatherAny<C, MPI_Aint>(call, coll::Op::kGather, sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr,
                                nullptr, recvtype, root, c);
}

template <class C, class D>
int gatherv(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, const C recvcounts[],
            const D displs[], MPI_Datatype recvtype, int root, rt::Comm* c) {
  return gatherAny(call, coll::Op::kGatherv, sendbuf, sendcount, sendtype, recvbuf, C{0}, recvcounts, displs,
                   recvtype, root, c);
}

// ---- MPI_Scatter(v) -----------------------------------------------------------------

namespace {

// Scatter and scatterv: `sendcounts` is null for the uniform form.
template <class C, class D>
int scatterAny(Call& call, coll::Op op, const void* sendbuf, C sendcount, const C* sendcounts, const D* displs,
               MPI_Datatype sendtype, void* recvbuf, C recvcount, MPI_Datatype recvtype, int root, rt::Comm* c) {
  ScatterArgs<C, D> a;
  a.op = op;
  a.counts = sendcounts;
  a.displs = displs;
  const uint32_t n = rt::peerCount(*c);
  if (c->inter) {
    InterPlan plan;
    if (root == MPI_ROOT) {  // sends a block to every remote rank; a.me == a.root picks them
      SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
      SHMCOLL_CHECK(rootSide(call, "sendbuf", sendbuf, sendcounts ? "sendcounts" : "sendcount", sendcount,
                             "sendtype", sendtype, n, &a));
      plan.sendAll = true;
    } else if (root != MPI_PROC_NULL) {
      SHMCOLL_CHECK(check::interNotInPlace(call, "recvbuf", recvbuf));
      SHMCOLL_CHECK(oneBlock(call, "recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, &a.mine));
      a.me = 1;
      plan.recvFrom = root;
    }
    return runInter(call, c, a, plan);
  }
  a.allPairs = false;
  a.root = static_cast<uint32_t>(root);
  a.me = c->team.rank;
  const bool inPlace = recvbuf == MPI_IN_PLACE;
  if (inPlace && !a.atRoot())
    return check::fail(call, MPI_ERR_BUFFER, "recvbuf = MPI_IN_PLACE is only allowed at the root (rank %d)", root);
  if (a.atRoot()) {
    SHMCOLL_CHECK(check::notInPlace(call, "sendbuf", sendbuf));
    SHMCOLL_CHECK(rootSide(call, "sendbuf", sendbuf, sendcounts ? "sendcounts" : "sendcount", sendcount,
                           "sendtype", sendtype, n, &a));
  }
  if (inPlace) {
    a.mine = a.rootBlock(a.me);
  } else {
    SHMCOLL_CHECK(oneBlock(call, "recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, &a.mine));
  }
  return runExchange(call, c, a);
}

}  // namespace

template <class C>
int scatter(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
            MPI_Datatype recvtype, int root, rt::Comm* c) {
  return scatterAny<C, MPI_Aint>(call, coll::Op::kScatter, sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf,
                                 recvcount, recvtype, root, c);
}

template <class C, class D>
int scatterv(Call& call, const void* sendbuf, const C sendcounts[], const D displs[], MPI_Datatype sendtype,
             void* recvbuf, C recvcount, MPI_Datatype recvtype, int root, rt::Comm* c) {
  return scatterAny(call, coll::Op::kScatterv, sendbuf, C{0}, sendcounts, displs, sendtype, recvbuf, recvcount,
                    recvtype, root, c);
}

}  // namespace shmcoll::api::impl

#include "generated/entry_coll_rooted.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/coll_rooted.txt)
