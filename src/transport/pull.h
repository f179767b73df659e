// Single-copy pulls: a reader copies a block straight out of the sender's
// buffer instead of the sender staging it in shared memory.
//
// Three ways, tried in this order:
//   - the bytes lie in the shared segment (MPI_Alloc_mem memory): the
//     sender's address translates into our mapping (each rank publishes where
//     it mapped the segment); a plain copy;
//   - the bytes lie in the sender's shared malloc heap (os/shared_heap.h),
//     which we map read-only (os/peer_heap.h); a plain copy;
//   - otherwise process_vm_readv ("cross-memory attach", CMA: a system call
//     per batch of receive runs), where the kernel allows it.
// Pulls decides at start-up which of these work between every pair of ranks
// (runtime/context.cc probes them).
#pragma once

#include <cstdint>
#include <vector>

#include "dt/datatype.h"
#include "os/peer_heap.h"

namespace shmcoll::transport {

struct Pulls {
  // process_vm_readv works between every pair of ranks (and SHMCOLL_CMA allows it).
  bool cma = false;
  // Most ranks found it slow in MPI_Init (SHMCOLL_CMA_SLOW_FACTOR): the
  // built-in SHMCOLL_CMA_MIN is then `off` (coll/registry.cc).
  bool cmaSlow = false;
  // Every rank can map every other rank's shared malloc heap.
  bool heapShared = false;
  // Our mappings of the peers' heaps, by world rank (sized on first use).
  std::vector<os::PeerHeapMap> heaps;
};
extern constinit Pulls gPulls;
inline Pulls& pulls() { return gPulls; }

// Pulls `len` bytes at address `remote` in world rank `rank` into stream
// bytes [0, len) of `dst`.  Returns 0 or err::kOther with a reason.
int pull(uint32_t rank, uint64_t remote, dt::Cursor& dst, uint64_t len);
// True when [p, p + len) lies in this rank's mapping of the shared segment,
// so every peer can read it without a system call.
bool inSegment(const void* p, uint64_t len);
// True when every peer can read [p, p + len) with a plain copy: it lies in
// the segment, or in this rank's shared malloc heap and every rank can map
// the others' heaps.
bool peerReadable(const void* p, uint64_t len);
// Whether a round pulls the contiguous block [p, p + len) for any reader:
// every peer can read it with a plain copy, or process_vm_readv works and
// the block is at least cmaMin long (round.cc's usePull; a lone large block
// to one peer has a rule of its own there).  The inline path asks it too
// (coll/exchange_inline.h, fitsLane).
inline bool pulledAnyway(const void* p, uint64_t len, uint64_t cmaMin) {
  return peerReadable(p, len) || (pulls().cma && len >= cmaMin);
}
// Whether this rank can open and map world rank `rank`'s shared heap (the
// start-up probe; false too when that rank has none).
bool canMapPeerHeap(uint32_t rank);

}  // namespace shmcoll::transport
