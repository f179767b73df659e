// Algorithm: the reducing collectives (reduce, allreduce, reduce_scatter(_block),
// scan, exscan) as one or two exchanges plus local folds.
//
// Every reduction here is element-wise, so the elements are cut into one
// slice per rank and rank k computes slice k for everybody:
//
//  phase 1  (an alltoallv exchange): every rank sends slice k of its input to
//           rank k, which receives all n contributions to its slice into a
//           private buffer T[0..n-1] laid out like the user's;
//  fold     rank k folds T in rank order: acc = T[n-1]; acc = T[j] (op) acc for
//           j = n-2 .. 0, so a non-commutative operation (user functions with
//           commute = 0) gets exactly a0 (op) (a1 (op) (... (op) a(n-1))), the
//           order the standard prescribes; scan keeps every prefix
//           T[j] = T[j-1] (op) T[j];
//  phase 2  allreduce: an allgatherv of the slices (broadcast exchange, each
//           rank's slice lands in place in everyone's out); reduce: a gatherv
//           of the slices to the root; reduce_scatter: none (the slices are the
//           caller's recvcounts); scan/exscan: rank k returns prefix j (or j-1)
//           of its slice to rank j.
//
// Cost per rank for m bytes of input: (n-1)/n * m bytes out and in per phase,
// (n-1) * m/n bytes folded, temporary memory m (the n slices of m/n).  That is
// the bandwidth-optimal reduce-scatter + allgather scheme, and it needs no
// tree: the exchange engine moves all pairs at once.
//
// Small inputs (SHMCOLL_REDUCE_SMALL, default 16 KiB received per rank) take one
// exchange instead of two: allreduce broadcasts every input to everybody and
// every rank folds all n (n * m bytes of temporary memory); reduce gathers the
// inputs at the root; scan sends each input to the higher ranks only.
// Latency then is one exchange plus the fold.
//
// Only pairs that carry data take part (ExchangeArgs::allPairs = false), and
// both sides know them from the counts alone: with fewer elements than ranks
// most ranks own an empty slice and exchange nothing in phase 1.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "common/settings.h"
#include "common/tuning.h"
#include "common/status.h"
#include "op/op.h"

namespace shmcoll::coll {

namespace {

// The one-exchange limit for `op` on `ranks` ranks (SHMCOLL_REDUCE_SMALL, else
// the decision table, else 16 KiB); equal on every rank, as the choice must be.
uint64_t smallBytes(Op op, uint32_t ranks) {
  static uint64_t cached[static_cast<int>(Op::kCount)];
  static uint32_t cachedRanks[static_cast<int>(Op::kCount)];
  const int i = static_cast<int>(op);
  if (cachedRanks[i] != ranks) {
    cached[i] = settings::tuned(settings::Id::kReduceSmall, opName(op), ranks);
    cachedRanks[i] = ranks;
  }
  return cached[i];
}

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

// Private memory for `count` elements of `type`, addressed like a user
// buffer: element i at base() + i * extent (only the true extent of each
// element is backed).
class TypedBuf {
 public:
  TypedBuf(uint64_t count, const dt::Type* t) : ext_(t->extent()) {
    if (count == 0 || t->size == 0) return;
    const int64_t span = t->trueUb - t->trueLb;
    const int64_t first = t->trueLb, last = static_cast<int64_t>(count - 1) * ext_ + t->trueLb;
    const int64_t lo = std::min(first, last), hi = std::max(first, last) + span;
    mem_ = tPool.take(static_cast<size_t>(hi - lo), &cap_);
    base_ = mem_ - lo;
  }
  ~TypedBuf() {
    if (mem_) tPool.give(mem_, cap_);
  }
  TypedBuf(const TypedBuf&) = delete;
  TypedBuf& operator=(const TypedBuf&) = delete;
  char* at(uint64_t elem) const { return base_ + static_cast<int64_t>(elem) * ext_; }

 private:
  int64_t ext_;
  char* mem_ = nullptr;
  size_t cap_ = 0;
  char* base_ = nullptr;
};

// Copies count elements of `type` from src to dst (same layout).
void copyTyped(char* dst, const char* src, uint64_t count, const dt::Type* type) {
  if (count == 0 || dst == src) return;
  dt::Cursor s(src, count, type), d(dst, count, type);
  const uint64_t n = s.totalBytes();
  if (s.contiguous()) {
    std::memcpy(d.contiguousBase(), s.contiguousBase(), n);
    return;
  }
  alignas(64) static thread_local char bounce[64 * 1024];
  for (uint64_t pos = 0; pos < n; pos += sizeof bounce) {
    uint64_t len = std::min<uint64_t>(sizeof bounce, n - pos);
    s.pack(pos, bounce, len);
    d.unpack(pos, bounce, len);
  }
}

// An exchange described by functions (the blocks depend on the phase).
class FnArgs final : public ExchangeArgs {
 public:
  std::function<Block(uint32_t)> sendFn, recvFn;
  std::function<bool(uint32_t)> sendsFn, receivesFn;
  Block send(uint32_t p) const override { return sendFn(p); }
  Block recv(uint32_t p) const override { return recvFn(p); }
  bool sends(uint32_t p) const override { return sendsFn(p); }
  bool receives(uint32_t p) const override { return receivesFn(p); }
};

// One slice of the elements per rank.
struct Slices {
  std::vector<uint64_t> start, len;
  explicit Slices(uint32_t n) : start(n + 1), len(n) {}
  static Slices even(uint32_t n, uint64_t count) {
    Slices s(n);
    const uint64_t base = count / n, rem = count % n;
    for (uint32_t k = 0; k < n; ++k) {
      s.len[k] = base + (k < rem ? 1 : 0);
      s.start[k + 1] = s.start[k] + s.len[k];
    }
    return s;
  }
  static Slices given(uint32_t n, const uint64_t* counts) {
    Slices s(n);
    for (uint32_t k = 0; k < n; ++k) {
      s.len[k] = counts[k];
      s.start[k + 1] = s.start[k] + counts[k];
    }
    return s;
  }
};

class Reducer {
 public:
  Reducer(Team& team, const Reduction& r, Op opc)
      : team_(team), r_(r), opc_(opc), n_(team.size()), me_(team.rank), ext_(r.type->extent()) {
    in_ = static_cast<const char*>(r.in ? r.in : r.out);
    out_ = static_cast<char*>(r.out);
  }

  Block inSlice(const Slices& s, uint32_t k) const { return {in_ + off(s.start[k]), s.len[k], r_.type}; }
  Block outSlice(const Slices& s, uint32_t k) const { return {out_ + off(s.start[k]), s.len[k], r_.type}; }
  int64_t off(uint64_t elems) const { return static_cast<int64_t>(elems) * ext_; }

  // Phase 1: rank k receives slice k of every input into T[0..n-1].
  int toOwners(const Slices& s, TypedBuf& t) {
    const uint64_t mine = s.len[me_];
    FnArgs a;
    a.op = opc_;
    a.allPairs = false;
    a.sendFn = [&](uint32_t p) { return inSlice(s, p); };
    a.recvFn = [&](uint32_t p) { return Block{t.at(p * mine), mine, r_.type}; };
    a.sendsFn = [&](uint32_t p) { return s.len[p] > 0; };
    a.receivesFn = [&](uint32_t) { return mine > 0; };
    return exchange(team_, a);
  }

  // dst = T[0] (op) (T[1] (op) ... (op) T[k-1]), each slot `len` elements.
  void fold(char* dst, const TypedBuf& t, uint32_t k, uint64_t len) const {
    if (len == 0 || k == 0) return;
    copyTyped(dst, t.at((k - 1) * len), len, r_.type);
    for (uint32_t j = k - 1; j-- > 0;) op::apply(r_.op, t.at(j * len), dst, len, r_.dtype);
  }

  // Every rank ends with every slice of `out` (allgatherv, in place).
  int allgatherSlices(const Slices& s) {
    FnArgs a;
    a.op = opc_;
    a.broadcast = true;
    a.allPairs = false;
    a.sendFn = [&](uint32_t) { return outSlice(s, me_); };
    a.recvFn = [&](uint32_t p) { return outSlice(s, p); };
    a.sendsFn = [&](uint32_t) { return s.len[me_] > 0; };
    a.receivesFn = [&](uint32_t p) { return s.len[p] > 0; };
    return exchange(team_, a);
  }

  int allreduce() {
    if (n_ == 1) return copyTyped(out_, in_, r_.count, r_.type), 0;
    if (r_.count * r_.type->size * (n_ - 1) <= smallBytes(opc_, n_)) {
      // Everybody gets every input and folds all of them.
      TypedBuf t(uint64_t{n_} * r_.count, r_.type);
      FnArgs a;
      a.op = opc_;
      a.broadcast = true;
      a.sendFn = [&](uint32_t) { return Block{in_, r_.count, r_.type}; };
      a.recvFn = [&](uint32_t p) { return Block{t.at(p * r_.count), r_.count, r_.type}; };
      SHMCOLL_CHECK(exchange(team_, a));
      fold(out_, t, n_, r_.count);
      return 0;
    }
    Slices s = Slices::even(n_, r_.count);
    TypedBuf t(uint64_t{n_} * s.len[me_], r_.type);
    SHMCOLL_CHECK(toOwners(s, t));
    fold(out_ + off(s.start[me_]), t, n_, s.len[me_]);
    return allgatherSlices(s);
  }

  int reduce(uint32_t root) {
    if (n_ == 1) return copyTyped(out_, in_, r_.count, r_.type), 0;
    if (r_.count * r_.type->size * (n_ - 1) <= smallBytes(opc_, n_)) {
      // The root gathers every input and folds.
      TypedBuf t(me_ == root ? uint64_t{n_} * r_.count : 0, r_.type);
      FnArgs a;
      a.op = opc_;
      a.allPairs = false;
      a.sendFn = [&](uint32_t) { return Block{in_, r_.count, r_.type}; };
      a.recvFn = [&](uint32_t p) {
        return me_ == root ? Block{t.at(p * r_.count), r_.count, r_.type} : Block{in_, r_.count, r_.type};
      };
      a.sendsFn = [&](uint32_t p) { return me_ != root && p == root; };
      a.receivesFn = [&](uint32_t) { return me_ == root; };
      SHMCOLL_CHECK(exchange(team_, a));
      if (me_ == root) fold(out_, t, n_, r_.count);
      return 0;
    }
    Slices s = Slices::even(n_, r_.count);
    const uint64_t mine = s.len[me_];
    TypedBuf t(uint64_t{n_} * mine, r_.type);
    SHMCOLL_CHECK(toOwners(s, t));
    TypedBuf acc(me_ == root ? 0 : mine, r_.type);
    char* dst = me_ == root ? out_ + off(s.start[me_]) : acc.at(0);
    fold(dst, t, n_, mine);
    // Gather the slices at the root.
    FnArgs a;
    a.op = opc_;
    a.allPairs = false;
    a.sendFn = [&](uint32_t) { return Block{dst, mine, r_.type}; };
    a.recvFn = [&](uint32_t p) { return me_ == root ? outSlice(s, p) : Block{dst, mine, r_.type}; };
    a.sendsFn = [&](uint32_t p) { return me_ != root && p == root && mine > 0; };
    a.receivesFn = [&](uint32_t p) { return me_ == root && s.len[p] > 0; };
    return exchange(team_, a);
  }

  int reduceScatter(const uint64_t* counts) {
    if (n_ == 1) return copyTyped(out_, in_, counts[0], r_.type), 0;
    Slices s = Slices::given(n_, counts);
    TypedBuf t(uint64_t{n_} * s.len[me_], r_.type);
    SHMCOLL_CHECK(toOwners(s, t));
    fold(out_, t, n_, s.len[me_]);
    return 0;
  }

  int scan(bool exclusive) {
    if (n_ == 1) {
      if (!exclusive) copyTyped(out_, in_, r_.count, r_.type);
      return 0;
    }
    if (r_.count * r_.type->size * (n_ - 1) <= smallBytes(opc_, n_)) {
      // Each input goes to the higher ranks only.
      TypedBuf t(uint64_t{me_ + 1} * r_.count, r_.type);
      FnArgs a;
      a.op = opc_;
      a.broadcast = true;
      a.allPairs = false;
      a.sendFn = [&](uint32_t) { return Block{in_, r_.count, r_.type}; };
      a.recvFn = [&](uint32_t p) { return Block{t.at(p * r_.count), r_.count, r_.type}; };
      a.sendsFn = [&](uint32_t p) { return p > me_; };
      a.receivesFn = [&](uint32_t p) { return p < me_; };
      SHMCOLL_CHECK(exchange(team_, a));
      fold(out_, t, exclusive ? me_ : me_ + 1, r_.count);
      return 0;
    }
    Slices s = Slices::even(n_, r_.count);
    const uint64_t mine = s.len[me_];
    TypedBuf t(uint64_t{n_} * mine, r_.type);
    SHMCOLL_CHECK(toOwners(s, t));
    // Prefixes of this rank's slice: T[j] = T[j-1] (op) T[j].
    if (mine > 0)
      for (uint32_t j = 1; j < n_; ++j) op::apply(r_.op, t.at((j - 1) * mine), t.at(j * mine), mine, r_.dtype);
    // Prefix j (exclusive: j-1) of slice k goes to rank j.
    const uint32_t shift = exclusive ? 1 : 0;
    const Block none{out_, 0, r_.type};
    FnArgs a;
    a.op = opc_;
    a.allPairs = false;
    a.sendFn = [&](uint32_t p) { return p >= shift ? Block{t.at((p - shift) * mine), mine, r_.type} : none; };
    a.recvFn = [&](uint32_t p) { return me_ >= shift ? outSlice(s, p) : none; };
    a.sendsFn = [&](uint32_t p) { return mine > 0 && p >= shift; };
    a.receivesFn = [&](uint32_t p) { return s.len[p] > 0 && me_ >= shift; };
    return exchange(team_, a);
  }

 private:
  Team& team_;
  const Reduction& r_;
  Op opc_;
  uint32_t n_, me_;
  int64_t ext_;
  const char* in_;
  char* out_;
};

}  // namespace

int allreduce(Team& team, const Reduction& r) {
  if (r.count == 0) return 0;
  return Reducer(team, r, Op::kAllreduce).allreduce();
}

int reduce(Team& team, const Reduction& r, uint32_t root) {
  if (r.count == 0) return 0;
  return Reducer(team, r, Op::kReduce).reduce(root);
}

int reduceScatter(Team& team, const Reduction& r, const uint64_t* counts, bool block) {
  if (r.count == 0) return 0;
  return Reducer(team, r, block ? Op::kReduceScatterBlock : Op::kReduceScatter).reduceScatter(counts);
}

int scan(Team& team, const Reduction& r, bool exclusive) {
  if (r.count == 0) return 0;
  return Reducer(team, r, exclusive ? Op::kExscan : Op::kScan).scan(exclusive);
}

}  // namespace shmcoll::coll
