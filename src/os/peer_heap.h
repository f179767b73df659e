// Another process's shared malloc heap (shared_heap.h), mapped read-only.
//
// A rank publishes where its heap is (descriptor number, inode, size) in its
// control lines; a peer opens the memfd through /proc/<pid>/fd/<n> and maps a
// prefix of it, growing the mapping (doubling) as larger offsets are asked
// for.  The inode check guards against a program that closed the descriptor
// so that the number now names another file.
#pragma once

#include <cstdint>

namespace shmcoll::os {

// Where a process's heap lives, as it publishes it.
struct PeerHeapId {
  uint32_t pid = 0;
  int32_t fd = -1;     // descriptor number in that process; -1: it has no heap
  uint64_t ino = 0;    // the memfd's inode
  uint64_t bytes = 0;  // the heap's reserve
};

// Opens the heap through /proc; -1 if the kernel refuses or the descriptor
// is no longer that heap.
int openPeerHeap(const PeerHeapId& id);
// Whether this process can open and map one page of that heap (the start-up probe).
bool canMapPeerHeap(const PeerHeapId& id);

// A growing read-only mapping of one peer's heap.  Movable, not copyable
// (it owns the mapping).
class PeerHeapMap {
 public:
  PeerHeapMap() = default;
  PeerHeapMap(PeerHeapMap&& o) noexcept : map_(o.map_), len_(o.len_) { o.map_ = nullptr, o.len_ = 0; }
  ~PeerHeapMap();
  // Our view of heap bytes [off, off + len), mapping more of the heap when
  // needed; nullptr when they lie outside it or it cannot be mapped.
  const char* view(const PeerHeapId& id, uint64_t off, uint64_t len);

 private:
  const char* map_ = nullptr;
  uint64_t len_ = 0;
};

}  // namespace shmcoll::os
