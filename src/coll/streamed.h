// The streamed exchange engine (exchange_streamed.cc) and its parameters.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "coll/coll.h"
#include "copy/copy.h"
#include "dt/datatype.h"
#include "segment/layout.h"

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
// (MPI_Alloc_mem memory) or in that rank's shared malloc heap, else
// process_vm_readv.  Returns 0 or MPI_ERR_OTHER with a reason.
int cmaPull(uint32_t rank, uint64_t remote, dt::Cursor& dst, uint64_t len);
// True when [p, p + len) lies in this rank's mapping of the shared segment,
// so every peer can read it without a system call.
bool inSegment(const void* p, uint64_t len);
// True when every peer can read [p, p + len) with a plain copy: it lies in
// the segment, or in this rank's shared malloc heap (os/shared_heap.h) and
// every rank can map the others' heaps.
bool peerReadable(const void* p, uint64_t len);
// Whether this rank can open and map world rank `rank`'s shared heap (the
// start-up probe; false too when that rank has none).
bool canMapPeerHeap(uint32_t rank);

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

// ---- inline lane payloads (segment/layout.h: up to 440 bytes, 48 in the
// header's line, then 56 in each later line, which ends in a stamp; longer
// ones straight after the header) ----

// One piece of a contiguous inline payload (a line's, or a whole long one):
// the two full-line sizes as fixed-size copies, the rest as moveBytes.
inline void copyPiece(char* d, const char* s, uint64_t n) {
  if (n == segment::kLaneLinePayload)
    std::memcpy(d, s, segment::kLaneLinePayload);
  else if (n == segment::kLaneFirstPayload)
    std::memcpy(d, s, segment::kLaneFirstPayload);
  else
    moveBytes(d, s, n);
}
inline std::atomic<uint64_t>* laneStamp(const char* line) {
  return reinterpret_cast<std::atomic<uint64_t>*>(const_cast<char*>(line) + segment::kLaneLinePayload);
}
// Writes an inline payload of `bytes` into `lane`, put(offset, dst, len)
// copying payload bytes [offset, offset + len) to dst: the first line and the
// byte count, then the tag into the header when `tagNow` (else the caller
// stores it later), then every later line and its stamp.  A payload too long
// for stamps goes in one piece, and the tag after it.
template <class Put>
inline void writeInline(char* lane, uint64_t bytes, uint64_t tag, bool tagNow, Put&& put) {
  auto* h = reinterpret_cast<segment::LaneHeader*>(lane);
  // (unstamped: all of it here, and the loop below does not run)
  const uint64_t first = segment::laneStamped(bytes) ? segment::kLaneFirstPayload : bytes;
  put(uint64_t{0}, lane + segment::kLaneHeaderBytes, first);
  h->bytes = bytes | segment::kLaneInline;
  if (tagNow) h->tag.store(tag, std::memory_order_release);
  char* line = lane;
  for (uint64_t off = first; off < bytes; off += segment::kLaneLinePayload) {
    line += segment::kLine;
    put(off, line, std::min<uint64_t>(bytes - off, segment::kLaneLinePayload));
    laneStamp(line)->store(tag, std::memory_order_release);
  }
}
// True once every later line of an inline payload of `bytes` carries `tag`
// (the header already showed it): then all of it may be read.
inline bool inlineArrived(const char* lane, uint64_t bytes, uint64_t tag) {
  if (!segment::laneStamped(bytes)) return true;
  const uint64_t lines = segment::laneInlineLines(bytes);
  for (uint64_t l = 1; l < lines; ++l)
    if (laneStamp(lane + l * segment::kLine)->load(std::memory_order_acquire) != tag) return false;
  return true;
}
// Reads payload bytes [0, use) of an inline lane of `bytes` that arrived,
// get(offset, src, len) taking payload bytes [offset, offset + len) from src.
template <class Get>
inline void readInline(const char* lane, uint64_t bytes, uint64_t use, Get&& get) {
  const uint64_t first = segment::laneStamped(bytes) ? std::min<uint64_t>(use, segment::kLaneFirstPayload) : use;
  get(uint64_t{0}, lane + segment::kLaneHeaderBytes, first);
  const char* line = lane;
  for (uint64_t off = first; off < use; off += segment::kLaneLinePayload) {
    line += segment::kLine;
    get(off, line, std::min<uint64_t>(use - off, segment::kLaneLinePayload));
  }
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
