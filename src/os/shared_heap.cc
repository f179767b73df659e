#include "os/shared_heap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace shmcoll::os {

namespace {

constexpr uint64_t kBlockMagic = 0x73686d68656170ull;  // marks a block header
constexpr uint64_t kTagMagic = 0x9e3779b97f4a7c15ull;   // xor-ed with the user pointer

uint64_t roundUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

[[noreturn]] void corrupt(const char* what, const void* p) {
  // No allocation here: the heap may be the thing that is broken.
  char msg[160];
  int n = snprintf(msg, sizeof msg, "shmcoll: free(): %s (%p)\n", what, p);
  if (n > 0) (void)!write(2, msg, static_cast<size_t>(n) < sizeof msg ? static_cast<size_t>(n) : sizeof msg - 1);
  abort();
}

// Whether /sys/kernel/mm/transparent_hugepage/enabled reads "[always]"
// (read without allocating).
bool thpAlways() {
  int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return false;
  buf[n] = 0;
  return strstr(buf, "[always]") != nullptr;
}

}  // namespace

// Header at the start of every block (64 bytes).  The last 16 bytes are the
// free block's resident count, or -- when the user pointer directly follows
// the header -- the allocated block's tag.
struct SharedHeap::Block {
  uint64_t magic;
  uint64_t size;      // bytes, header included; a multiple of kPage
  uint64_t prevSize;  // size of the block just below, 0 for the first
  uint64_t isFree;
  Block* next;        // free list
  Block* prev;
  uint64_t resident;  // free blocks: bytes that may still hold pages
  uint64_t spare;
};

namespace {
// The 16 bytes just before every user pointer.
struct Tag {
  uint64_t back;   // user pointer - block start
  uint64_t magic;  // kTagMagic ^ user pointer
};
}  // namespace

bool SharedHeap::open(uint64_t reserve, uint64_t keepFree) {
  if (isOpen()) return true;
  int fd = memfd_create("shmcoll-heap", MFD_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return false;
  }
  reserve = roundUp(reserve, kPage);
  // Sizing a file past RLIMIT_FSIZE would raise SIGXFSZ: stay under it.
  struct rlimit lim;
  if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && reserve > lim.rlim_cur)
    reserve = lim.rlim_cur / kPage * kPage;
  // Under an address-space limit (ulimit -v, some batch systems) the
  // reservation counts in full: take at most a quarter of it.
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && reserve > lim.rlim_cur / 4)
    reserve = lim.rlim_cur / 4 / kPage * kPage;
  for (; reserve >= (1ull << 30); reserve /= 2) {
    if (ftruncate(fd, static_cast<off_t>(reserve)) != 0) continue;
    void* p = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    if (p == MAP_FAILED) continue;
    // Where ordinary anonymous memory gets transparent huge pages anyway
    // ("always"), ask for them here too, so large buffers do not lose them
    // by moving to the heap (it takes effect if shmem allows advice).
    thp_ = thpAlways();
    if (thp_) (void)madvise(p, reserve, MADV_HUGEPAGE);
    fd_ = fd;
    inode_ = static_cast<uint64_t>(st.st_ino);
    reserve_ = reserve;
    keepFree_ = keepFree;
    base_.store(static_cast<char*>(p), std::memory_order_release);
    return true;
  }
  close(fd);
  return false;
}

void SharedHeap::destroy() {
  char* b = base_.exchange(nullptr);
  if (b) munmap(b, reserve_);
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  if (sentinel_) munmap(sentinel_, kPage);
  sentinel_ = nullptr;
  if (parkMap_) munmap(parkMap_, parkMapLen_);
  park_ = parkMap_ = nullptr;
  parkMapLen_ = parkedLo_ = parkedHi_ = 0;
  low_.store(0, std::memory_order_relaxed);
  frozen_.store(false, std::memory_order_relaxed);
  stale_.store(false, std::memory_order_relaxed);
  sweepAt_ = nextSweepNs_ = 0;
  reserve_ = top_ = lastSize_ = inUse_ = cached_ = 0;
  freeList_ = nullptr;
}

SharedHeap::Block* SharedHeap::at(uint64_t off) const {
  return reinterpret_cast<Block*>(base_.load(std::memory_order_relaxed) + off);
}

uint64_t SharedHeap::offsetOf(const Block* b) const {
  return static_cast<uint64_t>(reinterpret_cast<const char*>(b) - base_.load(std::memory_order_relaxed));
}

SharedHeap::Block* SharedHeap::blockOf(const void* p) const {
  const char* q = static_cast<const char*>(p);
  const char* b = base_.load(std::memory_order_relaxed);
  if (!owns(p) || static_cast<uint64_t>(q - b) < kHeader || (reinterpret_cast<uintptr_t>(q) & 15)) return nullptr;
  const Tag* t = reinterpret_cast<const Tag*>(q - sizeof(Tag));
  if (t->magic != (kTagMagic ^ reinterpret_cast<uint64_t>(q))) return nullptr;
  if (t->back < kHeader || t->back > static_cast<uint64_t>(q - b)) return nullptr;
  Block* blk = reinterpret_cast<Block*>(const_cast<char*>(q) - t->back);
  if (offsetOf(blk) % kPage || blk->magic != kBlockMagic) return nullptr;
  return blk;
}

void SharedHeap::unlink(Block* b) {
  if (b->prev) b->prev->next = b->next;
  else freeList_ = b->next;
  if (b->next) b->next->prev = b->prev;
  b->next = b->prev = nullptr;
}

uint64_t SharedHeap::takeFree(Block* f) {
  unlink(f);
  cached_ -= f->resident;
  return f->resident;
}

void SharedHeap::pushFree(Block* b) {
  b->isFree = 1;
  b->prev = nullptr;
  b->next = freeList_;
  if (freeList_) freeList_->prev = b;
  freeList_ = b;
}

// Tells the block above `b` how long `b` is (or notes it as the last block).
void SharedHeap::setPrevSizeAfter(Block* b) {
  uint64_t end = offsetOf(b) + b->size;
  if (end < top_) at(end)->prevSize = b->size;
  else lastSize_ = b->size;
}

void SharedHeap::returnPages(uint64_t off, uint64_t len) {
  if (len == 0) return;
  char* b = base_.load(std::memory_order_relaxed);
  const uint64_t lo = fd_ >= 0 ? low_.load(std::memory_order_relaxed) : reserve_;
  if (off < lo) {
    // The private part: fresh anonymous memory in place (zero, and this
    // process's copies are gone).  A frozen page of the memfd stays while a
    // child may read it; else it goes too.
    const uint64_t n = len < lo - off ? len : lo - off;
    if (mmap(b + off, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) ==
        MAP_FAILED)
      std::memset(b + off, 0, n);
    if (fd_ >= 0 && !frozen_.load(std::memory_order_relaxed))
      (void)fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off), static_cast<off_t>(n));
    off += n;
    len -= n;
    if (len == 0) return;
  }
  // Punch the pages out of the memfd (the mapping stays; it reads as zero).
  char* p = b + off;
  const bool gone = fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(off),
                              static_cast<off_t>(len)) == 0 ||
                    madvise(p, len, MADV_REMOVE) == 0;
  // Pages above the top must read as zero (allocate() relies on it for calloc).
  if (!gone) std::memset(p, 0, len);
}

// The frozen snapshot under the bodies of free blocks below `end` whose
// pages were given back (shared_heap_fork.cc).
void SharedHeap::dropFreeBodies(uint64_t end, bool remap) {
  for (Block* f = freeList_; f; f = f->next) {
    const uint64_t off = offsetOf(f);
    if (off >= end || f->resident > kPage) continue;
    const uint64_t stop = off + f->size < end ? off + f->size : end;
    if (stop > off + kPage) dropSnapshot(off + kPage, stop - off - kPage, remap);
  }
}

uint64_t SharedHeap::freeBlocks() const {
  uint64_t n = 0;
  for (Block* b = freeList_; b; b = b->next) ++n;
  return n;
}

// Hands out `need` bytes at the start of `b` (already out of the free list,
// or fresh from the top), splitting off the rest when it is long enough.
void* SharedHeap::carve(Block* b, uint64_t need, uint64_t bytes, uint64_t align, bool fresh, bool zero) {
  const uint64_t off = offsetOf(b);
  if (!fresh && b->size - need >= kMinSplit) {
    Block* rest = at(off + need);
    rest->magic = kBlockMagic;
    rest->size = b->size - need;
    rest->prevSize = need;
    rest->resident = b->resident > need ? b->resident - need : kPage;
    rest->spare = 0;
    cached_ += rest->resident;
    pushFree(rest);
    setPrevSizeAfter(rest);
    b->size = need;
  }
  b->magic = kBlockMagic;
  b->isFree = 0;
  b->next = b->prev = nullptr;
  inUse_ += b->size;
  char* start = reinterpret_cast<char*>(b);
  uintptr_t u = (reinterpret_cast<uintptr_t>(start) + kHeader + align - 1) & ~(uintptr_t)(align - 1);
  char* user = reinterpret_cast<char*>(u);
  Tag* t = reinterpret_cast<Tag*>(user - sizeof(Tag));
  t->back = static_cast<uint64_t>(user - start);
  t->magic = kTagMagic ^ static_cast<uint64_t>(u);
  // Fresh pages from the top were never used (or were punched): zero already.
  if (zero && !fresh) std::memset(user, 0, bytes);
  return user;
}

void* SharedHeap::allocate(uint64_t bytes, uint64_t align, bool zero) {
  static_assert(sizeof(Block) == kHeader);
  if (!isOpen()) return nullptr;
  if (align < 64) align = 64;
  if (bytes > reserve_) return nullptr;
  // Worst-case distance from the block start to the user pointer.
  const uint64_t lead = align <= kPage ? (align > kHeader ? align : kHeader) : align + kHeader;
  const uint64_t need = roundUp(bytes + lead, kPage);
  pthread_mutex_lock(&mu_);
  tidy(false);
  void* user = nullptr;
  // First fit, in the shared part first: a buffer below `low` is private.
  if (Block* b = firstFit(need, true)) {
    takeFree(b);
    user = carve(b, need, bytes, align, false, zero);
  }
  Block* last = lastSize_ ? at(top_ - lastSize_) : nullptr;
  if (!user && last && last->isFree && need - last->size <= reserve_ - top_) {
    // A free block at the top, too short: it grows into fresh pages.
    Block* b = last;
    takeFree(b);
    top_ += need - b->size;
    b->size = need;
    lastSize_ = need;
    user = carve(b, need, bytes, align, false, zero);
  }
  if (!user && need <= reserve_ - top_) {
    Block* b = at(top_);
    b->size = need;
    b->prevSize = lastSize_;
    b->resident = 0;
    top_ += need;
    lastSize_ = need;
    // (below `low`, fresh pages may show the memfd's frozen ones after a thaw: zero them)
    user = carve(b, need, bytes, align, fd_ < 0 || offsetOf(b) >= low_.load(std::memory_order_relaxed), zero);
  }
  if (!user) {
    if (Block* b = firstFit(need, false)) {
      takeFree(b);
      user = carve(b, need, bytes, align, false, zero);
    }
  }
  pthread_mutex_unlock(&mu_);
  return user;
}

SharedHeap::Block* SharedHeap::firstFit(uint64_t need, bool sharedOnly) {
  const uint64_t lo = sharedOnly && fd_ >= 0 ? low_.load(std::memory_order_relaxed) : 0;
  for (Block* b = freeList_; b; b = b->next)
    if (b->size >= need && offsetOf(b) >= lo) return b;
  return nullptr;
}

uint64_t SharedHeap::usableSize(const void* p) const {
  const Block* b = blockOf(p);
  if (!b || b->isFree) return 0;
  return b->size - static_cast<uint64_t>(static_cast<const char*>(p) - reinterpret_cast<const char*>(b));
}

void SharedHeap::release(void* p) {
  pthread_mutex_lock(&mu_);
  Block* b = blockOf(p);
  if (!b) {
    pthread_mutex_unlock(&mu_);
    corrupt("invalid pointer", p);
  }
  if (b->isFree) {
    pthread_mutex_unlock(&mu_);
    corrupt("double free", p);
  }
  tidy(false);
  inUse_ -= b->size;
  uint64_t off = offsetOf(b);
  uint64_t resident = b->size;
  // Merge with a free block above.
  if (off + b->size < top_) {
    Block* up = at(off + b->size);
    if (up->isFree) {
      resident += takeFree(up);
      b->size += up->size;
      up->magic = 0;
    }
  }
  // ... and below.
  if (b->prevSize) {
    Block* down = at(off - b->prevSize);
    if (down->isFree) {
      resident += takeFree(down);
      down->size += b->size;
      b->magic = 0;
      b = down;
      off = offsetOf(b);
    }
  }
  b->next = b->prev = nullptr;
  b->resident = resident < b->size ? resident : b->size;
  const bool keep = cached_ + b->resident <= keepFree_;
  if (off + b->size == top_ && !keep) {
    // The top block, past what we keep: cut it off and give its pages back.
    top_ = off;
    lastSize_ = b->prevSize;
    b->magic = 0;
    returnPages(off, b->size);
  } else {
    // Kept resident up to keepFree_ bytes in all (at the top too: a program
    // that frees and allocates the same large buffer in a loop must not pay
    // for fresh pages each time); beyond that only its header page stays.
    if (!keep && b->size > kPage) {
      returnPages(off + kPage, b->size - kPage);
      b->resident = kPage;
    }
    cached_ += b->resident;
    b->isFree = 1;
    pushFree(b);
    setPrevSizeAfter(b);
  }
  pthread_mutex_unlock(&mu_);
}

bool SharedHeap::resizeInPlace(void* p, uint64_t bytes) {
  pthread_mutex_lock(&mu_);
  Block* b = blockOf(p);
  bool ok = false;
  if (b && !b->isFree) {
    const uint64_t off = offsetOf(b);
    const uint64_t lead = static_cast<uint64_t>(static_cast<char*>(p) - reinterpret_cast<char*>(b));
    const uint64_t need = bytes <= reserve_ ? roundUp(lead + bytes, kPage) : UINT64_MAX;
    if (need <= b->size) {
      ok = true;
    } else if (need != UINT64_MAX && off + b->size == top_) {
      // The top block grows into fresh pages.
      if (need <= reserve_ - off) {
        inUse_ += need - b->size;
        b->size = need;
        top_ = off + need;
        lastSize_ = need;
        ok = true;
      }
    } else if (need != UINT64_MAX && off + b->size < top_) {
      Block* up = at(off + b->size);
      if (up->isFree && b->size + up->size >= need) {
        const uint64_t upResident = takeFree(up);
        const uint64_t total = b->size + up->size;
        up->magic = 0;
        const uint64_t grow = total - need >= kMinSplit ? need : total;
        inUse_ += grow - b->size;
        b->size = grow;
        if (grow < total) {
          Block* rest = at(off + grow);
          rest->magic = kBlockMagic;
          rest->size = total - grow;
          rest->prevSize = grow;
          rest->resident = upResident < rest->size ? (upResident > kPage ? upResident : kPage) : rest->size;
          rest->spare = 0;
          cached_ += rest->resident;
          pushFree(rest);
          setPrevSizeAfter(rest);
        } else {
          setPrevSizeAfter(b);
        }
        ok = true;
      }
    }
  }
  pthread_mutex_unlock(&mu_);
  return ok;
}

SharedHeap& processHeap() {
  // Constant-initialised: usable from the first malloc, before any constructor.
  static constinit SharedHeap heap;
  return heap;
}

}  // namespace shmcoll::os
