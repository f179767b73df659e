// Error reporting of the MPI entry points.
//
// The extern "C" entry points are generated (src/api/generate.py, from
// src/api/desc/*.txt): each defines PMPI_X and makes MPI_X a weak alias of
// it, both exported, so a profiling library can interpose MPI_X and call
// PMPI_X; each checks its arguments (api/check.h) and calls one hand-written
// implementation (namespace shmcoll::api::impl).
//
// A failure goes through raise(), which builds an error code whose
// MPI_Error_string reads "<MPI function>: <reason>", hands it to the
// communicator's error handler (MPI_ERRORS_ARE_FATAL prints it and ends the
// job) and returns it.  No C++ exception crosses this layer.
#pragma once

#include <mpi.h>

#include <cstdarg>
#include <string>

#include "api/call.h"
#include "common/status.h"

namespace shmcoll::api {

// Raises error class `cls` in function `fn` on communicator `comm`; the reason
// is the one recorded by the last shmcoll::fail().  Returns the error code.
[[gnu::cold]] int raise(MPI_Comm comm, const char* fn, int cls);
// Same, with the reason given here.
[[gnu::cold, gnu::format(printf, 4, 5)]] int raisef(MPI_Comm comm, const char* fn, int cls, const char* fmt, ...);
// The same with a va_list (check::fail).
[[gnu::cold]] int vraisef(MPI_Comm comm, const char* fn, int cls, const char* fmt, va_list ap);

// An error code whose MPI_Error_string names `fn` and the reason, handed to
// no error handler (for the MPI_ERROR fields of statuses).
[[gnu::cold, gnu::format(printf, 3, 4)]] int makeErrorCode(int cls, const char* fn, const char* fmt, ...);

// True once MPI_Init has run and MPI_Finalize has not.
bool active();
// Who this process is, for messages ("rank 3"; before MPI_Init "rank 3 (before MPI_Init)").
std::string whoAmI();

// The class of an error code (a user's code: the class it was added to;
// MPI_ERR_UNKNOWN for what is no code), and handing a code to a
// communicator's handler.
int errorClassOf(int code);
// MPI_SUCCESS, a predefined class, a code raise() made, or a user class or
// code (MPI_Add_error_class, MPI_Add_error_code).
bool validErrorCode(int code);
// The value of the MPI_LASTUSEDCODE attribute: the largest user class or code
// added, MPI_ERR_LASTCODE before any.
int& lastUsedErrorCode();
int dispatch(MPI_Comm comm, int code);
// Hands `code` to the error handler `h` of the object `handle` (a
// communicator or a session; `what` names it in the fatal message).
int dispatchTo(MPI_Errhandler h, int handle, const char* what, int code);
// The same for a window's handler (MPI_Win_call_errhandler, failures of window calls).
int dispatchWin(MPI_Win win, int code);
// Raises a class with a reason on a window, as vraisef does on a communicator.
[[gnu::cold]] int vraisefWin(MPI_Win win, const char* fn, int cls, const char* fmt, va_list ap);

// Stores `value` in the output argument *out and succeeds (the queries).
template <class T, class V>
int answer(T* out, V value) {
  *out = static_cast<T>(value);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api
