// The element-wise kernels of the predefined operations, built once per
// instruction set: op.cc holds the baseline (SSE2) build and picks the AVX2
// build of the arithmetic and bitwise kernels (op_avx2.cc) once, when the
// CPU and the OS support it (copy::supported).  The kernels themselves are
// written once, in kernels_impl.h.
#pragma once

#include <cstdint>

namespace shmcoll::op {

enum Kind : uint8_t { kMax, kMin, kSum, kProd, kLand, kBand, kLor, kBor, kLxor, kBxor, kMinloc, kMaxloc };

// Applies kind k to n elements: io[i] = io[i] (k) in[i].
using ArithFn = void (*)(Kind k, const void* in, void* io, uint64_t n);

// The AVX2 build of the arithmetic kernel for elements of `bytes` bytes
// (1, 2, 4 or 8; `isFloat`: float or double; `isSigned`: a signed integer),
// or nullptr when this build has none.
ArithFn arithAvx2(uint32_t bytes, bool isFloat, bool isSigned);

}  // namespace shmcoll::op
