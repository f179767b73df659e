// What the blocking reductions (reduce_direct.cc, reduce_sliced.cc) share:
// private buffers laid out like a user's, the rounds they run and the fold
// in rank order.
//
// Order: the operator computes inout = in (op) inout; a reduction over ranks
// 0..n-1 folds from the highest rank down with the lower rank's data as `in`,
// acc = T[n-1], then acc = T[j] (op) acc for j = n-2 .. 0, so a
// non-commutative user operation gets exactly a0 (op) (a1 (op) ... a(n-1)),
// the order the standard prescribes.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>
#include <vector>

#include "coll/coll.h"
#include "coll/registry.h"

namespace shmcoll::coll::reduction {

// Private memory for `count` elements of `type`, addressed like a user
// buffer: element i at at(i) = base + i * extent (only the true extent of
// each element is backed).  Up to kHere bytes live in the object itself;
// larger memory is kept between calls, per thread, so a reduction in a loop
// allocates nothing.
class TypedBuf {
 public:
  TypedBuf(uint64_t count, const dt::Type* t);
  ~TypedBuf();
  TypedBuf(const TypedBuf&) = delete;
  TypedBuf& operator=(const TypedBuf&) = delete;
  char* at(uint64_t elem) const { return base_ + static_cast<int64_t>(elem) * ext_; }

 private:
  static constexpr size_t kHere = 256;
  int64_t ext_;
  char* mem_ = nullptr;  // from the pool (else here_ or nothing)
  size_t cap_ = 0;
  char* base_ = nullptr;
  alignas(64) char here_[kHere];
};

// Copies count elements of `type` from src to dst (same layout).
void copyTyped(char* dst, const char* src, uint64_t count, const dt::Type* type);

// A callable kept in place: the reductions' lambdas capture a few references,
// more than std::function keeps without allocating, and a small reduction
// must not allocate on every call.
template <class Sig>
class InlineFn;
template <class R, class... Args>
class InlineFn<R(Args...)> {
 public:
  template <class F>
  InlineFn& operator=(const F& f) {
    static_assert(sizeof(F) <= sizeof(buf_) && alignof(F) <= alignof(std::max_align_t) &&
                      std::is_trivially_copyable_v<F> && std::is_trivially_destructible_v<F>,
                  "InlineFn holds small lambdas that capture by reference");
    ::new (static_cast<void*>(buf_)) F(f);
    call_ = [](const void* self, Args... args) -> R { return (*static_cast<const F*>(self))(args...); };
    return *this;
  }
  R operator()(Args... args) const { return call_(buf_, args...); }
  explicit operator bool() const { return call_ != nullptr; }

 private:
  R (*call_)(const void*, Args...) = nullptr;
  alignas(std::max_align_t) unsigned char buf_[64];
};

// An exchange described by functions (the blocks depend on the phase).
class FnArgs final : public ExchangeArgs {
 public:
  InlineFn<Block(uint32_t)> sendFn, recvFn;
  InlineFn<bool(uint32_t)> sendsFn, receivesFn;
  Block send(uint32_t p) const override { return sendFn(p); }
  Block recv(uint32_t p) const override { return recvFn(p); }
  // (unset: every pair, as in ExchangeArgs)
  bool sends(uint32_t p) const override { return !sendsFn || sendsFn(p); }
  bool receives(uint32_t p) const override { return !receivesFn || receivesFn(p); }
};

// One slice of the elements per rank: slice k is elements start[k] ..
// start[k] + len[k] - 1.  Teams of up to kHere ranks keep the bounds in the
// object (a small reduction must not allocate on every call).
class Slices {
 public:
  struct Even {};
  // Even: as equal as possible, the first count % n one element longer.
  Slices(uint32_t n, uint64_t count, Even);
  // Given: slice k has counts[k] elements.
  Slices(uint32_t n, const uint64_t* counts);
  Slices(const Slices&) = delete;
  Slices& operator=(const Slices&) = delete;

  const uint64_t* start = nullptr;  // n + 1 entries
  const uint64_t* len = nullptr;    // n entries

 private:
  static constexpr uint32_t kHere = 16;
  // start and len, len[k] = lenOf(k), in here_ or heap_
  template <class Len>
  void fill(uint32_t n, Len&& lenOf);
  uint64_t here_[2 * kHere + 1];
  std::vector<uint64_t> heap_;
};

// One rank's view of one blocking reduction.
class Reducer {
 public:
  Reducer(Team& team, const Reduction& r, Op opc);

  Block inSlice(const Slices& s, uint32_t k) const { return {in_ + off(s.start[k]), s.len[k], r_.type}; }
  Block outSlice(const Slices& s, uint32_t k) const { return {out_ + off(s.start[k]), s.len[k], r_.type}; }
  int64_t off(uint64_t elems) const { return static_cast<int64_t>(elems) * ext_; }

  // Rank k receives slice k of every input into T[0..n-1].  With `dst`
  // (where this rank's folded slice goes, apart from its input: not in
  // place), its own slice stays in its input and the last rank's arrives in
  // dst, two copies fewer; sliceInput(s, t, dst, j) says where input j is.
  int toOwners(const Slices& s, TypedBuf& t, char* dst = nullptr);
  const char* sliceInput(const Slices& s, const TypedBuf& t, const char* dst, uint32_t j) const {
    if (dst && j == me_) return in_ + off(s.start[me_]);
    if (dst && j == n_ - 1) return dst;
    return t.at(j * s.len[me_]);
  }
  // toOwners, then the fold of this rank's slice into dst; `apart`: dst is
  // not this rank's input (not in place), so toOwners may use it.
  int foldSlice(const Slices& s, TypedBuf& t, char* dst, bool apart) {
    char* direct = apart ? dst : nullptr;
    if (int rc = toOwners(s, t, direct)) return rc;
    foldFrom(dst, [&](uint32_t j) { return sliceInput(s, t, direct, j); }, n_, s.len[me_]);
    return 0;
  }
  // dst = T[0] (op) (T[1] (op) ... (op) T[k-1]), each of `len` elements.
  void fold(char* dst, const TypedBuf& t, uint32_t k, uint64_t len) const;
  // The same with input j at src(j); the last is not copied when it already is dst.
  template <class Src>
  void foldFrom(char* dst, Src&& src, uint32_t k, uint64_t len) const {
    if (len == 0 || k == 0) return;
    if (const char* last = src(k - 1); last != dst) copyTyped(dst, last, len, r_.type);
    for (uint32_t j = k - 1; j-- > 0;) r_.op(src(j), dst, len, r_.type);
  }
  // Every rank ends with every slice of `out` (an allgatherv, in place).
  int allgatherSlices(const Slices& s);
  // The one-rank case: out = in.
  int alone();

  Team& team_;
  const Reduction& r_;
  Op opc_;
  uint32_t n_, me_;
  int64_t ext_;
  const char* in_;
  char* out_;
};

// Runs a blocking reduction: nothing for no elements, a local copy on a team
// of one, else body(reducer).
template <class Body>
int reduceWith(Operation& o, Body&& body) {
  const Reduction& r = *o.red;
  if (r.count == 0) return 0;
  Reducer x(o.team(), r, o.op);
  if (x.n_ > 1) return body(x);
  switch (o.op) {
    case Op::kExscan:
      return 0;  // (rank 0's output is not touched)
    case Op::kReduceScatter:
    case Op::kReduceScatterBlock:
      copyTyped(x.out_, x.in_, o.counts[0], r.type);
      return 0;
    default:
      return x.alone();
  }
}

// The blocking reductions whose inputs, times the other ranks, are at most
// this many bytes (SHMCOLL_REDUCE_SMALL, else the decision table's
// reduce_small, else 16 KiB): where reduce_direct and reduce_sliced cost the
// same on this machine.  Both algorithms' cost estimates are normalised to it.
inline double directCost(const Operation& o) {
  const uint64_t small = thresholds(o.team(), o.op).reduceSmall;
  if (small == 0) return o.bytes() == 0 ? 0.0 : 1e300;
  return static_cast<double>(o.bytes()) / static_cast<double>(small);
}
constexpr double kSlicedCost = 1.0;

}  // namespace shmcoll::coll::reduction
