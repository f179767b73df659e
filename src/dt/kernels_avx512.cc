// Block-move kernels with 64-byte AVX-512 moves (one cache line each), offered
// with the AVX-512 copy kernel (dt/kernels.h, copy/copy_avx512.cc).
#include "copy/kernels.h"

#if SHMCOLL_COPY_X86
#define SHMCOLL_COPY_TARGET __attribute__((target("avx512f")))
#define SHMCOLL_COPY_XMM 1
#define SHMCOLL_COPY_YMM 1
#define SHMCOLL_COPY_ZMM 1
#define SHMCOLL_DT_LANES copy::Zmm, copy::Ymm, copy::Xmm, copy::U64, copy::U32, copy::U16
#define SHMCOLL_DT_TABLE kAvx512
#define SHMCOLL_DT_NAME "avx512"
#include "dt/kernels_impl.h"
#endif
