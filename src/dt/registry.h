// Handle table for datatypes: predefined types live in a static table,
// user-created ones in a table indexed by the low bits of the handle, which
// look-ups read without a lock.
#pragma once

#include <mutex>

#include "dt/datatype.h"

namespace shmcoll::dt {

// The predefined type for `handle`, or nullptr.
const Type* builtinType(int handle);

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

// Guards the handle table and the reference counts.
std::recursive_mutex& registryMutex();

}  // namespace shmcoll::dt
