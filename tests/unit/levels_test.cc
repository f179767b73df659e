// Teams of teams (coll/levels.h): grouping a team's ranks by where they run.
// Domains keep the team's rank order, are ordered by their first rank, and
// each one's leader is its lowest rank; an unknown node (-1) is a domain of
// its own like any other value.
#include <gtest/gtest.h>

#include <vector>

#include "coll/levels.h"

namespace shmcoll::coll {
namespace {

TEST(Levels, GroupsContiguousDomains) {
  const Level l = groupBy({0, 0, 0, 0, 1, 1, 1, 1}, 5, Level::kNuma);
  ASSERT_EQ(l.domains.size(), 2u);
  EXPECT_EQ(l.domains[0], (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(l.domains[1], (std::vector<uint32_t>{4, 5, 6, 7}));
  EXPECT_EQ(l.mine, 1u);
  EXPECT_EQ(l.leader(0), 0u);
  EXPECT_EQ(l.leader(1), 4u);
  EXPECT_TRUE(l.isLeader(4));
  EXPECT_FALSE(l.isLeader(5));
  EXPECT_TRUE(l.sameDomain(5, 7));
  EXPECT_FALSE(l.sameDomain(3, 4));
  EXPECT_TRUE(l.spansMany());
}

TEST(Levels, InterleavedAndUnevenDomainsKeepRankOrder) {
  // Nodes 3 and 1 alternate, with one rank on node 0 at the end.
  const Level l = groupBy({3, 1, 3, 1, 3, 0}, 2, Level::kNuma);
  ASSERT_EQ(l.domains.size(), 3u);
  EXPECT_EQ(l.domains[0], (std::vector<uint32_t>{0, 2, 4}));
  EXPECT_EQ(l.domains[1], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(l.domains[2], (std::vector<uint32_t>{5}));
  EXPECT_EQ(l.domainOf, (std::vector<uint32_t>{0, 1, 0, 1, 0, 2}));
  EXPECT_EQ(l.mine, 0u);
  EXPECT_TRUE(l.isLeader(1));
  EXPECT_TRUE(l.isLeader(5));
  EXPECT_FALSE(l.isLeader(2));
}

TEST(Levels, UnknownNodesAreOneDomain) {
  const Level l = groupBy({-1, -1, -1}, 0, Level::kNuma);
  ASSERT_EQ(l.domains.size(), 1u);
  EXPECT_FALSE(l.spansMany());
  EXPECT_TRUE(l.isLeader(0));
}

TEST(Levels, OneRankTeam) {
  const Level l = groupBy({7}, 0, Level::kNode);
  EXPECT_EQ(l.kind, Level::kNode);
  ASSERT_EQ(l.domains.size(), 1u);
  EXPECT_EQ(l.leader(0), 0u);
  EXPECT_FALSE(l.spansMany());
}

}  // namespace
}  // namespace shmcoll::coll
