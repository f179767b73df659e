// MPI_Barrier and the five data-moving collectives (alltoall(v,w),
// allgather(v)) in every form: blocking, nonblocking (MPI_I...), persistent
// (MPI_..._init), each with int and big (_c) counts.  One implementation per
// collective: it checks what the generated entry point left to it (the send
// side, which MPI_IN_PLACE makes insignificant; arrays as long as the
// group; buffers against their counts), describes the per-peer blocks and
// hands them off (coll_common.h).  On an intercommunicator the blocks are
// indexed by remote rank and each group's data goes to the other group;
// MPI_IN_PLACE is not allowed there.
#include <memory>
#include <vector>

#include "api/coll_common.h"

namespace shmcoll::api::impl {

namespace {

// ---- per-peer block descriptions -----------------------------------------------

// The alltoall family: block p of each side goes to / comes from peer p.
// S is one side's description; in place, the send side is the receive side.
template <class S>
class PairArgs final : public coll::ExchangeArgs {
 public:
  S s, r;
  coll::Block send(uint32_t p) const override { return s.block(p); }
  coll::Block recv(uint32_t p) const override { return r.block(p); }
};

// Alltoall: `count` elements of one type per peer.
struct UniformSide {
  Side side;
  uint64_t count = 0;
  coll::Block block(uint32_t p) const { return uniformBlock(side, count, p); }
};

// Alltoallv: per-peer counts and displacements, one type.
template <class C, class D>
struct VectorSide {
  Side side;
  const C* counts = nullptr;
  const D* displs = nullptr;
  coll::Block block(uint32_t p) const { return vectorBlock(side, counts, displs, p); }
};

// Alltoallw: per-peer counts, byte displacements and types.  The resolved
// types are in this thread's scratch array for a blocking call (no
// allocation once it is large enough), in `owned` for a nonblocking or
// persistent one, whose copies of the argument object outlive the call.
template <class C, class D>
struct TypedSide {
  const char* buf = nullptr;
  const C* counts = nullptr;
  const D* displs = nullptr;
  const dt::Type* const* types = nullptr;
  std::shared_ptr<std::vector<const dt::Type*>> owned;
  coll::Block block(uint32_t p) const { return {buf + displs[p], static_cast<uint64_t>(counts[p]), types[p]}; }
};

// Room for an MPI_Alltoallw's resolved types, [0, n) receive and [n, 2n) send.
const dt::Type** typeArrays(const Call& call, uint32_t n, std::shared_ptr<std::vector<const dt::Type*>>* owned) {
  if (!call.blocking()) {
    *owned = std::make_shared<std::vector<const dt::Type*>>(2 * static_cast<size_t>(n));
    return (*owned)->data();
  }
  thread_local std::vector<const dt::Type*> scratch;  // (a blocking call ends before the thread's next)
  if (scratch.size() < 2 * static_cast<size_t>(n)) [[unlikely]]
    scratch.resize(2 * static_cast<size_t>(n));
  return scratch.data();
}

// One side of an MPI_Alltoallw, its datatypes resolved into types[0, n).
template <class C, class D>
int typedSide(const Call& call, const char* bufName, const void* buf, const char* countsName, const C* counts,
              const char* displsName, const D* displs, const char* typesName, const MPI_Datatype* handles, uint32_t n,
              const dt::Type** types, TypedSide<C, D>* out) {
  SHMCOLL_CHECK(check::counts(call, countsName, counts, n));
  SHMCOLL_CHECK(check::notNull(call, displsName, displs));
  SHMCOLL_CHECK(check::notNull(call, typesName, handles));
  for (uint32_t p = 0; p < n; ++p) {
    SHMCOLL_CHECK(check::datatypeAt(call, typesName, p, handles[p], &types[p]));
    SHMCOLL_CHECK(check::buffer(call, bufName, buf, static_cast<uint64_t>(counts[p]), types[p]));
  }
  out->buf = static_cast<const char*>(buf);
  out->counts = counts;
  out->displs = displs;
  out->types = types;
  return MPI_SUCCESS;
}

template <class C, class D>
class AllgatherArgs final : public coll::ExchangeArgs {
 public:
  Side s, r;
  uint64_t sc, rc;
  const C* rcounts = nullptr;  // allgatherv
  const D* displs = nullptr;
  bool inPlace = false;
  uint32_t me = 0;
  coll::Block send(uint32_t) const override { return inPlace ? recv(me) : coll::Block{s.buf, sc, s.type}; }
  coll::Block recv(uint32_t p) const override {
    if (rcounts) return vectorBlock(r, rcounts, displs, p);
    return uniformBlock(r, rc, p);
  }
};

// The start shared by the five: MPI_IN_PLACE is not allowed on an
// intercommunicator; pairs with no bytes are skipped (coll.h).
template <class A>
int begin(const Call& call, const rt::Comm* c, coll::Op op, const void* sendbuf, A* a) {
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  a->op = op;
  a->skipEmpty = true;
  return MPI_SUCCESS;
}

}  // namespace

int barrier(Call& call, rt::Comm* c) { return runBarrier(call, c); }

template <class C>
int alltoall(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
             const dt::Type* recvtype, rt::Comm* c) {
  PairArgs<UniformSide> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kAlltoall, sendbuf, &a));
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, n * static_cast<uint64_t>(recvcount), recvtype));
  a.r = {sideOf(recvbuf, recvtype), static_cast<uint64_t>(recvcount)};
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace) {
    a.s = a.r;
  } else {
    SHMCOLL_CHECK(uniformSide(call, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, n, &a.s.side));
    a.s.count = static_cast<uint64_t>(sendcount);
  }
  return runEveryPair(call, c, a, inPlace);
}

template <class C, class D>
int alltoallv(Call& call, const void* sendbuf, const C sendcounts[], const D sdispls[], MPI_Datatype sendtype,
              void* recvbuf, const C recvcounts[], const D rdispls[], const dt::Type* recvtype, rt::Comm* c) {
  PairArgs<VectorSide<C, D>> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kAlltoallv, sendbuf, &a));
  const uint32_t n = rt::peerCount(*c);
  SHMCOLL_CHECK(
      vectorSide(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, recvtype, n, &a.r.side));
  a.r.counts = recvcounts;
  a.r.displs = rdispls;
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace) {
    a.s = a.r;
  } else {
    SHMCOLL_CHECK(vectorSide(call, "sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtype",
                             sendtype, n, &a.s.side));
    a.s.counts = sendcounts;
    a.s.displs = sdispls;
  }
  return runEveryPair(call, c, a, inPlace);
}

template <class C, class D>
int alltoallw(Call& call, const void* sendbuf, const C sendcounts[], const D sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const C recvcounts[], const D rdispls[],
              const MPI_Datatype recvtypes[], rt::Comm* c) {
  PairArgs<TypedSide<C, D>> a;
  SHMCOLL_CHECK(begin(call, c, coll::Op::kAlltoallw, sendbuf, &a));
  const uint32_t n = rt::peerCount(*c);
  const dt::Type** types = typeArrays(call, n, &a.r.owned);
  SHMCOLL_CHECK(typedSide(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, "recvtypes",
                          recvtypes, n, types, &a.r));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace) {
    a.s = a.r;
  } else {
    SHMCOLL_CHECK(typedSide(call, "sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtypes",
                            sendtypes, n, types + n, &a.s));
  }
  return runEveryPair(call, c, a, inPlace);
}

// The allgather family: every rank's one block read by all (broadcast lanes).
template <class A>
int allgatherCommon(Call& call, coll::Op op, const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, A& a,
                    rt::Comm* c) {
  SHMCOLL_CHECK(begin(call, c, op, sendbuf, &a));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  a.broadcast = true;
  if (!inPlace) {
    SHMCOLL_CHECK(uniformSide(call, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, 1, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  a.inPlace = inPlace;
  a.me = c->team.rank;
  return runEveryPair(call, c, a, inPlace);
}

template <class C>
int allgather(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
              const dt::Type* recvtype, rt::Comm* c) {
  AllgatherArgs<int, int> a;
  const uint32_t n = rt::peerCount(*c);
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, n * static_cast<uint64_t>(recvcount), recvtype));
  a.r = sideOf(recvbuf, recvtype);
  a.rc = static_cast<uint64_t>(recvcount);
  return allgatherCommon(call, coll::Op::kAllgather, sendbuf, sendcount, sendtype, a, c);
}

template <class C, class D>
int allgatherv(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf,
               const C recvcounts[], const D displs[], const dt::Type* recvtype, rt::Comm* c) {
  AllgatherArgs<C, D> a;
  const uint32_t n = rt::peerCount(*c);
  SHMCOLL_CHECK(vectorSide(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "displs", displs, recvtype, n, &a.r));
  a.rcounts = recvcounts;
  a.displs = displs;
  return allgatherCommon(call, coll::Op::kAllgatherv, sendbuf, sendcount, sendtype, a, c);
}

// The fast paths (desc/coll.txt, fastrc=; coll_common.h) of MPI_Barrier,
// MPI_Alltoall and MPI_Allgather: the blocking calls on an
// intracommunicator whose arguments pass every check above, run without a
// Call (one is made only to report an error of the engine: fastFailed).

int barrierFast(MPI_Comm comm) {
  rt::Comm* c = fastComm(comm);
  if (!c) return kDeclined;
  if (const int rc = coll::barrier(rt::placeOf(*c))) [[unlikely]]
    return fastFailed("MPI_Barrier", comm, rc);
  return MPI_SUCCESS;
}

int alltoallFast(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
  rt::Comm* c = fastComm(comm);
  if (!c) return kDeclined;
  const uint32_t n = c->team.size();
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const dt::Type* rtype = fastSide(recvbuf, recvcount, recvtype, n);
  const dt::Type* stype = inPlace ? rtype : fastSide(sendbuf, sendcount, sendtype, n);
  if (!rtype || !stype) return kDeclined;
  PairArgs<UniformSide> a;
  a.op = coll::Op::kAlltoall;
  a.skipEmpty = true;
  a.r = {sideOf(recvbuf, rtype), static_cast<uint64_t>(recvcount)};
  a.s = inPlace ? a.r : UniformSide{sideOf(sendbuf, stype), static_cast<uint64_t>(sendcount)};
  coll::Flags f;
  f.inPlace = inPlace;
  if (const int rc = coll::exchange(rt::placeOf(*c), a, f)) [[unlikely]]
    return fastFailed("MPI_Alltoall", comm, rc);
  return MPI_SUCCESS;
}

int allgatherFast(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  rt::Comm* c = fastComm(comm);
  if (!c) return kDeclined;
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const dt::Type* rtype = fastSide(recvbuf, recvcount, recvtype, c->team.size());
  const dt::Type* stype = inPlace ? rtype : fastSide(sendbuf, sendcount, sendtype, 1);
  if (!rtype || !stype) return kDeclined;
  AllgatherArgs<int, int> a;
  a.op = coll::Op::kAllgather;
  a.skipEmpty = true;
  a.broadcast = true;
  a.r = sideOf(recvbuf, rtype);
  a.rc = static_cast<uint64_t>(recvcount);
  if (!inPlace) {
    a.s = sideOf(sendbuf, stype);
    a.sc = static_cast<uint64_t>(sendcount);
  }
  a.inPlace = inPlace;
  a.me = c->team.rank;
  if (const int rc = coll::exchange(rt::placeOf(*c), a, coll::Flags{})) [[unlikely]]
    return fastFailed("MPI_Allgather", comm, rc);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_coll.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/coll.txt)
