// Binding plans on synthetic machines with 1, 2 and 4 NUMA nodes: which core,
// which CPUs and which NUMA node (the node its shared-memory area is placed
// on) each rank gets.
#include "os/topology.h"

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

using namespace shmcoll::topo;

namespace {

struct Shape {
  const char* synthetic;
  unsigned nodes, coresPerNode, pusPerCore;
};

std::vector<unsigned> range(unsigned from, unsigned count) {
  std::vector<unsigned> v;
  for (unsigned i = 0; i < count; ++i) v.push_back(from + i);
  return v;
}

class PlanTest : public ::testing::TestWithParam<Shape> {};

TEST_P(PlanTest, TopologyMatchesDescription) {
  const Shape s = GetParam();
  Topology t;
  ASSERT_EQ(t.loadSynthetic(s.synthetic), 0);
  ASSERT_EQ(t.ncores(), s.nodes * s.coresPerNode);
  ASSERT_EQ(t.nnumaNodes(), s.nodes);
  for (unsigned c = 0; c < t.ncores(); ++c) {
    EXPECT_EQ(t.info().cores[c].pus, range(c * s.pusPerCore, s.pusPerCore)) << "core " << c;
    EXPECT_EQ(t.info().cores[c].numaNode, static_cast<int>(c / s.coresPerNode)) << "core " << c;
  }
}

TEST_P(PlanTest, CoreBindingSpreadsRanksInCoreOrder) {
  const Shape s = GetParam();
  Topology t;
  ASSERT_EQ(t.loadSynthetic(s.synthetic), 0);
  const unsigned ncores = t.ncores();
  for (uint32_t n : {1u, 3u, ncores, ncores + 5, 2 * ncores + 1}) {
    auto plan = planBinding(t.info(), n, BindPolicy::kCore);
    ASSERT_EQ(plan.size(), n);
    for (uint32_t r = 0; r < n; ++r) {
      const unsigned core = r % ncores;
      EXPECT_EQ(plan[r].core, static_cast<int>(core)) << "n=" << n << " rank " << r;
      EXPECT_EQ(plan[r].cpuset, range(core * s.pusPerCore, s.pusPerCore)) << "n=" << n << " rank " << r;
      EXPECT_EQ(plan[r].cpu, static_cast<int>(core * s.pusPerCore)) << "n=" << n << " rank " << r;
      EXPECT_EQ(plan[r].numaNode, static_cast<int>(core / s.coresPerNode)) << "n=" << n << " rank " << r;
    }
  }
}

TEST_P(PlanTest, NumaBindingUsesTheWholeNodeOfTheRanksCore) {
  const Shape s = GetParam();
  Topology t;
  ASSERT_EQ(t.loadSynthetic(s.synthetic), 0);
  const unsigned ncores = t.ncores(), pusPerNode = s.coresPerNode * s.pusPerCore;
  const uint32_t n = 2 * ncores + 3;
  auto plan = planBinding(t.info(), n, BindPolicy::kNuma);
  for (uint32_t r = 0; r < n; ++r) {
    const unsigned node = (r % ncores) / s.coresPerNode;
    EXPECT_EQ(plan[r].numaNode, static_cast<int>(node)) << "rank " << r;
    EXPECT_EQ(plan[r].cpuset, range(node * pusPerNode, pusPerNode)) << "rank " << r;
    EXPECT_EQ(plan[r].cpu, -1) << "rank " << r;
    EXPECT_EQ(plan[r].core, static_cast<int>(r % ncores)) << "rank " << r;
  }
}

TEST_P(PlanTest, NoBindingLeavesCpusFreeAndInterleavesOnSeveralNodes) {
  const Shape s = GetParam();
  Topology t;
  ASSERT_EQ(t.loadSynthetic(s.synthetic), 0);
  auto plan = planBinding(t.info(), 9, BindPolicy::kNone);
  for (const RankBinding& b : plan) {
    EXPECT_TRUE(b.cpuset.empty());
    EXPECT_EQ(b.cpu, -1);
    EXPECT_EQ(b.core, -1);
    // One node: that is where the memory is; several: interleaved (-1).
    EXPECT_EQ(b.numaNode, s.nodes == 1 ? 0 : -1);
  }
}

TEST_P(PlanTest, XmlExportLoadsTheSameMachine) {
  const Shape s = GetParam();
  hwloc_topology_t h;
  ASSERT_EQ(hwloc_topology_init(&h), 0);
  ASSERT_EQ(hwloc_topology_set_synthetic(h, s.synthetic), 0);
  ASSERT_EQ(hwloc_topology_load(h), 0);
  char path[] = "/tmp/shmcoll-topo-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_EQ(hwloc_topology_export_xml(h, path, 0), 0);
  hwloc_topology_destroy(h);
  Topology fromXml, synth;
  ASSERT_EQ(fromXml.loadXml(path), 0);
  unlink(path);
  ASSERT_EQ(synth.loadSynthetic(s.synthetic), 0);
  ASSERT_EQ(fromXml.ncores(), synth.ncores());
  auto a = planBinding(fromXml.info(), 2 * synth.ncores(), BindPolicy::kCore);
  auto b = planBinding(synth.info(), 2 * synth.ncores(), BindPolicy::kCore);
  for (size_t r = 0; r < a.size(); ++r) {
    EXPECT_EQ(a[r].cpuset, b[r].cpuset);
    EXPECT_EQ(a[r].numaNode, b[r].numaNode);
  }
}

INSTANTIATE_TEST_SUITE_P(Machines, PlanTest,
                         ::testing::Values(Shape{"core:4 pu:2", 1, 4, 2},            // 1 node
                                           Shape{"numa:2 core:3 pu:1", 2, 3, 1},     // 2 nodes
                                           Shape{"pack:2 numa:2 core:4 pu:2", 4, 4, 2}),  // 4 nodes
                         [](const auto& info) { return "nodes" + std::to_string(info.param.nodes); });

TEST(Topology, ExactMappingOnFourNodes) {
  // Spelled out once, independent of the helpers above.
  Topology t;
  ASSERT_EQ(t.loadSynthetic("pack:2 numa:2 core:4 pu:2"), 0);
  auto plan = planBinding(t.info(), 18, BindPolicy::kCore);
  const int expectNode[18] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 0, 0};
  for (int r = 0; r < 18; ++r) {
    EXPECT_EQ(plan[r].numaNode, expectNode[r]) << "rank " << r;
    EXPECT_EQ(cpuListString(plan[r].cpuset), std::to_string(2 * (r % 16)) + "-" + std::to_string(2 * (r % 16) + 1));
  }
  auto numa = planBinding(t.info(), 5, BindPolicy::kNuma);
  EXPECT_EQ(cpuListString(numa[0].cpuset), "0-7");
  EXPECT_EQ(cpuListString(numa[4].cpuset), "8-15");
}

TEST(Topology, CpuListString) {
  EXPECT_EQ(cpuListString({}), "");
  EXPECT_EQ(cpuListString({3}), "3");
  EXPECT_EQ(cpuListString({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(cpuListString({5, 1, 0, 5}), "0-1,5");
}

TEST(Topology, ParseBindPolicy) {
  BindPolicy p;
  EXPECT_TRUE(parseBindPolicy("core", &p) && p == BindPolicy::kCore);
  EXPECT_TRUE(parseBindPolicy("numa", &p) && p == BindPolicy::kNuma);
  EXPECT_TRUE(parseBindPolicy("none", &p) && p == BindPolicy::kNone);
  EXPECT_FALSE(parseBindPolicy("socket", &p));
  EXPECT_FALSE(parseBindPolicy("", &p));
}

TEST(Topology, BadSyntheticDescriptionFails) {
  Topology t;
  EXPECT_NE(t.loadSynthetic("this is not a topology"), 0);
}

TEST(Topology, SystemTopologyFollowsOurAffinity) {
  Topology full;
  ASSERT_EQ(full.loadSystem(), 0);
  ASSERT_GE(full.ncores(), 1u);
  if (full.ncores() < 2) GTEST_SKIP() << "needs 2 cores";
  const unsigned last = full.info().cores.back().pus.front();
  // In a child, so the test process keeps its affinity.
  pid_t pid = fork();
  if (pid == 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(last, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0) _exit(10);
    Topology t;
    if (t.loadSystem() != 0) _exit(11);
    if (t.ncores() != 1) _exit(12);
    if (t.info().cores[0].pus != std::vector<unsigned>{last}) _exit(13);
    // Binding to a CPU we may use works; the kernel agrees afterwards.
    if (t.bindProcess({last}) != 0) _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Topology, BindProcessRestrictsTheKernelMask) {
  Topology t;
  ASSERT_EQ(t.loadSystem(), 0);
  const std::vector<unsigned> core0 = t.info().cores[0].pus;
  pid_t pid = fork();
  if (pid == 0) {
    if (t.bindProcess(core0) != 0) _exit(10);
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) _exit(11);
    if (static_cast<size_t>(CPU_COUNT(&set)) != core0.size()) _exit(12);
    for (unsigned c : core0)
      if (!CPU_ISSET(c, &set)) _exit(13);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
