// MPI_Barrier and the five data-moving collectives, with their big-count (_c)
// forms: argument checks, then one call into the engine (coll::exchange) with
// the arguments as per-peer blocks.  On an intercommunicator the blocks are
// indexed by remote rank and each group's data goes to the other group
// (api::runInter); MPI_IN_PLACE is not allowed there.  The nonblocking
// (MPI_I...) and persistent (MPI_..._init) forms run the same templates in
// another mode (coll_common.h).
#include <cstring>
#include <memory>
#include <vector>

#include "api/coll_common.h"

using namespace shmcoll;
using api::Checker;
using api::Side;

namespace {

// ---- per-peer block descriptions -----------------------------------------------

class AlltoallArgs final : public coll::ExchangeArgs {
 public:
  Side s, r;
  uint64_t sc, rc;
  coll::Block send(uint32_t p) const override { return api::uniformBlock(s, sc, p); }
  coll::Block recv(uint32_t p) const override { return api::uniformBlock(r, rc, p); }
};

template <class C, class D>
class AlltoallvArgs final : public coll::ExchangeArgs {
 public:
  Side s, r;
  const C *scounts, *rcounts;
  const D *sdispls, *rdispls;
  coll::Block send(uint32_t p) const override { return api::vectorBlock(s, scounts, sdispls, p); }
  coll::Block recv(uint32_t p) const override { return api::vectorBlock(r, rcounts, rdispls, p); }
};

// The resolved type arrays of a blocking MPI_Alltoallw, reused from call to
// call (calls never overlap: MPI_THREAD_SERIALIZED at most): [0, n) receive
// types, [n, 2n) send types.
constinit std::vector<const dt::Type*>* gTypeScratch = nullptr;
const dt::Type** typeArrays(uint32_t n, std::shared_ptr<std::vector<const dt::Type*>>* owned) {
  if (api::gNonblocking) {
    *owned = std::make_shared<std::vector<const dt::Type*>>(2 * static_cast<size_t>(n));
    return (*owned)->data();
  }
  if (!gTypeScratch) [[unlikely]]
    gTypeScratch = new std::vector<const dt::Type*>;
  if (gTypeScratch->size() < 2 * static_cast<size_t>(n)) [[unlikely]]
    gTypeScratch->resize(2 * static_cast<size_t>(n));
  return gTypeScratch->data();
}

template <class C, class D>
class AlltoallwArgs final : public coll::ExchangeArgs {
 public:
  const char *sbuf, *rbuf;
  const C *scounts, *rcounts;
  const D *sdispls, *rdispls;
  // The resolved types: in typeArrays()'s scratch for a blocking call (no allocation),
  // in `owned` for a nonblocking or persistent one, whose copies of this
  // object outlive the call.
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
    if (rcounts) return api::vectorBlock(r, rcounts, displs, p);
    return api::uniformBlock(r, rc, p);
  }
};

template <class A>
int run(rt::Comm* c, const char* fn, const A& a, bool inPlace) {
  if (c->inter) return api::runInter(c, fn, a, {true, true});  // (every pair across the groups)
  // (allgather in place needs nothing: its block is already where it goes)
  coll::Flags f;
  f.inPlace = inPlace && !a.broadcast;
  return api::runExchange(c, fn, a, f);
}

// ---- the operations, for int (MPI_X) and big (MPI_X_c) counts ---------------------

template <class C>
int alltoall(const char* fn, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
             MPI_Datatype recvtype, MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  AlltoallArgs a;
  a.op = coll::Op::kAlltoall;
  a.skipEmpty = true;  // (coll.h: pairs with no bytes are skipped)
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.uniform("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, n, &a.r));
  a.rc = static_cast<uint64_t>(recvcount);
  if (inPlace) {
    a.s = a.r;
    a.sc = a.rc;
  } else {
    CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, n, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  return run(c, fn, a, inPlace);
}

template <class C, class D>
int alltoallv(const char* fn, const void* sendbuf, const C sendcounts[], const D sdispls[], MPI_Datatype sendtype,
              void* recvbuf, const C recvcounts[], const D rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  AlltoallvArgs<C, D> a;
  a.op = coll::Op::kAlltoallv;
  a.skipEmpty = true;  // (coll.h: pairs with no bytes are skipped)
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(
      k.vectorSide("recvbuf", recvbuf, "recvcounts", recvcounts, "rdispls", rdispls, "recvtype", recvtype, n, &a.r));
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  if (inPlace) {
    a.s = a.r;
    a.scounts = recvcounts;
    a.sdispls = rdispls;
  } else {
    CHECK_ARG(
        k.vectorSide("sendbuf", sendbuf, "sendcounts", sendcounts, "sdispls", sdispls, "sendtype", sendtype, n, &a.s));
    a.scounts = sendcounts;
    a.sdispls = sdispls;
  }
  return run(c, fn, a, inPlace);
}

template <class C, class D>
int alltoallw(const char* fn, const void* sendbuf, const C sendcounts[], const D sdispls[],
              const MPI_Datatype sendtypes[], void* recvbuf, const C recvcounts[], const D rdispls[],
              const MPI_Datatype recvtypes[], MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  AlltoallwArgs<C, D> a;
  a.op = coll::Op::kAlltoallw;
  a.skipEmpty = true;  // (coll.h: pairs with no bytes are skipped)
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.counts("recvcounts", recvcounts, n));
  CHECK_ARG(k.array("rdispls", rdispls));
  CHECK_ARG(k.array("recvtypes", recvtypes));
  const dt::Type** rts = typeArrays(n, &a.owned);
  const dt::Type** sts = rts + n;
  a.rtypes = rts;
  for (uint32_t p = 0; p < n; ++p) {
    CHECK_ARG(k.typeAt("recvtypes", p, recvtypes[p], &rts[p]));
    CHECK_ARG(k.buffer("recvbuf", recvbuf, static_cast<uint64_t>(recvcounts[p]), rts[p]));
  }
  if (!inPlace) {
    CHECK_ARG(k.counts("sendcounts", sendcounts, n));
    CHECK_ARG(k.array("sdispls", sdispls));
    CHECK_ARG(k.array("sendtypes", sendtypes));
    a.stypes = sts;
    for (uint32_t p = 0; p < n; ++p) {
      CHECK_ARG(k.typeAt("sendtypes", p, sendtypes[p], &sts[p]));
      CHECK_ARG(k.buffer("sendbuf", sendbuf, static_cast<uint64_t>(sendcounts[p]), sts[p]));
    }
  }
  a.rbuf = static_cast<const char*>(recvbuf);
  a.rcounts = recvcounts;
  a.rdispls = rdispls;
  if (inPlace) {
    a.sbuf = a.rbuf;
    a.scounts = recvcounts;
    a.sdispls = rdispls;
    a.stypes = a.rtypes;
  } else {
    a.sbuf = static_cast<const char*>(sendbuf);
    a.scounts = sendcounts;
    a.sdispls = sdispls;
  }
  return run(c, fn, a, inPlace);
}

template <class C>
int allgather(const char* fn, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
              MPI_Datatype recvtype, MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  AllgatherArgs<int, int> a;
  a.op = coll::Op::kAllgather;
  a.skipEmpty = true;  // (coll.h: pairs with no bytes are skipped)
  a.broadcast = true;
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.uniform("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, n, &a.r));
  a.rc = static_cast<uint64_t>(recvcount);
  if (!inPlace) {
    CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, 1, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  a.inPlace = inPlace;
  a.me = c->team.rank;
  return run(c, fn, a, inPlace);
}

template <class C, class D>
int allgatherv(const char* fn, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf,
               const C recvcounts[], const D displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  AllgatherArgs<C, D> a;
  a.op = coll::Op::kAllgatherv;
  a.skipEmpty = true;  // (coll.h: pairs with no bytes are skipped)
  a.broadcast = true;
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(
      k.vectorSide("recvbuf", recvbuf, "recvcounts", recvcounts, "displs", displs, "recvtype", recvtype, n, &a.r));
  if (!inPlace) {
    CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, 1, &a.s));
    a.sc = static_cast<uint64_t>(sendcount);
  }
  a.rcounts = recvcounts;
  a.displs = displs;
  a.inPlace = inPlace;
  a.me = c->team.rank;
  return run(c, fn, a, inPlace);
}

}  // namespace

namespace shmcoll::api {
Nonblocking* gNonblocking = nullptr;
}

SHMCOLL_API(int, MPI_Barrier, (MPI_Comm comm)) {
  COMM_OR_FAIL(c, comm, "MPI_Barrier");
  // (An intercommunicator: a barrier over both groups; each group leaves once
  // the other has entered, as the standard asks, and more.)
  return api::runBarrier(c, "MPI_Barrier");
}

SHMCOLL_API(int, MPI_Alltoall,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm)) {
  return alltoall("MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
SHMCOLL_API(int, MPI_Alltoall_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm)) {
  return alltoall("MPI_Alltoall_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SHMCOLL_API(int, MPI_Alltoallv,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)) {
  return alltoallv("MPI_Alltoallv", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm);
}
SHMCOLL_API(int, MPI_Alltoallv_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
             MPI_Comm comm)) {
  return alltoallv("MPI_Alltoallv_c", sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
                   comm);
}

SHMCOLL_API(int, MPI_Alltoallw,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
             void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
             MPI_Comm comm)) {
  return alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                   comm);
}
SHMCOLL_API(int, MPI_Alltoallw_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
             const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
             const MPI_Datatype recvtypes[], MPI_Comm comm)) {
  return alltoallw("MPI_Alltoallw_c", sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes,
                   comm);
}

SHMCOLL_API(int, MPI_Allgather,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm)) {
  return allgather("MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
SHMCOLL_API(int, MPI_Allgather_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm)) {
  return allgather("MPI_Allgather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

SHMCOLL_API(int, MPI_Allgatherv,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, MPI_Comm comm)) {
  return allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
SHMCOLL_API(int, MPI_Allgatherv_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm)) {
  return allgatherv("MPI_Allgatherv_c", sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

// ---- nonblocking forms ---------------------------------------------------------------

SHMCOLL_API(int, MPI_Ibarrier, (MPI_Comm comm, MPI_Request* request)) {
  COMM_OR_FAIL(c, comm, "MPI_Ibarrier");
  SHMCOLL_REQUIRE(request, comm, "MPI_Ibarrier", MPI_ERR_ARG, "request is NULL");
  return api::startNonblocking("MPI_Ibarrier", comm, request, [&] { return api::runBarrier(c, "MPI_Ibarrier"); });
}

#define NB(NAME, IMPL, ...) api::startNonblocking(NAME, comm, request, [&] { return IMPL(NAME, __VA_ARGS__); })

SHMCOLL_API(int, MPI_Ialltoall,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Ialltoall", alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
SHMCOLL_API(int, MPI_Ialltoall_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Ialltoall_c", alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
SHMCOLL_API(int, MPI_Ialltoallv,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Ialltoallv", alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype,
            comm);
}
SHMCOLL_API(int, MPI_Ialltoallv_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
             MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Ialltoallv_c", alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
            recvtype, comm);
}
SHMCOLL_API(int, MPI_Ialltoallw,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
             void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
             MPI_Request* request)) {
  return NB("MPI_Ialltoallw", alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
            recvtypes, comm);
}
SHMCOLL_API(int, MPI_Ialltoallw_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
             const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Ialltoallw_c", alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
            recvtypes, comm);
}
SHMCOLL_API(int, MPI_Iallgather,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Iallgather", allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
SHMCOLL_API(int, MPI_Iallgather_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Iallgather_c", allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
SHMCOLL_API(int, MPI_Iallgatherv,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request)) {
  return NB("MPI_Iallgatherv", allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}
SHMCOLL_API(int, MPI_Iallgatherv_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
             MPI_Request* request)) {
  return NB("MPI_Iallgatherv_c", allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

// ---- persistent forms (same checks and blocks; see api::initPersistent, coll_persistent.cc) ----

SHMCOLL_API(int, MPI_Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  static const char* fn = "MPI_Barrier_init";
  return api::initPersistent(fn, comm, info, request, [&] {
    COMM_OR_FAIL(c, comm, fn);
    return api::runBarrier(c, fn);
  });
}

SHMCOLL_API(int, MPI_Alltoall_init,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Alltoall_init", alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}
SHMCOLL_API(int, MPI_Alltoall_init_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Alltoall_init_c", alltoall, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}
SHMCOLL_API(int, MPI_Alltoallv_init,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
             const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
             MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Alltoallv_init", alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm);
}
SHMCOLL_API(int, MPI_Alltoallv_init_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
             void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
             MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Alltoallv_init_c", alltoallv, sendbuf, sendcounts, sdispls, sendtype, recvbuf,
                            recvcounts, rdispls, recvtype, comm);
}
SHMCOLL_API(int, MPI_Alltoallw_init,
            (const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
             void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Alltoallw_init", alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm);
}
SHMCOLL_API(int, MPI_Alltoallw_init_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
             const MPI_Datatype sendtypes[], void* recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
             const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Alltoallw_init_c", alltoallw, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm);
}
SHMCOLL_API(int, MPI_Allgather_init,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Allgather_init", allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            comm);
}
SHMCOLL_API(int, MPI_Allgather_init_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Allgather_init_c", allgather, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            recvtype, comm);
}
SHMCOLL_API(int, MPI_Allgatherv_init,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Allgatherv_init", allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                            displs, recvtype, comm);
}
SHMCOLL_API(int, MPI_Allgatherv_init_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Allgatherv_init_c", allgatherv, sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                            displs, recvtype, comm);
}
