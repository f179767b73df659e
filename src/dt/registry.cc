#include "dt/registry.h"

#include <vector>

namespace shmcoll::dt {

namespace {
constexpr uint32_t kUserKind = 0x32000000u;
std::vector<Type*>& userTable() {
  static std::vector<Type*> t(1, nullptr);  // index 0 unused
  return t;
}
// Lowest free index hint: slots below it are all taken.
size_t gFreeHint = 1;
}  // namespace

std::recursive_mutex& registryMutex() {
  static std::recursive_mutex m;
  return m;
}

int registerType(Type* t) {
  std::lock_guard<std::recursive_mutex> g(registryMutex());
  auto& tab = userTable();
  size_t i = gFreeHint;
  while (i < tab.size() && tab[i]) ++i;
  if (i == tab.size()) tab.push_back(nullptr);
  tab[i] = t;
  gFreeHint = i + 1;
  t->handle = static_cast<int>(kUserKind | i);
  t->handleRefs = 1;
  ++t->refs;
  return t->handle;
}

Type* userType(int handle) {
  uint32_t h = static_cast<uint32_t>(handle);
  if ((h & 0xff000000u) != kUserKind) return nullptr;
  uint32_t i = h & 0x00ffffffu;
  std::lock_guard<std::recursive_mutex> g(registryMutex());
  auto& tab = userTable();
  return (i < tab.size()) ? tab[i] : nullptr;
}

void releaseHandle(int handle) {
  Type* t = nullptr;
  {
    std::lock_guard<std::recursive_mutex> g(registryMutex());
    t = userType(handle);
    if (!t) return;
    uint32_t i = static_cast<uint32_t>(handle) & 0x00ffffffu;
    userTable()[i] = nullptr;
    if (i < gFreeHint) gFreeHint = i;
    t->handle = 0;
    t->handleRefs = 0;
  }
  release(t);
}

size_t liveHandles() {
  std::lock_guard<std::recursive_mutex> g(registryMutex());
  size_t n = 0;
  for (Type* t : userTable()) n += t != nullptr;
  return n;
}

const Type* fromHandle(int handle) {
  if (const Type* b = builtinType(handle)) return b;
  return userType(handle);
}

}  // namespace shmcoll::dt
