// The streamed exchange engine (exchange_streamed.cc) and its parameters.
#pragma once

#include <cstdint>
#include <cstring>

#include "coll/coll.h"
#include "copy/copy.h"
#include "dt/datatype.h"

namespace shmcoll::coll {

struct StreamParams {
  bool allowCma = true;   // pull contiguous blocks with process_vm_readv
  uint64_t cmaMin = 0;    // ... when they are at least this many bytes
  uint64_t inlineMax = UINT64_MAX;  // largest block carried inline in its lane (also capped by the lane)
  // ... and, on teams of 3 or more, a sender's one block longer than a slot
  // when it is at least this many bytes (its only long stream would be a
  // chunk-by-chunk handoff between two ranks, with nothing to overlap).
  // Such a block is pulled only while shorter than cmaSoloMax: past some
  // length a streamed one wins again on some machines (shmcoll-tune measures
  // the band).
  uint64_t cmaSoloMin = UINT64_MAX;
  uint64_t cmaSoloMax = UINT64_MAX;
};

// Pulls `len` bytes at address `remote` in world rank `rank` into stream
// bytes [0, len) of `dst`: a plain copy when they lie in the shared segment
// (MPI_Alloc_mem memory), else process_vm_readv.  Returns 0 or MPI_ERR_OTHER
// with a reason.
int cmaPull(uint32_t rank, uint64_t remote, dt::Cursor& dst, uint64_t len);
// True when [p, p + len) lies in this rank's mapping of the shared segment,
// so every peer can read it without a system call.
bool inSegment(const void* p, uint64_t len);

// n bytes from `from` to `d`, which may overlap (MPI_IN_PLACE may hand a
// rank the same bytes on both sides).
inline void moveBytes(char* d, const char* from, uint64_t n) {
  if (n <= copy::kTinyMax)
    copy::tiny(d, from, n);
  else
    std::memmove(d, from, n);
}
// The first n bytes of send block `s` into receive block `r`, both of
// contiguous types (Type::contiguous).
inline void moveFlat(const Block& s, const Block& r, uint64_t n) {
  moveBytes(const_cast<char*>(r.buf) + r.type->trueLb, s.buf + s.type->trueLb, n);
}

// Copies this rank's block to itself (send block to receive block, any
// layouts; nothing when both are the same memory).  Returns 0, or
// MPI_ERR_TRUNCATE / MPI_ERR_COUNT when the sizes differ (the common part is copied).
int selfCopy(const Block& s, const Block& r);

// Waits until every reader of this rank's lane area `area` (0 or 1) has
// finished the operation that last used it (Engine::laneUse), so the area
// may be rewritten.  Returns 0 or an error class from the wait.
int reclaimLaneArea(uint32_t area);

int streamedExchange(Team& team, const ExchangeArgs& args, const StreamParams& prm);

}  // namespace shmcoll::coll
