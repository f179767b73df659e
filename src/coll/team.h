// A team: a communicator as the engine sees it.
//
// The members in rank order (world ranks), this process's rank among them
// and the context id whose lines in every member's area it owns
// (transport::Group), plus its operation sequence number: all members
// advance `seq` in lockstep, one step per collective, so a (ctx, seq) pair
// names one operation everywhere.  Sequence numbers on a context only grow,
// across communicators that reuse the context id, so waits compare with >=.
//
// A team also keeps what its collectives look up once and reuse: the
// thresholds of each operation on teams of its size, the inline path's gate
// (coll/exchange_inline.h), the round scratch memory, and its levels
// (coll/levels.h).  One communicator's collectives never run at the same
// time (the standard orders them), so these need no lock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "coll/op.h"
#include "transport/group.h"
#include "transport/lanes.h"
#include "transport/round.h"

namespace shmcoll::transport {
struct RoundScratch;
}

namespace shmcoll::coll {

struct Levels;
struct Algorithm;

// The thresholds of one operation on teams of one size: the environment,
// else the decision table, else the built-in defaults (registry.cc).
struct Thresholds {
  bool filled = false;
  uint64_t cmaMin = 0, cmaSoloMin = 0, cmaSoloMax = 0, inlineMax = 0, reduceSmall = 0;
  // The largest block a rank carries inline when it would otherwise go
  // through the slots (registry.cc: kInlineStreamed), at least inlineMax.
  uint64_t inlineStreamed = 0;
  transport::RoundParams round;  // what the operation's rounds use (registry.cc: roundParams)
};

// What a team looks up once: per operation, its thresholds and the
// algorithms that may run it in each mode (registry.cc); the round scratch
// memory; the levels.
struct TeamCache {
  Thresholds thresholds[kOpCount];
  struct Candidates {
    bool filled = false;
    bool forced = false;  // list[0] is forced (SHMCOLL_ALGORITHM_<OP>)
    bool verbose = false;
    // No candidate has an eligibility test, so the choice depends on the
    // bytes alone (costs look at the team, the operation and its bytes): the
    // last choice is kept for the next call of the same size.
    bool byBytes = false;
    uint8_t count = 0;
    const Algorithm* list[8] = {};
    uint64_t lastBytes = UINT64_MAX;
    const Algorithm* last = nullptr;  // (only when byBytes and nothing is to be reported)
  };
  // [op][nonblocking][intercommunicator]: which(op, nonblocking, inter)
  static constexpr int which(Op op, bool nonblocking, bool inter) {
    return static_cast<int>(op) * 4 + (nonblocking ? 2 : 0) + (inter ? 1 : 0);
  }
  Candidates candidates[kOpCount * 4];
  // The one candidate that takes every call, when there is one (no
  // eligibility or cost to weigh, nothing to report): the dispatcher runs it
  // at once.
  const Algorithm* direct[kOpCount * 4] = {};
  transport::RoundScratch* scratch = nullptr;
  Levels* levels = nullptr;
  // The inline path's lists of peers (exchange_inline.h), reused so that it
  // allocates nothing.
  std::vector<uint32_t> pending, rest;
  TeamCache() = default;
  TeamCache(const TeamCache&) = delete;
  TeamCache& operator=(const TeamCache&) = delete;
  ~TeamCache();
  transport::RoundScratch& roundScratch();
};

// The largest block the inline path takes for one operation on this team,
// per lane kind (0: a lane per reader, 1: one shared lane), and whether it
// may run at all (not when another algorithm is forced: every rank must then
// run that one, even a rank whose blocks are empty).  Filled on first use
// (registry.cc).
struct InlineGate {
  bool filled = false;
  bool open = false;
  bool verbose = false;
  uint64_t cap[2] = {};
  // Per lane kind as cap: the bound for a block that is not pulled (private
  // memory below cmaMin, or not contiguous, or pulls off), at least cap.
  uint64_t capStreamed[2] = {};
  uint64_t cmaMin = 0;  // the operation's (Thresholds::cmaMin)
  bool pulls = false;   // blocks may be pulled at all (SHMCOLL_PULL is not off)
  uint64_t ahead = 0;      // the largest block a rooted collective's sender puts in its ring (0: none)
  uint64_t aheadWide = 0;  // ... in its wide slots, naming them in its ring (0: none)
  uint64_t laneBytes = 0;  // a lane per reader: its size on this team (segment::View::laneBytes)
};

class Team : public transport::Group {
 public:
  uint64_t seq = 0;
  uint32_t nbcSeq = 0;  // nonblocking collectives started on it (coll/sched.h)
  // The member the next barrier on the team should let out first, or kNoLead:
  // set by every blocking collective but the barrier from its operation and
  // root (leadAfter, coll.h; coll::blocking and coll::exchange), the same on
  // every member, as they call the same collectives in the same order
  // (barrier_dissemination.cc, "led").
  static constexpr uint32_t kNoLead = UINT32_MAX;
  // ORed into `lead`: the member named leaves last instead ("last out").
  static constexpr uint32_t kLast = 1u << 31;
  uint32_t lead = kNoLead;

  Team() = default;
  Team(const Team& o) : transport::Group(o), seq(o.seq), nbcSeq(o.nbcSeq) {}  // (caches are not copied)
  Team& operator=(const Team& o) {
    transport::Group::operator=(o);
    seq = o.seq;
    nbcSeq = o.nbcSeq;
    lead = kNoLead;
    resetCaches();
    return *this;
  }
  ~Team();

  // Takes the next sequence number (one per collective).
  uint64_t next() {
    ++seq;
    uint64_t& high = transport::lanes().highSeq;
    if (seq > high) high = seq;
    return seq;
  }

  InlineGate& gate(Op op) { return gates_[static_cast<int>(op)]; }
  TeamCache& cache() {
    if (!cache_) [[unlikely]]
      makeCache();
    return *cache_;
  }
  // Drops everything cached (the membership changed).
  void resetCaches();

 private:
  [[gnu::cold]] void makeCache();
  InlineGate gates_[kOpCount];
  std::unique_ptr<TeamCache> cache_;
};

}  // namespace shmcoll::coll
