// MPI_Alloc_mem and MPI_Free_mem (runtime/heap.h: memory in the shared
// segment that peers read without a system call).
#include "api/api.h"
#include "runtime/heap.h"
#include "runtime/info.h"

using namespace shmcoll;

SHMCOLL_API(int, MPI_Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr)) {
  const char* fn = "MPI_Alloc_mem";
  SHMCOLL_REQUIRE(api::active(), api::kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(size >= 0, api::kNoComm, fn, MPI_ERR_SIZE, "size = %ld is negative", static_cast<long>(size));
  SHMCOLL_REQUIRE(info == MPI_INFO_NULL || rt::info(info), api::kNoComm, fn, MPI_ERR_INFO,
                  "info = %#x is not a valid info object", static_cast<unsigned>(info));
  SHMCOLL_REQUIRE(baseptr, api::kNoComm, fn, MPI_ERR_ARG, "baseptr is NULL");
  void* p = rt::allocMem(static_cast<size_t>(size));
  SHMCOLL_REQUIRE(p, api::kNoComm, fn, MPI_ERR_NO_MEM, "cannot allocate %ld bytes", static_cast<long>(size));
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Free_mem, (void* base)) {
  const char* fn = "MPI_Free_mem";
  SHMCOLL_REQUIRE(api::active(), api::kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(rt::freeMem(base), api::kNoComm, fn, MPI_ERR_BASE,
                  "base = %p was not returned by MPI_Alloc_mem (or was freed already)", base);
  return MPI_SUCCESS;
}
