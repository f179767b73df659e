// Internals of the copy layer, shared by the dispatcher (copy.cc), the kernel
// translation units (copy_<isa>.cc), the unit test and the benchmark.
//
// Each kernel lives in its own translation unit compiled for its ISA through
// __attribute__((target(...))), so the library itself needs no -march flag;
// copy.cc decides at load time which of them may run on this CPU.
#pragma once

#include <cstddef>
#include <string>

#include "copy/copy.h"

#if defined(__x86_64__) || defined(__i386__)
#define SHMCOLL_COPY_X86 1
#else
#define SHMCOLL_COPY_X86 0
#endif

namespace shmcoll::copy::detail {

// The kernels, all with memcpy semantics (see copy_engine.h for the strategy).
void copyScalar(void* dst, const void* src, size_t n);
#if SHMCOLL_COPY_X86
void copySse2(void* dst, const void* src, size_t n);
void copyAvx2(void* dst, const void* src, size_t n);
void copyAvx512(void* dst, const void* src, size_t n);
#endif

// Copies of at least this many bytes use non-temporal stores.  SIZE_MAX
// disables them.  Written by setNtThreshold(), read (relaxed) by the kernels'
// out-of-line large-copy path only.
extern size_t ntThresholdBytes __attribute__((visibility("hidden")));

// Copies of at least this many bytes (and below ntThresholdBytes) use
// `rep movsb`.  SIZE_MAX disables it; it stays SIZE_MAX on CPUs without ERMS.
extern size_t repMinBytes __attribute__((visibility("hidden")));
// ... and only when (dst - src) & repAlignMask is 0 (SHMCOLL_COPY_REP_ALIGN).
extern uintptr_t repAlignMask __attribute__((visibility("hidden")));

// True when the CPU has ERMS (enhanced rep movsb), from cpuid, detected once.
bool hasErms();

// The threshold used when SHMCOLL_NT_THRESHOLD is unset (see copy.cc for why).
size_t defaultNtThreshold();

// The widest kernel this CPU and OS can run.
Kernel best();

// Bit k set when kernel k can run here (cpuid + XCR0, detected once).
unsigned supportedMask();

// The kernel to use for a SHMCOLL_COPY_KERNEL value (nullptr or "" means
// automatic) given a supportedMask().  When the request is unknown or
// unsupported the result is the widest supported kernel and *warning (if
// given) receives the one-line message to print.
Kernel choose(const char* request, unsigned mask, std::string* warning);

}  // namespace shmcoll::copy::detail
