// What the transport moves: `count` elements of a datatype at an address
// (one side of one pair of an operation), and the local copies between two
// such blocks.
#pragma once

#include <cstdint>
#include <cstring>

#include "copy/copy.h"
#include "dt/datatype.h"

namespace shmcoll::transport {

struct Block {
  const char* buf = nullptr;
  uint64_t count = 0;
  const dt::Type* type = nullptr;
  uint64_t bytes() const { return count * type->size; }
};

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

// Copies a rank's block to itself (send block to receive block, any
// layouts; nothing when both are the same memory).  Returns 0, or
// err::kTruncate / err::kCount when the sizes differ (the common part is
// copied), with the reason recorded.
int selfCopy(const Block& s, const Block& r);

}  // namespace shmcoll::transport
