// Copy kernel dispatch: picks one kernel at load time and sends copy() to it.
//
// How it works: copy() is a single indirect tail call through g_fn.  g_fn is
// constant-initialised to a resolver, so a copy() made by another static
// constructor before ours has run still works; a load-time constructor runs
// the resolver once: it reads cpuid (__builtin_cpu_supports) and XCR0 (xgetbv:
// did the OS enable the YMM / ZMM register state?), honours
// SHMCOLL_COPY_KERNEL, and stores the chosen kernel in g_fn.  After that the
// hot path is `jmp *g_fn` plus the kernel's size-class compares.
#include "copy/copy.h"

#include <strings.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "common/settings.h"
#include "copy/kernels.h"

#if SHMCOLL_COPY_X86
#include <cpuid.h>
#endif

namespace shmcoll::copy {

namespace detail {
// Replaced at load time by defaultNtThreshold() or SHMCOLL_NT_THRESHOLD.
size_t ntThresholdBytes = size_t{4} << 20;
// Replaced at load time (repMinFromEnv()) on CPUs with ERMS.
size_t repMinBytes = SIZE_MAX;
uintptr_t repAlignMask = 0;
bool prefetchW = false;
}  // namespace detail

namespace {

struct KernelInfo {
  const char* name;
  CopyFn fn;
};

// Indexed by Kernel.
constexpr KernelInfo kKernels[] = {
    {"scalar", detail::copyScalar},
#if SHMCOLL_COPY_X86
    {"sse2", detail::copySse2},
    {"avx2", detail::copyAvx2},
    {"avx512", detail::copyAvx512},
#else
    {"sse2", nullptr},
    {"avx2", nullptr},
    {"avx512", nullptr},
#endif
};
constexpr int kNumKernels = 4;

unsigned bit(Kernel k) { return 1u << static_cast<int>(k); }

#if SHMCOLL_COPY_X86
// XCR0: the register state the OS saves on context switch (0 without OSXSAVE).
uint64_t osEnabledState() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE)) return 0;
  uint32_t lo, hi;
  asm volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (uint64_t{hi} << 32) | lo;
}
#endif

unsigned detectSupported() {
  unsigned mask = bit(Kernel::kScalar);
#if SHMCOLL_COPY_X86
  __builtin_cpu_init();  // we may run before libgcc's own constructor
  constexpr uint64_t kXmmYmm = 0x6;   // XCR0 bits 1-2: SSE and AVX state
  constexpr uint64_t kZmm = 0xe0;     // XCR0 bits 5-7: opmask, ZMM_Hi256, Hi16_ZMM
  const uint64_t xcr0 = osEnabledState();
  if (__builtin_cpu_supports("sse2")) mask |= bit(Kernel::kSse2);
  const bool avx2 = __builtin_cpu_supports("avx2") && (xcr0 & kXmmYmm) == kXmmYmm;
  if (avx2) mask |= bit(Kernel::kAvx2);
  if (avx2 && __builtin_cpu_supports("avx512f") && (xcr0 & kZmm) == kZmm) mask |= bit(Kernel::kAvx512);
#endif
  return mask;
}

void resolveThenCopy(void* dst, const void* src, size_t n);

std::atomic<CopyFn> g_fn{resolveThenCopy};
std::atomic<Kernel> g_kernel{Kernel::kScalar};
unsigned g_supported = 1;  // bit(kScalar) until init() ran

bool canRun(Kernel k, unsigned mask) {
  int i = static_cast<int>(k);
  return i >= 0 && i < kNumKernels && (mask & (1u << i));
}

Kernel widest(unsigned mask) {
  for (int k = kNumKernels - 1; k > 0; --k)
    if (mask & (1u << k)) return static_cast<Kernel>(k);
  return Kernel::kScalar;
}

void install(Kernel k) {
  g_kernel.store(k, std::memory_order_relaxed);
  g_fn.store(kKernels[static_cast<int>(k)].fn, std::memory_order_relaxed);
}

// Tunable: SHMCOLL_NT_THRESHOLD, bytes with k/m/g suffix; 0 disables
// non-temporal stores; else the decision table's nt_threshold for the job's
// size (SHMCOLL_SIZE, set by shmrun; 1 outside it); default
// defaultNtThreshold().
size_t ntThresholdFromEnv() {
  const auto ranks =
      static_cast<uint32_t>(std::clamp<long long>(settings::integer(settings::Id::kJobSize), 1, UINT32_MAX));
  const uint64_t v =
      settings::tuned(settings::Id::kNtThreshold, nullptr, ranks, detail::defaultNtThreshold());
  return v == 0 || v > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(v);
}

// ERMS: cpuid leaf 7, EBX bit 9.
bool detectErms() {
#if SHMCOLL_COPY_X86
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 9));
#else
  return false;
#endif
}
bool g_erms = false;
// SHMCOLL_COPY_REP_SHARED_MIN on CPUs with ERMS, else SIZE_MAX (RepScope).
size_t g_repSharedMin = SIZE_MAX;

// PREFETCHW: cpuid 0x80000001, ECX bit 8 (3DNowPrefetch; every AMD64 CPU,
// Intel from Broadwell).  SHMCOLL_PREFETCHW=0 turns its use off.
bool detectPrefetchW() {
#if SHMCOLL_COPY_X86
  unsigned a, b, c, d;
  return __get_cpuid(0x80000001, &a, &b, &c, &d) && (c & (1u << 8)) && settings::flag(settings::Id::kPrefetchW);
#else
  return false;
#endif
}

// Tunable: SHMCOLL_COPY_REP_MIN, bytes with k/m/g suffix; 0 disables `rep
// movsb`.  Why 32 KiB: below it a copy's source and destination can both sit
// in L1 (48 KiB on the development machine), where the vector loop is faster
// (16 KiB hot in L1: 94 GB/s loop, 71 GB/s rep movsb); from 32 KiB up `rep
// movsb` wins whether the data is in L2 (64 KiB: 94 vs 75 GB/s, 128 KiB: 104
// vs 79) or in L3 (512 KiB: 50 vs 42, 2 MiB: 50 vs 42), because it writes
// whole destination lines without reading them first.  Measured on the AMD
// EPYC (Zen 5) VM of docs/perf-log/notebook.md, AVX-512 kernel, alignments 0/0 and
// 3/17 alike; glibc's memcpy, which Open MPI and MPICH use, switches to `rep
// movsb` on this CPU from 2 KiB.
size_t repMinFromEnv() {
  size_t v = settings::size(settings::Id::kCopyRepMin);
  return v == 0 ? SIZE_MAX : v;
}

// SHMCOLL_COPY_REP_ALIGN.  Why 32 on AMD family 19h: on a Zen 4 VM (family
// 19h, model 11h) `rep movsb` of 1-4 MiB hot in cache took 43-44 GB/s with
// the destination 16 bytes out of step with the source and 46-47 with 3/1
// (64-256 KiB: 53-54), against 48-49 (57-58) for the vector loop; in step (0,
// or 32 bytes apart) it took 50, the loop 49 (docs/perf-log/notebook.md).
// malloc's large blocks start 16 bytes into a page, so a copy between one and
// the segment's aligned slots is often 16 bytes out of step.  The Zen 5 VM of
// repMinFromEnv() showed no such difference (alignments 3/17 as 0/0).
bool slowMisalignedRep() {
#if SHMCOLL_COPY_X86
  __builtin_cpu_init();
  return __builtin_cpu_is("amdfam19h");
#else
  return false;
#endif
}

uintptr_t repAlignFromEnv() {
  switch (settings::choice(settings::Id::kCopyRepAlign)) {
    case 1: return 0;   // any
    case 2: return 31;  // 32
    default: return slowMisalignedRep() ? 31 : 0;
  }
}

void initOnce() {
  g_supported = detectSupported();
  g_erms = detectErms();
  detail::prefetchW = detectPrefetchW();
  __atomic_store_n(&detail::ntThresholdBytes, ntThresholdFromEnv(), __ATOMIC_RELAXED);
  if (g_erms) {
    __atomic_store_n(&detail::repMinBytes, repMinFromEnv(), __ATOMIC_RELAXED);
    const size_t shared = settings::size(settings::Id::kCopyRepSharedMin);
    g_repSharedMin = shared == 0 ? SIZE_MAX : shared;
  }
  __atomic_store_n(&detail::repAlignMask, repAlignFromEnv(), __ATOMIC_RELAXED);
  std::string warning;
  Kernel k = detail::choose(settings::raw(settings::Id::kCopyKernel), g_supported, &warning);
  if (!warning.empty()) fprintf(stderr, "%s\n", warning.c_str());
  install(k);
}

void init() {
  static const bool done = (initOnce(), true);
  (void)done;
}

__attribute__((constructor)) void initAtLoad() { init(); }

void resolveThenCopy(void* dst, const void* src, size_t n) {
  init();
  g_fn.load(std::memory_order_relaxed)(dst, src, n);
}

// Counts the CPUs in a sysfs list such as "0-7,64-71"; 0 if malformed.
unsigned countCpuList(const char* s) {
  unsigned count = 0;
  while (*s && *s != '\n') {
    char* end;
    unsigned long lo = std::strtoul(s, &end, 10), hi = lo;
    if (end == s) return 0;
    s = end;
    if (*s == '-') {
      hi = std::strtoul(s + 1, &end, 10);
      if (end == s + 1 || hi < lo) return 0;
      s = end;
    }
    count += static_cast<unsigned>(hi - lo + 1);
    if (*s == ',') ++s;
  }
  return count;
}

bool readLine(const std::string& path, char* buf, size_t len) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return false;
  bool ok = std::fgets(buf, static_cast<int>(len), f) != nullptr;
  std::fclose(f);
  if (ok) buf[std::strcspn(buf, "\n")] = '\0';
  return ok;
}

}  // namespace

namespace detail {

// Non-temporal stores pay off once the destination would not stay in cache
// anyway: then they skip the read-for-ownership of every destination line and
// leave the cache to the rest of the job.  Below that they lose, doubly so
// here, because the bytes a rank copies into the segment are read by another
// rank soon after and should still be in the shared L3 then.  So the default
// is 3/4 of this CPU's share of the last-level cache (L3 size / CPUs sharing
// it, from sysfs; sysconf's figure is unreliable in VMs: it reported 320 MiB
// for a 32 MiB L3 on the development machine), clamped to [1 MiB, 64 MiB];
// 4 MiB when sysfs says nothing.
//
// Measured (perf/gbench/copy_bench, nt/ and nt_then_read/, AVX-512 kernel,
// AMD EPYC Zen 4 VM, 32 MiB L3 shared by 2 vCPUs, so a 12 MiB default):
//   copy alone          regular / NT   8 MiB: 28 / 23 GB/s   16 MiB: 13 / 20 GB/s
//   copy + read back    regular / NT   4 MiB: 17 / 10.5      8 MiB: 7.6 / 7.4
//                                      16 MiB: 5.8 / 6.1
// i.e. the crossover lies between 8 and 16 MiB, where the formula puts it;
// below it NT stores cost up to 2x (and 2x again for the reader).
size_t defaultNtThreshold() {
  constexpr size_t kFallback = size_t{4} << 20;
  const std::string base = "/sys/devices/system/cpu/cpu0/cache/index";
  for (int i = 0; i < 10; ++i) {
    char level[32], size[32], shared[256];
    std::string dir = base + std::to_string(i) + "/";
    if (!readLine(dir + "level", level, sizeof level)) break;
    if (std::strcmp(level, "3") != 0) continue;
    size_t bytes;
    if (!readLine(dir + "size", size, sizeof size) || settings::parseSize(size, &bytes) != settings::Parsed::kOk ||
        bytes == 0)
      break;
    unsigned cpus = readLine(dir + "shared_cpu_list", shared, sizeof shared) ? countCpuList(shared) : 0;
    size_t share = bytes / (cpus ? cpus : 1) / 4 * 3;
    constexpr size_t kMin = size_t{1} << 20, kMax = size_t{64} << 20;
    return share < kMin ? kMin : share > kMax ? kMax : share;
  }
  return kFallback;
}

unsigned supportedMask() {
  init();
  return g_supported;
}

bool hasErms() {
  init();
  return g_erms;
}

Kernel best() {
  init();
  return widest(g_supported);
}

Kernel choose(const char* request, unsigned mask, std::string* warning) {
  Kernel fallback = widest(mask);
  if (!request || !*request) return fallback;
  Kernel k;
  char buf[256];
  if (!parseKernel(request, &k)) {
    snprintf(buf, sizeof buf, "shmcoll: SHMCOLL_COPY_KERNEL=%s names no kernel (avx512, avx2, sse2, scalar); using %s",
             request, name(fallback));
  } else if (!canRun(k, mask)) {
    snprintf(buf, sizeof buf, "shmcoll: SHMCOLL_COPY_KERNEL=%s: this CPU or OS cannot run it; using %s", request,
             name(fallback));
  } else {
    return k;
  }
  if (warning) *warning = buf;
  return fallback;
}

}  // namespace detail

void copy(void* dst, const void* src, size_t n) { g_fn.load(std::memory_order_relaxed)(dst, src, n); }

Kernel active() {
  init();
  return g_kernel.load(std::memory_order_relaxed);
}

bool supported(Kernel k) {
  init();
  return canRun(k, g_supported);
}

bool select(Kernel k) {
  if (!supported(k)) return false;
  install(k);
  return true;
}

const char* name(Kernel k) {
  int i = static_cast<int>(k);
  return i >= 0 && i < kNumKernels ? kKernels[i].name : "unknown";
}

bool parseKernel(const char* s, Kernel* out) {
  if (!s) return false;
  for (int i = 0; i < kNumKernels; ++i) {
    if (strcasecmp(s, kKernels[i].name) == 0) {
      *out = static_cast<Kernel>(i);
      return true;
    }
  }
  return false;
}

CopyFn function(Kernel k) { return supported(k) ? kKernels[static_cast<int>(k)].fn : nullptr; }

NtScope::NtScope(size_t bytes) {
  if (bytes == 0) return;
  saved_ = __atomic_load_n(&detail::ntThresholdBytes, __ATOMIC_RELAXED);
  active_ = bytes < saved_;
  if (active_) __atomic_store_n(&detail::ntThresholdBytes, bytes, __ATOMIC_RELAXED);
}

NtScope::~NtScope() {
  if (active_) __atomic_store_n(&detail::ntThresholdBytes, saved_, __ATOMIC_RELAXED);
}

size_t ntThreshold() {
  init();
  return __atomic_load_n(&detail::ntThresholdBytes, __ATOMIC_RELAXED);
}

void setNtThreshold(size_t bytes) {
  init();
  __atomic_store_n(&detail::ntThresholdBytes, bytes == 0 ? SIZE_MAX : bytes, __ATOMIC_RELAXED);
}

// Why 8 KiB (RepScope): at 2 ranks on the Zen 5 VM of docs/PERFORMANCE.md,
// buffers outside the shared heap (so every block crossed a mailbox slot),
// 16 KiB MPI_Bcast took 4.6 us with the vector loop and 1.9 with `rep movsb`
// from 8 KiB, MPI_Alltoall 4.7 and 2.5, MPI_Reduce 4.4 and 1.9; from 2 KiB
// gained no more.  glibc's memcpy takes `rep movsb` from 2 KiB on that CPU
// and from 8 KiB on Intel's with AVX-512.
RepScope::RepScope() {
  init();
  saved_ = __atomic_load_n(&detail::repMinBytes, __ATOMIC_RELAXED);
  active_ = saved_ != SIZE_MAX && g_repSharedMin < saved_;
  if (active_) __atomic_store_n(&detail::repMinBytes, g_repSharedMin, __ATOMIC_RELAXED);
}

RepScope::~RepScope() {
  if (active_) __atomic_store_n(&detail::repMinBytes, saved_, __ATOMIC_RELAXED);
}

size_t repSharedMin() {
  init();
  return g_repSharedMin;
}

size_t repMin() {
  init();
  return __atomic_load_n(&detail::repMinBytes, __ATOMIC_RELAXED);
}

bool setRepMin(size_t bytes) {
  init();
  if (!g_erms) return false;
  __atomic_store_n(&detail::repMinBytes, bytes == 0 ? SIZE_MAX : bytes, __ATOMIC_RELAXED);
  return true;
}

uintptr_t repAlign() {
  init();
  return __atomic_load_n(&detail::repAlignMask, __ATOMIC_RELAXED);
}

void setRepAlign(uintptr_t mask) {
  init();
  __atomic_store_n(&detail::repAlignMask, mask, __ATOMIC_RELAXED);
}

}  // namespace shmcoll::copy
