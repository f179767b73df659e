// Pack, unpack and iovec walks over the loop description (dt/node.h).
//
// One recursive walker, instantiated per operation.  It seeks by arithmetic
// (a division per Vec level, a binary search per List), moves the partial
// first and last pieces of a window through the generic path (so a window may
// start and end anywhere, inside a block or a field), and hands every run of
// whole children to a bulk move.  The bulk moves are yaksa's three pack tiers,
// the third split by shape:
//   - contiguous type: one copy for the whole window (copy::copy);
//   - Vec over a Leaf: n blocks of one length at one stride, one call to the
//     block-move kernel for that length (dt/kernels.h: a vector of doubles is
//     an 8-byte load and store per element, a 64-byte block one ZMM move);
//     with software prefetch when the stride is large (prefetchDistance());
//   - Vec over a Vec over a Leaf (a vector of short vectors, a block of a
//     matrix): one call for all outer * inner blocks, so the per-element cost
//     of the recursion (calls, a division) is not paid per short row;
//   - Vec over a List of leaves (structs): a batch of elements at a time, one
//     field at a time: each field of the batch is again n blocks of one length
//     at the element stride, so it takes the same fixed-length kernels instead
//     of a length switch per field and element;
//   - anything else: recursion per element.
// Which kernel a block length gets is decided by its class (kern::classOf);
// the instruction set by the active copy kernel, once per call.
#include <algorithm>
#include <cstring>

#include "copy/copy.h"
#include "dt/datatype.h"
#include "dt/kernels.h"
#include "dt/node.h"

namespace shmcoll::dt {

namespace {

// Runs at least this long go through the SIMD copy kernels; below it the call
// through copy::copy's dispatch costs more than it saves.
constexpr uint64_t kBigBlock = 256;

inline void moveBytes(char* d, const char* s, uint64_t n) {
  if (n <= copy::kTinyMax)
    copy::tiny(d, s, n);
  else if (n >= kBigBlock)
    copy::copy(d, s, n);
  else
    std::memcpy(d, s, n);
}

// Struct elements moved per batch by the field-major kernel: small enough that
// the batch's memory (64 elements of a few dozen bytes) stays in L1 while each
// field makes its pass over it.
constexpr uint64_t kFieldBatch = 64;

// A 2-level block with at least this many inner blocks takes one kernel call
// per row (with prefetch); shorter rows take the 2-level kernel.
constexpr uint64_t kLongRow = 32;

// Software prefetch (see kernels.h).  The hardware prefetchers follow a
// stream within a 4 KiB page; a block stride of a cache line or more leaves
// them little to learn from (a face of a 3-D array at 2 KiB: two elements per
// page), and every block is a miss whose latency the core must hide.  So for
// strides of at least kPfMinStride and calls long enough to reach the
// distance, each block prefetches the block kPfBlocks (fewer for long
// blocks: about kPfBytes ahead) further on.  Not a pack of blocks of
// kPfMaxPackBlock bytes or more: each is a stream of its own that the
// hardware follows, and the one line asked for ahead only cost time (the y
// face of a 256^3 array of doubles, 2 KiB blocks 512 KiB apart, packed at
// 36 GB/s with it and 40-41 without on an AMD EPYC VM, 5 interleaved runs;
// its unpack, which asks for the line for writing, was 7% faster with it).
constexpr uint64_t kPfMinStride = 64;
constexpr uint64_t kPfBlocks = 64;
constexpr uint64_t kPfBytes = 16384;
constexpr uint64_t kPfMinCall = 64;
constexpr uint64_t kPfMaxPackBlock = 1024;

int64_t prefetchDistance(int64_t stride, uint64_t len, uint64_t n, bool pack) {
  const uint64_t a = static_cast<uint64_t>(stride < 0 ? -stride : stride);
  if (a < kPfMinStride || n < kPfMinCall || (pack && len >= kPfMaxPackBlock)) return 0;
  const uint64_t blocks = std::clamp<uint64_t>(kPfBytes / std::max<uint64_t>(len, 64), 4, kPfBlocks);
  return stride * static_cast<int64_t>(blocks);
}

// Small moves with a size known in most cases (struct fields, element by element).
inline void moveSmall(char* d, const char* s, uint64_t n) {
  switch (n) {
    case 1: std::memcpy(d, s, 1); return;
    case 2: std::memcpy(d, s, 2); return;
    case 4: std::memcpy(d, s, 4); return;
    case 8: std::memcpy(d, s, 8); return;
    case 16: std::memcpy(d, s, 16); return;
    default: moveBytes(d, s, n);
  }
}

// kPack: user memory -> stream; otherwise stream -> user memory.
template <bool kPack>
struct CopyOp {
  char* io;
  const kern::Table& k;
  static constexpr bool stopped() { return false; }

  void run(char* p, uint64_t n) {
    if (kPack)
      moveBytes(io, p, n);
    else
      moveBytes(p, io, n);
    io += n;
  }
  void blocks(char* p, int64_t stride, uint64_t n, uint64_t len) {
    const kern::StridedFn fn = (kPack ? k.pack : k.unpack)[kern::classOf(len)];
    fn(p, stride, io, static_cast<int64_t>(len), n, len, prefetchDistance(stride, len, n, kPack));
    io += n * len;
  }
  void blocks2(char* p, int64_t os, uint64_t on, int64_t is, uint64_t in, uint64_t len) {
    if (in >= kLongRow) {
      for (uint64_t j = 0; j < on; ++j, p += os) blocks(p, is, in, len);
      return;
    }
    (kPack ? k.pack2 : k.unpack2)[kern::classOf(len)](p, os, on, is, in, io, len);
    io += on * in * len;
  }
  // n elements of the flat-leaves list c, element i at p + i*stride (c.disp added).
  void fields(char* p, int64_t stride, uint64_t n, const Node& c) {
    const uint64_t size = c.size;
    const uint64_t span = static_cast<uint64_t>(c.hi - c.lo);
    const uint64_t step = static_cast<uint64_t>(stride < 0 ? -stride : stride);
    // Field-major order keeps the order of the fields within an element but
    // not across elements; unpack may use it only when no two elements share
    // a byte (fields overlapping within an element are written in type-map
    // order either way).
    if (!kPack && n > 1 && step < span) {
      for (uint64_t i = 0; i < n; ++i, p += stride)
        for (const Node::Field& f : c.fields) moveSmall(p + f.disp, io + f.at + i * size, f.len);
      io += n * size;
      return;
    }
    const kern::StridedFn* fns = kPack ? k.pack : k.unpack;
    while (n) {
      const uint64_t m = std::min(n, kFieldBatch);
      for (const Node::Field& f : c.fields)
        fns[kern::classOf(f.len)](p + f.disp, stride, io + f.at, static_cast<int64_t>(size), m, f.len, 0);
      p += static_cast<int64_t>(m) * stride;
      io += m * size;
      n -= m;
    }
  }
};

// Collects runs as iovecs, merging neighbours, until `max` are used.
struct IovOp {
  struct iovec* out;
  size_t max;
  size_t k = 0;
  uint64_t done = 0;
  bool full = false;
  bool stopped() const { return full; }
  void run(char* p, uint64_t n) {
    if (full) return;
    if (k > 0 && static_cast<char*>(out[k - 1].iov_base) + out[k - 1].iov_len == p) {
      out[k - 1].iov_len += n;
    } else if (k == max) {
      full = true;
      return;
    } else {
      out[k++] = {p, n};
    }
    done += n;
  }
  void blocks(char* p, int64_t stride, uint64_t n, uint64_t len) {
    for (uint64_t i = 0; i < n && !full; ++i, p += stride) run(p, len);
  }
  void blocks2(char* p, int64_t os, uint64_t on, int64_t is, uint64_t in, uint64_t len) {
    for (uint64_t j = 0; j < on && !full; ++j, p += os) blocks(p, is, in, len);
  }
  void fields(char* p, int64_t stride, uint64_t n, const Node& c) {
    for (uint64_t i = 0; i < n && !full; ++i, p += stride)
      for (const Node::Field& f : c.fields) run(p + f.disp, f.len);
  }
};

template <class Op>
void walkNode(const Node& n, char* org, uint64_t pos, uint64_t len, Op& op);

// n whole copies of `c`, copy i with its origin at p + i*stride (c.disp not yet added).
template <class Op>
void bulk(const Node& c, char* p, int64_t stride, uint64_t n, Op& op) {
  if (c.kind == Node::kLeaf) {
    op.blocks(p + c.disp, stride, n, c.size);
    return;
  }
  if (c.kind == Node::kVec && c.child->kind == Node::kLeaf) {
    op.blocks2(p + c.disp + c.child->disp, stride, n, c.stride, c.count, c.child->size);
    return;
  }
  if (c.flatLeaves) {
    op.fields(p + c.disp, stride, n, c);
    return;
  }
  for (uint64_t i = 0; i < n && !op.stopped(); ++i, p += stride) walkNode(c, p, 0, c.size, op);
}

// Stream bytes [pos, pos+len) of count copies of `c` at org + i*stride.
template <class Op>
void walkVec(const Node& c, char* org, int64_t stride, uint64_t pos, uint64_t len, Op& op) {
  const uint64_t cs = c.size;
  const uint64_t i = pos / cs;
  const uint64_t off = pos - i * cs;
  char* p = org + static_cast<int64_t>(i) * stride;
  if (off) {
    const uint64_t n0 = std::min(cs - off, len);
    walkNode(c, p, off, n0, op);
    len -= n0;
    p += stride;
    if (op.stopped()) return;
  }
  const uint64_t full = len / cs;
  if (full) {
    bulk(c, p, stride, full, op);
    p += static_cast<int64_t>(full) * stride;
    len -= full * cs;
  }
  if (len && !op.stopped()) walkNode(c, p, 0, len, op);
}

template <class Op>
void walkNode(const Node& n, char* org, uint64_t pos, uint64_t len, Op& op) {
  char* o = org + n.disp;
  switch (n.kind) {
    case Node::kLeaf:
      op.run(o + pos, len);
      return;
    case Node::kVec:
      walkVec(*n.child, o, n.stride, pos, len, op);
      return;
    case Node::kList: {
      size_t k = static_cast<size_t>(std::upper_bound(n.start.begin(), n.start.end(), pos) - n.start.begin()) - 1;
      while (len > 0 && !op.stopped()) {
        const uint64_t in = pos - n.start[k];
        const uint64_t take = std::min(n.start[k + 1] - pos, len);
        walkNode(*n.kids[k], o, in, take, op);
        pos += take;
        len -= take;
        ++k;
      }
      return;
    }
  }
}

}  // namespace

Cursor::Cursor(const void* buf, uint64_t count, const Type* type)
    : base_(static_cast<char*>(const_cast<void*>(buf))), type_(type), count_(count) {
  total_ = type ? count * type->size : count;
}

void Cursor::pack(uint64_t pos, void* dst, uint64_t len) {
  if (len == 0) return;
  if (contiguous()) {
    moveBytes(static_cast<char*>(dst), contiguousBase() + pos, len);
    return;
  }
  CopyOp<true> op{static_cast<char*>(dst), kern::table()};
  walkVec(*type_->root, base_, type_->extent(), pos, len, op);
}

void Cursor::unpack(uint64_t pos, const void* src, uint64_t len) {
  if (len == 0) return;
  if (contiguous()) {
    moveBytes(contiguousBase() + pos, static_cast<const char*>(src), len);
    return;
  }
  CopyOp<false> op{static_cast<char*>(const_cast<void*>(src)), kern::table()};
  walkVec(*type_->root, base_, type_->extent(), pos, len, op);
}

size_t Cursor::iov(uint64_t pos, uint64_t len, struct iovec* out, size_t maxIov, uint64_t* covered) {
  if (len == 0 || maxIov == 0) {
    *covered = 0;
    return 0;
  }
  if (contiguous()) {
    out[0] = {contiguousBase() + pos, len};
    *covered = len;
    return 1;
  }
  IovOp op{out, maxIov};
  walkVec(*type_->root, base_, type_->extent(), pos, len, op);
  *covered = op.done;
  return op.k;
}

}  // namespace shmcoll::dt
