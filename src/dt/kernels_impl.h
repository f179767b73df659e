// The block-move kernels of dt/kernels.h, instantiated once per instruction set.
//
// Usage: a kernel translation unit defines SHMCOLL_COPY_TARGET and the
// SHMCOLL_COPY_XMM/YMM/ZMM lanes its ISA has (as the copy kernels do),
// SHMCOLL_DT_LANES as the lane list from the widest down to U16, and
// SHMCOLL_DT_TABLE as the name of the Table to define, then includes this
// file.  The lanes and the runtime-length engine come from copy/copy_engine.h;
// like it, everything here has internal linkage so nothing compiled for one
// ISA can be merged into a caller compiled for another.
#ifndef SHMCOLL_DT_LANES
#error "define SHMCOLL_DT_LANES (and the copy engine's lane macros) before including dt/kernels_impl.h"
#endif

#include <algorithm>
#include <utility>

#include "copy/copy_engine.h"
#include "dt/kernels.h"

#define SHMCOLL_DT_INLINE SHMCOLL_COPY_TARGET __attribute__((always_inline)) inline

namespace shmcoll::dt::kern {
namespace {

using copy::Engine;

// Exactly L bytes (L known at compile time) with the widest lanes that fit:
// ceil(L / W) moves of W bytes, the last one ending at byte L (overlapping the
// one before when W does not divide L), all loads before the stores.
template <size_t L, class Lane, class... Rest>
SHMCOLL_DT_INLINE void moveFixed(char* d, const char* s) {
  if constexpr (L == 1) {
    *d = *s;
  } else if constexpr (L >= Lane::kSize) {
    constexpr size_t W = Lane::kSize, k = (L + W - 1) / W;
    typename Lane::T v[k];
    for (size_t i = 0; i + 1 < k; ++i) v[i] = Lane::load(s + i * W);
    v[k - 1] = Lane::load(s + L - W);
    for (size_t i = 0; i + 1 < k; ++i) Lane::store(d + i * W, v[i]);
    Lane::store(d + L - W, v[k - 1]);
  } else {
    static_assert(sizeof...(Rest) > 0, "the lane list must end with U16");
    moveFixed<L, Rest...>(d, s);
  }
}

template <size_t L, bool kPack>
SHMCOLL_DT_INLINE void moveBlock(char* mem, char* stream, uint64_t len) {
  char* d = kPack ? stream : mem;
  const char* s = kPack ? mem : stream;
  if constexpr (L > 0)
    moveFixed<L, SHMCOLL_DT_LANES>(d, s);
  else
    Engine<SHMCOLL_DT_LANES>::copy(d, s, len);
}

SHMCOLL_DT_INLINE const char* ahead(const char* p, int64_t by) {
  // Integer arithmetic: the address may lie outside any object; prefetches never fault.
  return reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(p) + static_cast<uintptr_t>(by));
}

// How a kernel call prefetches: not at all, into L2 for reading (prefetcht1,
// without displacing L1), or into L1 for writing (prefetchw).
enum Pf { kNoPf, kPfL2, kPfWrite };

template <Pf kMode>
SHMCOLL_DT_INLINE void prefetch(const char* p) {
  if constexpr (kMode == kPfL2)
    __builtin_prefetch(p, 0, 2);
  else
    __builtin_prefetch(p, 1, 3);
}

// Unpack prefetches for writing, into L1, when the lines in flight fit there.
// Lines 4 KiB apart share an L1 set (64 sets of 64-byte lines); a stride with
// low set bit g (its residue modulo 4 KiB) reaches only 4096 / max(g, 64) sets,
// e.g. 2 for a 2 KiB stride (the z face of a 256^3 array of doubles).  With
// more blocks ahead (pf / stride) than those sets have ways (8 assumed: the
// fewest of the x86 cores in use) the prefetched lines would evict each other
// before their stores arrive, so they go to L2 instead, for reading.
constexpr uint64_t kL1SetSpan = 4096;
constexpr uint64_t kL1Ways = 8;

inline bool writePrefetchFits(int64_t stride, int64_t pf) {
  const uint64_t a = static_cast<uint64_t>(stride < 0 ? -stride : stride);
  const uint64_t d = static_cast<uint64_t>(pf < 0 ? -pf : pf);
  if (a == 0) return true;
  const uint64_t r = a % kL1SetSpan;
  const uint64_t g = r ? (r & (~r + 1)) : kL1SetSpan;  // largest power of two dividing the stride, capped
  const uint64_t sets = kL1SetSpan / std::max<uint64_t>(g, 64);
  return d / a <= sets * kL1Ways;
}

// Unpack whose stride crowds the blocks into a few L1 sets (the case that
// prefetches into L2 instead, above) may also hold back its stores: a load
// fence after every kFenceBlocks blocks, with SHMCOLL_DT_STORE_FENCE=1
// (fenceCrowded(), dt/kernels.h).  Each store that has executed asks for its
// line ahead of committing; when every line maps to one or two L1 sets (the
// z face of a 256^3 array of doubles: a 2 KiB stride, 16 lines of L1), dozens
// of such requests in flight may evict each other's lines before their stores
// commit.  On one AMD EPYC VM the fence took face z unpack in
// perf/pack/compare.sh from 1.00-1.04 to 1.24-1.84 GB/s
// (docs/perf-log/notebook.md); on another (Zen 4: family 19h, model 11h) it
// took it from 1.49-2.41 down to 0.78-1.17 GB/s (docs/PERFORMANCE.md), so it
// is off unless asked for.
constexpr unsigned kFenceBlocks = 4;

SHMCOLL_DT_INLINE void storeThrottle() {
#if SHMCOLL_COPY_X86
  __builtin_ia32_lfence();
#endif
}

// n blocks; small blocks go U at a time so the loop overhead is shared.
template <size_t L, bool kPack, Pf kMode, bool kFenced = false>
SHMCOLL_DT_INLINE void loop(char* mem, int64_t ms, char* st, int64_t ss, uint64_t n, uint64_t len, int64_t pf) {
  constexpr unsigned U = kFenced ? kFenceBlocks : (L > 0 && L <= 16) ? 4 : (L > 0 && L <= 64) ? 2 : 1;
  if constexpr (U > 1) {
    for (; n >= U; n -= U) {
      for (unsigned k = 0; k < U; ++k) {
        if constexpr (kMode != kNoPf) prefetch<kMode>(ahead(mem + k * ms, pf));
        moveBlock<L, kPack>(mem + k * ms, st + k * ss, len);
      }
      mem += U * ms;
      st += U * ss;
      if constexpr (kFenced) storeThrottle();
    }
  }
  for (; n; --n, mem += ms, st += ss) {
    if constexpr (kMode != kNoPf) prefetch<kMode>(ahead(mem, pf));
    moveBlock<L, kPack>(mem, st, len);
  }
}

template <size_t L, bool kPack>
SHMCOLL_COPY_TARGET void strided(char* mem, int64_t ms, char* st, int64_t ss, uint64_t n, uint64_t len, int64_t pf) {
  if (!pf)
    loop<L, kPack, kNoPf>(mem, ms, st, ss, n, len, 0);
  else if (kPack)
    loop<L, kPack, kPfL2>(mem, ms, st, ss, n, len, pf);
  else if (writePrefetchFits(ms, pf))
    loop<L, kPack, kPfWrite>(mem, ms, st, ss, n, len, pf);
  else if (fenceCrowded())
    loop<L, kPack, kPfL2, true>(mem, ms, st, ss, n, len, pf);
  else
    loop<L, kPack, kPfL2>(mem, ms, st, ss, n, len, pf);
}

template <size_t L, bool kPack>
SHMCOLL_COPY_TARGET void strided2(char* mem, int64_t os, uint64_t on, int64_t is, uint64_t in, char* st,
                                  uint64_t len) {
  const uint64_t bl = L > 0 ? L : len;
  const uint64_t step = in * bl;
  for (; on; --on, mem += os, st += step) loop<L, kPack, kNoPf>(mem, is, st, static_cast<int64_t>(bl), in, len, 0);
}

constexpr size_t kLens[kNumClasses] = {1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, 256, 0};

template <size_t... I>
constexpr Table makeTable(const char* name, std::index_sequence<I...>) {
  return Table{name,
               {&strided<kLens[I], true>...},
               {&strided<kLens[I], false>...},
               {&strided2<kLens[I], true>...},
               {&strided2<kLens[I], false>...}};
}

}  // namespace

namespace detail {
const Table SHMCOLL_DT_TABLE = makeTable(SHMCOLL_DT_NAME, std::make_index_sequence<kNumClasses>());
}  // namespace detail

}  // namespace shmcoll::dt::kern

#undef SHMCOLL_DT_INLINE
