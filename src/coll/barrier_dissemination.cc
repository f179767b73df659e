// Algorithm: dissemination -- the blocking barrier on barrier lines.
//
// In round k (k = 0 .. ceil(log2 n) - 1) rank i announces round k on its own
// barrier line and waits until rank (i - 2^k) mod n has announced round k.
// After the last round every rank has, transitively, heard from every other.
// The announcement is the monotone value seq * 64 + k + 1 on a line only its
// owner writes, so no line is ever reset and no two ranks write one line.
// Cost: ceil(log2 n) rounds of one cache-line transfer each.
// Chosen for every blocking MPI_Barrier on an intracommunicator and for the
// synchronisation inside MPI_Init, MPI_Finalize and MPI_Comm_free.
#include "coll/registry.h"
#include "common/status.h"
#include "transport/world.h"
#include "wait/wait.h"

namespace shmcoll::coll {

int barrierOn(Team& team) {
  if (!team.hasLines()) return barrier(Place{&team});  // (runs as the schedule)
  const transport::World& w = transport::world();
  const uint64_t seq = team.next();
  const uint32_t n = team.size();
  if (n == 1) return 0;
  const uint32_t me = team.rank;
  segment::Line64& mine = w.seg.ctx(team.members[me], team.lines)->barrier;
  for (uint32_t k = 0, dist = 1; dist < n; ++k, dist <<= 1) {
    const uint64_t v = seq * 64 + k + 1;
    mine.v.store(v, std::memory_order_release);
    wait::wakePeer(w.seg.ctl(team.members[(me + dist) % n]));
    segment::Line64& theirs = w.seg.ctx(team.members[(me + n - dist) % n], team.lines)->barrier;
    SHMCOLL_CHECK(wait::waitUntil(w.self(), [&] { return theirs.v.load(std::memory_order_acquire) >= v; }));
  }
  return 0;
}

extern const Algorithm kDisseminationAlgorithm =
    Algorithm("dissemination", "ceil(log2 n) rounds of one barrier line each", opBit(Op::kBarrier), kBlocking,
              [](Operation& o) { return barrierOn(o.team()); });

}  // namespace shmcoll::coll
