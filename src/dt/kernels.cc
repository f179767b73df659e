// Picks the block-move kernel table that matches the active copy kernel.
#include "dt/kernels.h"

#include "copy/kernels.h"

namespace shmcoll::dt::kern {

const Table* tableFor(copy::Kernel k) {
  if (!copy::supported(k)) return nullptr;
  switch (k) {
#if SHMCOLL_COPY_X86
    case copy::Kernel::kAvx512: return &detail::kAvx512;
    case copy::Kernel::kAvx2: return &detail::kAvx2;
#endif
    default: return &detail::kGeneric;
  }
}

const Table& table() {
#if SHMCOLL_COPY_X86
  switch (copy::active()) {
    case copy::Kernel::kAvx512: return detail::kAvx512;
    case copy::Kernel::kAvx2: return detail::kAvx2;
    default: break;
  }
#endif
  return detail::kGeneric;
}

}  // namespace shmcoll::dt::kern
