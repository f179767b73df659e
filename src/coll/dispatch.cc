// The engine's collective entry points (coll.h): each prepares an Operation
// and hands it to the registry's dispatcher (registry.h), blocking or not.
#include <vector>

#include "coll/coll.h"
#include "coll/reduce_common.h"
#include "coll/registry.h"
#include "common/status.h"

namespace shmcoll::coll {

namespace {

// MPI_IN_PLACE for the alltoall family outside the inline path: what each
// receive block holds on entry is packed into a private buffer first, then
// sent from there, so a peer never reads a block we have already overwritten.
class InPlaceArgs final : public ExchangeArgs {
 public:
  InPlaceArgs(const ExchangeArgs& inner, uint32_t n) : inner_(inner) {
    op = inner.op;
    skipEmpty = inner.skipEmpty;
    off_.resize(n + 1);
    for (uint32_t p = 0; p < n; ++p) off_[p + 1] = off_[p] + inner.recv(p).bytes();
    data_.resize(off_[n]);
    for (uint32_t p = 0; p < n; ++p) {
      const Block b = inner.recv(p);
      dt::Cursor c(b.buf, b.count, b.type);
      c.pack(0, data_.data() + off_[p], b.bytes());
    }
  }
  Block send(uint32_t p) const override { return {data_.data() + off_[p], off_[p + 1] - off_[p], dt::byteType()}; }
  Block recv(uint32_t p) const override { return inner_.recv(p); }

 private:
  const ExchangeArgs& inner_;
  std::vector<uint64_t> off_;
  std::vector<char> data_;
};

Operation prepare(Op op, Mode mode, const Place& at) {
  Operation o;
  o.op = op;
  o.mode = mode;
  o.at = at;
  return o;
}

int started(Operation& o, int rc, p2p::Request** out) {
  *out = rc ? nullptr : o.request;
  return rc;
}

// An intracommunicator without engine lines (more communicators alive than
// the segment has line sets for) runs its blocking collectives as the
// nonblocking schedules, waited for.
bool unlined(const Place& at) { return !at.inter() && !at.team->hasLines(); }

int runScheduled(Operation& o) {
  o.mode = kNonblocking;
  SHMCOLL_CHECK(dispatch(o));
  p2p::Request* r = o.request;
  SHMCOLL_CHECK(p2p::wait(r));
  const int err = r->status.error;
  const char* why = r->status.why;
  p2p::release(r);
  if (err) return fail(err, "%s", why ? why : "a member's byte count differs from this rank's");
  return kOk;
}

// Every blocking collective but the barrier, which reads it, notes on its
// team who the next barrier lets out first (Team::lead; the exchanges do it in
// exchange(), dispatch.h).
int blocking(Operation& o) {
  if (o.op != Op::kBarrier && !o.at.inter())
    o.at.team->lead = leadAfter(o.op, static_cast<uint32_t>(o.root), o.at.team->size());
  // A reduction on a team of one: its local copy (reduceWith's), no algorithm to choose.
  if (o.red && !o.at.inter() && o.at.team->size() == 1) [[unlikely]]
    return reduction::reduceWith(o, [](reduction::Reducer&) { return 0; });
  return unlined(o.at) ? runScheduled(o) : dispatch(o);
}

}  // namespace

int exchangeGeneral(const Place& at, const ExchangeArgs& a, const Flags& f) {
  Operation o = prepare(a.op, kBlocking, at);
  o.flags = f;
  if (unlined(at)) {
    o.args = &a;
    return runScheduled(o);
  }
  o.inlineTried = !at.inter();
  if (!at.inter() && f.inPlace && !a.broadcast) {
    const InPlaceArgs ip(a, at.team->size());
    o.args = &ip;
    o.flags.inPlace = false;  // (the data travels from the private copy)
    return dispatch(o);
  }
  o.args = &a;
  return dispatch(o);
}

int alone(const ExchangeArgs& a, const Flags& f) {
  // In place the block is where it belongs already (a round of one would
  // copy it to a private buffer and back).
  if (f.inPlace && !a.broadcast) return 0;
  return a.multiPart ? transport::selfCopyParts(a, 0) : transport::selfCopy(a.send(0), a.recv(0));
}

int startExchange(const Place& at, const ExchangeArgs& a, const Flags& f, p2p::Request** out) {
  Operation o = prepare(a.op, kNonblocking, at);
  o.args = &a;
  o.flags = f;
  return started(o, dispatch(o), out);
}

int barrier(const Place& at) {
  if (!at.inter() && at.team->size() == 1) return 0;  // (a team of one has no one to wait for)
  Operation o = prepare(Op::kBarrier, kBlocking, at);
  return blocking(o);
}

int startBarrier(const Place& at, p2p::Request** out) {
  Operation o = prepare(Op::kBarrier, kNonblocking, at);
  return started(o, dispatch(o), out);
}

int allreduce(const Place& at, const Reduction& r) {
  Operation o = prepare(Op::kAllreduce, kBlocking, at);
  o.red = &r;
  return blocking(o);
}

int startAllreduce(const Place& at, const Reduction& r, p2p::Request** out) {
  Operation o = prepare(Op::kAllreduce, kNonblocking, at);
  o.red = &r;
  return started(o, dispatch(o), out);
}

int reduce(const Place& at, const Reduction& r, int root) {
  Operation o = prepare(Op::kReduce, kBlocking, at);
  o.red = &r;
  o.root = root;
  return blocking(o);
}

int startReduce(const Place& at, const Reduction& r, int root, p2p::Request** out) {
  Operation o = prepare(Op::kReduce, kNonblocking, at);
  o.red = &r;
  o.root = root;
  return started(o, dispatch(o), out);
}

int reduceScatter(const Place& at, const Reduction& r, const uint64_t* counts, bool block) {
  Operation o = prepare(block ? Op::kReduceScatterBlock : Op::kReduceScatter, kBlocking, at);
  o.red = &r;
  o.counts = counts;
  return blocking(o);
}

int startReduceScatter(const Place& at, const Reduction& r, const uint64_t* counts, bool block, p2p::Request** out) {
  Operation o = prepare(block ? Op::kReduceScatterBlock : Op::kReduceScatter, kNonblocking, at);
  o.red = &r;
  o.counts = counts;
  return started(o, dispatch(o), out);
}

int scan(const Place& at, const Reduction& r, bool exclusive) {
  Operation o = prepare(exclusive ? Op::kExscan : Op::kScan, kBlocking, at);
  o.red = &r;
  o.exclusive = exclusive;
  return blocking(o);
}

int startScan(const Place& at, const Reduction& r, bool exclusive, p2p::Request** out) {
  Operation o = prepare(exclusive ? Op::kExscan : Op::kScan, kNonblocking, at);
  o.red = &r;
  o.exclusive = exclusive;
  return started(o, dispatch(o), out);
}

int innerExchange(Team& team, const ExchangeArgs& a) { return innerExchangeFinal(team, a); }

namespace {
class RawAllgather final : public ExchangeArgs {
 public:
  RawAllgather(const void* mine, uint64_t bytes, void* out)
      : mine_(static_cast<const char*>(mine)), bytes_(bytes), out_(static_cast<char*>(out)) {
    op = Op::kAllgather;
    broadcast = true;
  }
  Block send(uint32_t) const override { return {mine_, bytes_, dt::byteType()}; }
  Block recv(uint32_t p) const override { return {out_ + p * bytes_, bytes_, dt::byteType()}; }

 private:
  const char* mine_;
  uint64_t bytes_;
  char* out_;
};
}  // namespace

// (No pulls: it runs while communicators are made, before anything
// else may run, and its blocks are small.)
int allgatherBytes(Team& team, const void* mine, uint64_t bytes, void* out) {
  const RawAllgather a(mine, bytes, out);
  if (!team.hasLines()) return exchangeGeneral(Place{&team}, a, {});
  return transport::runRound(team, team.next(), a, {false, 0, thresholds(team, Op::kAllgather).inlineMax},
                             team.cache().roundScratch());
}

}  // namespace shmcoll::coll
