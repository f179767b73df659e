// Shared by the collective entry points (coll.cc, coll_rooted.cc,
// coll_reduce.cc): argument checks that name the function and the argument,
// and the hand-off to the engine, to a nonblocking schedule, or to a
// persistent request (coll_persistent.cc).
//
// Each entry point exists twice, with int counts (MPI_X) and with MPI_Count
// counts and MPI_Aint displacements (MPI-4 big count, MPI_X_c); both call one
// template, so the checks are the same and the engine sees 64-bit counts.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/api.h"
#include "api/request.h"
#include "coll/coll.h"
#include "op/op.h"
#include "runtime/comm.h"

namespace shmcoll::api {

inline const dt::Type* byteType() { return dt::byteType(); }

// ---- nonblocking and persistent modes ---------------------------------------------
//
// An MPI_I<collective> entry point runs the blocking entry point's template
// (the same checks, the same per-pair blocks) inside startNonblocking(); an
// MPI_<collective>_init entry point runs it inside initPersistent().  The
// hand-off points (runExchange, finishInter, the reductions) then call
// launch() with a function that starts a schedule of point-to-point messages
// (p2p/nbc.h): nonblocking, it runs at once and its request is handed out;
// persistent, it is kept, with everything it needs held by value, and runs at
// every MPI_Start (coll_persistent.cc).  The library is called by one thread
// at a time (MPI_THREAD_SERIALIZED at most), so one pointer is enough.

// Starts one instance of a collective as a schedule; returns its request.
using Starter = std::function<p2p::Request*()>;

// What an _init call collects: the starter, and a reference to every
// datatype its arguments named (MPI_Type_free may come before the request is
// freed).
struct PersistentInit {
  Starter start;
  std::vector<const dt::Type*> held;
  std::vector<MPI_Op> heldOps;  // a reduction's operation (op::hold)
};

struct Nonblocking {
  MPI_Request* out = nullptr;        // nonblocking: the caller's request
  PersistentInit* record = nullptr;  // persistent: keep the starter here instead
  bool started = false;
};
extern Nonblocking* gNonblocking;

// Nonblocking or persistent mode: starts `make` now and hands out its request,
// or keeps it.  `make` must own what it uses (capture by value).
template <class Make>
void launch(rt::Comm* c, const char* fn, Make&& make) {
  if (gNonblocking->record) {
    gNonblocking->record->start = std::forward<Make>(make);
  } else {
    *gNonblocking->out = newRequest(make(), c->handle, fn);
  }
  gNonblocking->started = true;
}

// Hands out an operation already started (nonblocking mode only: a
// persistent request must be able to start it again, see launch()).
inline void handOut(rt::Comm* c, const char* fn, p2p::Request* op) {
  *gNonblocking->out = newRequest(op, c->handle, fn);
  gNonblocking->started = true;
}

template <class F>
int startNonblocking(const char* fn, MPI_Comm comm, MPI_Request* request, F&& call) {
  SHMCOLL_REQUIRE(request, comm, fn, MPI_ERR_ARG, "request is NULL");
  Nonblocking nb{request, nullptr, false};
  gNonblocking = &nb;
  int rc = call();
  gNonblocking = nullptr;
  // A call that had nothing to start (no error, nothing to move) is complete.
  if (rc == MPI_SUCCESS && !nb.started) *request = newRequest(new DoneRequest, comm, fn);
  return rc;
}

// The second half of initPersistent (coll_persistent.cc): after the checks
// (`rc`), checks `info` and makes the inactive persistent request, or drops
// what `init` holds.
int finishPersistent(const char* fn, MPI_Comm comm, MPI_Info info, MPI_Request* request, PersistentInit& init,
                     int rc);

template <class F>
int initPersistent(const char* fn, MPI_Comm comm, MPI_Info info, MPI_Request* request, F&& call) {
  SHMCOLL_REQUIRE(request, comm, fn, MPI_ERR_ARG, "request is NULL");
  PersistentInit init;
  Nonblocking nb{nullptr, &init, false};
  gNonblocking = &nb;
  int rc = call();
  gNonblocking = nullptr;
  return finishPersistent(fn, comm, info, request, init, rc);
}

// The body of an MPI_<collective>_init entry point: IMPL, the blocking form's
// template, run in persistent mode under the _init call's name (an IMPL with
// a comma in it goes in parentheses).  Uses the entry point's comm, info and
// request arguments.
#define SHMCOLL_PERSISTENT(NAME, IMPL, ...) \
  ::shmcoll::api::initPersistent(NAME, comm, info, request, [&] { return IMPL(NAME, __VA_ARGS__); })

// Persistent mode: a datatype the arguments resolved to is held for the
// request's lifetime.
inline void keepType(const dt::Type* t) {
  if (gNonblocking && gNonblocking->record) [[unlikely]] {
    dt::retain(t);
    gNonblocking->record->held.push_back(t);
  }
}

// Persistent mode: a reduction's operation is held for the request's lifetime
// too, so MPI_Op_free may come first (and a later MPI_Op_create cannot take
// over its handle while the request can still start).
inline void keepOp(MPI_Op op) {
  if (gNonblocking && gNonblocking->record) [[unlikely]] {
    op::hold(op);
    gNonblocking->record->heldOps.push_back(op);
  }
}

#define CHECK_ARG(expr)               \
  do {                                \
    if (int rc_ = (expr)) return rc_; \
  } while (0)

// One side of a uniform operation: a buffer whose blocks are `count` elements of `type`.
struct Side {
  const char* buf = nullptr;
  const dt::Type* type = nullptr;
  int64_t ext = 0;
};

struct Checker {
  MPI_Comm comm;
  const char* fn;

  int type(const char* arg, MPI_Datatype h, const dt::Type** out) const {
    const dt::Type* t = dt::fromHandle(h);
    if (!t)
      return raisef(comm, fn, MPI_ERR_TYPE, "%s = %#x is %s", arg, static_cast<unsigned>(h),
                    h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype");
    if (!t->committed)
      return raisef(comm, fn, MPI_ERR_TYPE, "%s is a derived datatype that was not committed (MPI_Type_commit)", arg);
    keepType(t);
    *out = t;
    return MPI_SUCCESS;
  }
  // type() for element i of the array argument `array` ("recvtypes"); the
  // argument's name is formatted only for an error message.
  int typeAt(const char* array, uint32_t i, MPI_Datatype h, const dt::Type** out) const {
    const dt::Type* t = dt::fromHandle(h);
    if (t && t->committed) {
      keepType(t);
      *out = t;
      return MPI_SUCCESS;
    }
    char arg[64];
    snprintf(arg, sizeof arg, "%s[%u]", array, i);
    return type(arg, h, out);
  }
  int count(const char* arg, int64_t n) const {
    if (n < 0) return raisef(comm, fn, MPI_ERR_COUNT, "%s = %" PRId64 " is negative", arg, n);
    return MPI_SUCCESS;
  }
  template <class C>
  int counts(const char* arg, const C* v, uint32_t n) const {
    if (!v) return raisef(comm, fn, MPI_ERR_ARG, "%s is NULL", arg);
    for (uint32_t i = 0; i < n; ++i)
      if (v[i] < 0)
        return raisef(comm, fn, MPI_ERR_COUNT, "%s[%u] = %" PRId64 " is negative", arg, i, static_cast<int64_t>(v[i]));
    return MPI_SUCCESS;
  }
  int array(const char* arg, const void* v) const {
    if (!v) return raisef(comm, fn, MPI_ERR_ARG, "%s is NULL", arg);
    return MPI_SUCCESS;
  }
  // A null buffer is an error when it must hold data; with MPI_BOTTOM and a
  // type of absolute addresses (true lower bound not 0) it is fine.
  int buffer(const char* arg, const void* buf, uint64_t count, const dt::Type* t) const {
    if (!buf && count > 0 && t->size > 0 && t->trueLb == 0)
      return raisef(comm, fn, MPI_ERR_BUFFER, "%s is NULL but %llu elements are to be moved", arg,
                    (unsigned long long)count);
    return MPI_SUCCESS;
  }
  int notInPlace(const char* arg, const void* buf) const {
    if (buf == MPI_IN_PLACE)
      return raisef(comm, fn, MPI_ERR_BUFFER, "%s = MPI_IN_PLACE is not allowed here", arg);
    return MPI_SUCCESS;
  }
  int recvNotInPlace(const void* recvbuf) const {
    if (recvbuf == MPI_IN_PLACE)
      return raisef(comm, fn, MPI_ERR_BUFFER, "recvbuf = MPI_IN_PLACE is not allowed (only sendbuf may be)");
    return MPI_SUCCESS;
  }
  // On an intercommunicator: MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (of size n).
  int interRoot(int r, uint32_t n) const {
    if (r != MPI_ROOT && r != MPI_PROC_NULL && (r < 0 || static_cast<uint32_t>(r) >= n))
      return raisef(comm, fn, MPI_ERR_ROOT,
                    "root = %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote group (size %u) of the "
                    "intercommunicator",
                    r, n);
    return MPI_SUCCESS;
  }
  int interNotInPlace(const char* arg, const void* buf) const {
    if (buf == MPI_IN_PLACE)
      return raisef(comm, fn, MPI_ERR_BUFFER, "%s = MPI_IN_PLACE is not allowed on an intercommunicator", arg);
    return MPI_SUCCESS;
  }
  int root(int r, uint32_t n) const {
    if (r < 0 || static_cast<uint32_t>(r) >= n)
      return raisef(comm, fn, MPI_ERR_ROOT, "root = %d is not a rank of the communicator (size %u)", r, n);
    return MPI_SUCCESS;
  }
  // `blocks` blocks of `count` elements of `type` in `buf` (not MPI_IN_PLACE).
  int uniform(const char* bufName, const void* buf, const char* countName, int64_t cnt, const char* typeName,
              MPI_Datatype t, uint64_t blocks, Side* out) const {
    CHECK_ARG(count(countName, cnt));
    CHECK_ARG(type(typeName, t, &out->type));
    CHECK_ARG(buffer(bufName, buf, blocks * static_cast<uint64_t>(cnt), out->type));
    out->buf = static_cast<const char*>(buf);
    out->ext = out->type->extent();
    return MPI_SUCCESS;
  }
  // One side of a v operation: per-peer counts and displacements, one type.
  template <class C, class D>
  int vectorSide(const char* bufName, const void* buf, const char* countsName, const C* cnts,
                 const char* displsName, const D* displs, const char* typeName, MPI_Datatype t, uint32_t n,
                 Side* out) const {
    CHECK_ARG(counts(countsName, cnts, n));
    CHECK_ARG(array(displsName, displs));
    CHECK_ARG(type(typeName, t, &out->type));
    for (uint32_t p = 0; p < n; ++p) CHECK_ARG(buffer(bufName, buf, static_cast<uint64_t>(cnts[p]), out->type));
    out->buf = static_cast<const char*>(buf);
    out->ext = out->type->extent();
    return MPI_SUCCESS;
  }
};

// Block p of a uniform side and of a v side.
inline coll::Block uniformBlock(const Side& s, uint64_t count, uint32_t p) {
  return {s.buf + s.ext * static_cast<int64_t>(p * count), count, s.type};
}
template <class C, class D>
coll::Block vectorBlock(const Side& s, const C* counts, const D* displs, uint32_t p) {
  return {s.buf + s.ext * static_cast<int64_t>(displs[p]), static_cast<uint64_t>(counts[p]), s.type};
}

// Runs `start(&request)` (one of the engine's coll::start* functions) and
// returns the request, or, when the engine could not start the operation, a
// completed one with the error in its status.
template <class Start>
p2p::Request* started(Start&& start) {
  p2p::Request* r = nullptr;
  if (const int rc = start(&r)) {
    auto* d = new DoneRequest;
    d->status.error = rc;
    return d;
  }
  return r;
}

// Hands a data-moving collective to the engine: runs it (blocking), or, in
// nonblocking and persistent mode, launches its schedule.  The schedule
// maker holds a copy of the argument object (an A, not the base class: a
// persistent request starts it again at every MPI_Start).  On an
// intercommunicator the blocks are indexed by remote rank and `f.plan` says
// which pairs across the groups this rank takes part in.
template <class A>
int runExchange(rt::Comm* c, const char* fn, const A& a, coll::Flags f = {}) {
  if (gNonblocking) {
    launch(c, fn, [at = rt::placeOf(*c), a, f] {
      return started([&](p2p::Request** r) { return coll::startExchange(at, a, f, r); });
    });
    return MPI_SUCCESS;
  }
  if (int rc = coll::exchange(rt::placeOf(*c), a, f)) return raise(c->handle, fn, rc);
  return MPI_SUCCESS;
}

// An intercommunicator's data-moving collective (see runExchange).
template <class A>
int runInter(rt::Comm* c, const char* fn, const A& a, coll::InterPlan plan) {
  return runExchange(c, fn, a, coll::Flags{false, plan});
}

// The reducing collectives' hand-off, likewise: `counts` for
// reduce_scatter(_block), `root` for reduce (on an intercommunicator
// coll::kInterRoot, coll::kInterNone or the root's remote rank).
enum class Reducing { kReduce, kAllreduce, kReduceScatter, kReduceScatterBlock, kScan, kExscan };

inline int startReducing(const coll::Place& at, Reducing k, const coll::Reduction& r, int root,
                         const std::vector<uint64_t>& counts, p2p::Request** out) {
  switch (k) {
    case Reducing::kReduce: return coll::startReduce(at, r, root, out);
    case Reducing::kAllreduce: return coll::startAllreduce(at, r, out);
    case Reducing::kReduceScatter: return coll::startReduceScatter(at, r, counts.data(), false, out);
    case Reducing::kReduceScatterBlock: return coll::startReduceScatter(at, r, counts.data(), true, out);
    case Reducing::kScan: return coll::startScan(at, r, false, out);
    case Reducing::kExscan: return coll::startScan(at, r, true, out);
  }
  return MPI_ERR_INTERN;
}

inline int runReducing(const coll::Place& at, Reducing k, const coll::Reduction& r, int root,
                       const std::vector<uint64_t>& counts) {
  switch (k) {
    case Reducing::kReduce: return coll::reduce(at, r, root);
    case Reducing::kAllreduce: return coll::allreduce(at, r);
    case Reducing::kReduceScatter: return coll::reduceScatter(at, r, counts.data(), false);
    case Reducing::kReduceScatterBlock: return coll::reduceScatter(at, r, counts.data(), true);
    case Reducing::kScan: return coll::scan(at, r, false);
    case Reducing::kExscan: return coll::scan(at, r, true);
  }
  return MPI_ERR_INTERN;
}

inline int runReduction(rt::Comm* c, const char* fn, Reducing k, const coll::Reduction& r, int root = 0,
                        std::vector<uint64_t> counts = {}) {
  if (gNonblocking) {
    launch(c, fn, [at = rt::placeOf(*c), k, r, root, counts] {
      return started([&](p2p::Request** q) { return startReducing(at, k, r, root, counts, q); });
    });
    return MPI_SUCCESS;
  }
  if (int rc = runReducing(rt::placeOf(*c), k, r, root, counts)) return raise(c->handle, fn, rc);
  return MPI_SUCCESS;
}

// MPI_Barrier and its nonblocking and persistent forms.
inline int runBarrier(rt::Comm* c, const char* fn) {
  if (gNonblocking) {
    launch(c, fn, [at = rt::placeOf(*c)] { return started([&](p2p::Request** r) { return coll::startBarrier(at, r); }); });
    return MPI_SUCCESS;
  }
  if (int rc = coll::barrier(rt::placeOf(*c))) return raise(c->handle, fn, rc);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api

#define COMM_OR_FAIL(c, h, fn)                                                                                   \
  SHMCOLL_REQUIRE(::shmcoll::api::active(), ::shmcoll::api::kNoComm, fn, MPI_ERR_OTHER,                          \
                  "called outside MPI_Init ... MPI_Finalize");                                                   \
  ::shmcoll::rt::Comm* c = ::shmcoll::rt::comm(h);                                                               \
  SHMCOLL_REQUIRE(c, h, fn, MPI_ERR_COMM, "comm = %#x is not a valid communicator%s", static_cast<unsigned>(h), \
                  ::shmcoll::rt::commNote(h))
