// Scalar copy kernel: 8-byte general-register moves, for CPUs without SSE2
// and as the reference the SIMD kernels are measured against.
//
// The optimiser must not turn it into an SSE kernel behind our back: GCC
// compiles it with target("general-regs-only"); for other compilers each
// loaded value passes through an empty asm, which stops them from merging
// neighbouring 8-byte moves into vector ones.  Non-temporal stores use movnti,
// a general-register instruction.
#include "copy/kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && SHMCOLL_COPY_X86
#define SHMCOLL_COPY_TARGET __attribute__((target("general-regs-only")))
#else
#define SHMCOLL_COPY_TARGET
#define SHMCOLL_COPY_OPAQUE_INT 1
#endif
#include "copy/copy_engine.h"

namespace shmcoll::copy::detail {

SHMCOLL_COPY_TARGET void copyScalar(void* dst, const void* src, size_t n) {
  Engine<U64, U32, U16>::copy(dst, src, n);
}

}  // namespace shmcoll::copy::detail
