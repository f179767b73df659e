// MPI_Request handles: the table that maps them to engine requests, shared
// by the point-to-point (p2p.cc), request (request.cc), nonblocking
// collective (coll*.cc) and persistent collective (coll_persistent.cc) entry
// points.
#pragma once

#include <mpi.h>

#include <functional>

#include "api/call.h"
#include "p2p/p2p.h"

namespace shmcoll::rt {
struct Comm;
}

namespace shmcoll::api {

// A request already complete when it is handed out (MPI_PROC_NULL peers,
// buffered sends, operations with nothing to move).
struct DoneRequest final : p2p::Request {
  DoneRequest() : Request(Kind::kOther) { done = true; }
};

// A generalized request (MPI_Grequest_start): done when the user calls
// MPI_Grequest_complete; its callbacks fill the status, free the user's state
// and cancel (request.cc calls them where the standard says).
struct GRequest final : p2p::Request {
  GRequest() : Request(Kind::kOther) {}
  MPI_Grequest_query_function* query = nullptr;
  MPI_Grequest_free_function* free = nullptr;
  MPI_Grequest_cancel_function* cancel = nullptr;
  void* extra = nullptr;
};

struct RequestEntry {
  RequestEntry() = default;
  RequestEntry(p2p::Request* op, MPI_Comm comm, const char* what) : op(op), comm(comm), what(what), live(true) {}

  p2p::Request* op = nullptr;  // the running operation; nullptr: an inactive persistent request
  MPI_Comm comm = MPI_COMM_NULL;
  const char* what = "";       // the function that made it (for error messages)
  bool persistent = false;
  bool collective = false;               // a persistent collective (coll_persistent.cc)
  bool starting = false;                 // MPI_Startall: seen earlier in the array being checked
  std::function<p2p::Request*()> start;  // persistent: starts one instance
  const dt::Type* heldType = nullptr;    // persistent: a datatype reference held until MPI_Request_free
  rt::Comm* heldComm = nullptr;          // persistent point-to-point: its communicator, held as long (rt::holdComm)
  GRequest* grequest = nullptr;          // op, when it is a generalized request
  bool freedByUser = false;              // a generalized request MPI_Request_free let go before it completed
  bool live = false;
};

// A new handle for `op` (may be nullptr for a persistent request).
MPI_Request newRequest(p2p::Request* op, MPI_Comm comm, const char* what);
// The entry behind a handle; nullptr for MPI_REQUEST_NULL or an invalid handle.
RequestEntry* requestEntry(MPI_Request h);
// Frees a handle's table slot (not the operation).
void dropRequest(MPI_Request h);

// The status of an empty or inactive request.
void emptyStatus(MPI_Status* st);
// Copies an engine status into an MPI status (if not MPI_STATUS_IGNORE).
void toStatus(const p2p::Status& s, MPI_Status* st, int errorCode);

// Nonblocking mode: hands out the request of the operation `op` started.
inline void handOut(Call& call, p2p::Request* op) {
  *call.request = newRequest(op, call.comm, call.fn);
  call.started = true;
}

// The end of every nonblocking (and persistent point-to-point) entry point:
// a call that succeeded without starting anything (nothing to move) hands
// out a request that is complete already.
inline int finishStarted(Call& call, int rc) {
  if (rc == MPI_SUCCESS && !call.started) [[unlikely]]
    handOut(call, new DoneRequest);
  return rc;
}

}  // namespace shmcoll::api
