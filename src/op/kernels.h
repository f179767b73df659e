// The element kernels of the predefined reduction operations, free of any
// MPI handle type: shared by op.cc (shmcoll's own MPI_Op) and the accelerator
// (src/accel/optable.cc, compiled against a host MPI's mpi.h), which each map
// their own handles onto Kind and an element type once.
//
// Each kernel computes inout[i] = in[i] (op) inout[i] for n elements through
// unaligned views (a buffer at an odd address is legal); plain loops the
// compiler vectorises for the arithmetic and bitwise cases.  Integers wrap
// around as C unsigned arithmetic does; MAXLOC/MINLOC keep the smaller index
// on equal values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace shmcoll::op::kernels {

enum Kind : uint8_t { kMax, kMin, kSum, kProd, kLand, kBand, kLor, kBor, kLxor, kBxor, kMinloc, kMaxloc };

template <class T>
struct Un {
  using type [[gnu::aligned(1), gnu::may_alias]] = T;
};

template <class T, class F>
[[gnu::always_inline]] inline void binary(const void* in, void* io, uint64_t n, F f) {
  auto* a = static_cast<const typename Un<T>::type*>(in);
  auto* b = static_cast<typename Un<T>::type*>(io);
  for (uint64_t i = 0; i < n; ++i) b[i] = f(a[i], b[i]);
}

// Integer arithmetic wraps around (done in the unsigned type: signed
// overflow would be undefined); floating point is plain.
template <class T, class F>
inline T wrap(T a, T b, F f) {
  if constexpr (std::is_integral_v<T>) {
    // At least unsigned int: narrower unsigned types would promote to int.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
    return static_cast<T>(static_cast<U>(f(static_cast<U>(a), static_cast<U>(b))));
  } else {
    return f(a, b);
  }
}

// The arithmetic and bitwise kernels' body, inlined into one build per
// instruction set below.
template <class T>
[[gnu::always_inline]] inline void arithBody(Kind k, const void* in, void* io, uint64_t n) {
  switch (k) {
    case kMax:
      return binary<T>(in, io, n, [](T a, T b) { return a > b ? a : b; });
    case kMin:
      return binary<T>(in, io, n, [](T a, T b) { return a < b ? a : b; });
    case kSum:
      return binary<T>(in, io, n, [](T a, T b) { return wrap<T>(a, b, [](auto x, auto y) { return x + y; }); });
    case kProd:
      return binary<T>(in, io, n, [](T a, T b) { return wrap<T>(a, b, [](auto x, auto y) { return x * y; }); });
    case kLand:
      return binary<T>(in, io, n, [](T a, T b) { return static_cast<T>((a != T(0)) && (b != T(0))); });
    case kLor:
      return binary<T>(in, io, n, [](T a, T b) { return static_cast<T>((a != T(0)) || (b != T(0))); });
    case kLxor:
      return binary<T>(in, io, n, [](T a, T b) { return static_cast<T>((a != T(0)) != (b != T(0))); });
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (k) {
      case kBand:
        return binary<T>(in, io, n, [](T a, T b) { return static_cast<T>(a & b); });
      case kBor:
        return binary<T>(in, io, n, [](T a, T b) { return static_cast<T>(a | b); });
      case kBxor:
        return binary<T>(in, io, n, [](T a, T b) { return static_cast<T>(a ^ b); });
      default:
        break;
    }
  }
}

// The widest vector build of the kernels this CPU (and the OS, for the
// registers) runs: AVX-512 of the F, BW and VL sets, AVX2, or neither; asked
// once.
enum class Isa : uint8_t { kBase, kAvx2, kAvx512 };
inline Isa vectorIsa() {
#if defined(__x86_64__) || defined(__i386__)
  static const Isa isa = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl"))
      return Isa::kAvx512;
    return __builtin_cpu_supports("avx2") ? Isa::kAvx2 : Isa::kBase;
  }();
  return isa;
#else
  return Isa::kBase;
#endif
}
inline bool hasAvx2() { return vectorIsa() >= Isa::kAvx2; }
inline bool hasAvx512() { return vectorIsa() == Isa::kAvx512; }

template <class T>
void arithBase(Kind k, const void* in, void* io, uint64_t n) {
  arithBody<T>(k, in, io, n);
}
#if defined(__x86_64__) || defined(__i386__)
// SUM, PROD, MAX and MIN of floating-point types, and SUM, MAX and MIN of
// integers, as explicit loops of W-byte vectors, four at a time: the four
// input vectors are loaded before the four inout vectors, combined and
// stored.  GCC's vectorisation of binary() walks one vector per step with
// the store of step i before the loads of step i + 1.  On an AMD EPYC (Zen
// 3), 4 KiB of doubles in the first-level cache under a lock and a fence,
// as MPI_Accumulate runs it: 0.108 against 0.091 us with both buffers
// page-aligned, 0.106 against 0.069 with the input 2 KiB in, about even
// with inout 16 bytes in; in the library, the 4 KiB accumulate under
// lock_all went from 0.19 to 0.14 us (docs/PERFORMANCE.md, 2026-12-02).
// Integer sums are taken on unsigned elements (they wrap); the rest of the
// kinds, integer products included (no 64-bit vector multiply below
// AVX-512), and the last fewer than 4 * W / sizeof(T) elements go through
// arithBody.
template <class T>
constexpr bool kVectorElement = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                (std::is_integral_v<T> && !std::is_same_v<T, bool> && sizeof(T) <= 8);
// The element type of T's vectors: T for floating point, else the
// fixed-width integer of T's size and signedness (unsigned for a sum).
template <size_t S>
struct FixedInt;
template <>
struct FixedInt<1> { using I = int8_t; using U = uint8_t; };
template <>
struct FixedInt<2> { using I = int16_t; using U = uint16_t; };
template <>
struct FixedInt<4> { using I = int32_t; using U = uint32_t; };
template <>
struct FixedInt<8> { using I = int64_t; using U = uint64_t; };
template <class T, bool Wrap>
using VectorElement =
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_signed_v<T> && !Wrap, typename FixedInt<sizeof(T)>::I,
                                          typename FixedInt<sizeof(T)>::U>>;
// y = x (op) y on vectors (by reference: vector arguments by value would
// depend on the caller's instruction set, -Wpsabi).
template <Kind K, class V>
[[gnu::always_inline]] inline void vectorOp(const V& x, V& y) {
  if constexpr (K == kSum) y = x + y;
  if constexpr (K == kProd) y = x * y;
  if constexpr (K == kMax) y = x > y ? x : y;
  if constexpr (K == kMin) y = x < y ? x : y;
}
template <class T, unsigned W, Kind K>
[[gnu::always_inline]] inline uint64_t vectorLoop(const void* in, void* io, uint64_t n) {
  using E = VectorElement<T, K == kSum>;
  typedef E V __attribute__((vector_size(W)));
  constexpr uint64_t kStep = 4 * W / sizeof(T);
  const char* a = static_cast<const char*>(in);
  char* b = static_cast<char*>(io);
  uint64_t i = 0;
  for (; i + kStep <= n; i += kStep) {
    const char* p = a + i * sizeof(T);
    char* q = b + i * sizeof(T);
    V x0, x1, x2, x3, y0, y1, y2, y3;
    std::memcpy(&x0, p, W);
    std::memcpy(&x1, p + W, W);
    std::memcpy(&x2, p + 2 * W, W);
    std::memcpy(&x3, p + 3 * W, W);
    std::memcpy(&y0, q, W);
    std::memcpy(&y1, q + W, W);
    std::memcpy(&y2, q + 2 * W, W);
    std::memcpy(&y3, q + 3 * W, W);
    vectorOp<K>(x0, y0);
    vectorOp<K>(x1, y1);
    vectorOp<K>(x2, y2);
    vectorOp<K>(x3, y3);
    std::memcpy(q, &y0, W);
    std::memcpy(q + W, &y1, W);
    std::memcpy(q + 2 * W, &y2, W);
    std::memcpy(q + 3 * W, &y3, W);
  }
  return i;
}
template <class T, unsigned W>
[[gnu::always_inline]] inline void vectorBody(Kind k, const void* in, void* io, uint64_t n) {
  uint64_t done = 0;
  if constexpr (kVectorElement<T>) {
    // (An input that starts before inout and runs into it would be read
    // after some of its elements were combined in the scalar order.)
    const char* from = static_cast<const char*>(in);
    const char* to = static_cast<const char*>(io);
    if (!(from < to && to < from + n * sizeof(T)))
      switch (k) {
        case kSum: done = vectorLoop<T, W, kSum>(in, io, n); break;
        case kMax: done = vectorLoop<T, W, kMax>(in, io, n); break;
        case kMin: done = vectorLoop<T, W, kMin>(in, io, n); break;
        case kProd:
          if constexpr (std::is_floating_point_v<T>) done = vectorLoop<T, W, kProd>(in, io, n);
          break;
        default: break;
      }
  }
  if (done < n)
    arithBody<T>(k, static_cast<const char*>(in) + done * sizeof(T), static_cast<char*>(io) + done * sizeof(T),
                 n - done);
}
// The kernels with 32-byte vectors (vectorBody, else GCC's loops): in the
// first-level cache (the accumulates and reductions of a few KiB) they run
// up to twice as fast as the 16-byte build; from memory they gain little.
template <class T>
[[gnu::target("avx2")]] void arithAvx2(Kind k, const void* in, void* io, uint64_t n) {
  vectorBody<T, 32>(k, in, io, n);
}
// And with 64-byte vectors (GCC vectorises these loops with them under this
// target): MPI_Accumulate of 4 KiB of doubles under MPI_Win_lock_all, 2
// ranks on 2 cores of an Intel Xeon, spent half its time in the AVX2 loop
// (docs/PERFORMANCE.md, 2026-12-01, evening).
template <class T>
[[gnu::target("avx512f,avx512bw,avx512vl")]] void arithAvx512(Kind k, const void* in, void* io, uint64_t n) {
  vectorBody<T, 64>(k, in, io, n);
}
#endif

// inout[i] = in[i] (op) inout[i] for the arithmetic and bitwise kinds.
template <class T>
void arith(Kind k, const void* in, void* io, uint64_t n) {
#if defined(__x86_64__) || defined(__i386__)
  switch (vectorIsa()) {
    case Isa::kAvx512: return arithAvx512<T>(k, in, io, n);
    case Isa::kAvx2: return arithAvx2<T>(k, in, io, n);
    case Isa::kBase: break;
  }
#endif
  arithBase<T>(k, in, io, n);
}

// Complex numbers as (re, im) pairs of T, read through unaligned views.
template <class T>
void complexOp(Kind k, const void* in, void* io, uint64_t n) {
  auto* a = static_cast<const typename Un<T>::type*>(in);
  auto* b = static_cast<typename Un<T>::type*>(io);
  if (k == kSum) {
    for (uint64_t i = 0; i < 2 * n; ++i) b[i] = a[i] + b[i];
    return;
  }
  for (uint64_t i = 0; i < n; ++i) {
    const T ar = a[2 * i], ai = a[2 * i + 1], br = b[2 * i], bi = b[2 * i + 1];
    b[2 * i] = ar * br - ai * bi;
    b[2 * i + 1] = ar * bi + ai * br;
  }
}

// MAXLOC/MINLOC on (value, int index) pairs `stride` bytes apart with the
// index at byte `idxOff`: the better value wins; equal values keep the
// smaller index.
template <class V>
void loc(Kind k, const char* in, char* io, uint64_t n, size_t stride, size_t idxOff) {
  for (uint64_t i = 0; i < n; ++i, in += stride, io += stride) {
    V a, b;
    int ia, ib;
    std::memcpy(&a, in, sizeof(V));
    std::memcpy(&b, io, sizeof(V));
    std::memcpy(&ia, in + idxOff, sizeof(int));
    std::memcpy(&ib, io + idxOff, sizeof(int));
    const bool better = k == kMaxloc ? a > b : a < b;
    if (better) {
      std::memcpy(io, &a, sizeof(V));
      std::memcpy(io + idxOff, &ia, sizeof(int));
    } else if (a == b && ia < ib) {
      std::memcpy(io + idxOff, &ia, sizeof(int));
    }
  }
}

}  // namespace shmcoll::op::kernels
