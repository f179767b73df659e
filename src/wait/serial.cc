#include "wait/serial.h"

#include <mutex>

#include "wait/wait.h"

namespace shmcoll::wait {

bool gSerialOn = false;
segment::RankCtl* gSerialSelf = nullptr;
std::atomic<uint32_t> gLocalSleepers{0};

namespace {

std::mutex gMutex;
// The holder (an address unique to its thread) and how deeply it holds the
// lock; depth is touched only by the holder.
std::atomic<const void*> gOwner{nullptr};
uint32_t gDepth = 0;

const void* me() {
  static thread_local char tag;
  return &tag;
}

// After the lock was released: wakes this rank's sleeping threads, whose
// condition the critical section just left may have made true.  `seen`
// (releaseSerialFor): the caller counted itself among them and is about to
// sleep; only the others need the wake-up, and *seen moves past this one.
void wakeLocalSleepers(uint32_t* seen = nullptr) {
  if (!gSerialSelf || gLocalSleepers.load(std::memory_order_acquire) <= (seen ? 1u : 0u)) return;
  const uint32_t before = gSerialSelf->wake.fetch_add(1, std::memory_order_release);
  futexWakeAll(&gSerialSelf->wake);
  if (seen && before == *seen) *seen = before + 1;
}

}  // namespace

void enterSerial() {
  if (gOwner.load(std::memory_order_relaxed) == me()) {
    ++gDepth;
    return;
  }
  gMutex.lock();
  gOwner.store(me(), std::memory_order_relaxed);
  gDepth = 1;
}

void leaveSerial() {
  if (--gDepth > 0) return;
  gOwner.store(nullptr, std::memory_order_relaxed);
  gMutex.unlock();
  wakeLocalSleepers();
}

uint32_t releaseSerial() { return releaseSerialFor(true, nullptr); }

uint32_t releaseSerialFor(bool changed, uint32_t* seen) {
  if (!gSerialOn || gOwner.load(std::memory_order_relaxed) != me()) return 0;
  const uint32_t depth = gDepth;
  gDepth = 0;
  gOwner.store(nullptr, std::memory_order_relaxed);
  gMutex.unlock();
  if (changed) wakeLocalSleepers(seen);
  return depth;
}

void yieldSerial() {
  const uint32_t depth = releaseSerial();
  yieldCpu();
  reacquireSerial(depth);
}

void reacquireSerial(uint32_t depth) {
  if (depth == 0) return;
  gMutex.lock();
  gOwner.store(me(), std::memory_order_relaxed);
  gDepth = depth;
}

}  // namespace shmcoll::wait
