#include "os/cma_cost.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "copy/copy.h"

namespace shmcoll::os {

// On the Firecracker VM of docs/PERFORMANCE.md (2026-11-30, afternoon) the
// call took 9 times the copy (5.6 against 0.61 us; from another process
// 2.3 us at 4 KiB and 68 at 1 MiB against 24 for memcpy), and at 2 and 3
// ranks the slots beat it from 16 KiB to 256 KiB but for bcast and
// allreduce at 256 KiB; the node's tuner chose `cma_min off` there too.
bool processVmReadvSlow(uint64_t factor) {
  if (factor == 0) return false;
  constexpr size_t kBytes = 64 << 10;
  std::vector<char> src(kBytes, 1), dst(kBytes, 0);
  struct iovec local = {dst.data(), kBytes};
  struct iovec remote = {src.data(), kBytes};
  const pid_t self = getpid();
  auto best = [](auto&& body) {
    double t = 1e30;
    for (int i = 0; i < 5; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      body();
      t = std::min(t, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return t;
  };
  bool failed = false;
  const double call = best([&] {
    failed |= process_vm_readv(self, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(kBytes);
  });
  const double copy = best([&] { copy::copy(dst.data(), src.data(), kBytes); });
  return !failed && call > static_cast<double>(factor) * copy;
}

}  // namespace shmcoll::os
