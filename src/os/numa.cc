#include "os/numa.h"

#include <numa.h>
#include <numaif.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "common/status.h"

namespace shmcoll::numa {

namespace {

constexpr size_t kBitsPerWord = 8 * sizeof(unsigned long);

// A node mask large enough for every node the kernel can name; mbind and
// get_mempolicy reject masks shorter than the kernel's node count.
std::vector<unsigned long> emptyMask() { return std::vector<unsigned long>(maxNode() / kBitsPerWord + 1, 0); }

unsigned long maskBits(const std::vector<unsigned long>& m) { return m.size() * kBitsPerWord; }

}  // namespace

int nodeCount() {
  static const int n = [] {
    if (numa_available() < 0) return 1;
    int c = numa_num_configured_nodes();
    return c > 0 ? c : 1;
  }();
  return n;
}

int maxNode() {
  static const int n = [] {
    if (numa_available() < 0) return 0;
    int p = numa_num_possible_nodes();
    return p > 0 ? p - 1 : 0;
  }();
  return n;
}

int preferNode(void* addr, size_t len, int node, bool evenOnSingleNode) {
  if (node < 0 || len == 0) return kOk;
  if (nodeCount() <= 1 && !evenOnSingleNode) return kOk;
  if (numa_available() < 0) return kOk;  // kernel without NUMA: nothing to place
  if (node > maxNode()) return fail(err::kArg, "NUMA node %d does not exist (highest is %d)", node, maxNode());
  std::vector<unsigned long> mask = emptyMask();
  mask[node / kBitsPerWord] |= 1ul << (node % kBitsPerWord);
  if (mbind(addr, len, MPOL_PREFERRED, mask.data(), maskBits(mask), 0) != 0)
    return fail(err::kOther, "mbind(%p, %zu bytes, MPOL_PREFERRED, node %d): %s", addr, len, node,
                strerror(errno));
  return kOk;
}

int interleave(void* addr, size_t len, bool evenOnSingleNode) {
  if (len == 0) return kOk;
  if (nodeCount() <= 1 && !evenOnSingleNode) return kOk;
  if (numa_available() < 0) return kOk;
  std::vector<unsigned long> mask = emptyMask();
  // Only nodes with memory: interleaving over a memoryless node fails.
  bitmask* mems = numa_get_mems_allowed();
  for (int n = 0; n <= maxNode(); ++n)
    if (numa_bitmask_isbitset(mems, n)) mask[n / kBitsPerWord] |= 1ul << (n % kBitsPerWord);
  numa_bitmask_free(mems);
  if (mbind(addr, len, MPOL_INTERLEAVE, mask.data(), maskBits(mask), 0) != 0)
    return fail(err::kOther, "mbind(%p, %zu bytes, MPOL_INTERLEAVE): %s", addr, len, strerror(errno));
  return kOk;
}

std::vector<PageRun> pageRuns(uintptr_t first, size_t stride, size_t count, size_t pageSize) {
  std::vector<PageRun> runs;
  if (count == 0 || stride == 0 || pageSize == 0) return runs;
  const uintptr_t begin = first / pageSize * pageSize;
  const uintptr_t end = (first + stride * count + pageSize - 1) / pageSize * pageSize;
  for (uintptr_t page = begin; page < end; page += pageSize) {
    // The area holding the page's first byte (the first area for a page that
    // begins before it).
    const size_t area = page <= first ? 0 : std::min<size_t>((page - first) / stride, count - 1);
    if (!runs.empty() && runs.back().area == area)
      runs.back().len += pageSize;
    else
      runs.push_back({page, pageSize, area});
  }
  return runs;
}

int placeAreas(void* first, size_t stride, const std::vector<int>& nodes, bool evenOnSingleNode, size_t pageSize) {
  bool anyBound = false;
  for (int n : nodes) anyBound |= n >= 0;
  if (!pageSize) pageSize = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t f = reinterpret_cast<uintptr_t>(first);
  if (!anyBound) {  // the whole range as one area
    const auto all = pageRuns(f, stride * nodes.size(), 1, pageSize);
    return all.empty() ? kOk : interleave(reinterpret_cast<void*>(all[0].start), all[0].len, evenOnSingleNode);
  }
  for (const PageRun& r : pageRuns(f, stride, nodes.size(), pageSize))
    SHMCOLL_CHECK(preferNode(reinterpret_cast<void*>(r.start), r.len, nodes[r.area], evenOnSingleNode));
  return kOk;
}

int policyAt(void* addr, int* mode, int* node) {
  std::vector<unsigned long> mask = emptyMask();
  int m = 0;
  if (get_mempolicy(&m, mask.data(), maskBits(mask), addr, MPOL_F_ADDR) != 0)
    return fail(err::kOther, "get_mempolicy(%p): %s", addr, strerror(errno));
  *mode = m;
  *node = -1;
  for (size_t i = 0; i < maskBits(mask); ++i)
    if (mask[i / kBitsPerWord] & (1ul << (i % kBitsPerWord))) {
      *node = static_cast<int>(i);
      break;
    }
  return kOk;
}

}  // namespace shmcoll::numa
