#include "dt/registry.h"

#include <atomic>
#include <new>

namespace shmcoll::dt {

namespace {
constexpr uint32_t kUserKind = 0x32000000u;
// User handles index a table of chunks of 4096 entries, allocated as needed
// and never moved or freed, so userType() reads it without the lock (it runs
// on every call that names a derived type).  Writers hold registryMutex().
// 4096 chunks cover the 24 index bits of a handle.
constexpr size_t kChunkBits = 12, kChunk = size_t{1} << kChunkBits, kMaxChunks = 4096;
using Chunk = std::atomic<Type*>;
constinit std::atomic<Chunk*> gChunks[kMaxChunks] = {};
size_t gUsed = 1;      // entries ever handed out (index 0 unused); under the lock
size_t gFreeHint = 1;  // lowest index that may be free: all below it are taken; under the lock

Chunk& entry(size_t i) { return gChunks[i >> kChunkBits].load(std::memory_order_relaxed)[i & (kChunk - 1)]; }
}  // namespace

std::recursive_mutex& registryMutex() {
  static std::recursive_mutex m;
  return m;
}

int registerType(Type* t) {
  std::lock_guard<std::recursive_mutex> g(registryMutex());
  size_t i = gFreeHint;
  while (i < gUsed && entry(i).load(std::memory_order_relaxed)) ++i;
  if (i == gUsed) {
    if (i >= kChunk * kMaxChunks) throw std::bad_alloc();  // 16.7 million live handles
    if (!gChunks[i >> kChunkBits].load(std::memory_order_relaxed))
      gChunks[i >> kChunkBits].store(new Chunk[kChunk](), std::memory_order_release);
    ++gUsed;
  }
  t->handle = static_cast<int>(kUserKind | i);
  t->handleRefs = 1;
  ++t->refs;
  entry(i).store(t, std::memory_order_release);
  gFreeHint = i + 1;
  return t->handle;
}

Type* userType(int handle) {
  const uint32_t h = static_cast<uint32_t>(handle);
  if ((h & 0xff000000u) != kUserKind) return nullptr;
  const uint32_t i = h & 0x00ffffffu;
  const Chunk* c = gChunks[i >> kChunkBits].load(std::memory_order_acquire);
  return c ? c[i & (kChunk - 1)].load(std::memory_order_acquire) : nullptr;
}

void releaseHandle(int handle) {
  Type* t = nullptr;
  {
    std::lock_guard<std::recursive_mutex> g(registryMutex());
    t = userType(handle);
    if (!t) return;
    uint32_t i = static_cast<uint32_t>(handle) & 0x00ffffffu;
    entry(i).store(nullptr, std::memory_order_release);
    if (i < gFreeHint) gFreeHint = i;
    t->handle = 0;
    t->handleRefs = 0;
  }
  release(t);
}

size_t liveHandles() {
  std::lock_guard<std::recursive_mutex> g(registryMutex());
  size_t n = 0;
  for (size_t i = 1; i < gUsed; ++i) n += entry(i).load(std::memory_order_relaxed) != nullptr;
  return n;
}

const Type* fromHandle(int handle) {
  if (const Type* b = builtinType(handle)) return b;
  return userType(handle);
}

}  // namespace shmcoll::dt
