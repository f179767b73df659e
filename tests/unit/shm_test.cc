// The job segment: create, place, reserve, unlink; the memfd fallback; the
// refusal when no memory is left; NUMA placement of areas.
#include "os/shm.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <mpi.h>
#include <numaif.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "common/status.h"
#include "os/numa.h"

using namespace shmcoll;

namespace {

constexpr size_t kPage = 4096;

// Names this process created (they embed our pid) that are still in /dev/shm.
std::vector<std::string> ourShmNames() {
  std::vector<std::string> out;
  const std::string prefix = "shmcoll-" + std::to_string(getpid()) + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(e->d_name);
    closedir(d);
  }
  return out;
}

class ShmTest : public ::testing::Test {
 protected:
  void TearDown() override {
    shm::release(&seg_);
    EXPECT_TRUE(ourShmNames().empty()) << "left in /dev/shm: " << ourShmNames().front();
  }
  shm::Shm seg_;
};

uint64_t allocatedBytes(int fd) {
  struct stat st{};
  EXPECT_EQ(fstat(fd, &st), 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

std::string fdTarget(int fd) {
  char buf[512] = {0};
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = readlink(link.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

TEST_F(ShmTest, UniqueNameCarriesPidAndIsFresh) {
  std::string a = shm::uniqueName(), b = shm::uniqueName();
  EXPECT_EQ(a.rfind("/shmcoll-" + std::to_string(getpid()) + "-", 0), 0u) << a;
  EXPECT_NE(a, b);
}

TEST_F(ShmTest, NamedObjectIsPrivateAndUnlinkedAtOnce) {
  const std::string name = shm::uniqueName();
  ASSERT_EQ(shm::createNamed(name, 64 * kPage, &seg_), kOk) << lastReason();
  struct stat st{};
  ASSERT_EQ(fstat(seg_.fd, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(static_cast<size_t>(st.st_size), 64 * kPage);
  // The name is gone: nobody can attach, nothing is left behind.
  EXPECT_EQ(shm_open(name.c_str(), O_RDONLY, 0), -1);
  EXPECT_EQ(errno, ENOENT);
  EXPECT_NE(access(("/dev/shm" + name).c_str(), F_OK), 0);
  EXPECT_NE(fdTarget(seg_.fd).find("(deleted)"), std::string::npos) << fdTarget(seg_.fd);
  EXPECT_GE(seg_.fd, 3);
  EXPECT_TRUE(fcntl(seg_.fd, F_GETFD) & FD_CLOEXEC);
  EXPECT_FALSE(seg_.memfd);
  // Not reserved yet: no pages allocated by creating and mapping.
  EXPECT_EQ(allocatedBytes(seg_.fd), 0u);
}

TEST_F(ShmTest, CreateSegmentPlacesBeforeReservingAndReservesEverything) {
  const size_t size = 256 * kPage;
  int placeCalls = 0;
  uint64_t allocatedWhenPlaced = ~0ull;
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = size;
  // No page may exist yet when the placement runs (mincore on the mapping).
  req.place = [&](void* base, size_t len, size_t) {
    ++placeCalls;
    EXPECT_EQ(len, size);
    int mincoreResident = 0;
    std::vector<unsigned char> vec(len / kPage);
    EXPECT_EQ(mincore(base, len, vec.data()), 0);
    for (unsigned char v : vec) mincoreResident += v & 1;
    allocatedWhenPlaced = static_cast<uint64_t>(mincoreResident);
    return kOk;
  };
  ASSERT_EQ(shm::createSegment(req, &seg_), kOk) << lastReason();
  EXPECT_EQ(placeCalls, 1);
  EXPECT_EQ(allocatedWhenPlaced, 0u) << "pages existed before placement";
  EXPECT_FALSE(seg_.memfd);
  EXPECT_TRUE(seg_.fallbackReason.empty());
  EXPECT_GE(allocatedBytes(seg_.fd), size);
  // Zeroed and writable from end to end.
  const unsigned char* p = static_cast<const unsigned char*>(seg_.base);
  for (size_t i = 0; i < size; i += 997) ASSERT_EQ(p[i], 0) << i;
  memset(seg_.base, 0xab, size);
}

TEST_F(ShmTest, InheritableFdHasNoCloexecAndIsTheSameObject) {
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = 16 * kPage;
  ASSERT_EQ(shm::createSegment(req, &seg_), kOk) << lastReason();
  int fd = shm::inheritableFd(seg_);
  ASSERT_GE(fd, 3);
  EXPECT_FALSE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  struct stat a{}, b{};
  fstat(fd, &a);
  fstat(seg_.fd, &b);
  EXPECT_EQ(a.st_ino, b.st_ino);
  EXPECT_EQ(a.st_dev, b.st_dev);
  close(fd);
}

TEST_F(ShmTest, ForcedMemfd) {
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = 32 * kPage;
  req.backend = shm::Backend::kMemfd;
  ASSERT_EQ(shm::createSegment(req, &seg_), kOk) << lastReason();
  EXPECT_TRUE(seg_.memfd);
  EXPECT_TRUE(seg_.fallbackReason.empty());  // asked for, not a fallback
  EXPECT_NE(fdTarget(seg_.fd).find("memfd:"), std::string::npos) << fdTarget(seg_.fd);
  EXPECT_GE(allocatedBytes(seg_.fd), req.size);
}

TEST_F(ShmTest, SmallDevShmFallsBackToMemfdAndSaysWhy) {
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = 256 * kPage;  // 1 MiB
  req.namedCap = 4096;
  ASSERT_EQ(shm::createSegment(req, &seg_), kOk) << lastReason();
  EXPECT_TRUE(seg_.memfd);
  EXPECT_EQ(seg_.fallbackReason, "/dev/shm has 4.0 KiB free but the segment needs 1.0 MiB");
  EXPECT_GE(allocatedBytes(seg_.fd), req.size);
}

TEST_F(ShmTest, NamedOnlyRefusesWhenDevShmIsTooSmall) {
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = 256 * kPage;
  req.namedCap = 4096;
  req.backend = shm::Backend::kNamed;
  EXPECT_EQ(shm::createSegment(req, &seg_), MPI_ERR_NO_MEM);
  EXPECT_NE(lastReason().find("needs 1.0 MiB"), std::string::npos) << lastReason();
  EXPECT_EQ(seg_.fd, -1);
}

TEST_F(ShmTest, NoMemoryAtAllIsAClearRefusal) {
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = 256 * kPage;
  req.memCap = 64 * 1024;
  EXPECT_EQ(shm::createSegment(req, &seg_), MPI_ERR_NO_MEM);
  EXPECT_NE(lastReason().find("needs 1.0 MiB but only 64.0 KiB of memory is available"), std::string::npos)
      << lastReason();
  EXPECT_EQ(seg_.fd, -1);
  EXPECT_EQ(seg_.base, nullptr);
}

TEST_F(ShmTest, PlacementFailureAbortsCreation) {
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = 16 * kPage;
  req.place = [](void*, size_t, size_t) { return fail(MPI_ERR_OTHER, "placement says no"); };
  EXPECT_EQ(shm::createSegment(req, &seg_), MPI_ERR_OTHER);
  EXPECT_EQ(lastReason(), "placement says no");
  EXPECT_EQ(seg_.fd, -1);
}

// A real full /dev/shm: a 1 MiB tmpfs mounted over it in a private mount
// namespace (needs CAP_SYS_ADMIN; skipped otherwise).
TEST_F(ShmTest, RealSmallTmpfs) {
  pid_t pid = fork();
  if (pid == 0) {
    if (unshare(CLONE_NEWNS) != 0) _exit(77);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) _exit(77);
    if (mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m") != 0) _exit(77);
    const size_t size = 4 << 20;
    shm::Shm s;
    // 1. statvfs sees it is too small.
    shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
    req.size = size;
    if (shm::createSegment(req, &s) != kOk) _exit(10);
    if (!s.memfd || s.fallbackReason != "/dev/shm has 1.0 MiB free but the segment needs 4.0 MiB") _exit(11);
    shm::release(&s);
    // 2. Without the check, the reservation itself hits ENOSPC: still no SIGBUS, still memfd.
    req.precheck = false;
    if (shm::createSegment(req, &s) != kOk) _exit(12);
    if (!s.memfd || s.fallbackReason.find("ran out of space reserving 4.0 MiB") == std::string::npos) _exit(13);
    memset(s.base, 1, size);
    shm::release(&s);
    // 3. Named only: a clear error, and the tmpfs is empty again.
    req.backend = shm::Backend::kNamed;
    if (shm::createSegment(req, &s) != MPI_ERR_NO_MEM) _exit(14);
    DIR* d = opendir("/dev/shm");
    int entries = 0;
    while (dirent* e = readdir(d)) entries += e->d_name[0] != '.';
    closedir(d);
    _exit(entries == 0 ? 0 : 15);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) GTEST_SKIP() << "cannot mount a private tmpfs here";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(HumanBytes, Renders) {
  EXPECT_EQ(shm::humanBytes(0), "0 bytes");
  EXPECT_EQ(shm::humanBytes(1023), "1023 bytes");
  EXPECT_EQ(shm::humanBytes(1536), "1.5 KiB");
  EXPECT_EQ(shm::humanBytes(3ull << 30), "3.0 GiB");
}

// ---- NUMA placement -----------------------------------------------------------

TEST_F(ShmTest, PreferNodeIsRecordedOnTheSharedObject) {
  const size_t stride = 8 * kPage;
  const int nareas = 4;
  shm::Request req;
  req.hugePages = shm::HugePages::kOff;  // the backend under test, whatever pool the host has
  req.size = stride * nareas;
  std::vector<int> nodes(nareas, 0);
  req.place = [&](void* base, size_t, size_t) { return numa::placeAreas(base, stride, nodes, /*evenOnSingleNode=*/true); };
  ASSERT_EQ(shm::createSegment(req, &seg_), kOk) << lastReason();
  for (int a = 0; a < nareas; ++a) {
    char* area = static_cast<char*>(seg_.base) + a * stride;
    int mode = -1, node = -2;
    ASSERT_EQ(numa::policyAt(area, &mode, &node), kOk) << lastReason();
    EXPECT_EQ(mode, MPOL_PREFERRED) << "area " << a;
    EXPECT_EQ(node, 0) << "area " << a;
    // The reserved page really is on that node.
    int pageNode = -1;
    ASSERT_EQ(get_mempolicy(&pageNode, nullptr, 0, area, MPOL_F_NODE | MPOL_F_ADDR), 0);
    EXPECT_EQ(pageNode, 0);
  }
  // A second mapping (as a rank would have) sees the same policy: it lives in
  // the object, not in the launcher's mapping.
  void* again = mmap(nullptr, req.size, PROT_READ | PROT_WRITE, MAP_SHARED, seg_.fd, 0);
  ASSERT_NE(again, MAP_FAILED);
  int mode = -1, node = -2;
  ASSERT_EQ(numa::policyAt(static_cast<char*>(again) + stride, &mode, &node), kOk);
  EXPECT_EQ(mode, MPOL_PREFERRED);
  EXPECT_EQ(node, 0);
  munmap(again, req.size);
}

TEST_F(ShmTest, PreferNodeIsANoOpOnOneNodeByDefault) {
  ASSERT_EQ(shm::createNamed(shm::uniqueName(), 4 * kPage, &seg_), kOk);
  EXPECT_EQ(numa::preferNode(seg_.base, 4 * kPage, 0), kOk);
  EXPECT_EQ(numa::interleave(seg_.base, 4 * kPage), kOk);
  EXPECT_EQ(numa::preferNode(seg_.base, 4 * kPage, -1), kOk);  // no preference
  int mode = -1, node = -2;
  ASSERT_EQ(numa::policyAt(seg_.base, &mode, &node), kOk);
  if (numa::nodeCount() == 1) {
    EXPECT_EQ(mode, MPOL_DEFAULT);
  }
}

TEST_F(ShmTest, UnboundAreasAreInterleaved) {
  const size_t stride = 4 * kPage;
  ASSERT_EQ(shm::createNamed(shm::uniqueName(), 3 * stride, &seg_), kOk);
  ASSERT_EQ(numa::placeAreas(seg_.base, stride, {-1, -1, -1}, true), kOk) << lastReason();
  int mode = -1, node = -2;
  ASSERT_EQ(numa::policyAt(static_cast<char*>(seg_.base) + 2 * stride, &mode, &node), kOk);
  EXPECT_EQ(mode, MPOL_INTERLEAVE);
}

TEST_F(ShmTest, PreferNodeRejectsANodeThatDoesNotExist) {
  ASSERT_EQ(shm::createNamed(shm::uniqueName(), kPage, &seg_), kOk);
  EXPECT_NE(numa::preferNode(seg_.base, kPage, numa::maxNode() + 1, true), kOk);
}

}  // namespace

// Huge pages.  The page-run arithmetic on its own; then the segment on
// kernel-reserved huge pages when this host has some free (skipped
// otherwise), and the clear refusal when it has none.
TEST(PageRuns, BasePagesGiveOneRunPerArea) {
  const auto runs = numa::pageRuns(0x10000, 3 * kPage, 4, kPage);
  ASSERT_EQ(runs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(runs[i].start, 0x10000 + i * 3 * kPage);
    EXPECT_EQ(runs[i].len, 3 * kPage);
    EXPECT_EQ(runs[i].area, i);
  }
}

TEST(PageRuns, HugePagesGoToTheAreaHoldingTheirFirstByte) {
  const size_t huge = 2u << 20;
  // Areas of 1.5 MiB from 1 MiB into a huge page: area 0 [1, 2.5), 1 [2.5, 4),
  // 2 [4, 5.5), 3 [5.5, 7) MiB.  Pages at 0, 2, 4, 6 MiB: 0 -> area 0 (begins
  // before it), 2 -> area 0, 4 -> area 2, 6 -> area 3; area 1 gets none.
  const uintptr_t base = 64u << 20;
  const auto runs = numa::pageRuns(base + (1u << 20), 3u << 19, 4, huge);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].start, base);
  EXPECT_EQ(runs[0].len, 2 * huge);
  EXPECT_EQ(runs[0].area, 0u);
  EXPECT_EQ(runs[1].start, base + 2 * huge);
  EXPECT_EQ(runs[1].len, huge);
  EXPECT_EQ(runs[1].area, 2u);
  EXPECT_EQ(runs[2].start, base + 3 * huge);
  EXPECT_EQ(runs[2].len, huge);
  EXPECT_EQ(runs[2].area, 3u);
  // Every byte of every area lies in some run.
  EXPECT_LE(runs.front().start, base + (1u << 20));
  EXPECT_GE(runs.back().start + runs.back().len, base + (1u << 20) + 4 * (3u << 19));
  EXPECT_TRUE(numa::pageRuns(base, 0, 4, huge).empty());
  EXPECT_TRUE(numa::pageRuns(base, kPage, 0, huge).empty());
}

TEST_F(ShmTest, HugetlbSegmentOrAClearRefusal) {
  const shm::HugetlbSpace hs = shm::queryHugetlb();
  shm::Request req;
  req.size = 3 * kPage + 100;  // not a whole number of pages of either size
  req.hugePages = shm::HugePages::kHugetlb;
  size_t placedPage = 0;
  req.place = [&](void*, size_t, size_t pageSize) {
    placedPage = pageSize;
    return kOk;
  };
  const int rc = shm::createSegment(req, &seg_);
  if (!hs.pageSize || hs.freeBytes < hs.pageSize) {
    EXPECT_EQ(rc, MPI_ERR_NO_MEM);
    EXPECT_NE(lastReason().find("huge pages"), std::string::npos) << lastReason();
    EXPECT_EQ(seg_.base, nullptr);
    GTEST_SKIP() << "no free kernel-reserved huge pages here (vm.nr_hugepages); checked the refusal only";
  }
  ASSERT_EQ(rc, kOk) << lastReason();
  EXPECT_EQ(seg_.hugePages, "hugetlb");
  EXPECT_EQ(seg_.pageSize, hs.pageSize);
  EXPECT_EQ(placedPage, hs.pageSize);
  EXPECT_EQ(seg_.size, hs.pageSize);  // rounded up to one whole page
  EXPECT_EQ(reinterpret_cast<uintptr_t>(seg_.base) % hs.pageSize, 0u);
  // Reserved from the pool at creation.
  EXPECT_LE(shm::queryHugetlb().freeBytes, hs.freeBytes - hs.pageSize);
  memset(seg_.base, 0x5a, seg_.size);
  EXPECT_EQ(static_cast<unsigned char*>(seg_.base)[seg_.size - 1], 0x5a);
}

TEST_F(ShmTest, AutoUsesNormalPagesWhenNoHugePagesAreFree) {
  const shm::HugetlbSpace hs = shm::queryHugetlb();
  if (hs.pageSize && hs.freeBytes >= 64 * kPage) GTEST_SKIP() << "this host has free huge pages";
  shm::Request req;
  req.size = 64 * kPage;
  ASSERT_EQ(shm::createSegment(req, &seg_), kOk) << lastReason();
  EXPECT_NE(seg_.hugePages, "hugetlb");
  EXPECT_EQ(seg_.pageSize, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  EXPECT_EQ(seg_.size, 64 * kPage);
  EXPECT_FALSE(seg_.memfd);
  EXPECT_EQ(allocatedBytes(seg_.fd), 64 * kPage);
}
