// What the blocking reductions share (reduce_common.h).
#include "coll/reduce_common.h"

#include <cstring>

namespace shmcoll::coll::reduction {

namespace {

// The memory of TypedBufs, kept between calls so that a reduction in a loop
// allocates nothing: up to kKeep blocks of at most kKeepMax bytes, per thread
// (calls on other threads may run at the same time).
class ScratchPool {
 public:
  static constexpr size_t kKeep = 4, kKeepMax = size_t{4} << 20;
  ~ScratchPool() {
    for (size_t i = 0; i < n_; ++i) delete[] kept_[i].mem;
  }
  // A block of at least `bytes`; *cap gets its size.
  char* take(size_t bytes, size_t* cap) {
    for (size_t i = 0; i < n_; ++i) {
      if (kept_[i].cap < bytes) continue;
      char* m = kept_[i].mem;
      *cap = kept_[i].cap;
      kept_[i] = kept_[--n_];
      return m;
    }
    *cap = bytes;
    return new char[bytes];
  }
  void give(char* m, size_t cap) {
    if (cap > kKeepMax) {
      delete[] m;
      return;
    }
    if (n_ < kKeep) {
      kept_[n_++] = {m, cap};
      return;
    }
    // Full: keep the larger of this one and the smallest kept.
    size_t small = 0;
    for (size_t i = 1; i < n_; ++i)
      if (kept_[i].cap < kept_[small].cap) small = i;
    if (kept_[small].cap < cap) {
      delete[] kept_[small].mem;
      kept_[small] = {m, cap};
    } else {
      delete[] m;
    }
  }

 private:
  struct Kept {
    char* mem;
    size_t cap;
  };
  Kept kept_[kKeep] = {};
  size_t n_ = 0;
};
thread_local ScratchPool tPool;

}  // namespace

TypedBuf::TypedBuf(uint64_t count, const dt::Type* t) : ext_(t->extent()) {
  if (count == 0 || t->size == 0) return;
  const int64_t span = t->trueUb - t->trueLb;
  const int64_t first = t->trueLb, last = static_cast<int64_t>(count - 1) * ext_ + t->trueLb;
  const int64_t lo = std::min(first, last), hi = std::max(first, last) + span;
  const size_t bytes = static_cast<size_t>(hi - lo);
  if (bytes <= kHere) {
    base_ = here_ - lo;
    return;
  }
  mem_ = tPool.take(bytes, &cap_);
  base_ = mem_ - lo;
}

TypedBuf::~TypedBuf() {
  if (mem_) tPool.give(mem_, cap_);
}

void copyTyped(char* dst, const char* src, uint64_t count, const dt::Type* type) {
  if (count == 0 || dst == src) return;
  if (type->contiguous) {  // (the common case, without the cursors)
    std::memcpy(dst + type->trueLb, src + type->trueLb, count * type->size);
    return;
  }
  dt::Cursor s(src, count, type), d(dst, count, type);
  const uint64_t n = s.totalBytes();
  alignas(64) static thread_local char bounce[64 * 1024];
  for (uint64_t pos = 0; pos < n; pos += sizeof bounce) {
    uint64_t len = std::min<uint64_t>(sizeof bounce, n - pos);
    s.pack(pos, bounce, len);
    d.unpack(pos, bounce, len);
  }
}

template <class Len>
void Slices::fill(uint32_t n, Len&& lenOf) {
  uint64_t* m = here_;
  if (n > kHere) {
    heap_.resize(2 * uint64_t{n} + 1);
    m = heap_.data();
  }
  uint64_t *st = m, *ln = m + n + 1;
  st[0] = 0;
  for (uint32_t k = 0; k < n; ++k) {
    ln[k] = lenOf(k);
    st[k + 1] = st[k] + ln[k];
  }
  start = st;
  len = ln;
}

Slices::Slices(uint32_t n, uint64_t count, Even) {
  const uint64_t base = count / n, rem = count % n;
  fill(n, [&](uint32_t k) { return base + (k < rem ? 1 : 0); });
}

Slices::Slices(uint32_t n, const uint64_t* counts) {
  fill(n, [&](uint32_t k) { return counts[k]; });
}

Reducer::Reducer(Team& team, const Reduction& r, Op opc)
    : team_(team), r_(r), opc_(opc), n_(team.size()), me_(team.rank), ext_(r.type->extent()) {
  in_ = static_cast<const char*>(r.in ? r.in : r.out);
  out_ = static_cast<char*>(r.out);
}

int Reducer::toOwners(const Slices& s, TypedBuf& t, char* dst) {
  const uint64_t mine = s.len[me_];
  FnArgs a;
  a.op = opc_;
  a.allPairs = false;
  a.sendFn = [&](uint32_t p) { return inSlice(s, p); };
  // (my own slice: the same block as the one sent, so nothing moves)
  a.recvFn = [&](uint32_t p) { return Block{const_cast<char*>(sliceInput(s, t, dst, p)), mine, r_.type}; };
  a.sendsFn = [&](uint32_t p) { return s.len[p] > 0; };
  a.receivesFn = [&](uint32_t) { return mine > 0; };
  return innerExchangeFinal(team_, a);
}

void Reducer::fold(char* dst, const TypedBuf& t, uint32_t k, uint64_t len) const {
  foldFrom(dst, [&](uint32_t j) -> const char* { return t.at(j * len); }, k, len);
}

int Reducer::allgatherSlices(const Slices& s) {
  FnArgs a;
  a.op = opc_;
  a.broadcast = true;
  a.allPairs = false;
  a.sendFn = [&](uint32_t) { return outSlice(s, me_); };
  a.recvFn = [&](uint32_t p) { return outSlice(s, p); };
  a.sendsFn = [&](uint32_t) { return s.len[me_] > 0; };
  a.receivesFn = [&](uint32_t p) { return s.len[p] > 0; };
  return innerExchangeFinal(team_, a);
}

int Reducer::alone() {
  copyTyped(out_, in_, r_.count, r_.type);
  return 0;
}

}  // namespace shmcoll::coll::reduction
