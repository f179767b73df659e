// Block-move kernels with 32-byte AVX moves, offered with the AVX2 copy kernel
// (dt/kernels.h, copy/copy_avx2.cc).
#include "copy/kernels.h"

#if SHMCOLL_COPY_X86
#define SHMCOLL_COPY_TARGET __attribute__((target("avx2")))
#define SHMCOLL_COPY_XMM 1
#define SHMCOLL_COPY_YMM 1
#define SHMCOLL_DT_LANES copy::Ymm, copy::Xmm, copy::U64, copy::U32, copy::U16
#define SHMCOLL_DT_TABLE kAvx2
#define SHMCOLL_DT_NAME "avx2"
#include "dt/kernels_impl.h"
#endif
