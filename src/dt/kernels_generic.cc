// Block-move kernels for the x86-64 baseline (SSE2 moves) or, elsewhere, for
// any CPU (8-byte general-register moves); see dt/kernels.h.
#include "copy/kernels.h"

#define SHMCOLL_COPY_TARGET
#if SHMCOLL_COPY_X86
#define SHMCOLL_COPY_XMM 1
#define SHMCOLL_DT_LANES copy::Xmm, copy::U64, copy::U32, copy::U16
#else
#define SHMCOLL_DT_LANES copy::U64, copy::U32, copy::U16
#endif
#define SHMCOLL_DT_TABLE kGeneric
#define SHMCOLL_DT_NAME "generic"
#include "dt/kernels_impl.h"
