// Communicators, groups and error handlers: the handle tables behind the API.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "coll/engine.h"
#include "runtime/attr.h"
#include "runtime/info.h"

namespace shmcoll::rt {

struct Comm {
  coll::Team team;
  MPI_Comm handle = MPI_COMM_NULL;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  AttrList attrs;  // cached attributes (runtime/attr.h)
  Info hints;      // MPI_Comm_set_info / MPI_Comm_dup_with_info hints, as set
};

struct Group {
  std::vector<uint32_t> members;  // world ranks, in group rank order
  int refs = 1;
};

struct Errhandler {
  MPI_Comm_errhandler_function* fn = nullptr;
  int refs = 1;
};

// Creates MPI_COMM_WORLD (context 0) and MPI_COMM_SELF (context 1).
int initComms();
coll::Team& worldTeam();

// Handle look-ups: nullptr for null or invalid handles.
Comm* comm(MPI_Comm h);
Group* group(MPI_Group h);          // MPI_GROUP_EMPTY resolves to a static empty group
Errhandler* userErrhandler(MPI_Errhandler h);
bool validErrhandler(MPI_Errhandler h);

// Collective over `parent`; a rank that gets no communicator (color
// MPI_UNDEFINED, or not in the group) gets *out == nullptr.
int dupComm(Comm& parent, Comm** out);
int splitComm(Comm& parent, int color, int key, Comm** out);
int createComm(Comm& parent, const Group& g, Comm** out);
// Collective over the members of `g` only (the caller must be one).
int createGroupComm(Comm& parent, const Group& g, int tag, Comm** out);
// Collective: waits for every member, then releases the handle and context.
int freeComm(Comm* c);

MPI_Group newGroup(std::vector<uint32_t> members);
void releaseGroup(MPI_Group h);
MPI_Errhandler newErrhandler(MPI_Comm_errhandler_function* fn);
void releaseErrhandler(MPI_Errhandler h);

}  // namespace shmcoll::rt
