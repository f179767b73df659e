#include "dt/registry.h"

#include <memory>
#include <vector>

namespace shmcoll::dt {

namespace {
constexpr uint32_t kUserKind = 0x32000000u;
std::vector<Type*>& userTable() {
  static std::vector<Type*> t(1, nullptr);  // index 0 unused
  return t;
}
}  // namespace

int registerType(Type* t) {
  auto& tab = userTable();
  for (size_t i = 1; i < tab.size(); ++i) {
    if (!tab[i]) {
      tab[i] = t;
      t->handle = static_cast<int>(kUserKind | i);
      return t->handle;
    }
  }
  tab.push_back(t);
  t->handle = static_cast<int>(kUserKind | (tab.size() - 1));
  return t->handle;
}

Type* userType(int handle) {
  uint32_t h = static_cast<uint32_t>(handle);
  if ((h & 0xff000000u) != kUserKind) return nullptr;
  uint32_t i = h & 0x00ffffffu;
  auto& tab = userTable();
  return (i < tab.size()) ? tab[i] : nullptr;
}

void releaseHandle(int handle) {
  uint32_t i = static_cast<uint32_t>(handle) & 0x00ffffffu;
  auto& tab = userTable();
  if (userType(handle)) tab[i] = nullptr;
}

const Type* fromHandle(int handle) {
  if (const Type* b = builtinType(handle)) return b;
  return userType(handle);
}

}  // namespace shmcoll::dt
