// Teams of teams: a team's members grouped by where they run, level by level.
//
// A level cuts the team into domains: its members that share a NUMA node
// (Level::kNuma), a machine (Level::kNode; every member of a job that shmrun
// started runs on one node) and so on.  Hierarchical algorithms walk the
// levels: a domain's leader (its lowest team rank) moves what crosses the
// domain's boundary once, and the domain shares it locally
// (allgather_numa.cc).  A team's levels are built on first use from what the
// launcher recorded for each rank (segment::RankCtl::numaNode: the NUMA node
// its memory was placed on, -1 when unknown, which puts the rank in a domain
// of the unknowns) and cached on the team.
#pragma once

#include <cstdint>
#include <vector>

namespace shmcoll::coll {

class Team;

struct Level {
  enum Kind : uint8_t { kNuma, kNode };
  Kind kind = kNuma;
  std::vector<uint32_t> domainOf;              // team rank -> domain
  std::vector<std::vector<uint32_t>> domains;  // each domain's team ranks, ascending; ordered by their first
  uint32_t mine = 0;                           // this rank's domain
  uint32_t leader(uint32_t d) const { return domains[d].front(); }
  bool sameDomain(uint32_t a, uint32_t b) const { return domainOf[a] == domainOf[b]; }
  bool isLeader(uint32_t r) const { return leader(domainOf[r]) == r; }
  bool spansMany() const { return domains.size() > 1; }
};

struct Levels {
  Level numa;
  Level node;
};

// Groups team ranks 0 .. where.size()-1 by `where[r]` (any value, -1 too, is a
// domain); `me` is this rank.  Pure: tests build levels of any shape with it.
Level groupBy(const std::vector<int>& where, uint32_t me, Level::Kind kind);

// The levels of `team` (built on first use, then cached on it).
const Levels& levelsOf(Team& team);

}  // namespace shmcoll::coll
