// The inline lane format (segment/layout.h, transport/lane.h): up to 440
// bytes, 48 in the header's line and 56 in each later line, which ends in a
// stamp (the tag); longer payloads in one piece after the header.  Checked
// byte for byte on an ordinary buffer: what a writer puts where, what a
// reader gets back (whole and cut short), when a payload counts as arrived,
// and that nothing past the payload's lines is touched.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "transport/lane.h"
#include "segment/layout.h"

namespace shmcoll::transport {
namespace {

using segment::kLaneFirstPayload;
using segment::kLaneHeaderBytes;
using segment::kLaneLinePayload;
using segment::kLine;

constexpr size_t kLaneBytes = 2048;
constexpr unsigned char kFill = 0xa5;

struct alignas(64) Lane {
  unsigned char b[kLaneBytes];
};

std::vector<unsigned char> payload(uint64_t n, unsigned seed) {
  std::vector<unsigned char> p(n);
  for (uint64_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i * 131 + seed * 7 + (i >> 8));
  return p;
}

void write(Lane& l, const std::vector<unsigned char>& p, uint64_t tag, bool tagNow) {
  const char* src = reinterpret_cast<const char*>(p.data());
  writeInline(reinterpret_cast<char*>(l.b), p.size(), tag, tagNow,
              [src](uint64_t off, char* d, uint64_t n) { copyPiece(d, src + off, n); });
}

uint64_t word(const Lane& l, size_t at) {
  uint64_t v;
  std::memcpy(&v, l.b + at, sizeof v);
  return v;
}

// Where payload byte i lives in the lane, for a payload of `bytes`.
size_t where(uint64_t bytes, uint64_t i) {
  if (!segment::laneStamped(bytes) || i < kLaneFirstPayload) return kLaneHeaderBytes + i;
  const uint64_t k = i - kLaneFirstPayload;
  return (1 + k / kLaneLinePayload) * kLine + k % kLaneLinePayload;
}

TEST(Lane, LinesAndCapacity) {
  EXPECT_EQ(segment::laneInlineLines(0), 1u);
  EXPECT_EQ(segment::laneInlineLines(48), 1u);
  EXPECT_EQ(segment::laneInlineLines(49), 2u);
  EXPECT_EQ(segment::laneInlineLines(104), 2u);
  EXPECT_EQ(segment::laneInlineLines(105), 3u);
  EXPECT_EQ(segment::laneInlineLines(440), 8u);
  EXPECT_EQ(segment::laneInlineLines(441), 8u);  // one piece: 16 + 441 bytes
  EXPECT_EQ(segment::laneInlineLines(496), 8u);
  EXPECT_EQ(segment::laneInlineLines(497), 9u);
  // Every payload up to a lane's capacity fits its lines, and one byte more
  // does not.
  for (uint64_t lane = 64; lane <= 1024; lane += 64) {
    const uint64_t cap = segment::laneInlineCapacity(lane);
    EXPECT_LE(segment::laneInlineLines(cap) * kLine, lane) << lane;
    EXPECT_GT(segment::laneInlineLines(cap + 1) * kLine, lane) << lane;
  }
}

TEST(Lane, TagsAreScrambledAndDistinct) {
  // Not the small integers (seq << 8) | ctx that user data may contain.
  for (uint64_t seq = 1; seq < 2000; ++seq)
    for (uint32_t ctx = 0; ctx < 4; ++ctx) {
      const uint64_t t = segment::laneTag(seq, ctx);
      EXPECT_NE(t, 0u);
      EXPECT_GT(t, uint64_t{1} << 24) << seq << " " << ctx;  // (true for these; a bijection could map some low)
      EXPECT_NE(t, segment::laneTag(seq + 1, ctx));
      EXPECT_NE(t, segment::laneTag(seq, ctx + 1));
    }
}

// Every size from 0 to 600 bytes: the layout byte for byte, the untouched
// rest of the lane, the stamps, and reading back whole and cut short.
TEST(Lane, WriteAndReadEverySize) {
  const uint64_t tag = segment::laneTag(77, 3);
  for (uint64_t n = 0; n <= 600; ++n) {
    Lane l;
    std::memset(l.b, kFill, sizeof l.b);
    const auto p = payload(n, static_cast<unsigned>(n));
    write(l, p, tag, true);
    ASSERT_EQ(word(l, 0), tag) << n;
    ASSERT_EQ(word(l, 8), n | segment::kLaneInline) << n;
    const uint64_t lines = segment::laneInlineLines(n);
    std::vector<bool> used(kLaneBytes, false);
    for (size_t i = 0; i < 16; ++i) used[i] = true;
    for (uint64_t i = 0; i < n; ++i) {
      const size_t at = where(n, i);
      ASSERT_LT(at, lines * kLine) << n << " " << i;
      ASSERT_EQ(l.b[at], p[i]) << "size " << n << " byte " << i;
      used[at] = true;
    }
    if (segment::laneStamped(n)) {
      for (uint64_t k = 1; k < lines; ++k) {
        ASSERT_EQ(word(l, k * kLine + kLaneLinePayload), tag) << n << " line " << k;
        for (size_t j = 0; j < 8; ++j) used[k * kLine + kLaneLinePayload + j] = true;
      }
    }
    for (size_t i = 0; i < kLaneBytes; ++i) {
      if (!used[i]) {
        ASSERT_EQ(l.b[i], kFill) << "size " << n << ": lane byte " << i << " written";
      }
    }
    EXPECT_TRUE(inlineArrived(reinterpret_cast<const char*>(l.b), n, tag));
    for (uint64_t use : {n, n / 2, n > 60 ? uint64_t{60} : n, n > 0 ? n - 1 : 0}) {
      std::vector<unsigned char> out(n + 16, 0x3c);
      unsigned char* dst = out.data() + 8;
      readInline(reinterpret_cast<const char*>(l.b), n, use,
                 [dst](uint64_t off, const char* s, uint64_t len) { copyPiece(reinterpret_cast<char*>(dst) + off, s, len); });
      if (use > 0) {
        ASSERT_EQ(std::memcmp(dst, p.data(), use), 0) << "size " << n << " use " << use;
      }
      for (size_t i = 0; i < out.size(); ++i) {
        if (i < 8 || i >= 8 + use) {
          ASSERT_EQ(out[i], 0x3c) << "size " << n << " use " << use << " out byte " << i;
        }
      }
    }
  }
}

// A stamped payload has not arrived while any later line's stamp is another
// value: the previous operation's tag, or a longer payload's bytes left there.
TEST(Lane, ArrivesWithTheLastStamp) {
  const uint64_t before = segment::laneTag(5, 1), tag = segment::laneTag(7, 1);
  Lane l;
  std::memset(l.b, 0, sizeof l.b);
  // A long payload (one piece) of the operation before fills the lines.
  write(l, payload(1000, 1), before, true);
  const char* lane = reinterpret_cast<const char*>(l.b);
  EXPECT_FALSE(inlineArrived(lane, 300, tag));
  // A writer that has done its first line and published the tag, but not the rest.
  auto* h = reinterpret_cast<segment::LaneHeader*>(l.b);
  h->tag.store(tag);
  h->bytes = 300 | segment::kLaneInline;
  EXPECT_FALSE(inlineArrived(lane, 300, tag));
  // Each line stamped in turn, as the writer stores them: arrived only after
  // the last (whose stamp, stored last, shows all the others).
  const uint64_t lines = segment::laneInlineLines(300);
  for (uint64_t k = 1; k < lines; ++k) {
    EXPECT_FALSE(inlineArrived(lane, 300, tag)) << k;
    laneStamp(lane + k * kLine)->store(tag);
  }
  EXPECT_TRUE(inlineArrived(lane, 300, tag));
  // A stale last stamp is enough to wait.
  laneStamp(lane + (lines - 1) * kLine)->store(before);
  EXPECT_FALSE(inlineArrived(lane, 300, tag));
  // Up to 48 bytes and past 440 there is nothing to wait for beyond the header.
  EXPECT_TRUE(inlineArrived(lane, 48, tag));
  EXPECT_TRUE(inlineArrived(lane, 441, tag));
}

// Written with the tag left to the caller (as the streamed exchange does):
// the header's tag is untouched, the stamps are there.
TEST(Lane, TagLeftToTheCaller) {
  const uint64_t old = segment::laneTag(3, 0), tag = segment::laneTag(5, 0);
  Lane l;
  std::memset(l.b, 0, sizeof l.b);
  reinterpret_cast<segment::LaneHeader*>(l.b)->tag.store(old);
  write(l, payload(200, 9), tag, false);
  EXPECT_EQ(word(l, 0), old);
  EXPECT_TRUE(inlineArrived(reinterpret_cast<const char*>(l.b), 200, tag));
}

}  // namespace
}  // namespace shmcoll::transport
