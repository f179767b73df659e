// The blocking data-moving collectives' entry into the engine: the inline
// path first, for the argument class itself, then the registry (registry.h).
// Included by coll.h; not for direct use.
#pragma once

#include "coll/coll.h"
#include "coll/exchange_inline.h"
#include "coll/registry.h"

namespace shmcoll::coll {

// Runs a data-moving collective that did not take the inline path.
int exchangeGeneral(const Place& at, const ExchangeArgs& a, const Flags& f);
// A team of one (MPI_COMM_SELF, a job of one rank): the rank's block to
// itself, as a round of one copies it, with no algorithm to choose and no
// one to wait for.
int alone(const ExchangeArgs& a, const Flags& f);

template <class A>
int exchange(const Place& at, const A& a, const Flags& f) {
  if (!at.inter()) {
    Team& t = *at.team;
    // (Team::lead; a rooted collective's non-root pairs with the root alone,
    // onlyPeer, and the root's own onlyPeer is -1)
    t.lead = leadAfter(a.op, a.onlyPeer >= 0 ? static_cast<uint32_t>(a.onlyPeer) : t.rank, t.size());
    if (t.size() == 1) [[unlikely]]
      return alone(a, f);
    if (t.hasLines()) {
      // (A is final: its blocks are computed inline.  The inline path writes
      // every lane before it reads any, so MPI_IN_PLACE needs no private copy.)
      bool taken = false;
      const int rc = inlineExchange(t, a, &taken);
      if (taken) return rc;
    }
  }
  return exchangeGeneral(at, a, f);
}

// One round inside another algorithm (innerExchange, registry.h, is this
// for the base class): the inline path when every block fits, else the
// exchange's round.  With a final argument class the inline path computes
// its blocks without virtual calls.
template <class A>
int innerExchangeFinal(Team& team, const A& a) {
  bool taken = false;
  const int rc = inlineExchange(team, a, &taken);
  if (taken) return rc;
  return transport::runRound(team, team.next(), a, roundParams(team, a.op), team.cache().roundScratch());
}

}  // namespace shmcoll::coll
