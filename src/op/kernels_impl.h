// The arithmetic and bitwise kernels of the predefined operations, included
// by each unit that builds them for one instruction set (op.cc: the
// baseline; op_avx2.cc: AVX2).  Everything here has internal linkage, so the
// builds never meet at link time (an AVX2 copy of a shared inline function
// could otherwise be picked for a CPU without AVX2).
//
// Kernels are plain loops over unaligned element views (a receive buffer at
// an odd address is legal), which the compiler vectorises at the unit's
// vector width for the arithmetic and bitwise cases.
#pragma once

#include <cstdint>
#include <type_traits>

#include "op/kernels.h"

namespace shmcoll::op {
namespace {

template <class T>
struct Un {
  using type [[gnu::aligned(1), gnu::may_alias]] = T;
};

template <class T, class F>
inline void binary(const void* in, void* io, uint64_t n, F f) {
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

template <class T>
void arith(Kind k, const void* in, void* io, uint64_t n) {
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

// The kernel for elements of `bytes` bytes (see arithAvx2).
inline ArithFn arithFor(uint32_t bytes, bool isFloat, bool isSigned) {
  if (isFloat) return bytes == 4 ? arith<float> : bytes == 8 ? arith<double> : nullptr;
  switch (bytes) {
    case 1:
      return isSigned ? arith<int8_t> : arith<uint8_t>;
    case 2:
      return isSigned ? arith<int16_t> : arith<uint16_t>;
    case 4:
      return isSigned ? arith<int32_t> : arith<uint32_t>;
    case 8:
      return isSigned ? arith<int64_t> : arith<uint64_t>;
    default:
      return nullptr;
  }
}

}  // namespace
}  // namespace shmcoll::op
