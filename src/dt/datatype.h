// The datatype engine's interface to the rest of the library.
//
// A Type describes one element's type map.  All analysis happens once, when a
// type is built or committed: size, lb/ub/extent, true bounds, contiguity and
// the flattened block list are cached on the Type.  The collectives see data
// only as a packed byte stream: a Cursor over (buffer, count, type) packs or
// unpacks any window [pos, pos+len) of that stream, resuming cheaply where the
// previous call stopped, so a message of any size streams through fixed-size
// mailbox slots with no staging copy of the whole message.
//
// This header is free of MPI handle types: the API layer turns MPI_Datatype
// handles into Type pointers with fromHandle().
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::dt {

// One contiguous run of bytes in an element's type map, relative to the
// element's origin (the buffer address for element 0).
struct Block {
  int64_t disp;
  uint64_t len;
};

class Type {
 public:
  // Cached properties of one element.
  uint64_t size = 0;        // bytes of data
  int64_t lb = 0, ub = 0;   // bounds (MPI_Type_get_extent: lb, ub - lb)
  int64_t extent() const { return ub - lb; }
  int64_t trueLb = 0, trueUb = 0;  // bounds of the bytes actually touched
  // True when `count` consecutive elements form one run of count*size bytes
  // starting at trueLb (so a whole message is one memcpy).
  bool contiguous = false;
  bool committed = false;
  bool builtin = false;
  // Flattened type map of one element, in type-map order, adjacent runs merged.
  std::vector<Block> blocks;

  std::string name;
  int handle = 0;  // the MPI handle that names this type
};

// Resolves an MPI_Datatype handle; nullptr for MPI_DATATYPE_NULL or garbage.
const Type* fromHandle(int handle);

// Iterates the contiguous memory runs that hold bytes [pos, pos+len) of the
// packed stream of (buf, count, type), calling f(char* ptr, size_t n) in
// stream order.  Resumes in O(1) when called with pos equal to the end of the
// previous call; otherwise it seeks (O(log blocks)).
class Cursor {
 public:
  Cursor() = default;
  Cursor(const void* buf, uint64_t count, const Type* type);

  uint64_t totalBytes() const { return total_; }
  bool contiguous() const { return type_ == nullptr || type_->contiguous; }
  // Address of stream byte 0 when contiguous().
  char* contiguousBase() const { return base_ + (type_ ? type_->trueLb : 0); }

  // Copies stream bytes [pos, pos+len) out of the user buffer into dst.
  void pack(uint64_t pos, void* dst, uint64_t len);
  // Copies len bytes from src into stream bytes [pos, pos+len) of the user buffer.
  void unpack(uint64_t pos, const void* src, uint64_t len);
  // Fills up to maxIov iovecs describing stream bytes [pos, pos+len); returns
  // the number filled and sets *covered to the bytes they describe.
  size_t iov(uint64_t pos, uint64_t len, struct iovec* out, size_t maxIov, uint64_t* covered);

 private:
  void seek(uint64_t pos);
  template <class F>
  void walk(uint64_t pos, uint64_t len, F&& f);

  char* base_ = nullptr;
  const Type* type_ = nullptr;
  uint64_t count_ = 0;
  uint64_t total_ = 0;
  // Resume state: stream position, element index, block index, offset in block.
  uint64_t pos_ = 0;
  uint64_t elem_ = 0;
  size_t block_ = 0;
  uint64_t inBlock_ = 0;
};

// Byte size of one element of a builtin type handle without a table look-up
// (the size lives in the handle bits); 0 if `handle` is not builtin.
inline uint64_t builtinSize(int handle) {
  return ((static_cast<uint32_t>(handle) >> 24) == 0x31) ? ((static_cast<uint32_t>(handle) >> 8) & 0xff) : 0;
}

}  // namespace shmcoll::dt
