// Error codes, error strings and error handlers.
//
// An error code is either a bare class (0..MPI_ERR_LASTCODE of the builtin
// classes) or class | (serial << 8) for a code that carries a message: the
// last kRing messages are kept, so MPI_Error_string can say which function
// failed and why.  Classes and codes a user adds (MPI_Add_error_class,
// MPI_Add_error_code) are numbered from MPI_ERR_LASTCODE + 1 up, one table
// entry each (its class, its string, whether it was removed): above every
// code of the other two kinds, so a value says at once which kind it is.
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/check.h"
#include "common/settings.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/win.h"

// The engine's error classes (common/status.h) are handed on as they are.
static_assert(shmcoll::err::kBuffer == MPI_ERR_BUFFER && shmcoll::err::kCount == MPI_ERR_COUNT &&
              shmcoll::err::kType == MPI_ERR_TYPE && shmcoll::err::kArg == MPI_ERR_ARG &&
              shmcoll::err::kTruncate == MPI_ERR_TRUNCATE && shmcoll::err::kOther == MPI_ERR_OTHER &&
              shmcoll::err::kIntern == MPI_ERR_INTERN && shmcoll::err::kNoMem == MPI_ERR_NO_MEM &&
              shmcoll::err::kProcAborted == MPI_ERR_PROC_ABORTED);

namespace shmcoll::api {

namespace {

constexpr int kRing = 256;
// (No member initializers: the ring is zero-initialized static storage, so
// no constructor runs at load time and its pages stay untouched until an
// error is recorded -- 256 KiB per process otherwise, in every rank of a job.)
struct Entry {
  int code;
  char text[MPI_MAX_ERROR_STRING];
};
constinit Entry gRing[kRing] = {};
int gSerial = 0;
std::mutex gMu;

const char* className(int cls) {
  switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS: no error";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER: invalid buffer pointer";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT: invalid count argument";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE: invalid datatype";
    case MPI_ERR_TAG: return "MPI_ERR_TAG: invalid tag";
    case MPI_ERR_COMM: return "MPI_ERR_COMM: invalid communicator";
    case MPI_ERR_RANK: return "MPI_ERR_RANK: invalid rank";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT: invalid root";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP: invalid group";
    case MPI_ERR_OP: return "MPI_ERR_OP: invalid reduce operation";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY: invalid communicator topology";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS: invalid dimension argument";
    case MPI_ERR_ARG: return "MPI_ERR_ARG: invalid argument";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN: unknown error";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE: message truncated";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER: other error";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN: internal error";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS: error code is in status";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING: pending request";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST: invalid request";
    case MPI_ERR_ACCESS: return "MPI_ERR_ACCESS: permission denied";
    case MPI_ERR_AMODE: return "MPI_ERR_AMODE: invalid file access mode";
    case MPI_ERR_BAD_FILE: return "MPI_ERR_BAD_FILE: invalid file name";
    case MPI_ERR_CONVERSION: return "MPI_ERR_CONVERSION: data conversion failed";
    case MPI_ERR_DUP_DATAREP: return "MPI_ERR_DUP_DATAREP: data representation already defined";
    case MPI_ERR_FILE_EXISTS: return "MPI_ERR_FILE_EXISTS: file exists";
    case MPI_ERR_FILE_IN_USE: return "MPI_ERR_FILE_IN_USE: file in use";
    case MPI_ERR_FILE: return "MPI_ERR_FILE: invalid file handle";
    case MPI_ERR_INFO: return "MPI_ERR_INFO: invalid info object";
    case MPI_ERR_INFO_KEY: return "MPI_ERR_INFO_KEY: invalid info key";
    case MPI_ERR_INFO_VALUE: return "MPI_ERR_INFO_VALUE: invalid info value";
    case MPI_ERR_INFO_NOKEY: return "MPI_ERR_INFO_NOKEY: info key not found";
    case MPI_ERR_NO_MEM: return "MPI_ERR_NO_MEM: out of memory";
    case MPI_ERR_IO: return "MPI_ERR_IO: I/O error";
    case MPI_ERR_NAME: return "MPI_ERR_NAME: invalid service name";
    case MPI_ERR_NOT_SAME: return "MPI_ERR_NOT_SAME: arguments differ between processes";
    case MPI_ERR_NO_SPACE: return "MPI_ERR_NO_SPACE: no space left";
    case MPI_ERR_NO_SUCH_FILE: return "MPI_ERR_NO_SUCH_FILE: no such file";
    case MPI_ERR_PORT: return "MPI_ERR_PORT: invalid port name";
    case MPI_ERR_QUOTA: return "MPI_ERR_QUOTA: quota exceeded";
    case MPI_ERR_READ_ONLY: return "MPI_ERR_READ_ONLY: read-only file or file system";
    case MPI_ERR_SERVICE: return "MPI_ERR_SERVICE: invalid service";
    case MPI_ERR_SPAWN: return "MPI_ERR_SPAWN: could not spawn processes";
    case MPI_ERR_UNSUPPORTED_DATAREP: return "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation";
    case MPI_ERR_WIN: return "MPI_ERR_WIN: invalid window";
    case MPI_ERR_BASE: return "MPI_ERR_BASE: invalid base address";
    case MPI_ERR_LOCKTYPE: return "MPI_ERR_LOCKTYPE: invalid lock type";
    case MPI_ERR_RMA_CONFLICT: return "MPI_ERR_RMA_CONFLICT: conflicting window accesses";
    case MPI_ERR_RMA_SYNC: return "MPI_ERR_RMA_SYNC: RMA call outside the right synchronization";
    case MPI_ERR_ASSERT: return "MPI_ERR_ASSERT: invalid assertion";
    case MPI_ERR_RMA_RANGE: return "MPI_ERR_RMA_RANGE: target memory outside the window";
    case MPI_ERR_RMA_ATTACH: return "MPI_ERR_RMA_ATTACH: memory cannot be attached or detached";
    case MPI_ERR_RMA_SHARED: return "MPI_ERR_RMA_SHARED: memory cannot be shared";
    case MPI_ERR_RMA_FLAVOR: return "MPI_ERR_RMA_FLAVOR: wrong window flavor";
    case MPI_ERR_SESSION: return "MPI_ERR_SESSION: invalid session";
    case MPI_ERR_KEYVAL: return "MPI_ERR_KEYVAL: invalid key value";
    case MPI_ERR_SIZE: return "MPI_ERR_SIZE: invalid size";
    case MPI_ERR_DISP: return "MPI_ERR_DISP: invalid displacement";
    case MPI_ERR_PROC_ABORTED: return "MPI_ERR_PROC_ABORTED: a process aborted";
    case MPI_ERR_VALUE_TOO_LARGE: return "MPI_ERR_VALUE_TOO_LARGE: value too large for its output";
    case MPI_ERR_UNSUPPORTED_OPERATION: return "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported";
    case MPI_ERR_ERRHANDLER: return "MPI_ERR_ERRHANDLER: invalid error handler";
    default: return nullptr;
  }
}

// User classes and codes: entry k is the value kUserBase + k.
constexpr int kUserBase = MPI_ERR_LASTCODE + 1;
struct UserError {
  int cls;  // its own value for a class
  bool removed = false;
  std::string text;
  bool hasText = false;  // MPI_Add_error_string gave it one (and MPI_Remove_error_string did not take it)
};
std::vector<UserError> gUser;  // under gMu
int gLastUsed = MPI_ERR_LASTCODE;

UserError* userError(int code) {
  if (code < kUserBase || code - kUserBase >= static_cast<int>(gUser.size())) return nullptr;
  UserError* u = &gUser[code - kUserBase];
  return u->removed ? nullptr : u;
}

int makeCode(int cls, const char* fn, const char* reason) {
  if (cls >= kUserBase) return cls;  // a user class carries no message of ours
  std::lock_guard<std::mutex> lock(gMu);
  gSerial = (gSerial % 0xfffff) + 1;
  int code = cls | (gSerial << 8);
  Entry& e = gRing[gSerial % kRing];
  e.code = code;
  const char* cname = className(cls);
  if (reason && *reason)
    snprintf(e.text, sizeof e.text, "%s: %s (%s)", fn, reason, cname ? cname : "unknown error class");
  else
    snprintf(e.text, sizeof e.text, "%s: %s", fn, cname ? cname : "unknown error class");
  return code;
}

bool lookupText(int code, char* out) {
  std::lock_guard<std::mutex> lock(gMu);
  int serial = code >> 8;
  if (serial <= 0) return false;
  const Entry& e = gRing[serial % kRing];
  if (e.code != code) return false;
  memcpy(out, e.text, sizeof e.text);
  return true;
}

}  // namespace

bool active() { return rt::ctx().initialized && !rt::ctx().finalized; }

// Who this process is, for messages: "rank 3"; before MPI_Init, the rank
// shmrun gave it ("rank 3 (before MPI_Init)"), or its pid outside shmrun.
std::string whoAmI() {
  const rt::Context& c = rt::ctx();
  if (c.initialized) return "rank " + std::to_string(c.eng.rank);
  if (const char* r = settings::raw(settings::Id::kRank); r && *r && settings::check(settings::Id::kRank, r).empty())
    return std::string("rank ") + r + " (before MPI_Init)";
  return "process " + std::to_string(getpid()) + " (before MPI_Init)";
}

int errorClassOf(int code) {
  if (code >= kUserBase) {
    std::lock_guard<std::mutex> lock(gMu);
    const UserError* u = userError(code);
    return u ? u->cls : MPI_ERR_UNKNOWN;
  }
  return code < 0 ? MPI_ERR_UNKNOWN : (code & 0xff);
}

bool validErrorCode(int code) {
  if (code >= kUserBase) {
    std::lock_guard<std::mutex> lock(gMu);
    return userError(code) != nullptr;
  }
  return code >= 0 && (code & 0xff) <= MPI_ERR_ERRHANDLER && className(code & 0xff) != nullptr;
}

int& lastUsedErrorCode() { return gLastUsed; }

// The text MPI_Error_string gives for `code`; false when it is no code.
bool textOf(int code, char* out) {
  if (code >= kUserBase) {
    std::lock_guard<std::mutex> lock(gMu);
    const UserError* u = userError(code);
    if (!u) return false;
    snprintf(out, MPI_MAX_ERROR_STRING, "%s", u->text.c_str());
    return true;
  }
  if (lookupText(code, out)) return true;
  const char* n = code < 0 ? nullptr : className(errorClassOf(code));
  if (!n) return false;
  snprintf(out, MPI_MAX_ERROR_STRING, "%s", n);
  return true;
}

int dispatchTo(MPI_Errhandler h, int handle, const char* what, int code) {
  if (h == MPI_ERRORS_RETURN) return code;
  if (rt::Errhandler* e = rt::userErrhandler(h)) {
    int object = handle;  // an MPI_Comm or an MPI_Session: both are ints
    int ec = code;
    e->fn(&object, &ec);
    return code;
  }
  char text[MPI_MAX_ERROR_STRING];
  if (!textOf(code, text)) snprintf(text, sizeof text, "error code %d, which is no MPI error code", code);
  if (!text[0]) snprintf(text, sizeof text, "user error code %d (class %d)", code, errorClassOf(code));
  const std::string who = whoAmI();
  fprintf(stderr, "shmcoll: %s: %s\nshmcoll: %s: %s on %s: ending the job\n", who.c_str(), text, who.c_str(),
          h == MPI_ERRORS_ABORT ? "MPI_ERRORS_ABORT" : "MPI_ERRORS_ARE_FATAL", what);
  rt::abortJob(errorClassOf(code), segment::kAbortFatal);
}

int dispatch(MPI_Comm comm, int code) {
  rt::Comm* c = rt::comm(comm);
  MPI_Errhandler h = c ? c->errhandler : MPI_ERRORS_ARE_FATAL;
  if (!c && rt::comm(MPI_COMM_WORLD) && active()) h = rt::comm(MPI_COMM_WORLD)->errhandler;
  return dispatchTo(h, comm, c ? c->name.empty() ? "a communicator" : c->name.c_str() : "an invalid communicator",
                    code);
}

int dispatchWin(MPI_Win win, int code) {
  rt::Win* w = rt::win(win);
  if (!w) return dispatch(kNoComm, code);
  if (w->errhandler == MPI_ERRORS_RETURN) return code;
  if (rt::Errhandler* e = rt::userErrhandler(w->errhandler)) {
    MPI_Win ww = win;
    int ec = code;
    reinterpret_cast<MPI_Win_errhandler_function*>(e->fn)(&ww, &ec);
    return code;
  }
  if (w->errhandler == MPI_ERRORS_ARE_FATAL || rt::comm(MPI_COMM_WORLD) == nullptr) {
    char text[MPI_MAX_ERROR_STRING];
    if (!lookupText(code, text)) snprintf(text, sizeof text, "%s", className(errorClassOf(code)));
    const std::string who = whoAmI();
    fprintf(stderr, "shmcoll: %s: %s\nshmcoll: %s: MPI_ERRORS_ARE_FATAL on %s: ending the job\n", who.c_str(), text,
            who.c_str(), w->name.empty() ? "a window" : w->name.c_str());
    rt::abortJob(errorClassOf(code), segment::kAbortFatal);
  }
  return dispatch(kNoComm, code);  // (MPI_ERRORS_ABORT and the like: as on MPI_COMM_WORLD)
}

int vraisefWin(MPI_Win win, const char* fn, int cls, const char* fmt, va_list ap) {
  char buf[400];
  vsnprintf(buf, sizeof buf, fmt, ap);
  return dispatchWin(win, makeCode(cls, fn, buf));
}

int makeErrorCode(int cls, const char* fn, const char* fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return makeCode(cls, fn, buf);
}

int raise(MPI_Comm comm, const char* fn, int cls) {
  int code = makeCode(cls, fn, lastReason().c_str());
  clearReason();
  return dispatch(comm, code);
}

int vraisef(MPI_Comm comm, const char* fn, int cls, const char* fmt, va_list ap) {
  char buf[400];
  vsnprintf(buf, sizeof buf, fmt, ap);
  return dispatch(comm, makeCode(cls, fn, buf));
}

int raisef(MPI_Comm comm, const char* fn, int cls, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int code = vraisef(comm, fn, cls, fmt, ap);
  va_end(ap);
  return code;
}

}  // namespace shmcoll::api

namespace shmcoll::api::impl {

int errorClass(Call& call, int errorcode, int* errorclass) {
  if (!validErrorCode(errorcode))
    return check::fail(call, MPI_ERR_ARG, "errorcode = %d is not an error code", errorcode);
  *errorclass = errorClassOf(errorcode);
  return MPI_SUCCESS;
}

int errorString(Call& call, int errorcode, char* string, int* resultlen) {
  char text[MPI_MAX_ERROR_STRING];
  if (!textOf(errorcode, text)) return check::fail(call, MPI_ERR_ARG, "errorcode = %d is not an error code", errorcode);
  size_t len = strnlen(text, MPI_MAX_ERROR_STRING - 1);
  memcpy(string, text, len);
  string[len] = '\0';
  *resultlen = static_cast<int>(len);
  return MPI_SUCCESS;
}

// ---- user error classes, codes and strings ----------------------------------------

int addErrorClass(Call&, int* errorclass) {
  std::lock_guard<std::mutex> lock(gMu);
  const int v = kUserBase + static_cast<int>(gUser.size());
  gUser.push_back(UserError{v, false, {}});
  gLastUsed = v;
  *errorclass = v;
  return MPI_SUCCESS;
}

int addErrorCode(Call& call, int errorclass, int* errorcode) {
  bool ok;
  {
    std::lock_guard<std::mutex> lock(gMu);
    const UserError* u = userError(errorclass);
    ok = errorclass >= kUserBase ? u && u->cls == errorclass
                                 : errorclass > 0 && errorclass <= MPI_ERR_ERRHANDLER && className(errorclass);
    if (ok) {
      const int v = kUserBase + static_cast<int>(gUser.size());
      gUser.push_back(UserError{errorclass, false, {}});
      gLastUsed = v;
      *errorcode = v;
    }
  }
  if (!ok)
    return check::fail(call, MPI_ERR_ARG,
                       "errorclass = %d is not an error class (predefined, or added by "
                       "MPI_Add_error_class)",
                       errorclass);
  return MPI_SUCCESS;
}

int addErrorString(Call& call, int errorcode, const char* string) {
  const size_t len = strnlen(string, MPI_MAX_ERROR_STRING);
  if (len >= MPI_MAX_ERROR_STRING)
    return check::fail(call, MPI_ERR_ARG, "string is longer than MPI_MAX_ERROR_STRING - 1 = %d characters",
                       MPI_MAX_ERROR_STRING - 1);
  if (errorcode < kUserBase)
    return check::fail(call, MPI_ERR_ARG,
                       "errorcode = %d is not a class or code added by MPI_Add_error_class or "
                       "MPI_Add_error_code (a predefined one's string cannot change)",
                       errorcode);
  {
    std::lock_guard<std::mutex> lock(gMu);
    if (UserError* u = userError(errorcode)) {
      u->text.assign(string, len);
      u->hasText = true;
      return MPI_SUCCESS;
    }
  }
  return check::fail(call, MPI_ERR_ARG,
                     "errorcode = %d is not a class or code added by MPI_Add_error_class or "
                     "MPI_Add_error_code",
                     errorcode);
}

// MPI-4.1's removals take back only what was added and is no longer needed:
// a class none of whose codes is left, a code whose string was removed, a
// string that was added.  The values are not handed out again.
namespace {
enum class Removal { kClass, kCode, kString };

int removeUser(Call& call, Removal what, int value) {
  const char* arg = what == Removal::kClass ? "errorclass" : "errorcode";
  if (value < kUserBase)
    return check::fail(call, MPI_ERR_ARG, "%s = %d is predefined (at most MPI_ERR_LASTCODE = %d): only what "
                       "MPI_Add_error_class, MPI_Add_error_code and MPI_Add_error_string added can be removed",
                       arg, value, MPI_ERR_LASTCODE);
  std::string why;
  {
    std::lock_guard<std::mutex> lock(gMu);
    UserError* u = userError(value);
    const bool isClass = u && u->cls == value;
    if (!u) {
      why = "was not added (or was removed already)";
    } else if (what == Removal::kClass && !isClass) {
      why = "is an error code, not a class (MPI_Remove_error_code removes codes)";
    } else if (what == Removal::kCode && isClass) {
      why = "is an error class, not a code (MPI_Remove_error_class removes classes)";
    } else if (what == Removal::kString && !u->hasText) {
      why = "has no string added by MPI_Add_error_string";
    } else if (what == Removal::kCode && u->hasText) {
      why = "still has its string: remove it first (MPI_Remove_error_string)";
    } else if (what == Removal::kClass) {
      for (size_t k = 0; k < gUser.size() && why.empty(); ++k)
        if (!gUser[k].removed && gUser[k].cls == value && kUserBase + static_cast<int>(k) != value)
          why = "still has error code " + std::to_string(kUserBase + static_cast<int>(k)) +
                ": remove its codes first (MPI_Remove_error_code)";
    }
    if (why.empty()) {
      if (what == Removal::kString) {
        u->text.clear();
        u->hasText = false;
      } else {
        u->removed = true;
      }
      return MPI_SUCCESS;
    }
  }
  return check::fail(call, MPI_ERR_ARG, "%s = %d %s", arg, value, why.c_str());
}
}  // namespace

int removeErrorClass(Call& call, int errorclass) { return removeUser(call, Removal::kClass, errorclass); }
int removeErrorCode(Call& call, int errorcode) { return removeUser(call, Removal::kCode, errorcode); }
int removeErrorString(Call& call, int errorcode) { return removeUser(call, Removal::kString, errorcode); }

int commSetErrhandler(Call& call, rt::Comm* c, MPI_Errhandler errhandler) {
  if (!rt::validErrhandler(errhandler))
    return check::fail(call, MPI_ERR_ARG, "errhandler = %#x is not a valid error handler",
                       static_cast<unsigned>(errhandler));
  if (rt::Errhandler* e = rt::userErrhandler(errhandler)) ++e->refs;
  rt::releaseErrhandler(c->errhandler);
  c->errhandler = errhandler;
  return MPI_SUCCESS;
}

int commGetErrhandler(Call&, rt::Comm* c, MPI_Errhandler* errhandler) {
  if (rt::Errhandler* e = rt::userErrhandler(c->errhandler)) ++e->refs;
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}

int commCreateErrhandler(Call&, MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler) {
  *errhandler = rt::newErrhandler(function);
  return MPI_SUCCESS;
}

int commCallErrhandler(Call&, rt::Comm* c, int errorcode) {
  dispatch(c->handle, errorcode);
  return MPI_SUCCESS;
}

int winSetErrhandler(Call& call, rt::Win* w, MPI_Errhandler errhandler) {
  if (!rt::validErrhandler(errhandler))
    return check::fail(call, MPI_ERR_ARG, "errhandler = %#x is not a valid error handler",
                       static_cast<unsigned>(errhandler));
  if (rt::Errhandler* e = rt::userErrhandler(errhandler)) ++e->refs;
  rt::releaseErrhandler(w->errhandler);
  w->errhandler = errhandler;
  return MPI_SUCCESS;
}

int winGetErrhandler(Call&, rt::Win* w, MPI_Errhandler* errhandler) {
  if (rt::Errhandler* e = rt::userErrhandler(w->errhandler)) ++e->refs;
  *errhandler = w->errhandler;
  return MPI_SUCCESS;
}

// (Window and communicator handlers share the table: both handle types are int.)
int winCreateErrhandler(Call&, MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler) {
  *errhandler = rt::newErrhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(function));
  return MPI_SUCCESS;
}

int winCallErrhandler(Call&, rt::Win* w, int errorcode) {
  dispatchWin(w->handle, errorcode);
  return MPI_SUCCESS;
}

int errhandlerFree(Call& call, MPI_Errhandler* errhandler) {
  if (!rt::validErrhandler(*errhandler))
    return check::fail(call, MPI_ERR_ARG, "*errhandler = %#x is not a valid error handler",
                       static_cast<unsigned>(*errhandler));
  rt::releaseErrhandler(*errhandler);
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_errors.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/errors.txt)
