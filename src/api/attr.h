// Hooks through which other entry points keep attributes, hints and
// MPI_INFO_ENV right: communicator dup and free (api/comm.cc), datatype dup
// and free (api/type_build.cc), MPI_Init and MPI_Finalize (api/init.cc).
// Implemented in api/attr.cc and api/info.cc.  Each returns MPI_SUCCESS or an
// error code already handed to the error handler, ready to be returned.
#pragma once

#include <mpi.h>

#include "runtime/comm.h"

namespace shmcoll::api {

// MPI_Comm_dup and MPI_Comm_dup_with_info, once rt::dupComm made `nc` from
// `comm`: gives `nc` the hints and runs the copy callbacks of comm's
// attributes.  Collective: if a copy callback fails on any member, every
// member deletes what it copied, frees `nc` and returns an error (the member
// whose callback failed returns the callback's code); otherwise *newcomm is
// `nc`.  Costs one 4-byte allgather over `nc`.
int completeDup(MPI_Comm comm, rt::Comm* nc, rt::Info hints, const char* fn, MPI_Comm* newcomm);

// MPI_Comm_idup and MPI_Comm_idup_with_info on the valid `comm`: makes the
// pending communicator (*newcomm), gives it `hints` and copies comm's
// attributes now, as the standard asks, then starts the context agreement
// (runtime/idup.h) and hands out its request.  A failing copy callback fails
// the idup on every member when the request completes.
int startIdup(MPI_Comm comm, rt::Info hints, const char* fn, MPI_Comm* newcomm, MPI_Request* request);

// MPI_Comm_free, before the communicator goes: runs every delete callback,
// newest attribute first.  The communicator is freed even when a callback
// fails (the other members free it too); the first failure is returned.
int deleteCommAttrs(MPI_Comm comm, const char* fn);

// MPI_Type_dup, once *newtype exists: copies oldtype's attributes.  If a copy
// callback fails, the new type is freed and *newtype is MPI_DATATYPE_NULL.
int copyTypeAttrs(MPI_Datatype oldtype, MPI_Datatype* newtype, const char* fn);
// MPI_Type_free, before the last handle goes: runs the delete callbacks,
// newest first; a failing one stops it and the type stays as it is.
int deleteTypeAttrs(MPI_Datatype type, const char* fn);
// MPI_Win_free, first: runs the delete callbacks, newest first; a failing one
// stops it and the window stays.
int deleteWinAttrs(MPI_Win win, const char* fn);

// MPI_Finalize's first step: deletes the attributes of MPI_COMM_SELF, newest
// first, as the standard says, then those of MPI_COMM_WORLD, while MPI is
// still fully usable from the callbacks.
int finalizeAttrs();

// MPI_Init / MPI_Init_thread, once the runtime is up: fills MPI_INFO_ENV
// (command line, job size, current directory, requested thread level).
void recordInitEnv(int requiredThreadLevel);

}  // namespace shmcoll::api
