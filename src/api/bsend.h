// Buffered sends (bsend.cc): the buffer MPI_Buffer_attach gives, from which
// MPI_Bsend, MPI_Ibsend and MPI_Bsend_init send.
#pragma once

#include <cstdint>

#include "api/call.h"
#include "dt/datatype.h"
#include "p2p/p2p.h"

namespace shmcoll::api {

// Packs `count` elements of `type` at `buf` into a free piece of the attached
// buffer and starts sending them from there to `env`; fails (raised on the
// call) when no buffer is attached or none of its free pieces is large enough.
int bufferedSend(const Call& call, const void* buf, uint64_t count, const dt::Type* type, const p2p::Envelope& env);

}  // namespace shmcoll::api
