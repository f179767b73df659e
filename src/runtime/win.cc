// Windows: creation and freeing, the shared control area, reaching a
// member's memory, and the synchronization words (runtime/win.h says how
// the pieces fit).
//
// Creation is three small allgathers over a private duplicate of the
// creating communicator: what each member brings (size, displacement unit,
// base address), then the memfd member 0 made (its descriptor number, which
// the others open through /proc/<pid>/fd and map), then whether each member
// succeeded, so that every member keeps the window or none does.  Member 0
// keeps its descriptor open until the last allgather, so the others can open
// it; after that the mappings keep the memory alive and no descriptor stays.
#include "runtime/win.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "coll/coll.h"
#include "common/status.h"
#include "dt/datatype.h"
#include "transport/world.h"
#include "wait/wait.h"

namespace shmcoll::rt {

namespace {

constexpr uint32_t kWinKind = 0x18000000u;
constexpr uint32_t kMaxSerial = 0x00ffffffu;
constexpr uint64_t kPage = 4096;

std::unordered_map<uint32_t, Win*> gWins;
uint32_t gNextSerial = 1;

uint64_t roundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
uint32_t postWords(uint32_t n) { return (n + 63) / 64; }
uint64_t postOffset(uint32_t n) { return uint64_t{n} * sizeof(WinCtl); }
uint64_t regionOffset(uint32_t n) { return roundUp(postOffset(n) + uint64_t{n} * postWords(n) * 8, 64); }
uint64_t ctlBytes(uint32_t n) { return roundUp(regionOffset(n) + uint64_t{n} * kMaxAttach * sizeof(WinRegion), kPage); }

MPI_Win newHandle(Win* w) {
  while (gWins.count(gNextSerial)) gNextSerial = gNextSerial % kMaxSerial + 1;
  const uint32_t serial = gNextSerial;
  gNextSerial = gNextSerial % kMaxSerial + 1;
  gWins[serial] = w;
  return static_cast<MPI_Win>(kWinKind | serial);
}

// Our view of [addr, addr + len) in world rank `world`'s process when it lies
// in the segment (MPI_Alloc_mem memory), else nullptr.
char* segmentView(uint32_t world, uint64_t addr, uint64_t len) {
  const transport::World& wd = transport::world();
  const segment::RankCtl* c = wd.seg.ctl(world);
  const uint64_t total = wd.seg.header()->totalSize;
  if (addr < c->mapBase || addr - c->mapBase > total || len > total - (addr - c->mapBase)) return nullptr;
  return wd.seg.base() + (addr - c->mapBase);
}

// Wakes the members that sleep in a wait on this window.  `fenced`: the
// caller's last write was a sequentially consistent read-modify-write,
// which on x86-64 (a locked instruction) is the full barrier the sleeping
// flags need already.
void wakeMembers(const Win& w, bool fenced = false) {
#if defined(__x86_64__)
  if (!fenced) fullFence();
#else
  (void)fenced;
  fullFence();
#endif
  const transport::World& wd = transport::world();
  for (uint32_t r = 0; r < w.nranks; ++r)
    if (r != w.rank) wait::wakeIfSleeping(wd.seg.ctl(w.peers[r].world));
}

// (A condition that takes something -- a lock word -- is asked no more once
// it said yes: wait::waitUntil.)
template <class Cond>
int waitFor(Cond&& cond) {
  return wait::waitUntil(transport::world().self(), cond);
}

struct Offer {  // what a member brings (first allgather)
  uint64_t size, base;
  int32_t dispUnit, pid;
};
struct FileNote {  // member 0's memfd (second allgather; the others send zeros)
  int32_t fd, err;
  uint64_t ino;
};

// Member 0: the window's memfd, reserved in full so a full /dev/shm fails
// here, not as SIGBUS later.
int makeFile(uint64_t bytes, FileNote* note) {
  note->fd = memfd_create("shmcoll-win", MFD_CLOEXEC);
  if (note->fd < 0) {
    note->err = errno;
    return -1;
  }
  struct stat st;
  int err = ftruncate(note->fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (!err) err = posix_fallocate(note->fd, 0, static_cast<off_t>(bytes));  // (returns the error)
  if (!err && fstat(note->fd, &st) != 0) err = errno;
  if (err) {
    note->err = err;
    close(note->fd);
    note->fd = -1;
    return -1;
  }
  note->ino = static_cast<uint64_t>(st.st_ino);
  return 0;
}

int openFile(uint32_t pid, const FileNote& note) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%d", pid, note.fd);
  int fd = ::open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != note.ino) {
    close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

}  // namespace

std::atomic<uint64_t>* Win::postBits(uint32_t r) const {
  return reinterpret_cast<std::atomic<uint64_t>*>(map + postOffset(nranks)) + uint64_t{r} * postWords(nranks);
}
WinRegion* Win::regions(uint32_t r) const {
  return reinterpret_cast<WinRegion*>(map + regionOffset(nranks)) + uint64_t{r} * kMaxAttach;
}

Win* gLastWin = nullptr;

Win* findWin(MPI_Win h) {
  const uint32_t u = static_cast<uint32_t>(h);
  if ((u & ~kMaxSerial) != kWinKind) return nullptr;
  auto it = gWins.find(u & kMaxSerial);
  if (it == gWins.end()) return nullptr;
  gLastWin = it->second;
  return it->second;
}

int createWin(Comm& parent, const WinArgs& a, Win** out) {
  Comm* wc = nullptr;
  SHMCOLL_CHECK(dupComm(parent, &wc));
  auto* w = new Win;
  w->comm = wc;
  w->flavor = a.flavor;
  w->dispUnit = a.dispUnit;
  w->size = static_cast<MPI_Aint>(a.size);
  w->rank = wc->team.rank;
  w->nranks = wc->team.size();
  const uint32_t n = w->nranks;
  const bool allocating = a.flavor == MPI_WIN_FLAVOR_ALLOCATE || a.flavor == MPI_WIN_FLAVOR_SHARED;

  Offer mine{a.size, reinterpret_cast<uint64_t>(a.base), a.dispUnit, static_cast<int32_t>(getpid())};
  std::vector<Offer> offers(n);
  int rc = gatherAll(*wc, &mine, sizeof mine, offers.data());
  // Where each member's memory starts in the file (allocating flavors):
  // one after the other for a contiguous shared window, else page-aligned.
  const bool packed = a.flavor == MPI_WIN_FLAVOR_SHARED && !a.noncontig;
  std::vector<uint64_t> at(n);
  uint64_t bytes = ctlBytes(n);
  for (uint32_t r = 0; r < n && allocating; ++r) {
    at[r] = bytes;
    bytes += packed ? offers[r].size : roundUp(offers[r].size, kPage);
  }
  bytes = roundUp(std::max<uint64_t>(bytes, kPage), kPage);

  FileNote note{-1, 0, 0};
  if (rc == 0 && w->rank == 0) makeFile(bytes, &note);
  std::vector<FileNote> notes(n);
  if (rc == 0) rc = gatherAll(*wc, &note, sizeof note, notes.data());
  int32_t ok = 0;  // 0, or the errno of this member's failure
  if (rc == 0) {
    const FileNote& f = notes[0];
    int fd = f.fd;
    if (fd < 0) {
      ok = f.err ? f.err : EIO;
    } else if (w->rank != 0 && (fd = openFile(static_cast<uint32_t>(offers[0].pid), f)) < 0) {
      ok = errno ? errno : EACCES;
    }
    if (!ok) {
      void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (m == MAP_FAILED) {
        ok = errno;
      } else {
        w->map = static_cast<char*>(m);
        w->mapBytes = bytes;
      }
      if (w->rank != 0) close(fd);
    }
    std::vector<int32_t> oks(n);
    rc = gatherAll(*wc, &ok, sizeof ok, oks.data());
    if (w->rank == 0 && note.fd >= 0) close(note.fd);
    for (uint32_t r = 0; r < n && rc == 0; ++r)
      if (oks[r])
        rc = fail(err::kNoMem, "rank %u of the window could not create or map its shared memory (%u bytes): %s", r,
                  static_cast<unsigned>(bytes), strerror(oks[r]));
  }
  if (rc != 0) {
    if (w->map) munmap(w->map, w->mapBytes);
    freeComm(wc);
    delete w;
    return rc;
  }

  w->peers.resize(n);
  const transport::World& wd = transport::world();
  for (uint32_t r = 0; r < n; ++r) {
    WinPeer& p = w->peers[r];
    p.world = wc->team.members[r];
    p.pid = static_cast<uint32_t>(offers[r].pid);
    p.size = offers[r].size;
    p.dispUnit = offers[r].dispUnit;
    if (allocating) {
      p.direct = w->map + at[r];
      p.base = reinterpret_cast<uint64_t>(p.direct);  // (each member's base is in its own mapping: see winWrite)
    } else {
      p.base = offers[r].base;
      p.direct = r == w->rank ? static_cast<char*>(a.base) : segmentView(p.world, p.base, p.size);
    }
  }
  if (allocating) {
    w->base = w->peers[w->rank].direct;
    // A member addresses a peer's allocated memory by offset from the peer's
    // base; the base stored is this process's view of it.
  } else {
    w->base = a.flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_BOTTOM : a.base;
  }
  (void)wd;
  w->locked.assign(n, 0);
  w->inStart.assign(n, 0);
  w->handle = newHandle(w);
  *out = w;
  return 0;
}

int freeWin(Win* w) {
  const int rc = winBarrier(*w);  // nobody reaches our memory any more
  munmap(w->map, w->mapBytes);
  const int rc2 = freeComm(w->comm);
  gWins.erase(static_cast<uint32_t>(w->handle) & kMaxSerial);
  if (gLastWin == w) gLastWin = nullptr;
  delete w;
  return rc ? rc : rc2;
}

// ---- moving data --------------------------------------------------------------------

namespace {

// Our view of the bytes at `addr` in member r, or nullptr (process_vm then).
char* viewOf(const Win& w, uint32_t r, uint64_t addr, uint64_t span) {
  const WinPeer& p = w.peers[r];
  if (p.direct) return p.direct + (addr - p.base);
  if (r == w.rank) return reinterpret_cast<char*>(addr);
  return segmentView(p.world, addr, span);
}

// process_vm_readv / writev between the packed stream at `local` and the
// runs of (addr, count, t) in member r.
int crossMove(const Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t, char* local, bool write) {
  dt::Cursor c(reinterpret_cast<void*>(addr), count, t);
  const uint64_t total = c.totalBytes();
  constexpr size_t kMaxIov = 512;
  struct iovec remote[kMaxIov];
  const pid_t pid = static_cast<pid_t>(w.peers[r].pid);
  uint64_t pos = 0;
  while (pos < total) {
    uint64_t covered = 0;
    const size_t k = c.iov(pos, total - pos, remote, kMaxIov, &covered);
    struct iovec mine = {local + pos, covered};
    const ssize_t got =
        write ? process_vm_writev(pid, &mine, 1, remote, k, 0) : process_vm_readv(pid, &mine, 1, remote, k, 0);
    if (got <= 0)
      return fail(err::kOther, "%s %llu bytes of rank %u's window memory failed: %s (process_vm_%s)",
                  write ? "writing" : "reading", static_cast<unsigned long long>(covered), r, strerror(errno),
                  write ? "writev" : "readv");
    pos += static_cast<uint64_t>(got);
  }
  return 0;
}

uint64_t spanOf(uint64_t count, const dt::Type* t) {
  return count ? static_cast<uint64_t>(static_cast<int64_t>(count - 1) * t->extent() + t->trueUb) : 0;
}

}  // namespace

int winWrite(Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t, const void* src) {
  if (count == 0 || t->size == 0) return 0;
  if (char* p = viewOf(w, r, addr, spanOf(count, t))) {
    if (t->contiguous)  // (memmove: a rank may put from its own window into itself)
      memmove(p + t->trueLb, src, count * t->size);
    else
      dt::Cursor(p, count, t).unpack(0, src, count * t->size);
    return 0;
  }
  return crossMove(w, r, addr, count, t, static_cast<char*>(const_cast<void*>(src)), true);
}

int winRead(Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t, void* dst) {
  if (count == 0 || t->size == 0) return 0;
  if (char* p = viewOf(w, r, addr, spanOf(count, t))) {
    if (t->contiguous)
      memmove(dst, p + t->trueLb, count * t->size);
    else
      dt::Cursor(p, count, t).pack(0, dst, count * t->size);
    return 0;
  }
  return crossMove(w, r, addr, count, t, static_cast<char*>(dst), false);
}

char* winContiguousView(Win& w, uint32_t r, uint64_t addr, uint64_t count, const dt::Type* t) {
  if (!t->contiguous || count == 0 || t->size == 0) return nullptr;
  char* p = viewOf(w, r, addr, spanOf(count, t));
  return p ? p + t->trueLb : nullptr;
}

bool winCovers(const Win& w, uint32_t r, uint64_t addr, uint64_t len) {
  if (w.flavor != MPI_WIN_FLAVOR_DYNAMIC) {
    const WinPeer& p = w.peers[r];
    return addr >= p.base && addr - p.base <= p.size && len <= p.size - (addr - p.base);
  }
  const WinRegion* g = w.regions(r);
  const uint32_t used = std::min(w.ctl(r)->attached.load(std::memory_order_acquire), kMaxAttach);
  for (uint32_t i = 0; i < used; ++i) {
    const uint64_t b = g[i].base.load(std::memory_order_relaxed), l = g[i].len.load(std::memory_order_relaxed) - 1;
    if (l != ~uint64_t{0} && addr >= b && addr - b <= l && len <= l - (addr - b)) return true;
  }
  return false;
}

int winAttach(Win& w, void* base, uint64_t size) {
  WinRegion* g = w.regions(w.rank);
  std::atomic<uint32_t>& used = w.ctl(w.rank)->attached;
  const uint32_t n = used.load(std::memory_order_relaxed);
  uint32_t i = 0;
  while (i < n && g[i].len.load(std::memory_order_relaxed) != 0) ++i;
  if (i == kMaxAttach)
    return fail(MPI_ERR_RMA_ATTACH, "%u regions are attached already, the most a window member may have", kMaxAttach);
  g[i].base.store(reinterpret_cast<uint64_t>(base), std::memory_order_relaxed);
  g[i].len.store(size + 1, std::memory_order_release);  // (len - 1 bytes: 0 marks a free slot)
  if (i == n) used.store(n + 1, std::memory_order_release);
  return 0;
}

int winDetach(Win& w, const void* base) {
  WinRegion* g = w.regions(w.rank);
  const uint32_t n = w.ctl(w.rank)->attached.load(std::memory_order_relaxed);
  for (uint32_t i = 0; i < n; ++i)
    if (g[i].len.load(std::memory_order_relaxed) &&
        g[i].base.load(std::memory_order_relaxed) == reinterpret_cast<uint64_t>(base)) {
      g[i].len.store(0, std::memory_order_release);
      return 0;
    }
  return fail(MPI_ERR_RMA_ATTACH, "base = %p is not the start of a region attached to this window", base);
}

// ---- synchronization ------------------------------------------------------------------

namespace {

// One attempt at target r's lock word.
bool tryLock(std::atomic<uint32_t>& word, int type) {
  if (type == MPI_LOCK_EXCLUSIVE) {
    uint32_t v = 0;
    return word.compare_exchange_strong(v, kLockExclusive, std::memory_order_acquire);
  }
  uint32_t v = word.load(std::memory_order_relaxed);
  while (!(v & kLockExclusive))
    if (word.compare_exchange_weak(v, v + 1, std::memory_order_acquire)) return true;
  return false;
}

}  // namespace

// A lock that is not free at once is waited for after the origin counts
// itself in lockWaiters.  (The count's increment and the unlock's release
// are both sequentially consistent read-modify-writes, each followed by a
// look at the other's word: either the waiter's next attempt sees the lock
// released, or the unlock sees the waiter and wakes the sleepers.)
int winLock(Win& w, uint32_t r, int type) {
  WinCtl& c = *w.ctl(r);
  if (tryLock(c.lock, type)) return 0;
  c.lockWaiters.fetch_add(1, std::memory_order_seq_cst);
  const int rc = waitFor([&] { return tryLock(c.lock, type); });
  c.lockWaiters.fetch_sub(1, std::memory_order_relaxed);
  return rc;
}

bool winTryLock(Win& w, uint32_t r, int type) { return tryLock(w.ctl(r)->lock, type); }

void winUnlock(Win& w, uint32_t r, int type) {
  WinCtl& c = *w.ctl(r);
  if (type == MPI_LOCK_EXCLUSIVE)
    c.lock.exchange(0, std::memory_order_seq_cst);
  else
    c.lock.fetch_sub(1, std::memory_order_seq_cst);
  if (c.lockWaiters.load(std::memory_order_seq_cst) != 0) wakeMembers(w, true);
}

int winAccLock(Win& w, uint32_t r) {
  std::atomic<uint32_t>& m = w.ctl(r)->accMutex;
  uint32_t v = 0;
  if (m.compare_exchange_strong(v, 1, std::memory_order_acquire)) return 0;
  return waitFor([&] { return m.exchange(2, std::memory_order_acquire) == 0; });
}

void winAccUnlock(Win& w, uint32_t r) {
  if (w.ctl(r)->accMutex.exchange(0, std::memory_order_seq_cst) == 2) wakeMembers(w, true);
}

void winPost(Win& w, const std::vector<uint32_t>& group) {
  const uint32_t word = w.rank / 64;
  const uint64_t bit = uint64_t{1} << (w.rank % 64);
  for (uint32_t o : group) w.postBits(o)[word].fetch_or(bit, std::memory_order_release);
  w.posted = true;
  w.postCount = static_cast<uint32_t>(group.size());
  wakeMembers(w);
}

int winStart(Win& w, const std::vector<uint32_t>& group) {
  std::atomic<uint64_t>* bits = w.postBits(w.rank);
  for (uint32_t t : group) {
    const uint64_t bit = uint64_t{1} << (t % 64);
    std::atomic<uint64_t>& word = bits[t / 64];
    SHMCOLL_CHECK(waitFor([&] { return (word.load(std::memory_order_acquire) & bit) != 0; }));
    word.fetch_and(~bit, std::memory_order_relaxed);
  }
  return 0;
}

void winComplete(Win& w) {
  for (uint32_t t : w.startGroup) w.ctl(t)->completes.fetch_add(1, std::memory_order_release);
  wakeMembers(w);
}

int winWait(Win& w, bool test, bool* done) {
  std::atomic<uint32_t>& c = w.ctl(w.rank)->completes;
  auto ready = [&] { return c.load(std::memory_order_acquire) >= w.postCount; };
  if (test) {
    *done = ready();
    if (!*done) wait::yieldCpu();  // (a program polling MPI_Win_test leaves the core to the origins)
  } else {
    SHMCOLL_CHECK(waitFor(ready));
    *done = true;
  }
  if (*done) c.fetch_sub(w.postCount, std::memory_order_relaxed);
  return 0;
}

int winBarrier(Win& w) {
  fullFence();
  const int rc = coll::barrierOn(w.comm->team);
  fullFence();
  w.pending = false;
  return rc;
}

}  // namespace shmcoll::rt
