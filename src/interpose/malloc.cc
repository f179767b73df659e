// malloc and friends for programs linked with libshmcoll.so: large requests
// come from the shared heap (os/shared_heap.h), so that peers can copy out of
// them directly; everything else goes to glibc's allocator, whose entry
// points glibc exports as __libc_malloc and so on.  Also wait() and friends,
// which pass on to libc's and then let the heap reclaim what a fork froze
// (at the end of this file).
//
// Only libshmcoll.so contains this file (src/CMakeLists.txt): the launcher
// and the unit tests, linked with the internals, keep glibc's malloc.
//
// Its settings, SHMCOLL_SHARED_MALLOC (on/off), SHMCOLL_SHARED_MALLOC_MIN
// (smallest request served from the heap, at least 64k), _RESERVE (address
// space reserved for the heap; at most RLIMIT_FSIZE and a quarter of
// RLIMIT_AS, and under 1 GiB the heap stays off) and _KEEP (freed bytes kept
// resident for reuse), are declared with their defaults in
// common/settings.def.  This file reads them with getenv and the table's own
// allocation-free parser (common/settings_table.h), as it runs before
// anything else; a bad value reads as the default here, and MPI_Init, which
// checks every setting, fails on it.
//
// Nothing here may allocate through malloc before the heap is ready, or take
// the heap's lock on the path of a small request (pthread_atfork, called once
// while setting up, may itself call malloc).
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common/settings_table.h"
#include "os/shared_heap.h"

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
extern char** environ;
}

namespace {

using shmcoll::os::processHeap;
using shmcoll::os::SharedHeap;
using shmcoll::settings::Id;

constexpr uint64_t kFloor = 64 * 1024;  // never serve less than this from the heap

enum : int { kUnknown = 0, kOn = 1, kOff = 2 };
std::atomic<int> gState{kUnknown};
uint64_t gMin = shmcoll::settings::spec(Id::kSharedMallocMin).dflt;
pthread_mutex_t gInitMu = PTHREAD_MUTEX_INITIALIZER;

void forkPrepare() { processHeap().prepareFork(); }
void forkParent() { processHeap().afterForkParent(); }
void forkChild() { processHeap().afterForkChild(); }

// A setting's value (a flag as 0/1): the variable when it is valid, else the default.
uint64_t envValue(Id id) {
  const shmcoll::settings::Spec& sp = shmcoll::settings::spec(id);
  const char* text = getenv(sp.name);
  uint64_t v = 0;
  return text && *text && shmcoll::settings::parse(sp, text, &v) == shmcoll::settings::Parsed::kOk ? v : sp.dflt;
}

[[gnu::noinline, gnu::cold]] bool setUp() {
  // Before libc has set up the environment (the dynamic loader's own early
  // requests), decide nothing: glibc serves them.
  if (!environ) return false;
  pthread_mutex_lock(&gInitMu);
  if (gState.load(std::memory_order_relaxed) == kUnknown) {
    const bool want = envValue(Id::kSharedMalloc) != 0;
    const uint64_t min = envValue(Id::kSharedMallocMin);
    gMin = min < kFloor ? kFloor : min;
    bool ok = want && processHeap().open(envValue(Id::kSharedMallocReserve), envValue(Id::kSharedMallocKeep));
    if (ok) pthread_atfork(forkPrepare, forkParent, forkChild);
    gState.store(ok ? kOn : kOff, std::memory_order_release);
  }
  pthread_mutex_unlock(&gInitMu);
  return gState.load(std::memory_order_acquire) == kOn;
}

inline bool useHeap(size_t bytes) {
  if (bytes < kFloor) return false;
  int s = gState.load(std::memory_order_acquire);
  if (s == kUnknown) [[unlikely]]
    return setUp() && bytes >= gMin;
  return s == kOn && bytes >= gMin;
}

bool powerOfTwo(size_t a) { return a && !(a & (a - 1)); }

void* alignedAlloc(size_t align, size_t bytes) {
  if (useHeap(bytes) && align <= (64u << 20)) {
    if (void* p = processHeap().allocate(bytes, align, false)) return p;
  }
  return __libc_memalign(align, bytes);
}

using UsableFn = size_t (*)(void*);
UsableFn glibcUsable() {
  static std::atomic<UsableFn> fn{nullptr};
  UsableFn f = fn.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<UsableFn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
    fn.store(f, std::memory_order_release);
  }
  return f;
}

}  // namespace

#define SHMCOLL_MALLOC_API extern "C" __attribute__((visibility("default")))

SHMCOLL_MALLOC_API void* malloc(size_t bytes) {
  if (useHeap(bytes)) {
    if (void* p = processHeap().allocate(bytes, 64, false)) return p;
  }
  return __libc_malloc(bytes);
}

SHMCOLL_MALLOC_API void free(void* p) {
  if (!p) return;
  SharedHeap& h = processHeap();
  if (h.owns(p)) h.release(p);
  else __libc_free(p);
}

SHMCOLL_MALLOC_API void* calloc(size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (useHeap(bytes)) {
    if (void* p = processHeap().allocate(bytes, 64, true)) return p;
  }
  return __libc_calloc(n, size);
}

SHMCOLL_MALLOC_API void* realloc(void* p, size_t bytes) {
  SharedHeap& h = processHeap();
  if (!p) return malloc(bytes);
  if (!h.owns(p)) {
    // A glibc block that grows to heap size moves to the heap (glibc would
    // copy a block that small too, unless it can grow it where it is); a
    // large glibc block (from before the heap, or one the heap could not
    // hold) stays with glibc, which can move it without copying.
    if (useHeap(bytes)) {
      UsableFn f = glibcUsable();
      size_t have = f ? f(p) : SIZE_MAX;
      if (have < gMin) {
        if (void* q = processHeap().allocate(bytes, 64, false)) {
          std::memcpy(q, p, have < bytes ? have : bytes);
          __libc_free(p);
          return q;
        }
      }
    }
    return __libc_realloc(p, bytes);
  }
  if (bytes == 0) {
    h.release(p);
    return nullptr;
  }
  if (h.resizeInPlace(p, bytes)) return p;
  uint64_t have = h.usableSize(p);
  void* q = malloc(bytes);
  if (!q) return nullptr;
  std::memcpy(q, p, have < bytes ? have : bytes);
  h.release(p);
  return q;
}

SHMCOLL_MALLOC_API void* reallocarray(void* p, size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, bytes);
}

SHMCOLL_MALLOC_API int posix_memalign(void** out, size_t align, size_t bytes) {
  if (!powerOfTwo(align) || align % sizeof(void*)) return EINVAL;
  void* p = alignedAlloc(align, bytes);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

SHMCOLL_MALLOC_API void* aligned_alloc(size_t align, size_t bytes) {
  if (!powerOfTwo(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return alignedAlloc(align, bytes);
}

SHMCOLL_MALLOC_API void* memalign(size_t align, size_t bytes) {
  // glibc rounds an alignment that is no power of two up to one.
  if (align > (size_t{1} << 62)) {
    errno = EINVAL;
    return nullptr;
  }
  size_t a = 1;
  while (a < align) a <<= 1;
  return alignedAlloc(a, bytes);
}

SHMCOLL_MALLOC_API void* valloc(size_t bytes) { return alignedAlloc(static_cast<size_t>(sysconf(_SC_PAGESIZE)), bytes); }

SHMCOLL_MALLOC_API void* pvalloc(size_t bytes) {
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t rounded;
  if (__builtin_add_overflow(bytes, page - 1, &rounded)) {
    errno = ENOMEM;
    return nullptr;
  }
  rounded = rounded / page * page;
  return alignedAlloc(page, rounded ? rounded : page);
}

SHMCOLL_MALLOC_API size_t malloc_usable_size(void* p) {
  if (!p) return 0;
  SharedHeap& h = processHeap();
  if (h.owns(p)) return h.usableSize(p);
  UsableFn f = glibcUsable();
  return f ? f(p) : 0;
}

// wait() and friends, passed on to libc's: once a child has been reaped, the
// heap may give back at once the pages it froze when forking it
// (os/shared_heap.h), rather than at its next large malloc, free or send.
// (A program that writes its old buffers right after reaping a fork child
// would otherwise copy each page it writes.)
namespace {

template <class Fn>
Fn nextFn(std::atomic<Fn>& slot, const char* name) {
  Fn f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    slot.store(f, std::memory_order_release);
  }
  return f;
}

void reaped() {
  if (gState.load(std::memory_order_acquire) != kOn) return;
  const int saved = errno;
  processHeap().poll(true);
  errno = saved;
}

}  // namespace

SHMCOLL_MALLOC_API pid_t waitpid(pid_t pid, int* status, int options) {
  static std::atomic<pid_t (*)(pid_t, int*, int)> fn{nullptr};
  auto f = nextFn(fn, "waitpid");
  if (!f) return wait4(pid, status, options, nullptr);
  pid_t r = f(pid, status, options);
  if (r > 0) reaped();
  return r;
}

SHMCOLL_MALLOC_API pid_t wait(int* status) { return waitpid(-1, status, 0); }

SHMCOLL_MALLOC_API pid_t wait3(int* status, int options, struct rusage* usage) {
  return wait4(-1, status, options, usage);
}

SHMCOLL_MALLOC_API pid_t wait4(pid_t pid, int* status, int options, struct rusage* usage) {
  static std::atomic<pid_t (*)(pid_t, int*, int, struct rusage*)> fn{nullptr};
  auto f = nextFn(fn, "wait4");
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  pid_t r = f(pid, status, options, usage);
  if (r > 0) reaped();
  return r;
}

SHMCOLL_MALLOC_API int waitid(idtype_t idtype, id_t id, siginfo_t* info, int options) {
  static std::atomic<int (*)(idtype_t, id_t, siginfo_t*, int)> fn{nullptr};
  auto f = nextFn(fn, "waitid");
  if (!f) {
    errno = ENOSYS;
    return -1;
  }
  int r = f(idtype, id, info, options);
  if (r == 0 && info && info->si_pid > 0 && !(options & WNOWAIT)) reaped();
  return r;
}
