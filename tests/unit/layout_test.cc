// The segment layout: sizes, alignment and the per-rank bound we document.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "segment/layout.h"

namespace shmcoll::segment {
namespace {

TEST(Layout, RankAreasArePageAlignedAndDisjoint) {
  for (uint32_t n : {1u, 2u, 3u, 64u, 1024u}) {
    Layout l = computeLayout(n);
    EXPECT_EQ(l.rankAreaOffset % kPage, 0u);
    EXPECT_EQ(l.rankAreaStride % kPage, 0u);
    EXPECT_GE(l.rankAreaStride, l.slotOffset + kNumSlots * l.slotStride);
    EXPECT_EQ(l.totalSize, l.rankAreaOffset + n * l.rankAreaStride);
    EXPECT_EQ(l.ctxOffset % kLine, 0u);
    EXPECT_EQ(l.laneOffset % kLine, 0u);
    EXPECT_EQ(l.laneStride % kPage, 0u);
    EXPECT_GE(l.laneStride / n, kLine);  // every lane holds at least its header line
    EXPECT_EQ(l.slotOffset % kLine, 0u);
    EXPECT_EQ(l.slotStride % kLine, 0u);
  }
}

TEST(Layout, PerRankBoundIsAsDocumented) {
  // docs/ARCHITECTURE.md: 1012 KiB per rank at N = 2 and at N = 1024 with 64 KiB slots.
  EXPECT_EQ(computeLayout(2).rankAreaStride, 1012u * 1024);
  EXPECT_EQ(computeLayout(1024).rankAreaStride, 1012u * 1024);
  // Linear in N: the whole segment for 1024 ranks stays under 8 MiB per rank by far.
  EXPECT_LT(computeLayout(1024).totalSize / 1024, 8u << 20);
}

TEST(Layout, SlotSizeRoundsToCacheLines) {
  Layout l = computeLayout(4, 1000);
  EXPECT_EQ(l.slotBytes, 1024u);
}

TEST(Layout, HeaderRoundTripsAndValidates) {
  Layout l = computeLayout(3);
  std::vector<char> mem(l.totalSize + kPage);
  void* base = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(mem.data()) + kPage - 1) & ~(kPage - 1));
  initHeader(base, l, 42, 7, 2);
  EXPECT_EQ(validateHeader(base, l.totalSize, 3), 0);
  EXPECT_NE(validateHeader(base, l.totalSize, 4), 0);       // wrong rank count
  EXPECT_NE(validateHeader(base, l.totalSize - 1, 3), 0);   // mapping too small
  View v(base);
  EXPECT_EQ(v.nranks(), 3u);
  EXPECT_EQ(v.ctl(2)->cpu, -1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.ctx(1, 5)) % kLine, 0u);
  EXPECT_EQ(reinterpret_cast<char*>(v.slot(2, 1)) + l.slotStride,
            v.rankArea(2) + l.slotOffset + 2 * l.slotStride);
  static_cast<SegmentHeader*>(base)->magic = 0;
  EXPECT_NE(validateHeader(base, l.totalSize, 3), 0);
}

// The lane areas, the ring's lanes and the wide slots follow each other
// without overlap, line-aligned, and the last wide slot ends where the
// mailbox slots begin.
TEST(Layout, RingAndWideSlotsTileTheLaneRegion) {
  for (uint32_t n : {2u, 3u, 64u}) {  // (the lane areas grow past 64 KiB from 1025 ranks)
    Layout l = computeLayout(n);
    std::vector<char> mem(l.totalSize + kPage);
    void* base = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(mem.data()) + kPage - 1) & ~(kPage - 1));
    initHeader(base, l, 1, 1, 2);
    View v(base);
    const uint32_t r = n - 1;
    EXPECT_EQ(v.laneArea(r, 1) + l.laneStride, v.laneArea(r, kAheadArea0));
    EXPECT_EQ(v.laneArea(r, kAheadArea0 + kAheadLanes - 1) + kAheadLaneBytes, v.laneArea(r, kWideArea0));
    for (uint32_t w = 0; w < kWideSlots; ++w) {
      char* slot = v.laneArea(r, kWideArea0 + w);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(slot) % kLine, 0u) << w;
      EXPECT_EQ(slot, v.laneArea(r, kWideArea0) + uint64_t{w} * kWideBytes);
    }
    EXPECT_EQ(v.laneArea(r, kWideArea0 + kWideSlots - 1) + kWideBytes, reinterpret_cast<char*>(v.slot(r, 0)));
  }
  // A slot holds a 12 KiB block; split, 6 KiB to each of 2 readers, 4 KiB to each of 3.
  EXPECT_GE(laneInlineCapacity(kWideBytes), 12288u);
  EXPECT_GE(laneInlineCapacity(wideSplitBytes(2)), 6144u);
  EXPECT_GE(laneInlineCapacity(wideSplitBytes(3)), 4096u);
}

}  // namespace
}  // namespace shmcoll::segment
