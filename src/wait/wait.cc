#include "wait/wait.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
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
  // Shared (not FUTEX_PRIVATE): the word lives in memory mapped by several
  // processes.  (No timeout at all: SHMCOLL_WAIT_NO_TIMEOUT, a test hook.)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, seen, timeoutNs > 0 ? &ts : nullptr, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

Crowd gCrowd;

bool gSleepBarrier = false;
bool gWakeNoFence = false;

bool registerSleepBarrier() {
  const long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED)) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

void sleepFence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // (registered at MPI_Init, so it cannot fail now; a failure would leave
  // only the futex timeout as the safety net, never a wrong result)
  if (gSleepBarrier) syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0);
}

uint64_t nowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void setPolicy(const WaitPolicy& p) { gPolicy = p; }
const WaitPolicy& policy() { return gPolicy; }

}  // namespace shmcoll::wait
