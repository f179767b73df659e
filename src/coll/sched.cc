// Starting a schedule (sched.h).
#include "coll/sched.h"

namespace shmcoll::coll::sched {

int start(Operation& o, Schedule* s) {
  p2p::addActive(s);
  p2p::progress();
  if (o.mode == kNonblocking) {
    o.request = s;
    return 0;
  }
  if (int rc = p2p::wait(s)) return fail(rc, "the job is ending");
  const int error = s->status.error;
  p2p::release(s);
  if (error == err::kTruncate)
    return fail(error,
                "a block from the remote group is longer than the receive block for it (the two groups' counts or "
                "type signatures disagree); only what fits was received");
  if (error == err::kCount)
    return fail(error,
                "a block from another rank was shorter than the receive block for it, or came through a rank where "
                "one was (the ranks' counts or type signatures disagree)");
  if (error) return fail(error, "a point-to-point transfer of the operation failed");
  return 0;
}

}  // namespace shmcoll::coll::sched
