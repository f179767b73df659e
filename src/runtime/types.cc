// The handle table of datatypes (types.h).
#include "runtime/types.h"

#include <mpi.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <new>

namespace shmcoll::rt {

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

const Type* typeSlow(int handle) {
  if (const Type* b = builtinType(handle)) return b;
  return userType(handle);
}

namespace {

template <class A, class B>
struct PairOf {
  A a;
  B b;
};

// A predefined type named by `handle`.  Pair types (for MINLOC/MAXLOC)
// have a hole between the value and the int, so they are not contiguous.
Type named(int handle, const char* name, int64_t extent, uint32_t align, std::vector<dt::Block> blocks) {
  Type t = dt::makeNamed(name, extent, align, std::move(blocks));
  t.handle = handle;
  return t;
}

// Alignment of a scalar, as the C ABI (x86-64 SysV) lays it out in a struct:
// complex types align like their parts, long double to 16.
uint32_t scalarAlign(int handle, int64_t sz) {
  if (handle == MPI_C_FLOAT_COMPLEX || handle == MPI_CXX_FLOAT_COMPLEX) return alignof(float);
  if (handle == MPI_C_DOUBLE_COMPLEX || handle == MPI_CXX_DOUBLE_COMPLEX) return alignof(double);
  if (handle == MPI_C_LONG_DOUBLE_COMPLEX || handle == MPI_CXX_LONG_DOUBLE_COMPLEX) return alignof(long double);
  return static_cast<uint32_t>(sz);
}

Type scalar(int handle, const char* name) {
  int64_t sz = static_cast<int64_t>(builtinSize(handle));
  return named(handle, name, sz, scalarAlign(handle, sz), {{0, static_cast<uint64_t>(sz)}});
}

template <class A, class B>
Type pair(int handle, const char* name) {
  using P = PairOf<A, B>;
  return named(handle, name, sizeof(P), alignof(P),
               {{static_cast<int64_t>(offsetof(P, a)), sizeof(A)}, {static_cast<int64_t>(offsetof(P, b)), sizeof(B)}});
}

std::array<Type, SHMCOLL_DT_BUILTIN_COUNT> buildTable() {
  std::array<Type, SHMCOLL_DT_BUILTIN_COUNT> t{};
  auto put = [&](Type x) { t[x.handle & 0xff] = std::move(x); };
  put(scalar(MPI_CHAR, "MPI_CHAR"));
  put(scalar(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"));
  put(scalar(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"));
  put(scalar(MPI_BYTE, "MPI_BYTE"));
  put(scalar(MPI_WCHAR, "MPI_WCHAR"));
  put(scalar(MPI_SHORT, "MPI_SHORT"));
  put(scalar(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"));
  put(scalar(MPI_INT, "MPI_INT"));
  put(scalar(MPI_UNSIGNED, "MPI_UNSIGNED"));
  put(scalar(MPI_LONG, "MPI_LONG"));
  put(scalar(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"));
  put(scalar(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"));
  put(scalar(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"));
  put(scalar(MPI_FLOAT, "MPI_FLOAT"));
  put(scalar(MPI_DOUBLE, "MPI_DOUBLE"));
  put(scalar(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"));
  put(scalar(MPI_PACKED, "MPI_PACKED"));
  put(scalar(MPI_INT8_T, "MPI_INT8_T"));
  put(scalar(MPI_INT16_T, "MPI_INT16_T"));
  put(scalar(MPI_INT32_T, "MPI_INT32_T"));
  put(scalar(MPI_INT64_T, "MPI_INT64_T"));
  put(scalar(MPI_UINT8_T, "MPI_UINT8_T"));
  put(scalar(MPI_UINT16_T, "MPI_UINT16_T"));
  put(scalar(MPI_UINT32_T, "MPI_UINT32_T"));
  put(scalar(MPI_UINT64_T, "MPI_UINT64_T"));
  put(scalar(MPI_C_BOOL, "MPI_C_BOOL"));
  put(scalar(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"));
  put(scalar(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"));
  put(scalar(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"));
  put(scalar(MPI_AINT, "MPI_AINT"));
  put(scalar(MPI_OFFSET, "MPI_OFFSET"));
  put(scalar(MPI_COUNT, "MPI_COUNT"));
  put(pair<float, int>(MPI_FLOAT_INT, "MPI_FLOAT_INT"));
  put(pair<double, int>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT"));
  put(pair<long, int>(MPI_LONG_INT, "MPI_LONG_INT"));
  put(pair<int, int>(MPI_2INT, "MPI_2INT"));
  put(pair<short, int>(MPI_SHORT_INT, "MPI_SHORT_INT"));
  put(pair<long double, int>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"));
  put(scalar(MPI_CXX_BOOL, "MPI_CXX_BOOL"));
  put(scalar(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"));
  put(scalar(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"));
  put(scalar(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"));
  return t;
}

}  // namespace

namespace {
const std::array<Type, SHMCOLL_DT_BUILTIN_COUNT>& builtinTable() {
  static const std::array<Type, SHMCOLL_DT_BUILTIN_COUNT> kTable = buildTable();
  return kTable;
}
}  // namespace

const Type* gBuiltinTypes = builtinTable().data();

const Type* builtinType(int handle) {
  const auto& kTable = builtinTable();
  if ((static_cast<uint32_t>(handle) >> 24) != 0x31) return nullptr;
  uint32_t id = static_cast<uint32_t>(handle) & 0xff;
  if (id == 0 || id >= kTable.size() || kTable[id].handle != handle) return nullptr;
  return &kTable[id];
}

}  // namespace shmcoll::rt
