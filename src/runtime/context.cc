#include "runtime/context.h"

#include <mpi.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "coll/coll.h"
#include "common/settings.h"
#include "common/status.h"
#include "os/cma_cost.h"
#include "os/shared_heap.h"
#include "p2p/p2p.h"
#include "runtime/comm.h"
#include "runtime/win.h"
#include "transport/pull.h"
#include "wait/wait.h"

namespace shmcoll::rt {

namespace {

Context gCtx;
// Peers read this word with process_vm_readv at start-up to learn whether
// single-copy transfers are allowed between the job's processes.
constexpr uint64_t kProbeValue = 0x5348434d50524f42ull;
volatile uint64_t gProbeWord = kProbeValue;

int mapSegment(Context& c) {
  const char* fdStr = settings::raw(settings::Id::kSegFd);
  if (!fdStr) {
    // MPI singleton: a one-rank job in private shared memory.
    segment::Layout l = segment::computeLayout(1, segment::kDefaultSlotBytes, settings::size(settings::Id::kAllocMem));
    void* p = mmap(nullptr, l.totalSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      return fail(err::kNoMem, "cannot map %llu bytes for a singleton job: %s", (unsigned long long)l.totalSize,
                  strerror(errno));
    segment::initHeader(p, l, static_cast<uint64_t>(getpid()), 0, static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
    c.mapBase = p;
    c.mapSize = l.totalSize;
    c.eng.rank = 0;
    c.eng.size = 1;
    c.singleton = true;
    return kOk;
  }
  long long fd = settings::integer(settings::Id::kSegFd, -1);
  long long rank = settings::integer(settings::Id::kRank, -1);
  long long size = settings::integer(settings::Id::kJobSize, -1);
  size_t segSize = settings::size(settings::Id::kSegSize, 0);
  if (fd < 0 || rank < 0 || size <= 0 || rank >= size || segSize == 0)
    return fail(err::kIntern,
                "inconsistent launcher environment (SHMCOLL_SEG_FD=%s SHMCOLL_RANK=%s SHMCOLL_SIZE=%s); "
                "start the program with shmrun or without any SHMCOLL_* variables",
                fdStr, settings::raw(settings::Id::kRank) ? settings::raw(settings::Id::kRank) : "(unset)",
                settings::raw(settings::Id::kJobSize) ? settings::raw(settings::Id::kJobSize) : "(unset)");
  void* p = mmap(nullptr, segSize, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  if (p == MAP_FAILED)
    return fail(err::kIntern, "cannot map the job's shared segment (fd %lld, %zu bytes): %s", fd, segSize,
                strerror(errno));
  close(static_cast<int>(fd));
#ifdef MADV_HUGEPAGE
  // Map the transparent huge pages the launcher may have obtained (os/shm.h)
  // as huge pages here too; a no-op, or EINVAL, where there are none.
  (void)madvise(p, segSize, MADV_HUGEPAGE);
#endif
  // Children of this rank (if it forks or execs) must not think they are ranks.
  unsetenv("SHMCOLL_SEG_FD");
  SHMCOLL_CHECK(segment::validateHeader(p, segSize, static_cast<uint32_t>(size)));
  c.mapBase = p;
  c.mapSize = segSize;
  c.eng.rank = static_cast<uint32_t>(rank);
  c.eng.size = static_cast<uint32_t>(size);
  return kOk;
}

// Tries a one-word process_vm_readv from the next rank; then every rank learns
// whether all succeeded (the caller runs a barrier in between).
void probeCma(transport::World& c) {
  segment::RankCtl* next = c.seg.ctl((c.rank + 1) % c.size);
  uint64_t got = 0;
  struct iovec local = {&got, sizeof got};
  struct iovec remote = {reinterpret_cast<void*>(next->cmaProbeAddr), sizeof got};
  ssize_t n = process_vm_readv(static_cast<pid_t>(next->pid), &local, 1, &remote, 1, 0);
  bool ok = n == static_cast<ssize_t>(sizeof got) && got == kProbeValue;
  c.self()->cmaOk.store(ok ? 1 : 2, std::memory_order_release);
  if (!ok) c.seg.header()->cmaRefused.fetch_add(1, std::memory_order_acq_rel);
  // (SHMCOLL_CMA_SLOW_FACTOR: os/cma_cost.h; most ranks' word decides, the same for all)
  if (ok && os::processVmReadvSlow(settings::size(settings::Id::kCmaSlowFactor)))
    c.seg.header()->cmaSlow.fetch_add(1, std::memory_order_acq_rel);
}

segment::RankCtl* gHeapCtl = nullptr;  // where publishHeap() wrote, for the heap's hook

// The heap's `low` moved (a fork, or a reclaim after one): tell the peers.
void republishHeapLow() {
  if (gHeapCtl) gHeapCtl->heapLow.store(os::processHeap().low(), std::memory_order_release);
}

// Publishes this rank's shared malloc heap (os/shared_heap.h) if malloc here
// is libshmcoll's and the heap is on.  A 64 KiB request makes the interposer
// decide now; when a sanitizer or another allocator took malloc, or
// SHMCOLL_SHARED_MALLOC=0, the heap stays closed and peers see none.
void publishHeap(segment::RankCtl* me) {
  me->heapFd = -1;
  me->heapBase = 0;
  me->heapBytes = 0;
  me->heapIno = 0;
  me->heapLow.store(0, std::memory_order_relaxed);
  // (through a volatile pointer: the compiler may drop a malloc/free pair)
  void* volatile probe = std::malloc(64 * 1024);
  std::free(probe);
  const os::SharedHeap& h = os::processHeap();
  if (!h.isOpen() || !h.shared()) return;
  me->heapFd = h.fd();
  me->heapBase = reinterpret_cast<uint64_t>(h.base());
  me->heapBytes = h.reserve();
  me->heapIno = h.inode();
  gHeapCtl = me;
  os::processHeap().setLowHook(republishHeapLow);
  republishHeapLow();
}

// Maps the next rank's heap (when it has one); every rank then learns
// whether all succeeded (the caller runs a barrier in between).
void probeHeap(transport::World& c) {
  uint32_t next = (c.rank + 1) % c.size;
  bool ok = c.seg.ctl(next)->heapFd < 0 || transport::canMapPeerHeap(next);
  c.self()->heapOk.store(ok ? 1 : 2, std::memory_order_release);
  if (!ok) c.seg.header()->heapRefused.fetch_add(1, std::memory_order_acq_rel);
}

// Reads one byte of every page of the broadcast rings this rank is likely
// to use (SHMCOLL_PREFAULT).  A rooted collective writes operation s into
// ring lane s % 64 of its writer (segment/layout.h), so each of a job's
// first 64 calls touched a page of the ring no process had touched yet, and
// paid a page fault in the writer and another in each reader: on a VM with
// shadow page tables 5-7 us each, and MADV_POPULATE_READ does not help
// there, since only this process's own access fills the hypervisor's entry
// (docs/PERFORMANCE.md, 2026-11-30, afternoon).  A read is enough: the
// mapping is shared and writable, so the page is then mapped for writing too.
// Up to 8 ranks every rank reads every ring (any rank may be a root: some
// benchmark suites rotate it); beyond, its own and rank 0's, the usual root,
// and rank 0 every rank's, which it reads as the root of a reduce or gather.
void prefaultRings(const transport::World& e) {
  const int mode = settings::choice(settings::Id::kPrefault);  // auto, all, off
  if (mode == 2 || e.size < 2) return;
  const bool all = mode == 1 || e.size <= 8 || e.rank == 0;
  constexpr uint64_t kRingBytes = uint64_t{segment::kAheadLanes} * segment::kAheadLaneBytes;
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  unsigned sum = 0;
  for (uint32_t r = 0; r < e.size; ++r) {
    if (!all && r != e.rank && r != 0) continue;
    const volatile char* ring = e.seg.laneArea(r, segment::kAheadArea0);
    for (uint64_t o = 0; o < kRingBytes; o += page) sum += static_cast<unsigned char>(ring[o]);
    sum += static_cast<unsigned char>(ring[kRingBytes - 1]);  // (the ring need not start on a page)
  }
  asm volatile("" : : "r"(sum));
}

}  // namespace

Context& ctx() { return gCtx; }

int init(int requiredThread, int* provided) {
  Context& c = gCtx;
  transport::World& e = c.eng;
  // Every setting the library reads is checked before one is used: a bad
  // value fails MPI_Init here rather than read as the default later.
  std::string bad;
  for (const std::string& msg : settings::validate(settings::kLibrary, true)) bad += (bad.empty() ? "" : "; ") + msg;
  if (!bad.empty()) return fail(err::kArg, "%s", bad.c_str());
  SHMCOLL_CHECK(mapSegment(c));
  e.seg = segment::View(c.mapBase);
  segment::RankCtl* me = e.self();
  me->pid = static_cast<uint32_t>(getpid());
  me->cmaProbeAddr = reinterpret_cast<uint64_t>(&gProbeWord);
  me->mapBase = reinterpret_cast<uint64_t>(c.mapBase);
  publishHeap(me);
  prefaultRings(e);
  me->state.store(segment::kInitialized, std::memory_order_release);
  e.seg.header()->attached.fetch_add(1, std::memory_order_acq_rel);

  long ncores = e.seg.header()->ncores ? e.seg.header()->ncores : sysconf(_SC_NPROCESSORS_ONLN);
  c.oversubscribed = e.size > static_cast<uint32_t>(ncores);
  // With more ranks than cores the peer a rank waits for is usually not
  // running, and a spin only holds the core it needs: yield at once.  Up to
  // 2 ranks per core, keep yielding (64 times) before sleeping: a core then
  // holds at most one other rank, a yield hands it straight to
  // one that can run, and a rank alone on its core finds its peers' answer
  // in a few yields where a futex sleep would leave the core idle and cost a
  // wake-up through the kernel (3 ranks on 2 cores: 8-byte alltoall 7.0 ->
  // 3.4 us; 4 on 2: 4 KiB 12.5 -> 7.7).  With more ranks per core, 8 yields:
  // with one, nearly every waiting rank went to sleep and paid a wake-up
  // through the kernel (8 ranks on 2 cores, 1 -> 8 yields: barrier 11.5 ->
  // 6.9 us, 8-byte gather 1.08 -> 0.70; with a barrier before each call,
  // 8-byte reduce 19.5 -> 8.2 with 16; 16 ranks: 8-byte reduce 2.13 -> 1.27,
  // 4 KiB 73.9 -> 26.1); 16 and 64 gave about what 8 gives back to back at
  // 4 ranks a core (docs/PERFORMANCE.md, 2026-11-30).
  wait::WaitPolicy wp;
  const bool crowded = e.size > 2 * static_cast<uint64_t>(ncores);
  wp.spins = static_cast<uint32_t>(std::min<uint64_t>(
      UINT32_MAX, settings::tuned(settings::Id::kWaitSpins, nullptr, e.size, c.oversubscribed ? 0 : 20000)));
  wp.yields = static_cast<uint32_t>(std::min<uint64_t>(
      UINT32_MAX, settings::tuned(settings::Id::kWaitYields, nullptr, e.size, c.oversubscribed && !crowded ? 64 : 8)));
  wp.streamSpinNs = static_cast<uint32_t>(std::min<uint64_t>(
      UINT32_MAX, settings::tuned(settings::Id::kStreamSpinNs, nullptr, e.size, c.oversubscribed ? 8000 : 0)));
  if (settings::flag(settings::Id::kWaitNoTimeout)) wp.sleepNs = 0;
  wait::setPolicy(wp);
  if (c.oversubscribed) wait::gCrowd = {&e.seg.header()->sleepers, e.size, static_cast<uint32_t>(ncores)};

  // The library serialises nothing internally (the transport's lanes and
  // slots, the handle tables are per process; docs/ARCHITECTURE.md, Threads):
  // calls from several threads are fine as long as they never overlap.
  // MPI_THREAD_MULTIPLE: one lock per process around the library, and no
  // engine lines for any communicator of the job once MPI_Init is over
  // (wait/serial.h); every rank learns at the first barrier whether any
  // rank asked for it.
  if (settings::choice(settings::Id::kThreadLevel) == 1) requiredThread = MPI_THREAD_MULTIPLE;
  c.threadLevel = requiredThread;
  if (provided) *provided = c.threadLevel;
  if (requiredThread == MPI_THREAD_MULTIPLE) e.seg.header()->threadMultiple.fetch_add(1, std::memory_order_acq_rel);
  // Announcing without a fence (wait/wait.h): this rank sleeps behind a
  // membarrier from now on, or says it will not; after the barrier every
  // rank knows whether all do.
  const int wakeFence = settings::choice(settings::Id::kWakeFence);  // auto, always, never
  wait::gSleepBarrier =
      e.size > 1 && (wakeFence == 2 || (wakeFence == 0 && !c.oversubscribed)) && wait::registerSleepBarrier();
  if (!wait::gSleepBarrier) e.seg.header()->fenceRefused.fetch_add(1, std::memory_order_acq_rel);

  SHMCOLL_CHECK(initComms());
  // Every rank has published its pid and probe address once this barrier ends.
  SHMCOLL_CHECK(coll::barrierOn(worldTeam()));
  c.linesOff = e.seg.header()->threadMultiple.load(std::memory_order_acquire) != 0;
  // (no waker leaves its fence out unless all sleep behind a membarrier, so a
  // rank may stop running it when some will not)
  wait::gWakeNoFence = e.seg.header()->fenceRefused.load(std::memory_order_acquire) == 0;
  if (!wait::gWakeNoFence) wait::gSleepBarrier = false;
  if (e.size > 1) {
    const bool cma = settings::flag(settings::Id::kCma);
    if (cma)
      probeCma(e);
    else
      e.seg.header()->cmaRefused.fetch_add(1, std::memory_order_acq_rel);  // (off here: off for all)
    probeHeap(e);
    SHMCOLL_CHECK(coll::barrierOn(worldTeam()));
    const segment::SegmentHeader* h = e.seg.header();
    transport::pulls().cma = cma && h->cmaRefused.load(std::memory_order_acquire) == 0;
    transport::pulls().cmaSlow = 2 * uint64_t{h->cmaSlow.load(std::memory_order_acquire)} > e.size;
    transport::pulls().heapShared = h->heapRefused.load(std::memory_order_acquire) == 0;
  }
  p2p::init(c.oversubscribed);
  if (c.linesOff) dropWorldLines();
  wait::gSerialSelf = e.self();
  wait::gSerialOn = c.threadLevel == MPI_THREAD_MULTIPLE;
  c.initialized = true;
  return kOk;
}

int finalize() {
  Context& c = gCtx;
  // MPI_Finalize is collective: once every rank is here nobody reads our
  // mailboxes any more.
  int rc = coll::barrierOn(worldTeam());
  c.eng.self()->state.store(segment::kFinalized, std::memory_order_release);
  c.finalized = true;
  gLastWin = nullptr;  // (check::win trusts a cached window to mean MPI is active)
  return rc;
}

void abortJob(int code, segment::AbortKind kind) {
  Context& c = gCtx;
  fflush(stdout);
  fflush(stderr);
  if (c.mapBase) {
    const transport::World& e = c.eng;
    int32_t expected = 0;
    segment::SegmentHeader* h = e.seg.header();
    if (h->abortRank.compare_exchange_strong(expected, static_cast<int32_t>(e.rank) + 1)) {
      h->abortKind.store(kind, std::memory_order_relaxed);
      h->abortCode.store(code, std::memory_order_release);
    }
    // Wake everybody so that waiters notice the abort at once.
    for (uint32_t r = 0; r < e.size; ++r) wait::wakePeer(e.seg.ctl(r));
  }
  _exit(code == 0 ? 1 : (code & 0xff ? code & 0xff : 1));
}

}  // namespace shmcoll::rt

namespace shmcoll::wait {
int checkJobAlive() {
  const auto& c = rt::ctx();
  if (c.mapBase && c.eng.seg.header()->abortRank.load(std::memory_order_relaxed) != 0)
    return fail(err::kProcAborted, "another rank aborted the job");
  return 0;
}
}  // namespace shmcoll::wait
