// Teams of teams on machines of several NUMA nodes, described to hwloc as
// synthetic topologies (HWLOC_SYNTHETIC): shmrun lays the job out as on that
// machine, without binding, and the library's levels (coll/levels.h) group
// the ranks by the NUMA node recorded for each.  The registry's cost model
// then picks numa_allgather for large allgathers where four ranks share a
// domain, and never on a team within one domain or with two ranks a domain
// (coll/cost.h: the hierarchy pays once more ranks share a domain's link
// than its bandwidth over a copy's).  What ran is read from SHMCOLL_VERBOSE;
// the results themselves are checked byte for byte by coll_allgather(v)
// (tests/mpi/testlist.txt runs them under the same topologies).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "process.h"

namespace {

using shmcoll::testing::Result;
using shmcoll::testing::run;

const std::string kShmrun = SHMRUN_PATH;

// Runs coll_<op> (a short battery up to 4 MiB blocks) on `ranks` ranks of the
// machine `synthetic` with SHMCOLL_VERBOSE=1; returns rank 0's report lines.
Result allgathers(const char* op, const char* synthetic, int ranks) {
  return run({kShmrun, "-n", std::to_string(ranks), "--timeout", "120", std::string(MPI_TEST_DIR) + "/coll_" + op,
              "quick", "large=4"},
             {std::string("HWLOC_SYNTHETIC=") + synthetic, "SHMCOLL_VERBOSE=1"});
}

bool ran(const Result& r, const std::string& line) { return r.err.find(line) != std::string::npos; }

TEST(NumaLevels, FourRanksADomainTakeTheHierarchyForLargeAllgathers) {
  for (const char* op : {"allgather", "allgatherv"}) {
    const Result r = allgathers(op, "numa:2 core:4 pu:1", 8);
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_TRUE(ran(r, std::string(op) + " on 8 ranks: algorithm numa_allgather")) << r.err;
    // (small blocks still go inline, mid-size ones through the exchange)
    EXPECT_TRUE(ran(r, std::string(op) + " on 8 ranks: algorithm inline")) << r.err;
  }
}

TEST(NumaLevels, OneDomainNeverTakesTheHierarchy) {
  const Result r = allgathers("allgather", "numa:1 core:8 pu:1", 8);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_FALSE(ran(r, "algorithm numa_allgather")) << r.err;
  EXPECT_TRUE(ran(r, "allgather on 8 ranks: algorithm exchange")) << r.err;
}

TEST(NumaLevels, TwoRanksADomainStayFlat) {
  const Result r = allgathers("allgatherv", "numa:4 core:2 pu:1", 8);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_FALSE(ran(r, "algorithm numa_allgather")) << r.err;
}

TEST(NumaLevels, ForcedHierarchyDeclinesOnOneDomain) {
  const Result r = run({kShmrun, "-n", "4", "--timeout", "120", std::string(MPI_TEST_DIR) + "/coll_allgather", "quick",
                        "large=1"},
                       {"HWLOC_SYNTHETIC=numa:1 core:4 pu:1", "SHMCOLL_VERBOSE=1",
                        "SHMCOLL_ALGORITHM_ALLGATHER=numa_allgather"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(ran(r, "algorithm numa_allgather cannot run this allgather; choosing another")) << r.err;
  EXPECT_FALSE(ran(r, "algorithm numa_allgather (")) << r.err;
}

}  // namespace
