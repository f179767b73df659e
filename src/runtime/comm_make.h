// What the communicator creations of runtime/comm.cc and
// runtime/comm_create.cc share; internal to those two files.
#pragma once

#include <vector>

#include "coll/coll.h"
#include "common/status.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/ids.h"
#include "wait/serial.h"

namespace shmcoll::rt {

// Position of x in v (v.size() when absent).
uint32_t indexOf(const std::vector<uint32_t>& v, uint32_t x);
// A new intracommunicator (intercommunicator) of `members` (`local`,
// `remote`) on the agreed context id, made active at once.
Comm* install(std::vector<uint32_t> members, uint32_t ctxId, uint32_t lines, uint64_t base, const Comm& parent);
Comm* installInter(std::vector<uint32_t> local, std::vector<uint32_t> remote, uint32_t ctxId, const Comm& parent);

// Lets the rank's other threads run (and the peers' creations finish) before
// a creation agrees again: the process lock is let go for a random time that
// doubles with each attempt (from 0 on), up to 5 ms.
void backOff(uint32_t attempt);

// Runs a blocking creation's attempts (runtime/ids.h, IdTurn): once(turn,
// &again) is one attempt, which offers ids only when `turn` and sets again
// when every member must try once more.  At MPI_THREAD_MULTIPLE a first
// attempt without the turn brings every member here; then the creation
// registers under key() (which may use what that attempt learnt) and tries
// until an attempt settles it, giving the turn back before each backOff.
// The turn ends when this returns: the caller installs what the last attempt
// agreed before it lets the process lock go.
template <class Once, class Key>
int inTurns(Once&& once, Key&& key) {
  bool again = false;
  if (wait::gSerialOn) SHMCOLL_CHECK(once(false, &again));
  IdTurn turn(ctx().idTurns, key());
  for (uint32_t attempt = 0;;) {
    again = false;
    SHMCOLL_CHECK(once(turn.take(), &again));
    if (!again) return kOk;
    turn.give();
    backOff(attempt++);
  }
}
// A leader's answer: no common id while some member lacked the turn to offer ids; agree again.
constexpr int32_t kAgainErr = -1;

// The root's bytes to every member of an intracommunicator.
class RawBcast final : public coll::ExchangeArgs {
 public:
  RawBcast(void* buf, uint64_t bytes, uint32_t root, uint32_t me) : root_(root), me_(me) {
    block_ = {static_cast<const char*>(buf), bytes, dt::byteType()};
    op = coll::Op::kBcast;
    allPairs = false;
    broadcast = true;  // on every rank: the receivers read the root's one shared lane
  }
  coll::Block send(uint32_t) const override { return block_; }
  coll::Block recv(uint32_t) const override { return block_; }
  bool sends(uint32_t) const override { return me_ == root_; }
  bool receives(uint32_t p) const override { return me_ != root_ && p == root_; }

 private:
  coll::Block block_;
  uint32_t root_, me_;
};

}  // namespace shmcoll::rt
