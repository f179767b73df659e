// Copy kernels against memcpy, 64 B .. 64 MiB; bytes_per_second counts bytes
// copied (not read + written).
//
//   copy/<fn>/<n>             page-aligned source and destination
//   copy_mis/<fn>/<n>         source +3, destination +1 bytes off alignment
//   copy_small_random/<fn>    a fixed stream of random sizes 0..255 through
//                             copy() (dispatch + size-class branches, with
//                             mispredictions) vs memcpy
//   nt/<kernel>/<n>/<0|1>     the active kernel with non-temporal stores off/on
//   nt_then_read/<kernel>/<n>/<0|1>
//                             the same copy followed by a second copy that
//                             reads the destination back, as a peer rank
//                             would: what non-temporal stores cost a consumer
//
// Human table on stdout; for CSV or JSON add
//   --benchmark_out=copy.csv --benchmark_out_format=csv
// Filter with --benchmark_filter=, e.g. 'copy/(avx2|memcpy)/'.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "copy/copy.h"
#include "copy/kernels.h"

namespace {

using shmcoll::copy::CopyFn;
using shmcoll::copy::Kernel;

constexpr size_t kMaxBytes = size_t{64} << 20;

// Three page-aligned buffers, allocated and touched once.
char* buffer(int which) {
  static char* bufs[3] = {};
  if (!bufs[which]) {
    bufs[which] = static_cast<char*>(std::aligned_alloc(4096, kMaxBytes + 4096));
    std::memset(bufs[which], which + 1, kMaxBytes + 4096);
  }
  return bufs[which];
}

void libcMemcpy(void* d, const void* s, size_t n) { std::memcpy(d, s, n); }

void bmCopy(benchmark::State& st, CopyFn fn, size_t srcMis, size_t dstMis) {
  const size_t n = static_cast<size_t>(st.range(0));
  char* d = buffer(0) + dstMis;
  const char* s = buffer(1) + srcMis;
  for (auto _ : st) {
    fn(d, s, n);
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(n));
}

void bmSmallRandom(benchmark::State& st, CopyFn fn) {
  std::vector<uint16_t> sizes(4096);
  std::mt19937 rng(42);
  for (auto& x : sizes) x = static_cast<uint16_t>(rng() % 256);
  char* d = buffer(0);
  const char* s = buffer(1);
  size_t bytes = 0, i = 0;
  for (auto _ : st) {
    size_t n = sizes[i++ & 4095];
    fn(d + (n & 63), s + (n >> 2 & 63), n);
    bytes += n;
    benchmark::ClobberMemory();
  }
  st.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// Copies with non-temporal stores forced on or off; with readBack, a second
// copy (regular stores) reads the destination as a consumer would.
void bmNt(benchmark::State& st, CopyFn fn, bool readBack) {
  const size_t n = static_cast<size_t>(st.range(0));
  const bool nt = st.range(1) != 0;
  const size_t saved = shmcoll::copy::ntThreshold();
  char* mid = buffer(0);
  const char* s = buffer(1);
  char* out = buffer(2);
  for (auto _ : st) {
    shmcoll::copy::setNtThreshold(nt ? 1 : 0);
    fn(mid, s, n);
    if (readBack) {
      shmcoll::copy::setNtThreshold(0);
      fn(out, mid, n);
    }
    benchmark::ClobberMemory();
  }
  shmcoll::copy::setNtThreshold(saved);
  st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(n));
}

struct Named {
  std::string name;
  CopyFn fn;
};

std::vector<Named> contenders() {
  std::vector<Named> v;
  for (Kernel k : {Kernel::kAvx512, Kernel::kAvx2, Kernel::kSse2, Kernel::kScalar})
    if (CopyFn fn = shmcoll::copy::function(k)) v.push_back({shmcoll::copy::name(k), fn});
  v.push_back({"memcpy", libcMemcpy});
  return v;
}

const int kRegistered = [] {
  for (const Named& c : contenders()) {
    benchmark::RegisterBenchmark(("copy/" + c.name).c_str(), bmCopy, c.fn, 0, 0)
        ->RangeMultiplier(4)
        ->Range(64, kMaxBytes);
  }
  for (const Named& c : contenders()) {
    benchmark::RegisterBenchmark(("copy_mis/" + c.name).c_str(), bmCopy, c.fn, 3, 1)
        ->RangeMultiplier(16)
        ->Range(64, kMaxBytes);
  }
  benchmark::RegisterBenchmark("copy_small_random/copy()", bmSmallRandom, &shmcoll::copy::copy);
  benchmark::RegisterBenchmark("copy_small_random/memcpy", bmSmallRandom, libcMemcpy);
  const Kernel k = shmcoll::copy::active();
  const std::string kn = shmcoll::copy::name(k);
  for (bool readBack : {false, true}) {
    auto* b = benchmark::RegisterBenchmark(((readBack ? "nt_then_read/" : "nt/") + kn).c_str(), bmNt,
                                           shmcoll::copy::function(k), readBack);
    for (int64_t n = 256 << 10; n <= static_cast<int64_t>(kMaxBytes); n *= 2)
      for (int nt : {0, 1}) b->Args({n, nt});
  }
  return 0;
}();

}  // namespace
