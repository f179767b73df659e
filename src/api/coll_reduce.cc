// The reducing collectives MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter,
// MPI_Reduce_scatter_block, MPI_Scan and MPI_Exscan in every form (blocking,
// nonblocking, persistent; int and big counts): the checks the generated
// entry points leave, then one hand-off (coll_common.h) to coll:: (the
// blocking reductions in coll/reduce_*.cc, the nonblocking and persistent
// ones as schedules in coll/sched_*.cc).
//
// MPI_IN_PLACE follows the standard: as sendbuf on every rank of allreduce,
// reduce_scatter(_block), scan and exscan (the input is then taken from
// recvbuf), and at the root only for reduce.  The operation must be defined
// on the datatype (check::op: MPI_ERR_OP otherwise).  On an intercommunicator
// (not scan and exscan, which the standard does not define there: their
// entry points refuse one) each group gets the other group's inputs reduced,
// and MPI_IN_PLACE is not allowed.
#include <algorithm>
#include <climits>
#include <vector>

#include "api/coll_common.h"

namespace shmcoll::api::impl {

namespace {

// The reduction's elements: `count` of `t`, combined with `op` (checked here).
int reduction(const Call& call, int64_t count, const dt::Type* t, MPI_Op op, coll::Reduction* r) {
  SHMCOLL_CHECK(check::op(call, op, t));
  r->type = t;
  r->op = op::makeOperator(op, t->handle);  // (the handle the caller named: a live handle names its type)
  r->count = static_cast<uint64_t>(count);
  return MPI_SUCCESS;
}

// Allreduce, scan, exscan: every rank has count elements in and out, and may
// pass sendbuf = MPI_IN_PLACE.
int everyRank(const Call& call, const void* sendbuf, void* recvbuf, int64_t count, const dt::Type* t, MPI_Op op,
              coll::Reduction* r) {
  SHMCOLL_CHECK(reduction(call, count, t, op, r));
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, r->count, t));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (!inPlace) SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, r->count, t));
  r->in = inPlace ? nullptr : sendbuf;
  r->out = recvbuf;
  return MPI_SUCCESS;
}

// The intercommunicator form of MPI_Reduce: the root passes MPI_ROOT (its
// recvbuf is significant), the rest of its group MPI_PROC_NULL (nothing is),
// the other group the root's rank (its sendbuf is).
int interReduce(Call& call, const void* sendbuf, void* recvbuf, int64_t count, MPI_Datatype datatype, MPI_Op op,
                int root, rt::Comm* c) {
  coll::Reduction r;
  if (root != MPI_PROC_NULL) {
    SHMCOLL_CHECK(check::count(call, "count", count));
    const dt::Type* t = nullptr;
    SHMCOLL_CHECK(check::datatype(call, "datatype", datatype, &t));
    SHMCOLL_CHECK(reduction(call, count, t, op, &r));
    const bool atRoot = root == MPI_ROOT;
    const char* arg = atRoot ? "recvbuf" : "sendbuf";
    const void* buf = atRoot ? recvbuf : sendbuf;
    SHMCOLL_CHECK(check::interNotInPlace(call, arg, buf));
    SHMCOLL_CHECK(check::buffer(call, arg, buf, r.count, r.type));
    r.in = atRoot ? nullptr : sendbuf;
    r.out = atRoot ? recvbuf : nullptr;
  }
  const int role = root == MPI_ROOT ? coll::kInterRoot : root == MPI_PROC_NULL ? coll::kInterNone : root;
  return runInterReduce(call, c, r, role);
}

// Reduce_scatter (`counts` given) and reduce_scatter_block (`counts` null, `each` per rank).
template <class C>
int reduceScatterAny(Call& call, const void* sendbuf, void* recvbuf, const C* counts, C each, const dt::Type* t,
                     MPI_Op op, rt::Comm* c) {
  const uint32_t n = c->team.size();
  std::vector<uint64_t> cnt(n);
  uint64_t total = 0;
  if (counts) {
    SHMCOLL_CHECK(check::counts(call, "recvcounts", counts, n));
    for (uint32_t p = 0; p < n; ++p) total += (cnt[p] = static_cast<uint64_t>(counts[p]));
  } else {
    for (uint32_t p = 0; p < n; ++p) total += (cnt[p] = static_cast<uint64_t>(each));
  }
  coll::Reduction r;
  SHMCOLL_CHECK(reduction(call, static_cast<int64_t>(total), t, op, &r));
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  // In place, the whole input is in recvbuf.
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, inPlace ? total : cnt[c->team.rank], t));
  if (!inPlace) SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, total, t));
  r.in = inPlace ? nullptr : sendbuf;
  r.out = recvbuf;
  // (An intercommunicator's counts are its local group's; the other group's
  // inputs are reduced and cut by them.)
  if (c->inter) return runInterReduceScatter(call, c, r, std::move(cnt));
  return runReduceScatter(call, c, r, std::move(cnt), counts == nullptr);
}

}  // namespace

template <class C>
int reduce(Call& call, const void* sendbuf, void* recvbuf, C count, MPI_Datatype datatype, MPI_Op op, int root,
           rt::Comm* c) {
  if (c->inter) return interReduce(call, sendbuf, recvbuf, count, datatype, op, root, c);
  SHMCOLL_CHECK(check::count(call, "count", count));
  const dt::Type* t = nullptr;
  SHMCOLL_CHECK(check::datatype(call, "datatype", datatype, &t));
  coll::Reduction r;
  SHMCOLL_CHECK(reduction(call, count, t, op, &r));
  const bool atRoot = c->team.rank == static_cast<uint32_t>(root);
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  if (inPlace && !atRoot)
    return check::fail(call, MPI_ERR_BUFFER, "sendbuf = MPI_IN_PLACE is only allowed at the root (rank %d)", root);
  if (!inPlace) SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, r.count, t));
  if (atRoot) {
    SHMCOLL_CHECK(check::recvNotInPlace(call, "recvbuf", recvbuf));
    SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, r.count, t));
  }
  r.in = inPlace ? nullptr : sendbuf;
  r.out = atRoot ? recvbuf : nullptr;  // only the root's out is significant
  return runReduce(call, c, r, root);
}

template <class C>
int allreduce(Call& call, const void* sendbuf, void* recvbuf, C count, const dt::Type* datatype, MPI_Op op,
              rt::Comm* c) {
  if (c->inter) SHMCOLL_CHECK(check::interNotInPlace(call, "sendbuf", sendbuf));
  coll::Reduction r;
  SHMCOLL_CHECK(everyRank(call, sendbuf, recvbuf, count, datatype, op, &r));
  if (c->inter) return runInterAllreduce(call, c, r);
  return runReduce(call, c, r, -1);
}

// MPI_Reduce's and MPI_Allreduce's fast paths (desc/coll_reduce.txt,
// fastrc=; coll_common.h): the blocking calls on an intracommunicator whose
// arguments pass every check above, an operation defined on the type among
// them, run without a Call (one is made only to report an error of the
// reduction).
namespace {

bool fastReduction(const void* sendbuf, void* recvbuf, bool out, int count, MPI_Datatype datatype, MPI_Op op,
                   coll::Reduction* r) {
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const dt::Type* t = fastSide(out ? recvbuf : sendbuf, count, datatype, 1);
  if (!t || (out && !inPlace && !fastSide(sendbuf, count, datatype, 1)) || !op::predefinedOperator(op, t, &r->op))
      [[unlikely]]
    return false;  // (a user operation, a derived type or an error: the entry's checks, in order)
  r->type = t;
  r->count = static_cast<uint64_t>(count);
  r->in = inPlace ? nullptr : sendbuf;
  r->out = out ? recvbuf : nullptr;
  return true;
}

}  // namespace

int reduceFast(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
               MPI_Comm comm) {
  rt::Comm* c = fastComm(comm, root);
  coll::Reduction r;
  // (Only the root's recvbuf is significant, and only it may pass MPI_IN_PLACE.)
  const bool atRoot = c && c->team.rank == static_cast<uint32_t>(root);
  if (!c || (!atRoot && sendbuf == MPI_IN_PLACE) || !fastReduction(sendbuf, recvbuf, atRoot, count, datatype, op, &r))
    return kDeclined;
  if (const int rc = coll::reduce(rt::placeOf(*c), r, root)) [[unlikely]]
    return fastFailed("MPI_Reduce", comm, rc);
  return MPI_SUCCESS;
}

int allreduceFast(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  rt::Comm* c = fastComm(comm);
  coll::Reduction r;
  if (!c || !fastReduction(sendbuf, recvbuf, true, count, datatype, op, &r)) return kDeclined;
  if (const int rc = coll::allreduce(rt::placeOf(*c), r)) [[unlikely]]
    return fastFailed("MPI_Allreduce", comm, rc);
  return MPI_SUCCESS;
}

// (A team of at most this many ranks: the counts on the stack.)
constexpr uint32_t kFastScatterRanks = 64;

int reduceScatterBlockFast(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
                           MPI_Comm comm) {
  rt::Comm* c = fastComm(comm);
  if (!c || recvcount < 0 || c->team.size() > kFastScatterRanks) return kDeclined;
  const uint32_t n = c->team.size();
  const uint64_t total = uint64_t{n} * static_cast<uint64_t>(recvcount);
  if (total > INT_MAX) return kDeclined;
  // In place, the whole input is in recvbuf.
  const bool inPlace = sendbuf == MPI_IN_PLACE;
  const dt::Type* t = fastSide(recvbuf, inPlace ? static_cast<int>(total) : recvcount, datatype, 1);
  coll::Reduction r;
  if (!t || (!inPlace && !fastSide(sendbuf, static_cast<int>(total), datatype, 1)) ||
      !op::predefinedOperator(op, t, &r.op)) [[unlikely]]
    return kDeclined;
  r.type = t;
  r.count = total;
  r.in = inPlace ? nullptr : sendbuf;
  r.out = recvbuf;
  uint64_t counts[kFastScatterRanks];
  std::fill_n(counts, n, static_cast<uint64_t>(recvcount));
  if (const int rc = coll::reduceScatter(rt::placeOf(*c), r, counts, true)) [[unlikely]]
    return fastFailed("MPI_Reduce_scatter_block", comm, rc);
  return MPI_SUCCESS;
}

template <class C>
int reduceScatter(Call& call, const void* sendbuf, void* recvbuf, const C recvcounts[], const dt::Type* datatype,
                  MPI_Op op, rt::Comm* c) {
  return reduceScatterAny(call, sendbuf, recvbuf, recvcounts, C{0}, datatype, op, c);
}

template <class C>
int reduceScatterBlock(Call& call, const void* sendbuf, void* recvbuf, C recvcount, const dt::Type* datatype,
                       MPI_Op op, rt::Comm* c) {
  return reduceScatterAny<C>(call, sendbuf, recvbuf, nullptr, recvcount, datatype, op, c);
}

// MPI_Scan (exclusive false) and MPI_Exscan; the entry point refused an intercommunicator.
template <bool kExclusive, class C>
int scan(Call& call, const void* sendbuf, void* recvbuf, C count, const dt::Type* datatype, MPI_Op op, rt::Comm* c) {
  coll::Reduction r;
  SHMCOLL_CHECK(everyRank(call, sendbuf, recvbuf, count, datatype, op, &r));
  return runScan(call, c, r, kExclusive);
}

}  // namespace shmcoll::api::impl

#include "generated/entry_coll_reduce.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/coll_reduce.txt)
