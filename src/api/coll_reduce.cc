// The reducing collectives MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter,
// MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan, their nonblocking forms
// (MPI_I...) and the big-count (_c) forms of all of them: argument checks,
// then one call into coll/reduce.cc (blocking) or p2p/nbc.cc (nonblocking).
//
// MPI_IN_PLACE follows the standard: as sendbuf on every rank of allreduce,
// reduce_scatter(_block), scan and exscan (the input is then taken from
// recvbuf), and at the root only for reduce.  The operation must be defined
// on the datatype (op::check: MPI_ERR_OP otherwise).  On an intercommunicator
// (not scan and exscan, which the standard does not define there) each group
// gets the other group's inputs reduced.  The nonblocking (MPI_I...) and
// persistent (MPI_..._init) forms of reduce and allreduce run the same
// templates in another mode (coll_common.h).
#include <vector>

#include "api/coll_common.h"
#include "op/op.h"

using namespace shmcoll;
using api::Checker;
using api::Side;

namespace {

// Checks count, datatype and operation; fills the reduction's type fields.
int checkReduction(const Checker& k, int64_t count, MPI_Datatype datatype, MPI_Op op, coll::Reduction* r) {
  CHECK_ARG(k.count("count", count));
  CHECK_ARG(k.type("datatype", datatype, &r->type));
  if (int rc = op::check(op, datatype)) return api::raise(k.comm, k.fn, rc);
  api::keepOp(op);
  r->op = op::makeOperator(op, datatype);
  r->count = static_cast<uint64_t>(count);
  return MPI_SUCCESS;
}

// Allreduce, scan, exscan: every rank has count elements in and out, and may
// pass sendbuf = MPI_IN_PLACE.
int checkEveryRank(const Checker& k, const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype,
                   MPI_Op op, coll::Reduction* r) {
  CHECK_ARG(checkReduction(k, count, datatype, op, r));
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  CHECK_ARG(k.buffer("recvbuf", recvbuf, r->count, r->type));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (!inPlace) CHECK_ARG(k.buffer("sendbuf", sendbuf, r->count, r->type));
  r->in = inPlace ? nullptr : sendbuf;
  r->out = recvbuf;
  return MPI_SUCCESS;
}

// Intercommunicator forms: each result is the other group's inputs reduced
// (p2p/nbc_inter.cc); MPI_IN_PLACE is not allowed.  Reduce: the root passes
// MPI_ROOT (its recvbuf is significant), the rest of its group MPI_PROC_NULL
// (nothing is), the other group the root's rank (its sendbuf is).
int interReduce(rt::Comm* c, const Checker& k, const void* sendbuf, void* recvbuf, int64_t count,
                MPI_Datatype datatype, MPI_Op op, int root) {
  CHECK_ARG(k.interRoot(root, rt::peerCount(*c)));
  coll::Reduction r;
  if (root != MPI_PROC_NULL) {
    CHECK_ARG(checkReduction(k, count, datatype, op, &r));
    const bool atRoot = root == MPI_ROOT;
    const char* arg = atRoot ? "recvbuf" : "sendbuf";
    const void* buf = atRoot ? recvbuf : sendbuf;
    CHECK_ARG(k.interNotInPlace(arg, buf));
    CHECK_ARG(k.buffer(arg, buf, r.count, r.type));
    r.in = atRoot ? nullptr : sendbuf;
    r.out = atRoot ? recvbuf : nullptr;
  }
  const int role = root == MPI_ROOT ? coll::kInterRoot : root == MPI_PROC_NULL ? coll::kInterNone : root;
  return api::runReduction(c, k.fn, api::Reducing::kReduce, r, role);
}

int interAllreduce(rt::Comm* c, const Checker& k, const void* sendbuf, void* recvbuf, int64_t count,
                   MPI_Datatype datatype, MPI_Op op) {
  CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  coll::Reduction r;
  CHECK_ARG(checkEveryRank(k, sendbuf, recvbuf, count, datatype, op, &r));
  return api::runReduction(c, k.fn, api::Reducing::kAllreduce, r);
}

template <class C>
int reduce(const char* fn, const void* sendbuf, void* recvbuf, C count, MPI_Datatype datatype, MPI_Op op, int root,
           MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) return interReduce(c, k, sendbuf, recvbuf, count, datatype, op, root);
  const uint32_t n = c->team.size();
  CHECK_ARG(k.root(root, n));
  coll::Reduction r;
  CHECK_ARG(checkReduction(k, count, datatype, op, &r));
  const bool atRoot = c->team.rank == static_cast<uint32_t>(root);
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace && !atRoot)
    return api::raisef(comm, fn, MPI_ERR_BUFFER, "sendbuf = MPI_IN_PLACE is only allowed at the root (rank %d)", root);
  if (!inPlace) CHECK_ARG(k.buffer("sendbuf", sendbuf, r.count, r.type));
  if (atRoot) {
    CHECK_ARG(k.recvNotInPlace(recvbuf));
    CHECK_ARG(k.buffer("recvbuf", recvbuf, r.count, r.type));
  }
  r.in = inPlace ? nullptr : sendbuf;
  r.out = atRoot ? recvbuf : nullptr;  // only the root's out is significant
  return api::runReduction(c, fn, api::Reducing::kReduce, r, root);
}

template <class C>
int allreduce(const char* fn, const void* sendbuf, void* recvbuf, C count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  if (c->inter) return interAllreduce(c, k, sendbuf, recvbuf, count, datatype, op);
  coll::Reduction r;
  CHECK_ARG(checkEveryRank(k, sendbuf, recvbuf, count, datatype, op, &r));
  return api::runReduction(c, fn, api::Reducing::kAllreduce, r);
}

// reduce_scatter (counts given) and reduce_scatter_block (`counts` null, `each` per rank).
template <class C>
int reduceScatter(const char* fn, const void* sendbuf, void* recvbuf, const C* counts, C each, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
  COMM_OR_FAIL(c, comm, fn);
  Checker k{comm, fn};
  const uint32_t n = c->team.size();
  std::vector<uint64_t> cnt(n);
  uint64_t total = 0;
  if (counts) {
    CHECK_ARG(k.counts("recvcounts", counts, n));
    for (uint32_t p = 0; p < n; ++p) total += (cnt[p] = static_cast<uint64_t>(counts[p]));
  } else {
    CHECK_ARG(k.count("recvcount", each));
    for (uint32_t p = 0; p < n; ++p) total += (cnt[p] = static_cast<uint64_t>(each));
  }
  coll::Reduction r;
  CHECK_ARG(k.type("datatype", datatype, &r.type));
  if (int rc = op::check(op, datatype)) return api::raise(comm, fn, rc);
  api::keepOp(op);
  r.op = op::makeOperator(op, datatype);
  r.count = total;
  CHECK_ARG(k.recvNotInPlace(recvbuf));
  if (c->inter) CHECK_ARG(k.interNotInPlace("sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  // In place, the whole input is in recvbuf.
  CHECK_ARG(k.buffer("recvbuf", recvbuf, inPlace ? total : cnt[c->team.rank], r.type));
  if (!inPlace) CHECK_ARG(k.buffer("sendbuf", sendbuf, total, r.type));
  r.in = inPlace ? nullptr : sendbuf;
  r.out = recvbuf;
  // (An intercommunicator's counts are its local group's; the other group's
  // inputs are reduced and cut by them.)
  return api::runReduction(c, fn, counts ? api::Reducing::kReduceScatter : api::Reducing::kReduceScatterBlock, r, 0,
                           std::move(cnt));
}

template <class C>
int scan(const char* fn, const void* sendbuf, void* recvbuf, C count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
         bool exclusive) {
  COMM_OR_FAIL(c, comm, fn);
  SHMCOLL_REQUIRE(!c->inter, comm, fn, MPI_ERR_COMM,
                  "comm is an intercommunicator; the standard defines %s on intracommunicators only", fn);
  Checker k{comm, fn};
  coll::Reduction r;
  CHECK_ARG(checkEveryRank(k, sendbuf, recvbuf, count, datatype, op, &r));
  return api::runReduction(c, fn, exclusive ? api::Reducing::kExscan : api::Reducing::kScan, r);
}

}  // namespace

SHMCOLL_API(int, MPI_Reduce,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
             MPI_Comm comm)) {
  return reduce("MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root, comm);
}
SHMCOLL_API(int, MPI_Reduce_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
             MPI_Comm comm)) {
  return reduce("MPI_Reduce_c", sendbuf, recvbuf, count, datatype, op, root, comm);
}

SHMCOLL_API(int, MPI_Allreduce,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return allreduce("MPI_Allreduce", sendbuf, recvbuf, count, datatype, op, comm);
}
SHMCOLL_API(int, MPI_Allreduce_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return allreduce("MPI_Allreduce_c", sendbuf, recvbuf, count, datatype, op, comm);
}

SHMCOLL_API(int, MPI_Reduce_scatter,
            (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)) {
  return reduceScatter<int>("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, 0, datatype, op, comm);
}
SHMCOLL_API(int, MPI_Reduce_scatter_c,
            (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)) {
  return reduceScatter<MPI_Count>("MPI_Reduce_scatter_c", sendbuf, recvbuf, recvcounts, 0, datatype, op, comm);
}
SHMCOLL_API(int, MPI_Reduce_scatter_block,
            (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return reduceScatter<int>("MPI_Reduce_scatter_block", sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm);
}
SHMCOLL_API(int, MPI_Reduce_scatter_block_c,
            (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm)) {
  return reduceScatter<MPI_Count>("MPI_Reduce_scatter_block_c", sendbuf, recvbuf, nullptr, recvcount, datatype, op,
                                  comm);
}

SHMCOLL_API(int, MPI_Scan,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return scan("MPI_Scan", sendbuf, recvbuf, count, datatype, op, comm, false);
}
SHMCOLL_API(int, MPI_Scan_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return scan("MPI_Scan_c", sendbuf, recvbuf, count, datatype, op, comm, false);
}
SHMCOLL_API(int, MPI_Exscan,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return scan("MPI_Exscan", sendbuf, recvbuf, count, datatype, op, comm, true);
}
SHMCOLL_API(int, MPI_Exscan_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)) {
  return scan("MPI_Exscan_c", sendbuf, recvbuf, count, datatype, op, comm, true);
}

// ---- nonblocking forms (same checks and blocks; see api::startNonblocking) ----------------

SHMCOLL_API(int, MPI_Ireduce,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Ireduce", comm, request, [&] {
    return reduce("MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root, comm);
  });
}

SHMCOLL_API(int, MPI_Ireduce_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
             MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Ireduce_c", comm, request, [&] {
    return reduce("MPI_Ireduce_c", sendbuf, recvbuf, count, datatype, op, root, comm);
  });
}

SHMCOLL_API(int, MPI_Iallreduce,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iallreduce", comm, request, [&] {
    return allreduce("MPI_Iallreduce", sendbuf, recvbuf, count, datatype, op, comm);
  });
}

SHMCOLL_API(int, MPI_Iallreduce_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iallreduce_c", comm, request, [&] {
    return allreduce("MPI_Iallreduce_c", sendbuf, recvbuf, count, datatype, op, comm);
  });
}

SHMCOLL_API(int, MPI_Ireduce_scatter,
            (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Ireduce_scatter", comm, request, [&] {
    return reduceScatter<int>("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, 0, datatype, op, comm);
  });
}

SHMCOLL_API(int, MPI_Ireduce_scatter_c,
            (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Ireduce_scatter_c", comm, request, [&] {
    return reduceScatter<MPI_Count>("MPI_Ireduce_scatter_c", sendbuf, recvbuf, recvcounts, 0, datatype, op, comm);
  });
}

SHMCOLL_API(int, MPI_Ireduce_scatter_block,
            (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Ireduce_scatter_block", comm, request, [&] {
    return reduceScatter<int>("MPI_Ireduce_scatter_block", sendbuf, recvbuf, nullptr, recvcount, datatype, op, comm);
  });
}

SHMCOLL_API(int, MPI_Ireduce_scatter_block_c,
            (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Request* request)) {
  return api::startNonblocking("MPI_Ireduce_scatter_block_c", comm, request, [&] {
    return reduceScatter<MPI_Count>("MPI_Ireduce_scatter_block_c", sendbuf, recvbuf, nullptr, recvcount, datatype,
                                    op, comm);
  });
}

SHMCOLL_API(int, MPI_Iscan,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iscan", comm, request, [&] {
    return scan("MPI_Iscan", sendbuf, recvbuf, count, datatype, op, comm, false);
  });
}

SHMCOLL_API(int, MPI_Iscan_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iscan_c", comm, request, [&] {
    return scan("MPI_Iscan_c", sendbuf, recvbuf, count, datatype, op, comm, false);
  });
}

SHMCOLL_API(int, MPI_Iexscan,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iexscan", comm, request, [&] {
    return scan("MPI_Iexscan", sendbuf, recvbuf, count, datatype, op, comm, true);
  });
}

SHMCOLL_API(int, MPI_Iexscan_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Request* request)) {
  return api::startNonblocking("MPI_Iexscan_c", comm, request, [&] {
    return scan("MPI_Iexscan_c", sendbuf, recvbuf, count, datatype, op, comm, true);
  });
}

// ---- persistent forms (same checks; see api::initPersistent, coll_persistent.cc) --------------

SHMCOLL_API(int, MPI_Reduce_init,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Reduce_init", reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
}

SHMCOLL_API(int, MPI_Reduce_init_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
             MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Reduce_init_c", reduce, sendbuf, recvbuf, count, datatype, op, root, comm);
}

SHMCOLL_API(int, MPI_Allreduce_init,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Allreduce_init", allreduce, sendbuf, recvbuf, count, datatype, op, comm);
}

SHMCOLL_API(int, MPI_Allreduce_init_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Allreduce_init_c", allreduce, sendbuf, recvbuf, count, datatype, op, comm);
}

SHMCOLL_API(int, MPI_Reduce_scatter_init,
            (const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Reduce_scatter_init", reduceScatter<int>, sendbuf, recvbuf, recvcounts, 0, datatype,
                            op, comm);
}

SHMCOLL_API(int, MPI_Reduce_scatter_init_c,
            (const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Reduce_scatter_init_c", reduceScatter<MPI_Count>, sendbuf, recvbuf, recvcounts, 0,
                            datatype, op, comm);
}

SHMCOLL_API(int, MPI_Reduce_scatter_block_init,
            (const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Reduce_scatter_block_init", reduceScatter<int>, sendbuf, recvbuf, nullptr, recvcount,
                            datatype, op, comm);
}

SHMCOLL_API(int, MPI_Reduce_scatter_block_init_c,
            (const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op,
             MPI_Comm comm, MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Reduce_scatter_block_init_c", reduceScatter<MPI_Count>, sendbuf, recvbuf, nullptr,
                            recvcount, datatype, op, comm);
}

SHMCOLL_API(int, MPI_Scan_init,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Scan_init", scan, sendbuf, recvbuf, count, datatype, op, comm, false);
}

SHMCOLL_API(int, MPI_Scan_init_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Scan_init_c", scan, sendbuf, recvbuf, count, datatype, op, comm, false);
}

SHMCOLL_API(int, MPI_Exscan_init,
            (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Exscan_init", scan, sendbuf, recvbuf, count, datatype, op, comm, true);
}

SHMCOLL_API(int, MPI_Exscan_init_c,
            (const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
             MPI_Info info, MPI_Request* request)) {
  return SHMCOLL_PERSISTENT("MPI_Exscan_init_c", scan, sendbuf, recvbuf, count, datatype, op, comm, true);
}
