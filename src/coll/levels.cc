// Teams of teams (levels.h).
#include "coll/levels.h"

#include <map>

#include "coll/team.h"
#include "transport/world.h"

namespace shmcoll::coll {

Level groupBy(const std::vector<int>& where, uint32_t me, Level::Kind kind) {
  Level l;
  l.kind = kind;
  l.domainOf.resize(where.size());
  std::map<int, uint32_t> index;
  for (uint32_t r = 0; r < where.size(); ++r) {
    auto [it, fresh] = index.emplace(where[r], static_cast<uint32_t>(l.domains.size()));
    if (fresh) l.domains.emplace_back();
    l.domains[it->second].push_back(r);
    l.domainOf[r] = it->second;
  }
  l.mine = where.empty() ? 0 : l.domainOf[me];
  return l;
}

const Levels& levelsOf(Team& team) {
  TeamCache& c = team.cache();
  if (!c.levels) {
    const segment::View& seg = transport::world().seg;
    std::vector<int> numa(team.size()), node(team.size(), 0);
    for (uint32_t r = 0; r < team.size(); ++r) numa[r] = seg.ctl(team.members[r])->numaNode;
    auto* l = new Levels;
    l->numa = groupBy(numa, team.rank, Level::kNuma);
    l->node = groupBy(node, team.rank, Level::kNode);
    c.levels = l;
  }
  return *c.levels;
}

}  // namespace shmcoll::coll
