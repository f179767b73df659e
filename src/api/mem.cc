// MPI_Alloc_mem and MPI_Free_mem (runtime/heap.h: memory in the shared
// segment that peers read without a system call).
#include "api/check.h"
#include "runtime/heap.h"

namespace shmcoll::api::impl {

int allocMem(Call& call, MPI_Aint size, rt::Info* info, void* baseptr) {
  if (size < 0) return check::fail(call, MPI_ERR_SIZE, "size = %ld is negative", static_cast<long>(size));
  void* p = rt::allocMem(static_cast<size_t>(size));
  if (!p) return check::fail(call, MPI_ERR_NO_MEM, "cannot allocate %ld bytes", static_cast<long>(size));
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

int freeMem(Call& call, void* base) {
  if (!rt::freeMem(base))
    return check::fail(call, MPI_ERR_BASE, "base = %p was not returned by MPI_Alloc_mem (or was freed already)", base);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_mem.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/mem.txt)
