// SIMD copy kernels.
//
// One kernel per vector width (AVX-512, AVX2, SSE2, scalar), chosen once at
// load time from cpuid; SHMCOLL_COPY_KERNEL=avx512|avx2|sse2|scalar forces one.
// Above a tunable size (SHMCOLL_NT_THRESHOLD) the kernels use non-temporal
// stores, for data that will not be read again soon.  All kernels have
// memcpy semantics: the ranges must not overlap; any alignment, n == 0 is fine.
// The size classes and costs are described in copy/copy_engine.h, the choice
// of kernel and of the default threshold in copy/copy.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace shmcoll::copy {

enum class Kernel { kScalar = 0, kSse2 = 1, kAvx2 = 2, kAvx512 = 3 };
using CopyFn = void (*)(void* dst, const void* src, size_t n);

// Copies n bytes with the active kernel (one indirect tail call).
void copy(void* dst, const void* src, size_t n);

// Copies n <= 32 bytes inline, with two overlapping moves of one width (no
// call): for the tiny payloads of small collectives, where a call into the
// C library's memcpy costs more than the bytes.  Any alignment; the source is
// read before the destination is written, so the ranges may overlap.
namespace detail {
// The first and last W bytes of [s, s+n) to d, both read before either is written.
template <size_t W>
inline void headTail(char* d, const char* s, size_t n) {
  char a[W], b[W];
  std::memcpy(a, s, W);
  std::memcpy(b, s + n - W, W);
  std::memcpy(d, a, W);
  std::memcpy(d + n - W, b, W);
}
}  // namespace detail

inline void tiny(void* dst, const void* src, size_t n) {
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (n >= 16) {
    detail::headTail<16>(d, s, n);
  } else if (n >= 8) {
    detail::headTail<8>(d, s, n);
  } else if (n >= 4) {
    detail::headTail<4>(d, s, n);
  } else if (n > 0) {
    const char a = s[0], b = s[n / 2], c = s[n - 1];
    d[0] = a;
    d[n / 2] = b;
    d[n - 1] = c;
  }
}
constexpr size_t kTinyMax = 32;

// Prefetch for writing (PREFETCHW): asks for the line holding `p` in a state
// this core can write without another round of invalidations.  A hint only;
// hasPrefetchW() says whether the CPU has the instruction (cpuid, detected
// once at load), and callers skip the loop without it.
namespace detail {
extern bool prefetchW;
}
inline bool hasPrefetchW() { return detail::prefetchW; }
inline void prefetchW(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

// Kernel selection.
Kernel active();
bool supported(Kernel k);            // the CPU (and the build) can run k
bool select(Kernel k);               // false (and no change) if unsupported
const char* name(Kernel k);
bool parseKernel(const char* s, Kernel* out);
CopyFn function(Kernel k);           // for tests and benchmarks; nullptr if !supported(k)

// Non-temporal store threshold in bytes: copies of at least this size use
// non-temporal stores.  setNtThreshold(0) disables them (ntThreshold() then
// returns SIZE_MAX), as does SHMCOLL_NT_THRESHOLD=0.
size_t ntThreshold();
void setNtThreshold(size_t bytes);

// Lowers the non-temporal threshold to `bytes` for its lifetime (0: no
// change), e.g. for the copies into a receive buffer that, with everything
// else the operation touches, will not fit the cache.  The threshold is one
// per process: a collective holds it only while no other thread copies (the
// library serialises calls, MPI_THREAD_SERIALIZED at most).
class NtScope {
 public:
  explicit NtScope(size_t bytes);
  ~NtScope();
  NtScope(const NtScope&) = delete;
  NtScope& operator=(const NtScope&) = delete;

 private:
  size_t saved_ = 0;
  bool active_ = false;
};

// Copies from this size up to the non-temporal threshold use `rep movsb` on
// CPUs with ERMS (SHMCOLL_COPY_REP_MIN, default 32 KiB; see copy.cc).
// setRepMin(0) disables it (repMin() then returns SIZE_MAX), as does
// SHMCOLL_COPY_REP_MIN=0; setRepMin returns false, and changes nothing, on a
// CPU without ERMS.
size_t repMin();
bool setRepMin(size_t bytes);

// Lowers the `rep movsb` threshold to repSharedMin() for its lifetime, for
// copies whose source or destination lines another core wrote last: the
// transport's copies into and out of the segment's slots and lanes and out
// of a peer's buffer.  There `rep movsb` moved 8-24 KiB twice as fast as the
// vector loop, which is faster only while both ends sit in this core's L1
// (copy.cc).  No change on a CPU without ERMS, with `rep movsb` turned off,
// or where the threshold is already lower; one per process, as NtScope.
class RepScope {
 public:
  RepScope();
  ~RepScope();
  RepScope(const RepScope&) = delete;
  RepScope& operator=(const RepScope&) = delete;

 private:
  size_t saved_ = 0;
  bool active_ = false;
};
// SHMCOLL_COPY_REP_SHARED_MIN (default 8 KiB; SIZE_MAX: no lowering).
size_t repSharedMin();
// ... and only between buffers whose distance has no bit of this mask set
// (SHMCOLL_COPY_REP_ALIGN: 0 for `any`, 31 for `32`; see copy.cc).
uintptr_t repAlign();
void setRepAlign(uintptr_t mask);

}  // namespace shmcoll::copy
