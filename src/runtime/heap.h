// MPI_Alloc_mem memory: this rank's heap in the shared segment.
//
// Each rank owns a heap of SHMCOLL_ALLOC_MEM bytes (default 2 MiB) at the end
// of its area.  Every rank maps the whole segment, so a peer reads such a
// buffer with a plain copy (no process_vm_readv, no system call): the
// collectives and large point-to-point messages whose sender buffer lies
// there take that single-copy path.  Requests the heap cannot hold get
// private memory instead (the standard lets MPI_Alloc_mem return any memory).
#pragma once

#include <cstddef>

namespace shmcoll::rt {

// Allocates `bytes` (64-byte aligned); nullptr when out of memory.
void* allocMem(size_t bytes);
// Frees memory from allocMem; false when `p` did not come from it.
bool freeMem(void* p);
// Bytes of the heap in use (tests).
size_t heapInUse();

}  // namespace shmcoll::rt
