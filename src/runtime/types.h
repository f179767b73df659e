// The handle table of datatypes: which MPI_Datatype handle names which
// dt::Type.  Predefined types live in a static table indexed by the id in
// the handle; user-created ones in a table indexed by the low bits of the
// handle, which look-ups read without a lock.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <mutex>

#include "dt/datatype.h"

namespace shmcoll::rt {

using dt::Type;

// The type behind `handle` (predefined or user, committed or not); nullptr
// for MPI_DATATYPE_NULL or garbage.
// A predefined handle resolves inline (a compare and an index into the
// table); others go to typeSlow().
inline const Type* type(int handle);
const Type* typeSlow(int handle);

// The predefined type for `handle`, or nullptr.
const Type* builtinType(int handle);

// The predefined types' table, indexed by the handle's low byte; set when
// the library loads (nullptr before: then typeSlow() builds it).
extern const Type* gBuiltinTypes;

// The predefined type behind `handle`, looked up inline (no call); nullptr for
// every other handle and before the table is set.
inline const Type* builtinInline(int handle) {
  const uint32_t u = static_cast<uint32_t>(handle);
  const Type* table = gBuiltinTypes;
  if ((u >> 24) != 0x31 || !table) return nullptr;
  const uint32_t id = u & 0xff;
  return id != 0 && id < SHMCOLL_DT_BUILTIN_COUNT && table[id].handle == handle ? &table[id] : nullptr;
}

inline const Type* type(int handle) {
  if ((static_cast<uint32_t>(handle) >> 24) == 0x31 && gBuiltinTypes) [[likely]]
    return builtinInline(handle);
  return typeSlow(handle);
}

// Byte size of one element of a predefined type's handle without a table
// look-up (the size lives in the handle bits); 0 if `handle` is not predefined.
inline uint64_t builtinSize(int handle) {
  return ((static_cast<uint32_t>(handle) >> 24) == 0x31) ? ((static_cast<uint32_t>(handle) >> 8) & 0xff) : 0;
}

// Registers a user type, takes a reference for the handle (refs + 1,
// handleRefs = 1) and returns its new handle (0x32000000 | index).
int registerType(Type* t);
// The user type behind `handle` (committed or not), or nullptr.
Type* userType(int handle);
// Drops the handle and its reference; the Type itself is freed once nothing
// references it.
void releaseHandle(int handle);
// Number of live user handles (tests check for leaks).
size_t liveHandles();

// Guards the handle table and the reference counts (dt::refMutex).
inline std::recursive_mutex& registryMutex() { return dt::refMutex(); }

}  // namespace shmcoll::rt
