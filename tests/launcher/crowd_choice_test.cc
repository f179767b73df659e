// The registry's choices that depend on whether the job has more ranks than
// cores.  shmrun counts the CPUs this process may run on when the topology
// is synthetic (HWLOC_SYNTHETIC), so one allowed CPU makes a 2-rank job
// crowded on any machine, and the same job without it is not (on a machine
// of 2 CPUs or more).  What ran is read from SHMCOLL_VERBOSE; the result
// itself is checked by coll_reduce against its own fold.
#include <gtest/gtest.h>
#include <sched.h>

#include <string>
#include <vector>

#include "process.h"

namespace {

using shmcoll::testing::Result;
using shmcoll::testing::run;

const std::string kShmrun = SHMRUN_PATH;

// Runs coll_<prog> with `args` on `ranks` ranks, on one CPU (this process's
// affinity, which shmrun inherits, narrowed to its first CPU for the run)
// or on the machine's; returns the run with the ranks' reports of what ran.
Result runOn(const std::string& prog, const std::vector<std::string>& args, int ranks, bool oneCpu) {
  cpu_set_t all, one;
  CPU_ZERO(&all);
  CPU_ZERO(&one);
  if (sched_getaffinity(0, sizeof all, &all) != 0) ADD_FAILURE() << "sched_getaffinity";
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &all)) {
      CPU_SET(c, &one);
      break;
    }
  std::vector<std::string> argv = {kShmrun,     "-n", std::to_string(ranks),
                                   "--timeout", "60", std::string(MPI_TEST_DIR) + "/coll_" + prog};
  argv.insert(argv.end(), args.begin(), args.end());
  if (oneCpu && sched_setaffinity(0, sizeof one, &one) != 0) ADD_FAILURE() << "sched_setaffinity";
  Result r = run(argv, {"HWLOC_SYNTHETIC=numa:1 core:2 pu:1", "SHMCOLL_VERBOSE=1"});
  if (oneCpu && sched_setaffinity(0, sizeof all, &all) != 0) ADD_FAILURE() << "sched_setaffinity";
  return r;
}

// One MPI_Reduce of `count` doubles on `ranks` ranks.
Result reduceOnce(long count, int ranks, bool oneCpu) {
  return runOn("reduce", {"one", std::to_string(count)}, ranks, oneCpu);
}

bool ran(const Result& r, const std::string& algorithm, int ranks = 2) {
  return r.err.find("rank 0: reduce on " + std::to_string(ranks) + " ranks: algorithm " + algorithm + " (") !=
         std::string::npos;
}

int cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

// MPI_Reduce's one-exchange bound, input times the other ranks: 1 MiB where
// each rank has a core; where ranks share one, 256 KiB times the other ranks
// when that is more (from 6 ranks).
constexpr long kMiB = 1024 * 1024 / 8;  // (in doubles)

TEST(CrowdChoice, ReduceTakesOneExchangeUpTo1MiBOfInput) {
  if (cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  const Result r = reduceOnce(kMiB, 2, false);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(ran(r, "reduce_direct")) << r.err;
  EXPECT_FALSE(ran(r, "reduce_sliced")) << r.err;
}

TEST(CrowdChoice, ReduceTakesTwoRoundsBeyond1MiBOfInput) {
  if (cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  const Result r = reduceOnce(kMiB + 1024, 2, false);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(ran(r, "reduce_sliced")) << r.err;
  EXPECT_FALSE(ran(r, "reduce_direct")) << r.err;
}

// 2 ranks on one core, 512 KiB inputs: within the 1 MiB bound, beyond 1 x 256 KiB.
TEST(CrowdChoice, ReduceOnOneCoreKeepsTheUncrowdedBound) {
  const Result r = reduceOnce(512 * 1024 / 8, 2, true);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(ran(r, "reduce_direct")) << r.err;
  EXPECT_FALSE(ran(r, "reduce_sliced")) << r.err;
}

// 6 ranks on one core, 224 KiB inputs: 1.09 MiB times the other ranks, beyond
// the 1 MiB bound, within 5 x 256 KiB.
TEST(CrowdChoice, ReduceTakesOneExchangeFurtherWhenRanksShareACore) {
  const Result r = reduceOnce(224 * 1024 / 8, 6, true);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(ran(r, "reduce_direct", 6)) << r.err;
  EXPECT_FALSE(ran(r, "reduce_sliced", 6)) << r.err;
}

TEST(CrowdChoice, ReduceBeyondTheCrowdedBoundTakesTwoRounds) {
  const Result r = reduceOnce(320 * 1024 / 8, 6, true);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(ran(r, "reduce_sliced", 6)) << r.err;
  EXPECT_FALSE(ran(r, "reduce_direct", 6)) << r.err;
}

// coll_rooted's MPI_Bcast of 16 KiB: through a pull or the slots up to 2
// ranks a core, inline (its lane written, the root returns) past that.
Result bcast16k(int ranks, bool oneCpu) { return runOn("rooted", {"bcast", "16384"}, ranks, oneCpu); }

TEST(CrowdChoice, MidSizeBlocksLeaveTheLanesUpToTwoRanksACore) {
  if (cpus() < 2) GTEST_SKIP() << "needs 2 CPUs";
  const Result r = bcast16k(2, false);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("rank 1: bcast on 2 ranks: algorithm exchange ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bcast on 2 ranks: algorithm inline ("), std::string::npos) << r.err;
}

TEST(CrowdChoice, MidSizeBlocksGoInlinePastTwoRanksACore) {
  const Result r = bcast16k(3, true);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.err.find("rank 1: bcast on 3 ranks: algorithm inline ("), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bcast on 3 ranks: algorithm exchange ("), std::string::npos) << r.err;
}

}  // namespace
