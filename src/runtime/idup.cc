// MPI_Comm_idup: agreeing on a context id without blocking.
//
// The problem.  A new communicator needs a context id free on every member.
// A blocking creation samples each member's free ids, gathers them and
// installs the lowest common one; nothing else can take that id at a member
// in between, because a member does one blocking call at a time.  An idup
// runs in the progress engine instead, so at one rank it overlaps blocking
// creations and other idups, and the standard lets their members start them
// in different orders across communicators (rank A: idup(P) then dup(Q);
// rank B: dup(Q) then idup(P) is correct, so dup(Q) must complete while A's
// idup(P) waits for B, and B's idup(P) must complete while A is still inside
// dup(Q)).  Nobody may wait for an agreement to finish before starting
// another, and no two may install the same id at one rank.
//
// The protocol.
//  1. Ranges: blocking creations use ids below kAsyncCtxFirst, idups the
//     kAsyncIds ids from kAsyncCtxFirst up, and the 64 line sets from
//     kAsyncLinesFirst (runtime/ids.h), so the two kinds never
//     contend.
//  2. Start: every member tells the leader (rank 0 of the parent's schedule
//     team: the parent, or both groups of an intercommunicator) that it has
//     started, and whether its attribute copy failed; the leader answers GO
//     (or FAIL: then nobody keeps the communicator) once all have.  From GO
//     on the agreement is "ready" at that rank: every member has started it,
//     so its rounds below never wait for a rank that is busy elsewhere.
//  3. Rounds: at the start of a round a ready agreement takes this rank's
//     lock on the idup range if the lock is free and no ready agreement of
//     higher priority is waiting here; it then offers its free idup ids,
//     else it offers none.  The leader ANDs the offers and answers with the
//     lowest common id; each member installs it and drops the lock.  While a
//     rank holds the lock for one agreement no other agreement can install
//     an idup id there, so the pick is still free when it is installed.  If
//     the AND is empty because some member offered nothing, every member
//     drops the lock and starts the next round; if every member held its
//     lock and still nothing is common, the idup fails (MPI_ERR_OTHER).
//  4. Priority: agreements are ordered by (the parent's context id, the
//     operation's number on the parent), which every member of two
//     overlapping agreements sees alike (two parents with the same context
//     id share no rank).  The highest-priority ready agreement is given
//     every member's lock as soon as the round holding it there ends, so it
//     succeeds within a few rounds; then the next one does.  A lock is held
//     only for one round of a ready agreement, whose other members answer
//     from their progress engines, so a lock is never held by a rank waiting
//     for something else, and nothing waits for a lock: no deadlock.
//
// Messages travel on the parent's nonblocking-collective context with the
// operation's number on the parent as tag (as coll/sched.h): members start
// nonblocking collectives on a communicator in the same order, so they agree
// on it.  Every message goes between a member and the leader, and each pair's
// messages arrive in order, so one tag serves all rounds.
//
// Callers free the duplicates in whatever order they made them, which may
// differ between members as the idups' order did: MPI_Comm_free is local
// (runtime/comm.h), so no order of frees can deadlock either.
//
// Cost: two message round trips between the leader and every member when
// nothing contends, two more per round lost to a higher-priority agreement;
// 168-byte messages.  The new communicator's attributes were copied when
// MPI_Comm_idup was called, as the standard asks.
#include "runtime/idup.h"

#include <algorithm>
#include <vector>

#include "common/status.h"
#include "runtime/attr.h"
#include "runtime/context.h"
#include "transport/lanes.h"
#include "runtime/types.h"

namespace shmcoll::rt {

namespace {

constexpr size_t kAsyncWords = kAsyncIds / 64;
static_assert(segment::kMaxContexts - kAsyncLinesFirst == 64, "one 64-bit word of offered line sets");
constexpr uint32_t kNone = UINT32_MAX;

enum Kind : uint32_t { kStart = 1, kGo, kOffer, kResult };

struct Msg {
  uint32_t kind = 0;
  uint32_t flag = 0;       // kStart: my copy failed; kGo: a copy failed; kOffer: I hold my lock; kResult: all did
  uint32_t ctxId = kNone;  // kResult: the pick
  uint32_t round = 0;
  uint64_t highSeq = 0;    // kOffer: mine; kResult: the maximum
  uint64_t freeLines = 0;  // kOffer: bit i = line set kAsyncLinesFirst + i is free here (0 without the lock)
  uint32_t lines = kNone;  // kResult: the line set picked (kNone: none was free everywhere)
  uint32_t pad = 0;
  uint64_t freeIds[kAsyncWords] = {};  // kOffer: bit i = id kAsyncCtxFirst + i is free here (0 without the lock)
};

const dt::Type* byteType() {
  static const dt::Type* t = rt::type(MPI_BYTE);
  return t;
}

class Agreement;
Agreement* gLockOwner = nullptr;     // holds this rank's idup range for the round in flight
std::vector<Agreement*> gReady;      // agreements past GO at this rank

class Agreement final : public p2p::Request {
 public:
  Agreement(Comm& parent, Comm* nc, bool copyFailed, MPI_Comm* out)
      : Request(Kind::kOther), nc_(nc), out_(out), copyFailed_(copyFailed) {
    coll::Team& t = scheduleTeam(parent);
    members_ = t.members;
    me_ = t.rank;
    ctx_ = p2p::kInternalCtx | t.ctxId;
    tag_ = static_cast<int32_t>(t.nbcSeq++ & 0x7fffffffu);
    prio_ = (static_cast<uint64_t>(t.ctxId) << 32) | static_cast<uint32_t>(tag_);
    in_.resize(members_.size());
  }

  ~Agreement() override {
    unready();
    if (gLockOwner == this) gLockOwner = nullptr;
    for (p2p::Request* r : live_) p2p::release(r);
    if (failed_) {
      // Delete callbacks of the attributes copied at the call, then the handle.
      int ignored = 0;
      deleteAllAttrs(AttrKind::kComm, nc_->handle, false, &ignored);
      discardComm(nc_);
    }
  }

  bool usesContext(uint32_t ctx) const override { return ctx == ctx_; }

  bool step() override {
    bool did = reapSends();
    for (;;) {
      switch (phase_) {
        case Phase::kStart:
          did = true;
          if (!leader()) {
            out1_ = {kStart, copyFailed_ ? 1u : 0u};
            send(0, out1_);
            recv(0);
            phase_ = Phase::kWaitGo;
          } else {
            for (uint32_t p = 1; p < size(); ++p) recv(p);
            phase_ = Phase::kGatherStart;
          }
          continue;
        case Phase::kGatherStart: {
          if (!received()) return did;
          bool anyFailed = copyFailed_;
          for (uint32_t p = 1; p < size(); ++p) anyFailed |= in_[p].kind != kStart || in_[p].flag != 0;
          goMsg_ = {kGo, anyFailed ? 1u : 0u};
          for (uint32_t p = 1; p < size(); ++p) send(p, goMsg_);
          onGo(anyFailed);
          did = true;
          continue;
        }
        case Phase::kWaitGo:
          if (!received()) return did;
          onGo(in_[0].kind != kGo || in_[0].flag != 0);
          did = true;
          continue;
        case Phase::kRound: {
          did = true;
          ++round_;
          const bool own = tryLock();
          Msg mine{kOffer, own ? 1u : 0u, kNone, round_, transport::lanes().highSeq};
          if (own) offerFree(&mine);
          if (!leader()) {
            out1_ = mine;
            send(0, out1_);
            recv(0);
            phase_ = Phase::kWaitResult;
          } else {
            in_[0] = mine;
            for (uint32_t p = 1; p < size(); ++p) recv(p);
            phase_ = Phase::kGatherOffers;
          }
          continue;
        }
        case Phase::kGatherOffers: {
          if (!received()) return did;
          uint64_t common[kAsyncWords], lines = ~0ull, high = 0;
          std::fill(std::begin(common), std::end(common), ~0ull);
          bool allOwned = true;
          for (uint32_t p = 0; p < size(); ++p) {
            for (size_t k = 0; k < kAsyncWords; ++k) common[k] &= in_[p].freeIds[k];
            lines &= in_[p].freeLines;
            allOwned &= in_[p].flag != 0;
            high = std::max(high, in_[p].highSeq);
          }
          const uint32_t pick = lowestSet(common, kAsyncWords);
          resultMsg_ = {kResult, allOwned ? 1u : 0u, pick == kNone ? kNone : kAsyncCtxFirst + pick, round_, high};
          resultMsg_.lines = lines ? kAsyncLinesFirst + __builtin_ctzll(lines) : kNoLines;
          for (uint32_t p = 1; p < size(); ++p) send(p, resultMsg_);
          onResult(resultMsg_);
          return true;  // a lost round lets the other requests step before the next
        }
        case Phase::kWaitResult:
          if (!received()) return did;
          onResult(in_[0]);
          return true;
        case Phase::kFinished:
          // Our send buffers live in this object: complete once they are out.
          if (live_.empty() && !done) {
            done = true;
            did = true;
          }
          return did;
      }
    }
  }

 private:
  enum class Phase { kStart, kGatherStart, kWaitGo, kRound, kGatherOffers, kWaitResult, kFinished };

  bool leader() const { return me_ == 0; }
  uint32_t size() const { return static_cast<uint32_t>(members_.size()); }

  void send(uint32_t peer, const Msg& m) {
    p2p::Envelope env{members_[peer], ctx_, static_cast<int32_t>(me_), tag_};
    sends_.push_back(p2p::isend(&m, sizeof m, byteType(), env, p2p::Mode::kStandard));
    live_.push_back(sends_.back());
  }
  void recv(uint32_t peer) {
    recvs_.push_back(p2p::irecv(&in_[peer], sizeof(Msg), byteType(), ctx_, static_cast<int>(peer), tag_));
    live_.push_back(recvs_.back());
  }
  // True once every posted receive has completed (they are then released).
  bool received() {
    for (p2p::Request* r : recvs_)
      if (!r->done) return false;
    for (p2p::Request* r : recvs_) forget(r);
    recvs_.clear();
    return true;
  }
  bool reapSends() {
    bool did = false;
    for (size_t i = 0; i < sends_.size();) {
      if (sends_[i]->done) {
        forget(sends_[i]);
        sends_.erase(sends_.begin() + static_cast<long>(i));
        did = true;
      } else {
        ++i;
      }
    }
    return did;
  }
  void forget(p2p::Request* r) {
    live_.erase(std::find(live_.begin(), live_.end(), r));
    p2p::release(r);
  }

  static void offerFree(Msg* m) {
    FreeIds f;
    freeIds(true, &f);
    std::copy(f.ctx + kAsyncCtxFirst / 64, f.ctx + kCtxWords, m->freeIds);
    m->freeLines = f.lines[kAsyncLinesFirst / 64];
  }

  bool tryLock() {
    if (gLockOwner) return false;
    for (const Agreement* a : gReady)
      if (a->prio_ < prio_) return false;  // a higher-priority agreement waits for this rank's lock
    gLockOwner = this;
    return true;
  }
  void unready() {
    auto it = std::find(gReady.begin(), gReady.end(), this);
    if (it != gReady.end()) gReady.erase(it);
  }

  void onGo(bool anyFailed) {
    if (anyFailed) {
      finish(MPI_ERR_OTHER, "an attribute copy callback failed on a member, so no member keeps the new communicator");
      return;
    }
    gReady.push_back(this);
    phase_ = Phase::kRound;
  }

  void onResult(const Msg& r) {
    if (gLockOwner == this) gLockOwner = nullptr;
    if (r.ctxId != kNone) {
      activate(*nc_, r.ctxId, r.highSeq, r.lines);
      finish(0, nullptr);
    } else if (r.flag) {
      finish(MPI_ERR_OTHER,
             "no context id for nonblocking duplicates is free on every member (at most 1024 communicators made by "
             "MPI_Comm_idup may exist at once)");
    } else {
      phase_ = Phase::kRound;
    }
  }

  void finish(int err, const char* why) {
    unready();
    phase_ = Phase::kFinished;
    status.error = err;
    status.why = why;
    if (err) {
      failed_ = true;
      *out_ = MPI_COMM_NULL;
    }
  }

  Comm* nc_;
  MPI_Comm* out_;
  bool copyFailed_;
  bool failed_ = false;
  std::vector<uint32_t> members_;
  uint32_t me_ = 0;
  uint32_t ctx_ = 0;
  int32_t tag_ = 0;
  uint64_t prio_ = 0;
  Phase phase_ = Phase::kStart;
  uint32_t round_ = 0;
  std::vector<Msg> in_;  // the leader: one per member; a member: in_[0] from the leader
  Msg out1_, goMsg_, resultMsg_;
  std::vector<p2p::Request*> sends_, recvs_, live_;
};

}  // namespace

p2p::Request* startIdup(Comm& parent, Comm* nc, bool copyFailed, MPI_Comm* out) {
  auto* a = new Agreement(parent, nc, copyFailed, out);
  p2p::addActive(a);
  p2p::progress();
  return a;
}

}  // namespace shmcoll::rt
