// Nonblocking collectives: schedules of point-to-point messages.
//
// The blocking collectives use the per-rank mailbox slots and tables, which
// one operation at a time holds; a nonblocking collective may be outstanding
// alongside others on any communicators, in any completion order, so it runs
// on the point-to-point layer instead, which buffers as much as needed.  A
// schedule is a list of rounds; each round posts its sends and receives, and
// when all have completed runs a local step (a fold, a copy) and starts the
// next.  progress() steps every schedule, so a schedule advances in any MPI
// call (and in every wait) of the process, and always completes in
// MPI_Wait/MPI_Test.
//
// Messages of schedules travel on the context p2p::kInternalCtx | ctx (never
// matched by user receives) with the operation's number on the communicator
// as tag: all members start nonblocking collectives on a communicator in the
// same order, so the numbers agree, and several outstanding operations on
// one communicator never match each other's messages.
#pragma once

#include <mpi.h>

#include "coll/coll.h"
#include "p2p/p2p.h"

namespace shmcoll::nbc {

// Starts the exchange `a` (any of the data-moving collectives as per-pair
// blocks, coll/coll.h).  The argument object may go away after the call: the
// blocks are copied, and with `inPlace` what the receive blocks hold is packed
// aside first and sent from there.
p2p::Request* exchange(coll::Team& team, const coll::ExchangeArgs& a, bool inPlace);

// Dissemination barrier.
p2p::Request* barrier(coll::Team& team);

// r.in == nullptr: MPI_IN_PLACE (the input is in r.out).  root < 0: the result
// lands on every rank (MPI_Iallreduce), else on `root` only.
p2p::Request* reduce(coll::Team& team, const coll::Reduction& r, int root);

}  // namespace shmcoll::nbc
