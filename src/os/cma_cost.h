// What process_vm_readv costs here, against a plain copy.
//
// A single copy out of a peer's private buffer with process_vm_readv saves
// the copy into a shared slot and its hand-offs; both ways read the
// sender's lines across cores once.  So the call pays while it costs less
// than two or three copies of the same bytes, and where it costs much more
// (a VM whose kernel entry and page pinning are slow) the slots win at every
// size.  shmcoll's own jobs ask once, in MPI_Init (runtime/context.cc); the
// accelerator once per process, at its first communicator's set-up
// (accel/setup.cc, ProbeCma), where it keeps single copy for blocks in the
// senders' shared heaps and sends private blocks of up to 64 KiB through
// the segment (accel/engine.cc, PushPrivate).
#pragma once

#include <cstdint>

namespace shmcoll::os {

// Whether reading 64 KiB of this process's own memory with
// process_vm_readv takes more than `factor` times as long as copying the
// same bytes (the best of 5 each, both ends hot).  False when factor is 0
// or the call fails.  Costs about 5 calls and 5 copies of 64 KiB.
bool processVmReadvSlow(uint64_t factor);

}  // namespace shmcoll::os
