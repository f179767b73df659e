// AVX2 copy kernel: 32-byte vectors.  Only AVX moves are used, but the kernel
// is offered on CPUs with AVX2 (every AVX-only CPU is old enough that SSE2 is
// as fast for copies).  Compiled for AVX2 here whatever the build flags;
// copy.cc runs it only when cpuid and XCR0 say it can run.
#include "copy/kernels.h"

#if SHMCOLL_COPY_X86
#define SHMCOLL_COPY_TARGET __attribute__((target("avx2")))
#define SHMCOLL_COPY_XMM 1
#define SHMCOLL_COPY_YMM 1
#include "copy/copy_engine.h"

namespace shmcoll::copy::detail {

SHMCOLL_COPY_TARGET void copyAvx2(void* dst, const void* src, size_t n) {
  Engine<Ymm, Xmm, U64, U32, U16>::copy(dst, src, n);
}

}  // namespace shmcoll::copy::detail
#endif
