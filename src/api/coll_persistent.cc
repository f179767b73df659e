// Persistent collectives (MPI-4.0 §6.13): the request that every
// MPI_<collective>_init entry point ends with (finishPersistent), and the
// datatypes and operations it holds.  The entry points are generated with
// the other forms of each collective (src/api/desc/coll*.txt).
//
// An _init call runs the collective's implementation with a Call in
// persistent mode (coll_common.h): the same argument checks and error
// classes, raised at the _init call, then the hand-off keeps a starter (the
// argument object by value: buffers, counts, the user's count and
// displacement arrays as pointers, the resolved datatypes) instead of running
// anything.  Nothing is sent at _init.  MPI_Start runs the starter, which
// builds the same schedule of point-to-point messages (coll/sched.h) as the
// MPI_I<collective> form would at that moment: the buffers are read, and the
// arrays consulted, at MPI_Start.
//
// Matching: the request takes its communicator's next nonblocking operation
// number at _init (the _init calls are ordered like any collective) and every
// instance travels under it (coll::FixedNumber), so persistent requests may be
// started in any order, even a different one on each rank, and interleaved
// with blocking and nonblocking collectives, as MPI-4.0 allows.
//
// Lifetime: the request holds a reference to each datatype its arguments
// named and to its communicator (rt::holdComm), so MPI_Type_free and
// MPI_Comm_free may come first; both are released by MPI_Request_free, which
// refuses an active persistent collective (MPI_ERR_REQUEST: the standard
// permits freeing an active request for point-to-point operations only).
// A reduction's MPI_Op is held the same way (check::op), so MPI_Op_free
// may come first as well.  A user operation is then still called with the
// datatype handle named at _init, which no longer names a type once the user
// has freed it (the type itself is held).
#include <memory>

#include "api/coll_common.h"
#include "runtime/info.h"

namespace shmcoll::api {

namespace {

void dropHeld(PersistentInit& init) {
  for (const dt::Type* t : init.held) dt::release(t);
  init.held.clear();
  for (MPI_Op op : init.heldOps) op::unhold(op);
  init.heldOps.clear();
}

// What the request keeps: the _init call's starter and holds, its
// communicator and operation number.
struct PersistentColl {
  PersistentInit init;
  rt::Comm* comm = nullptr;
  uint32_t number = 0;  // the operation number of every instance

  PersistentColl() = default;
  PersistentColl(const PersistentColl&) = delete;
  PersistentColl& operator=(const PersistentColl&) = delete;
  ~PersistentColl() {
    dropHeld(init);
    if (comm) rt::releaseComm(comm);
  }
};

}  // namespace

int finishPersistent(Call& call, int rc) {
  PersistentInit& init = *call.record;
  rt::Info* ignored = nullptr;
  if (rc == MPI_SUCCESS) rc = check::infoOrNull(call, "info", call.info, &ignored);
  if (rc) {
    dropHeld(init);
    return rc;
  }
  rt::Comm* c = rt::comm(call.comm);  // (valid: the checks passed)
  auto pc = std::make_shared<PersistentColl>();
  pc->init = std::move(init);
  pc->comm = c;
  rt::holdComm(c);
  pc->number = rt::scheduleTeam(*c).nbcSeq++;
  MPI_Request h = newRequest(nullptr, call.comm, call.fn);
  RequestEntry* e = requestEntry(h);
  e->persistent = true;
  e->collective = true;
  e->start = [pc]() -> p2p::Request* {
    if (!pc->init.start) return new DoneRequest;  // (nothing to move)
    coll::FixedNumber fixed(rt::scheduleTeam(*pc->comm), pc->number);
    return pc->init.start();
  };
  *call.request = h;
  return MPI_SUCCESS;
}

namespace check {

void hold(const Call& call, const dt::Type* t) {
  dt::retain(t);
  call.record->held.push_back(t);
}

void hold(const Call& call, MPI_Op op) {
  op::hold(op);
  call.record->heldOps.push_back(op);
}

}  // namespace check

}  // namespace shmcoll::api
