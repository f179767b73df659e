#include "runtime/heap.h"

#include <cstdlib>
#include <iterator>
#include <map>
#include <unordered_map>

#include "runtime/context.h"

namespace shmcoll::rt {

namespace {

constexpr size_t kAlign = 64;

struct Heap {
  bool ready = false;
  char* base = nullptr;
  size_t size = 0;
  std::map<size_t, size_t> free;              // offset -> length, coalesced
  std::unordered_map<char*, size_t> used;     // heap blocks handed out -> length
  std::unordered_map<void*, size_t> privates; // fallback blocks (malloc'ed)
  size_t inUse = 0;

  void setUp() {
    ready = true;
    Context& c = ctx();
    if (!c.mapBase) return;
    const segment::View& v = c.eng.seg;
    size = v.header()->heapBytes;
    base = v.heap(c.eng.rank);
    if (size) free.emplace(0, size);
  }

  void* take(size_t bytes) {
    if (!ready) setUp();
    size_t need = (bytes + kAlign - 1) / kAlign * kAlign;
    if (need == 0) need = kAlign;
    for (auto it = free.begin(); it != free.end(); ++it) {
      if (it->second < need) continue;
      size_t off = it->first, len = it->second;
      free.erase(it);
      if (len > need) free.emplace(off + need, len - need);
      used.emplace(base + off, need);
      inUse += need;
      return base + off;
    }
    void* p = nullptr;
    if (posix_memalign(&p, kAlign, bytes ? bytes : 1) != 0) return nullptr;
    privates.emplace(p, bytes);
    return p;
  }

  bool give(void* p) {
    auto u = used.find(static_cast<char*>(p));
    if (u != used.end()) {
      size_t off = static_cast<size_t>(u->first - base), len = u->second;
      used.erase(u);
      inUse -= len;
      auto next = free.lower_bound(off);
      if (next != free.end() && next->first == off + len) {  // merge with the block after
        len += next->second;
        next = free.erase(next);
      }
      if (next != free.begin()) {  // and with the block before
        auto prev = std::prev(next);
        if (prev->first + prev->second == off) {
          prev->second += len;
          return true;
        }
      }
      free.emplace(off, len);
      return true;
    }
    auto q = privates.find(p);
    if (q == privates.end()) return false;
    privates.erase(q);
    std::free(p);
    return true;
  }
};

Heap gHeap;

}  // namespace

void* allocMem(size_t bytes) { return gHeap.take(bytes); }
bool freeMem(void* p) { return gHeap.give(p); }
size_t heapInUse() { return gHeap.inUse; }

}  // namespace shmcoll::rt
