// The machine's cores and NUMA nodes (hwloc), and where each rank goes.
//
// Loaded once at start-up by the launcher: from the running system
// (restricted to the CPUs the launcher itself may use, so `taskset -c 2-5
// shmrun ...` confines the job as users expect), or for tests from an hwloc
// synthetic description ("pack:2 numa:2 core:4 pu:2") or an XML export.
//
// planBinding() is a pure function of a TopologyInfo snapshot so that the
// placement rules can be tested with any machine shape.
#pragma once

#include <hwloc.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::topo {

enum class BindPolicy { kCore, kNuma, kNone };

// Parses "core", "numa", "none"; returns false on anything else.
bool parseBindPolicy(const std::string& s, BindPolicy* out);
const char* bindPolicyName(BindPolicy p);

struct CoreInfo {
  std::vector<unsigned> pus;  // OS indices of its hardware threads, ascending
  int numaNode = -1;          // OS index of its NUMA node
};

struct NumaInfo {
  int osIndex = -1;
  std::vector<unsigned> pus;  // OS indices of the PUs it holds (restricted set)
};

// Plain-data snapshot of what placement needs: cores in hwloc logical order.
struct TopologyInfo {
  std::vector<CoreInfo> cores;
  std::vector<NumaInfo> numaNodes;
};

// Where one rank runs and where its memory goes.
struct RankBinding {
  int core = -1;          // logical core index the rank maps to (r % ncores); -1 when unbound
  int cpu = -1;           // first PU (OS index) of the cpuset when bound to a core, else -1
  int numaNode = -1;      // OS index of the node its area is placed on; -1: interleaved/default
  std::vector<unsigned> cpuset;  // PUs the rank may run on; empty: not bound
};

// Rank r maps to core r % ncores.  kCore binds it to that core's PUs, kNuma to
// all PUs of that core's NUMA node, kNone binds nothing; with kNone the area's
// node is -1 (interleaved) unless the machine has a single node, which is
// then reported.  Pure; `info` must have at least one core.
std::vector<RankBinding> planBinding(const TopologyInfo& info, uint32_t nranks, BindPolicy policy);

// "0-3,8" style list of `cpus` (sorted, deduplicated output).
std::string cpuListString(const std::vector<unsigned>& cpus);

// An hwloc topology.  Not copyable; all functions return 0 or an MPI error
// class with a reason (common/status.h).
class Topology {
 public:
  Topology() = default;
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  // The running system, restricted to the calling process's CPU binding.
  int loadSystem();
  // An hwloc synthetic description, e.g. "pack:2 numa:2 core:4 pu:2".
  int loadSynthetic(const std::string& description);
  // An XML file written by `lstopo foo.xml` or hwloc_topology_export_xml.
  int loadXml(const std::string& path);

  bool loaded() const { return topo_ != nullptr; }
  // False when the topology describes another machine: hwloc was pointed at
  // a synthetic description or an XML export (HWLOC_SYNTHETIC,
  // HWLOC_XMLFILE, loadSynthetic, loadXml), for tests of placement logic.
  bool thisSystem() const;
  unsigned ncores() const { return static_cast<unsigned>(info_.cores.size()); }
  unsigned nnumaNodes() const { return static_cast<unsigned>(info_.numaNodes.size()); }
  const TopologyInfo& info() const { return info_; }

  // Binds the calling process (all its threads) to `cpuset` with hwloc; a
  // no-op for an empty set.  It allocates one hwloc bitmap, which is safe
  // between fork and exec only because the launcher is single-threaded.
  int bindProcess(const std::vector<unsigned>& cpuset) const;

 private:
  int finishLoad();  // hwloc_topology_load + snapshot
  hwloc_topology_t topo_ = nullptr;
  TopologyInfo info_;
};

}  // namespace shmcoll::topo
