// Shared by the collective implementations (coll.cc, coll_rooted.cc,
// coll_reduce.cc): the per-pair block descriptions and the composite
// argument checks, and every hand-off to the engine (coll::), to a
// nonblocking schedule (nbc::) or to a persistent request
// (coll_persistent.cc).  The hand-offs are the run* and finishInter
// functions below and nothing else calls coll:: or nbc::.
//
// One implementation serves every form of a collective (MPI_X, MPI_X_c,
// MPI_IX, MPI_X_init, ...): it checks what the generated entry point left to
// it, builds the argument object (the per-pair blocks) and hands it off; the
// hand-off reads the mode from the Call.  Blocking, it runs the engine;
// nonblocking, it starts a schedule of point-to-point messages (p2p/nbc.h)
// and hands out its request; persistent, it keeps the function that starts
// that schedule, with everything it needs held by value, for MPI_Start.
#pragma once

#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/call.h"
#include "api/check.h"
#include "api/request.h"
#include "coll/coll.h"
#include "coll/exchange_inline.h"
#include "op/op.h"
#include "p2p/nbc.h"
#include "runtime/comm.h"

namespace shmcoll::api {

inline const dt::Type* byteType() {
  static const dt::Type* t = dt::fromHandle(MPI_BYTE);
  return t;
}

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

// Runs an intracommunicator exchange, or launches it as a schedule.  The
// schedule maker holds a copy of the argument object (an A, not the base
// class: a persistent request runs it again at every MPI_Start).
template <class A>
int runExchange(Call& call, rt::Comm* c, const A& a, bool inPlace = false) {
  if (!call.blocking()) {
    launch(call, c, [team = &c->team, a, inPlace] { return nbc::exchange(*team, a, inPlace); });
    return MPI_SUCCESS;
  }
  bool taken = false;
  int rc = coll::inlineExchange(c->team, a, &taken);  // (A is final: its blocks are computed inline)
  if (!taken) rc = coll::exchangeGeneral(c->team, a);
  if (rc) return check::engine(call, rc);
  return MPI_SUCCESS;
}

// MPI_IN_PLACE for the alltoall family: what each block holds on entry is
// packed into a private buffer first, then sent from there, so a peer never
// reads a block we have already overwritten.
class InPlaceArgs final : public coll::ExchangeArgs {
 public:
  InPlaceArgs(const coll::ExchangeArgs& inner, uint32_t n) : inner_(inner) {
    op = inner.op;
    skipEmpty = inner.skipEmpty;
    off_.resize(n + 1);
    for (uint32_t p = 0; p < n; ++p) off_[p + 1] = off_[p] + inner.recv(p).bytes();
    data_.resize(off_[n]);
    for (uint32_t p = 0; p < n; ++p) {
      coll::Block b = inner.recv(p);
      dt::Cursor cur(b.buf, b.count, b.type);
      cur.pack(0, data_.data() + off_[p], b.bytes());
    }
  }
  coll::Block send(uint32_t p) const override {
    return {data_.data() + off_[p], off_[p + 1] - off_[p], byteType()};
  }
  coll::Block recv(uint32_t p) const override { return inner_.recv(p); }

 private:
  const coll::ExchangeArgs& inner_;
  std::vector<uint64_t> off_;
  std::vector<char> data_;
};

// ---- intercommunicators -------------------------------------------------------------
//
// An intercommunicator's collectives run as point-to-point schedules over
// both groups (rt::Comm::peers), blocking or not (p2p/nbc.h): the argument
// objects of the intracommunicator forms, indexed by remote rank, say what
// each pair moves; InterPlan says which pairs this rank takes part in.

struct InterPlan {
  bool sendAll = false, recvAll = false;  // to / from every member of the remote group
  int sendTo = -1, recvFrom = -1;         // to / from one remote rank (rooted collectives)
};

class InterArgs final : public coll::ExchangeArgs {
 public:
  InterArgs(const coll::ExchangeArgs& inner, const rt::Comm& c, InterPlan plan)
      : inner_(inner), base_(c.remoteBase), n_(static_cast<uint32_t>(c.remote.size())), plan_(plan) {
    op = inner.op;
    allPairs = false;
  }
  coll::Block send(uint32_t u) const override { return sends(u) ? inner_.send(u - base_) : none(); }
  coll::Block recv(uint32_t u) const override { return receives(u) ? inner_.recv(u - base_) : none(); }
  bool sends(uint32_t u) const override {
    return remote(u) && (plan_.sendAll || u - base_ == static_cast<uint32_t>(plan_.sendTo));
  }
  bool receives(uint32_t u) const override {
    return remote(u) && (plan_.recvAll || u - base_ == static_cast<uint32_t>(plan_.recvFrom));
  }

 private:
  bool remote(uint32_t u) const { return u >= base_ && u - base_ < n_; }
  static coll::Block none() { return {nullptr, 0, byteType()}; }
  const coll::ExchangeArgs& inner_;
  uint32_t base_, n_;
  InterPlan plan_;
};

inline nbc::Groups groupsOf(const rt::Comm& c) {
  return {c.localBase, c.team.size(), c.remoteBase, static_cast<uint32_t>(c.remote.size())};
}

// Waits for an intercommunicator schedule and reports its failure (blocking).
inline int waitInter(Call& call, p2p::Request* op) {
  if (int rc = p2p::wait(op)) return check::fail(call, rc, "the job is ending");
  const int err = op->status.error;
  p2p::release(op);
  if (err == MPI_ERR_TRUNCATE)
    return check::fail(call, err,
                       "a block from the remote group is longer than the receive block for it (the two groups' "
                       "counts or type signatures disagree); only what fits was received");
  if (err) return check::fail(call, err, "a point-to-point transfer of the operation failed");
  return MPI_SUCCESS;
}

// The schedule `make` starts (it owns what it uses): launched in nonblocking
// and persistent mode, else started and waited for.
template <class Make>
  requires std::is_invocable_r_v<p2p::Request*, Make>
int finishInter(Call& call, rt::Comm* c, Make&& make) {
  if (!call.blocking()) {
    launch(call, c, std::forward<Make>(make));
    return MPI_SUCCESS;
  }
  return waitInter(call, make());
}

template <class A>
int runInter(Call& call, rt::Comm* c, const A& a, InterPlan plan) {
  return finishInter(call, c, [c, a, plan] {
    InterArgs ia(a, *c, plan);
    return nbc::exchange(c->peers, ia, false);
  });
}

// The operations in which every pair exchanges (alltoall(v,w), allgather(v)):
// between the groups on an intercommunicator; in place, the inline path
// needs no copy of the receive buffer (it writes every lane before it reads
// any), the streamed exchange sends from a packed copy (InPlaceArgs).
template <class A>
int runEveryPair(Call& call, rt::Comm* c, const A& a, bool inPlace) {
  if (c->inter) return runInter(call, c, a, {true, true});
  if (!call.blocking()) return runExchange(call, c, a, inPlace && !a.broadcast);
  if (inPlace && !a.broadcast) {
    bool taken = false;
    const int rc = coll::inlineExchange(c->team, a, &taken);
    if (taken) return rc ? check::engine(call, rc) : MPI_SUCCESS;
    InPlaceArgs ip(a, c->team.size());
    return runExchange(call, c, ip);
  }
  return runExchange(call, c, a);
}

// MPI_Barrier: a dissemination over both groups on an intercommunicator (each
// group leaves once the other has entered, as the standard asks, and more).
inline int runBarrier(Call& call, rt::Comm* c) {
  if (call.persistent()) {
    launch(call, c, [team = &rt::scheduleTeam(*c)] { return nbc::barrier(*team); });
  } else if (!call.blocking()) {
    *call.request = newRequest(nbc::barrier(rt::scheduleTeam(*c)), c->handle, call.fn);
    call.started = true;
  } else if (c->inter) {
    return waitInter(call, nbc::barrier(c->peers));
  } else if (int rc = coll::barrier(c->team)) {
    return check::engine(call, rc);
  }
  return MPI_SUCCESS;
}

// The reductions on an intracommunicator (root -1: allreduce).  The schedule
// makers own copies of the arguments.
inline int runReduce(Call& call, rt::Comm* c, const coll::Reduction& r, int root) {
  if (!call.blocking()) {
    launch(call, c, [team = &c->team, r, root] { return nbc::reduce(*team, r, root); });
    return MPI_SUCCESS;
  }
  const int rc = root < 0 ? coll::allreduce(c->team, r) : coll::reduce(c->team, r, static_cast<uint32_t>(root));
  return rc ? check::engine(call, rc) : MPI_SUCCESS;
}

// `counts`: each rank's share of the reduced elements; `block`: they are equal.
inline int runReduceScatter(Call& call, rt::Comm* c, const coll::Reduction& r, std::vector<uint64_t> counts,
                            bool block) {
  if (!call.blocking()) {
    launch(call, c, [team = &c->team, r, cnt = std::move(counts)] { return nbc::reduceScatter(*team, r, cnt.data()); });
    return MPI_SUCCESS;
  }
  const int rc = coll::reduceScatter(c->team, r, counts.data(), block);
  return rc ? check::engine(call, rc) : MPI_SUCCESS;
}

inline int runScan(Call& call, rt::Comm* c, const coll::Reduction& r, bool exclusive) {
  if (!call.blocking()) {
    launch(call, c, [team = &c->team, r, exclusive] { return nbc::scan(*team, r, exclusive); });
    return MPI_SUCCESS;
  }
  const int rc = coll::scan(c->team, r, exclusive);
  return rc ? check::engine(call, rc) : MPI_SUCCESS;
}

// The reductions on an intercommunicator: each group gets the other group's
// inputs reduced (p2p/nbc_inter.cc).  `role` is nbc::kInterRoot,
// nbc::kInterNone or the root's rank in the other group.
inline int runInterReduce(Call& call, rt::Comm* c, const coll::Reduction& r, int role) {
  return finishInter(call, c, [c, r, role] { return nbc::interReduce(c->peers, groupsOf(*c), r, role); });
}
inline int runInterAllreduce(Call& call, rt::Comm* c, const coll::Reduction& r) {
  return finishInter(call, c, [c, r] { return nbc::interAllreduce(c->peers, groupsOf(*c), r); });
}
inline int runInterReduceScatter(Call& call, rt::Comm* c, const coll::Reduction& r, std::vector<uint64_t> counts) {
  return finishInter(call, c, [c, r, cnt = std::move(counts)] {
    return nbc::interReduceScatter(c->peers, groupsOf(*c), r, cnt.data());
  });
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

}  // namespace shmcoll::api
