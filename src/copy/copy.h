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

namespace shmcoll::copy {

enum class Kernel { kScalar = 0, kSse2 = 1, kAvx2 = 2, kAvx512 = 3 };
using CopyFn = void (*)(void* dst, const void* src, size_t n);

// Copies n bytes with the active kernel (one indirect tail call).
void copy(void* dst, const void* src, size_t n);

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

// Copies from this size up to the non-temporal threshold use `rep movsb` on
// CPUs with ERMS (SHMCOLL_COPY_REP_MIN, default 32 KiB; see copy.cc).
// setRepMin(0) disables it (repMin() then returns SIZE_MAX), as does
// SHMCOLL_COPY_REP_MIN=0; setRepMin returns false, and changes nothing, on a
// CPU without ERMS.
size_t repMin();
bool setRepMin(size_t bytes);

}  // namespace shmcoll::copy
