// The argument checks of the MPI entry points: one vocabulary for the
// generated entry points (which call the checks an argument's kind asks for,
// src/api/desc/README.md) and for the hand-written implementations (which
// check what needs more than one argument: buffers against their counts and
// datatypes, arrays as long as the communicator, MPI_IN_PLACE rules,
// arguments significant at the root only).
//
// Every check returns MPI_SUCCESS or an error code already raised on the
// call (MPI_Error_string reads "<MPI function>: <argument> = ... <why>", and
// the communicator's error handler has seen it), to be returned at once:
//
//   SHMCOLL_CHECK(check::count(call, "sendcount", sendcount));
//
// A condition only one function has is written in place with check::fail.
// The passing path of each check is inline and costs a compare or a handle
// look-up; the failing path is out of line and cold (check.cc).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/api.h"
#include "api/call.h"
#include "common/status.h"  // SHMCOLL_CHECK
#include "dt/datatype.h"
#include "runtime/comm.h"
#include "runtime/info.h"
#include "runtime/types.h"
#include "runtime/win.h"

namespace shmcoll::api::check {

// ---- failing --------------------------------------------------------------------

// Raises error class `cls` with the reason `fmt` on the call; returns the code.
[[gnu::cold, gnu::format(printf, 3, 4)]] int fail(const Call& call, int cls, const char* fmt, ...);
// Raises `rc`, an engine failure whose reason the engine recorded (shmcoll::fail).
[[gnu::cold]] int engine(const Call& call, int rc);

// The cold halves of the checks below.
namespace cold {
[[gnu::cold]] int notInitialized(const Call& call);
[[gnu::cold]] int badComm(const Call& call, const char* arg, MPI_Comm h);
[[gnu::cold]] int badWin(const Call& call, const char* arg, MPI_Win h);
[[gnu::cold]] int isNull(const Call& call, const char* arg);
[[gnu::cold]] int negative(const Call& call, int cls, const char* arg, int64_t n);
[[gnu::cold]] int negativeAt(const Call& call, const char* arg, uint32_t i, int64_t n);
[[gnu::cold]] int badType(const Call& call, const char* arg, MPI_Datatype h, const dt::Type* t);
[[gnu::cold]] int badTypeAt(const Call& call, const char* array, uint64_t i, MPI_Datatype h, const dt::Type* t);
[[gnu::cold]] int nullBuffer(const Call& call, const char* arg, uint64_t count);
[[gnu::cold]] int inPlace(const Call& call, const char* arg, const char* why);
[[gnu::cold]] int badPeer(const Call& call, const rt::Comm* c, const char* arg, int rank, bool any);
[[gnu::cold]] int badTag(const Call& call, const char* arg, int tag, bool any);
}  // namespace cold

// Persistent collectives: `t` and `op` stay held by the request the call makes
// (coll_persistent.cc), so MPI_Type_free and MPI_Op_free may come first.
void hold(const Call& call, const dt::Type* t);
void hold(const Call& call, MPI_Op op);

// ---- MPI's state and handles ------------------------------------------------------

// The call comes between MPI_Init and MPI_Finalize (MPI_ERR_OTHER otherwise).
inline int initialized(const Call& call) { return active() ? MPI_SUCCESS : cold::notInitialized(call); }

// `h` names a communicator (MPI_ERR_COMM), and MPI is initialized.
inline int comm(const Call& call, const char* arg, MPI_Comm h, rt::Comm** out) {
  if (!active()) [[unlikely]]
    return cold::notInitialized(call);
  *out = rt::comm(h);
  return *out ? MPI_SUCCESS : cold::badComm(call, arg, h);
}
// The same without the MPI_Init condition (the error handler functions).
inline int anyComm(const Call& call, const char* arg, MPI_Comm h, rt::Comm** out) {
  *out = rt::comm(h);
  return *out ? MPI_SUCCESS : cold::badComm(call, arg, h);
}
// A communicator that only names where errors go (MPI_Pack and its kin, which
// work before MPI_Init too): checked once MPI is initialized.
inline int commIfInitialized(const Call& call, const char* arg, MPI_Comm h) {
  return !active() || rt::comm(h) ? MPI_SUCCESS : cold::badComm(call, arg, h);
}
// An intracommunicator, or an intercommunicator (MPI_ERR_COMM).
int intracomm(const Call& call, const char* arg, const rt::Comm* c);
int intercomm(const Call& call, const char* arg, const rt::Comm* c);

// A valid datatype, committed or not (the datatype functions).
inline int type(const Call& call, const char* arg, MPI_Datatype h, const dt::Type** out) {
  *out = rt::type(h);
  return *out ? MPI_SUCCESS : cold::badType(call, arg, h, nullptr);
}
// A datatype data moves in: valid and committed.  A persistent collective
// holds it.
inline int datatype(const Call& call, const char* arg, MPI_Datatype h, const dt::Type** out) {
  const dt::Type* t = rt::type(h);
  if (!t || !t->committed) [[unlikely]]
    return cold::badType(call, arg, h, t);
  if (call.record) [[unlikely]]
    hold(call, t);
  *out = t;
  return MPI_SUCCESS;
}
// The same for element i of the datatype array `array` ("recvtypes").
inline int datatypeAt(const Call& call, const char* array, uint64_t i, MPI_Datatype h, const dt::Type** out) {
  const dt::Type* t = rt::type(h);
  if (!t || !t->committed) [[unlikely]]
    return cold::badTypeAt(call, array, i, h, t);
  if (call.record) [[unlikely]]
    hold(call, t);
  *out = t;
  return MPI_SUCCESS;
}
// A valid datatype element i of `array` (MPI_Type_create_struct), committed or not.
inline int typeAt(const Call& call, const char* array, uint64_t i, MPI_Datatype h, const dt::Type** out) {
  *out = rt::type(h);
  return *out ? MPI_SUCCESS : cold::badTypeAt(call, array, i, h, nullptr);
}

// A reduction operation defined on `t` (MPI_ERR_OP).  A persistent collective holds it.
int op(const Call& call, MPI_Op op, const dt::Type* t);

// A valid window (MPI_ERR_WIN), and MPI is initialized.
// (The window of the last look-up, rt::gLastWin, exists only while MPI is
// active: MPI_Finalize clears it.  Otherwise the slow look-up asks.)
inline int win(const Call& call, const char* arg, MPI_Win h, rt::Win** out) {
  rt::Win* w = rt::gLastWin;
  if (w && w->handle == h) [[likely]] {
    *out = w;
    return MPI_SUCCESS;
  }
  if (!active()) [[unlikely]]
    return cold::notInitialized(call);
  *out = rt::findWin(h);
  return *out ? MPI_SUCCESS : cold::badWin(call, arg, h);
}

// A valid group (MPI_ERR_GROUP).
int group(const Call& call, const char* arg, MPI_Group h, rt::Group** out);
// A valid info object (MPI_ERR_INFO); MPI_INFO_NULL is one only for infoOrNull (*out = nullptr).
int info(const Call& call, const char* arg, MPI_Info h, rt::Info** out);
int infoOrNull(const Call& call, const char* arg, MPI_Info h, rt::Info** out);
// An info object the user may change: not MPI_INFO_ENV (MPI_ERR_INFO).
int writable(const Call& call, const char* arg, MPI_Info h);

// ---- values ---------------------------------------------------------------------------

// A pointer the function reads or writes through, or calls (MPI_ERR_ARG).
template <class T>
int notNull(const Call& call, const char* arg, T* p) {
  return p ? MPI_SUCCESS : cold::isNull(call, arg);
}
// A count: not negative (MPI_ERR_COUNT).
inline int count(const Call& call, const char* arg, int64_t n) {
  return n >= 0 ? MPI_SUCCESS : cold::negative(call, MPI_ERR_COUNT, arg, n);
}
// A length that is not a count in the standard's sense (a block length, a
// buffer size): not negative (MPI_ERR_ARG, as Open MPI and MPICH report it).
inline int length(const Call& call, const char* arg, int64_t n) {
  return n >= 0 ? MPI_SUCCESS : cold::negative(call, MPI_ERR_ARG, arg, n);
}
// An array of `n` counts: not NULL (MPI_ERR_ARG), none negative (MPI_ERR_COUNT).
template <class C>
int counts(const Call& call, const char* arg, const C* v, uint32_t n) {
  if (!v) [[unlikely]]
    return cold::isNull(call, arg);
  for (uint32_t i = 0; i < n; ++i)
    if (v[i] < 0) [[unlikely]]
      return cold::negativeAt(call, arg, i, static_cast<int64_t>(v[i]));
  return MPI_SUCCESS;
}

// A buffer of `count` elements of `t`: NULL is an error when data moves
// (MPI_ERR_BUFFER), not with MPI_BOTTOM and a type of absolute addresses
// (true lower bound not 0); so is MPI_IN_PLACE, which the collectives that
// allow it handle before they check a buffer (a send, a receive, ...).
inline int buffer(const Call& call, const char* arg, const void* buf, uint64_t count, const dt::Type* t) {
  if ((!buf || buf == MPI_IN_PLACE) && count > 0 && t->size > 0) [[unlikely]] {
    if (buf == MPI_IN_PLACE) return cold::inPlace(call, arg, "is not allowed here");
    if (t->trueLb == 0) return cold::nullBuffer(call, arg, count);
  }
  return MPI_SUCCESS;
}
// A buffer that may not be MPI_IN_PLACE (MPI_ERR_BUFFER): here, as a receive
// buffer (only sendbuf may be), or on an intercommunicator.
inline int notInPlace(const Call& call, const char* arg, const void* buf) {
  return buf != MPI_IN_PLACE ? MPI_SUCCESS : cold::inPlace(call, arg, "is not allowed here");
}
inline int recvNotInPlace(const Call& call, const char* arg, const void* buf) {
  return buf != MPI_IN_PLACE ? MPI_SUCCESS : cold::inPlace(call, arg, "is not allowed (only sendbuf may be)");
}
inline int interNotInPlace(const Call& call, const char* arg, const void* buf) {
  return buf != MPI_IN_PLACE ? MPI_SUCCESS : cold::inPlace(call, arg, "is not allowed on an intercommunicator");
}

// ---- ranks and tags -------------------------------------------------------------------

// A collective's root: a rank of the communicator; on an intercommunicator
// MPI_ROOT, MPI_PROC_NULL or a rank of the remote group (MPI_ERR_ROOT).
int root(const Call& call, const rt::Comm* c, int root);
// A point-to-point peer: a rank of the communicator (the remote group of an
// intercommunicator) or MPI_PROC_NULL; a source may be MPI_ANY_SOURCE too (MPI_ERR_RANK).
inline int dest(const Call& call, const rt::Comm* c, const char* arg, int dest) {
  if (dest == MPI_PROC_NULL || (dest >= 0 && static_cast<uint32_t>(dest) < rt::peerCount(*c))) return MPI_SUCCESS;
  return cold::badPeer(call, c, arg, dest, false);
}
inline int source(const Call& call, const rt::Comm* c, const char* arg, int source) {
  if (source == MPI_PROC_NULL || source == MPI_ANY_SOURCE ||
      (source >= 0 && static_cast<uint32_t>(source) < rt::peerCount(*c)))
    return MPI_SUCCESS;
  return cold::badPeer(call, c, arg, source, true);
}
// A tag a message carries: 0 .. MPI_TAG_UB; one a receive matches may be
// MPI_ANY_TAG (MPI_ERR_TAG).
inline int tag(const Call& call, const char* arg, int tag) {
  return tag >= 0 ? MPI_SUCCESS : cold::badTag(call, arg, tag, false);
}
inline int anyTag(const Call& call, const char* arg, int tag) {
  return tag >= 0 || tag == MPI_ANY_TAG ? MPI_SUCCESS : cold::badTag(call, arg, tag, true);
}

}  // namespace shmcoll::api::check
