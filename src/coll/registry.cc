// The algorithm table and the dispatcher (registry.h says how one is chosen).
#include "coll/registry.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#include "coll/cost.h"
#include "common/settings.h"
#include "common/status.h"
#include "common/tuning.h"
#include "transport/pull.h"
#include "transport/world.h"
#include "wait/wait.h"

namespace shmcoll::coll {

// Each algorithm's file defines its entry.
extern const Algorithm kInlineAlgorithm;              // exchange_inline.cc
extern const Algorithm kExchangeAlgorithm;            // exchange.cc
extern const Algorithm kNumaAllgatherAlgorithm;       // allgather_numa.cc
extern const Algorithm kDisseminationAlgorithm;       // barrier_dissemination.cc
extern const Algorithm kFlatBarrierAlgorithm;         // barrier_dissemination.cc
extern const Algorithm kReleasedBarrierAlgorithm;     // barrier_dissemination.cc
extern const Algorithm kLedBarrierAlgorithm;          // barrier_dissemination.cc
extern const Algorithm kReduceDirectAlgorithm;        // reduce_direct.cc
extern const Algorithm kReduceSlicedAlgorithm;        // reduce_sliced.cc
extern const Algorithm kSchedExchangeAlgorithm;       // sched_exchange.cc
extern const Algorithm kSchedBarrierAlgorithm;        // sched_barrier.cc
extern const Algorithm kSchedReduceAlgorithm;         // sched_reduce.cc
extern const Algorithm kSchedReduceScatterAlgorithm;  // sched_reduce_scatter.cc
extern const Algorithm kSchedScanAlgorithm;           // sched_scan.cc
extern const Algorithm kInterExchangeAlgorithm;       // inter_exchange.cc
extern const Algorithm kInterBarrierAlgorithm;        // inter_exchange.cc
extern const Algorithm kInterReduceAlgorithm;         // inter_reduce.cc
extern const Algorithm kInterAllreduceAlgorithm;      // inter_reduce.cc
extern const Algorithm kInterReduceScatterAlgorithm;  // inter_reduce.cc
extern const Algorithm kBruckAlgorithm;               // bruck.cc

namespace {

const Algorithm* const kAlgorithms[] = {
    &kInlineAlgorithm,       &kExchangeAlgorithm,           &kNumaAllgatherAlgorithm,   &kDisseminationAlgorithm,
    &kReduceDirectAlgorithm, &kReduceSlicedAlgorithm,       &kSchedExchangeAlgorithm,   &kSchedBarrierAlgorithm,
    &kSchedReduceAlgorithm,  &kSchedReduceScatterAlgorithm, &kSchedScanAlgorithm,       &kInterExchangeAlgorithm,
    &kInterBarrierAlgorithm, &kInterReduceAlgorithm,        &kInterAllreduceAlgorithm,  &kInterReduceScatterAlgorithm,
    &kBruckAlgorithm,        &kFlatBarrierAlgorithm,        &kReleasedBarrierAlgorithm, &kLedBarrierAlgorithm,
};
constexpr int kNumAlgorithms = sizeof kAlgorithms / sizeof kAlgorithms[0];

// clang-format off
const char* const kOpNames[kOpCount] = {
    "alltoall", "alltoallv", "alltoallw", "allgather", "allgatherv", "bcast", "gather",
    "gatherv", "scatter", "scatterv", "reduce", "allreduce", "reduce_scatter", "reduce_scatter_block",
    "scan", "exscan", "barrier", "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw",
    "neighbor_allgather", "neighbor_allgatherv"};
// clang-format on

// The algorithms that run `op`, for messages.
std::string namesFor(Op op) {
  std::string s;
  for (const Algorithm* a : kAlgorithms)
    if (a->ops & opBit(op)) s += (s.empty() ? "" : ", ") + std::string(a->name);
  return s;
}

// What the environment says about the choice, read once per process.
struct Choice {
  const Algorithm* forced[kOpCount] = {};
  int verbose = 0;
  PullPolicy pull = PullPolicy::kAuto;
  Choice() {
    const bool talk = transport::world().rank == 0;
    verbose = static_cast<int>(settings::integer(settings::Id::kVerbose));
    if (verbose && talk) {
      if (tuning::tablePath().empty())
        fprintf(stderr, "shmcoll: no decision table; built-in thresholds\n");
      else
        fprintf(stderr, "shmcoll: decision table %s (%zu rules)\n", tuning::tablePath().c_str(),
                tuning::table().size());
      if (transport::pulls().cmaSlow)
        fprintf(stderr,
                "shmcoll: process_vm_readv is slow here (SHMCOLL_CMA_SLOW_FACTOR): blocks outside the shared "
                "segment and heaps are streamed unless SHMCOLL_CMA_MIN or a decision table says otherwise\n");
    }
    pull = static_cast<PullPolicy>(settings::choice(settings::Id::kPull));
    const std::string all = settings::str(settings::Id::kAlgorithm);
    for (int op = 0; op < kOpCount; ++op) {
      const std::string var = settings::name(settings::Id::kAlgorithmOp, kOpNames[op]);
      std::string want = settings::str(settings::Id::kAlgorithmOp, kOpNames[op]);
      if (want.empty()) want = all;
      if (want.empty()) continue;
      const Algorithm* a = algorithmByName(want.c_str());
      if (a && (a->ops & opBit(static_cast<Op>(op)))) {
        forced[op] = a;
      } else if (talk && (!a || var != "SHMCOLL_ALGORITHM_" || !all.empty())) {
        // (SHMCOLL_ALGORITHM applies to every operation: an algorithm of
        // some of them is no mistake for the others)
        if (!a)
          fprintf(stderr, "shmcoll: %s=%s names no algorithm (%s); ignored\n", var.c_str(), want.c_str(),
                  namesFor(static_cast<Op>(op)).c_str());
        else if (want != all)
          fprintf(stderr, "shmcoll: %s=%s: that algorithm does not run %s; ignored\n", var.c_str(), want.c_str(),
                  kOpNames[op]);
      }
    }
  }
};

const Choice& choice() {
  static const Choice c;
  return c;
}

// Which algorithms may run `op` in `mode` on this kind of communicator, the
// forced one first.
}  // namespace

TeamCache::Candidates& candidates(Team& team, Op op, Mode mode, bool inter) {
  // (an intercommunicator's team of both groups also runs plain schedules
  // over all its members: MPI_Comm_free's barrier, gatherAll)
  TeamCache& cache = team.cache();
  const int i = TeamCache::which(op, mode == kNonblocking, inter);
  TeamCache::Candidates& c = cache.candidates[i];
  if (c.filled) return c;
  c = {};
  const Algorithm* forced = choice().forced[static_cast<int>(op)];
  auto fits = [&](const Algorithm* a) { return (a->ops & opBit(op)) && (a->modes & mode) && a->inter == inter; };
  if (forced && fits(forced)) {
    c.list[c.count++] = forced;
    c.forced = true;
  }
  for (const Algorithm* a : kAlgorithms) {
    if (a == forced || !fits(a)) continue;
    if (c.count == std::size(c.list)) [[unlikely]] {  // a registry bug, seen by any test of the operation
      fprintf(stderr, "shmcoll: more than %zu algorithms run %s; coll/team.h must make room\n", std::size(c.list),
              kOpNames[static_cast<int>(op)]);
      abort();
    }
    c.list[c.count++] = a;
  }
  c.verbose = choice().verbose != 0;
  // (an intercommunicator's costs are not weighed: one algorithm per operation)
  c.byBytes = c.count > 1 && !inter;
  for (uint8_t k = 0; k < c.count; ++k) c.byBytes &= c.list[k]->eligible == nullptr;
  const bool direct = c.count > 0 && !c.list[0]->eligible && (c.count == 1 || c.forced);
  cache.direct[i] = direct && !c.verbose ? c.list[0] : nullptr;
  c.filled = true;
  return c;
}

namespace {

std::atomic<uint64_t> gSeen[kOpCount];  // bit i: algorithm i reported for the operation

void report(const Operation& o, const Algorithm* a) {
  const int v = choice().verbose;
  if (!v) return;
  int i = 0;
  while (i < kNumAlgorithms && kAlgorithms[i] != a) ++i;
  const uint64_t bit = uint64_t{1} << i;
  if (v < 2 && (gSeen[static_cast<int>(o.op)].fetch_or(bit, std::memory_order_relaxed) & bit)) return;
  fprintf(stderr, "shmcoll: rank %u: %s%s on %u ranks: algorithm %s (%s)\n", transport::world().rank,
          o.mode == kNonblocking ? "nonblocking " : "", kOpNames[static_cast<int>(o.op)], o.team().size(), a->name,
          a->summary);
}

}  // namespace

const char* opName(Op op) { return kOpNames[static_cast<int>(op)]; }

bool opByName(const char* name, Op* out) {
  for (int i = 0; i < kOpCount; ++i)
    if (!strcmp(name, kOpNames[i])) {
      *out = static_cast<Op>(i);
      return true;
    }
  return false;
}

const Algorithm* const* algorithms(int* count) {
  *count = kNumAlgorithms;
  return kAlgorithms;
}

const Algorithm* algorithmByName(const char* name) {
  for (const Algorithm* a : kAlgorithms)
    if (!strcmp(a->name, name)) return a;
  return nullptr;
}

PullPolicy pullPolicy() { return choice().pull; }

uint64_t Operation::countBytes() const {
  uint64_t b = 0;
  if (args) {
    const uint32_t n = at.inter() ? at.groups.remoteSize : team().size();
    for (uint32_t p = 0; p < n; ++p)
      if (args->allPairs || args->receives(p)) b += args->recv(p).bytes();
  } else if (red) {
    const uint32_t n = team().size();
    b = red->count * red->type->size * (n > 1 ? n - 1 : 1);
  }
  return b;
}

// The algorithm for `o` among `c`: the forced one when it is eligible, else
// the cheapest eligible one (the first of equals).
int choose(Operation& o, TeamCache::Candidates& c) {
  const Algorithm* best = nullptr;
  double bestCost = 0;
  for (uint8_t i = 0; i < c.count; ++i) {
    const Algorithm* a = c.list[i];
    if (a == &kInlineAlgorithm && o.inlineTried) continue;
    if (a->eligible && !a->eligible(o)) {
      if (i == 0 && c.forced) [[unlikely]] {
        static std::atomic<uint32_t> warned{0};
        const uint32_t bit = 1u << static_cast<int>(o.op);
        if (!(warned.fetch_or(bit, std::memory_order_relaxed) & bit) && transport::world().rank == 0)
          fprintf(stderr, "shmcoll: algorithm %s cannot run this %s; choosing another\n", a->name,
                  kOpNames[static_cast<int>(o.op)]);
      }
      continue;
    }
    if (i == 0 && c.forced) {
      best = a;
      break;
    }
    const double cost = a->cost ? a->cost(o) : 1.0;
    if (!best || cost < bestCost) {
      best = a;
      bestCost = cost;
    }
  }
  if (!best)
    return fail(err::kIntern, "no algorithm can run this %s (%s, %s)", kOpNames[static_cast<int>(o.op)],
                o.mode == kNonblocking ? "nonblocking" : "blocking",
                o.at.inter() ? "intercommunicator" : "intracommunicator");
  if (c.byBytes && !c.verbose) {
    c.last = best;
    c.lastBytes = o.bytes();
  }
  if (c.verbose) [[unlikely]]
    report(o, best);
  return best->run(o);
}

void fillThresholds(Team& team, Op op) {
  Thresholds& t = team.cache().thresholds[static_cast<int>(op)];
  const char* name = opName(op);
  const uint32_t ranks = team.size();
  t.cmaMin = settings::tuned(settings::Id::kCmaMin, name, ranks,
                             transport::pulls().cmaSlow ? UINT64_MAX : settings::spec(settings::Id::kCmaMin).dflt);
  t.cmaSoloMin = settings::tuned(settings::Id::kCmaSoloMin, name, ranks, t.cmaMin);
  t.cmaSoloMax = settings::tuned(settings::Id::kCmaSoloMax, name, ranks);
  // Blocks past 4 KiB go inline only with more than 2 ranks a core, where a
  // sender that returns at once (its lane written) lets the others run.  With
  // fewer, the single copy of a pull, or the slots' pipelined stream, beat a
  // lane that the reader copies only once it is whole: at 2 ranks on 2 cores
  // 16-32 KiB blocks took 2-4 times as long inline, and swung 3-4x between
  // runs where the others did not (docs/PERFORMANCE.md, 2026-11-29, evening).
  const wait::Crowd& crowd = wait::gCrowd;
  const bool packed = crowd.sleepers && crowd.ranks > 2 * uint64_t{crowd.cores};
  // A block that is not pulled goes through the slots instead: the sender
  // copies it into a slot and the reader out of it once the whole chunk is
  // there, with a round trip of acknowledgements, and the sender is at most
  // one call ahead.  Below kInlineStreamed (and below the pull's cmaMin) the
  // lane was faster for such blocks: private buffers of 6-12 KiB at 2 ranks
  // on 2 cores (Intel Xeon VM), lane / slots, us: allgather 8 KiB 2.51 /
  // 3.99, alltoall 2.49 / 3.48, scatter 1.39 / 1.81, gather 1.28 / 1.52; at
  // 16 KiB, pulled with process_vm_readv, the pull was faster
  // (docs/PERFORMANCE.md, 2026-12-01, Intel).  A block that is pulled keeps
  // the 4 KiB bound.  Set SHMCOLL_INLINE_MAX (or a decision table's
  // inline_max) and it bounds every block.
  constexpr uint64_t kUnset = UINT64_MAX - 1;
  const uint64_t setMax = settings::tuned(settings::Id::kInlineMax, name, ranks, kUnset);
  t.inlineMax = setMax != kUnset ? setMax : packed ? UINT64_MAX : kInlineUncrowded;
  t.inlineStreamed =
      setMax != kUnset ? t.inlineMax
                       : std::max(t.inlineMax, std::min(kInlineStreamed, t.cmaMin > 0 ? t.cmaMin - 1 : 0));
  // MPI_Reduce's one exchange sends every input to the root alone, which
  // folds them, its own input and the last rank's in place (reduce_direct.cc);
  // the two-round way saves the root the fold of all but one slice at the
  // cost of a second round, which at N = 2 on 2 cores did not pay up to
  // 1 MiB (docs/PERFORMANCE.md, 2026-11-30, midday).  With more ranks than
  // cores the slices' folds share the cores anyway, and each round costs
  // every rank a turn on them: there the one exchange pays while each input
  // is at most kReduceRootCrowded (3 and 4 ranks on 2 cores, inputs of
  // 64-256 KiB: half the time of the two rounds), or while the uncrowded bound
  // holds, where that is more (up to 5 ranks).  MPI_Allreduce's one
  // exchange makes every rank fold every input: it paid while the input
  // times the other ranks was at most kAllreduceSmall at 2, 3, 4 and 8 ranks
  // on 2 cores (the same section).
  const bool crowded = wait::gCrowd.sleepers && ranks > 1;
  uint64_t small = settings::spec(settings::Id::kReduceSmall).dflt;
  if (op == Op::kReduce)
    small = crowded ? std::max(kReduceRootCrowded * (ranks - 1), kReduceRootSmall) : kReduceRootSmall;
  else if (op == Op::kAllreduce)
    small = kAllreduceSmall;
  t.reduceSmall = settings::tuned(settings::Id::kReduceSmall, name, ranks, small);
  switch (pullPolicy()) {
    case PullPolicy::kOff:
      t.round = {false, 0, t.inlineMax};
      break;
    case PullPolicy::kAlways:
      if (transport::pulls().cma) {
        t.round = {true, 1, 0};
        break;
      }
      [[fallthrough]];
    case PullPolicy::kAuto:
      t.round = {true, t.cmaMin, t.inlineMax, t.cmaSoloMin, t.cmaSoloMax};
      break;
  }
  t.filled = true;
}

// The inline path runs unless another algorithm is forced for the operation
// (a data-moving one: a reduction's forced algorithm still runs its rounds
// inline when they fit), or every contiguous block is to be pulled
// (SHMCOLL_PULL=always).
void fillInlineGate(Team& team, Op op) {
  const Choice& ch = choice();
  const Thresholds& t = thresholds(team, op);
  const segment::View& seg = transport::world().seg;
  InlineGate& g = team.gate(op);
  const Algorithm* forced = ch.forced[static_cast<int>(op)];
  const bool off = (forced && forced != &kInlineAlgorithm && (kInlineAlgorithm.ops & opBit(op))) ||
                   (ch.pull == PullPolicy::kAlways && transport::pulls().cma);
  // (On a large team the small blocks of alltoall and allgather go to bruck,
  // which the registry weighs against the exchange: coll/bruck.cc.)
  const bool toBruck = (op == Op::kAlltoall || op == Op::kAllgather) && cost::fewRoundsBeatPeers(team.size());
  g.open = !off && !toBruck;
  g.laneBytes = seg.laneBytes(team.size());
  g.cap[0] = !g.open ? 0 : std::min<uint64_t>(t.inlineMax, segment::laneInlineCapacity(g.laneBytes));
  g.cap[1] = !g.open ? 0 : std::min<uint64_t>(t.inlineMax, segment::laneInlineCapacity(seg.laneAreaBytes()));
  g.capStreamed[0] = !g.open ? 0 : std::min<uint64_t>(t.inlineStreamed, segment::laneInlineCapacity(g.laneBytes));
  g.capStreamed[1] =
      !g.open ? 0 : std::min<uint64_t>(t.inlineStreamed, segment::laneInlineCapacity(seg.laneAreaBytes()));
  g.cmaMin = t.cmaMin;
  g.pulls = ch.pull != PullPolicy::kOff;
  const bool rooted = op == Op::kBcast || op == Op::kGather || op == Op::kGatherv || op == Op::kReduce ||
                      op == Op::kScatter || op == Op::kScatterv;
  // The ring's lanes hold 4 KiB blocks: a sender that runs ahead lets its
  // readers take many calls in one time slice where ranks outnumber cores (3
  // and 4 ranks on 2 cores, bcast, gather and reduce of 1-4 KiB: 2-8 times
  // faster than through the two areas), and with a core each it keeps the
  // sender from waiting for its reader's acknowledgement every other call
  // (2 ranks on 2 cores of an Intel Xeon, back to back, 2-4 KiB: bcast,
  // gather, scatter and reduce twice as fast).  (An AMD VM had once given
  // the opposite with a core each, bcast 1 KiB 0.45 -> 0.65 us, and the ring
  // then took 1 KiB there: docs/PERFORMANCE.md.)
  g.ahead = g.open && rooted && settings::flag(settings::Id::kRunAhead)
                ? std::min<uint64_t>(g.cap[1], segment::laneInlineCapacity(segment::kAheadLaneBytes))
                : 0;
  // Larger blocks that still go inline (not pulled: InlineGate::capStreamed)
  // take a wide slot and a ring lane that names it, so a sender of 4-12 KiB
  // runs ahead as well (2 ranks on 2 cores of an Intel Xeon, back to back,
  // 8 KiB blocks in private memory: bcast 1.62 -> 0.87 us, gather 2.25 ->
  // 0.85, reduce 1.47 -> 0.87; 3 ranks, bcast 3.76 -> 1.33: docs/PERFORMANCE.md).
  g.aheadWide = g.ahead ? std::min<uint64_t>(g.capStreamed[1], segment::laneInlineCapacity(segment::kWideBytes)) : 0;
  g.verbose = ch.verbose != 0;
  g.filled = true;
}

void noteInline(Op op, uint32_t n) {
  const int i = 0;  // kInlineAlgorithm's index
  const uint64_t bit = uint64_t{1} << i;
  if (choice().verbose < 2 && (gSeen[static_cast<int>(op)].fetch_or(bit, std::memory_order_relaxed) & bit)) return;
  fprintf(stderr, "shmcoll: rank %u: %s on %u ranks: algorithm inline (%s)\n", transport::world().rank,
          kOpNames[static_cast<int>(op)], n, kInlineAlgorithm.summary);
}

}  // namespace shmcoll::coll
