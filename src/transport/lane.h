// The lane format: how a rank tells a reader what it sends it in one
// operation (segment/layout.h has the layout of a lane area).
//
// A lane starts with a LaneHeader: the tag of the operation, then the byte
// count ORed with how the bytes travel (segment::kLaneInline, kLanePull,
// kLaneStream), then, by kind, the payload itself, the sender's address of
// the bytes, or their offset in the sender's stream.  The header is written
// last (its tag release-stored), so a reader that sees the tag of its
// operation may read the rest.
//
// Inline payloads of 49 to 440 bytes continue in the lane's next lines, 56
// bytes each, every such line ending in a stamp (the tag) stored after the
// line's bytes: the writer publishes the tag right after the first line, then
// the later lines in order, and a reader reads them once the last line's
// stamp shows the tag.  Longer payloads
// follow the header in one piece and the tag goes out after all of it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "segment/layout.h"
#include "transport/block.h"

namespace shmcoll::transport {

using segment::LaneHeader;

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
  auto* h = reinterpret_cast<LaneHeader*>(lane);
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
// (the header already showed it): then all of it may be read.  The writer
// release-stores the stamps line by line in order, so the last line's stamp,
// acquired, shows all the others.  A reader that arrives early so polls one
// line the writer has yet to write instead of each in turn (with the loop
// over every line, MPI_Reduce of 64-440 B at N = 2 and 3 took 1.2-1.6 times
// as long: docs/PERFORMANCE.md, 2026-12-02).
inline bool inlineArrived(const char* lane, uint64_t bytes, uint64_t tag) {
  if (!segment::laneStamped(bytes)) return true;
  const uint64_t lines = segment::laneInlineLines(bytes);
  return laneStamp(lane + (lines - 1) * segment::kLine)->load(std::memory_order_acquire) == tag;
}
// Asks for the lines between a stamped lane's first (read already: it holds
// the tag) and its last (which inlineArrived polls), so that a reader that
// finds the lane written waits for one transfer from the writer's core
// rather than for the last line's and then for the others'.
inline void prefetchInline(const char* lane, uint64_t bytes) {
  const uint64_t lines = segment::laneInlineLines(bytes);
  for (uint64_t k = 1; k + 1 < lines; ++k) __builtin_prefetch(lane + k * segment::kLine);
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

// Whether a lane that showed `tag` carries all of its payload yet (an inline
// payload's later lines may still be on their way; a wide slot's payload,
// stamps and all, was written before the ring lane's tag).
inline bool laneComplete(const LaneHeader* lane, uint64_t tag) {
  const uint64_t raw = lane->bytes;
  return !(raw & segment::kLaneInline) || (raw & segment::kLaneWide) ||
         inlineArrived(reinterpret_cast<const char*>(lane), raw & ~segment::kLaneKinds, tag);
}

// The payload area right behind a lane's header (an address or a stream
// offset for the pull and stream kinds).
inline char* laneBody(LaneHeader* h) { return reinterpret_cast<char*>(h) + segment::kLaneHeaderBytes; }
inline const char* laneBody(const LaneHeader* h) {
  return reinterpret_cast<const char*>(h) + segment::kLaneHeaderBytes;
}
inline uint64_t laneWord(const LaneHeader* h) {
  uint64_t v;
  std::memcpy(&v, laneBody(h), sizeof v);
  return v;
}

}  // namespace shmcoll::transport
