// Attribute caching (keyvals, attributes on communicators and datatypes,
// predefined attributes, the predefined callbacks, the deprecated MPI-1
// forms) and communicator names.
//
// The keyval checks live here (the generated entry points check the other
// arguments); runtime/attr.cc keeps the keyvals and lists and runs the
// callbacks.  A callback's nonzero return becomes the entry point's
// error: a bare error class is raised as that class with a message naming
// the callback and keyval; an MPI error code is handed to the error handler
// and returned unchanged; anything else is raised as MPI_ERR_OTHER.
//
// Predefined attributes (read-only, MPI_ERR_KEYVAL on set/delete/free) are
// answered for every communicator, as MPICH does, with a pointer to an int:
//   MPI_TAG_UB          INT_MAX: the point-to-point layer accepts tags 0..INT_MAX
//   MPI_HOST            MPI_PROC_NULL: there is no host process
//   MPI_IO              MPI_ANY_SOURCE: every rank inherits shmrun's standard
//                       streams and can do C I/O
//   MPI_WTIME_IS_GLOBAL 1: MPI_Wtime reads CLOCK_MONOTONIC, one clock for all
//                       processes of the node, and a job never spans nodes
//   MPI_UNIVERSE_SIZE   the job size: shmrun cannot add processes later
//   MPI_APPNUM          0: one program per job
//   MPI_LASTUSEDCODE    the largest user error class or code (MPI_ERR_LASTCODE before any)
#include <climits>
#include <cstring>
#include <vector>

#include "runtime/types.h"
#include "api/attr.h"
#include "api/check.h"
#include "api/request.h"
#include "coll/coll.h"
#include "dt/datatype.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/idup.h"
#include "runtime/win.h"

namespace shmcoll::api {

using rt::AttrKind;

namespace {

// ---- predefined attributes ----------------------------------------------------

const char* predefinedName(int key) {
  switch (key) {
    case MPI_TAG_UB: return "MPI_TAG_UB";
    case MPI_HOST: return "MPI_HOST";
    case MPI_IO: return "MPI_IO";
    case MPI_WTIME_IS_GLOBAL: return "MPI_WTIME_IS_GLOBAL";
    case MPI_UNIVERSE_SIZE: return "MPI_UNIVERSE_SIZE";
    case MPI_APPNUM: return "MPI_APPNUM";
    case MPI_LASTUSEDCODE: return "MPI_LASTUSEDCODE";
    default: return nullptr;
  }
}

// The value of a predefined key; the C binding hands out its address, so
// each lives in static storage for the whole run.
int* predefinedValue(int key) {
  static int tagUb = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtimeIsGlobal = 1, appnum = 0;
  switch (key) {
    case MPI_TAG_UB: return &tagUb;
    case MPI_HOST: return &host;
    case MPI_IO: return &io;
    case MPI_WTIME_IS_GLOBAL: return &wtimeIsGlobal;
    case MPI_UNIVERSE_SIZE: {
      // (Set at the first query, which comes after MPI_Init: the job's size never changes.)
      static int universe = static_cast<int>(rt::ctx().eng.size);
      return &universe;
    }
    case MPI_APPNUM: return &appnum;
    case MPI_LASTUSEDCODE: return &api::lastUsedErrorCode();
    default: return nullptr;
  }
}

const char* kindName(AttrKind k) {
  return k == AttrKind::kComm ? "communicators" : k == AttrKind::kType ? "datatypes" : "windows";
}

// The predefined window attributes (read-only): MPI_WIN_BASE is the base
// address itself, the others point to the window's own fields.
const char* winPredefinedName(int key) {
  switch (key) {
    case MPI_WIN_BASE: return "MPI_WIN_BASE";
    case MPI_WIN_SIZE: return "MPI_WIN_SIZE";
    case MPI_WIN_DISP_UNIT: return "MPI_WIN_DISP_UNIT";
    case MPI_WIN_CREATE_FLAVOR: return "MPI_WIN_CREATE_FLAVOR";
    case MPI_WIN_MODEL: return "MPI_WIN_MODEL";
    default: return nullptr;
  }
}

void* winPredefinedValue(rt::Win* w, int key) {
  switch (key) {
    case MPI_WIN_BASE: return w->base;
    case MPI_WIN_SIZE: return &w->size;
    case MPI_WIN_DISP_UNIT: return &w->dispUnit;
    case MPI_WIN_CREATE_FLAVOR: return &w->flavor;
    default: return &w->model;
  }
}

// Checks keyval argument `arg` = kv for an attribute call on objects of
// `kind`.  `allowFreed`: a keyval the user freed but that attributes still
// hold may still be read and deleted, not set.
int checkKeyval(const Call& call, const char* arg, int kv, AttrKind kind, bool allowFreed) {
  if (kv == MPI_KEYVAL_INVALID) return check::fail(call, MPI_ERR_KEYVAL, "%s = MPI_KEYVAL_INVALID", arg);
  if (const char* p = predefinedName(kv))
    return check::fail(call, MPI_ERR_KEYVAL, "%s = %s is a predefined communicator attribute key%s", arg, p,
                       kind == AttrKind::kComm ? " and read-only" : "");
  if (const char* p = winPredefinedName(kv))
    return check::fail(call, MPI_ERR_KEYVAL, "%s = %s is a predefined window attribute key%s", arg, p,
                       kind == AttrKind::kWin ? " and read-only" : "");
  rt::Keyval* k = rt::keyval(kv);
  if (!k)
    return check::fail(call, MPI_ERR_KEYVAL, "%s = %#x is not a valid keyval (never created, or freed)", arg,
                       static_cast<unsigned>(kv));
  if (k->kind != kind)
    return check::fail(call, MPI_ERR_KEYVAL, "%s = %#x was created for %s, not %s", arg, static_cast<unsigned>(kv),
                       kindName(k->kind), kindName(kind));
  if (!allowFreed && k->freed)
    return check::fail(call, MPI_ERR_KEYVAL, "%s = %#x was freed (attributes already set with it stay until deleted)",
                       arg, static_cast<unsigned>(kv));
  return MPI_SUCCESS;
}

// A callback returned `code` != MPI_SUCCESS: the error the entry point returns.
int callbackFailure(MPI_Comm errComm, const char* fn, const char* which, int kv, int code) {
  const int cls = api::errorClassOf(code);
  const bool mpiCode = code > 0 && api::validErrorCode(code);
  if (mpiCode && code == cls)
    return api::raisef(errComm, fn, cls, "the %s callback of keyval %#x returned %d", which,
                       static_cast<unsigned>(kv), code);
  if (mpiCode) return api::dispatch(errComm, code);
  return api::raisef(errComm, fn, MPI_ERR_OTHER, "the %s callback of keyval %#x returned %d, not an MPI error code",
                     which, static_cast<unsigned>(kv), code);
}

}  // namespace

// ---- predefined callbacks --------------------------------------------------------
// Declared in mpi.h (src/api/desc/attr.txt).  Communicator and datatype
// handles are both ints, so each callback exists once; the datatype and the
// MPI-1 names are aliases of the communicator ones.

extern "C" __attribute__((visibility("default"))) int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*,
                                                                            int* flag) {
  if (flag) *flag = 0;
  return MPI_SUCCESS;
}
extern "C" __attribute__((visibility("default"))) int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* in, void* out,
                                                                      int* flag) {
  if (out) *static_cast<void**>(out) = in;
  if (flag) *flag = 1;
  return MPI_SUCCESS;
}
extern "C" __attribute__((visibility("default"))) int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) {
  return MPI_SUCCESS;
}
#define SHMCOLL_ALIAS(type, name, of) extern "C" __attribute__((visibility("default"), alias(#of))) type name
SHMCOLL_ALIAS(MPI_Type_copy_attr_function, MPI_TYPE_NULL_COPY_FN, MPI_COMM_NULL_COPY_FN);
SHMCOLL_ALIAS(MPI_Type_copy_attr_function, MPI_TYPE_DUP_FN, MPI_COMM_DUP_FN);
SHMCOLL_ALIAS(MPI_Type_delete_attr_function, MPI_TYPE_NULL_DELETE_FN, MPI_COMM_NULL_DELETE_FN);
SHMCOLL_ALIAS(MPI_Copy_function, MPI_NULL_COPY_FN, MPI_COMM_NULL_COPY_FN);
SHMCOLL_ALIAS(MPI_Copy_function, MPI_DUP_FN, MPI_COMM_DUP_FN);
SHMCOLL_ALIAS(MPI_Delete_function, MPI_NULL_DELETE_FN, MPI_COMM_NULL_DELETE_FN);
SHMCOLL_ALIAS(MPI_Win_copy_attr_function, MPI_WIN_NULL_COPY_FN, MPI_COMM_NULL_COPY_FN);
SHMCOLL_ALIAS(MPI_Win_copy_attr_function, MPI_WIN_DUP_FN, MPI_COMM_DUP_FN);
SHMCOLL_ALIAS(MPI_Win_delete_attr_function, MPI_WIN_NULL_DELETE_FN, MPI_COMM_NULL_DELETE_FN);
#undef SHMCOLL_ALIAS

// ---- keyvals and attributes ---------------------------------------------------------
// A NULL callback is taken as the null one (MPI_COMM_NULL_COPY_FN or
// MPI_COMM_NULL_DELETE_FN), as MPICH, whose null callbacks are NULL, does.
// Each function serves the MPI-1 names too (MPI_Keyval_create, MPI_Attr_put,
// ...): kArg names the keyval argument in messages.

constexpr char kCommKeyval[] = "comm_keyval";
constexpr char kTypeKeyval[] = "type_keyval";
constexpr char kWinKeyval[] = "win_keyval";
constexpr char kKeyval[] = "keyval";

namespace impl {

template <AttrKind kKind, const char* kArg>
int createKeyval(Call& call, rt::AttrCopyFn* copy, rt::AttrDeleteFn* del, int* keyval, void* extra) {
  const int h = rt::createKeyval(kKind, copy, del, extra);
  if (!h)
    return check::fail(call, MPI_ERR_OTHER, "no keyval left (%u exist)", static_cast<unsigned>(rt::liveKeyvals()));
  *keyval = h;
  return MPI_SUCCESS;
}

template <AttrKind kKind, const char* kArg>
int freeKeyval(Call& call, int* keyval) {
  const char* p = predefinedName(*keyval) ? predefinedName(*keyval) : winPredefinedName(*keyval);
  if (p) return check::fail(call, MPI_ERR_KEYVAL, "*%s = %s is predefined and cannot be freed", kArg, p);
  char what[64];
  snprintf(what, sizeof what, "*%s", kArg);
  // A keyval the user freed lives on while attributes use it, and a copy of
  // its handle still names it: freeing it again does nothing more.
  SHMCOLL_CHECK(checkKeyval(call, what, *keyval, kKind, true));
  rt::freeKeyval(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

// Sets, reads or deletes an attribute of a communicator (kKind) or datatype.
template <AttrKind kKind, const char* kArg>
int setAttr(Call& call, int object, int kv, void* value) {
  SHMCOLL_CHECK(checkKeyval(call, kArg, kv, kKind, false));
  int failedKey = 0;
  if (int code = rt::setAttr(kKind, object, kv, value, &failedKey))
    return callbackFailure(call.comm, call.fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

template <AttrKind kKind, const char* kArg>
int getAttr(Call& call, int object, int kv, void* value, int* flag) {
  if (int* p = kKind == AttrKind::kComm ? predefinedValue(kv) : nullptr) {
    *static_cast<void**>(value) = p;
    *flag = 1;
    return MPI_SUCCESS;
  }
  SHMCOLL_CHECK(checkKeyval(call, kArg, kv, kKind, true));
  void* v = nullptr;
  *flag = rt::getAttr(kKind, object, kv, &v) ? 1 : 0;
  if (*flag) *static_cast<void**>(value) = v;
  return MPI_SUCCESS;
}

template <AttrKind kKind, const char* kArg>
int deleteAttr(Call& call, int object, int kv) {
  SHMCOLL_CHECK(checkKeyval(call, kArg, kv, kKind, true));
  int failedKey = 0;
  if (int code = rt::deleteAttr(kKind, object, kv, &failedKey))
    return callbackFailure(call.comm, call.fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

template <const char* kArg>
int commSetAttr(Call& call, rt::Comm* c, int kv, void* value) {
  return setAttr<AttrKind::kComm, kArg>(call, c->handle, kv, value);
}
template <const char* kArg>
int commGetAttr(Call& call, rt::Comm* c, int kv, void* value, int* flag) {
  return getAttr<AttrKind::kComm, kArg>(call, c->handle, kv, value, flag);
}
template <const char* kArg>
int commDeleteAttr(Call& call, rt::Comm* c, int kv) {
  return deleteAttr<AttrKind::kComm, kArg>(call, c->handle, kv);
}

// (Predefined datatypes take attributes too; t->handle is the caller's handle.)
int typeSetAttr(Call& call, const dt::Type* t, int kv, void* value) {
  return setAttr<AttrKind::kType, kTypeKeyval>(call, t->handle, kv, value);
}
int typeGetAttr(Call& call, const dt::Type* t, int kv, void* value, int* flag) {
  return getAttr<AttrKind::kType, kTypeKeyval>(call, t->handle, kv, value, flag);
}
int typeDeleteAttr(Call& call, const dt::Type* t, int kv) {
  return deleteAttr<AttrKind::kType, kTypeKeyval>(call, t->handle, kv);
}

// (A window's handle names it in callbacks, like a communicator's.)
int winSetAttr(Call& call, rt::Win* w, int kv, void* value) {
  return setAttr<AttrKind::kWin, kWinKeyval>(call, w->handle, kv, value);
}
int winGetAttr(Call& call, rt::Win* w, int kv, void* value, int* flag) {
  if (winPredefinedName(kv)) {
    *static_cast<void**>(value) = winPredefinedValue(w, kv);
    *flag = 1;
    return MPI_SUCCESS;
  }
  return getAttr<AttrKind::kWin, kWinKeyval>(call, w->handle, kv, value, flag);
}
int winDeleteAttr(Call& call, rt::Win* w, int kv) { return deleteAttr<AttrKind::kWin, kWinKeyval>(call, w->handle, kv); }

// ---- communicator names -------------------------------------------------------------
// Local to the calling process; MPI_COMM_WORLD and MPI_COMM_SELF start with
// their own names, every other communicator with the empty name (names are
// not inherited by MPI_Comm_dup).

int commSetName(Call&, rt::Comm* c, const char* name) {
  c->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));  // longer names are cut
  return MPI_SUCCESS;
}

int commGetName(Call&, rt::Comm* c, char* name, int* resultlen) {
  const size_t n = std::min<size_t>(c->name.size(), MPI_MAX_OBJECT_NAME - 1);
  memcpy(name, c->name.data(), n);
  name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

}  // namespace impl

// ---- hooks (api/attr.h) -------------------------------------------------------------

int completeDup(MPI_Comm comm, rt::Comm* nc, rt::Info hints, const char* fn, MPI_Comm* newcomm) {
  nc->hints = std::move(hints);
  int failedKey = 0;
  const int code = rt::copyAttrs(AttrKind::kComm, comm, nc->handle, &failedKey);
  // Every member keeps the new communicator or none does.
  int32_t mine = code != 0;
  std::vector<int32_t> all(rt::scheduleTeam(*nc).size());  // (both groups of an intercommunicator)
  if (int rc = rt::gatherAll(*nc, &mine, sizeof mine, all.data())) return raise(comm, fn, rc);
  int culprit = -1;
  for (size_t r = 0; r < all.size() && culprit < 0; ++r)
    if (all[r]) culprit = static_cast<int>(r);
  if (culprit < 0) {
    *newcomm = nc->handle;
    return MPI_SUCCESS;
  }
  int ignored = 0;
  rt::deleteAllAttrs(AttrKind::kComm, nc->handle, false, &ignored);  // the dup failed anyway
  rt::freeComm(nc);  // collective over nc: every member is here
  *newcomm = MPI_COMM_NULL;
  if (code) return callbackFailure(comm, fn, "copy", failedKey, code);
  return raisef(comm, fn, MPI_ERR_OTHER,
                "an attribute copy callback failed on rank %d of comm, so no rank keeps the new communicator", culprit);
}

int startIdup(MPI_Comm comm, rt::Info hints, const char* fn, MPI_Comm* newcomm, MPI_Request* request) {
  rt::Comm* nc = rt::pendingDup(*rt::comm(comm));
  nc->hints = std::move(hints);
  int failedKey = 0;
  const int code = rt::copyAttrs(AttrKind::kComm, comm, nc->handle, &failedKey);
  rt::Comm* parent = rt::comm(comm);  // (again: a copy callback may have freed it, which is erroneous)
  if (!parent) {
    int ignored = 0;
    rt::deleteAllAttrs(AttrKind::kComm, nc->handle, false, &ignored);
    rt::discardComm(nc);
    return raisef(kNoComm, fn, MPI_ERR_COMM, "an attribute copy callback freed comm");
  }
  *newcomm = nc->handle;
  *request = newRequest(rt::startIdup(*parent, nc, code != 0, newcomm), comm, fn);
  return MPI_SUCCESS;
}

int deleteCommAttrs(MPI_Comm comm, const char* fn) {
  int failedKey = 0;
  if (int code = rt::deleteAllAttrs(AttrKind::kComm, comm, false, &failedKey))
    return callbackFailure(comm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

int copyTypeAttrs(MPI_Datatype oldtype, MPI_Datatype* newtype, const char* fn) {
  int failedKey = 0;
  const int code = rt::copyAttrs(AttrKind::kType, oldtype, *newtype, &failedKey);
  if (!code) return MPI_SUCCESS;
  int ignored = 0;
  rt::deleteAllAttrs(AttrKind::kType, *newtype, false, &ignored);
  rt::releaseHandle(*newtype);
  *newtype = MPI_DATATYPE_NULL;
  return callbackFailure(kNoComm, fn, "copy", failedKey, code);
}

int deleteWinAttrs(MPI_Win win, const char* fn) {
  int failedKey = 0;
  if (int code = rt::deleteAllAttrs(AttrKind::kWin, win, true, &failedKey))
    return callbackFailure(kNoComm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

int deleteTypeAttrs(MPI_Datatype type, const char* fn) {
  int failedKey = 0;
  if (int code = rt::deleteAllAttrs(AttrKind::kType, type, true, &failedKey))
    return callbackFailure(kNoComm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

int finalizeAttrs() {
  int first = MPI_SUCCESS;
  for (MPI_Comm comm : {MPI_COMM_SELF, MPI_COMM_WORLD}) {
    int failedKey = 0;
    if (int code = rt::deleteAllAttrs(AttrKind::kComm, comm, false, &failedKey)) {
      int rc = callbackFailure(comm, "MPI_Finalize", "delete", failedKey, code);
      if (first == MPI_SUCCESS) first = rc;
    }
  }
  return first;
}

}  // namespace shmcoll::api

#include "generated/entry_attr.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/attr.txt)
