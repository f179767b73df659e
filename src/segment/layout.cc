#include "segment/layout.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/status.h"

namespace shmcoll::segment {

namespace {
constexpr uint64_t roundUp(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }
}  // namespace

size_t defaultSlotBytes() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0) return kDefaultSlotBytes;
  size_t s = kDefaultSlotBytes;
  while (s * 2 <= static_cast<size_t>(l2) / 4 && s < (size_t{1} << 20)) s *= 2;
  return s;
}

Layout computeLayout(uint32_t nranks, size_t slotBytes, size_t heapBytes) {
  Layout l;
  l.nranks = nranks;
  l.slotBytes = static_cast<uint32_t>(roundUp(slotBytes ? slotBytes : kDefaultSlotBytes, kLine));
  l.ctxOffset = kRankCtlBytes;
  l.laneOffset = l.ctxOffset + uint64_t{kMaxContexts} * kCtxBytes;
  l.laneStride = roundUp(std::max<uint64_t>(kMinLaneArea, uint64_t{nranks} * kLine), kPage);
  l.slotOffset = l.laneOffset + 2 * l.laneStride + uint64_t{kAheadLanes} * kAheadLaneBytes +
                 uint64_t{kWideSlots} * kWideBytes;
  l.slotStride = kSlotHeaderBytes + slotAckBytes(nranks) + l.slotBytes;
  l.p2pOffset = l.slotOffset + kNumSlots * l.slotStride;
  l.heapOffset = roundUp(l.p2pOffset + sizeof(P2pQueue) + uint64_t{kP2pCells} * kP2pCellBytes, kPage);
  l.heapBytes = roundUp(heapBytes, kPage);
  l.rankAreaStride = l.heapOffset + l.heapBytes;
  l.rankAreaOffset = roundUp(sizeof(SegmentHeader), kPage);
  l.totalSize = l.rankAreaOffset + uint64_t{nranks} * l.rankAreaStride;
  return l;
}

void initHeader(void* base, const Layout& l, uint64_t jobId, uint32_t launcherPid, uint32_t ncores) {
  auto* h = static_cast<SegmentHeader*>(base);
  h->version = kVersion;
  h->nranks = l.nranks;
  h->jobId = jobId;
  h->totalSize = l.totalSize;
  h->rankAreaOffset = l.rankAreaOffset;
  h->rankAreaStride = l.rankAreaStride;
  h->slotBytes = l.slotBytes;
  h->launcherPid = launcherPid;
  h->ncores = ncores;
  h->ctxOffset = l.ctxOffset;
  h->laneOffset = l.laneOffset;
  h->laneStride = l.laneStride;
  h->slotOffset = l.slotOffset;
  h->slotStride = l.slotStride;
  h->p2pOffset = l.p2pOffset;
  h->heapOffset = l.heapOffset;
  h->heapBytes = l.heapBytes;
  h->abortRank.store(0, std::memory_order_relaxed);
  h->abortCode.store(0, std::memory_order_relaxed);
  h->abortKind.store(0, std::memory_order_relaxed);
  h->attached.store(0, std::memory_order_relaxed);
  h->cmaRefused.store(0, std::memory_order_relaxed);
  h->cmaSlow.store(0, std::memory_order_relaxed);
  h->heapRefused.store(0, std::memory_order_relaxed);
  h->threadMultiple.store(0, std::memory_order_relaxed);
  h->fenceRefused.store(0, std::memory_order_relaxed);
  h->sleepers.store(0, std::memory_order_relaxed);
  View v(base);
  for (uint32_t r = 0; r < l.nranks; ++r) {
    v.ctl(r)->cpu = -1;
    v.ctl(r)->numaNode = -1;
  }
  // The magic goes last: a reader that sees it sees a complete header.
  std::atomic_thread_fence(std::memory_order_release);
  h->magic = kMagic;
}

int validateHeader(const void* base, size_t mappedSize, uint32_t expectRanks) {
  const auto* h = static_cast<const SegmentHeader*>(base);
  if (mappedSize < sizeof(SegmentHeader))
    return fail(err::kIntern, "shared segment of %zu bytes is smaller than its header", mappedSize);
  if (h->magic != kMagic) return fail(err::kIntern, "shared segment has a bad magic number");
  if (h->version != kVersion)
    return fail(err::kIntern, "shared segment version %u, this library expects %u (mixed installations?)", h->version,
                kVersion);
  if (h->nranks != expectRanks)
    return fail(err::kIntern, "shared segment is for %u ranks, SHMCOLL_SIZE says %u", h->nranks, expectRanks);
  Layout l = computeLayout(h->nranks, h->slotBytes, h->heapBytes);
  if (h->totalSize != l.totalSize || h->totalSize > mappedSize || h->rankAreaStride != l.rankAreaStride)
    return fail(err::kIntern, "shared segment size %llu does not match its layout (%llu expected, %zu mapped)",
                (unsigned long long)h->totalSize, (unsigned long long)l.totalSize, mappedSize);
  return kOk;
}

}  // namespace shmcoll::segment
