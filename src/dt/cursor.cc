#include <algorithm>
#include <cstring>

#include "copy/copy.h"
#include "dt/datatype.h"

namespace shmcoll::dt {

Cursor::Cursor(const void* buf, uint64_t count, const Type* type)
    : base_(static_cast<char*>(const_cast<void*>(buf))), type_(type), count_(count) {
  total_ = type ? count * type->size : count;
}

void Cursor::seek(uint64_t pos) {
  if (pos == pos_) return;
  const uint64_t sz = type_->size;
  elem_ = sz ? pos / sz : 0;
  uint64_t within = sz ? pos % sz : 0;
  // Linear within the element; block lists of committed types are short in
  // the common case, and the sequential path below never seeks.
  block_ = 0;
  while (block_ < type_->blocks.size() && within >= type_->blocks[block_].len) {
    within -= type_->blocks[block_].len;
    ++block_;
  }
  inBlock_ = within;
  pos_ = pos;
}

template <class F>
void Cursor::walk(uint64_t pos, uint64_t len, F&& f) {
  if (len == 0) return;
  if (contiguous()) {
    f(contiguousBase() + pos, len);
    return;
  }
  seek(pos);
  const auto& blocks = type_->blocks;
  const int64_t ext = type_->extent();
  while (len > 0) {
    const Block& b = blocks[block_];
    uint64_t n = std::min<uint64_t>(b.len - inBlock_, len);
    f(base_ + static_cast<int64_t>(elem_) * ext + b.disp + static_cast<int64_t>(inBlock_), n);
    len -= n;
    pos_ += n;
    inBlock_ += n;
    if (inBlock_ == b.len) {
      inBlock_ = 0;
      if (++block_ == blocks.size()) {
        block_ = 0;
        ++elem_;
      }
    }
  }
}

void Cursor::pack(uint64_t pos, void* dst, uint64_t len) {
  char* d = static_cast<char*>(dst);
  walk(pos, len, [&](char* p, uint64_t n) {
    copy::copy(d, p, n);
    d += n;
  });
}

void Cursor::unpack(uint64_t pos, const void* src, uint64_t len) {
  const char* s = static_cast<const char*>(src);
  walk(pos, len, [&](char* p, uint64_t n) {
    copy::copy(p, s, n);
    s += n;
  });
}

size_t Cursor::iov(uint64_t pos, uint64_t len, struct iovec* out, size_t maxIov, uint64_t* covered) {
  size_t k = 0;
  uint64_t done = 0;
  if (contiguous()) {
    if (len && maxIov) {
      out[0] = {contiguousBase() + pos, len};
      k = 1;
      done = len;
    }
    *covered = done;
    return k;
  }
  seek(pos);
  const auto& blocks = type_->blocks;
  const int64_t ext = type_->extent();
  while (done < len && k < maxIov) {
    const Block& b = blocks[block_];
    uint64_t n = std::min<uint64_t>(b.len - inBlock_, len - done);
    char* p = base_ + static_cast<int64_t>(elem_) * ext + b.disp + static_cast<int64_t>(inBlock_);
    if (k > 0 && static_cast<char*>(out[k - 1].iov_base) + out[k - 1].iov_len == p)
      out[k - 1].iov_len += n;
    else
      out[k++] = {p, n};
    done += n;
    pos_ += n;
    inBlock_ += n;
    if (inBlock_ == b.len) {
      inBlock_ = 0;
      if (++block_ == blocks.size()) {
        block_ = 0;
        ++elem_;
      }
    }
  }
  *covered = done;
  return k;
}

}  // namespace shmcoll::dt
