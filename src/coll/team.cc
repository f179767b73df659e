// Team caches (team.h).
#include "coll/team.h"

#include "coll/levels.h"
#include "transport/round.h"

namespace shmcoll::coll {

TeamCache::~TeamCache() {
  if (scratch) transport::deleteRoundScratch(scratch);
  delete levels;
}

transport::RoundScratch& TeamCache::roundScratch() {
  if (!scratch) [[unlikely]]
    scratch = transport::newRoundScratch();
  return *scratch;
}

Team::~Team() = default;

void Team::makeCache() { cache_ = std::make_unique<TeamCache>(); }

void Team::resetCaches() {
  cache_.reset();
  for (InlineGate& g : gates_) g = InlineGate{};
}

}  // namespace shmcoll::coll
