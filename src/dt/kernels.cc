// Picks the block-move kernel table that matches the active copy kernel, and
// says whether a crowded-stride unpack fences its stores (SHMCOLL_DT_STORE_FENCE).
#include "dt/kernels.h"

#include <atomic>

#include "common/settings.h"
#include "copy/kernels.h"

namespace shmcoll::dt::kern {

namespace {

std::atomic<int> gForced{-1};

}  // namespace

bool fenceCrowded() {
  static const bool chosen = settings::flag(settings::Id::kDtStoreFence);
  const int f = gForced.load(std::memory_order_relaxed);
  return f < 0 ? chosen : f != 0;
}

void forceFenceCrowded(int on) { gForced.store(on < 0 ? -1 : on != 0, std::memory_order_relaxed); }

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
