// The shared heap across fork() (shared_heap.h explains the design): the
// fork handlers, and the reclaim of frozen pages once no child holds them.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "os/shared_heap.h"

namespace shmcoll::os {

namespace {

[[noreturn]] void fatal(const char* msg) {
  (void)!write(2, msg, strlen(msg));
  abort();
}

// /proc/self/pagemap, one 64-bit entry per page.
constexpr uint64_t kPmPresent = 1ull << 63, kPmSwapped = 1ull << 62, kPmFile = 1ull << 61, kPmExclusive = 1ull << 56;

int openPagemap() { return ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC); }

// The entries of the `n` pages from `p`; false if the kernel refuses.
bool readPagemap(int fd, const char* p, uint64_t* out, uint64_t n) {
  const off_t at = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / SharedHeap::kPage * 8);
  uint64_t got = 0;
  while (got < n * 8) {
    ssize_t r = pread(fd, reinterpret_cast<char*>(out) + got, n * 8 - got, at + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    got += static_cast<uint64_t>(r);
  }
  return true;
}

// A page this process has written since the fork: its own copy (maybe
// swapped out), while the memfd's page holds only the snapshot.
bool ownCopy(uint64_t e) { return ((e & kPmPresent) && !(e & kPmFile)) || (e & kPmSwapped); }

// Threads in this process (/proc/self/stat, field 20); 0 if unknown.
long threadCount() {
  int fd = ::open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  const char* q = strrchr(buf, ')');  // the command name may hold anything
  if (!q) return 0;
  for (int field = 2; field < 20 && q; ++field) q = strchr(q + 1, ' ');
  return q ? strtol(q + 1, nullptr, 10) : 0;
}

// mremap(2)'s MREMAP_DONTUNMAP (Linux 5.7; for shared mappings 5.13), where
// the headers are older.
#ifdef MREMAP_DONTUNMAP
constexpr int kDontUnmap = MREMAP_DONTUNMAP;
#else
constexpr int kDontUnmap = 4;
#endif

// mremap(2) to a fixed address, straight to the kernel: libraries that hook
// the memory calls may pass on only mremap's first four arguments (UCX 1.13's,
// loaded by MPICH and Open MPI, does), which would move the range to address
// 0 instead of `to`.  MAP_FAILED on failure, as mremap.
void* remapFixed(void* from, size_t len, int flags, void* to) {
  const long r = syscall(SYS_mremap, from, len, len, flags | MREMAP_MAYMOVE | MREMAP_FIXED, to);
  return r == -1 ? MAP_FAILED : reinterpret_cast<void*>(r);
}

// The sweep of a multi-threaded parent's private part (SharedHeap::sweep):
// a step looks at up to 128 MiB of the memfd's pages (about 1 ms of
// /proc/self/pagemap here), at most every 100 ms while it finds copies, and
// up to 32 times less often after whole passes that found none.
constexpr uint64_t kSweepPages = 32768, kSweepEveryNs = 100000000, kSweepIdleMaxNs = 32 * kSweepEveryNs;

uint64_t nowNs() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1000000000ull + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace

void SharedHeap::prepareFork() {
  pthread_mutex_lock(&mu_);
  forkMode_ = kForkNothing;
  forkPipe_[0] = forkPipe_[1] = -1;
  // A private heap (a child's, or none): fork() makes its copy-on-write copy.
  if (!base_.load(std::memory_order_relaxed) || fd_ < 0) return;
  const uint64_t before = low_.load(std::memory_order_relaxed);
  const bool frozen = freeze();
  // Below `low` the child maps the memfd's pages copy-on-write, as this
  // process does: they stay until it is gone (even if an earlier reclaim let
  // them go, or nothing new was frozen now).
  if (low_.load(std::memory_order_relaxed) > 0) frozen_.store(true, std::memory_order_relaxed);
  if (frozen) {
    forkMode_ = kForkFrozen;
    lowMoved_ = low_.load(std::memory_order_relaxed) != before;
    return;
  }
  forkMode_ = kForkCopy;
  if (pipe2(forkPipe_, O_CLOEXEC) != 0) forkPipe_[0] = forkPipe_[1] = -1;
}

// Maps [low, top) of the memfd again copy-on-write, in place, and moves
// `low` up to `top` (the header explains why).  No page is copied or even
// touched: the old mapping's page table entries go, and the pages come back
// by faults, as they would after fork() for anonymous memory.
bool SharedHeap::freeze() {
  char* b = base_.load(std::memory_order_relaxed);
  const uint64_t lo = low_.load(std::memory_order_relaxed);
  if (!sentinel_) {
    void* s = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) return false;
    sentinel_ = static_cast<char*>(s);
    sentinel_[0] = 1;  // a real page, which fork() shares copy-on-write with the child
  }
  if (top_ <= lo) return true;  // nothing in use in the shared part
  const uint64_t len = top_ - lo;
  // Mapped elsewhere first, then moved over the shared mapping in one step,
  // so that a refusal leaves the heap as it was.
  void* tmp = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_NORESERVE, fd_, static_cast<off_t>(lo));
  if (tmp == MAP_FAILED) return false;
  // The shared mapping moves aside first (parking), so the move below
  // replaces only an empty mapping; where it cannot, the move replaces the
  // shared mapping in place, the kernel tearing down its page tables.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  const bool parked = parkShared(lo, len);
  if (remapFixed(tmp, len, 0, b + lo) == MAP_FAILED) {
    if (parked && remapFixed(park_ + lo, len, 0, b + lo) == MAP_FAILED)
      fatal("shmcoll: fork(): cannot put the malloc heap back\n");
    if (parked) {
      reservePark(lo, len);
      parkedHi_ = lo;
      if (parkedHi_ == parkedLo_) parkedLo_ = parkedHi_ = 0;
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    munmap(tmp, len);
    return false;
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (thp_) (void)madvise(b + lo, len, MADV_HUGEPAGE);
  low_.store(top_, std::memory_order_release);
  return true;
}

// Parking.  Replacing the shared mapping of [low, top) in place costs the
// kernel a walk over its page tables, every entry dropped (about as long as
// fork() copying the entries of anonymous memory as large), and the pages
// come back by faults after the heap is whole again.  Moved aside instead
// (mremap at the same offset within 2 MiB keeps whole page tables, which move
// as they are), the mapping costs nothing to freeze, is not inherited
// (MADV_DONTFORK), and moves back in one step when the heap is whole
// again, its entries intact.  With MREMAP_DONTUNMAP (shared mappings since
// Linux 5.13) the range stays mapped, empty, until the copy-on-write mapping
// replaces it: another thread touching it meanwhile faults the memfd's page
// in, as before the move.  Without it the range is not mapped between the
// two moves, so then only where no other thread runs (signals are blocked
// meanwhile).  The parked ranges must stay contiguous, [parkedLo_,
// parkedHi_), to move back in one step.
bool SharedHeap::parkShared(uint64_t off, uint64_t len) {
  if (parkedHi_ != parkedLo_ && parkedHi_ != off) return false;
  char* b = base_.load(std::memory_order_relaxed);
  if (!park_) {
    constexpr uint64_t kAlign = 2ull << 20;
    const uint64_t mapLen = reserve_ + kAlign;
    void* m = mmap(nullptr, mapLen, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) return false;
    parkMap_ = static_cast<char*>(m);
    parkMapLen_ = mapLen;
    // park_ = b (mod 2 MiB), within the reservation
    const uintptr_t want = reinterpret_cast<uintptr_t>(b) % kAlign, at = reinterpret_cast<uintptr_t>(m);
    park_ = parkMap_ + ((want + kAlign - at % kAlign) % kAlign);
    (void)madvise(parkMap_, parkMapLen_, MADV_DONTFORK);
  }
  if (remapFixed(b + off, len, kDontUnmap, park_ + off) == MAP_FAILED &&
      (threadCount() != 1 || remapFixed(b + off, len, 0, park_ + off) == MAP_FAILED))
    return false;
  (void)madvise(park_ + off, len, MADV_DONTFORK);
  if (parkedHi_ == parkedLo_) parkedLo_ = off;
  parkedHi_ = off + len;
  return true;
}

// [off, off + len) of the parking range reserved again (after a move out of it).
void SharedHeap::reservePark(uint64_t off, uint64_t len) {
  if (mmap(park_ + off, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
    fatal("shmcoll: cannot reserve address space for the malloc heap after fork()\n");
  (void)madvise(park_ + off, len, MADV_DONTFORK);
}

// Moves the parked shared mapping of [0, len) back over the heap; false when
// it is not all parked or the kernel refuses (nothing moved then).
bool SharedHeap::unpark(uint64_t len) {
  if (len == 0 || parkedLo_ != 0 || parkedHi_ != len) return false;
  if (remapFixed(park_, len, 0, base_.load(std::memory_order_relaxed)) == MAP_FAILED)
    return false;
  reservePark(0, len);
  parkedLo_ = parkedHi_ = 0;
  return true;
}

// What is parked and not moved back: given up (the memfd keeps the pages).
void SharedHeap::dropParked() {
  if (parkedHi_ == parkedLo_) return;
  reservePark(parkedLo_, parkedHi_ - parkedLo_);
  parkedLo_ = parkedHi_ = 0;
}

void SharedHeap::afterForkParent() {
  if (forkPipe_[0] >= 0) {
    close(forkPipe_[1]);
    char c;
    while (read(forkPipe_[0], &c, 1) < 0 && errno == EINTR) {
    }
    close(forkPipe_[0]);
    forkPipe_[0] = forkPipe_[1] = -1;
  }
  const bool moved = forkMode_ == kForkFrozen && lowMoved_;
  forkMode_ = kForkNothing;
  pthread_mutex_unlock(&mu_);
  if (moved && lowHook_) lowHook_();
}

void SharedHeap::afterForkChild() {
  const int r = forkPipe_[0], w = forkPipe_[1];
  forkPipe_[0] = forkPipe_[1] = -1;
  if (r >= 0) close(r);
  char* b = base_.load(std::memory_order_relaxed);
  if (forkMode_ == kForkCopy) {
    detachAfterFork();
  } else if (b && fd_ >= 0) {
    // Below `low` the pages are copy-on-write already; the shared part
    // above it stays the parent's: fresh anonymous memory here instead.
    const uint64_t lo = low_.load(std::memory_order_relaxed);
    if (reserve_ > lo && mmap(b + lo, reserve_ - lo, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0) == MAP_FAILED)
      fatal("shmcoll: fork(): cannot give the child its own heap\n");
    close(fd_);
    fd_ = -1;
  }
  forkMode_ = kForkNothing;
  frozen_.store(false, std::memory_order_relaxed);  // (the parent's business)
  stale_.store(false, std::memory_order_relaxed);
  park_ = parkMap_ = nullptr;                       // (never inherited)
  parkMapLen_ = parkedLo_ = parkedHi_ = 0;
  // The only thread here; the lock was held across fork() (also when the
  // heap was private already, in a child's child).
  pthread_mutex_init(&mu_, nullptr);
  if (w >= 0) {
    char c = 1;
    (void)!write(w, &c, 1);
    close(w);
  }
}

// The fallback when freeze() was refused: copy what is in use above `low`
// into anonymous memory and move it over the shared mapping; the rest of the
// reserve becomes fresh anonymous memory.
void SharedHeap::detachAfterFork() {
  char* b = base_.load(std::memory_order_relaxed);
  if (!b || fd_ < 0) return;
  const uint64_t lo = low_.load(std::memory_order_relaxed) < top_ ? low_.load(std::memory_order_relaxed) : top_;
  const uint64_t len = top_ - lo;
  bool moved = len == 0;
  if (!moved) {
    void* tmp = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (tmp != MAP_FAILED) {
      std::memcpy(tmp, b + lo, len);
      moved = remapFixed(tmp, len, 0, b + lo) != MAP_FAILED;
      if (!moved) munmap(tmp, len);
    }
  }
  // Out of memory for the copy: at least keep the child's writes to itself
  // (copy-on-write over the memfd).
  if (!moved) (void)mmap(b + lo, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd_, static_cast<off_t>(lo));
  if (reserve_ > top_)
    (void)mmap(b + top_, reserve_ - top_, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  close(fd_);
  fd_ = -1;
}

void SharedHeap::poll(bool now) {
  if (!frozen_.load(std::memory_order_relaxed) && !stale_.load(std::memory_order_relaxed)) return;
  if (pthread_mutex_trylock(&mu_) != 0) return;
  tidy(now);
  pthread_mutex_unlock(&mu_);
}

// Under the lock: the reclaim while a child may hold frozen pages, else the
// sweep of what a reclaim left private.
void SharedHeap::tidy(bool now) {
  if (frozen_.load(std::memory_order_relaxed)) {
    reclaimFrozen(now);
  } else if (stale_.load(std::memory_order_relaxed)) {
    sweep(false);
  }
}

bool SharedHeap::reclaimNow() {
  pthread_mutex_lock(&mu_);
  const bool done = !frozen_.load(std::memory_order_relaxed) || reclaimFrozen(true);
  if (done && stale_.load(std::memory_order_relaxed)) sweep(true);
  pthread_mutex_unlock(&mu_);
  return done;
}

// Frozen pages, once no child holds them.  After a fork the memfd below `low`
// keeps the snapshot that parent and children share; the parent's writes go
// to copies of its own.  While a child may read the snapshot, it stays (the
// cost of fork() with anonymous memory too).  Once the sentinel page is
// exclusive again (every child has exited or called exec), the snapshot
// pages that nobody needs go:
//  - single-threaded (the usual MPI rank), the heap is made whole again
//    ("thaw"): the pages the parent copied are written back into the memfd,
//    and [0, low) is mapped shared again (low = 0; the runtime republishes
//    it), so later writes copy nothing and peers read every buffer again.
//    Signals are blocked meanwhile (a handler's write could be lost).
//  - with other threads, a write of theirs between the write-back and the
//    new mapping would be lost: only the memfd's pages under the parent's
//    own copies and under freed memory go (hole punched), and the part
//    below `low` stays private, swept from time to time (sweep()).
// Runs under the lock from allocate(), release() and poll() (which the
// runtime calls as it sends from a large buffer, and the wait() wrappers of
// interpose/malloc.cc once a child was reaped), looking at the sentinel at
// most every 10 ms unless `force`.  True when nothing is held any more.
bool SharedHeap::reclaimFrozen(bool force) {
  if (fd_ < 0 || !sentinel_) return false;
  if (!force) {
    const uint64_t now = nowNs();
    if (now < nextCheckNs_) return false;
    nextCheckNs_ = now + 10000000;
  }
  const int pm = openPagemap();
  if (pm < 0) return false;
  uint64_t e = 0;
  const bool alone = readPagemap(pm, sentinel_, &e, 1) && (e & kPmPresent) && (e & kPmExclusive);
  if (!alone) {
    close(pm);
    return false;
  }
  const uint64_t lo = low_.load(std::memory_order_relaxed);
  const uint64_t end = top_ < lo ? top_ : lo;
  frozen_.store(false, std::memory_order_relaxed);
  if (threadCount() == 1 && makeWhole(pm, lo, end)) {
    close(pm);
    wholeAgain(lo, end);
    return true;
  }
  punchCopied(pm, 0, end);
  close(pm);
  dropSnapshot(end, lo - end, true);
  dropFreeBodies(end, true);
  if (lo > 0) {
    stale_.store(true, std::memory_order_relaxed);
    sweepAt_ = 0;
    sweepEveryNs_ = kSweepEveryNs;
    sweepFound_ = false;
    nextSweepNs_ = nowNs() + kSweepEveryNs;
  }
  return true;
}

// After makeWhole(): above the top, and the bodies of freed blocks (their
// pages were given back, or may be: their contents do not matter), nobody
// needs the snapshot (a free block's first page holds its header: kept);
// `low` goes to 0 and the runtime republishes it.  (The private part's
// remains are dropped the same way, with `remap`, in reclaimFrozen().)
void SharedHeap::wholeAgain(uint64_t lo, uint64_t end) {
  dropSnapshot(end, lo - end, false);
  dropFreeBodies(end, false);
  stale_.store(false, std::memory_order_relaxed);  // (also a sweep left from a reclaim before this fork)
  low_.store(0, std::memory_order_release);
  if (lowHook_) lowHook_();
}

// Writes back the pages copied in [0, end) and maps [0, lo) shared again,
// signals blocked (a handler's write could be lost); false, the mapping
// unchanged, if the kernel refused.  Only where no other thread runs.
bool SharedHeap::makeWhole(int pm, uint64_t lo, uint64_t end) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  const bool whole = thaw(pm, end) && (unpark(lo) || mapShared(0, lo));
  if (whole) dropParked();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return whole;
}

// The private part of a multi-threaded parent's heap after a reclaim, while
// no child holds it (never while frozen_: a new child reads the memfd below
// `low` again).  A page live at the fork that the parent first writes now
// is copied while the memfd keeps its snapshot: held twice.  A sweep looks
// at the memfd's pages (SEEK_DATA: punched ones are skipped) under the
// parent's own copies and punches them, at most kSweepPages per step and a
// step at most every sweepEveryNs_ unless `force` (a whole pass then); and
// once the parent is alone, the heap is made whole as in reclaimFrozen().
void SharedHeap::sweep(bool force) {
  const uint64_t now = nowNs();
  if (!force && now < nextSweepNs_) return;
  const int pm = openPagemap();
  if (pm < 0) return;
  const uint64_t lo = low_.load(std::memory_order_relaxed);
  const uint64_t end = top_ < lo ? top_ : lo;
  if (threadCount() == 1 && makeWhole(pm, lo, end)) {
    close(pm);
    wholeAgain(lo, end);
    return;
  }
  uint64_t at = sweepAt_ < end ? sweepAt_ : 0, budget = force ? end : kSweepPages * kPage;
  while (budget > 0 && at < end) {
    const off_t d = lseek(fd_, static_cast<off_t>(at), SEEK_DATA);
    if (d < 0 && errno == ENXIO) break;  // no data from `at` on
    const uint64_t from = d < 0 ? at : static_cast<uint64_t>(d) & ~(kPage - 1);
    if (from >= end) break;
    const off_t h = d < 0 ? -1 : lseek(fd_, d, SEEK_HOLE);
    uint64_t to = h < 0 ? end : (static_cast<uint64_t>(h) + kPage - 1) & ~(kPage - 1);
    if (to > end) to = end;
    if (to - from > budget) to = from + budget;
    if (punchCopied(pm, from, to)) sweepFound_ = true;
    budget -= to - from;
    at = to;
  }
  close(pm);
  const bool passEnded = budget > 0 || at >= end;
  sweepAt_ = passEnded ? 0 : at;
  if (sweepFound_) {
    sweepEveryNs_ = kSweepEveryNs;
  } else if (passEnded && sweepEveryNs_ < kSweepIdleMaxNs) {
    sweepEveryNs_ *= 2;
  }
  if (passEnded) sweepFound_ = false;
  nextSweepNs_ = now + sweepEveryNs_;
}

// Punches [off, off + len) out of the memfd; with `remap`, this process's
// view of it becomes fresh anonymous memory (else a write to the hole would
// fill the memfd again, besides making a private copy).
void SharedHeap::dropSnapshot(uint64_t off, uint64_t len, bool remap) {
  if (len == 0) return;
  (void)fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off), static_cast<off_t>(len));
  if (remap)
    (void)mmap(base_.load(std::memory_order_relaxed) + off, len, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
}

namespace {
// Calls run(from, len) for each run of pages in [from, end) of the heap at `b`
// that the parent holds its own copy of (pagemap `pm`), in address order;
// false when the pagemap cannot be read or run() returns false.
template <class Run>
bool forEachCopiedRun(int pm, const char* b, uint64_t from, uint64_t end, Run&& run) {
  constexpr uint64_t kBatch = 512;
  uint64_t ent[kBatch];
  for (uint64_t off = from; off < end;) {
    const uint64_t n = (end - off) / SharedHeap::kPage < kBatch ? (end - off) / SharedHeap::kPage : kBatch;
    if (!readPagemap(pm, b + off, ent, n)) return false;
    for (uint64_t i = 0; i < n;) {
      if (!ownCopy(ent[i])) {
        ++i;
        continue;
      }
      uint64_t j = i;
      while (j < n && ownCopy(ent[j])) ++j;
      if (!run(off + i * SharedHeap::kPage, (j - i) * SharedHeap::kPage)) return false;
      i = j;
    }
    off += n * SharedHeap::kPage;
  }
  return true;
}
}  // namespace

// Writes the pages the parent copied in [0, end) back into the memfd; false
// if the kernel refused (nothing is remapped then).
bool SharedHeap::thaw(int pm, uint64_t end) {
  char* b = base_.load(std::memory_order_relaxed);
  return forEachCopiedRun(pm, b, 0, end, [&](uint64_t from, uint64_t len) {
    for (uint64_t done = 0; done < len;) {
      ssize_t w = pwrite(fd_, b + from + done, len - done, static_cast<off_t>(from + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return false;
      done += static_cast<uint64_t>(w);
    }
    return true;
  });
}

// Punches the memfd's pages under the parent's own copies in [from, end);
// whether there were any.
bool SharedHeap::punchCopied(int pm, uint64_t from, uint64_t end) {
  bool any = false;
  forEachCopiedRun(pm, base_.load(std::memory_order_relaxed), from, end, [&](uint64_t run, uint64_t len) {
    (void)fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(run), static_cast<off_t>(len));
    any = true;
    return true;
  });
  return any;
}

// Maps [off, off + len) of the memfd shared again, in place (elsewhere
// first, then moved over in one step); false if the kernel refused the
// mapping (the old one is intact then).
bool SharedHeap::mapShared(uint64_t off, uint64_t len) {
  if (len == 0) return true;
  char* b = base_.load(std::memory_order_relaxed);
  void* tmp = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, static_cast<off_t>(off));
  if (tmp == MAP_FAILED) return false;
  if (remapFixed(tmp, len, 0, b + off) == MAP_FAILED)
    fatal("shmcoll: cannot map the malloc heap again after fork()\n");
  if (thp_) (void)madvise(b + off, len, MADV_HUGEPAGE);
  return true;
}

}  // namespace shmcoll::os
