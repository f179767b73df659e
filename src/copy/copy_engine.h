// The size-class copy engine, instantiated once per vector width.
//
// How it works (V = the kernel's vector size: 64 B AVX-512, 32 B AVX2,
// 16 B SSE2, 8 B scalar):
//   n <= 2V      two moves of the widest lane that fits, one at the start and
//                one ending at the last byte; they overlap in the middle, so
//                every n is covered with no byte loop (the lanes halve down to
//                2 bytes, then one byte move for n == 1).
//   n <= 4V      2 vectors from the head + 2 ending at the tail, all loaded
//                before any store.
//   n <= 8V      4 + 4 the same way.
//   n >  8V      out of line: one unaligned vector for the head, then the
//                destination is aligned to V and a 4-vector loop (unaligned
//                loads, aligned stores) runs while more than 4V remain; the
//                last 4V are stored with unaligned moves ending at the last
//                byte, overlapping the loop's final block.  From
//                ntThresholdBytes up the loop uses non-temporal stores and an
//                sfence, so that a copy larger than the cache neither evicts
//                the working set nor pays for reading the destination lines
//                it is about to overwrite.  Between repMinBytes and that
//                threshold, on CPUs with ERMS, one `rep movsb` instead: it
//                writes whole lines without reading them first but keeps
//                them in the cache (see copy.cc for the measurements) --
//                where the CPU's `rep movsb` is slow for buffers out of step
//                (repAlignMask), only for buffers in step.
// Cost: tiny sizes are a handful of predictable compares and 2 loads + 2
// stores; nothing is read or written outside [src, src+n) and [dst, dst+n),
// so a copy ending at a page boundary never faults.  Semantics are memcpy's:
// the ranges must not overlap (the engine loads and stores in an order that
// assumes so).
//
// Usage: a kernel translation unit defines SHMCOLL_COPY_TARGET (e.g.
// __attribute__((target("avx2")))) and SHMCOLL_COPY_XMM/YMM/ZMM for the lanes
// its ISA has, includes this file, and instantiates Engine<...>::copy in its
// extern kernel function.  Everything here has internal linkage, so no
// function compiled for one ISA can be merged by the linker into a caller
// compiled for another; for the same reason the engine calls no inline
// library function (only intrinsics and __builtin_* which never become
// out-of-line copies).
#ifndef SHMCOLL_COPY_TARGET
#error "define SHMCOLL_COPY_TARGET before including copy/copy_engine.h"
#endif

#include <cstddef>
#include <cstdint>
#if defined(SHMCOLL_COPY_XMM) || defined(SHMCOLL_COPY_YMM) || defined(SHMCOLL_COPY_ZMM)
#include <immintrin.h>
#endif

#include "copy/kernels.h"

#define SHMCOLL_COPY_INLINE SHMCOLL_COPY_TARGET __attribute__((always_inline)) inline

namespace shmcoll::copy {
namespace {

// ---- lanes: one fixed-size move each ----------------------------------------

template <class U>
struct IntLane {
  using T = U;
  static constexpr size_t kSize = sizeof(U);
  SHMCOLL_COPY_INLINE static T load(const char* p) {
    T v;
    __builtin_memcpy(&v, p, sizeof v);
#ifdef SHMCOLL_COPY_OPAQUE_INT
    asm("" : "+r"(v));  // no instruction; stops the compiler from pairing moves into SSE ones
#endif
    return v;
  }
  SHMCOLL_COPY_INLINE static void store(char* p, T v) { __builtin_memcpy(p, &v, sizeof v); }
  SHMCOLL_COPY_INLINE static void storeAligned(char* p, T v) { store(p, v); }
#if SHMCOLL_COPY_X86
  // movnti needs no alignment and only general registers, so the scalar
  // kernel can use it without SSE.
  SHMCOLL_COPY_INLINE static void stream(char* p, T v) {
    static_assert(sizeof(T) == 8);
    asm("movnti %1, %0" : "=m"(*reinterpret_cast<T*>(p)) : "r"(v));
  }
#else
  SHMCOLL_COPY_INLINE static void stream(char* p, T v) { store(p, v); }
#endif
};
using U16 = IntLane<uint16_t>;
using U32 = IntLane<uint32_t>;
using U64 = IntLane<uint64_t>;

#ifdef SHMCOLL_COPY_XMM
struct Xmm {
  using T = __m128i;
  static constexpr size_t kSize = 16;
  SHMCOLL_COPY_INLINE static T load(const char* p) { return _mm_loadu_si128(reinterpret_cast<const T*>(p)); }
  SHMCOLL_COPY_INLINE static void store(char* p, T v) { _mm_storeu_si128(reinterpret_cast<T*>(p), v); }
  SHMCOLL_COPY_INLINE static void storeAligned(char* p, T v) { _mm_store_si128(reinterpret_cast<T*>(p), v); }
  SHMCOLL_COPY_INLINE static void stream(char* p, T v) { _mm_stream_si128(reinterpret_cast<T*>(p), v); }
};
#endif

#ifdef SHMCOLL_COPY_YMM
struct Ymm {
  using T = __m256i;
  static constexpr size_t kSize = 32;
  SHMCOLL_COPY_INLINE static T load(const char* p) { return _mm256_loadu_si256(reinterpret_cast<const T*>(p)); }
  SHMCOLL_COPY_INLINE static void store(char* p, T v) { _mm256_storeu_si256(reinterpret_cast<T*>(p), v); }
  SHMCOLL_COPY_INLINE static void storeAligned(char* p, T v) { _mm256_store_si256(reinterpret_cast<T*>(p), v); }
  SHMCOLL_COPY_INLINE static void stream(char* p, T v) { _mm256_stream_si256(reinterpret_cast<T*>(p), v); }
};
#endif

#ifdef SHMCOLL_COPY_ZMM
struct Zmm {
  using T = __m512i;
  static constexpr size_t kSize = 64;
  SHMCOLL_COPY_INLINE static T load(const char* p) { return _mm512_loadu_si512(p); }
  SHMCOLL_COPY_INLINE static void store(char* p, T v) { _mm512_storeu_si512(p, v); }
  SHMCOLL_COPY_INLINE static void storeAligned(char* p, T v) { _mm512_store_si512(p, v); }
  SHMCOLL_COPY_INLINE static void stream(char* p, T v) { _mm512_stream_si512(reinterpret_cast<T*>(p), v); }
};
#endif

// Orders the non-temporal stores before anything the caller stores next
// (e.g. the flag that publishes the data).
SHMCOLL_COPY_INLINE void ntFence() {
#if SHMCOLL_COPY_X86
  asm volatile("sfence" ::: "memory");
#endif
}

// ---- the engine ---------------------------------------------------------------

// n < 2 * L::kSize (or n == 2 * L::kSize for the first lane): two overlapping
// moves of L, else recurse to the next lane, which is half as wide.
template <class L, class... Rest>
SHMCOLL_COPY_INLINE void copyShort(char* d, const char* s, size_t n) {
  if (n >= L::kSize) {
    typename L::T a = L::load(s);
    typename L::T b = L::load(s + n - L::kSize);
    L::store(d, a);
    L::store(d + n - L::kSize, b);
    return;
  }
  if constexpr (sizeof...(Rest) > 0) {
    copyShort<Rest...>(d, s, n);
  } else {
    static_assert(L::kSize == 2, "the lane list must end with U16");
    if (n) *d = *s;
  }
}

template <class L, class Next, class... Rest>
constexpr bool halving() {
  if constexpr (sizeof...(Rest) == 0) return L::kSize == 2 * Next::kSize;
  else return L::kSize == 2 * Next::kSize && halving<Next, Rest...>();
}

template <class V, class... Narrower>
struct Engine {
  static_assert(halving<V, Narrower...>(), "each lane must be half the previous one");
  using T = typename V::T;
  static constexpr size_t k = V::kSize;

  SHMCOLL_COPY_INLINE static void copy(void* dst, const void* src, size_t n) {
    char* d = static_cast<char*>(dst);
    const char* s = static_cast<const char*>(src);
    if (__builtin_expect(n <= 2 * k, 1)) {
      copyShort<V, Narrower...>(d, s, n);
      return;
    }
    if (n <= 4 * k) {
      T a = V::load(s), b = V::load(s + k);
      T c = V::load(s + n - 2 * k), e = V::load(s + n - k);
      V::store(d, a);
      V::store(d + k, b);
      V::store(d + n - 2 * k, c);
      V::store(d + n - k, e);
      return;
    }
    if (n <= 8 * k) {
      T a0 = V::load(s), a1 = V::load(s + k), a2 = V::load(s + 2 * k), a3 = V::load(s + 3 * k);
      T b0 = V::load(s + n - 4 * k), b1 = V::load(s + n - 3 * k);
      T b2 = V::load(s + n - 2 * k), b3 = V::load(s + n - k);
      V::store(d, a0);
      V::store(d + k, a1);
      V::store(d + 2 * k, a2);
      V::store(d + 3 * k, a3);
      V::store(d + n - 4 * k, b0);
      V::store(d + n - 3 * k, b1);
      V::store(d + n - 2 * k, b2);
      V::store(d + n - k, b3);
      return;
    }
    large(d, s, n);
  }

  // n > 8V.
  SHMCOLL_COPY_TARGET __attribute__((noinline)) static void large(char* d, const char* s, size_t n) {
    if (n >= __atomic_load_n(&detail::ntThresholdBytes, __ATOMIC_RELAXED))
      loop<true>(d, s, n);
#if SHMCOLL_COPY_X86
    else if (n >= __atomic_load_n(&detail::repMinBytes, __ATOMIC_RELAXED) &&
             ((reinterpret_cast<uintptr_t>(d) - reinterpret_cast<uintptr_t>(s)) &
              __atomic_load_n(&detail::repAlignMask, __ATOMIC_RELAXED)) == 0)
      asm volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
#endif
    else
      loop<false>(d, s, n);
  }

  template <bool kNt>
  SHMCOLL_COPY_INLINE static void loop(char* d, const char* s, size_t n) {
    char* const dEnd = d + n;
    const char* const sEnd = s + n;
    V::store(d, V::load(s));
    // 1..V bytes: a full V when d is already aligned keeps the loop branch-free.
    size_t skip = k - (reinterpret_cast<uintptr_t>(d) & (k - 1));
    d += skip;
    s += skip;
    n -= skip;  // still > 7V
    do {
      T a = V::load(s), b = V::load(s + k), c = V::load(s + 2 * k), e = V::load(s + 3 * k);
      if constexpr (kNt) {
        V::stream(d, a);
        V::stream(d + k, b);
        V::stream(d + 2 * k, c);
        V::stream(d + 3 * k, e);
      } else {
        V::storeAligned(d, a);
        V::storeAligned(d + k, b);
        V::storeAligned(d + 2 * k, c);
        V::storeAligned(d + 3 * k, e);
      }
      d += 4 * k;
      s += 4 * k;
      n -= 4 * k;
    } while (n > 4 * k);
    if constexpr (kNt) ntFence();
    // The last 1..4V bytes, as 4 vectors ending at the last byte.
    T a = V::load(sEnd - 4 * k), b = V::load(sEnd - 3 * k), c = V::load(sEnd - 2 * k), e = V::load(sEnd - k);
    V::store(dEnd - 4 * k, a);
    V::store(dEnd - 3 * k, b);
    V::store(dEnd - 2 * k, c);
    V::store(dEnd - k, e);
  }
};

}  // namespace
}  // namespace shmcoll::copy

#undef SHMCOLL_COPY_INLINE
