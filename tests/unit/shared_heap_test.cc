// The shared heap (os/shared_heap.h) on its own: blocks, alignment, reuse,
// zeroing, in-place growth, pages given back, bad frees, a peer's view of the
// memfd, and the fork handler's private copy.  (The malloc interposer that
// uses it lives only in libshmcoll.so: tests/mpi/shared_malloc.c.)
#include "os/shared_heap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using shmcoll::os::SharedHeap;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * 1024;

struct Heap {
  SharedHeap h;
  // (keep = 0: every free gives pages back, so the tests see the layout)
  explicit Heap(uint64_t keep = 0) { open(keep); }
  void open(uint64_t keep) { ASSERT_TRUE(h.open(1ull << 30, keep)); }
  ~Heap() { h.destroy(); }
};

unsigned char pat(uint64_t id, uint64_t i) { return static_cast<unsigned char>((id * 131 + i * 7 + (i >> 9)) ^ 0x5a); }

void fill(void* p, uint64_t n, uint64_t id) {
  auto* c = static_cast<unsigned char*>(p);
  for (uint64_t i = 0; i < n; ++i) c[i] = pat(id, i);
}

// First offset whose byte differs from the pattern, or n.
uint64_t check(const void* p, uint64_t n, uint64_t id) {
  auto* c = static_cast<const unsigned char*>(p);
  for (uint64_t i = 0; i < n; ++i)
    if (c[i] != pat(id, i)) return i;
  return n;
}

bool allZero(const void* p, uint64_t n) {
  auto* c = static_cast<const unsigned char*>(p);
  return std::all_of(c, c + n, [](unsigned char x) { return x == 0; });
}

uint64_t residentBytes(int fd) {
  struct stat st;
  EXPECT_EQ(fstat(fd, &st), 0);
  return static_cast<uint64_t>(st.st_blocks) * 512;
}

// KiB of private ("Anonymous") memory over [p, p + n) (/proc/self/smaps).
long anonKiB(const void* p, uint64_t n) {
  FILE* f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  bool in = false;
  long kb = 0;
  const uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + n;
  while (fgets(line, sizeof line, f)) {
    unsigned long a, b;
    char c;
    if (sscanf(line, "%lx-%lx %c", &a, &b, &c) == 3 && strchr(line, '-') < strchr(line, ' '))
      in = a < hi && b > lo;
    else if (in && !strncmp(line, "Anonymous:", 10))
      kb += strtol(line + 10, nullptr, 10);
  }
  fclose(f);
  return kb;
}

// Pages of [p, p + n) with an entry in this process's page tables (/proc/self/pagemap).
uint64_t presentPages(const void* p, uint64_t n) {
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  const uint64_t first = reinterpret_cast<uintptr_t>(p) / 4096, pages = n / 4096;
  std::vector<uint64_t> e(pages);
  const ssize_t want = static_cast<ssize_t>(pages * 8);
  const bool ok = pread(fd, e.data(), static_cast<size_t>(want), static_cast<off_t>(first * 8)) == want;
  close(fd);
  return ok ? static_cast<uint64_t>(std::count_if(e.begin(), e.end(), [](uint64_t v) { return v >> 63; })) : 0;
}

// Whether the kernel moves a shared mapping's page tables with
// MREMAP_DONTUNMAP (Linux 5.13 and later), which a multi-threaded parent
// needs to park the heap's mapping at fork().
bool kernelMovesSharedMappingsKeepingThem() {
  constexpr size_t len = 4096;
  const int fd = memfd_create("shared_heap_test-probe", MFD_CLOEXEC);
  if (fd < 0) return false;
  bool ok = false;
  if (ftruncate(fd, len) == 0) {
    void* a = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void* to = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (a != MAP_FAILED && to != MAP_FAILED) {
      ok = mremap(a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | 4 /* MREMAP_DONTUNMAP */, to) != MAP_FAILED;
      munmap(to, len);
    }
    if (a != MAP_FAILED) munmap(a, len);
  }
  close(fd);
  return ok;
}

// Bytes of this process's mappings of the file with inode `ino` (/proc/self/maps).
uint64_t inodeMappedBytes(uint64_t ino) {
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) return ~0ull;
  char line[512];
  uint64_t total = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi, inode;
    if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &lo, &hi, &inode) == 3 && inode == ino) total += hi - lo;
  }
  fclose(f);
  return total;
}

// Forks with `big` (n bytes, pattern 1) live; the child checks that nothing
// was copied and that it keeps pattern 1 while the parent writes pattern 3
// over everything; then the parent frees nothing and returns after the
// child has exited (its status in *status).
void forkWithBigBuffer(SharedHeap& h, char* big, uint64_t n, int* status) {
  int toChild[2], toParent[2];
  ASSERT_EQ(pipe(toChild), 0);
  ASSERT_EQ(pipe(toParent), 0);
  h.prepareFork();
  pid_t c = fork();
  ASSERT_GE(c, 0);
  if (c == 0) {
    h.afterForkChild();
    int bad = 0;
    if (h.shared() || h.fd() != -1) bad |= 1;
    if (anonKiB(big, n) >= 1024) bad |= 2;  // fork copied nothing
    char x = 0;
    if (read(toChild[0], &x, 1) != 1) bad |= 4;
    if (check(big, n, 1) != n) bad |= 8;  // the parent's writes did not reach us
    fill(big, n / 4, 2);
    if (anonKiB(big, n) < static_cast<long>(n / 4 / KiB)) bad |= 16;
    void* r = h.allocate(4 * MiB, 64, true);
    if (!r || !allZero(r, 4 * MiB)) bad |= 32;
    if (r) h.release(r);
    (void)!write(toParent[1], &x, 1);
    _exit(bad);
  }
  h.afterForkParent();
  EXPECT_EQ(h.low(), h.top());
  EXPECT_FALSE(h.sharedRange(big, n));  // frozen: private to us now
  void* after = h.allocate(MiB, 64, false);
  EXPECT_TRUE(h.sharedRange(after, MiB));  // the shared part goes on above
  h.release(after);
  fill(big, n, 3);
  char x = 0;
  ASSERT_EQ(write(toChild[1], &x, 1), 1);
  ASSERT_EQ(read(toParent[0], &x, 1), 1);
  EXPECT_TRUE(h.frozenHeld());
  ASSERT_EQ(waitpid(c, status, 0), c);
  for (int fd : {toChild[0], toChild[1], toParent[0], toParent[1]}) close(fd);
}

// Forks through the heap's handlers (as pthread_atfork runs them); the
// child runs childBits() and exits with what it returns (0: all well); the
// parent waits for it and returns its exit status, or -1 if it did not exit.
template <class Child>
int forkAndWait(SharedHeap& h, Child&& childBits) {
  h.prepareFork();
  const pid_t c = fork();
  if (c == 0) {
    h.afterForkChild();
    _exit(childBits());
  }
  h.afterForkParent();
  int status = 0;
  if (c < 0 || waitpid(c, &status, 0) != c || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// A second thread in this process, asleep until end() (or destruction):
// with it running, the heap cannot make itself whole after a fork.
class SleepingThread {
 public:
  SleepingThread() {
    if (pipe(hold_) != 0) abort();
    t_ = std::thread([this] {
      char x;
      (void)!read(hold_[0], &x, 1);
    });
  }
  void end() {
    if (!t_.joinable()) return;
    (void)!write(hold_[1], "x", 1);
    t_.join();
    close(hold_[0]);
    close(hold_[1]);
  }
  ~SleepingThread() { end(); }

 private:
  int hold_[2];
  std::thread t_;
};

}  // namespace

TEST(SharedHeapTest, BlocksHoldTheirBytesAndAllFreedLeavesNothing) {
  Heap H;
  std::mt19937_64 rng(7);
  struct B { void* p; uint64_t n; uint64_t id; };
  std::vector<B> live;
  uint64_t id = 0;
  for (int round = 0; round < 400; ++round) {
    if (live.empty() || rng() % 3) {
      uint64_t n = 64 * KiB + rng() % (3 * MiB);
      void* p = H.h.allocate(n, 64, false);
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
      ASSERT_GE(H.h.usableSize(p), n);
      fill(p, n, ++id);
      live.push_back({p, n, id});
    } else {
      size_t k = rng() % live.size();
      ASSERT_EQ(check(live[k].p, live[k].n, live[k].id), live[k].n) << "block " << live[k].id;
      H.h.release(live[k].p);
      live.erase(live.begin() + static_cast<long>(k));
    }
  }
  std::shuffle(live.begin(), live.end(), rng);
  for (B& b : live) {
    ASSERT_EQ(check(b.p, b.n, b.id), b.n) << "block " << b.id;
    H.h.release(b.p);
  }
  EXPECT_EQ(H.h.inUse(), 0u);
  EXPECT_EQ(H.h.top(), 0u);
  EXPECT_EQ(H.h.freeBlocks(), 0u);
  EXPECT_EQ(H.h.cached(), 0u);
  EXPECT_EQ(residentBytes(H.h.fd()), 0u);
}

TEST(SharedHeapTest, AlignmentIsHonoured) {
  Heap H;
  std::vector<void*> ps;
  for (uint64_t a : {uint64_t{64}, uint64_t{128}, uint64_t{4096}, uint64_t{65536}, 2 * MiB, 8 * MiB}) {
    for (uint64_t n : {64 * KiB, 300 * KiB + 3, 3 * MiB}) {
      void* p = H.h.allocate(n, a, false);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % a, 0u) << "align " << a;
      EXPECT_GE(H.h.usableSize(p), n);
      fill(p, n, a + n);
      ps.push_back(p);
    }
  }
  for (void* p : ps) H.h.release(p);
  EXPECT_EQ(H.h.top(), 0u);
}

TEST(SharedHeapTest, ZeroedRequestsAreZeroAfterReuse) {
  Heap H;
  void* a = H.h.allocate(MiB, 64, false);
  void* b = H.h.allocate(MiB, 64, false);  // keeps a off the top
  std::memset(a, 0xA5, MiB);
  H.h.release(a);
  void* c = H.h.allocate(MiB, 64, true);
  EXPECT_EQ(c, a);  // first fit takes the freed block back
  EXPECT_TRUE(allZero(c, MiB));
  void* d = H.h.allocate(2 * MiB, 64, true);  // fresh from the top
  EXPECT_TRUE(allZero(d, 2 * MiB));
  std::memset(d, 0x3c, 2 * MiB);
  H.h.release(d);  // top: cut off, pages punched
  void* e = H.h.allocate(2 * MiB, 64, true);
  EXPECT_TRUE(allZero(e, 2 * MiB));
  H.h.release(b);
  H.h.release(c);
  H.h.release(e);
  EXPECT_EQ(H.h.top(), 0u);
}

TEST(SharedHeapTest, FreeBlocksSplitAndMerge) {
  Heap H;
  char* a = static_cast<char*>(H.h.allocate(4 * MiB, 64, false));
  void* guard = H.h.allocate(64 * KiB, 64, false);
  H.h.release(a);
  EXPECT_EQ(H.h.freeBlocks(), 1u);
  char* c = static_cast<char*>(H.h.allocate(MiB, 64, false));
  EXPECT_EQ(c, a);
  EXPECT_EQ(H.h.freeBlocks(), 1u);  // the rest of the 4 MiB block
  char* d = static_cast<char*>(H.h.allocate(2 * MiB, 64, false));
  EXPECT_GT(d, c);
  EXPECT_LT(d, static_cast<char*>(guard));
  fill(c, MiB, 1);
  fill(d, 2 * MiB, 2);
  EXPECT_EQ(check(c, MiB, 1), MiB);
  H.h.release(c);
  H.h.release(d);  // merges with c below and the rest above: one block again
  EXPECT_EQ(H.h.freeBlocks(), 1u);
  char* f = static_cast<char*>(H.h.allocate(4 * MiB, 64, false));
  EXPECT_EQ(f, a);
  H.h.release(f);
  H.h.release(guard);
  EXPECT_EQ(H.h.freeBlocks(), 0u);
  EXPECT_EQ(H.h.top(), 0u);
}

TEST(SharedHeapTest, ResizeInPlaceGrowsOnlyWhereThereIsRoom) {
  Heap H;
  void* a = H.h.allocate(256 * KiB, 64, false);
  fill(a, 256 * KiB, 9);
  EXPECT_TRUE(H.h.resizeInPlace(a, 3 * MiB));  // the top block grows
  EXPECT_GE(H.h.usableSize(a), 3 * MiB);
  EXPECT_EQ(check(a, 256 * KiB, 9), 256 * KiB);
  void* b = H.h.allocate(MiB, 64, false);
  EXPECT_FALSE(H.h.resizeInPlace(a, 4 * MiB));  // b sits right above
  EXPECT_TRUE(H.h.resizeInPlace(a, 100 * KiB));  // shrinking keeps the block
  void* c = H.h.allocate(MiB, 64, false);
  H.h.release(b);  // now free above a
  EXPECT_TRUE(H.h.resizeInPlace(a, 3 * MiB + 512 * KiB));
  EXPECT_GE(H.h.usableSize(a), 3 * MiB + 512 * KiB);
  EXPECT_EQ(check(a, 256 * KiB, 9), 256 * KiB);
  EXPECT_EQ(H.h.freeBlocks(), 1u);  // the 512 KiB left of b
  fill(c, MiB, 10);
  std::memset(a, 1, 3 * MiB + 512 * KiB);
  EXPECT_EQ(check(c, MiB, 10), MiB);
  H.h.release(a);
  H.h.release(c);
  EXPECT_EQ(H.h.top(), 0u);
  EXPECT_EQ(H.h.freeBlocks(), 0u);
}

TEST(SharedHeapTest, FreedPagesGoBackBeyondTheKeepLimit) {
  Heap H(0);  // keep nothing resident
  void* a = H.h.allocate(8 * MiB, 64, false);
  void* b = H.h.allocate(64 * KiB, 64, false);
  std::memset(a, 1, 8 * MiB);
  std::memset(b, 2, 64 * KiB);
  EXPECT_GE(residentBytes(H.h.fd()), 8 * MiB);
  H.h.release(a);  // not the top: only its header page stays
  EXPECT_LE(residentBytes(H.h.fd()), 64 * KiB + 3 * SharedHeap::kPage);
  H.h.release(b);
  EXPECT_EQ(residentBytes(H.h.fd()), 0u);

  Heap K(64 * MiB);  // freed blocks stay for reuse, up to 64 MiB
  void* x = K.h.allocate(8 * MiB, 64, false);
  void* y = K.h.allocate(64 * KiB, 64, false);
  std::memset(x, 1, 8 * MiB);
  K.h.release(x);
  EXPECT_GE(residentBytes(K.h.fd()), 8 * MiB);
  EXPECT_GE(K.h.cached(), 8 * MiB);
  K.h.release(y);  // merges with x at the top; still within the limit
  EXPECT_GE(residentBytes(K.h.fd()), 8 * MiB);
  EXPECT_EQ(K.h.freeBlocks(), 1u);
  void* big = K.h.allocate(80 * MiB, 64, false);  // takes the free top block and grows it
  EXPECT_EQ(big, x);
  std::memset(big, 3, 80 * MiB);
  K.h.release(big);  // past the limit: cut off, every page back
  EXPECT_EQ(K.h.top(), 0u);
  EXPECT_EQ(K.h.cached(), 0u);
  EXPECT_EQ(residentBytes(K.h.fd()), 0u);
}

TEST(SharedHeapTest, AFreedBufferComesBackWithoutFreshPages) {
  Heap H(64 * MiB);
  void* a = H.h.allocate(MiB, 64, false);
  std::memset(a, 7, MiB);
  const uint64_t resident = residentBytes(H.h.fd());
  const uint64_t top = H.h.top();
  for (int i = 0; i < 20; ++i) {
    H.h.release(a);  // the top block: kept, not punched
    EXPECT_EQ(residentBytes(H.h.fd()), resident);
    void* b = H.h.allocate(MiB, 64, i % 2 == 1);
    ASSERT_EQ(b, a);
    if (i % 2 == 1) {
      EXPECT_TRUE(allZero(b, MiB));  // zeroed although reused
    }
    std::memset(b, i, MiB);
  }
  EXPECT_EQ(H.h.top(), top);
  EXPECT_EQ(residentBytes(H.h.fd()), resident);
  H.h.release(a);
}

TEST(SharedHeapDeathTest, BadPointersAbortWithAMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Heap H;
  char* p = static_cast<char*>(H.h.allocate(MiB, 64, false));
  void* guard = H.h.allocate(MiB, 64, false);
  EXPECT_DEATH(H.h.release(p + 64), "free\\(\\): invalid pointer");
  char* q = static_cast<char*>(H.h.allocate(MiB, 4096, false));  // tag outside the header
  H.h.release(q);
  EXPECT_DEATH(H.h.release(q), "free\\(\\): (double free|invalid pointer)");
  H.h.release(p);
  H.h.release(guard);
}

TEST(SharedHeapTest, APeerMapsTheSameBytes) {
  Heap H;
  void* p = H.h.allocate(3 * MiB + 5, 64, false);
  fill(p, 3 * MiB + 5, 77);
  const uint64_t off = static_cast<uint64_t>(static_cast<char*>(p) - H.h.base());
  pid_t parent = getpid();
  pid_t c = fork();
  ASSERT_GE(c, 0);
  if (c == 0) {
    // A different process, as a peer rank would: through /proc.
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(parent), H.h.fd());
    int fd = ::open(path, O_RDONLY);
    if (fd < 0) _exit(2);
    struct stat st;
    if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != H.h.inode()) _exit(3);
    void* m = mmap(nullptr, off + 3 * MiB + 5, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) _exit(4);
    _exit(check(static_cast<char*>(m) + off, 3 * MiB + 5, 77) == 3 * MiB + 5 ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(waitpid(c, &status, 0), c);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  H.h.release(p);
}

TEST(SharedHeapTest, AFailedForkDoesNotHang) {
  Heap H;
  H.h.prepareFork();
  H.h.afterForkParent();  // no child holds the pipe: end-of-file at once
  void* p = H.h.allocate(MiB, 64, false);  // and the lock is free again
  EXPECT_NE(p, nullptr);
  H.h.release(p);
}

TEST(SharedHeapTest, AForkedChildGetsAPrivateCopy) {
  Heap H;
  char* p = static_cast<char*>(H.h.allocate(2 * MiB, 64, false));
  void* keep = H.h.allocate(MiB, 64, false);
  fill(p, 2 * MiB, 1);
  int toChild[2], toParent[2];
  ASSERT_EQ(pipe(toChild), 0);
  ASSERT_EQ(pipe(toParent), 0);
  H.h.prepareFork();  // the fork handlers, as pthread_atfork runs them
  pid_t c = fork();
  ASSERT_GE(c, 0);
  if (c == 0) {
    H.h.afterForkChild();
    int bad = 0;
    if (H.h.shared() || H.h.fd() != -1) bad |= 1;
    if (check(p, 2 * MiB, 1) != 2 * MiB) bad |= 2;
    fill(p, 2 * MiB, 2);  // invisible to the parent
    char x = 0;
    if (write(toParent[1], &x, 1) != 1 || read(toChild[0], &x, 1) != 1) bad |= 4;
    // The parent has rewritten its copy by now; ours must be untouched.
    if (check(p, 2 * MiB, 2) != 2 * MiB) bad |= 8;
    void* r = H.h.allocate(4 * MiB, 64, true);  // the heap still works
    if (!r || !allZero(r, 4 * MiB)) bad |= 16;
    fill(r, 4 * MiB, 3);
    H.h.release(r);
    void* z = H.h.allocate(4 * MiB, 64, true);
    if (!z || !allZero(z, 4 * MiB)) bad |= 32;
    // A child of the child: its heap is private already; the handlers must
    // still leave the lock usable.
    H.h.prepareFork();
    pid_t g = fork();
    if (g == 0) {
      H.h.afterForkChild();
      void* y = H.h.allocate(MiB, 64, false);
      if (!y || check(p, 2 * MiB, 2) != 2 * MiB) _exit(1);
      H.h.release(y);
      _exit(0);
    }
    H.h.afterForkParent();
    int gs = 0;
    if (g < 0 || waitpid(g, &gs, 0) != g || !WIFEXITED(gs) || WEXITSTATUS(gs) != 0) bad |= 64;
    _exit(bad);
  }
  H.h.afterForkParent();
  // Write at once: the child must keep what it had at fork() (it checks
  // the first pattern before writing its own).
  fill(p, 2 * MiB, 4);
  char x = 0;
  ASSERT_EQ(read(toParent[0], &x, 1), 1);
  EXPECT_EQ(check(p, 2 * MiB, 4), 2 * MiB);  // the child's writes did not reach us
  ASSERT_EQ(write(toChild[1], &x, 1), 1);
  int status = 0;
  ASSERT_EQ(waitpid(c, &status, 0), c);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child failure bits";
  EXPECT_EQ(check(p, 2 * MiB, 4), 2 * MiB);
  EXPECT_TRUE(H.h.shared());
  H.h.release(p);
  H.h.release(keep);
  for (int fd : {toChild[0], toChild[1], toParent[0], toParent[1]}) close(fd);
}

TEST(SharedHeapTest, AForkCopiesNothingAndTheHeapIsWholeAgainAfterIt) {
  Heap H;
  const uint64_t n = 64 * MiB;
  char* big = static_cast<char*>(H.h.allocate(n, 64, false));
  ASSERT_NE(big, nullptr);
  fill(big, n, 1);
  int status = 0;
  forkWithBigBuffer(H.h, big, n, &status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child failure bits";
  // The child is gone: the heap is shared again (one thread here), with the
  // parent's bytes in the memfd and no second copy anywhere.
  EXPECT_TRUE(H.h.reclaimNow());
  EXPECT_EQ(H.h.low(), 0u);
  EXPECT_TRUE(H.h.sharedRange(big, n));
  EXPECT_EQ(check(big, n, 3), n);
  EXPECT_LT(anonKiB(big, n), 1024);
  EXPECT_LE(residentBytes(H.h.fd()), n + 2 * MiB);
  const uint64_t off = static_cast<uint64_t>(big - H.h.base());
  void* m = mmap(nullptr, off + n, PROT_READ, MAP_SHARED, H.h.fd(), 0);
  ASSERT_NE(m, MAP_FAILED);
  EXPECT_EQ(check(static_cast<char*>(m) + off, n, 3), n);  // what a peer maps
  munmap(m, off + n);
  void* z = H.h.allocate(8 * MiB, 64, true);  // calloc above the old top: zero
  ASSERT_NE(z, nullptr);
  EXPECT_TRUE(allZero(z, 8 * MiB));
  H.h.release(z);
  H.h.release(big);
}

// Freezing moves the shared mapping aside with its page tables instead of
// tearing them down, the child does not inherit it, and it comes back whole
// when the heap is shared again: the pages the parent did not write since
// the fork need no fault to be reached again.
TEST(SharedHeapTest, AForkKeepsTheHeapsPageTablesForWhenItIsWholeAgain) {
  Heap H;
  const uint64_t n = 32 * MiB;
  char* big = static_cast<char*>(H.h.allocate(n, 64, false));
  ASSERT_NE(big, nullptr);
  fill(big, n, 1);
  ASSERT_EQ(presentPages(big, n), n / 4096);
  const uint64_t ino = H.h.inode();
  const uint64_t mappedBefore = inodeMappedBytes(ino);
  EXPECT_EQ(forkAndWait(H.h,
                        [&] {
                          int bad = 0;
                          // only the frozen range [0, low), copy-on-write: not the parent's shared
                          // mapping, moved aside or not
                          if (inodeMappedBytes(ino) > H.h.low()) bad |= 1;
                          if (check(big, n, 1) != n) bad |= 2;
                          return bad;
                        }),
            0)
      << "child failure bits";
  EXPECT_FALSE(H.h.sharedRange(big, n));
  fill(big, n / 2, 3);  // the first half copied, the second half untouched
  EXPECT_TRUE(H.h.reclaimNow());
  // (before anything reads the buffer again, which would fault the entries back in)
  EXPECT_EQ(presentPages(big + n / 2, n / 2), n / 2 / 4096) << "the untouched half's entries were dropped";
  EXPECT_EQ(H.h.low(), 0u);
  EXPECT_TRUE(H.h.sharedRange(big, n));
  EXPECT_EQ(check(big, n / 2, 3), n / 2);
  EXPECT_EQ(check(big + n / 2, n / 2, 1), n / 2);
  EXPECT_LT(anonKiB(big, n), 1024);
  EXPECT_EQ(inodeMappedBytes(ino), mappedBefore);  // nothing parked is left mapped
  H.h.release(big);
}

// With another thread writing into the heap all the while, forks park the
// shared mapping too (the range stays mapped meanwhile: the writer never
// faults on a hole), every child sees the buffer as it was at its fork, and
// once the writer has ended the heap is whole again with the entries of the
// pages nobody wrote since.
TEST(SharedHeapTest, WithAThreadWritingForksParkTooAndTheHeapComesBackWhole) {
  Heap H;
  const uint64_t n = 32 * MiB, stripe = MiB;
  char* big = static_cast<char*>(H.h.allocate(n, 64, false));
  ASSERT_NE(big, nullptr);
  fill(big, n, 1);
  const uint64_t ino = H.h.inode();
  const uint64_t mappedBefore = inodeMappedBytes(ino);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> last{0};
  std::thread writer([&] {  // a counter into the first word of each stripe of the first half
    for (uint64_t v = 1; !stop.load(std::memory_order_relaxed); ++v) {
      for (uint64_t at = 0; at < n / 2; at += stripe) __atomic_store_n(reinterpret_cast<uint64_t*>(big + at), v, __ATOMIC_RELAXED);
      last.store(v, std::memory_order_release);
    }
  });
  while (last.load(std::memory_order_acquire) == 0) usleep(100);
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(forkAndWait(H.h,
                          [&] {
                            int bad = 0;
                            if (inodeMappedBytes(ino) > H.h.low()) bad |= 1;  // the parked mapping is not inherited
                            const uint64_t v = *reinterpret_cast<uint64_t*>(big);
                            for (uint64_t at = stripe; at < n / 2; at += stripe)  // one snapshot
                              if (*reinterpret_cast<uint64_t*>(big + at) > v) bad |= 2;
                            if (check(big + n / 2, n / 2, 1) != n / 2) bad |= 4;
                            usleep(2000);  // (the writer goes on in the parent meanwhile)
                            if (*reinterpret_cast<uint64_t*>(big) != v) bad |= 8;
                            return bad;
                          }),
              0)
        << "child failure bits, fork " << k;
  }
  stop.store(true);
  writer.join();
  const uint64_t v = last.load();
  for (int i = 0; i < 200 && (H.h.frozenHeld() || H.h.sweeping() || H.h.low() != 0); ++i) {
    EXPECT_TRUE(H.h.reclaimNow());
    if (H.h.low() != 0) usleep(10000);
  }
  ASSERT_EQ(H.h.low(), 0u);
  // (before anything reads it: the untouched half came back with its entries,
  // where the kernel lets a multi-threaded parent park)
  if (kernelMovesSharedMappingsKeepingThem()) {
    EXPECT_EQ(presentPages(big + n / 2, n / 2), n / 2 / 4096) << "the untouched half's entries were dropped";
  }
  EXPECT_TRUE(H.h.sharedRange(big, n));
  for (uint64_t at = 0; at < n / 2; at += stripe) {
    ASSERT_EQ(*reinterpret_cast<uint64_t*>(big + at), v) << at;
    for (uint64_t i = 8; i < stripe; ++i)  // (the pattern from byte 8 on)
      ASSERT_EQ(static_cast<unsigned char>(big[at + i]), pat(1, at + i)) << at + i;
  }
  EXPECT_EQ(check(big + n / 2, n / 2, 1), n / 2);  // (n / 2 is a multiple of the pattern's period)
  EXPECT_EQ(inodeMappedBytes(ino), mappedBefore);  // nothing left parked
  H.h.release(big);
}

TEST(SharedHeapTest, WithOtherThreadsTheReclaimOnlyDropsTheSecondCopies) {
  Heap H;
  const uint64_t n = 32 * MiB;
  char* big = static_cast<char*>(H.h.allocate(n, 64, false));
  ASSERT_NE(big, nullptr);
  fill(big, n, 1);
  int status = 0;
  forkWithBigBuffer(H.h, big, n, &status);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "child failure bits";
  SleepingThread other;
  EXPECT_TRUE(H.h.reclaimNow());
  other.end();
  EXPECT_FALSE(H.h.sharedRange(big, n));  // stays private (a write could be lost in a thaw)
  EXPECT_EQ(check(big, n, 3), n);
  EXPECT_LE(residentBytes(H.h.fd()) + static_cast<uint64_t>(anonKiB(big, n)) * KiB, n + 2 * MiB);
  H.h.release(big);
  void* z = H.h.allocate(n, 64, true);  // in the freed (private) block: zeroed
  ASSERT_NE(z, nullptr);
  EXPECT_TRUE(allZero(z, n));
  H.h.release(z);
}

// With another thread running, a reclaim leaves the heap private below
// `low`; a page live at the fork that the parent first writes after its
// child is gone gets a copy while the memfd keeps the snapshot under it.
// A sweep drops that second copy, and the first sweep that finds the parent
// alone makes the heap whole and shared again.
TEST(SharedHeapTest, WithOtherThreadsLaterCopiesAreSweptAndTheHeapIsWholeOnceAlone) {
  Heap H;
  const uint64_t n = 32 * MiB;
  char* big = static_cast<char*>(H.h.allocate(n, 64, false));
  ASSERT_NE(big, nullptr);
  fill(big, n, 1);
  ASSERT_EQ(forkAndWait(H.h, [&] { return check(big, n, 1) == n ? 0 : 1; }), 0);
  SleepingThread other;
  EXPECT_TRUE(H.h.reclaimNow());
  EXPECT_GT(H.h.low(), 0u);
  EXPECT_TRUE(H.h.sweeping());
  EXPECT_GE(residentBytes(H.h.fd()), n);  // the snapshot is the only copy of the untouched buffer
  fill(big, n / 2, 3);                    // copies of the first half, the memfd still under them
  EXPECT_GE(residentBytes(H.h.fd()) + static_cast<uint64_t>(anonKiB(big, n)) * KiB, n + n / 2);
  EXPECT_TRUE(H.h.reclaimNow());  // a sweep, the other thread still there
  EXPECT_TRUE(H.h.sweeping());
  EXPECT_FALSE(H.h.sharedRange(big, n));
  EXPECT_LE(residentBytes(H.h.fd()) + static_cast<uint64_t>(anonKiB(big, n)) * KiB, n + 2 * MiB);
  EXPECT_EQ(check(big, n / 2, 3), n / 2);
  EXPECT_EQ(check(big + n / 2, n / 2, 1), n / 2);
  other.end();
  // Alone now (the kernel counts the joined thread a little longer).
  for (int i = 0; i < 200 && H.h.sweeping(); ++i) {
    EXPECT_TRUE(H.h.reclaimNow());
    if (H.h.sweeping()) usleep(10000);
  }
  EXPECT_FALSE(H.h.sweeping());
  EXPECT_EQ(H.h.low(), 0u);
  EXPECT_TRUE(H.h.sharedRange(big, n));
  EXPECT_EQ(check(big, n / 2, 3), n / 2);
  EXPECT_EQ(check(big + n / 2, n / 2, 1), n / 2);
  EXPECT_LT(anonKiB(big, n), 1024);
  EXPECT_LE(residentBytes(H.h.fd()), n + 2 * MiB);
  const uint64_t off = static_cast<uint64_t>(big - H.h.base());
  void* m = mmap(nullptr, off + n, PROT_READ, MAP_SHARED, H.h.fd(), 0);
  ASSERT_NE(m, MAP_FAILED);
  EXPECT_EQ(check(static_cast<char*>(m) + off, n / 2, 3), n / 2);  // what a peer maps
  EXPECT_EQ(check(static_cast<char*>(m) + off + n / 2, n / 2, 1), n / 2);
  munmap(m, off + n);
  fill(big, n, 4);  // shared again: no copies
  EXPECT_LT(anonKiB(big, n), 1024);
  H.h.release(big);
}

// After a reclaim that left the heap private below `low` (another thread
// was running), a new fork with nothing new in use must still keep the
// memfd's pages under `low` for the child: the parent freeing a block it
// never wrote since must not zero the child's view of it.
TEST(SharedHeapTest, AForkAfterAPartialReclaimKeepsTheChildsSnapshot) {
  Heap H;
  const uint64_t n = 8 * MiB;
  char* big = static_cast<char*>(H.h.allocate(n, 64, false));
  char* quiet = static_cast<char*>(H.h.allocate(n, 64, false));  // never written after the first fork
  ASSERT_TRUE(big && quiet);
  fill(big, n, 1);
  fill(quiet, n, 5);
  int status = 0;
  forkWithBigBuffer(H.h, big, n, &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  SleepingThread other;
  EXPECT_TRUE(H.h.reclaimNow());
  other.end();
  ASSERT_GT(H.h.low(), 0u);
  int toChild[2], toParent[2];
  ASSERT_EQ(pipe(toChild), 0);
  ASSERT_EQ(pipe(toParent), 0);
  H.h.prepareFork();
  pid_t c = fork();
  ASSERT_GE(c, 0);
  if (c == 0) {
    H.h.afterForkChild();
    char x = 0;
    (void)!write(toParent[1], &x, 1);
    if (read(toChild[0], &x, 1) != 1) _exit(1);
    _exit(check(quiet, n, 5) == n ? 0 : 2);  // the parent has freed it by now
  }
  H.h.afterForkParent();
  EXPECT_TRUE(H.h.frozenHeld());
  char x = 0;
  ASSERT_EQ(read(toParent[0], &x, 1), 1);
  H.h.release(quiet);
  ASSERT_EQ(write(toChild[1], &x, 1), 1);
  ASSERT_EQ(waitpid(c, &status, 0), c);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child's view of the freed block changed";
  for (int fd : {toChild[0], toChild[1], toParent[0], toParent[1]}) close(fd);
  H.h.release(big);
}

TEST(SharedHeapTest, ThreadsShareTheHeap) {
  Heap H;
  auto work = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::pair<void*, uint64_t>> live;
    for (int i = 0; i < 600; ++i) {
      if (live.size() < 6 && rng() % 2) {
        uint64_t n = 64 * KiB + rng() % MiB;
        void* p = H.h.allocate(n, 64, false);
        ASSERT_NE(p, nullptr);
        fill(p, n, seed * 1000 + live.size());
        live.push_back({p, n});
      } else if (!live.empty()) {
        auto [p, n] = live.back();
        ASSERT_EQ(check(p, n, seed * 1000 + live.size() - 1), n);
        H.h.release(p);
        live.pop_back();
      }
    }
    while (!live.empty()) {
      H.h.release(live.back().first);
      live.pop_back();
    }
  };
  std::vector<std::thread> ts;
  for (uint64_t t = 1; t <= 4; ++t) ts.emplace_back(work, t);
  for (auto& t : ts) t.join();
  EXPECT_EQ(H.h.inUse(), 0u);
  EXPECT_EQ(H.h.top(), 0u);
}
