// Single-copy pulls (pull.h).
#include "transport/pull.h"

#include <sys/uio.h>
#include <time.h>

#include <cerrno>
#include <cstring>

#include "common/status.h"
#include "os/shared_heap.h"
#include "transport/world.h"
#include "wait/wait.h"

namespace shmcoll::transport {

constinit Pulls gPulls;

namespace {

os::PeerHeapId heapOf(const segment::RankCtl* c) { return {c->pid, c->heapFd, c->heapIno, c->heapBytes}; }

// Our view of bytes [remote, remote + len) of world rank `rank`'s shared
// heap, or nullptr when they are not in it or it cannot be mapped.
const char* peerHeapBytes(uint32_t rank, uint64_t remote, uint64_t len) {
  Pulls& p = pulls();
  if (!p.heapShared) return nullptr;
  const segment::RankCtl* c = world().seg.ctl(rank);
  if (c->heapFd < 0 || remote < c->heapBase) return nullptr;
  // (below heapLow: frozen by a fork, private to the rank)
  if (remote - c->heapBase < c->heapLow.load(std::memory_order_acquire)) return nullptr;
  if (p.heaps.size() != world().size) p.heaps.resize(world().size);
  return p.heaps[rank].view(heapOf(c), remote - c->heapBase, len);
}

}  // namespace

bool canMapPeerHeap(uint32_t rank) { return os::canMapPeerHeap(heapOf(world().seg.ctl(rank))); }

bool inSegment(const void* p, uint64_t len) {
  const World& w = world();
  const char* base = w.seg.base();
  const uint64_t total = w.seg.header()->totalSize;
  const char* q = static_cast<const char*>(p);
  return q >= base && static_cast<uint64_t>(q - base) <= total && len <= total - static_cast<uint64_t>(q - base);
}

bool peerReadable(const void* p, uint64_t len) {
  if (inSegment(p, len)) return true;
  os::SharedHeap& h = os::processHeap();
  h.poll();  // (a fork's frozen pages go back once its children are gone)
  return pulls().heapShared && h.sharedRange(p, len);
}

namespace {

// The peer we read from no longer exists (killed, or crashed): shmrun ends
// the job as soon as it reaps it, reporting that rank's own status.  Wait for
// that, asleep, rather than raise an error of our own that would end the job
// first and hide the cause; only if the job has not ended after 10 s (no
// launcher watching) is it an error here.
[[gnu::cold]] int peerGone(uint32_t rank, pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (int rc = wait::checkJobAlive()) return rc;
    const timespec ten = {0, 10'000'000};
    nanosleep(&ten, nullptr);
  }
  return fail(err::kOther, "rank %u (pid %d) exited while this rank was reading its buffer", rank,
              static_cast<int>(pid));
}

}  // namespace

int pull(uint32_t rank, uint64_t remote, dt::Cursor& dst, uint64_t len) {
  const World& w = world();
  const segment::RankCtl* peer = w.seg.ctl(rank);
  const uint64_t total = w.seg.header()->totalSize;
  if (remote >= peer->mapBase && remote - peer->mapBase <= total && len <= total - (remote - peer->mapBase)) {
    if (len) dst.unpack(0, w.seg.base() + (remote - peer->mapBase), len);
    return 0;
  }
  if (const char* src = peerHeapBytes(rank, remote, len)) {
    if (len) dst.unpack(0, src, len);
    return 0;
  }
  // Cross-memory attach: one process_vm_readv per batch of receive runs.
  const pid_t pid = static_cast<pid_t>(peer->pid);
  constexpr size_t kMaxIov = 512;
  struct iovec local[kMaxIov];
  uint64_t pos = 0;
  while (pos < len) {
    uint64_t covered = 0;
    size_t k = dst.iov(pos, len - pos, local, kMaxIov, &covered);
    struct iovec rem = {reinterpret_cast<void*>(remote + pos), covered};
    ssize_t got = process_vm_readv(pid, local, k, &rem, 1, 0);
    if (got < 0 && errno == ESRCH) return peerGone(rank, pid);
    if (got <= 0)
      return fail(err::kOther, "single-copy read of %llu bytes from pid %d failed: %s (set SHMCOLL_CMA=0)",
                  (unsigned long long)covered, static_cast<int>(pid), strerror(errno));
    pos += static_cast<uint64_t>(got);
  }
  return 0;
}

}  // namespace shmcoll::transport
