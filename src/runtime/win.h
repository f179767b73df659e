// Windows of one-sided communication (MPI_Win): the handle table, creation
// and freeing, the control area the members share, and the moves of data
// into and out of a member's window memory.
//
// Every window owns one memfd that each member maps read-write.  It starts
// with the control area (WinCtl per member: its lock word, its accumulate
// mutex, its count of MPI_Win_complete calls; its bitmap of MPI_Win_post
// calls received; a dynamic window's table of attached regions), and for the
// allocating flavors (MPI_Win_allocate, MPI_Win_allocate_shared) it holds the
// members' memory too, so any member reaches any other's with a plain load or
// store.  Memory the program brought (MPI_Win_create, MPI_Win_attach) is
// reached the same way when it lies in the segment (MPI_Alloc_mem), else
// with process_vm_readv / process_vm_writev.
//
// Because every member reaches every window directly, an RMA operation is
// done when its call returns (the standard allows it): flushes are fences,
// and the synchronization calls only order the members (fence: a barrier;
// locks: words in the control area; post/start/complete/wait: bits and
// counters there).  Accumulates to one member run under its accumulate
// mutex, which gives the standard's atomicity for every operation and type.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/attr.h"
#include "runtime/comm.h"
#include "runtime/info.h"

namespace shmcoll::dt {
class Type;
}

namespace shmcoll::rt {

// Regions one member of a dynamic window may have attached at once.
constexpr uint32_t kMaxAttach = 64;

// One member's lines in the control area.
struct alignas(64) WinCtl {
  std::atomic<uint32_t> lock;       // kLockExclusive, or the number of shared holders
  std::atomic<uint32_t> accMutex;   // 0 free, 1 held, 2 held with waiters
  std::atomic<uint32_t> completes;  // MPI_Win_complete calls toward this member not yet waited for
  std::atomic<uint32_t> attached;   // dynamic: slots of `regions` in use (a high-water mark)
  // Origins waiting in MPI_Win_lock (or lock_all) for `lock`: an unlock wakes
  // the members only when there are any, so that one origin's lock and unlock
  // calls do not wake, every time, a member asleep in an unrelated wait.
  std::atomic<uint32_t> lockWaiters;
};
constexpr uint32_t kLockExclusive = 0x80000000u;

struct WinRegion {                  // dynamic: an attached region, in its owner's addresses
  std::atomic<uint64_t> base, len;  // len: the region's bytes + 1 (0: a free slot)
};

// Another member's memory as this process reaches it.
struct WinPeer {
  char* direct = nullptr;  // our view of its window memory (allocating flavors, segment memory), or nullptr
  uint64_t base = 0;       // its base address in its own process
  uint64_t size = 0;
  int dispUnit = 1;
  uint32_t world = 0;  // its world rank
  uint32_t pid = 0;
};

struct Win {
  MPI_Win handle = MPI_WIN_NULL;
  Comm* comm = nullptr;  // a private duplicate of the creating communicator (fence, free)
  int flavor = MPI_WIN_FLAVOR_CREATE;
  void* base = nullptr;
  MPI_Aint size = 0;
  int dispUnit = 1;
  int model = MPI_WIN_UNIFIED;
  std::vector<WinPeer> peers;  // by rank in `comm`
  char* map = nullptr;         // the shared file mapping
  uint64_t mapBytes = 0;
  uint32_t rank = 0, nranks = 1;

  // Epochs of this process (the standard's synchronization state).
  bool fenceOpen = false;            // a fence without MPI_MODE_NOSUCCEED came last
  bool lockAll = false;              // MPI_Win_lock_all
  bool lockAllNoCheck = false;       // ... with MPI_MODE_NOCHECK: no lock word taken
  std::vector<uint8_t> locked;       // per target: 0, 1 shared, 2 exclusive, 3 with MPI_MODE_NOCHECK (no lock word)
  uint32_t locksHeld = 0;            // targets locked with MPI_Win_lock
  bool started = false;              // MPI_Win_start ... complete
  std::vector<uint8_t> inStart;      // per target: in the start group
  std::vector<uint32_t> startGroup;  // the start group, as ranks in `comm`
  bool posted = false;               // MPI_Win_post ... wait
  uint32_t postCount = 0;            // origins of the exposure epoch
  // A put, get or accumulate moved data since the last flush: a flush with
  // nothing pending needs no fence (the last one ordered everything before it).
  bool pending = false;

  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  AttrList attrs;
  Info hints;

  WinCtl* ctl(uint32_t r) const { return reinterpret_cast<WinCtl*>(map) + r; }
  std::atomic<uint64_t>* postBits(uint32_t r) const;  // (nranks + 63) / 64 words
  WinRegion* regions(uint32_t r) const;               // kMaxAttach entries (dynamic windows)
};

// The window the last look-up found (freeWin clears it): a program calls
// the one-sided functions on one window in a row, so a look-up is one
// compare; the handle table is searched only when the window changes.
extern Win* gLastWin;
Win* findWin(MPI_Win h);
// The window behind a handle, or nullptr.
inline Win* win(MPI_Win h) {
  Win* w = gLastWin;
  if (w && w->handle == h) [[likely]]
    return w;
  return findWin(h);
}

// A full memory barrier (stores before it are visible before loads after
// it).  On x86-64 a locked read-modify-write of the stack does that at a
// fraction of an mfence's cost (mfence also orders non-temporal stores,
// which the movement code never leaves unfenced: memmove ends its
// non-temporal loops with sfence).
inline void fullFence() {
#if defined(__x86_64__)
  asm volatile("lock orq $0, (%%rsp)" ::: "memory", "cc");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// What a member brings to a window being created.
struct WinArgs {
  int flavor = MPI_WIN_FLAVOR_CREATE;
  uint64_t size = 0;  // bytes
  int dispUnit = 1;
  void* base = nullptr;    // MPI_Win_create: the program's memory
  bool noncontig = false;  // MPI_Win_allocate_shared: alloc_shared_noncontig
};
// Collective over `parent` (an intracommunicator): creates the window, with
// the memory of the allocating flavors.  Returns 0 or an error class with a
// reason recorded by fail(); every member then fails alike.
int createWin(Comm& parent, const WinArgs& a, Win** out);
// Collective: waits for every member, then releases the memory and the handle.
int freeWin(Win* w);

// ---- moving data (the caller checked ranges and types) ---------------------------
// Target memory of member `r`: `addr` is its address in that member's process.
// Writes the packed stream `src` into (addr, count, t) of member r.
int winWrite(Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t, const void* src);
// Reads (addr, count, t) of member r as a packed stream into dst.
int winRead(Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t, void* dst);
// Where (addr, count, t) of member r lies in our address space when t is
// contiguous and this process reaches that memory directly (the allocating
// flavors, segment memory, our own); nullptr otherwise.
char* winContiguousView(Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t);
// True when [addr, addr + len) of member r lies in memory of the window
// (its window memory, or for a dynamic window one attached region).
bool winCovers(const Win& w, uint32_t r, uint64_t addr, uint64_t len);

// Dynamic windows: attaches or detaches a region of this member's memory
// (MPI_ERR_RMA_ATTACH when kMaxAttach regions are attached, or `base` names none).
int winAttach(Win& w, void* base, uint64_t size);
int winDetach(Win& w, const void* base);

// ---- synchronization --------------------------------------------------------------
// Takes or releases member r's lock (MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE).
int winLock(Win& w, uint32_t r, int type);
// One attempt at winLock's lock, without waiting: true when it is held now.
bool winTryLock(Win& w, uint32_t r, int type);
void winUnlock(Win& w, uint32_t r, int type);
// Takes or releases member r's accumulate mutex.
int winAccLock(Win& w, uint32_t r);
void winAccUnlock(Win& w, uint32_t r);
// Post/start/complete/wait: `group` holds ranks in w.comm.
void winPost(Win& w, const std::vector<uint32_t>& group);
int winStart(Win& w, const std::vector<uint32_t>& group);
void winComplete(Win& w);
// Waits for (or with `test`, checks for) every origin's MPI_Win_complete.
int winWait(Win& w, bool test, bool* done);
// A barrier over the members.
int winBarrier(Win& w);

}  // namespace shmcoll::rt
