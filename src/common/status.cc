#include "common/status.h"

#include <cstdio>

namespace shmcoll {

namespace {
thread_local std::string tReason;
}

int fail(int cls, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  tReason = buf;
  return cls;
}

const std::string& lastReason() { return tReason; }
void clearReason() { tReason.clear(); }

}  // namespace shmcoll
