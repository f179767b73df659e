// The failing halves of the argument checks (api/check.h), and the checks
// that are never on a hot path.  Each message names the argument and says
// what is wrong with it; MPI_Error_string adds the function and the class.
#include "api/check.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <string>

#include "op/op.h"
#include "runtime/win.h"

namespace shmcoll::api::check {

int fail(const Call& call, int cls, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int code = call.win != MPI_WIN_NULL ? vraisefWin(call.win, call.fn, cls, fmt, ap)
                                            : vraisef(call.comm, call.fn, cls, fmt, ap);
  va_end(ap);
  return code;
}

int engine(const Call& call, int rc) {
  if (call.win == MPI_WIN_NULL) return raise(call.comm, call.fn, rc);
  const std::string why = lastReason();
  clearReason();
  return fail(call, rc, "%s", why.c_str());
}

namespace cold {

int badWin(const Call& call, const char* arg, MPI_Win h) {
  return raisef(kNoComm, call.fn, MPI_ERR_WIN, "%s = %#x is %s", arg, static_cast<unsigned>(h),
                h == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not a valid window (never created, or freed)");
}

int notInitialized(const Call& call) {
  return raisef(kNoComm, call.fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
}

// (Raised on the handle itself: its error handler if it names anything, else MPI_COMM_WORLD's.)
int badComm(const Call& call, const char* arg, MPI_Comm h) {
  return raisef(h, call.fn, MPI_ERR_COMM, "%s = %#x is not a valid communicator%s", arg, static_cast<unsigned>(h),
                rt::commNote(h));
}

int isNull(const Call& call, const char* arg) { return fail(call, MPI_ERR_ARG, "%s is NULL", arg); }

int negative(const Call& call, int cls, const char* arg, int64_t n) {
  return fail(call, cls, "%s = %" PRId64 " is negative", arg, n);
}

int negativeAt(const Call& call, const char* arg, uint32_t i, int64_t n) {
  return fail(call, MPI_ERR_COUNT, "%s[%u] = %" PRId64 " is negative", arg, i, n);
}

int badType(const Call& call, const char* arg, MPI_Datatype h, const dt::Type* t) {
  if (t) return fail(call, MPI_ERR_TYPE, "%s is a derived datatype that was not committed (MPI_Type_commit)", arg);
  return fail(call, MPI_ERR_TYPE, "%s = %#x is %s", arg, static_cast<unsigned>(h),
              h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype");
}

int badTypeAt(const Call& call, const char* array, uint64_t i, MPI_Datatype h, const dt::Type* t) {
  char arg[64];
  snprintf(arg, sizeof arg, "%s[%" PRIu64 "]", array, i);
  return badType(call, arg, h, t);
}

int nullBuffer(const Call& call, const char* arg, uint64_t count) {
  return fail(call, MPI_ERR_BUFFER, "%s is NULL but %" PRIu64 " elements are to be moved", arg, count);
}

int inPlace(const Call& call, const char* arg, const char* why) {
  return fail(call, MPI_ERR_BUFFER, "%s = MPI_IN_PLACE %s", arg, why);
}

int badPeer(const Call& call, const rt::Comm* c, const char* arg, int rank, bool any) {
  // (On an intercommunicator, ranks name members of the remote group.)
  return fail(call, MPI_ERR_RANK, "%s = %d is not a rank of the %s (size %u)%s nor MPI_PROC_NULL", arg, rank,
              c->inter ? "remote group" : "communicator", rt::peerCount(*c), any ? ", MPI_ANY_SOURCE" : "");
}

int badTag(const Call& call, const char* arg, int tag, bool any) {
  if (any) return fail(call, MPI_ERR_TAG, "%s = %d is neither MPI_ANY_TAG nor in 0 .. MPI_TAG_UB", arg, tag);
  return fail(call, MPI_ERR_TAG, "%s = %d is negative (tags are 0 .. MPI_TAG_UB)", arg, tag);
}

}  // namespace cold

int intracomm(const Call& call, const char* arg, const rt::Comm* c) {
  if (!c->inter) return MPI_SUCCESS;
  return fail(call, MPI_ERR_COMM, "%s is an intercommunicator; %s works on intracommunicators only", arg, call.fn);
}

int intercomm(const Call& call, const char* arg, const rt::Comm* c) {
  if (c->inter) return MPI_SUCCESS;
  return fail(call, MPI_ERR_COMM, "%s is an intracommunicator; %s needs an intercommunicator", arg, call.fn);
}

int op(const Call& call, MPI_Op op, const dt::Type* t) {
  // (A live handle names its type: t->handle is the handle the caller passed.)
  if (int rc = op::check(op, t)) return engine(call, rc);
  if (call.record) hold(call, op);
  return MPI_SUCCESS;
}

int group(const Call& call, const char* arg, MPI_Group h, rt::Group** out) {
  *out = rt::group(h);
  if (*out) return MPI_SUCCESS;
  return fail(call, MPI_ERR_GROUP, "%s = %#x is not a valid group", arg, static_cast<unsigned>(h));
}

int info(const Call& call, const char* arg, MPI_Info h, rt::Info** out) {
  *out = rt::info(h);
  if (*out) return MPI_SUCCESS;
  return fail(call, MPI_ERR_INFO, "%s = %#x is %s", arg, static_cast<unsigned>(h),
              h == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not a valid info object (never created, or freed)");
}

int infoOrNull(const Call& call, const char* arg, MPI_Info h, rt::Info** out) {
  *out = nullptr;
  return h == MPI_INFO_NULL ? MPI_SUCCESS : info(call, arg, h, out);
}

int writable(const Call& call, const char* arg, MPI_Info h) {
  if (h != MPI_INFO_ENV) return MPI_SUCCESS;
  return fail(call, MPI_ERR_INFO, "%s = MPI_INFO_ENV is read-only", arg);
}

int root(const Call& call, const rt::Comm* c, int root) {
  const uint32_t n = rt::peerCount(*c);  // (the remote group of an intercommunicator)
  const bool rank = root >= 0 && static_cast<uint32_t>(root) < n;
  if (!c->inter) {
    if (rank) return MPI_SUCCESS;
    return fail(call, MPI_ERR_ROOT, "root = %d is not a rank of the communicator (size %u)", root, n);
  }
  if (rank || root == MPI_ROOT || root == MPI_PROC_NULL) return MPI_SUCCESS;
  return fail(call, MPI_ERR_ROOT,
              "root = %d is neither MPI_ROOT, MPI_PROC_NULL nor a rank of the remote group (size %u) of the "
              "intercommunicator",
              root, n);
}

}  // namespace shmcoll::api::check
