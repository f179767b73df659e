// The datatype engine's block-move kernels (the third pack tier).
//
// Every bulk move of the pack walker (dt/cursor.cc) is "n blocks of the same
// length at a constant stride": a vector of a leaf, one field of a struct
// across a batch of elements, or a vector of such vectors.  The kernels here
// do exactly that, with the block length fixed at compile time for the common
// lengths, so each block is one or a few vector loads and stores with no call
// and no length branch:
//
//   class   block bytes          moves per block (AVX-512 / AVX2 / SSE2)
//   k1..k8  1, 2, 4, 8           one general-register load and store
//   k12     12                   two overlapping 8-byte moves
//   k16     16                   one XMM
//   k24     24                   two overlapping XMM
//   k32     32                   one YMM (two XMM on SSE2)
//   k48     48                   two overlapping YMM (three XMM)
//   k64     64                   one ZMM (two YMM, four XMM)
//   k128    128                  two ZMM (...)
//   k256    256                  four ZMM (...)
//   kAny    any other length     the copy engine's size classes inlined
//                                (copy/copy_engine.h): two overlapping
//                                moves up to 2V, 4 or 8 vectors up to 8V,
//                                the copy kernel's loop above
//
// Unpack writes only the bytes of each block (overlapping moves stay inside
// the block), in block order, so a type map whose blocks overlap ends with the
// last block's bytes, as a sequential copy would.
//
// One translation unit per instruction set (kernels_generic.cc for the x86-64
// baseline or any other CPU, kernels_avx2.cc, kernels_avx512.cc) instantiates
// dt/kernels_impl.h; table() hands out the one matching the active copy kernel
// (copy::active(), chosen once from cpuid, forced with SHMCOLL_COPY_KERNEL),
// so one switch governs every SIMD path of the library.
#pragma once

#include <cstddef>
#include <cstdint>

#include "copy/copy.h"
#include "copy/kernels.h"  // SHMCOLL_COPY_X86

namespace shmcoll::dt::kern {

enum Class : uint8_t { k1, k2, k4, k8, k12, k16, k24, k32, k48, k64, k128, k256, kAny, kNumClasses };

constexpr Class classOf(uint64_t len) {
  switch (len) {
    case 1: return k1;
    case 2: return k2;
    case 4: return k4;
    case 8: return k8;
    case 12: return k12;
    case 16: return k16;
    case 24: return k24;
    case 32: return k32;
    case 48: return k48;
    case 64: return k64;
    case 128: return k128;
    case 256: return k256;
    default: return kAny;
  }
}

// Pack: block i (`len` bytes) from mem + i*memStride to stream + i*streamStride.
// Unpack: the reverse.  pf != 0: prefetch mem + pf while moving each block
// (pack: for reading, into L2; unpack: for writing, into L1, unless the
// stride would crowd the lines in flight into a few L1 sets: then as pack,
// see writePrefetchFits() in dt/kernels_impl.h), for strides too large or too
// irregular for the hardware prefetchers; see prefetchDistance() in
// dt/cursor.cc for the distance.
using StridedFn = void (*)(char* mem, int64_t memStride, char* stream, int64_t streamStride, uint64_t n,
                           uint64_t len, int64_t pf);

// Two loop levels: `outerN` groups at mem + j*outerStride, each `innerN`
// blocks at innerStride; the stream is dense (block after block).
using Strided2Fn = void (*)(char* mem, int64_t outerStride, uint64_t outerN, int64_t innerStride, uint64_t innerN,
                            char* stream, uint64_t len);

struct Table {
  const char* name;
  StridedFn pack[kNumClasses];
  StridedFn unpack[kNumClasses];
  Strided2Fn pack2[kNumClasses];
  Strided2Fn unpack2[kNumClasses];
};

// The table for the active copy kernel.
const Table& table();

// Whether an unpack whose stride crowds its blocks into a few L1 sets holds
// back its stores with a load fence every few blocks (dt/kernels_impl.h):
// SHMCOLL_DT_STORE_FENCE, read once (off by default).
bool fenceCrowded();
// Tests: 1 or 0 forces the choice, -1 goes back to the setting's.
void forceFenceCrowded(int on);
// The table for kernel k (tests and benchmarks); nullptr when k cannot run here.
const Table* tableFor(copy::Kernel k);

namespace detail {
extern const Table kGeneric;
#if SHMCOLL_COPY_X86
extern const Table kAvx2;
extern const Table kAvx512;
#endif
}  // namespace detail

}  // namespace shmcoll::dt::kern
