// The shared heap: large malloc blocks in memory that peers can map.
//
// Why.  Two processes can only copy between private buffers through the
// kernel (process_vm_readv, here about a quarter of memcpy's speed) or
// through a shared staging area (two copies per byte).  When a large buffer
// lives in a memfd instead, a peer maps the same pages and copies straight
// out of it at memcpy speed: one copy per byte, as with MPI_Alloc_mem memory
// in the segment, but for the ordinary malloc / new / posix_memalign buffers
// that MPI programs actually pass.
//
// How.  libshmcoll.so defines malloc and friends (src/interpose/malloc.cc).
// Requests of SHMCOLL_SHARED_MALLOC_MIN bytes or more (default 128 KiB, the
// size from which glibc gives a request its own mapping) come from this heap;
// everything smaller, and everything when the heap is off or full, goes to
// glibc.  The heap is one memfd per process, sized sparsely to its reserve
// and mapped once; blocks are page multiples carved from it:
//   - each block starts with a 64-byte header (size, size of the block below,
//     free-list links); the user pointer follows it (or the first aligned
//     address after it), and the 16 bytes before the user pointer name the
//     block, so free() can check a pointer before trusting it;
//   - first fit over the free blocks, else the top of the heap grows;
//   - a freed block merges with free neighbours and stays resident for reuse
//     while the free blocks hold at most `keepFree` bytes in all; beyond that
//     its pages go back to the system (a hole punched in the memfd), and a
//     block at the top is cut off altogether.  (Fresh shmem pages cost a page
//     fault each, about 1.6 times an anonymous page's here: a loop that frees
//     and allocates the same buffer must find it resident.)
// The owner publishes the memfd (its descriptor number and inode) and the
// heap's address in its RankCtl; a peer opens /proc/<pid>/fd/<n>, checks the
// inode, and maps the part it needs read-only (transport::pull).
//
// fork(): parent and child must each keep their own copy of the buffers, as
// with ordinary memory, and fork() must cost no more time or memory than with
// ordinary memory.  So nothing is copied at fork: just before it, the part of
// the memfd in use, [low, top), is mapped again copy-on-write (MAP_PRIVATE of
// the same pages, in place), in the parent as in the child, and the heap's
// shared part starts above it (low = top).  Both processes then read the
// pages they had and copy one only when one of them writes it, as the kernel
// does for anonymous memory.  Neither writes the memfd below `low` any more,
// so a write of one never reaches the other; peers map only [low, reserve)
// (the parent republishes `low` after each fork), and read a buffer below it
// as private memory (process_vm_readv, or the staged path).  The child drops
// the shared part above `top` (fresh anonymous memory) and its descriptor.
// The cost: below `low` the parent's buffers are private and the frozen
// pages of the memfd stay resident while a child may still read them.  Once
// no child holds the pages any more (a sentinel page, copy-on-write shared
// with every child, is exclusive again), the parent gives back what nobody
// needs, and a single-threaded one makes the heap whole and shared again:
// see reclaimFrozen() in shared_heap_fork.cc.  A multi-threaded one keeps
// the part below `low` private and sweeps it from time to time (sweep()):
// the memfd's page under each page it has copied since goes, and the heap
// is made whole at the first sweep that finds it alone.  The parent moves
// the shared mapping of [low, top) aside with its page tables before mapping
// it again copy-on-write (parking: neither step tears page tables down;
// MREMAP_DONTUNMAP keeps the range mapped meanwhile for other threads), and
// moves it back when the heap is whole again.  Why not simply MAP_PRIVATE in
// the child alone: Linux lets such a mapping show the parent's later writes
// (and hole punches) to pages the child has not written, so the child's
// snapshot would change under it.
// posix_spawn and vfork run no fork handlers and need none.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace shmcoll::os {

class SharedHeap {
 public:
  static constexpr uint64_t kPage = 4096;
  static constexpr uint64_t kHeader = 64;
  // A free block is split only if the rest is at least this long.
  static constexpr uint64_t kMinSplit = 64 * 1024;

  // Creates the memfd and maps `reserve` bytes of it (halving down to 1 GiB
  // if the address space is short).  False if the system refuses.
  bool open(uint64_t reserve, uint64_t keepFree);
  bool isOpen() const { return base_.load(std::memory_order_acquire) != nullptr; }
  // Unmaps and closes (tests; the process heap is never closed).
  void destroy();

  // Whether `p` lies in the heap's reserve (any byte of it).
  bool owns(const void* p) const {
    const char* b = base_.load(std::memory_order_acquire);
    const char* q = static_cast<const char*>(p);
    return b && q >= b && static_cast<uint64_t>(q - b) < reserve_;
  }
  // Whether all of [p, p + len) lies in the part of the heap that peers may
  // read through the memfd, [low, reserve).
  bool sharedRange(const void* p, uint64_t len) const {
    if (fd_ < 0 || !ownsRange(p, len)) return false;
    return static_cast<uint64_t>(static_cast<const char*>(p) - base_.load(std::memory_order_relaxed)) >=
           low_.load(std::memory_order_acquire);
  }
  // Whether all of [p, p + len) lies in the heap's reserve.
  bool ownsRange(const void* p, uint64_t len) const {
    if (!owns(p)) return false;
    uint64_t off = static_cast<uint64_t>(static_cast<const char*>(p) - base_.load(std::memory_order_relaxed));
    return len <= reserve_ - off;
  }

  // `bytes` at an `align`-byte boundary (a power of two; at least 64 is
  // given anyway), zeroed if `zero`; nullptr when the heap cannot hold it.
  void* allocate(uint64_t bytes, uint64_t align, bool zero);
  // Frees a pointer from allocate(); aborts with a message on a pointer the
  // heap never handed out or one freed twice (as glibc does).
  void release(void* p);
  // Bytes usable at `p` (>= what was asked for).
  uint64_t usableSize(const void* p) const;
  // Grows or keeps block `p` so that it holds `bytes`; false if it must move.
  bool resizeInPlace(void* p, uint64_t bytes);

  // Fork handlers (pthread_atfork).  The lock is held across fork().  The
  // parent freezes [low, top) copy-on-write before fork() (see above); the
  // child drops the shared part and the descriptor.  If the kernel refuses
  // the new mapping, the old way is the fallback: the child copies what is
  // in use into anonymous memory and says so through a pipe, which the
  // parent's handler waits for.
  void prepareFork();
  void afterForkParent();
  void afterForkChild();
  void detachAfterFork();
  // Called (in the parent) after `low` has moved, by a fork or when a
  // reclaim made the heap whole again, so that the runtime can republish it
  // (it must not allocate); nullptr for none.
  void setLowHook(void (*fn)()) { lowHook_ = fn; }

  int fd() const { return fd_; }
  char* base() const { return base_.load(std::memory_order_acquire); }
  uint64_t reserve() const { return reserve_; }
  uint64_t inode() const { return inode_; }
  // Below this offset the heap is private to this process (frozen by a fork).
  uint64_t low() const { return low_.load(std::memory_order_acquire); }
  bool shared() const { return fd_ >= 0; }  // false after detachAfterFork()
  // Statistics (tests): offset of the top, bytes handed out, free bytes
  // still resident, number of free blocks.
  uint64_t top() const { return top_; }
  uint64_t inUse() const { return inUse_; }
  uint64_t cached() const { return cached_; }
  uint64_t freeBlocks() const;
  // Whether pages frozen by a fork may still be held by a child (tests).
  bool frozenHeld() const { return frozen_.load(std::memory_order_relaxed); }
  // Reclaims (as above) if it is time (`now`: at once, as after a child was
  // reaped), without waiting for the lock; cheap when there is nothing
  // frozen.  For callers that run often but not in a tight loop (the
  // runtime, as it sends a large buffer; the wait() wrappers).
  void poll(bool now = false);
  // Gives back frozen pages if no child holds them any more, then sweeps
  // the private part once through (tests; the heap does both itself from
  // time to time); true if no child holds them.
  bool reclaimNow();
  // Whether the part below `low` is private and swept (tests).
  bool sweeping() const { return stale_.load(std::memory_order_relaxed); }

 private:
  struct Block;
  Block* blockOf(const void* p) const;  // nullptr if `p` is no live user pointer
  Block* at(uint64_t off) const;
  uint64_t offsetOf(const Block* b) const;
  void unlink(Block* b);
  // Takes free block `f` off the free list; returns the bytes it kept resident.
  uint64_t takeFree(Block* f);
  void pushFree(Block* b);
  void setPrevSizeAfter(Block* b);
  void returnPages(uint64_t off, uint64_t len);
  void* carve(Block* b, uint64_t need, uint64_t bytes, uint64_t align, bool fresh, bool zero);
  Block* firstFit(uint64_t need, bool sharedOnly);
  bool freeze();
  bool reclaimFrozen(bool force);
  bool thaw(int pagemap, uint64_t end);
  bool makeWhole(int pagemap, uint64_t lo, uint64_t end);
  void wholeAgain(uint64_t lo, uint64_t end);
  void tidy(bool now);
  bool punchCopied(int pagemap, uint64_t from, uint64_t end);
  void sweep(bool force);
  bool mapShared(uint64_t off, uint64_t len);
  bool parkShared(uint64_t off, uint64_t len);
  bool unpark(uint64_t len);
  void reservePark(uint64_t off, uint64_t len);
  void dropParked();
  void dropSnapshot(uint64_t off, uint64_t len, bool remap);
  void dropFreeBodies(uint64_t end, bool remap);

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<char*> base_{nullptr};
  uint64_t reserve_ = 0;
  uint64_t keepFree_ = 0;
  int fd_ = -1;
  uint64_t inode_ = 0;
  std::atomic<uint64_t> low_{0};     // [0, low_) is private (frozen at a fork, or anonymous)
  std::atomic<bool> frozen_{false};  // the memfd below low_ holds pages a child may still read
  // No child holds the memfd below low_, but it could not be made whole
  // (another thread ran): sweep() drops the memfd's pages under this
  // process's copies, a step at a time from sweepAt_.
  std::atomic<bool> stale_{false};
  uint64_t sweepAt_ = 0;
  uint64_t nextSweepNs_ = 0;
  uint64_t sweepEveryNs_ = 0;  // the pause between steps (longer while passes find nothing)
  bool sweepFound_ = false;    // whether this pass has punched anything yet
  char* sentinel_ = nullptr;         // one anonymous page, copy-on-write shared with every fork child
  // Where the shared mapping of a frozen range waits, with its page tables,
  // until the heap is whole again (shared_heap_fork.cc, "Parking"): an
  // address range of reserve_ bytes (PROT_NONE where nothing is parked), never
  // inherited by a child; the memfd's [parkedLo_, parkedHi_) is parked there
  // at park_ + offset.
  char* park_ = nullptr;
  char* parkMap_ = nullptr;  // the reservation as mapped (park_ aligned within it)
  uint64_t parkMapLen_ = 0;
  uint64_t parkedLo_ = 0, parkedHi_ = 0;
  uint64_t nextCheckNs_ = 0;  // when reclaimFrozen() may next look at the sentinel
  enum ForkMode { kForkNothing, kForkFrozen, kForkCopy };
  ForkMode forkMode_ = kForkNothing;
  bool lowMoved_ = false;
  bool thp_ = false;  // madvise(MADV_HUGEPAGE) on the heap's mappings
  void (*lowHook_)() = nullptr;
  uint64_t top_ = 0;       // end of the last block
  uint64_t lastSize_ = 0;  // size of the block that ends at top_
  uint64_t inUse_ = 0;
  uint64_t cached_ = 0;
  Block* freeList_ = nullptr;
  int forkPipe_[2] = {-1, -1};
};

// The heap that the malloc interposer of libshmcoll.so uses (never opened in
// programs linked with the internals only: the launcher and unit tests).
SharedHeap& processHeap();

}  // namespace shmcoll::os
