// The algorithms and how one is chosen.
//
// Every algorithm is a file of coll/ that opens with how it works, what it
// costs and when it is chosen, and exports one Algorithm: its name, the
// operations and modes it runs, whether it runs on intercommunicators, an
// eligibility test (can it take these arguments?) and a cost estimate.  For
// each call the dispatcher (dispatch()) takes the algorithms that match the
// operation, the mode and the kind of communicator, drops those that are not
// eligible, and runs the cheapest; SHMCOLL_ALGORITHM_<OP>=<name> (or
// SHMCOLL_ALGORITHM=<name> for every operation) forces one, which runs when
// it is eligible (else the choice falls through, with a note once).
// SHMCOLL_VERBOSE=1 says which algorithm ran, once per operation and
// algorithm on each rank; 2 on every call.
//
// Costs are estimates in microseconds for this call on this team: they only
// need to order the eligible algorithms of one operation correctly.
//
// Every rank of a call must choose the same algorithm (their messages must
// meet), so eligibility and cost may look only at what is the same on every
// rank: the team, the operation, the arguments the standard makes
// significant everywhere (allgather(v)'s receive layout, a reduction's count
// and type), never at this rank's own blocks.  The one exception is the
// inline path, which every rank takes or not by its own blocks: its lanes
// are a round's lanes, so the exchange's consumer reads them on a rank that
// did not take it (exchange_inline.h), and the other way round.  Forcing
// another algorithm closes the inline path on every rank.  The
// inline path is the exception that proves the rule: it is eligible only
// when every block fits its lane, and then always the cheapest, so the
// blocking entry point tests that first, inline (coll/dispatch.h), and
// everything else goes through dispatch().
#pragma once

#include <cstdint>

#include "coll/coll.h"

namespace shmcoll::coll {

enum Mode : uint8_t { kBlocking = 1, kNonblocking = 2 };

// One collective call, prepared by the front end (arguments checked, blocks
// described) and handed to the algorithm the dispatcher picks.
struct Operation {
  Op op = Op::kAlltoall;
  Mode mode = kBlocking;
  Place at;
  // data-moving collectives
  const ExchangeArgs* args = nullptr;
  Flags flags;
  // reductions
  const Reduction* red = nullptr;
  int root = 0;                      // reduce: the root (on an intercommunicator kInterRoot/kInterNone/remote rank)
  const uint64_t* counts = nullptr;  // reduce_scatter(_block): elements per rank
  bool exclusive = false;            // exscan
  // nonblocking: the started schedule
  p2p::Request* request = nullptr;
  // The caller tried the inline path already (coll/dispatch.h): it declined.
  bool inlineTried = false;

  Team& team() const { return *at.team; }
  // Bytes this rank receives in all (an exchange: its receive blocks; a
  // reduction: its input, counted once per other rank) -- what the cost
  // estimates go by.  Computed on first use.
  uint64_t bytes() const {
    if (bytes_ == UINT64_MAX) [[unlikely]]
      bytes_ = red ? red->count * red->type->size * (at.team->size() > 1 ? at.team->size() - 1 : 1) : countBytes();
    return bytes_;
  }

 private:
  uint64_t countBytes() const;
  mutable uint64_t bytes_ = UINT64_MAX;
};

constexpr uint32_t opBit(Op op) { return 1u << static_cast<int>(op); }
constexpr uint32_t kNeighborOps = opBit(Op::kNeighborAlltoall) | opBit(Op::kNeighborAlltoallv) |
                                  opBit(Op::kNeighborAlltoallw) | opBit(Op::kNeighborAllgather) |
                                  opBit(Op::kNeighborAllgatherv);

struct Algorithm {
  const char* name = nullptr;
  const char* summary = nullptr;  // one line: the mechanism
  uint32_t ops = 0;               // opBit() of each operation it runs
  uint8_t modes = 0;              // kBlocking | kNonblocking
  bool inter = false;             // runs on intercommunicators (and only there)
  // Whether it can run `o` (nullptr: always).  May look at anything in `o`.
  bool (*eligible)(const Operation&) = nullptr;
  // Its estimated cost (nullptr: 1).  Looks at the team, the operation and
  // o.bytes() only, so that a choice can be kept for calls of the same size.
  double (*cost)(const Operation&) = nullptr;
  int (*run)(Operation&) = nullptr;  // 0 or an error class; nonblocking: sets o.request

  // An algorithm's file declares it in one expression:
  //   Algorithm("name", "summary", opBit(...) | ..., kBlocking, run).when(eligible).costing(cost)
  constexpr Algorithm(const char* n, const char* s, uint32_t o, uint8_t m, int (*r)(Operation&))
      : name(n), summary(s), ops(o), modes(m), run(r) {}
  constexpr Algorithm onIntercommunicators() const {
    Algorithm a = *this;
    a.inter = true;
    return a;
  }
  constexpr Algorithm when(bool (*e)(const Operation&)) const {
    Algorithm a = *this;
    a.eligible = e;
    return a;
  }
  constexpr Algorithm costing(double (*c)(const Operation&)) const {
    Algorithm a = *this;
    a.cost = c;
    return a;
  }
};

// Runs `o` with the algorithm chosen for it: the one dispatch point.  The
// choices a team already made are taken inline (the one candidate that takes
// every call; the last choice for calls of the same size where only sizes
// matter); the rest is choose().
int choose(Operation& o, TeamCache::Candidates& c);
TeamCache::Candidates& candidates(Team& team, Op op, Mode mode, bool inter);
inline int dispatch(Operation& o) {
  const bool inter = o.at.inter();
  Team& team = inter ? *o.at.peers : *o.at.team;
  TeamCache& cache = team.cache();
  const int i = TeamCache::which(o.op, o.mode == kNonblocking, inter);
  if (const Algorithm* a = cache.direct[i]) [[likely]]
    return a->run(o);
  TeamCache::Candidates& c = cache.candidates[i];
  if (c.last && o.bytes() == c.lastBytes) return c.last->run(o);
  return choose(o, c.filled ? c : candidates(team, o.op, o.mode, inter));
}

// The registered algorithms (registry.cc lists them), for tests and docs.
const Algorithm* const* algorithms(int* count);
const Algorithm* algorithmByName(const char* name);

// The pull policy for blocking rounds (SHMCOLL_PULL): auto (the default:
// pull large contiguous blocks, stream the rest), off (every byte through
// the segment), always (pull every contiguous block however small, nothing
// inline; where process_vm_readv is refused, as auto).
enum class PullPolicy : uint8_t { kAuto, kOff, kAlways };
PullPolicy pullPolicy();

// The default of SHMCOLL_INLINE_MAX up to 2 ranks a core (beyond: the lane's room).
constexpr uint64_t kInlineUncrowded = uint64_t{4} << 10;
// ... and where SHMCOLL_INLINE_MAX is not set, the bound for a block that
// would otherwise go through the slots (neither in the segment or the shared
// heap nor at least SHMCOLL_CMA_MIN long): below it, the lane's one copy in
// and one out beat the slots' (registry.cc, fillThresholds).
constexpr uint64_t kInlineStreamed = uint64_t{12} << 10;

// The default of SHMCOLL_REDUCE_SMALL for MPI_Reduce and MPI_Allreduce (the
// others: the setting's).
constexpr uint64_t kReduceRootSmall = uint64_t{1} << 20;
constexpr uint64_t kAllreduceSmall = uint64_t{256} << 10;
// ... and with more ranks than cores in the job, the bytes of one input.
constexpr uint64_t kReduceRootCrowded = uint64_t{256} << 10;

// The thresholds of `op` on `team` (coll/team.h), looked up on first use.
void fillThresholds(Team& team, Op op);
inline const Thresholds& thresholds(Team& team, Op op) {
  const Thresholds& t = team.cache().thresholds[static_cast<int>(op)];
  if (!t.filled) [[unlikely]]
    fillThresholds(team, op);
  return t;
}
// The round parameters an exchange of `op` on `team` uses (SHMCOLL_PULL and
// the thresholds).
inline const transport::RoundParams& roundParams(Team& team, Op op) { return thresholds(team, op).round; }

// One round of a data-moving step inside another algorithm (a reduction's
// phases, numa_allgather's levels): the inline path when every block fits,
// else the exchange's round, with the thresholds of a.op.
int innerExchange(Team& team, const ExchangeArgs& a);

// Reports the inline path under SHMCOLL_VERBOSE (exchange_inline.h).
void noteInline(Op op, uint32_t n);
// Fills the inline gate of `op` on `team` (coll/team.h).
void fillInlineGate(Team& team, Op op);

}  // namespace shmcoll::coll
