// The streamed exchange engine (exchange_streamed.cc) and its parameters.
#pragma once

#include <cstdint>

#include "coll/coll.h"

namespace shmcoll::coll {

struct StreamParams {
  bool allowCma = true;   // pull contiguous blocks with process_vm_readv
  uint64_t cmaMin = 0;    // ... when they are at least this many bytes
};

int streamedExchange(Team& team, const ExchangeArgs& args, const StreamParams& prm);

}  // namespace shmcoll::coll
