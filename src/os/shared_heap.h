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
// fork(): a child must not share its parent's buffers.  The child's copy of
// the heap is made private (copied into anonymous memory at the same address)
// before fork() returns in it; the heap goes on working there, unshared.
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
  // child makes its heap private (see above) and then says so through a
  // pipe, which the parent's handler waits for: until then the two still
  // share the pages, and a write the parent makes as soon as fork() returns
  // must not reach the child.  (If fork() failed, or the child died, the
  // parent reads end-of-file at once.)  Writes by the parent's other threads
  // while the child copies can still reach it.
  void prepareFork();
  void afterForkParent();
  void afterForkChild();
  void detachAfterFork();

  int fd() const { return fd_; }
  char* base() const { return base_.load(std::memory_order_acquire); }
  uint64_t reserve() const { return reserve_; }
  uint64_t inode() const { return inode_; }
  bool shared() const { return fd_ >= 0; }  // false after detachAfterFork()
  // Statistics (tests): offset of the top, bytes handed out, free bytes
  // still resident, number of free blocks.
  uint64_t top() const { return top_; }
  uint64_t inUse() const { return inUse_; }
  uint64_t cached() const { return cached_; }
  uint64_t freeBlocks() const;

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

  pthread_mutex_t mu_ = PTHREAD_MUTEX_INITIALIZER;
  std::atomic<char*> base_{nullptr};
  uint64_t reserve_ = 0;
  uint64_t keepFree_ = 0;
  int fd_ = -1;
  uint64_t inode_ = 0;
  bool privateAnon_ = true;  // after fork: the heap is anonymous memory (MADV_DONTNEED zeroes)
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
