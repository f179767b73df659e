// SSE2 copy kernel: 16-byte vectors (the x86-64 baseline).
#include "copy/kernels.h"

#if SHMCOLL_COPY_X86
#define SHMCOLL_COPY_TARGET __attribute__((target("sse2")))
#define SHMCOLL_COPY_XMM 1
#include "copy/copy_engine.h"

namespace shmcoll::copy::detail {

SHMCOLL_COPY_TARGET void copySse2(void* dst, const void* src, size_t n) {
  Engine<Xmm, U64, U32, U16>::copy(dst, src, n);
}

}  // namespace shmcoll::copy::detail
#endif
