// The AVX2 build of the arithmetic and bitwise kernels (op/kernels.h says
// how a build is chosen): the same source as the baseline, compiled for
// 32-byte vectors, twice the work per instruction of the baseline's SSE2
// loops for every arithmetic and bitwise operation.
#include <cstdint>
#include <type_traits>

#include "op/kernels.h"

#if defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2")
#include "op/kernels_impl.h"

namespace shmcoll::op {
ArithFn arithAvx2(uint32_t bytes, bool isFloat, bool isSigned) { return arithFor(bytes, isFloat, isSigned); }
}  // namespace shmcoll::op
#pragma GCC pop_options
#else
namespace shmcoll::op {
ArithFn arithAvx2(uint32_t, bool, bool) { return nullptr; }
}  // namespace shmcoll::op
#endif
