// Mapping a peer's shared heap through /proc (peer_heap.h).
#include "os/peer_heap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "os/shared_heap.h"

namespace shmcoll::os {

int openPeerHeap(const PeerHeapId& id) {
  if (id.fd < 0) return -1;
  char path[64];
  snprintf(path, sizeof path, "/proc/%u/fd/%d", id.pid, id.fd);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_ino) != id.ino) {
    close(fd);
    return -1;
  }
  return fd;
}

bool canMapPeerHeap(const PeerHeapId& id) {
  int fd = openPeerHeap(id);
  if (fd < 0) return false;
  void* m = mmap(nullptr, SharedHeap::kPage, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return false;
  munmap(m, SharedHeap::kPage);
  return true;
}

PeerHeapMap::~PeerHeapMap() {
  if (map_) munmap(const_cast<char*>(map_), len_);
}

const char* PeerHeapMap::view(const PeerHeapId& id, uint64_t off, uint64_t len) {
  if (id.fd < 0 || off >= id.bytes || len > id.bytes - off) return nullptr;
  if (off + len > len_) {
    constexpr uint64_t kGrain = 2u << 20;
    uint64_t want = std::max(off + len, 2 * len_);
    want = std::min((want + kGrain - 1) / kGrain * kGrain, id.bytes);
    int fd = openPeerHeap(id);
    if (fd < 0) return nullptr;
    void* m = mmap(nullptr, want, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) return nullptr;
    if (map_) munmap(const_cast<char*>(map_), len_);
    map_ = static_cast<const char*>(m);
    len_ = want;
  }
  return map_ + off;
}

}  // namespace shmcoll::os
