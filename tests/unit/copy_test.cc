// Copy kernels: every kernel the CPU supports, compared with memcpy byte for
// byte, with guard bytes around the destination checked to be untouched.
//
// Patterns: source bytes are all odd, destination guard bytes all even, so a
// byte the kernel failed to write, or a source byte written outside the
// destination range, is always caught (never a lucky 1/256 match).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "copy/copy.h"
#include "copy/kernels.h"

namespace shmcoll::copy {

// gtest prints the parameter by name in failure messages.
void PrintTo(Kernel k, std::ostream* os) { *os << name(k); }

namespace {

constexpr Kernel kAllKernels[] = {Kernel::kScalar, Kernel::kSse2, Kernel::kAvx2, Kernel::kAvx512};
constexpr size_t kMis = 64;     // misalignments 0..63 of source and destination
constexpr size_t kGuard = 192;  // guard bytes checked on each side of the destination

std::vector<uint8_t> pattern(size_t n, uint64_t seed, bool odd) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(odd ? (x | 1) : (x & ~uint64_t{1}));
  }
  return v;
}

// A source and a guarded destination for copies of up to maxN bytes at any
// misalignment; the destination is restored after each checked copy.
class Arena {
 public:
  explicit Arena(size_t maxN)
      : maxN_(maxN),
        src_(pattern(maxN + 2 * kMis, 0x9e3779b97f4a7c15ull, true)),
        ref_(pattern(kGuard + maxN + 2 * kMis + kGuard, 0x2545f4914f6cdd1dull, false)),
        dst_(ref_) {}

  // Copies n bytes from source offset sm to destination offset dm with fn and
  // checks the result; on failure returns a description, else "".
  std::string run(CopyFn fn, size_t n, size_t sm, size_t dm) {
    uint8_t* d = dst_.data() + kGuard + dm;
    const uint8_t* s = src_.data() + sm;
    const uint8_t* r = ref_.data() + kGuard + dm;
    fn(d, s, n);
    std::string why;
    if (std::memcmp(d, s, n) != 0) {
      size_t i = 0;
      while (d[i] == s[i]) ++i;
      why = "byte " + std::to_string(i) + " differs from memcpy";
    } else if (std::memcmp(dst_.data(), ref_.data(), kGuard + dm) != 0) {
      why = "a byte before the destination changed";
    } else if (std::memcmp(d + n, r + n, kGuard) != 0) {
      why = "a byte after the destination changed";
    }
    std::memcpy(d, r, n);  // restore
    if (!why.empty()) why += " (n=" + std::to_string(n) + " srcMis=" + std::to_string(sm) + " dstMis=" + std::to_string(dm) + ")";
    return why;
  }

  // The whole destination buffer is back to the reference (catches a stray
  // write outside the windows run() checks).
  bool pristine() const { return dst_ == ref_; }

 private:
  size_t maxN_;
  std::vector<uint8_t> src_, ref_, dst_;
};

// Restores the non-temporal threshold when a test ends.
class ThresholdGuard {
 public:
  explicit ThresholdGuard(size_t bytes) : saved_(ntThreshold()) { setNtThreshold(bytes); }
  ~ThresholdGuard() { setNtThreshold(saved_); }

 private:
  size_t saved_;
};

class CopyKernelTest : public ::testing::TestWithParam<Kernel> {
 protected:
  void SetUp() override {
    if (!supported(GetParam())) GTEST_SKIP() << "kernel " << name(GetParam()) << " is not supported on this CPU/OS";
    fn_ = function(GetParam());
    ASSERT_NE(fn_, nullptr);
  }

  // Every size in [lo, hi]: all 64 source misalignments, each paired with
  // `perms` destination misalignments, dm = sm * (2p + 1) + (rotation by n
  // and p) mod 64: for each p a permutation of 0..63, so every size meets
  // every source and every destination misalignment (allPairs does all 4096).
  void sweepRotating(Arena& a, size_t lo, size_t hi, size_t perms) {
    for (size_t n = lo; n <= hi; ++n) {
      for (size_t sm = 0; sm < kMis; ++sm) {
        for (size_t p = 0; p < perms; ++p) {
          size_t dm = (sm * (2 * p + 1) + n * 7 + p * 13) % kMis;
          std::string why = a.run(fn_, n, sm, dm);
          if (!why.empty()) {
            ADD_FAILURE() << name(GetParam()) << ": " << why;
            return;
          }
        }
      }
    }
  }

  void allPairs(Arena& a, size_t lo, size_t hi) {
    for (size_t n = lo; n <= hi; ++n) {
      for (size_t sm = 0; sm < kMis; ++sm) {
        for (size_t dm = 0; dm < kMis; ++dm) {
          std::string why = a.run(fn_, n, sm, dm);
          if (!why.empty()) {
            ADD_FAILURE() << name(GetParam()) << ": " << why;
            return;
          }
        }
      }
    }
  }

  CopyFn fn_ = nullptr;
};

// Every size 0..4100 at every source and every destination misalignment:
// all 64 x 64 pairs up to 1024 bytes (every inline size class of every kernel
// and the first iterations of the loop), 64 x 16 rotating pairs above.
// Regular stores only; the next test covers the non-temporal path.
// (~2 s per kernel in Release, ~30 s with -O0 and ASan on a busy core.)
TEST_P(CopyKernelTest, AllSizesAllMisalignments) {
  ThresholdGuard t(0);
  Arena a(4100);
  allPairs(a, 0, 1024);
  sweepRotating(a, 1025, 4100, 16);
  EXPECT_TRUE(a.pristine());
}

// The non-temporal path at every size it can take (the engine's loop starts
// above 8 vectors), with the threshold at its minimum.
TEST_P(CopyKernelTest, NonTemporalPathAllSizes) {
  ThresholdGuard t(1);
  Arena a(4100);
  sweepRotating(a, 0, 4100, 4);
  EXPECT_TRUE(a.pristine());
}

// Restores the rep movsb minimum when a test ends.
class RepMinGuard {
 public:
  explicit RepMinGuard(size_t bytes) : saved_(repMin()), ok_(setRepMin(bytes)) {}
  ~RepMinGuard() { setRepMin(saved_ == SIZE_MAX ? 0 : saved_); }
  bool ok() const { return ok_; }

 private:
  size_t saved_;
  bool ok_;
};

// Restores the rep movsb alignment mask when a test ends.
class RepAlignGuard {
 public:
  explicit RepAlignGuard(uintptr_t mask) : saved_(repAlign()) { setRepAlign(mask); }
  ~RepAlignGuard() { setRepAlign(saved_); }

 private:
  uintptr_t saved_;
};

// The rep movsb path at every size it can take (the engine's out-of-line
// path, above 8 vectors), with its minimum lowered to 1, non-temporal
// stores off and no alignment asked for, then large sizes at odd alignments.
TEST_P(CopyKernelTest, RepMovsbPathAllSizes) {
  ThresholdGuard t(0);
  RepMinGuard r(1);
  RepAlignGuard al(0);
  if (!r.ok()) GTEST_SKIP() << "this CPU has no ERMS: the rep movsb path is never taken";
  Arena a(4100);
  sweepRotating(a, 0, 4100, 4);
  EXPECT_TRUE(a.pristine());
  constexpr size_t kMiB = size_t{1} << 20;
  Arena b(2 * kMiB);
  for (size_t n : {size_t{32768}, size_t{65536 + 3}, kMiB - 1, 2 * kMiB})
    for (size_t m : {size_t{0}, size_t{1}, size_t{63}, size_t{17}}) {
      std::string why = b.run(fn_, n, m, (m * 7 + 5) % kMis);
      if (!why.empty()) FAIL() << name(GetParam()) << ": " << why;
    }
  EXPECT_TRUE(b.pristine());
}

// With SHMCOLL_COPY_REP_ALIGN=32 a large copy takes rep movsb when source and
// destination lie a multiple of 32 bytes apart and the vector loop otherwise:
// every distance modulo 64, at sizes on both sides of the rep minimum.
TEST_P(CopyKernelTest, RepMovsbInStepOnly) {
  ThresholdGuard t(0);
  RepMinGuard r(4096);
  if (!r.ok()) GTEST_SKIP() << "this CPU has no ERMS: the rep movsb path is never taken";
  RepAlignGuard al(31);
  EXPECT_EQ(repAlign(), uintptr_t{31});
  constexpr size_t kMiB = size_t{1} << 20;
  Arena b(kMiB + 64);
  for (size_t n : {size_t{4095}, size_t{4096}, size_t{65536 + 3}, kMiB + 7})
    for (size_t sm : {size_t{0}, size_t{5}})
      for (size_t dm = 0; dm < kMis; ++dm) {
        std::string why = b.run(fn_, n, sm, dm);
        if (!why.empty()) FAIL() << name(GetParam()) << ": n=" << n << " sm=" << sm << " dm=" << dm << ": " << why;
      }
  EXPECT_TRUE(b.pristine());
}

// Large copies on both sides of a lowered threshold, odd alignments.
TEST_P(CopyKernelTest, LargeAcrossNtThreshold) {
  constexpr size_t kMiB = size_t{1} << 20;
  const size_t sizes[] = {4095,       4096,           4097,       8191,           8193,          65536 + 3,
                          kMiB - 1,   kMiB + 13,      3 * kMiB + 77, 4 * kMiB};
  const size_t mis[][2] = {{0, 0}, {1, 63}, {63, 1}, {17, 45}, {32, 0}, {5, 5}};
  Arena a(4 * kMiB);
  for (size_t threshold : {size_t{4096}, size_t{0}}) {
    ThresholdGuard t(threshold);
    for (size_t n : sizes) {
      for (auto& m : mis) {
        std::string why = a.run(fn_, n, m[0], m[1]);
        if (!why.empty()) FAIL() << name(GetParam()) << " threshold " << threshold << ": " << why;
      }
    }
  }
  EXPECT_TRUE(a.pristine());
}

// Nothing outside [src, src+n) is read and nothing outside [dst, dst+n)
// written: both ranges touch an inaccessible page, so any overrun faults.
TEST_P(CopyKernelTest, NoAccessBeyondEitherRange) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rw = 2 * page + 4096;  // room for n up to 4100
  const size_t span = ((rw + page - 1) / page) * page;
  auto mapGuarded = [&](void** base) {
    *base = mmap(nullptr, span + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(*base, MAP_FAILED);
    uint8_t* p = static_cast<uint8_t*>(*base) + page;
    EXPECT_EQ(mprotect(p, span, PROT_READ | PROT_WRITE), 0);
    return p;
  };
  void *sb, *db;
  uint8_t* s = mapGuarded(&sb);
  uint8_t* d = mapGuarded(&db);
  std::vector<uint8_t> pat = pattern(span, 7, true);
  std::memcpy(s, pat.data(), span);
  for (size_t n = 0; n <= 4100; ++n) {
    // Source ends at its guard page, destination starts right after one.
    std::memset(d, 0, n);
    fn_(d, s + span - n, n);
    ASSERT_EQ(std::memcmp(d, s + span - n, n), 0) << name(GetParam()) << " n=" << n;
    // And the other way round.
    std::memset(d + span - n, 0, n);
    fn_(d + span - n, s, n);
    ASSERT_EQ(std::memcmp(d + span - n, s, n), 0) << name(GetParam()) << " n=" << n;
  }
  munmap(sb, span + 2 * page);
  munmap(db, span + 2 * page);
}

// copy() goes to the selected kernel.
TEST_P(CopyKernelTest, SelectRoutesCopy) {
  Kernel saved = active();
  ASSERT_TRUE(select(GetParam()));
  EXPECT_EQ(active(), GetParam());
  Arena a(1024);
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{200}, size_t{1000}}) {
    std::string why = a.run(&shmcoll::copy::copy, n, 3, 7);
    EXPECT_TRUE(why.empty()) << why;
  }
  EXPECT_TRUE(select(saved));
}

INSTANTIATE_TEST_SUITE_P(Kernels, CopyKernelTest, ::testing::ValuesIn(kAllKernels),
                         [](const ::testing::TestParamInfo<Kernel>& info) { return std::string(name(info.param)); });

TEST(CopyDispatchTest, NamesRoundTrip) {
  for (Kernel k : kAllKernels) {
    Kernel out;
    ASSERT_TRUE(parseKernel(name(k), &out));
    EXPECT_EQ(out, k);
  }
  Kernel out;
  EXPECT_TRUE(parseKernel("AVX2", &out));
  EXPECT_EQ(out, Kernel::kAvx2);
  EXPECT_FALSE(parseKernel("avx", &out));
  EXPECT_FALSE(parseKernel("", &out));
  EXPECT_FALSE(parseKernel(nullptr, &out));
}

TEST(CopyDispatchTest, SupportAndSelection) {
  EXPECT_TRUE(supported(Kernel::kScalar));
  EXPECT_TRUE(supported(detail::best()));
  EXPECT_TRUE(supported(active()));
  for (Kernel k : kAllKernels) {
    if (static_cast<int>(k) > static_cast<int>(detail::best())) {
      EXPECT_FALSE(supported(k));
      EXPECT_EQ(function(k), nullptr);
      Kernel before = active();
      EXPECT_FALSE(select(k));
      EXPECT_EQ(active(), before);
    } else {
      EXPECT_TRUE(supported(k)) << name(k);  // support is a prefix of the widths
      EXPECT_NE(function(k), nullptr);
    }
  }
  EXPECT_FALSE(supported(static_cast<Kernel>(7)));
}

TEST(CopyDispatchTest, ChooseHonoursTheRequest) {
  const unsigned mask = detail::supportedMask();
  std::string w;
  EXPECT_EQ(detail::choose(nullptr, mask, &w), detail::best());
  EXPECT_EQ(detail::choose("", mask, &w), detail::best());
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(detail::choose("bogus", mask, &w), detail::best());
  EXPECT_NE(w.find("SHMCOLL_COPY_KERNEL=bogus names no kernel"), std::string::npos) << w;
  for (Kernel k : kAllKernels) {
    w.clear();
    Kernel got = detail::choose(name(k), mask, &w);
    EXPECT_EQ(got, supported(k) ? k : detail::best());
    EXPECT_EQ(w.empty(), supported(k)) << w;
  }
}

// An unsupported request falls back to the widest supported kernel, with a
// warning (simulated CPUs, so this runs on any machine).
TEST(CopyDispatchTest, ChooseFallsBackOnUnsupported) {
  const unsigned sse2Only = 1u << int(Kernel::kScalar) | 1u << int(Kernel::kSse2);
  std::string w;
  EXPECT_EQ(detail::choose("avx512", sse2Only, &w), Kernel::kSse2);
  EXPECT_EQ(w, "shmcoll: SHMCOLL_COPY_KERNEL=avx512: this CPU or OS cannot run it; using sse2");
  w.clear();
  EXPECT_EQ(detail::choose("avx2", 1u << int(Kernel::kScalar), &w), Kernel::kScalar);
  EXPECT_NE(w.find("using scalar"), std::string::npos) << w;
  w.clear();
  EXPECT_EQ(detail::choose("sse2", sse2Only, &w), Kernel::kSse2);
  EXPECT_TRUE(w.empty()) << w;
  EXPECT_EQ(detail::choose(nullptr, sse2Only | 1u << int(Kernel::kAvx2), &w), Kernel::kAvx2);
}

TEST(CopyDispatchTest, NtThreshold) {
  size_t saved = ntThreshold();
  setNtThreshold(12345);
  EXPECT_EQ(ntThreshold(), 12345u);
  setNtThreshold(0);
  EXPECT_EQ(ntThreshold(), SIZE_MAX);
  setNtThreshold(saved);
  EXPECT_EQ(ntThreshold(), saved);
  size_t dflt = detail::defaultNtThreshold();
  EXPECT_GE(dflt, size_t{1} << 20);
  EXPECT_LE(dflt, size_t{64} << 20);
}

TEST(CopyDispatchTest, NtScopeLowersAndRestores) {
  const size_t saved = ntThreshold();
  setNtThreshold(1 << 20);
  {
    NtScope a(16384);
    EXPECT_EQ(ntThreshold(), 16384u);
    {
      NtScope b(65536);  // never raises it
      EXPECT_EQ(ntThreshold(), 16384u);
      NtScope c(4096);
      EXPECT_EQ(ntThreshold(), 4096u);
    }
    EXPECT_EQ(ntThreshold(), 16384u);
    NtScope none(0);  // no change
    EXPECT_EQ(ntThreshold(), 16384u);
  }
  EXPECT_EQ(ntThreshold(), size_t{1} << 20);
  setNtThreshold(0);  // off: a scope turns it on for its lifetime only
  {
    NtScope a(16384);
    EXPECT_EQ(ntThreshold(), 16384u);
  }
  EXPECT_EQ(ntThreshold(), SIZE_MAX);
  setNtThreshold(saved);
}

TEST(CopyDispatchTest, RepMin) {
  const size_t saved = repMin();
  if (!detail::hasErms()) {
    EXPECT_EQ(saved, SIZE_MAX);
    EXPECT_FALSE(setRepMin(4096));
    EXPECT_EQ(repMin(), SIZE_MAX);
    return;
  }
  EXPECT_TRUE(setRepMin(4096));
  EXPECT_EQ(repMin(), 4096u);
  EXPECT_TRUE(setRepMin(0));
  EXPECT_EQ(repMin(), SIZE_MAX);
  EXPECT_TRUE(setRepMin(saved == SIZE_MAX ? 0 : saved));
  EXPECT_EQ(repMin(), saved);
}

// RepScope lowers the rep movsb minimum to repSharedMin() for its lifetime,
// never raises it, and never turns rep movsb on where it is off; copies made
// inside it (8-24 KiB, the sizes it moves to rep movsb, at odd alignments)
// are exact and touch nothing around their destination.
TEST(CopyDispatchTest, RepScopeLowersAndRestores) {
  const size_t saved = repMin();
  if (!detail::hasErms()) {
    RepScope s;
    EXPECT_EQ(repMin(), SIZE_MAX);
    return;
  }
  const size_t shared = repSharedMin();
  ASSERT_EQ(shared, size_t{8192}) << "the default SHMCOLL_COPY_REP_SHARED_MIN";
  ASSERT_TRUE(setRepMin(32768));
  {
    RepScope a;
    EXPECT_EQ(repMin(), shared);
    {
      RepScope b;  // nested: the same, restored to it
      EXPECT_EQ(repMin(), shared);
    }
    EXPECT_EQ(repMin(), shared);
    constexpr size_t kMis = 64;
    std::vector<unsigned char> src(32768 + kMis), dst(32768 + 3 * kMis);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
    for (size_t n : {size_t{8192}, size_t{8193}, size_t{16384 + 5}, size_t{24576 - 1}})
      for (size_t m : {size_t{0}, size_t{1}, size_t{17}, size_t{63}}) {
        std::fill(dst.begin(), dst.end(), 0xa5);
        const size_t so = (m * 7 + 5) % kMis;
        copy::copy(dst.data() + kMis + m, src.data() + so, n);
        for (size_t i = 0; i < dst.size(); ++i) {
          const bool inside = i >= kMis + m && i < kMis + m + n;
          const unsigned char want = inside ? src[so + (i - kMis - m)] : 0xa5;
          ASSERT_EQ(dst[i], want) << "n=" << n << " dst offset " << m << " byte " << i;
        }
      }
  }
  EXPECT_EQ(repMin(), 32768u);
  ASSERT_TRUE(setRepMin(4096));  // already lower: unchanged
  {
    RepScope a;
    EXPECT_EQ(repMin(), 4096u);
  }
  EXPECT_EQ(repMin(), 4096u);
  ASSERT_TRUE(setRepMin(0));  // off: stays off
  {
    RepScope a;
    EXPECT_EQ(repMin(), SIZE_MAX);
  }
  EXPECT_EQ(repMin(), SIZE_MAX);
  setRepMin(saved == SIZE_MAX ? 0 : saved);
}

// SHMCOLL_COPY_KERNEL is read at load time: check it in a re-executed child.
class CopyEnvDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
  void TearDown() override { unsetenv("SHMCOLL_COPY_KERNEL"); }
};

[[noreturn]] void reportActiveAndExit() {
  fprintf(stderr, "active=%s\n", name(active()));
  std::exit(0);
}

[[noreturn]] void reportRepAlignAndExit() {
  fprintf(stderr, "mask=%lu\n", static_cast<unsigned long>(repAlign()));
  std::exit(0);
}

TEST_F(CopyEnvDeathTest, RepAlignSetting) {
  setenv("SHMCOLL_COPY_REP_ALIGN", "32", 1);
  EXPECT_EXIT(reportRepAlignAndExit(), ::testing::ExitedWithCode(0), "^mask=31\n$");
  setenv("SHMCOLL_COPY_REP_ALIGN", "any", 1);
  EXPECT_EXIT(reportRepAlignAndExit(), ::testing::ExitedWithCode(0), "^mask=0\n$");
  unsetenv("SHMCOLL_COPY_REP_ALIGN");
}

TEST_F(CopyEnvDeathTest, ForcedKernelIsUsed) {
  setenv("SHMCOLL_COPY_KERNEL", "scalar", 1);
  EXPECT_EXIT(reportActiveAndExit(), ::testing::ExitedWithCode(0), "^active=scalar\n$");
}

TEST_F(CopyEnvDeathTest, UnknownKernelWarnsOnceAndUsesBest) {
  setenv("SHMCOLL_COPY_KERNEL", "mmx", 1);
  std::string expect = std::string("^shmcoll: SHMCOLL_COPY_KERNEL=mmx names no kernel [^\n]*; using ") +
                       name(detail::best()) + "\nactive=" + name(detail::best()) + "\n$";
  EXPECT_EXIT(reportActiveAndExit(), ::testing::ExitedWithCode(0), expect);
}

TEST_F(CopyEnvDeathTest, UnsupportedKernelWarnsAndFallsBack) {
  if (detail::best() == Kernel::kAvx512) GTEST_SKIP() << "every kernel is supported here";
  setenv("SHMCOLL_COPY_KERNEL", "avx512", 1);
  std::string expect = std::string("^shmcoll: SHMCOLL_COPY_KERNEL=avx512: this CPU or OS cannot run it; using ") +
                       name(detail::best()) + "\nactive=" + name(detail::best()) + "\n$";
  EXPECT_EXIT(reportActiveAndExit(), ::testing::ExitedWithCode(0), expect);
}

}  // namespace
}  // namespace shmcoll::copy

// copy::tiny against memmove: every size up to kTinyMax, every misalignment
// of both ends within a line, disjoint and overlapping ranges; the bytes
// around the destination stay as they were.
TEST(CopyTinyTest, MatchesMemmoveWithGuards) {
  constexpr size_t kBuf = 256;
  for (size_t n = 0; n <= shmcoll::copy::kTinyMax; ++n) {
    for (size_t so = 0; so < 64; so += 7) {
      for (size_t d = 0; d < 64; d += 5) {
        for (int overlap = 0; overlap < 2; ++overlap) {
          unsigned char want[kBuf], got[kBuf];
          for (size_t i = 0; i < kBuf; ++i) want[i] = got[i] = static_cast<unsigned char>(i * 131 + n + 7);
          const size_t src = 64 + so;
          const size_t dst = overlap ? src + d / 4 : 160 + d % 32;  // overlapping: shifted by 0..15
          std::memmove(want + dst, want + src, n);
          shmcoll::copy::tiny(got + dst, got + src, n);
          ASSERT_EQ(0, std::memcmp(want, got, kBuf)) << "n=" << n << " src=" << src << " dst=" << dst;
        }
      }
    }
  }
}
