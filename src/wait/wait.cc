#include "wait/wait.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace shmcoll::wait {

namespace {
WaitPolicy gPolicy;
}

ProgressHook gProgressHook = nullptr;

void yieldCpu() { sched_yield(); }

void futexWait(std::atomic<uint32_t>* word, uint32_t seen, long timeoutNs) {
  struct timespec ts = {timeoutNs / 1000000000L, timeoutNs % 1000000000L};
  // Shared (not FUTEX_PRIVATE): the word lives in memory mapped by several processes.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

Crowd gCrowd;

uint64_t nowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void setPolicy(const WaitPolicy& p) { gPolicy = p; }
const WaitPolicy& policy() { return gPolicy; }

}  // namespace shmcoll::wait
