// The process-wide runtime: the mapped segment, this rank's identity, and the
// bookkeeping that lets operations on different communicators share one set
// of per-rank mailboxes safely.
#pragma once

#include <cstdint>
#include <vector>

#include "transport/world.h"
#include "runtime/ids.h"
#include "segment/layout.h"

namespace shmcoll::rt {

struct Context {
  transport::World& eng = transport::world();  // the segment, this rank and the job size
  void* mapBase = nullptr;
  size_t mapSize = 0;
  bool singleton = false;
  bool oversubscribed = false;
  int threadLevel = 0;
  // The runtime (segment, world team, progress engine): started by MPI_Init
  // or the first MPI_Session_init, ended once neither the world model nor a
  // session is left (api/init.cc, api/session.cc).
  bool initialized = false;
  bool finalized = false;
  // The world model: MPI_Init and MPI_Finalize were called (MPI_Initialized, MPI_Finalized).
  bool worldInit = false;
  bool worldFinalized = false;
  int sessions = 0;                        // sessions initialized and not finalized
  IdSet<kCtxIds> ctxUsed;                  // context ids this rank's communicators hold
  IdSet<segment::kMaxContexts> linesUsed;  // and their line sets (runtime/ids.h)
  // Which blocking creation may offer ids at this rank (MPI_THREAD_MULTIPLE; runtime/ids.h).
  IdTurns idTurns;
  // Some rank of the job asked for MPI_THREAD_MULTIPLE: no communicator gets
  // engine lines after MPI_Init (wait/serial.h).
  bool linesOff = false;
};

Context& ctx();

// MPI_Init / MPI_Finalize work.  Return 0 or an error class (reason via fail()).
int init(int requiredThread, int* provided);
int finalize();

// Ends the whole job with `code`: records the abort and why (MPI_Abort, or an
// error under MPI_ERRORS_ARE_FATAL) in the segment header so the launcher can
// report it, then exits this process.
[[noreturn]] void abortJob(int code, segment::AbortKind kind = segment::kAbortCalled);

}  // namespace shmcoll::rt
