// The job's shared segment: creation, NUMA placement hook, reservation.
//
// createSegment() follows one recipe so that no failure can surface later as
// a SIGBUS in a rank, and nothing is ever left behind in /dev/shm:
//   1. create the POSIX object with Boost.Interprocess (create_only, 0600)
//      under a unique name, keep its fd, and unlink the name at once: from
//      then on the object lives only as long as some fd or mapping does, so
//      no other process can attach to it and however the job ends (even
//      SIGKILL of the launcher) the memory is freed.  The only window where a
//      name exists is between shm_open and shm_unlink, a few system calls;
//   2. ftruncate to the size and mmap it;
//   3. call the placement hook (mbind of each rank's area), before any page
//      exists, so the reservation allocates every page under its policy;
//   4. reserve all pages with posix_fallocate: a full /dev/shm fails here,
//      with a clear message, instead of at some rank's first touch.
// Huge pages (Request::hugePages), tried before the steps above:
//   - kernel-reserved huge pages: when enough of them are free
//     (HugePages_Free - HugePages_Rsvd, in /proc/meminfo) the segment is a
//     memfd with MFD_HUGETLB, its size rounded up to whole huge pages; the
//     placement hook gets the huge page size, since NUMA policies then apply
//     per huge page;
//   - otherwise madvise(MADV_HUGEPAGE) on the mapping before the pages are
//     reserved, so shared memory takes transparent huge pages where
//     /sys/kernel/mm/transparent_hugepage/shmem_enabled allows them ("always"
//     and "within_size" at the reservation; for "advise" the pages are
//     reserved through the advised mapping with MADV_POPULATE_WRITE, which a
//     plain fallocate would bypass, falling back to fallocate if that fails).
// Both fall back quietly; Shm::hugePages says what was used.
// When /dev/shm cannot hold the segment (too little free space according to
// statvfs, ENOSPC from the reservation, or no /dev/shm at all) the same steps
// run on a memfd (anonymous shmem, limited only by memory), and
// Shm::fallbackReason says why, for the caller to report once.  Only when
// neither fits does createSegment fail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace shmcoll::shm {

enum class Backend {
  kAuto,   // /dev/shm, then memfd
  kNamed,  // /dev/shm only (tests)
  kMemfd,  // memfd only (tests, or SHMCOLL_SHM_BACKEND=memfd)
};

struct Shm {
  int fd = -1;             // O_CLOEXEC; the caller passes a dup of it to ranks
  void* base = nullptr;    // mapping of the whole segment, read/write, shared
  size_t size = 0;
  bool memfd = false;      // true when the memfd fallback (or kMemfd) was used
  std::string name;        // the (already unlinked) /dev/shm name, "" for memfd
  std::string fallbackReason;  // why /dev/shm was not used, "" when it was (or kMemfd)
  size_t pageSize = 0;     // of the mapping: the base page, or the huge page size with hugetlb
  std::string hugePages;   // "hugetlb", "advised" (MADV_HUGEPAGE accepted), or "" (none)
};

enum class HugePages {
  kAuto,     // kernel-reserved huge pages when enough are free, else advise transparent ones
  kOff,      // neither
  kHugetlb,  // kernel-reserved huge pages or fail (tests, SHMCOLL_HUGEPAGES=hugetlb)
};

// Free kernel-reserved huge pages, in bytes, and their size (0 when none).
struct HugetlbSpace {
  uint64_t pageSize = 0;
  uint64_t freeBytes = 0;
};
HugetlbSpace queryHugetlb();

// Space the two backends can offer, in bytes.
struct Space {
  bool namedAvailable = false;  // the /dev/shm directory exists and is usable
  uint64_t namedFree = 0;       // statvfs f_bavail * f_frsize of /dev/shm (after the cap)
  uint64_t memAvailable = 0;    // MemAvailable + SwapFree, capped by the cgroup memory limit
};

struct Request {
  size_t size = 0;
  std::string name;                    // "" for uniqueName()
  Backend backend = Backend::kAuto;
  std::string namedDir = "/dev/shm";   // where shm_open objects live (for statvfs)
  uint64_t namedCap = UINT64_MAX;      // test hook: pretend /dev/shm has at most this free
  uint64_t memCap = UINT64_MAX;        // test hook: pretend only this much memory is available
  bool precheck = true;                // false: skip the statvfs/meminfo checks (tests reach ENOSPC)
  HugePages hugePages = HugePages::kAuto;
  // Called with the mapping before any page is reserved, and the page size
  // that NUMA policies apply at; returns 0 or an MPI error class with a
  // reason, which aborts the creation.
  std::function<int(void* base, size_t size, size_t pageSize)> place;
};

// "/shmcoll-<pid>-<16 hex digits of randomness>".
std::string uniqueName();

// What the backends could hold now (see Space).  `namedDir` is statvfs'ed.
Space querySpace(const std::string& namedDir, uint64_t namedCap = UINT64_MAX, uint64_t memCap = UINT64_MAX);

// Runs the recipe above.  On success *out owns the fd and the mapping
// (release() frees them) and /dev/shm holds no name.  Returns 0, or
// err::kNoMem when no backend has room (the reason names the size needed
// and the space free), or another MPI error class, always with a reason
// (common/status.h); *out is then empty.
int createSegment(const Request& req, Shm* out);

// Creates, unlinks and maps a named object without reserving it (step 1-2).
int createNamed(const std::string& name, size_t size, Shm* out);
// The same on a memfd.
int createMemfd(size_t size, Shm* out, unsigned flags = 0);  // flags: e.g. MFD_HUGETLB
// posix_fallocate of the whole object (step 4).  err::kNoMem on ENOSPC or
// ENOMEM, another class otherwise.
int reserve(const Shm& shm);

// Unmaps and closes; leaves *shm empty.  Safe on an empty Shm.
void release(Shm* shm);

// A duplicate of shm.fd without FD_CLOEXEC and numbered >= 3, to be
// inherited across exec by the ranks.  Returns the fd or -1 (errno set).
int inheritableFd(const Shm& shm);

// "12.0 MiB" style rendering of a byte count, for messages.
std::string humanBytes(uint64_t bytes);

}  // namespace shmcoll::shm
