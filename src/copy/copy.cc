// Placeholder dispatcher: plain memcpy until the SIMD kernels land (see copy.h).
#include "copy/copy.h"

#include <cstring>

namespace shmcoll::copy {

void copy(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }
Kernel active() { return Kernel::kScalar; }
bool supported(Kernel k) { return k == Kernel::kScalar; }
bool select(Kernel k) { return k == Kernel::kScalar; }
const char* name(Kernel) { return "scalar"; }
bool parseKernel(const char*, Kernel*) { return false; }
CopyFn function(Kernel) { return [](void* d, const void* s, size_t n) { std::memcpy(d, s, n); }; }
size_t ntThreshold() { return 0; }
void setNtThreshold(size_t) {}

}  // namespace shmcoll::copy
