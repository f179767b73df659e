// One call of an MPI function, as its hand-written implementation sees it.
//
// The generated entry points (src/api/generate.py, from src/api/desc/*.txt)
// make a Call, run the argument checks the description asks for and pass the
// Call to one implementation function: every variant of a function (MPI_X,
// MPI_X_c, MPI_IX, MPI_X_init, ...) calls the same implementation, which
// learns from the Call which one it serves:
//  - fn: the MPI function's name, for error messages ("MPI_Ialltoallv_c");
//  - comm: whose error handler hears of a failure (the communicator
//    argument, else MPI_COMM_WORLD, as Open MPI and MPICH do); win: the
//    window argument, whose handler hears of it instead once it is checked;
//  - mode: blocking, nonblocking (MPI_I...: hand out a request) or persistent
//    (MPI_..._init: keep what starting it again needs);
//  - request, info: the arguments the nonblocking and persistent forms add.
// A Call lives on the entry point's stack for the duration of the call; a
// persistent collective's record (what its request keeps) hangs off it.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "wait/serial.h"

namespace shmcoll::api {

// Errors not tied to a communicator (datatype constructors, MPI_Get_address,
// ...) are raised on MPI_COMM_WORLD, as Open MPI and MPICH do.
constexpr MPI_Comm kNoComm = MPI_COMM_WORLD;

enum class Mode : uint8_t { kBlocking, kNonblocking, kPersistent };

struct PersistentInit;  // coll_common.h: a persistent collective's starter and held objects

namespace impl {
// What a fast path (desc/README.md, fastrc=) returns when it does not serve the call.
inline constexpr int kDeclined = -1;
}  // namespace impl

class Call {
 public:
  Call(const char* fn, MPI_Comm comm) : fn(fn), comm(comm) {}
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  bool blocking() const { return mode == Mode::kBlocking; }
  bool persistent() const { return mode == Mode::kPersistent; }

  const char* const fn;
  const MPI_Comm comm;
  MPI_Win win = MPI_WIN_NULL;  // set once a window argument passed its check
  Mode mode = Mode::kBlocking;
  MPI_Request* request = nullptr;  // nonblocking and persistent: where the request goes
  MPI_Info info = MPI_INFO_NULL;   // persistent collectives
  // Persistent collectives: the starter and the datatypes and operations the
  // request holds (the checks add to it, check::datatype and check::op).
  PersistentInit* record = nullptr;
  bool started = false;  // a request was handed out (nonblocking) or a starter kept (persistent)
};

}  // namespace shmcoll::api
