// Status codes inside the engine.
//
// Engine functions return an int: 0 (MPI_SUCCESS) or an MPI error class.  The
// failing function records a human-readable reason with fail(), which the API
// layer turns into an error code whose MPI_Error_string names the MPI function
// and the argument.  No exceptions cross the engine.
#pragma once

#include <cstdarg>
#include <string>

namespace shmcoll {

constexpr int kOk = 0;

// The error classes the engine returns.  Their values are MPI's (api/errors.cc
// checks that they equal mpi.h's MPI_ERR_*, and the API hands them on as they
// are), but the engine names them here so that it never includes mpi.h: a
// front end built against another MPI's header can link it too.
namespace err {
enum : int {
  kBuffer = 1, kCount = 2, kType = 3, kArg = 12, kTruncate = 14, kOther = 15, kIntern = 16, kNoMem = 34,
  kProcAborted = 58
};
}  // namespace err

// Records `fmt` as the reason for the current failure and returns `cls`.
[[gnu::format(printf, 2, 3), gnu::cold]] int fail(int cls, const char* fmt, ...);

// The reason recorded by the last fail() on this thread ("" when none), and a reset.
const std::string& lastReason();
void clearReason();

}  // namespace shmcoll

// Returns from the enclosing function when `expr` yields an error.
#define SHMCOLL_CHECK(expr)                   \
  do {                                        \
    int shmcoll_rc_ = (expr);                 \
    if (__builtin_expect(shmcoll_rc_ != 0, 0)) \
      return shmcoll_rc_;                     \
  } while (0)
