// Attribute caching: keyvals and the attributes cached on communicators,
// datatypes and windows.
//
// A keyval is an entry in a table keyed by its handle, 0x25000000 | serial.
// Serials are never reused while the 24-bit space lasts, so a stale handle
// is reported as invalid instead of aliasing a newer keyval; the handles can
// never equal MPI_KEYVAL_INVALID (0x24000000) or a predefined attribute key
// (0x644000xx).  A keyval lives while its handle is not freed or while an
// attribute still holds it (`uses`), as the standard requires.
//
// An object's attributes are a vector of (keyval, value) in the order they
// were set, newest last: look-ups scan it (objects carry a handful of
// attributes), deletion of all of them runs newest first (the order the
// standard fixes for MPI_COMM_SELF at MPI_Finalize, used for every object),
// and replacing a value counts as setting it anew.  A communicator's list
// lives in its rt::Comm; datatypes keep theirs in a table keyed by handle,
// emptied when the handle is freed.
//
// Callbacks are user code and may call MPI, even on the same object: the
// functions below hold no pointer or iterator across a callback and look the
// object's list up again afterwards.  They return 0, or the nonzero value a
// callback returned, with the keyval in *failedKey; the API layer turns that
// into the entry point's error.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace shmcoll::rt {

enum class AttrKind : uint8_t { kComm, kType, kWin };

// The communicator, datatype and window callbacks have one C signature here,
// since the three handle types are int.
static_assert(std::is_same_v<MPI_Comm, int> && std::is_same_v<MPI_Datatype, int> && std::is_same_v<MPI_Win, int>);
using AttrCopyFn = int(int oldObj, int keyval, void* extra, void* valueIn, void* valueOut, int* flag);
using AttrDeleteFn = int(int obj, int keyval, void* value, void* extra);

struct Keyval {
  AttrKind kind;
  AttrCopyFn* copy = nullptr;  // nullptr: never copied (as MPI_COMM_NULL_COPY_FN)
  AttrDeleteFn* del = nullptr;  // nullptr: nothing to run
  void* extra = nullptr;
  uint32_t uses = 0;   // attributes holding this keyval
  bool freed = false;  // the user freed the handle; the keyval lives while uses > 0
};

struct Attr {
  int keyval;
  void* value;
};
using AttrList = std::vector<Attr>;  // in the order set, newest last

// Keyvals.
int createKeyval(AttrKind kind, AttrCopyFn* copy, AttrDeleteFn* del, void* extra);
Keyval* keyval(int h);  // a live keyval (freed by the user or not), or nullptr
// The user's free: the keyval goes once no attribute holds it; freeing it
// again meanwhile (through a copy of the handle) does nothing.
void freeKeyval(int h);
size_t liveKeyvals();  // (tests check for leaks)

// The attribute list of an object: a communicator's (nullptr if `obj` is
// not a live communicator) or a datatype's (nullptr when it has none and
// `create` is false).
AttrList* attrList(AttrKind kind, int obj, bool create);

// The value set for `keyval` on `obj`, if any.
bool getAttr(AttrKind kind, int obj, int keyval, void** value);
// Sets `value`; an existing value is deleted first (its delete callback runs;
// if that fails, nothing changes).
int setAttr(AttrKind kind, int obj, int keyval, void* value, int* failedKey);
// Deletes the value set for `keyval` (its delete callback runs; if that fails
// the attribute stays).  Deleting an attribute that is not set does nothing.
int deleteAttr(AttrKind kind, int obj, int keyval, int* failedKey);
// Deletes every attribute of `obj`, newest first.  With `stopOnFailure` the
// first failing callback stops it and its attribute stays (with the older
// ones); otherwise every attribute goes and the first failure is returned.
int deleteAllAttrs(AttrKind kind, int obj, bool stopOnFailure, int* failedKey);
// Runs the copy callback of every attribute of `oldObj`, in the order set,
// and sets on `newObj` those the callbacks copy.  Stops at the first failing
// callback (what was copied stays on `newObj`).
int copyAttrs(AttrKind kind, int oldObj, int newObj, int* failedKey);

}  // namespace shmcoll::rt
