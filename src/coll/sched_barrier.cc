// Algorithm: sched_barrier -- the nonblocking barrier, a dissemination over
// point-to-point messages.
//
// How it works.  In round k (distance 2^k) rank me sends an empty message to
// (me + 2^k) mod n and waits for one from (me - 2^k) mod n; after ceil(log2 n)
// rounds every rank has, transitively, heard from every other.  On an
// intercommunicator the same runs over both groups (inter_exchange.cc).
//
// Cost: ceil(log2 n) rounds of one empty message each way.
//
// Chosen for every MPI_Ibarrier and MPI_Barrier_init on an intracommunicator.
#include "coll/sched.h"

namespace shmcoll::coll {

namespace sched {

void barrierRounds(Schedule* s) {
  const uint32_t n = s->size(), me = s->me();
  for (uint32_t k = 1; k < n; k <<= 1) {
    Schedule::Round& r = s->round();
    r.xfers.push_back({false, (me + n - k) % n, {nullptr, 0, dt::byteType()}});
    r.xfers.push_back({true, (me + k) % n, {nullptr, 0, dt::byteType()}});
  }
}

}  // namespace sched

extern const Algorithm kSchedBarrierAlgorithm =
    Algorithm("sched_barrier", "dissemination over empty point-to-point messages", opBit(Op::kBarrier), kNonblocking,
              [](Operation& o) {
                auto* s = new sched::Schedule(o.team());
                sched::barrierRounds(s);
                return sched::start(o, s);
              });

}  // namespace shmcoll::coll
