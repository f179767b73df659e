// The rooted collectives MPI_Bcast, MPI_Gather(v) and MPI_Scatter(v), with
// their big-count (_c) forms.
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
// coll_common.h).  The nonblocking (MPI_I...) and persistent (MPI_..._init)
// forms run the same templates in another mode (coll_common.h).
#include <cstring>

#include "api/coll_common.h"

using namespace shmcoll;
using api::Checker;
using api::Side;

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

template <class C, class D>
class GatherArgs final : public coll::ExchangeArgs {
 public:
  coll::Block mine;  // what this rank sends (at an in-place root: its block of the receive buffer)
  Side r;            // root only
  uint64_t rc = 0;
  const C* rcounts = nullptr;  // gatherv
  const D* displs = nullptr;
  uint32_t root = 0, me = 0;
  coll::Block send(uint32_t) const override { return mine; }
  coll::Block recv(uint32_t p) const override {
    if (me != root) return mine;  // only the (empty) self pair asks
    return rcounts ? api::vectorBlock(r, rcounts, displs, p) : api::uniformBlock(r, rc, p);
  }
  bool sends(uint32_t p) const override { return me != root && p == root; }
  bool receives(uint32_t) const override { return me == root; }
};

template <class C, class D>
class ScatterArgs final : public coll::ExchangeArgs {
 public:
  coll::Block mine;  // what this rank receives (at an in-place root: its block of the send buffer)
  Side s;            // root only
  uint64_t sc = 0;
  const C* scounts = nullptr;  // scatterv
  const D* displs = nullptr;
  uint32_t root = 0, me = 0;
  coll::Block send(uint32_t p) const override {
    if (me != root) return mine;
    return scounts ? api::vectorBlock(s, scounts, displs, p) : api::uniformBlock(s, sc, p);
  }
  coll::Block recv(uint32_t) const override { return mine; }
  bool sends(uint32_t) const override { return me == root; }
  bool receives(uint32_t p) const override { return me != root && p == root; }
};

// Intercommunicator forms.  The root passes MPI_ROOT, the rest of its group
// MPI_PROC_NULL (nothing of theirs is significant), the other group the
// root's rank; only the root's group's arguments that the standard calls
// significant are checked.
template <class C>
int interBcast(rt::Comm* c, const Checker& k, const char* fn, void* buffer, C count, MPI_Datatype datatype,
               int root) {
  CHECK_ARG(k.interRoot(root, rt::peerCount(*c)));
  BcastArgs a;
  a.op = coll::Op::kBcast;
  coll::InterPlan plan;
  if (root != MPI_PROC_NULL) {
    Side s;
    CHECK_ARG(k.interNotInPlace("buffer", buffer));
    CHECK_ARG(k.uniform("buffer", buffer, "count", count, "datatype", datatype, 1, &s));
    a.block = {s.buf, static_cast<uint64_t>(count), s.type};
    if (root == MPI_ROOT) {
      plan.sendAll = true;
    } else {
      plan.recvFrom = root;
    }
  }
  return api::runInter(c, fn, a, plan);
}

template <class C, class D>
int interGather(rt::Comm* c, const Checker& k, const char* fn, const void* sendbuf, C sendcount, MPI_Datatype sendtype,
                void* recvbuf, C recvcount, const C* rcounts, const D* displs, MPI_Datatype recvtype, int root,
                bool vector) {
  const uint32_t n = rt::peerCount(*c);
  CHECK_ARG(k.interRoot(root, n));
  GatherArgs<C, D> a;
  a.op = vector ? coll::Op::kGatherv : coll::Op::kGather;
  coll::InterPlan plan;
  if (root == MPI_ROOT) {  // receives a block from every remote rank; a.me == a.root picks them
    CHECK_ARG(k.interNotInPlace("recvbuf", recvbuf));
    if (vector) {
      CHECK_ARG(
          k.vectorSide("recvbuf", recvbuf, "recvcounts", rcounts, "displs", displs, "recvtype", recvtype, n, &a.r));
      a.rcounts = rcounts;
      a.displs = displs;
    } else {
      CHECK_ARG(k.uniform("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, n, &a.r));
      a.rc = static_cast<uint64_t>(recvcount);
    }
    plan.recvAll = true;
  } else if (root != MPI_PROC_NULL) {
    Side s;
    CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
    CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, 1, &s));
    a.mine = {s.buf, static_cast<uint64_t>(sendcount), s.type};
    a.me = 1;
    plan.sendTo = root;
  }
  return api::runInter(c, fn, a, plan);
}

template <class C, class D>
int interScatter(rt::Comm* c, const Checker& k, const char* fn, const void* sendbuf, C sendcount, const C* scounts,
                 const D* displs, MPI_Datatype sendtype, void* recvbuf, C recvcount, MPI_Datatype recvtype, int root,
                 bool vector) {
  const uint32_t n = rt::peerCount(*c);
  CHECK_ARG(k.interRoot(root, n));
  ScatterArgs<C, D> a;
  a.op = vector ? coll::Op::kScatterv : coll::Op::kScatter;
  coll::InterPlan plan;
  if (root == MPI_ROOT) {  // sends a block to every remote rank; a.me == a.root picks them
    CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
    if (vector) {
      CHECK_ARG(
          k.vectorSide("sendbuf", sendbuf, "sendcounts", scounts, "displs", displs, "sendtype", sendtype, n, &a.s));
      a.scounts = scounts;
      a.displs = displs;
    } else {
      CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, n, &a.s));
      a.sc = static_cast<uint64_t>(sendcount);
    }
    plan.sendAll = true;
  } else if (root != MPI_PROC_NULL) {
    Side r;
    CHECK_ARG(k.interNotInPlace("recvbuf", recvbuf));
    CHECK_ARG(k.uniform("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, 1, &r));
    a.mine = {r.buf, static_cast<uint64_t>(recvcount), r.type};
    a.me = 1;
    plan.recvFrom = root;
  }
  return api::runInter(c, fn, a, plan);
}

template <class C>
int bcast(const char* fn, void* buffer, C count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) return interBcast(c, k, fn, buffer, count, datatype, root);
  const uint32_t n = c->team.size();
  CHECK_ARG(k.root(root, n));
  Side s;
  CHECK_ARG(k.notInPlace("buffer", buffer));
  CHECK_ARG(k.uniform("buffer", buffer, "count", count, "datatype", datatype, 1, &s));
  BcastArgs a;
  a.op = coll::Op::kBcast;
  a.allPairs = false;
  a.root = static_cast<uint32_t>(root);
  a.me = c->team.rank;
  a.broadcast = true;  // on every rank: receivers read the root's one shared lane
  a.block = {s.buf, static_cast<uint64_t>(count), s.type};
  return api::runExchange(c, fn, a);
}

// Gather and gatherv: `rcounts` is null for the uniform form.
template <class C, class D>
int gather(const char* fn, const void* sendbuf, C sendcount, MPI_Datatype sendtype, void* recvbuf, C recvcount,
           const C* rcounts, const D* displs, MPI_Datatype recvtype, int root, MPI_Comm comm, bool vector) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter)
    return interGather(c, k, fn, sendbuf, sendcount, sendtype, recvbuf, recvcount, rcounts, displs, recvtype, root,
                       vector);
  const uint32_t n = c->team.size();
  CHECK_ARG(k.root(root, n));
  GatherArgs<C, D> a;
  a.op = vector ? coll::Op::kGatherv : coll::Op::kGather;
  a.allPairs = false;
  a.root = static_cast<uint32_t>(root);
  a.me = c->team.rank;
  const bool atRoot = a.me == a.root;
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace && !atRoot)
    return api::raisef(comm, fn, MPI_ERR_BUFFER, "sendbuf = MPI_IN_PLACE is only allowed at the root (rank %d)", root);
  if (atRoot) {
    CHECK_ARG(k.recvNotInPlace(recvbuf));
    if (vector) {
      CHECK_ARG(
          k.vectorSide("recvbuf", recvbuf, "recvcounts", rcounts, "displs", displs, "recvtype", recvtype, n, &a.r));
      a.rcounts = rcounts;
      a.displs = displs;
    } else {
      CHECK_ARG(k.uniform("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, n, &a.r));
      a.rc = static_cast<uint64_t>(recvcount);
    }
  }
  if (inPlace) {
    a.mine = a.recv(a.me);
  } else {
    Side s;
    CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, 1, &s));
    a.mine = {s.buf, static_cast<uint64_t>(sendcount), s.type};
  }
  return api::runExchange(c, fn, a);
}

template <class C, class D>
int scatter(const char* fn, const void* sendbuf, C sendcount, const C* scounts, const D* displs, MPI_Datatype sendtype,
            void* recvbuf, C recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, bool vector) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter)
    return interScatter(c, k, fn, sendbuf, sendcount, scounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                        vector);
  const uint32_t n = c->team.size();
  CHECK_ARG(k.root(root, n));
  ScatterArgs<C, D> a;
  a.op = vector ? coll::Op::kScatterv : coll::Op::kScatter;
  a.allPairs = false;
  a.root = static_cast<uint32_t>(root);
  a.me = c->team.rank;
  const bool atRoot = a.me == a.root;
  const bool inPlace = recvbuf == MPI_IN_PLACE;
  if (inPlace && !atRoot)
    return api::raisef(comm, fn, MPI_ERR_BUFFER, "recvbuf = MPI_IN_PLACE is only allowed at the root (rank %d)", root);
  if (atRoot) {
    CHECK_ARG(k.notInPlace("sendbuf", sendbuf));
    if (vector) {
      CHECK_ARG(
          k.vectorSide("sendbuf", sendbuf, "sendcounts", scounts, "displs", displs, "sendtype", sendtype, n, &a.s));
      a.scounts = scounts;
      a.displs = displs;
    } else {
      CHECK_ARG(k.uniform("sendbuf", sendbuf, "sendcount", sendcount, "sendtype", sendtype, n, &a.s));
      a.sc = static_cast<uint64_t>(sendcount);
    }
  }
  if (inPlace) {
    a.mine = a.send(a.me);
  } else {
    Side r;
    CHECK_ARG(k.uniform("recvbuf", recvbuf, "recvcount", recvcount, "recvtype", recvtype, 1, &r));
    a.mine = {r.buf, static_cast<uint64_t>(recvcount), r.type};
  }
  return api::runExchange(c, fn, a);
}

}  // namespace

SHMCOLL_API(int, MPI_Bcast, (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)) {
  return bcast("MPI_Bcast", buffer, count, datatype, root, comm);
}
SHMCOLL_API(int, MPI_Bcast_c, (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)) {
  return bcast("MPI_Bcast_c", buffer, count, datatype, root, comm);
}

SHMCOLL_API(int, MPI_Gather,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return gather<int, int>("MPI_Gather", sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                          root, comm, false);
}
SHMCOLL_API(int, MPI_Gather_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return gather<MPI_Count, MPI_Aint>("MPI_Gather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                     recvtype, root, comm, false);
}
SHMCOLL_API(int, MPI_Gatherv,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return gather<int, int>("MPI_Gatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, root,
                          comm, true);
}
SHMCOLL_API(int, MPI_Gatherv_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return gather<MPI_Count, MPI_Aint>("MPI_Gatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                                     recvtype, root, comm, true);
}

SHMCOLL_API(int, MPI_Scatter,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return scatter<int, int>("MPI_Scatter", sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount, recvtype,
                           root, comm, false);
}
SHMCOLL_API(int, MPI_Scatter_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return scatter<MPI_Count, MPI_Aint>("MPI_Scatter_c", sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf,
                                      recvcount, recvtype, root, comm, false);
}
SHMCOLL_API(int, MPI_Scatterv,
            (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return scatter<int, int>("MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                           comm, true);
}
SHMCOLL_API(int, MPI_Scatterv_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)) {
  return scatter<MPI_Count, MPI_Aint>("MPI_Scatterv_c", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount,
                                      recvtype, root, comm, true);
}

// ---- nonblocking forms (same checks and blocks; see api::startNonblocking) ----------------

SHMCOLL_API(int, MPI_Ibcast,
            (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Ibcast", comm, request,
                               [&] { return bcast("MPI_Ibcast", buffer, count, datatype, root, comm); });
}

SHMCOLL_API(int, MPI_Ibcast_c,
            (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Ibcast_c", comm, request,
                               [&] { return bcast("MPI_Ibcast_c", buffer, count, datatype, root, comm); });
}

SHMCOLL_API(int, MPI_Igather,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Igather", comm, request, [&] {
    return gather<int, int>("MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                            root, comm, false);
  });
}

SHMCOLL_API(int, MPI_Igather_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Igather_c", comm, request, [&] {
    return gather<MPI_Count, MPI_Aint>("MPI_Igather_c", sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr,
                                       nullptr, recvtype, root, comm, false);
  });
}

SHMCOLL_API(int, MPI_Igatherv,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Igatherv", comm, request, [&] {
    return gather<int, int>("MPI_Igatherv", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype,
                            root, comm, true);
  });
}

SHMCOLL_API(int, MPI_Igatherv_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Igatherv_c", comm, request, [&] {
    return gather<MPI_Count, MPI_Aint>("MPI_Igatherv_c", sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                                       recvtype, root, comm, true);
  });
}

SHMCOLL_API(int, MPI_Iscatter,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Iscatter", comm, request, [&] {
    return scatter<int, int>("MPI_Iscatter", sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf, recvcount,
                             recvtype, root, comm, false);
  });
}

SHMCOLL_API(int, MPI_Iscatter_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Iscatter_c", comm, request, [&] {
    return scatter<MPI_Count, MPI_Aint>("MPI_Iscatter_c", sendbuf, sendcount, nullptr, nullptr, sendtype, recvbuf,
                                        recvcount, recvtype, root, comm, false);
  });
}

SHMCOLL_API(int, MPI_Iscatterv,
            (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Iscatterv", comm, request, [&] {
    return scatter<int, int>("MPI_Iscatterv", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
                             root, comm, true);
  });
}

SHMCOLL_API(int, MPI_Iscatterv_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iscatterv_c", comm, request, [&] {
    return scatter<MPI_Count, MPI_Aint>("MPI_Iscatterv_c", sendbuf, 0, sendcounts, displs, sendtype, recvbuf, recvcount,
                                        recvtype, root, comm, true);
  });
}

// ---- persistent forms (same checks and blocks; see api::initPersistent, coll_persistent.cc) ----

SHMCOLL_API(int, MPI_Bcast_init,
            (void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Bcast_init", bcast, buffer, count, datatype, root, comm);
}

SHMCOLL_API(int, MPI_Bcast_init_c,
            (void* buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Bcast_init_c", bcast, buffer, count, datatype, root, comm);
}

SHMCOLL_API(int, MPI_Gather_init,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Gather_init", (gather<int, int>), sendbuf, sendcount, sendtype, recvbuf, recvcount,
                            nullptr, nullptr, recvtype, root, comm, false);
}

SHMCOLL_API(int, MPI_Gather_init_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Gather_init_c", (gather<MPI_Count, MPI_Aint>), sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, nullptr, nullptr, recvtype, root, comm, false);
}

SHMCOLL_API(int, MPI_Gatherv_init,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
             const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Gatherv_init", (gather<int, int>), sendbuf, sendcount, sendtype, recvbuf, 0,
                            recvcounts, displs, recvtype, root, comm, true);
}

SHMCOLL_API(int, MPI_Gatherv_init_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
             const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Gatherv_init_c", (gather<MPI_Count, MPI_Aint>), sendbuf, sendcount, sendtype, recvbuf,
                            0, recvcounts, displs, recvtype, root, comm, true);
}

SHMCOLL_API(int, MPI_Scatter_init,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Scatter_init", (scatter<int, int>), sendbuf, sendcount, nullptr, nullptr, sendtype,
                            recvbuf, recvcount, recvtype, root, comm, false);
}

SHMCOLL_API(int, MPI_Scatter_init_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf, MPI_Count recvcount,
             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Scatter_init_c", (scatter<MPI_Count, MPI_Aint>), sendbuf, sendcount, nullptr, nullptr,
                            sendtype, recvbuf, recvcount, recvtype, root, comm, false);
}

SHMCOLL_API(int, MPI_Scatterv_init,
            (const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Scatterv_init", (scatter<int, int>), sendbuf, 0, sendcounts, displs, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, true);
}

SHMCOLL_API(int, MPI_Scatterv_init_c,
            (const void* sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[], MPI_Datatype sendtype,
             void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
             MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Scatterv_init_c", (scatter<MPI_Count, MPI_Aint>), sendbuf, 0, sendcounts, displs,
                            sendtype, recvbuf, recvcount, recvtype, root, comm, true);
}
