// MPI_Comm_idup: the nonblocking agreement on a context id (idup.cc has the
// protocol).
#pragma once

#include <mpi.h>

#include "p2p/p2p.h"
#include "runtime/comm.h"

namespace shmcoll::rt {

// Starts the agreement that gives `nc` (from pendingDup(parent), attributes
// and hints already copied) its context id; collective over `parent` (both
// groups of an intercommunicator).  `copyFailed`: this rank's attribute copy
// failed, so no member keeps the communicator.  The request completes once
// `nc` is usable; if it fails (a copy failed somewhere, or no id is free on
// every member) `nc` is released, *out becomes MPI_COMM_NULL and the
// request's status carries the error class.
p2p::Request* startIdup(Comm& parent, Comm* nc, bool copyFailed, MPI_Comm* out);

}  // namespace shmcoll::rt
