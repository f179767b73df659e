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

class AlltoallArgs final : public coll::ExchangeArgs {
 public:
  Side s, r;
  uint64_t sc, rc;
  coll::Block send(uint32_t p) const override { return uniformBlock(s, sc, p); }
  coll::Block recv(uint32_t p) const override { return uniformBlock(r, rc, p); }
};

template <class C, class D>
class AlltoallvArgs final : public coll::ExchangeArgs {
 public:
  Side s, r;
  const C *scounts, *rcounts;
  const D *sdispls, *rdispls;
  coll::Block send(uint32_t p) const override { return vectorBlock(s, scounts, sdispls, p); }
  coll::Block recv(uint32_t p) const override { return vectorBlock(r, rcounts, rdispls, p); }
};

template <class C, class D>
class AlltoallwArgs final : public coll::ExchangeArgs {
 public:
  const char *sbuf, *rbuf;
  const C *scounts, *rcounts;
  const D *sdispls, *rdispls;
  // The resolved types: in this thread's scratch array for a blocking call
  // (no allocation once it is large enough), in `owned` for a nonblocking or
  // persistent one, whose copies of this object outlive the call.
  const dt::Type* const* stypes = nullptr;
  const dt::Type* const* rtypes = nullptr;
  std::shared_ptr<std::vector<const dt::Type*>> owned;
  coll::Block send(uint32_t p) const override {
    return {sbuf + sdispls[p], static_cast<uint64_t>(scounts[p]), stypes[p]};
  }
  coll::Block recv(uint32_t p) const override {
    return {rbuf + rdispls[p], static_cast<uint64_t>(rcounts[p]), rtypes[p]};
  }
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

// The start shared by the five: pairs with no bytes are skipped (coll.h).
// Returns whether the operation is in place.
template <class A>
bool begin(coll::Op op, const void* sendbuf, A* a) {
  a->op = op;
  a->skipEmpty = true;
  return sendbuf == MPI_IN_PLACE;
}

}  // namespace

int barrier(Call& call, rt::Comm* c) { return runBarrier(call, c); }

template <class C>
int alltoall(Call& call, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
             const dt::Type* recvtype, rt::Comm* c) {
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  AlltoallArgs a;
  const bool inPlace = begin(coll::Op::kAlltoall, sendbuf, &a);
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, n * static_cast<uint64_t>(recvcount), recvtype));
  a.r = sideOf(recvbuf, recvtype);
  a.rc = static_cast<uint64_t>(recvcount);
  if (inPlace) {
    a.s = a.r;
    a.sc = a.rc;
  } else {
    SHMCOLL_CHECK(uniformSide(call, "sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, n, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  return runEveryPair(call, c, a, inPlace);
}

template <class C, class D>
int alltoallv(Call& call, const void* sendbuf, const C sendcounts[], const D sdispls[], MPI_Datatype sendtype,
              void* recvbuf, const C recvcounts[], const D rdispls[], const dt::Type* recvtype, rt::Comm* c) {
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  const uint32_t n = rt::peerCount(*c);
  AlltoallvArgs<C, D> a;
  const bool inPlace = begin(coll::Op::kAlltoallv, sendbuf, &a);
  SHMCOLL_CHECK(vectorSide(call, "recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, recvtype, n, &a.r));
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  if (inPlace) {
    a.s = a.r;
    a.scounts = recvcounts;
    a.sdispls = rdispls;
  } else {
    SHMCOLL_CHECK(vectorSide(call, "sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtype",
                             sendtype, n, &a.s));
    a.scounts = sendcounts;
    a.sdispls = sdispls;
  }
  return runEveryPair(call, c, a, inPlace);
}

template <class C, class D>
int alltoallw(Call& call, const void* sendbuf, const C sendcounts[], const D sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const C recvcounts[], const D rdispls[],
              const MPI_Datatype recvtypes[], rt::Comm* c) {
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  const uint32_t n = rt::peerCount(*c);
  AlltoallwArgs<C, D> a;
  const bool inPlace = begin(coll::Op::kAlltoallw, sendbuf, &a);
  SHMCOLL_CHECK(check::counts(call, "recvcounts", recvcounts, n));
  SHMCOLL_CHECK(check::notNull(call, "rdispls", rdispls));
  SHMCOLL_CHECK(check::notNull(call, "recvtypes", recvtypes));
  const dt::Type** rts = typeArrays(call, n, &a.owned);
  const dt::Type** sts = rts + n;
  for (uint32_t p = 0; p < n; ++p) {
    SHMCOLL_CHECK(check::datatypeAt(call, "recvtypes", p, recvtypes[p], &rts[p]));
    SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, static_cast<uint64_t>(recvcounts[p]), rts[p]));
  }
  a.rbuf = static_cast<const char*>(recvbuf);
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  a.rtypes = rts;
  if (inPlace) {
    a.sbuf = a.rbuf;
    a.scounts = recvcounts;
    a.sdispls = rdispls;
    a.stypes = rts;
  } else {
    SHMCOLL_CHECK(check::counts(call, "sendcounts", sendcounts, n));
    SHMCOLL_CHECK(check::notNull(call, "sdispls", sdispls));
    SHMCOLL_CHECK(check::notNull(call, "sendtypes", sendtypes));
    for (uint32_t p = 0; p < n; ++p) {
      SHMCOLL_CHECK(check::datatypeAt(call, "sendtypes", p, sendtypes[p], &sts[p]));
      SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, static_cast<uint64_t>(sendcounts[p]), sts[p]));
    }
    a.sbuf = static_cast<const char*>(sendbuf);
    a.scounts = sendcounts;
    a.sdispls = sdispls;
    a.stypes = sts;
  }
  return runEveryPair(call, c, a, inPlace);
}

// The allgather family: every rank's one block read by all (broadcast lanes).
template <class A>
int allgatherCommon(Call& call, coll::Op op, const void* sendbuf, int64_t sendcount, MPI_Datatype sendtype, A& a,
                    rt::Comm* c) {
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  const bool inPlace = begin(op, sendbuf, &a);
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

}  // namespace shmcoll::api::impl

#include "generated/entry_coll.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/coll.txt)
