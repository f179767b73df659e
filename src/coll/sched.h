// Schedules: the collectives as rounds of point-to-point messages, for the
// nonblocking (and persistent) collectives and for intercommunicators.
//
// The blocking collectives hold the per-rank lanes and slots for one
// operation at a time; a nonblocking collective may be outstanding alongside
// others on any communicators, in any completion order, so it runs on the
// point-to-point layer instead, which buffers as much as needed.  A schedule
// is a list of rounds; each round posts its sends and receives, and when all
// have completed runs a local step (a fold, a copy) and starts the next.
// p2p::progress() steps every schedule, so a schedule advances in any MPI
// call (and in every wait) of the process, and always completes in
// MPI_Wait/MPI_Test.
//
// Messages of schedules travel on the context p2p::kInternalCtx | ctx (never
// matched by user receives) with the operation's number on the team as tag:
// all members start nonblocking collectives on a communicator in the same
// order, so the numbers agree, and several outstanding operations on one
// communicator never match each other's messages.  An intercommunicator's
// schedules run on the team of both its groups (coll::Place::peers).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "coll/coll.h"
#include "coll/registry.h"
#include "common/status.h"
#include "p2p/p2p.h"

namespace shmcoll::coll::sched {

class Schedule final : public p2p::Request {
 public:
  struct Xfer {
    bool send;
    uint32_t peer;  // team rank
    Block b;
    // A receive that must be filled: a shorter message (the ranks' counts
    // disagree) fails the schedule with err::kCount instead of leaving the
    // rest of the block as it was.
    bool exact = false;
  };
  struct Round {
    std::vector<Xfer> xfers;
    std::function<void()> after;
  };

  explicit Schedule(Team& t)
      : Request(Kind::kOther),
        members_(t.members),
        me_(t.rank),
        ctx_(p2p::kInternalCtx | t.ctxId),
        tag_(static_cast<int32_t>(t.nbcSeq++ & 0x7fffffffu)) {}
  ~Schedule() override {
    for (const dt::Type* t : held_) dt::release(t);
    for (const Operator& op : heldOps_) op.hold(op, false);
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
  void hold(const Reduction& r) {
    hold(r.type);
    if (r.op.hold) {
      r.op.hold(r.op, true);
      heldOps_.push_back(r.op);
    }
  }
  // Private memory that lives as long as the schedule.
  char* temp(uint64_t bytes) {
    temps_.emplace_back(new char[bytes ? bytes : 1]);
    return temps_.back().get();
  }
  uint32_t me() const { return me_; }
  uint32_t size() const { return static_cast<uint32_t>(members_.size()); }
  bool usesContext(uint32_t ctx) const override { return ctx == ctx_; }
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
      for (size_t i = 0; i < live_.size(); ++i) {
        p2p::Request* q = live_[i];
        if (q->status.error) setError(q->status.error);
        if (r.xfers[i].exact && q->status.bytes != r.xfers[i].b.bytes()) setError(err::kCount);
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
  std::vector<Operator> heldOps_;
};

// A round of every pair's block of `a` on `s` (sched_exchange.cc; the
// intercommunicator forms use it with their own pairs).  With `inPlace` what
// the receive blocks hold is packed aside first and sent from there.
void exchangeRound(Schedule* s, const ExchangeArgs& a, bool inPlace);

// The dissemination rounds of a barrier over every member of `s`'s team
// (sched_barrier.cc).
void barrierRounds(Schedule* s);

// Starts `s`: nonblocking, hands it out in o.request; blocking (an
// intercommunicator's collectives), waits for it and reports its failure.
int start(Operation& o, Schedule* s);

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
inline void combine(const Reduction& r, const void* in, void* inout, uint64_t count) { r.op(in, inout, count, r.type); }

// acc = in[0] (op) in[1] (op) ... (op) in[k-1] over `count` elements, folded
// right to left so that a non-commutative operation sees its arguments in
// rank order.
inline void fold(const std::vector<const char*>& in, char* acc, const Reduction& r, uint64_t count) {
  transport::selfCopy({in.back(), count, r.type}, {acc, count, r.type});
  for (size_t j = in.size() - 1; j-- > 0;) combine(r, in[j], acc, count);
}

// After `round`: the inputs `in` (count elements of r's type each) folded in
// rank order into the private `acc`, which is then copied to `out`.
inline void foldAfter(Schedule::Round& round, std::vector<const char*> in, char* acc, const Reduction& r,
                      uint64_t count, Block out) {
  round.after = [in = std::move(in), acc, r, count, out]() {
    fold(in, acc, r, count);
    transport::selfCopy({acc, count, r.type}, out);
  };
}

}  // namespace shmcoll::coll::sched
