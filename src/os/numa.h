// NUMA placement of shared memory ranges.
//
// The launcher places each rank's area of the shared segment on the NUMA node
// of the core that rank is bound to, between mapping the segment and reserving
// its pages (posix_fallocate): the policy is stored in the shmem object itself
// (a shared policy keyed by file offset), so the pages allocated by the
// reservation, and any page the kernel allocates later, land where the policy
// says, whichever process touches them first.
//
// We use MPOL_PREFERRED rather than MPOL_BIND: a full node then spills over to
// another node instead of failing the reservation or OOM-killing a rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace shmcoll::numa {

// Number of NUMA nodes with memory (1 when the kernel has no NUMA support).
int nodeCount();

// Highest node number the kernel may report (for sizing node masks).
int maxNode();

// Marks [addr, addr + len) as preferring node `node` (MPOL_PREFERRED).
// `addr` must be page-aligned; `len` is rounded up to whole pages by the
// kernel.  On a machine with a single node this is a no-op (there is nowhere
// else for the pages to go) unless `evenOnSingleNode` is set, which tests use
// to observe the policy.  `node` < 0 means "no preference": a no-op.
// Returns 0 or an MPI error class with a reason (common/status.h).
int preferNode(void* addr, size_t len, int node, bool evenOnSingleNode = false);

// Interleaves [addr, addr + len) page by page over all nodes with memory
// (MPOL_INTERLEAVE): the placement for ranks that are not bound, so that no
// node holds the whole segment.  No-op on a single node unless
// `evenOnSingleNode`.  Returns 0 or an MPI error class with a reason.
int interleave(void* addr, size_t len, bool evenOnSingleNode = false);

// Places `count` consecutive areas of `stride` bytes starting at `first`:
// area i prefers node nodes[i]; when every entry is -1 (unbound ranks) the
// whole range is interleaved instead.  Policies apply per page of
// `pageSize` bytes (0: the base page size; a huge page size for a mapping of
// huge pages, which mbind accepts only whole): a page goes to the area that
// holds its first byte, so with pages larger than an area several areas
// share one page, placed for the first of them.  Returns 0 or an MPI error
// class with a reason.
int placeAreas(void* first, size_t stride, const std::vector<int>& nodes, bool evenOnSingleNode = false,
               size_t pageSize = 0);

// The pages placeAreas gives each area: runs of whole pages [start, start + len)
// for area `area`, in address order (exposed for tests).
struct PageRun {
  uintptr_t start;
  size_t len;
  size_t area;
};
std::vector<PageRun> pageRuns(uintptr_t first, size_t stride, size_t count, size_t pageSize);

// The policy of the page at `addr` (MPOL_F_ADDR) as (mode, first node of the
// node mask) for tests and diagnostics: *mode is MPOL_DEFAULT, MPOL_PREFERRED,
// ... and *node is -1 when the mask is empty.  Returns 0 or an error class.
int policyAt(void* addr, int* mode, int* node);

}  // namespace shmcoll::numa
