// The schedule machinery of the nonblocking collectives (nbc.h), shared by
// nbc.cc and nbc_inter.cc: a request that runs rounds of point-to-point
// transfers, each followed by a local step.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "coll/streamed.h"
#include "op/op.h"
#include "p2p/p2p.h"

namespace shmcoll::nbc {

inline const dt::Type* byteType() {
  static const dt::Type* t = dt::fromHandle(MPI_BYTE);
  return t;
}

class Schedule final : public p2p::Request {
 public:
  struct Xfer {
    bool send;
    uint32_t peer;  // team rank
    coll::Block b;
  };
  struct Round {
    std::vector<Xfer> xfers;
    std::function<void()> after;
  };

  explicit Schedule(coll::Team& t)
      : Request(Kind::kOther),
        members_(t.members),
        me_(t.rank),
        ctx_(p2p::kInternalCtx | t.ctxId),
        tag_(static_cast<int32_t>(t.nbcSeq++ & 0x7fffffffu)) {}
  ~Schedule() override {
    for (const dt::Type* t : held_) dt::release(t);
    for (MPI_Op op : heldOps_) op::unhold(op);
  }

  Round& round() {
    rounds_.emplace_back();
    return rounds_.back();
  }
  void hold(const dt::Type* t) {
    dt::retain(t);
    held_.push_back(t);
  }
  // A reduction holds its datatype and its operation (the user may free
  // both handles while the schedule runs).
  void hold(const coll::Reduction& r) {
    hold(r.type);
    op::hold(r.op);
    heldOps_.push_back(r.op);
  }
  // Private memory that lives as long as the schedule.
  char* temp(uint64_t bytes) {
    temps_.emplace_back(new char[bytes ? bytes : 1]);
    return temps_.back().get();
  }
  uint32_t me() const { return me_; }
  uint32_t size() const { return static_cast<uint32_t>(members_.size()); }
  void setError(int cls) {
    if (!status.error) status.error = cls;
  }

  bool step() override {
    bool did = false;
    while (cur_ < rounds_.size()) {
      Round& r = rounds_[cur_];
      if (!started_) {
        started_ = true;
        did = true;
        for (const Xfer& x : r.xfers) {
          if (x.send) {
            p2p::Envelope env{members_[x.peer], ctx_, static_cast<int32_t>(me_), tag_};
            live_.push_back(p2p::isend(x.b.buf, x.b.count, x.b.type, env, p2p::Mode::kStandard));
          } else {
            live_.push_back(
                p2p::irecv(const_cast<char*>(x.b.buf), x.b.count, x.b.type, ctx_, static_cast<int>(x.peer), tag_));
          }
        }
      }
      for (p2p::Request* q : live_)
        if (!q->done) return did;
      for (p2p::Request* q : live_) {
        if (q->status.error) setError(q->status.error);
        p2p::release(q);
      }
      live_.clear();
      started_ = false;
      if (r.after) r.after();
      ++cur_;
      did = true;
    }
    if (!done) {
      done = true;
      did = true;
    }
    return did;
  }

 private:
  std::vector<uint32_t> members_;
  uint32_t me_;
  uint32_t ctx_;
  int32_t tag_;
  std::vector<Round> rounds_;
  size_t cur_ = 0;
  bool started_ = false;
  std::vector<p2p::Request*> live_;
  std::vector<std::unique_ptr<char[]>> temps_;
  std::vector<const dt::Type*> held_;
  std::vector<MPI_Op> heldOps_;
};

inline p2p::Request* start(Schedule* s) {
  p2p::addActive(s);
  p2p::progress();
  return s;
}

// Bytes spanned by `count` elements of `t` (the memory a temporary copy needs)
// and the offset of the buffer origin inside it.
inline uint64_t spanOf(uint64_t count, const dt::Type* t, int64_t* originOff) {
  *originOff = -t->trueLb;
  if (count == 0) return 0;
  return static_cast<uint64_t>((static_cast<int64_t>(count) - 1) * t->extent() + (t->trueUb - t->trueLb));
}

// A private buffer of the schedule for `count` elements of `t`, addressed
// like a user buffer (the returned origin lies inside the allocation).
inline char* tempLike(Schedule* s, uint64_t count, const dt::Type* t) {
  int64_t origin = 0;
  const uint64_t span = spanOf(count, t, &origin);
  return s->temp(span) + origin;
}

// inout = in (op) inout for r.count elements of r's type (held by the schedule).
inline void combine(const coll::Reduction& r, const void* in, void* inout, uint64_t count) {
  op::apply(r.op, in, inout, count, r.dtype, r.type);
}

// acc = in[0] (op) in[1] (op) ... (op) in[k-1] over `count` elements, folded
// right to left so that a non-commutative operation sees its arguments in
// rank order.
inline void fold(const std::vector<const char*>& in, char* acc, const coll::Reduction& r, uint64_t count) {
  coll::selfCopy({in.back(), count, r.type}, {acc, count, r.type});
  for (size_t j = in.size() - 1; j-- > 0;) combine(r, in[j], acc, count);
}

}  // namespace shmcoll::nbc
