// Attribute caching (keyvals, attributes on communicators and datatypes,
// predefined attributes, the predefined callbacks, the deprecated MPI-1
// forms) and communicator names.
//
// Argument checks live here; runtime/attr.cc keeps the keyvals and lists and
// runs the callbacks.  A callback's nonzero return becomes the entry point's
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
//   MPI_LASTUSEDCODE    MPI_ERR_LASTCODE: no user error classes or codes
#include <climits>
#include <cstring>
#include <vector>

#include "api/api.h"
#include "api/attr.h"
#include "api/request.h"
#include "coll/coll.h"
#include "dt/datatype.h"
#include "dt/registry.h"
#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/idup.h"

using namespace shmcoll;
using api::kNoComm;
using rt::AttrKind;

namespace {

#define NEED_INIT(fn) \
  SHMCOLL_REQUIRE(api::active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize")
#define NEED_COMM(c, h, fn)                                                                                   \
  rt::Comm* c = rt::comm(h);                                                                                  \
  SHMCOLL_REQUIRE(c, h, fn, MPI_ERR_COMM, "comm = %#x is not a valid communicator%s", static_cast<unsigned>(h), \
                  ::shmcoll::rt::commNote(h))
#define NEED_TYPE(h, fn, arg)                                                                          \
  SHMCOLL_REQUIRE(dt::fromHandle(h), kNoComm, fn, MPI_ERR_TYPE, "%s = %#x is %s", arg,                 \
                  static_cast<unsigned>(h), (h) == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype")
#define NOT_NULL(ptr, errComm, fn, arg) SHMCOLL_REQUIRE((ptr) != nullptr, errComm, fn, MPI_ERR_ARG, "%s is NULL", arg)

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
  static int tagUb = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtimeIsGlobal = 1, universe = 1, appnum = 0,
             lastUsed = MPI_ERR_LASTCODE;
  switch (key) {
    case MPI_TAG_UB: return &tagUb;
    case MPI_HOST: return &host;
    case MPI_IO: return &io;
    case MPI_WTIME_IS_GLOBAL: return &wtimeIsGlobal;
    case MPI_UNIVERSE_SIZE:
      universe = static_cast<int>(rt::ctx().eng.size);
      return &universe;
    case MPI_APPNUM: return &appnum;
    case MPI_LASTUSEDCODE: return &lastUsed;
    default: return nullptr;
  }
}

const char* kindName(AttrKind k) { return k == AttrKind::kComm ? "communicators" : "datatypes"; }

// Checks keyval argument `arg` = kv for an attribute call on objects of
// `kind`.  `allowFreed`: a keyval the user freed but that attributes still
// hold may still be read and deleted, not set.
int checkKeyval(MPI_Comm errComm, const char* fn, const char* arg, int kv, AttrKind kind, bool allowFreed) {
  SHMCOLL_REQUIRE(kv != MPI_KEYVAL_INVALID, errComm, fn, MPI_ERR_KEYVAL, "%s = MPI_KEYVAL_INVALID", arg);
  if (const char* p = predefinedName(kv))
    return api::raisef(errComm, fn, MPI_ERR_KEYVAL, "%s = %s is a predefined communicator attribute key%s", arg, p,
                       kind == AttrKind::kComm ? " and read-only" : "");
  rt::Keyval* k = rt::keyval(kv);
  SHMCOLL_REQUIRE(k, errComm, fn, MPI_ERR_KEYVAL, "%s = %#x is not a valid keyval (never created, or freed)", arg,
                  static_cast<unsigned>(kv));
  SHMCOLL_REQUIRE(k->kind == kind, errComm, fn, MPI_ERR_KEYVAL, "%s = %#x was created for %s, not %s", arg,
                  static_cast<unsigned>(kv), kindName(k->kind), kindName(kind));
  SHMCOLL_REQUIRE(allowFreed || !k->freed, errComm, fn, MPI_ERR_KEYVAL,
                  "%s = %#x was freed (attributes already set with it stay until deleted)", arg,
                  static_cast<unsigned>(kv));
  return MPI_SUCCESS;
}

// A callback returned `code` != MPI_SUCCESS: the error the entry point returns.
int callbackFailure(MPI_Comm errComm, const char* fn, const char* which, int kv, int code) {
  const int cls = api::errorClassOf(code);
  const bool mpiCode = code > 0 && cls >= 1 && cls <= MPI_ERR_ERRHANDLER;
  if (mpiCode && code == cls)
    return api::raisef(errComm, fn, cls, "the %s callback of keyval %#x returned %d", which,
                       static_cast<unsigned>(kv), code);
  if (mpiCode) return api::dispatch(errComm, code);
  return api::raisef(errComm, fn, MPI_ERR_OTHER, "the %s callback of keyval %#x returned %d, not an MPI error code",
                     which, static_cast<unsigned>(kv), code);
}

// ---- shared bodies of the communicator calls and their MPI-1 names ---------------

int createKeyval(AttrKind kind, const char* fn, const char* arg, rt::AttrCopyFn* copy, rt::AttrDeleteFn* del,
                 int* keyval, void* extra) {
  NOT_NULL(keyval, kNoComm, fn, arg);
  int h = rt::createKeyval(kind, copy, del, extra);
  SHMCOLL_REQUIRE(h, kNoComm, fn, MPI_ERR_OTHER, "no keyval left (%u exist)",
                  static_cast<unsigned>(rt::liveKeyvals()));
  *keyval = h;
  return MPI_SUCCESS;
}

int freeKeyval(AttrKind kind, const char* fn, const char* arg, int* keyval) {
  NOT_NULL(keyval, kNoComm, fn, arg);
  if (const char* p = predefinedName(*keyval))
    return api::raisef(kNoComm, fn, MPI_ERR_KEYVAL, "*%s = %s is predefined and cannot be freed", arg, p);
  char what[64];
  snprintf(what, sizeof what, "*%s", arg);
  if (int rc = checkKeyval(kNoComm, fn, what, *keyval, kind, false)) return rc;
  rt::freeKeyval(*keyval);
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int commSetAttr(const char* fn, const char* arg, MPI_Comm comm, int kv, void* value) {
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  (void)c;
  if (int rc = checkKeyval(comm, fn, arg, kv, AttrKind::kComm, false)) return rc;
  int failedKey = 0;
  if (int code = rt::setAttr(AttrKind::kComm, comm, kv, value, &failedKey))
    return callbackFailure(comm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

int commGetAttr(const char* fn, const char* arg, MPI_Comm comm, int kv, void* value, int* flag) {
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  (void)c;
  NOT_NULL(value, comm, fn, "attribute_val");
  NOT_NULL(flag, comm, fn, "flag");
  if (int* p = predefinedValue(kv)) {
    *static_cast<void**>(value) = p;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (int rc = checkKeyval(comm, fn, arg, kv, AttrKind::kComm, true)) return rc;
  void* v = nullptr;
  *flag = rt::getAttr(AttrKind::kComm, comm, kv, &v) ? 1 : 0;
  if (*flag) *static_cast<void**>(value) = v;
  return MPI_SUCCESS;
}

int commDeleteAttr(const char* fn, const char* arg, MPI_Comm comm, int kv) {
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  (void)c;
  if (int rc = checkKeyval(comm, fn, arg, kv, AttrKind::kComm, true)) return rc;
  int failedKey = 0;
  if (int code = rt::deleteAttr(AttrKind::kComm, comm, kv, &failedKey))
    return callbackFailure(comm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

}  // namespace

// ---- predefined callbacks --------------------------------------------------------

#define SHMCOLL_CALLBACK extern "C" __attribute__((visibility("default"))) int

SHMCOLL_CALLBACK MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  if (flag) *flag = 0;
  return MPI_SUCCESS;
}
SHMCOLL_CALLBACK MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  if (out) *static_cast<void**>(out) = in;
  if (flag) *flag = 1;
  return MPI_SUCCESS;
}
SHMCOLL_CALLBACK MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }
SHMCOLL_CALLBACK MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int* flag) {
  if (flag) *flag = 0;
  return MPI_SUCCESS;
}
SHMCOLL_CALLBACK MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  if (out) *static_cast<void**>(out) = in;
  if (flag) *flag = 1;
  return MPI_SUCCESS;
}
SHMCOLL_CALLBACK MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*) { return MPI_SUCCESS; }
SHMCOLL_CALLBACK MPI_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  if (flag) *flag = 0;
  return MPI_SUCCESS;
}
SHMCOLL_CALLBACK MPI_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  if (out) *static_cast<void**>(out) = in;
  if (flag) *flag = 1;
  return MPI_SUCCESS;
}
SHMCOLL_CALLBACK MPI_NULL_DELETE_FN(MPI_Comm, int, void*, void*) { return MPI_SUCCESS; }

// ---- communicator keyvals and attributes --------------------------------------------
// A NULL callback is taken as the null one (MPI_COMM_NULL_COPY_FN or
// MPI_COMM_NULL_DELETE_FN), as MPICH, whose null callbacks are NULL, does.

SHMCOLL_API(int, MPI_Comm_create_keyval,
            (MPI_Comm_copy_attr_function * comm_copy_attr_fn, MPI_Comm_delete_attr_function* comm_delete_attr_fn,
             int* comm_keyval, void* extra_state)) {
  return createKeyval(AttrKind::kComm, "MPI_Comm_create_keyval", "comm_keyval", comm_copy_attr_fn,
                      comm_delete_attr_fn, comm_keyval, extra_state);
}

SHMCOLL_API(int, MPI_Comm_free_keyval, (int* comm_keyval)) {
  return freeKeyval(AttrKind::kComm, "MPI_Comm_free_keyval", "comm_keyval", comm_keyval);
}

SHMCOLL_API(int, MPI_Comm_set_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val)) {
  return commSetAttr("MPI_Comm_set_attr", "comm_keyval", comm, comm_keyval, attribute_val);
}

SHMCOLL_API(int, MPI_Comm_get_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag)) {
  return commGetAttr("MPI_Comm_get_attr", "comm_keyval", comm, comm_keyval, attribute_val, flag);
}

SHMCOLL_API(int, MPI_Comm_delete_attr, (MPI_Comm comm, int comm_keyval)) {
  return commDeleteAttr("MPI_Comm_delete_attr", "comm_keyval", comm, comm_keyval);
}

// The deprecated MPI-1 names: the same keyvals and attributes.

SHMCOLL_API(int, MPI_Keyval_create,
            (MPI_Copy_function * copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state)) {
  return createKeyval(AttrKind::kComm, "MPI_Keyval_create", "keyval", copy_fn, delete_fn, keyval, extra_state);
}

SHMCOLL_API(int, MPI_Keyval_free, (int* keyval)) {
  return freeKeyval(AttrKind::kComm, "MPI_Keyval_free", "keyval", keyval);
}

SHMCOLL_API(int, MPI_Attr_put, (MPI_Comm comm, int keyval, void* attribute_val)) {
  return commSetAttr("MPI_Attr_put", "keyval", comm, keyval, attribute_val);
}

SHMCOLL_API(int, MPI_Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag)) {
  return commGetAttr("MPI_Attr_get", "keyval", comm, keyval, attribute_val, flag);
}

SHMCOLL_API(int, MPI_Attr_delete, (MPI_Comm comm, int keyval)) {
  return commDeleteAttr("MPI_Attr_delete", "keyval", comm, keyval);
}

// ---- datatype keyvals and attributes (predefined datatypes take attributes too) ------

SHMCOLL_API(int, MPI_Type_create_keyval,
            (MPI_Type_copy_attr_function * type_copy_attr_fn, MPI_Type_delete_attr_function* type_delete_attr_fn,
             int* type_keyval, void* extra_state)) {
  return createKeyval(AttrKind::kType, "MPI_Type_create_keyval", "type_keyval", type_copy_attr_fn,
                      type_delete_attr_fn, type_keyval, extra_state);
}

SHMCOLL_API(int, MPI_Type_free_keyval, (int* type_keyval)) {
  return freeKeyval(AttrKind::kType, "MPI_Type_free_keyval", "type_keyval", type_keyval);
}

SHMCOLL_API(int, MPI_Type_set_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val)) {
  const char* fn = "MPI_Type_set_attr";
  NEED_TYPE(datatype, fn, "datatype");
  if (int rc = checkKeyval(kNoComm, fn, "type_keyval", type_keyval, AttrKind::kType, false)) return rc;
  int failedKey = 0;
  if (int code = rt::setAttr(AttrKind::kType, datatype, type_keyval, attribute_val, &failedKey))
    return callbackFailure(kNoComm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_get_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag)) {
  const char* fn = "MPI_Type_get_attr";
  NEED_TYPE(datatype, fn, "datatype");
  NOT_NULL(attribute_val, kNoComm, fn, "attribute_val");
  NOT_NULL(flag, kNoComm, fn, "flag");
  if (int rc = checkKeyval(kNoComm, fn, "type_keyval", type_keyval, AttrKind::kType, true)) return rc;
  void* v = nullptr;
  *flag = rt::getAttr(AttrKind::kType, datatype, type_keyval, &v) ? 1 : 0;
  if (*flag) *static_cast<void**>(attribute_val) = v;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_delete_attr, (MPI_Datatype datatype, int type_keyval)) {
  const char* fn = "MPI_Type_delete_attr";
  NEED_TYPE(datatype, fn, "datatype");
  if (int rc = checkKeyval(kNoComm, fn, "type_keyval", type_keyval, AttrKind::kType, true)) return rc;
  int failedKey = 0;
  if (int code = rt::deleteAttr(AttrKind::kType, datatype, type_keyval, &failedKey))
    return callbackFailure(kNoComm, fn, "delete", failedKey, code);
  return MPI_SUCCESS;
}

// ---- communicator names -------------------------------------------------------------
// Local to the calling process; MPI_COMM_WORLD and MPI_COMM_SELF start with
// their own names, every other communicator with the empty name (names are
// not inherited by MPI_Comm_dup).

SHMCOLL_API(int, MPI_Comm_set_name, (MPI_Comm comm, const char* comm_name)) {
  NEED_INIT("MPI_Comm_set_name");
  NEED_COMM(c, comm, "MPI_Comm_set_name");
  NOT_NULL(comm_name, comm, "MPI_Comm_set_name", "comm_name");
  c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));  // longer names are cut
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Comm_get_name, (MPI_Comm comm, char* comm_name, int* resultlen)) {
  NEED_INIT("MPI_Comm_get_name");
  NEED_COMM(c, comm, "MPI_Comm_get_name");
  NOT_NULL(comm_name, comm, "MPI_Comm_get_name", "comm_name");
  NOT_NULL(resultlen, comm, "MPI_Comm_get_name", "resultlen");
  const size_t n = std::min<size_t>(c->name.size(), MPI_MAX_OBJECT_NAME - 1);
  memcpy(comm_name, c->name.data(), n);
  comm_name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

// ---- hooks (api/attr.h) -------------------------------------------------------------

namespace shmcoll::api {

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
  dt::releaseHandle(*newtype);
  *newtype = MPI_DATATYPE_NULL;
  return callbackFailure(kNoComm, fn, "copy", failedKey, code);
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
