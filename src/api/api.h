// Conventions for the extern "C" MPI entry points.
//
// SHMCOLL_API(int, MPI_Comm_rank, (MPI_Comm comm, int* rank)) { ... } defines
// PMPI_Comm_rank and makes MPI_Comm_rank a weak alias of it, both exported,
// so a profiling library can interpose MPI_X and call PMPI_X.
//
// Entry points are thin: validate arguments, convert handles, call one
// engine function, and route a failure through raise(), which builds an error
// code whose MPI_Error_string reads "<MPI function>: <reason>", hands it to
// the communicator's error handler (MPI_ERRORS_ARE_FATAL prints it and ends
// the job) and returns it.  No C++ exception crosses this layer.
#pragma once

#include <mpi.h>

#include "common/status.h"

#define SHMCOLL_API(ret, name, params)                                              \
  extern "C" __attribute__((visibility("default"))) ret P##name params;             \
  extern "C" __attribute__((visibility("default"), weak, alias("P" #name))) ret name params; \
  extern "C" ret P##name params

namespace shmcoll::api {

// Raises error class `cls` in function `fn` on communicator `comm`; the reason
// is the one recorded by the last shmcoll::fail().  Returns the error code.
[[gnu::cold]] int raise(MPI_Comm comm, const char* fn, int cls);
// Same, with the reason given here.
[[gnu::cold, gnu::format(printf, 4, 5)]] int raisef(MPI_Comm comm, const char* fn, int cls, const char* fmt, ...);

// An error code whose MPI_Error_string names `fn` and the reason, handed to
// no error handler (for the MPI_ERROR fields of statuses).
[[gnu::cold, gnu::format(printf, 3, 4)]] int makeErrorCode(int cls, const char* fn, const char* fmt, ...);

// Errors not tied to a communicator (datatype constructors, MPI_Get_address,
// ...) are raised on MPI_COMM_WORLD, as Open MPI and MPICH do.
constexpr MPI_Comm kNoComm = MPI_COMM_WORLD;

// True once MPI_Init has run and MPI_Finalize has not.
bool active();

// The class of an error code, and handing a code to a communicator's handler.
int errorClassOf(int code);
int dispatch(MPI_Comm comm, int code);

}  // namespace shmcoll::api

// Returns from an entry point with a raised error when `cond` holds.
#define SHMCOLL_REQUIRE(cond, comm, fn, cls, ...)                 \
  do {                                                             \
    if (__builtin_expect(!(cond), 0))                              \
      return ::shmcoll::api::raisef((comm), (fn), (cls), __VA_ARGS__); \
  } while (0)
