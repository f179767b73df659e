// Schedules for the nonblocking collectives (see nbc.h).
#include "p2p/nbc.h"

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "coll/streamed.h"
#include "op/op.h"

namespace shmcoll::nbc {

namespace {

const dt::Type* byteType() {
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
  }

  Round& round() {
    rounds_.emplace_back();
    return rounds_.back();
  }
  void hold(const dt::Type* t) {
    dt::retain(t);
    held_.push_back(t);
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
};

p2p::Request* start(Schedule* s) {
  p2p::addActive(s);
  p2p::progress();
  return s;
}

// Bytes spanned by `count` elements of `t` (the memory a temporary copy needs)
// and the offset of the buffer origin inside it.
uint64_t spanOf(uint64_t count, const dt::Type* t, int64_t* originOff) {
  *originOff = -t->trueLb;
  if (count == 0) return 0;
  return static_cast<uint64_t>((static_cast<int64_t>(count) - 1) * t->extent() + (t->trueUb - t->trueLb));
}

}  // namespace

p2p::Request* exchange(coll::Team& team, const coll::ExchangeArgs& a, bool inPlace) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  // Self copy first (before anything else can write the receive blocks).
  if (!inPlace) {
    if (int rc = coll::selfCopy(a.broadcast ? a.send(0) : a.send(me), a.recv(me))) s->setError(rc);
  }
  std::vector<coll::Block> sends(n);
  if (inPlace) {
    // What each receive block holds now is what goes to that peer.
    std::vector<uint64_t> off(n + 1, 0);
    for (uint32_t p = 0; p < n; ++p) off[p + 1] = off[p] + (p == me ? 0 : a.recv(p).bytes());
    char* data = s->temp(off[n]);
    for (uint32_t p = 0; p < n; ++p) {
      if (p == me) continue;
      coll::Block b = a.recv(p);
      if (b.bytes()) dt::Cursor(b.buf, b.count, b.type).pack(0, data + off[p], b.bytes());
      sends[p] = {data + off[p], off[p + 1] - off[p], byteType()};
    }
  } else {
    for (uint32_t p = 0; p < n; ++p)
      if (p != me) sends[p] = a.broadcast ? a.send(0) : a.send(p);
  }
  Schedule::Round& r = s->round();
  // Receives first, so most messages find their receive already posted.
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t p = (me + n - k) % n;
    if (!a.allPairs && !a.receives(p)) continue;
    coll::Block b = a.recv(p);
    s->hold(b.type);
    r.xfers.push_back({false, p, b});
  }
  for (uint32_t k = 1; k < n; ++k) {
    uint32_t p = (me + k) % n;
    if (!a.allPairs && !a.sends(p)) continue;
    s->hold(sends[p].type);
    r.xfers.push_back({true, p, sends[p]});
  }
  return start(s);
}

p2p::Request* barrier(coll::Team& team) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  for (uint32_t k = 1; k < n; k <<= 1) {
    Schedule::Round& r = s->round();
    r.xfers.push_back({false, (me + n - k) % n, {nullptr, 0, byteType()}});
    r.xfers.push_back({true, (me + k) % n, {nullptr, 0, byteType()}});
  }
  return start(s);
}

p2p::Request* reduce(coll::Team& team, const coll::Reduction& red, int root) {
  auto* s = new Schedule(team);
  const uint32_t n = team.size(), me = team.rank;
  const uint32_t target = root < 0 ? 0 : static_cast<uint32_t>(root);
  s->hold(red.type);
  const char* mine = static_cast<const char*>(red.in ? red.in : red.out);
  const coll::Block out{static_cast<const char*>(red.out), red.count, red.type};
  if (n == 1) {
    if (red.in) coll::selfCopy({mine, red.count, red.type}, out);
    return start(s);
  }
  if (me != target) {
    s->round().xfers.push_back({true, target, {mine, red.count, red.type}});
    if (root < 0) s->round().xfers.push_back({false, target, out});
    return start(s);
  }
  // The target receives every input into a private copy laid out like the
  // user's buffer, then folds them in rank order: acc = in[n-1], then
  // acc = in[j] (op) acc for j = n-2 .. 0, which gives a non-commutative
  // operation a0 o a1 o ... o a(n-1).
  int64_t origin = 0;
  const uint64_t span = spanOf(red.count, red.type, &origin);
  std::vector<const char*> in(n);
  Schedule::Round& gather = s->round();
  for (uint32_t p = 0; p < n; ++p) {
    if (p == me) {
      in[p] = mine;
      continue;
    }
    char* t = s->temp(span) + origin;
    in[p] = t;
    gather.xfers.push_back({false, p, {t, red.count, red.type}});
  }
  char* acc = s->temp(span) + origin;
  const coll::Reduction r = red;
  gather.after = [in, acc, r, n, out]() {
    coll::selfCopy({in[n - 1], r.count, r.type}, {acc, r.count, r.type});
    for (uint32_t j = n - 1; j-- > 0;) op::apply(r.op, in[j], acc, r.count, r.dtype);
    coll::selfCopy({acc, r.count, r.type}, out);
  };
  if (root < 0) {
    Schedule::Round& bc = s->round();
    for (uint32_t p = 0; p < n; ++p)
      if (p != me) bc.xfers.push_back({true, p, out});
  }
  return start(s);
}

}  // namespace shmcoll::nbc
