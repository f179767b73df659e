// Algorithm selection.
//
// Each operation has a list of algorithms, tried in order; an algorithm that
// cannot take the arguments declines and the next one runs.  A user forces
// one with SHMCOLL_ALGORITHM_<OP>=<name> (e.g. SHMCOLL_ALGORITHM_ALLTOALL=segment)
// or SHMCOLL_ALGORITHM=<name> for every operation; an unknown name is reported
// once and ignored.  SHMCOLL_VERBOSE=1 prints, on each rank's first use of an
// (operation, algorithm) pair, which algorithm ran; SHMCOLL_VERBOSE=2 prints
// every call.
//
// Before these, an operation in which every pair exchanges takes the inline
// path (exchange_inline.h) on a rank whose every block fits its lane; the
// list below runs otherwise.  SHMCOLL_VERBOSE reports it as "inline".
//
// Algorithms (all in exchange_streamed.cc, with different parameters):
//   hybrid       blocks that fit a lane travel inline (up to SHMCOLL_INLINE_MAX
//                bytes); larger blocks that are contiguous in the sender and at
//                least SHMCOLL_CMA_MIN bytes (default 16 KiB) are pulled by the
//                receiver with process_vm_readv (one copy), and so is a
//                sender's only block longer than a slot from
//                SHMCOLL_CMA_SOLO_MIN (by default the same); the rest streams
//                through the mailbox slots.  The thresholds come from the
//                decision table (common/tuning.h) per operation and team size
//                when the variables are unset.
//   segment      inline and stream only: every byte through the shared segment
//                (two copies); works wherever shared memory works.
//   single_copy  process_vm_readv for every contiguous block however small
//                (nothing inline); declines when the kernel forbids
//                cross-process reads.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "coll/coll.h"
#include "coll/exchange_inline.h"
#include "coll/streamed.h"
#include "common/settings.h"
#include "common/status.h"
#include "common/tuning.h"

namespace shmcoll::coll {

namespace {

struct Algorithm {
  const char* name;
  const char* description;
  bool (*accepts)(const Team&, const ExchangeArgs&);
  int (*run)(Team&, const ExchangeArgs&);
};

// The thresholds of one operation on teams of one size: SHMCOLL_CMA_MIN and
// SHMCOLL_INLINE_MAX, else the decision table (common/tuning.h), else 16 KiB
// and the lane's capacity.  Looked up again only when the team size changes.
struct Thresholds {
  uint32_t ranks = 0;
  uint64_t cmaMin = 0, cmaSoloMin = 0, cmaSoloMax = 0, inlineMax = 0;
  uint64_t inlineCap[2] = {};  // the inline path's limit (exchange_inline.h): lanes, one shared lane
};

const Thresholds& thresholds(Op op, uint32_t ranks) {
  static Thresholds cache[static_cast<int>(Op::kCount)];
  Thresholds& t = cache[static_cast<int>(op)];
  if (t.ranks != ranks) {
    t.cmaMin = settings::tuned(settings::Id::kCmaMin, opName(op), ranks);
    t.cmaSoloMin = settings::tuned(settings::Id::kCmaSoloMin, opName(op), ranks, t.cmaMin);
    t.cmaSoloMax = settings::tuned(settings::Id::kCmaSoloMax, opName(op), ranks);
    t.inlineMax = settings::tuned(settings::Id::kInlineMax, opName(op), ranks);
    const segment::View& seg = engine().seg;
    t.inlineCap[0] = std::min<uint64_t>(t.inlineMax, segment::laneInlineCapacity(seg.laneBytes(ranks)));
    t.inlineCap[1] = std::min<uint64_t>(t.inlineMax, segment::laneInlineCapacity(seg.laneAreaBytes()));
    t.ranks = ranks;
  }
  return t;
}

const Algorithm kAlgorithms[] = {
    {"hybrid", "mailbox stream, single-copy pulls for large contiguous blocks",
     [](const Team&, const ExchangeArgs&) { return true; },
     [](Team& t, const ExchangeArgs& a) {
       const Thresholds& th = thresholds(a.op, t.size());
       return streamedExchange(t, a, {true, th.cmaMin, th.inlineMax, th.cmaSoloMin, th.cmaSoloMax});
     }},
    {"segment", "mailbox stream only: two copies through shared memory",
     [](const Team&, const ExchangeArgs&) { return true; },
     [](Team& t, const ExchangeArgs& a) {
       return streamedExchange(t, a, {false, 0, thresholds(a.op, t.size()).inlineMax});
     }},
    {"single_copy", "process_vm_readv for every contiguous block",
     [](const Team&, const ExchangeArgs&) { return engine().cma; },
     [](Team& t, const ExchangeArgs& a) { return streamedExchange(t, a, {true, 1, 0}); }},
};
constexpr int kNumAlgorithms = sizeof kAlgorithms / sizeof kAlgorithms[0];

const char* const kOpNames[] = {"alltoall", "alltoallv",      "alltoallw",      "allgather",
                                "allgatherv", "bcast",         "gather",         "gatherv",
                                "scatter",  "scatterv",        "reduce",         "allreduce",
                                "reduce_scatter", "reduce_scatter_block", "scan", "exscan"};
static_assert(sizeof kOpNames / sizeof kOpNames[0] == static_cast<size_t>(Op::kCount));

// Forced algorithm per operation: -1 none.
struct Choice {
  int forced[static_cast<int>(Op::kCount)];
  int verbose;
  Choice() {
    verbose = static_cast<int>(settings::integer(settings::Id::kVerbose));
    if (verbose && engine().rank == 0) {
      if (tuning::tablePath().empty())
        fprintf(stderr, "shmcoll: no decision table; built-in thresholds\n");
      else
        fprintf(stderr, "shmcoll: decision table %s (%zu rules)\n", tuning::tablePath().c_str(),
                tuning::table().size());
    }
    std::string all = settings::str(settings::Id::kAlgorithm);
    for (int op = 0; op < static_cast<int>(Op::kCount); ++op) {
      std::string var = settings::name(settings::Id::kAlgorithmOp, kOpNames[op]);
      std::string want = settings::str(settings::Id::kAlgorithmOp, kOpNames[op]);
      if (want.empty()) want = all;
      forced[op] = -1;
      if (want.empty()) continue;
      for (int i = 0; i < kNumAlgorithms; ++i)
        if (want == kAlgorithms[i].name) forced[op] = i;
      if (forced[op] < 0 && engine().rank == 0)
        fprintf(stderr, "shmcoll: %s=%s names no algorithm (hybrid, segment, single_copy); ignored\n",
                var.c_str(), want.c_str());
    }
  }
};

const Choice& choice() {
  static const Choice c;
  return c;
}

}  // namespace

const char* opName(Op op) { return kOpNames[static_cast<int>(op)]; }

InlineGate gInlineGate[static_cast<int>(Op::kCount)];

// The inline path runs under every algorithm but single_copy, which sends
// nothing inline.
void inlineGateFill(Op op, uint32_t n) {
  constexpr int kSingleCopy = 2;  // kAlgorithms index
  const Choice& ch = choice();
  const Thresholds& t = thresholds(op, n);
  InlineGate& g = gInlineGate[static_cast<int>(op)];
  const bool off = ch.forced[static_cast<int>(op)] == kSingleCopy;
  g.cap[0] = off ? 0 : t.inlineCap[0];
  g.cap[1] = off ? 0 : t.inlineCap[1];
  g.verbose = ch.verbose != 0;
  g.ranks = n;
}

void noteInline(Op op, uint32_t n) {
  const Choice& ch = choice();
  static bool seen[static_cast<int>(Op::kCount)] = {};
  const int i = static_cast<int>(op);
  if (ch.verbose >= 2 || !seen[i])
    fprintf(stderr, "shmcoll: rank %u: %s on %u ranks: algorithm inline (every block in its lane)\n",
            engine().rank, kOpNames[i], n);
  seen[i] = true;
}

int exchange(Team& team, const ExchangeArgs& args) {
  bool taken = false;
  int rc = inlineExchange(team, args, &taken);
  if (taken) return rc;
  return exchangeGeneral(team, args);
}

int exchangeGeneral(Team& team, const ExchangeArgs& args) {
  const Choice& ch = choice();
  const int op = static_cast<int>(args.op);
  int pick = ch.forced[op];
  if (pick >= 0 && !kAlgorithms[pick].accepts(team, args)) {
    static bool warned[static_cast<int>(Op::kCount)] = {};
    if (!warned[op] && engine().rank == 0)
      fprintf(stderr, "shmcoll: algorithm %s cannot run %s here; using the default\n", kAlgorithms[pick].name,
              kOpNames[op]);
    warned[op] = true;
    pick = -1;
  }
  if (pick < 0) {
    for (int i = 0; i < kNumAlgorithms; ++i)
      if (kAlgorithms[i].accepts(team, args)) {
        pick = i;
        break;
      }
  }
  if (ch.verbose) {
    static bool seen[static_cast<int>(Op::kCount)][kNumAlgorithms] = {};
    if (ch.verbose >= 2 || !seen[op][pick])
      fprintf(stderr, "shmcoll: rank %u: %s on %u ranks: algorithm %s (%s)\n", engine().rank, kOpNames[op],
              team.size(), kAlgorithms[pick].name, kAlgorithms[pick].description);
    seen[op][pick] = true;
  }
  return kAlgorithms[pick].run(team, args);
}

namespace {
class RawAllgather final : public ExchangeArgs {
 public:
  RawAllgather(const void* mine, uint64_t bytes, void* out, const dt::Type* byte)
      : mine_(static_cast<const char*>(mine)), bytes_(bytes), out_(static_cast<char*>(out)), byte_(byte) {
    op = Op::kAllgather;
    broadcast = true;
  }
  Block send(uint32_t) const override { return {mine_, bytes_, byte_}; }
  Block recv(uint32_t p) const override { return {out_ + p * bytes_, bytes_, byte_}; }

 private:
  const char* mine_;
  uint64_t bytes_;
  char* out_;
  const dt::Type* byte_;
};
}  // namespace

int allgatherBytes(Team& team, const void* mine, uint64_t bytes, void* out) {
  RawAllgather a(mine, bytes, out, dt::fromHandle(MPI_BYTE));
  return streamedExchange(team, a, {false, 0, thresholds(Op::kAllgather, team.size()).inlineMax});
}

}  // namespace shmcoll::coll
