// What the communicator functions (comm.cc) share with the group functions (group.cc).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace shmcoll::api {

// MPI_IDENT (the same members in the same order), MPI_SIMILAR (the same
// members) or MPI_UNEQUAL: MPI_Group_compare's answer for two member lists.
int compareMembers(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b);

}  // namespace shmcoll::api
