// AVX-512 copy kernel: 64-byte vectors, one cache line per move, so the
// aligned main loop writes whole lines.  Only AVX512F moves are used; copy.cc
// runs it only when cpuid and XCR0 (opmask and ZMM state) allow.
#include "copy/kernels.h"

#if SHMCOLL_COPY_X86
#define SHMCOLL_COPY_TARGET __attribute__((target("avx512f")))
#define SHMCOLL_COPY_XMM 1
#define SHMCOLL_COPY_YMM 1
#define SHMCOLL_COPY_ZMM 1
#include "copy/copy_engine.h"

namespace shmcoll::copy::detail {

SHMCOLL_COPY_TARGET void copyAvx512(void* dst, const void* src, size_t n) {
  Engine<Zmm, Ymm, Xmm, U64, U32, U16>::copy(dst, src, n);
}

}  // namespace shmcoll::copy::detail
#endif
