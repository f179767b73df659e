#include "common/env.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace shmcoll::env {

bool parseSize(const std::string& s, size_t* out) {
  // strtoull would take "-5" (as 2^64 - 5) and leading blanks: digits only.
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str() || errno == ERANGE) return false;
  unsigned long long mult = 1;
  if (*end) {
    switch (std::tolower(static_cast<unsigned char>(*end))) {
      case 'k': mult = 1ull << 10; break;
      case 'm': mult = 1ull << 20; break;
      case 'g': mult = 1ull << 30; break;
      default: return false;
    }
    ++end;
    if (*end == 'i' || *end == 'I') ++end;
    if (*end == 'b' || *end == 'B') ++end;
    if (*end) return false;
  }
  if (v > SIZE_MAX / mult) return false;  // would wrap
  *out = static_cast<size_t>(v * mult);
  return true;
}

long long integer(const char* name, long long dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  char* end = nullptr;
  long long x = std::strtoll(v, &end, 10);
  return (end && *end == '\0') ? x : dflt;
}

size_t size(const char* name, size_t dflt) {
  const char* v = std::getenv(name);
  size_t out;
  return (v && parseSize(v, &out)) ? out : dflt;
}

bool flag(const char* name, bool dflt) {
  const char* v = std::getenv(name);
  if (!v || !*v) return dflt;
  if (!strcasecmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true")) return true;
  if (!strcasecmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcasecmp(v, "false")) return false;
  return dflt;
}

std::string str(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : std::string(dflt);
}

}  // namespace shmcoll::env
