#include "os/shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/random.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <boost/interprocess/shared_memory_object.hpp>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/status.h"

namespace shmcoll::shm {

namespace bip = boost::interprocess;

namespace {

// Reads one integer file such as memory.max; false when absent or "max".
bool readU64(const std::string& path, uint64_t* out) {
  std::ifstream f(path);
  std::string s;
  if (!(f >> s) || s == "max") return false;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (end == s.c_str()) return false;
  *out = v;
  return true;
}

// Memory the kernel says it can give without swapping others out
// (MemAvailable) plus free swap (shmem pages can be swapped).
uint64_t meminfoAvailable() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kb = 0, avail = 0, swap = 0;
  std::string unit;
  while (f >> key >> kb) {
    std::getline(f, unit);
    if (key == "MemAvailable:") avail = kb * 1024;
    else if (key == "SwapFree:") swap = kb * 1024;
  }
  return avail + swap;
}

// Room left under the memory cgroup limit (v2 or v1), UINT64_MAX when none.
// Shared memory is charged to the cgroup of the process that allocates the
// pages, i.e. the launcher, so exceeding it would OOM-kill inside the job.
uint64_t cgroupRoom() {
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  uint64_t room = UINT64_MAX;
  while (std::getline(f, line)) {
    // "hierarchy-id:controllers:path"
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string ctrl = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    std::string limitFile, usageFile, dir;
    if (ctrl.empty() && line.compare(0, 2, "0:") == 0) {
      dir = "/sys/fs/cgroup";
      limitFile = "memory.max";
      usageFile = "memory.current";
    } else if (ctrl == "memory" || ctrl.find("memory,") == 0 || ctrl.find(",memory") != std::string::npos) {
      dir = "/sys/fs/cgroup/memory";
      limitFile = "memory.limit_in_bytes";
      usageFile = "memory.usage_in_bytes";
    } else {
      continue;
    }
    // Inside a cgroup namespace the path may not exist as such: try it, then the root.
    for (const std::string& d : {dir + path, dir}) {
      uint64_t limit, usage = 0;
      if (!readU64(d + "/" + limitFile, &limit)) continue;
      readU64(d + "/" + usageFile, &usage);
      // v1 reports "no limit" as a huge page-rounded number.
      if (limit >= (1ull << 62)) break;
      room = std::min(room, limit > usage ? limit - usage : 0);
      break;
    }
  }
  return room;
}

// /sys/kernel/mm/transparent_hugepage/shmem_enabled's choice, e.g. "advise".
std::string shmemThpMode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/shmem_enabled");
  std::string w;
  while (f >> w)
    if (w.size() > 2 && w.front() == '[' && w.back() == ']') return w.substr(1, w.size() - 2);
  return {};
}

// Asks for transparent huge pages on the mapping (before any page exists).
void adviseHuge(Shm* shm) {
#ifdef MADV_HUGEPAGE
  if (madvise(shm->base, shm->size, MADV_HUGEPAGE) == 0) shm->hugePages = "advised";
#endif
}

int placeAndReserve(const Request& req, Shm* shm) {
  if (!shm->pageSize) shm->pageSize = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (req.hugePages == HugePages::kAuto && shm->hugePages.empty()) adviseHuge(shm);
  if (req.place) {
    int rc = req.place(shm->base, shm->size, shm->pageSize);
    if (rc != kOk) return rc;
  }
#ifdef MADV_POPULATE_WRITE
  // fallocate has no mapping, so it cannot see MADV_HUGEPAGE; populate
  // through the mapping instead (errors come back as a return value, never
  // as SIGBUS) and let fallocate reserve whatever that could not.
  if (shm->hugePages == "advised" && shmemThpMode() == "advise")
    (void)madvise(shm->base, shm->size, MADV_POPULATE_WRITE);
#endif
  return reserve(*shm);
}

// The segment on kernel-reserved huge pages: memfd(MFD_HUGETLB), the size
// rounded up to whole pages, mapped and reserved (fallocate takes the pages
// from the pool, so a shortage fails here and not at a rank's first touch).
int createHugetlb(const Request& req, Shm* out) {
  *out = Shm{};
#ifdef MFD_HUGETLB
  const HugetlbSpace hs = queryHugetlb();
  if (!hs.pageSize) return fail(err::kNoMem, "the kernel has no huge pages reserved (vm.nr_hugepages is 0)");
  const size_t size = (req.size + hs.pageSize - 1) / hs.pageSize * hs.pageSize;
  if (size > hs.freeBytes)
    return fail(err::kNoMem, "the segment needs %s of huge pages, %s are free", humanBytes(size).c_str(),
                humanBytes(hs.freeBytes).c_str());
  int rc = createMemfd(size, out, MFD_HUGETLB);
  if (rc != kOk) return rc;
  out->pageSize = hs.pageSize;
  out->hugePages = "hugetlb";
  rc = placeAndReserve(req, out);
  if (rc != kOk) release(out);
  return rc;
#else
  (void)req;
  return fail(err::kOther, "this system has no MFD_HUGETLB");
#endif
}

}  // namespace

HugetlbSpace queryHugetlb() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t v = 0, freePages = 0, rsvd = 0, kib = 0;
  std::string unit;
  while (f >> key >> v) {
    if (key == "HugePages_Free:") freePages = v;
    else if (key == "HugePages_Rsvd:") rsvd = v;
    else if (key == "Hugepagesize:") kib = v;
    std::getline(f, unit);
  }
  HugetlbSpace h;
  if (kib && freePages > rsvd) {
    h.pageSize = kib * 1024;
    h.freeBytes = (freePages - rsvd) * h.pageSize;
  }
  return h;
}

std::string humanBytes(uint64_t b) {
  char buf[64];
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (b < 1024) {
    snprintf(buf, sizeof buf, "%" PRIu64 " bytes", b);
    return buf;
  }
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
  return buf;
}

std::string uniqueName() {
  uint64_t rnd = 0;
  if (getrandom(&rnd, sizeof rnd, GRND_NONBLOCK) != sizeof rnd) {
    // No entropy yet (early boot): the pid plus a clock still make a fresh
    // name, and create_only refuses to reuse an existing one anyway.
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    rnd = static_cast<uint64_t>(ts.tv_nsec) * 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(ts.tv_sec);
  }
  char buf[64];
  snprintf(buf, sizeof buf, "/shmcoll-%d-%016" PRIx64, static_cast<int>(getpid()), rnd);
  return buf;
}

Space querySpace(const std::string& namedDir, uint64_t namedCap, uint64_t memCap) {
  Space s;
  struct statvfs sv{};
  if (statvfs(namedDir.c_str(), &sv) == 0 && access(namedDir.c_str(), W_OK | X_OK) == 0) {
    s.namedAvailable = true;
    s.namedFree = std::min<uint64_t>(static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize, namedCap);
  }
  s.memAvailable = std::min({meminfoAvailable(), cgroupRoom(), memCap});
  return s;
}


namespace {

// Sizes the object behind out->fd (`what`, for messages) to `size` bytes and
// maps it; releases `out` on failure.
int sizeAndMap(Shm* out, size_t size, const char* what) {
  if (ftruncate(out->fd, static_cast<off_t>(size)) != 0) {
    int err = errno;
    release(out);
    return fail(err == ENOSPC || err == ENOMEM ? err::kNoMem : err::kOther, "cannot size %s to %zu bytes: %s", what,
                size, strerror(err));
  }
  out->size = size;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, out->fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    release(out);
    return fail(err::kNoMem, "cannot map %zu bytes of %s: %s", size, what, strerror(err));
  }
  out->base = p;
  return kOk;
}

}  // namespace

int createNamed(const std::string& name, size_t size, Shm* out) {
  *out = Shm{};
  // Boost.Interprocess throws; no exception may leave the engine, so each
  // failure becomes a status with the reason.
  try {
    bip::permissions perm(0600);
    bip::shared_memory_object obj(bip::create_only, name.c_str(), bip::read_write, perm);
    int fd = fcntl(obj.get_mapping_handle().handle, F_DUPFD_CLOEXEC, 3);
    int err = errno;
    // Unlink first of all: from here on nothing can attach and nothing is left
    // behind, whatever happens to this process.
    bip::shared_memory_object::remove(name.c_str());
    if (fd < 0) return fail(err::kOther, "dup of the shared memory fd: %s", strerror(err));
    out->fd = fd;
    out->name = name;
  } catch (const bip::interprocess_exception& e) {
    return fail(err::kOther, "cannot create shared memory object %s: %s", name.c_str(), e.what());
  }
  return sizeAndMap(out, size, ("shared memory object " + name).c_str());
}

int createMemfd(size_t size, Shm* out, unsigned flags) {
  *out = Shm{};
  int fd = memfd_create("shmcoll", MFD_CLOEXEC | flags);
  if (fd < 0) return fail(err::kOther, "memfd_create(%#x): %s", MFD_CLOEXEC | flags, strerror(errno));
  // Keep it clear of 0-2 so a rank's stdio redirection cannot clobber it.
  if (fd < 3) {
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    fd = hi;
    if (fd < 0) return fail(err::kOther, "dup of the memfd: %s", strerror(errno));
  }
  out->fd = fd;
  out->memfd = true;
  return sizeAndMap(out, size, "a memfd");
}

int reserve(const Shm& shm) {
  int rc = posix_fallocate(shm.fd, 0, static_cast<off_t>(shm.size));
  if (rc == 0) return kOk;
  if (rc == ENOSPC || rc == ENOMEM || rc == EFBIG)
    return fail(err::kNoMem, "cannot reserve %s of %s: %s", humanBytes(shm.size).c_str(),
                shm.memfd ? "memory" : "/dev/shm", strerror(rc));
  return fail(err::kOther, "posix_fallocate of %zu bytes: %s", shm.size, strerror(rc));
}

void release(Shm* shm) {
  if (shm->base) munmap(shm->base, shm->size);
  if (shm->fd >= 0) close(shm->fd);
  *shm = Shm{};
}

int inheritableFd(const Shm& shm) { return fcntl(shm.fd, F_DUPFD, 3); }

int createSegment(const Request& req, Shm* out) {
  *out = Shm{};
  const uint64_t need = req.size;
  const Space sp = querySpace(req.namedDir, req.namedCap, req.memCap);
  const std::string needS = humanBytes(need);
  const std::string namedS =
      sp.namedAvailable ? humanBytes(sp.namedFree) + " free in " + req.namedDir : req.namedDir + " not available";

  // The address-space limit (ulimit -v) caps the mapping, whatever is free.
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY && need >= as.rlim_cur)
    return fail(err::kNoMem, "the shared segment needs %s of address space but the limit is %s (ulimit -v)",
                needS.c_str(), humanBytes(as.rlim_cur).c_str());
  if (req.precheck && need > sp.memAvailable)
    return fail(err::kNoMem, "the shared segment needs %s but only %s of memory is available (%s)",
                needS.c_str(), humanBytes(sp.memAvailable).c_str(), namedS.c_str());

  if (req.hugePages != HugePages::kOff) {
    const HugetlbSpace hs = queryHugetlb();
    if (req.hugePages == HugePages::kHugetlb || (hs.pageSize && hs.freeBytes >= need)) {
      Shm s;
      int rc = createHugetlb(req, &s);
      if (rc == kOk) {
        *out = std::move(s);
        return kOk;
      }
      if (req.hugePages == HugePages::kHugetlb) return rc;
      // Otherwise quietly on to normal pages.
    }
  }

  std::string why;  // why the named object was not used
  if (req.backend != Backend::kMemfd) {
    if (req.precheck && !sp.namedAvailable) {
      why = req.namedDir + " is not available";
    } else if (req.precheck && need > sp.namedFree) {
      why = req.namedDir + " has " + humanBytes(sp.namedFree) + " free but the segment needs " + needS;
    } else {
      Shm s;
      int rc = createNamed(req.name.empty() ? uniqueName() : req.name, req.size, &s);
      if (rc == kOk) {
        rc = placeAndReserve(req, &s);
        if (rc == kOk) {
          *out = std::move(s);
          return kOk;
        }
        release(&s);
        if (rc != err::kNoMem) return rc;
        why = req.namedDir + " ran out of space reserving " + needS + " (" + humanBytes(sp.namedFree) +
              " was free)";
      } else {
        why = lastReason();
      }
    }
    if (req.backend == Backend::kNamed) return fail(err::kNoMem, "%s", why.c_str());
  }

  Shm s;
  int rc = createMemfd(req.size, &s);
  if (rc == kOk) rc = placeAndReserve(req, &s);
  if (rc != kOk) {
    release(&s);
    if (rc == err::kNoMem) {
      const bool limited = as.rlim_cur != RLIM_INFINITY;
      return fail(err::kNoMem, "no memory left for the shared segment: it needs %s, %s of memory is available (%s)%s",
                  needS.c_str(), humanBytes(sp.memAvailable).c_str(), namedS.c_str(),
                  limited ? ("; the address-space limit (ulimit -v) is " + humanBytes(as.rlim_cur)).c_str() : "");
    }
    return rc;
  }
  s.fallbackReason = why;
  *out = std::move(s);
  return kOk;
}

}  // namespace shmcoll::shm
