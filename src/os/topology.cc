#include "os/topology.h"


#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/status.h"

namespace shmcoll::topo {

namespace {

std::vector<unsigned> bitmapToList(hwloc_const_bitmap_t set) {
  std::vector<unsigned> out;
  unsigned i;
  hwloc_bitmap_foreach_begin(i, set) { out.push_back(i); }
  hwloc_bitmap_foreach_end();
  return out;
}

}  // namespace

bool parseBindPolicy(const std::string& s, BindPolicy* out) {
  if (s == "core") *out = BindPolicy::kCore;
  else if (s == "numa") *out = BindPolicy::kNuma;
  else if (s == "none") *out = BindPolicy::kNone;
  else return false;
  return true;
}

const char* bindPolicyName(BindPolicy p) {
  switch (p) {
    case BindPolicy::kCore: return "core";
    case BindPolicy::kNuma: return "numa";
    case BindPolicy::kNone: return "none";
  }
  return "?";
}

std::vector<RankBinding> planBinding(const TopologyInfo& info, uint32_t nranks, BindPolicy policy) {
  std::vector<RankBinding> plan(nranks);
  const size_t ncores = info.cores.size();
  if (ncores == 0) return plan;
  for (uint32_t r = 0; r < nranks; ++r) {
    RankBinding& b = plan[r];
    const CoreInfo& core = info.cores[r % ncores];
    switch (policy) {
      case BindPolicy::kCore:
        b.core = static_cast<int>(r % ncores);
        b.cpuset = core.pus;
        b.cpu = core.pus.empty() ? -1 : static_cast<int>(core.pus.front());
        b.numaNode = core.numaNode;
        break;
      case BindPolicy::kNuma: {
        b.core = static_cast<int>(r % ncores);
        b.numaNode = core.numaNode;
        auto it = std::find_if(info.numaNodes.begin(), info.numaNodes.end(),
                               [&](const NumaInfo& n) { return n.osIndex == core.numaNode; });
        // A core without a known node is bound to itself rather than left free.
        b.cpuset = it != info.numaNodes.end() ? it->pus : core.pus;
        break;
      }
      case BindPolicy::kNone:
        b.numaNode = info.numaNodes.size() == 1 ? info.numaNodes.front().osIndex : -1;
        break;
    }
  }
  return plan;
}

std::string cpuListString(const std::vector<unsigned>& cpus) {
  std::vector<unsigned> v = cpus;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  std::string out;
  for (size_t i = 0; i < v.size();) {
    size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += std::to_string(v[i]);
    if (j > i) out += '-' + std::to_string(v[j]);
    i = j + 1;
  }
  return out;
}

Topology::~Topology() {
  if (topo_) hwloc_topology_destroy(topo_);
}

int Topology::loadSystem() {
  if (topo_) hwloc_topology_destroy(topo_);
  topo_ = nullptr;
  if (hwloc_topology_init(&topo_) != 0) return fail(err::kOther, "hwloc_topology_init: %s", strerror(errno));
  if (hwloc_topology_load(topo_) != 0) return fail(err::kOther, "hwloc_topology_load: %s", strerror(errno));
  // Respect the launcher's own CPU binding (taskset, cgroup cpusets, a batch
  // system): ranks must only be spread over the CPUs we were given.
  hwloc_bitmap_t mine = hwloc_bitmap_alloc();
  if (hwloc_get_cpubind(topo_, mine, HWLOC_CPUBIND_PROCESS) == 0 && !hwloc_bitmap_iszero(mine) &&
      !hwloc_bitmap_isequal(mine, hwloc_topology_get_topology_cpuset(topo_))) {
    if (hwloc_topology_restrict(topo_, mine, 0) != 0) {
      hwloc_bitmap_free(mine);
      return fail(err::kOther, "hwloc_topology_restrict: %s", strerror(errno));
    }
  }
  hwloc_bitmap_free(mine);
  return finishLoad();
}

bool Topology::thisSystem() const { return topo_ && hwloc_topology_is_thissystem(topo_); }

int Topology::loadSynthetic(const std::string& description) {
  if (topo_) hwloc_topology_destroy(topo_);
  topo_ = nullptr;
  if (hwloc_topology_init(&topo_) != 0) return fail(err::kOther, "hwloc_topology_init: %s", strerror(errno));
  if (hwloc_topology_set_synthetic(topo_, description.c_str()) != 0)
    return fail(err::kArg, "bad hwloc synthetic topology \"%s\"", description.c_str());
  if (hwloc_topology_load(topo_) != 0) return fail(err::kOther, "hwloc_topology_load: %s", strerror(errno));
  return finishLoad();
}

int Topology::loadXml(const std::string& path) {
  if (topo_) hwloc_topology_destroy(topo_);
  topo_ = nullptr;
  if (hwloc_topology_init(&topo_) != 0) return fail(err::kOther, "hwloc_topology_init: %s", strerror(errno));
  if (hwloc_topology_set_xml(topo_, path.c_str()) != 0)
    return fail(err::kArg, "cannot read hwloc XML topology %s: %s", path.c_str(), strerror(errno));
  if (hwloc_topology_load(topo_) != 0) return fail(err::kOther, "hwloc_topology_load: %s", strerror(errno));
  return finishLoad();
}

int Topology::finishLoad() {
  info_ = TopologyInfo{};
  const int nnuma = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < nnuma; ++i) {
    hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    info_.numaNodes.push_back(NumaInfo{static_cast<int>(n->os_index), bitmapToList(n->cpuset)});
  }
  // Machines (or restricted views) where hwloc sees no Core objects still
  // have PUs: treat each PU as a core then.
  hwloc_obj_type_t coreType = hwloc_get_nbobjs_by_type(topo_, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
  const int ncores = hwloc_get_nbobjs_by_type(topo_, coreType);
  for (int i = 0; i < ncores; ++i) {
    hwloc_obj_t c = hwloc_get_obj_by_type(topo_, coreType, static_cast<unsigned>(i));
    CoreInfo ci;
    ci.pus = bitmapToList(c->cpuset);
    if (ci.pus.empty()) continue;  // a core left without PUs by a restriction
    for (int j = 0; j < nnuma; ++j) {
      hwloc_obj_t n = hwloc_get_obj_by_type(topo_, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(j));
      if (hwloc_bitmap_intersects(n->cpuset, c->cpuset)) {
        ci.numaNode = static_cast<int>(n->os_index);
        break;
      }
    }
    info_.cores.push_back(std::move(ci));
  }
  if (info_.cores.empty()) return fail(err::kOther, "hwloc found no cores in the topology");
  return kOk;
}

int Topology::bindProcess(const std::vector<unsigned>& cpuset) const {
  if (cpuset.empty()) return kOk;
  if (!topo_) return fail(err::kOther, "binding with no topology loaded");
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  for (unsigned c : cpuset) hwloc_bitmap_set(set, c);
  int rc = hwloc_set_cpubind(topo_, set, HWLOC_CPUBIND_PROCESS);
  int err = errno;
  hwloc_bitmap_free(set);
  if (rc != 0) return fail(err::kOther, "cannot bind to CPUs %s: %s", cpuListString(cpuset).c_str(), strerror(err));
  return kOk;
}

}  // namespace shmcoll::topo
