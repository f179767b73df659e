// Algorithms: dissemination, flat, released and led -- the blocking barrier on
// barrier lines.
//
// dissemination.  In round k (k = 0 .. ceil(log2 n) - 1) rank i announces
// round k on its own barrier line and waits until rank (i - 2^k) mod n has
// announced round k.  After the last round every rank has, transitively,
// heard from every other.  Cost: ceil(log2 n) rounds of one cache-line
// transfer each, one wake-up check per round.
//
// flat.  Every rank announces the barrier on its own line, then reads every
// other member's line until all have announced it: one round.  A rank reads
// n - 1 lines (so it is kept to small teams), and the rank that sees every
// line announced wakes every sleeper: of any ranks that arrive together, the
// one whose fence (after its own store) comes last sees all the others, so
// some rank always does.  With more ranks than cores a round costs what it
// takes for the ranks it waits for to be scheduled, so one round instead of
// ceil(log2 n) is what counts: on 2 cores, 8 ranks took 71-80 us per
// dissemination barrier and 35-40 us flat, 16 ranks 178-195 and 77-92, 128
// ranks 5.1 and 1.5 ms (docs/PERFORMANCE.md).  At 3 and 4 ranks on 2 cores
// flat was no faster, or (3 ranks) the barrier's exit order left the root of
// a rooted collective right after it unscheduled more often (8-byte bcast
// with a barrier before every call 0.8 -> 5.8 us), so it waits for more than
// 2 ranks per core.
//
// released.  Every other rank announces its arrival on its own line and waits
// for the leader's line (team rank 0, or Team::lead when the collective
// before the barrier set one: below); the leader waits until every line has
// announced the barrier, then announces the release on its own line and
// wakes every sleeper.  Two phases, but the leader always leaves first and
// is running as it does.  Why: with a barrier before every call (how the
// common benchmark suites time a collective, and how many programs separate
// phases), the rooted collective after it usually has root 0, and in
// dissemination its root left the barrier after some of its readers in
// about half the calls at 4 ranks on 2 cores, so they waited for it to be
// scheduled again: 8-byte MPI_Bcast 8.8-11.7 us, each rank timed from its
// own barrier exit, against 0.35-0.37 after the released barrier,
// MPI_Scatter 8.3-11.7 against 0.40-0.43, while the calls whose root waits
// for the others (reduce, gather) took 8.9-22.4 and 12.1-16.3, and a
// barrier alone 11.1-12.3 against 12.4-13.0 (docs/PERFORMANCE.md;
// perf/bench/exit_order.c shows the order).  At 3 ranks on 2 cores (one
// rank alone on its core) it was slower for everything but bcast and
// scatter (8-byte reduce, gather, allreduce and alltoall about 11 us
// against 1.1-7.7), so only at exactly 2 ranks per core.
//
// led.  Dissemination, unless the blocking collective just before the
// barrier on this team named a leader (Team::lead, coll.h leadAfter): the
// root of a bcast or scatter(v), or in a team of 2 the rank that is not the
// root of a gather(v) or reduce.  Then it is released through that leader,
// in teams of up to kLedMax.  In a loop of barrier and one rooted call,
// dissemination lets the last rank to arrive out first, and that is the
// rank that finished the previous call last: a bcast's reader, a reduce's
// root.  It then waits in the next call for the rank that left after it,
// two line transfers in all.  At 2 ranks on 2 cores, each call timed from
// the barrier's exit (perf/bench/exit_order.c), the slowest rank took 0.55
// us (bcast), 0.57 (reduce), 0.54 (gather) with dissemination and 0.26,
// 0.31, 0.28 led (docs/PERFORMANCE.md).  A barrier that follows a barrier
// or any other collective is plain dissemination, so a loop of barriers
// keeps its one line transfer per call.
//
// last out.  After a gather(v) or reduce on a team of 3 to kLedMax, led,
// flat and released all run this instead (Team::kLast in Team::lead): every
// member announces its arrival and, as in flat, waits until it sees every
// other member's; the others then announce that they leave and go, and the
// root waits for all of them before it leaves.  With a barrier before every
// call, the root of the gather or reduce after it then finds most inputs
// already in its lanes, where it used to leave first (dissemination lets the
// last to arrive out first, and that is the root, which finished the call
// before last) and wait in the call for ranks not yet scheduled: at 3, 4 and
// 8 ranks on 2 cores, an 8-byte MPI_Reduce timed from the barrier's exit took
// 0.57 against 0.86 us, 0.66 against 7.35 and 1.21 against 14.93 (MPI_Gather
// alike), while a loop of barrier and reduce took as long per iteration as
// before: the wait moves from the call into the barrier (docs/PERFORMANCE.md,
// 2026-12-02).
//
// All of them write the monotone value seq * 64 + k + 1 on a line only its
// owner writes, so no line is ever reset and no two ranks write one line;
// the members of a team take the same one in each call (the rule below
// depends on the team's size, the job's ranks per core and Team::lead,
// which every member sets alike, and a forced algorithm is forced on every
// rank), and values of different calls never mix, as every value of a call
// is above every value of the calls before.  Chosen: flat for teams of 3 to
// kFlatMax ranks in a job with more than 2 ranks per core, released for
// those in a job with exactly 2 ranks per core, led otherwise (a team of
// kFlatMax reads 127 other lines, on as many pages, where dissemination
// reads 7); for every blocking MPI_Barrier on an intracommunicator and the
// synchronisation inside MPI_Init, MPI_Finalize and MPI_Comm_free.
#include <atomic>

#include "coll/registry.h"
#include "common/status.h"
#include "transport/lanes.h"
#include "transport/world.h"
#include "wait/wait.h"

namespace shmcoll::coll {

namespace {

constexpr uint32_t kFlatMax = 128;
constexpr uint32_t kLedMax = 8;

// (more than 2 ranks per core: the job's policy, the same on every rank)
bool flatFits(const Team& team) {
  const uint32_t n = team.size();
  const wait::Crowd& c = wait::gCrowd;
  return c.sleepers != nullptr && c.ranks > 2 * c.cores && n > 2 && n <= kFlatMax;
}

// (exactly 2 ranks per core: the job's policy, the same on every rank)
bool releasedFits(const Team& team) {
  const uint32_t n = team.size();
  const wait::Crowd& c = wait::gCrowd;
  return c.sleepers != nullptr && c.ranks == 2 * c.cores && n > 2 && n <= kFlatMax;
}

segment::Line64& lineOf(const transport::World& w, const Team& team, uint32_t r) {
  return w.seg.ctx(team.members[r], team.lines)->barrier;
}

int dissemination(Team& team, uint64_t seq) {
  const transport::World& w = transport::world();
  const uint32_t n = team.size(), me = team.rank;
  segment::Line64& mine = lineOf(w, team, me);
  for (uint32_t k = 0, dist = 1; dist < n; ++k, dist <<= 1) {
    const uint64_t v = seq * 64 + k + 1;
    mine.v.store(v, std::memory_order_release);
    wait::wakePeer(w.seg.ctl(team.members[(me + dist) % n]));
    segment::Line64& theirs = lineOf(w, team, (me + n - dist) % n);
    SHMCOLL_CHECK(wait::waitUntil(w.self(), [&] { return theirs.v.load(std::memory_order_acquire) >= v; }));
  }
  return 0;
}

// Announces `v` on this member's line and waits until every other member's
// line shows v or more.  Of the members that arrive together, the one whose
// fence (after its own store) comes last sees every arrival and wakes the
// sleepers.
// True once every other member's line shows `v` or more; the members below
// *next are known to show it already (the caller keeps it across polls).
bool othersReached(const transport::World& w, const Team& team, uint64_t v, uint32_t* next) {
  for (; *next < team.size(); ++*next)
    if (*next != team.rank && lineOf(w, team, *next).v.load(std::memory_order_acquire) < v) return false;
  return true;
}

int arriveAll(Team& team, uint64_t v) {
  const transport::World& w = transport::world();
  const uint32_t n = team.size(), me = team.rank;
  lineOf(w, team, me).v.store(v, std::memory_order_release);
  // (a real fence even where wakers need none: it orders this store before
  // the reads of the other arrivals, not only before a sleeper's flag)
  std::atomic_thread_fence(std::memory_order_seq_cst);
  uint32_t next = 0;
  auto allArrived = [&] { return othersReached(w, team, v, &next); };
  if (allArrived()) {
    // (the fence above already orders the store before these loads: no wakeAll)
    for (uint32_t r = 0; r < n; ++r)
      if (r != me) wait::wakeIfSleeping(w.seg.ctl(team.members[r]));
    return 0;
  }
  return wait::waitUntil(w.self(), allArrived);
}

// (after a gather or reduce on up to kLedMax members: its root leaves last)
bool lastFits(const Team& team) {
  return team.lead != Team::kNoLead && (team.lead & Team::kLast) && team.size() <= kLedMax;
}

// (`last` leaves after every other member has seen all arrive and left)
int lastOut(Team& team, uint64_t seq, uint32_t last) {
  const transport::World& w = transport::world();
  const uint64_t left = seq * 64 + 2;
  SHMCOLL_CHECK(arriveAll(team, seq * 64 + 1));
  if (team.rank != last) {
    lineOf(w, team, team.rank).v.store(left, std::memory_order_release);
    wait::wakePeer(w.seg.ctl(team.members[last]));
    return 0;
  }
  uint32_t out = 0;
  return wait::waitUntil(w.self(), [&] { return othersReached(w, team, left, &out); });
}

int flat(Team& team, uint64_t seq) {
  if (lastFits(team)) return lastOut(team, seq, team.lead & ~Team::kLast);
  return arriveAll(team, seq * 64 + 1);
}

// (through `lead`: it leaves first)
int releasedBy(Team& team, uint64_t seq, uint32_t lead) {
  const transport::World& w = transport::world();
  const uint32_t n = team.size(), me = team.rank;
  const uint64_t arrive = seq * 64 + 1, go = seq * 64 + 2;
  segment::Line64& first = lineOf(w, team, lead);
  if (me != lead) {
    lineOf(w, team, me).v.store(arrive, std::memory_order_release);
    wait::wakePeer(w.seg.ctl(team.members[lead]));
    return wait::waitUntil(w.self(), [&] { return first.v.load(std::memory_order_acquire) >= go; });
  }
  uint32_t next = 0;  // the members below `next` are known to have arrived
  SHMCOLL_CHECK(wait::waitUntil(w.self(), [&] {
    for (; next < n; ++next)
      if (next != lead && lineOf(w, team, next).v.load(std::memory_order_acquire) < arrive) return false;
    return true;
  }));
  first.v.store(go, std::memory_order_release);
  wait::wakeAll(team.members, lead, [&](uint32_t world) { return w.seg.ctl(world); });
  return 0;
}

int released(Team& team, uint64_t seq) {
  if (lastFits(team)) return lastOut(team, seq, team.lead & ~Team::kLast);
  return releasedBy(team, seq, team.lead < team.size() ? team.lead : 0);
}

// (where neither flat nor released is the job's policy)
bool ledFits(const Team& team) { return team.lead < team.size() && team.size() <= kLedMax; }
int led(Team& team, uint64_t seq) {
  if (lastFits(team)) return lastOut(team, seq, team.lead & ~Team::kLast);
  return ledFits(team) ? releasedBy(team, seq, team.lead) : dissemination(team, seq);
}

// Runs `body` on a team with barrier lines (a team without them runs the
// barrier as a schedule).  Once it has passed, every member has entered the barrier, so it has
// finished every earlier operation on the team (transport/lanes.h): the lane
// areas they read are free, and the next operation's claim() need not read
// their `consumed` lines (a rooted collective right after a barrier: its
// root hears from nobody before it writes).
template <class Body>
int onLines(Team& team, Body&& body) {
  if (!team.hasLines()) return barrier(Place{&team});  // (runs as the schedule)
  const uint64_t seq = team.next();
  if (team.size() == 1) return 0;
  SHMCOLL_CHECK(body(team, seq));
  team.lead = Team::kNoLead;  // (a barrier right after this one is led by no one)
  transport::Lanes& lanes = transport::lanes();
  for (uint32_t r = 0; r < team.size(); ++r)
    if (r != team.rank) lanes.noteEntered(team.lines, team.members[r], seq);
  return 0;
}

}  // namespace

int barrierOn(Team& team) {
  return onLines(team, flatFits(team) ? flat : releasedFits(team) ? released : led);
}

extern const Algorithm kDisseminationAlgorithm =
    Algorithm("dissemination", "ceil(log2 n) rounds of one barrier line each", opBit(Op::kBarrier), kBlocking,
              [](Operation& o) { return onLines(o.team(), dissemination); });

extern const Algorithm kLedBarrierAlgorithm =
    Algorithm("led", "dissemination, released through the root of the rooted call before it, or that root last",
              opBit(Op::kBarrier), kBlocking, [](Operation& o) { return onLines(o.team(), led); })
        .costing([](const Operation& o) { return flatFits(o.team()) || releasedFits(o.team()) ? 4.0 : 0.75; });

extern const Algorithm kFlatBarrierAlgorithm =
    Algorithm("flat", "one round: every rank reads every member's barrier line", opBit(Op::kBarrier), kBlocking,
              [](Operation& o) { return onLines(o.team(), flat); })
        .costing([](const Operation& o) { return flatFits(o.team()) ? 0.5 : 2.0; });

extern const Algorithm kReleasedBarrierAlgorithm =
    Algorithm("released", "every rank tells team rank 0, which releases them all", opBit(Op::kBarrier), kBlocking,
              [](Operation& o) { return onLines(o.team(), released); })
        .costing([](const Operation& o) { return releasedFits(o.team()) ? 0.5 : 3.0; });

}  // namespace shmcoll::coll
