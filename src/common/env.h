// Tunables: each is declared where it is used, in one line, with its
// environment variable and default, e.g.
//   static const size_t kCmaMin = env::size("SHMCOLL_CMA_MIN", 32768);
// Sizes accept k/m/g suffixes (powers of two).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace shmcoll::env {

// Integer value of `name`, or `dflt` when unset or unparsable.
long long integer(const char* name, long long dflt);
// Byte size of `name` with an optional k/m/g suffix, or `dflt`.
size_t size(const char* name, size_t dflt);
// Boolean: 1/yes/on/true vs 0/no/off/false, or `dflt`.
bool flag(const char* name, bool dflt);
// String value of `name`, or `dflt`.
std::string str(const char* name, const char* dflt);

// Parses a size string ("64k", "2M", "4096"); returns false if malformed.
bool parseSize(const std::string& s, size_t* out);

}  // namespace shmcoll::env
