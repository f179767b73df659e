// Shared by the collective implementations (coll.cc, coll_rooted.cc,
// coll_reduce.cc): the per-pair block descriptions and the composite
// argument checks, and every hand-off to the engine (coll/coll.h) or to a
// persistent request (coll_persistent.cc).  The hand-offs are the run*
// functions below and nothing else calls coll::.
//
// One implementation serves every form of a collective (MPI_X, MPI_X_c,
// MPI_IX, MPI_X_init, ...): it checks what the generated entry point left to
// it, builds the argument object (the per-pair blocks) and hands it off; the
// hand-off reads the mode from the Call.  Blocking, it runs the engine;
// nonblocking, it starts the operation (a schedule of point-to-point
// messages, coll/sched.h) and hands out its request; persistent, it keeps
// the function that starts it, with everything it needs held by value, for
// MPI_Start.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/call.h"
#include "api/check.h"
#include "api/request.h"
#include "coll/coll.h"
#include "op/op.h"
#include "runtime/comm.h"

namespace shmcoll::api {

inline const dt::Type* byteType() { return dt::byteType(); }

// ---- persistent requests (coll_persistent.cc) ----------------------------------------

// Starts one instance of a collective as a schedule; returns its request.
using Starter = std::function<p2p::Request*()>;

// What an _init call collects: the starter, and a reference to every
// datatype and operation its arguments named (MPI_Type_free and MPI_Op_free
// may come before the request is freed; check::datatype and check::op add them).
struct PersistentInit {
  Starter start;
  std::vector<const dt::Type*> held;
  std::vector<MPI_Op> heldOps;
};

// The end of every MPI_<collective>_init entry point: after the checks and
// the hand-off (`rc`), checks the info argument and makes the inactive
// persistent request, or drops what the record holds.
int finishPersistent(Call& call, int rc);

// ---- the hand-offs ------------------------------------------------------------------
//
// Each hands one prepared operation (its argument object, or a reduction) to
// the engine's one dispatch point (coll/coll.h): blocking, it runs now;
// nonblocking, it starts and its request is handed out; persistent, the
// function that starts it is kept for MPI_Start.

// Nonblocking or persistent mode: starts `make` now and hands out its
// request, or keeps it in the call's record.  `make` must own what it uses
// (capture by value).
template <class Make>
void launch(Call& call, rt::Comm* c, Make&& make) {
  if (call.record) {
    call.record->start = std::forward<Make>(make);
  } else {
    *call.request = newRequest(make(), c->handle, call.fn);
  }
  call.started = true;
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

// A data-moving collective: run by the engine (the inline path first, for
// the argument class itself: A is final, so its blocks are computed inline),
// or launched as a schedule whose maker holds a copy of the argument object
// (an A, not the base class: a persistent request starts it again at every
// MPI_Start).  On an intercommunicator the blocks are indexed by remote rank
// and `f.plan` says which pairs across the groups this rank takes part in.
template <class A>
int runExchange(Call& call, rt::Comm* c, const A& a, coll::Flags f) {
  if (!call.blocking()) {
    launch(call, c, [at = rt::placeOf(*c), a, f] {
      return started([&](p2p::Request** r) { return coll::startExchange(at, a, f, r); });
    });
    return MPI_SUCCESS;
  }
  if (int rc = coll::exchange(rt::placeOf(*c), a, f)) return check::engine(call, rc);
  return MPI_SUCCESS;
}
template <class A>
int runExchange(Call& call, rt::Comm* c, const A& a) {
  return runExchange(call, c, a, coll::Flags{});
}

using coll::InterPlan;

// An intercommunicator's rooted collective: `plan` says which pairs across
// the groups this rank takes part in.
template <class A>
int runInter(Call& call, rt::Comm* c, const A& a, InterPlan plan) {
  coll::Flags f;
  f.plan = plan;
  return runExchange(call, c, a, f);
}

// The operations in which every pair exchanges (alltoall(v,w), allgather(v)):
// between the groups on an intercommunicator.  In place, the engine sends
// from a packed copy of the receive blocks where it needs one (the inline
// path does not: it writes every lane before it reads any); allgather in
// place needs nothing, its block is already where it goes.
template <class A>
int runEveryPair(Call& call, rt::Comm* c, const A& a, bool inPlace) {
  if (c->inter) return runInter(call, c, a, {true, true});
  coll::Flags f;
  f.inPlace = inPlace && !a.broadcast;
  return runExchange(call, c, a, f);
}

// MPI_Barrier: a dissemination over both groups on an intercommunicator (each
// group leaves once the other has entered, as the standard asks, and more).
inline int runBarrier(Call& call, rt::Comm* c) {
  if (!call.blocking()) {
    launch(call, c, [at = rt::placeOf(*c)] {
      return started([&](p2p::Request** r) { return coll::startBarrier(at, r); });
    });
    return MPI_SUCCESS;
  }
  if (int rc = coll::barrier(rt::placeOf(*c))) return check::engine(call, rc);
  return MPI_SUCCESS;
}

// The reductions, on intra- and intercommunicators alike.  `root`: reduce's
// root (on an intercommunicator coll::kInterRoot, coll::kInterNone or the
// root's rank in the other group); `counts`: each rank's share of the
// reduced elements (reduce_scatter(_block)).
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

inline int runReduction(Call& call, rt::Comm* c, Reducing k, const coll::Reduction& r, int root = 0,
                        std::vector<uint64_t> counts = {}) {
  if (!call.blocking()) {
    launch(call, c, [at = rt::placeOf(*c), k, r, root, cnt = std::move(counts)] {
      return started([&](p2p::Request** q) { return startReducing(at, k, r, root, cnt, q); });
    });
    return MPI_SUCCESS;
  }
  if (int rc = runReducing(rt::placeOf(*c), k, r, root, counts)) return check::engine(call, rc);
  return MPI_SUCCESS;
}

// The reductions by name (root -1: allreduce).
inline int runReduce(Call& call, rt::Comm* c, const coll::Reduction& r, int root) {
  return root < 0 ? runReduction(call, c, Reducing::kAllreduce, r) : runReduction(call, c, Reducing::kReduce, r, root);
}
inline int runReduceScatter(Call& call, rt::Comm* c, const coll::Reduction& r, std::vector<uint64_t> counts,
                            bool block) {
  return runReduction(call, c, block ? Reducing::kReduceScatterBlock : Reducing::kReduceScatter, r, 0,
                      std::move(counts));
}
inline int runScan(Call& call, rt::Comm* c, const coll::Reduction& r, bool exclusive) {
  return runReduction(call, c, exclusive ? Reducing::kExscan : Reducing::kScan, r);
}
// On an intercommunicator each group gets the other group's inputs reduced.
inline int runInterReduce(Call& call, rt::Comm* c, const coll::Reduction& r, int role) {
  return runReduction(call, c, Reducing::kReduce, r, role);
}
inline int runInterAllreduce(Call& call, rt::Comm* c, const coll::Reduction& r) {
  return runReduction(call, c, Reducing::kAllreduce, r);
}
inline int runInterReduceScatter(Call& call, rt::Comm* c, const coll::Reduction& r, std::vector<uint64_t> counts) {
  return runReduction(call, c, Reducing::kReduceScatter, r, 0, std::move(counts));
}

// ---- blocks and the checks that make them -------------------------------------------

// One side of an operation: a buffer whose blocks are elements of `type`.
struct Side {
  const char* buf = nullptr;
  const dt::Type* type = nullptr;
  int64_t ext = 0;
};
inline Side sideOf(const void* buf, const dt::Type* t) { return {static_cast<const char*>(buf), t, t->extent()}; }

// Block p of a uniform side and of a v side.
inline coll::Block uniformBlock(const Side& s, uint64_t count, uint32_t p) {
  return {s.buf + s.ext * static_cast<int64_t>(p * count), count, s.type};
}
template <class C, class D>
coll::Block vectorBlock(const Side& s, const C* counts, const D* displs, uint32_t p) {
  return {s.buf + s.ext * static_cast<int64_t>(displs[p]), static_cast<uint64_t>(counts[p]), s.type};
}

// `blocks` blocks of `count` elements of `type` in `buf` (the send side, or a
// root's side: checked here only where significant).
inline int uniformSide(const Call& call, const char* bufName, const void* buf, const char* countName, int64_t count,
                       const char* typeName, MPI_Datatype type, uint64_t blocks, Side* out) {
  SHMCOLL_CHECK(check::count(call, countName, count));
  const dt::Type* t = nullptr;
  SHMCOLL_CHECK(check::datatype(call, typeName, type, &t));
  SHMCOLL_CHECK(check::buffer(call, bufName, buf, blocks * static_cast<uint64_t>(count), t));
  *out = sideOf(buf, t);
  return MPI_SUCCESS;
}
// One side of a v operation: per-peer counts and displacements, one type
// (resolved already, or to be checked here).
template <class C, class D>
int vectorSide(const Call& call, const char* bufName, const void* buf, const char* countsName, const C* counts,
               const char* displsName, const D* displs, const dt::Type* t, uint32_t n, Side* out) {
  SHMCOLL_CHECK(check::counts(call, countsName, counts, n));
  SHMCOLL_CHECK(check::notNull(call, displsName, displs));
  for (uint32_t p = 0; p < n; ++p)
    SHMCOLL_CHECK(check::buffer(call, bufName, buf, static_cast<uint64_t>(counts[p]), t));
  *out = sideOf(buf, t);
  return MPI_SUCCESS;
}
template <class C, class D>
int vectorSide(const Call& call, const char* bufName, const void* buf, const char* countsName, const C* counts,
               const char* displsName, const D* displs, const char* typeName, MPI_Datatype type, uint32_t n,
               Side* out) {
  const dt::Type* t = nullptr;
  SHMCOLL_CHECK(check::datatype(call, typeName, type, &t));
  return vectorSide(call, bufName, buf, countsName, counts, displsName, displs, t, n, out);
}

// ---- the fast paths ----------------------------------------------------------------

// The fast paths' conditions (desc/README.md, fastrc=), which hold exactly
// when the checks of the path with a Call pass: no thread serialization, MPI
// initialized, a valid intracommunicator and a rank of it as the root (0 where
// there is none) ...
inline rt::Comm* fastComm(MPI_Comm h, int root = 0) {
  if (wait::gSerialOn || !active()) [[unlikely]]
    return nullptr;
  rt::Comm* c = rt::comm(h);
  return c && !c->inter && root >= 0 && static_cast<uint32_t>(root) < c->team.size() ? c : nullptr;
}
// ... and `blocks` blocks of `count` elements (count not negative, a
// committed type, a buffer that is not MPI_IN_PLACE, nor NULL where it would
// be used: as uniformSide and check::notInPlace), or one block.
inline const dt::Type* fastSide(const void* buf, int count, MPI_Datatype type, uint64_t blocks) {
  const dt::Type* t = rt::type(type);
  if (count < 0 || buf == MPI_IN_PLACE || !t || !t->committed) [[unlikely]]
    return nullptr;
  if (!buf && count > 0 && blocks > 0 && t->size > 0 && t->trueLb == 0) [[unlikely]]
    return nullptr;
  return t;
}
// An error of the engine in a fast path: reported through a Call made now,
// naming the function `fn` (as check::engine does for the checked path).
[[gnu::cold]] inline int fastFailed(const char* fn, MPI_Comm comm, int rc) {
  const Call call(fn, comm);
  return check::engine(call, rc);
}
inline bool fastBlock(const void* buf, int count, MPI_Datatype type, coll::Block* out) {
  const dt::Type* t = fastSide(buf, count, type, 1);
  if (!t) return false;
  *out = {static_cast<const char*>(buf), static_cast<uint64_t>(count), t};
  return true;
}

}  // namespace shmcoll::api
