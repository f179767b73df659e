// Pack, unpack and iovec walks over the loop description (dt/node.h).
//
// One recursive walker, instantiated per operation.  It seeks by arithmetic
// (a division per Vec level, a binary search per List), moves the partial
// first and last pieces of a window through the generic path, and hands every
// run of whole children to a bulk kernel:
//   - contiguous type:                one copy for the whole window;
//   - Vec over a Leaf of 1, 2, 4, 8, 12, 16, 24 or 32 bytes: an inline loop
//     with a compile-time block size (a vector of doubles packs with one
//     8-byte load and store per element, no calls);
//   - Vec over any other Leaf:        one copy per block, copy::copy for
//     blocks of at least kBigBlock bytes, memcpy below;
//   - Vec over a List of leaves (structs): the element's block table,
//     small fixed-size moves per field;
//   - anything else:                  recursion per element.
#include <algorithm>
#include <cstring>

#include "copy/copy.h"
#include "dt/datatype.h"
#include "dt/node.h"

namespace shmcoll::dt {

namespace {

// Blocks at least this large go through the SIMD copy kernels; below it the
// call through copy::copy's dispatch costs more than it saves.
constexpr uint64_t kBigBlock = 256;

inline void moveBytes(char* d, const char* s, uint64_t n) {
  if (n >= kBigBlock)
    copy::copy(d, s, n);
  else
    std::memcpy(d, s, n);
}

// Small moves with a size known in most cases (struct fields).
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
  static constexpr bool stopped() { return false; }
  void run(char* p, uint64_t n) {
    if (kPack)
      moveBytes(io, p, n);
    else
      moveBytes(p, io, n);
    io += n;
  }
  template <size_t L>
  void fixed(char* p, int64_t stride, uint64_t n) {
    char* s = io;
    for (uint64_t i = 0; i < n; ++i, p += stride, s += L) {
      if (kPack)
        std::memcpy(s, p, L);
      else
        std::memcpy(p, s, L);
    }
    io = s;
  }
  void blocks(char* p, int64_t stride, uint64_t n, uint64_t len) {
    char* s = io;
    for (uint64_t i = 0; i < n; ++i, p += stride, s += len) {
      if (kPack)
        moveBytes(s, p, len);
      else
        moveBytes(p, s, len);
    }
    io = s;
  }
  void leaves(char* p, int64_t stride, uint64_t n, const Block* b, size_t nb) {
    char* s = io;
    for (uint64_t i = 0; i < n; ++i, p += stride) {
      for (size_t k = 0; k < nb; ++k) {
        if (kPack)
          moveSmall(s, p + b[k].disp, b[k].len);
        else
          moveSmall(p + b[k].disp, s, b[k].len);
        s += b[k].len;
      }
    }
    io = s;
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
  template <size_t L>
  void fixed(char* p, int64_t stride, uint64_t n) {
    blocks(p, stride, n, L);
  }
  void blocks(char* p, int64_t stride, uint64_t n, uint64_t len) {
    for (uint64_t i = 0; i < n && !full; ++i, p += stride) run(p, len);
  }
  void leaves(char* p, int64_t stride, uint64_t n, const Block* b, size_t nb) {
    for (uint64_t i = 0; i < n && !full; ++i, p += stride)
      for (size_t j = 0; j < nb; ++j) run(p + b[j].disp, b[j].len);
  }
};

template <class Op>
void walkNode(const Node& n, char* org, uint64_t pos, uint64_t len, Op& op);

// n whole copies of `c`, copy i with its origin at p + i*stride (c.disp not yet added).
template <class Op>
void bulk(const Node& c, char* p, int64_t stride, uint64_t n, Op& op) {
  if (c.kind == Node::kLeaf) {
    char* q = p + c.disp;
    switch (c.size) {
      case 1: op.template fixed<1>(q, stride, n); return;
      case 2: op.template fixed<2>(q, stride, n); return;
      case 4: op.template fixed<4>(q, stride, n); return;
      case 8: op.template fixed<8>(q, stride, n); return;
      case 12: op.template fixed<12>(q, stride, n); return;
      case 16: op.template fixed<16>(q, stride, n); return;
      case 24: op.template fixed<24>(q, stride, n); return;
      case 32: op.template fixed<32>(q, stride, n); return;
      default: op.blocks(q, stride, n, c.size); return;
    }
  }
  if (c.flatLeaves) {
    op.leaves(p + c.disp, stride, n, c.leaves.data(), c.leaves.size());
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
  CopyOp<true> op{static_cast<char*>(dst)};
  walkVec(*type_->root, base_, type_->extent(), pos, len, op);
}

void Cursor::unpack(uint64_t pos, const void* src, uint64_t len) {
  if (len == 0) return;
  if (contiguous()) {
    moveBytes(contiguousBase() + pos, static_cast<const char*>(src), len);
    return;
  }
  CopyOp<false> op{static_cast<char*>(const_cast<void*>(src))};
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
