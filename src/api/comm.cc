// Communicators: rank and size, the remote group of an intercommunicator,
// comparison, and the constructors (dup, split, create, create_group,
// intercomm_create and merge, idup) and MPI_Comm_free.  The generated entry
// points have checked the communicator, group and output arguments; the
// constructors run in runtime/comm.cc, attributes and hints are carried over
// by api/attr.cc and api/info.cc.
#include <algorithm>
#include <vector>

#include "api/attr.h"
#include "api/check.h"
#include "api/group.h"
#include "api/request.h"
#include "runtime/comm.h"
#include "runtime/context.h"

namespace shmcoll::api::impl {

namespace {

// A constructor that ran on every member: its result, or its failure.
int created(const Call& call, int rc, rt::Comm* nc, MPI_Comm* newcomm) {
  if (rc) return check::engine(call, rc);
  *newcomm = nc ? nc->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}

// Every member of `g` is a member of `c` (of its local group, on an intercommunicator).
int subgroup(const Call& call, const rt::Comm* c, const rt::Group* g) {
  for (uint32_t m : g->members)
    if (std::find(c->team.members.begin(), c->team.members.end(), m) == c->team.members.end())
      return check::fail(call, MPI_ERR_GROUP, "group holds a process that is not in the %s of comm",
                         c->inter ? "local group" : "group");
  return MPI_SUCCESS;
}

}  // namespace

int commRank(Call&, rt::Comm* c, int* rank) { return answer(rank, c->team.rank); }
int commSize(Call&, rt::Comm* c, int* size) { return answer(size, c->team.size()); }
int commTestInter(Call&, rt::Comm* c, int* flag) { return answer(flag, c->inter ? 1 : 0); }
int commRemoteSize(Call&, rt::Comm* c, int* size) { return answer(size, c->remote.size()); }
int commRemoteGroup(Call&, rt::Comm* c, MPI_Group* group) { return answer(group, rt::newGroup(c->remote)); }
int commGroup(Call&, rt::Comm* c, MPI_Group* group) { return answer(group, rt::newGroup(c->team.members)); }

int commCompare(Call& call, rt::Comm* a, rt::Comm* b, int* result) {
  // Intercommunicators compare both groups; one never matches an intracommunicator.
  const int local = compareMembers(a->team.members, b->team.members);
  const int remote = a->inter && b->inter ? compareMembers(a->remote, b->remote) : MPI_IDENT;
  if (a == b) {
    *result = MPI_IDENT;
  } else if (a->inter != b->inter) {
    *result = MPI_UNEQUAL;
  } else if (local == MPI_IDENT && remote == MPI_IDENT) {
    *result = MPI_CONGRUENT;
  } else {
    *result = local != MPI_UNEQUAL && remote != MPI_UNEQUAL ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

int commDup(Call& call, rt::Comm* c, MPI_Comm* newcomm) {
  rt::Comm* nc = nullptr;
  if (int rc = rt::dupComm(*c, &nc)) return check::engine(call, rc);
  // The copy keeps comm's hints, and its attributes as their copy callbacks
  // say; the name is not inherited (api/attr.cc).
  return completeDup(c->handle, nc, c->hints, call.fn, newcomm);
}

int commIdup(Call& call, rt::Comm* c, MPI_Comm* newcomm, MPI_Request* request) {
  return startIdup(c->handle, c->hints, call.fn, newcomm, request);
}

int commSplit(Call& call, rt::Comm* c, int color, int key, MPI_Comm* newcomm) {
  if (color < 0 && color != MPI_UNDEFINED)
    return check::fail(call, MPI_ERR_ARG, "color = %d must be non-negative or MPI_UNDEFINED", color);
  rt::Comm* nc = nullptr;
  const int rc = rt::splitComm(*c, color, key, &nc);
  return created(call, rc, nc, newcomm);
}

int commSplitType(Call& call, rt::Comm* c, int splitType, int key, rt::Info* info, MPI_Comm* newcomm) {
  if (splitType != MPI_UNDEFINED && splitType != MPI_COMM_TYPE_SHARED && splitType != MPI_COMM_TYPE_HW_GUIDED &&
      splitType != MPI_COMM_TYPE_HW_UNGUIDED)
    return check::fail(call, MPI_ERR_ARG, "split_type = %d is not a split type", splitType);
  // Every rank of a job shares one node's memory: MPI_COMM_TYPE_SHARED keeps
  // them all together.  The hardware-guided types would need a resource type
  // from the info argument; without one the standard lets us return
  // MPI_COMM_NULL, which we do (still collectively).
  const int color = splitType == MPI_COMM_TYPE_SHARED ? 0 : MPI_UNDEFINED;
  rt::Comm* nc = nullptr;
  const int rc = rt::splitComm(*c, color, key, &nc);
  // The info argument becomes the new communicator's hints (MPI_Comm_get_info returns them).
  if (rc == 0 && nc && info) nc->hints = *info;
  return created(call, rc, nc, newcomm);
}

int commCreate(Call& call, rt::Comm* c, rt::Group* g, MPI_Comm* newcomm) {
  SHMCOLL_CHECK(subgroup(call, c, g));  // (on an intercommunicator, a subgroup of the local group)
  rt::Comm* nc = nullptr;
  const int rc = rt::createComm(*c, *g, &nc);
  return created(call, rc, nc, newcomm);
}

int commCreateGroup(Call& call, rt::Comm* c, rt::Group* g, int tag, MPI_Comm* newcomm) {
  SHMCOLL_CHECK(subgroup(call, c, g));
  if (g->members.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  if (std::find(g->members.begin(), g->members.end(), rt::ctx().eng.rank) == g->members.end())
    return check::fail(call, MPI_ERR_GROUP, "the calling process is not in group");
  rt::Comm* nc = nullptr;
  const int rc = rt::createGroupComm(*c, *g, tag, &nc);
  return created(call, rc, nc, newcomm);
}

int intercommCreate(Call& call, rt::Comm* c, int localLeader, MPI_Comm peerComm, int remoteLeader, int tag,
                    MPI_Comm* newintercomm) {
  const uint32_t n = c->team.size();
  if (localLeader < 0 || static_cast<uint32_t>(localLeader) >= n)
    return check::fail(call, MPI_ERR_RANK, "local_leader = %d is not a rank of local_comm (size %u)", localLeader, n);
  // peer_comm, remote_leader and tag matter at the local leader only, which
  // checks them and tells the others (rt::createIntercomm).
  const bool leader = c->team.rank == static_cast<uint32_t>(localLeader);
  rt::Comm* nc = nullptr;
  const int rc = rt::createIntercomm(*c, static_cast<uint32_t>(localLeader), leader ? rt::comm(peerComm) : nullptr,
                                     remoteLeader, tag, &nc);
  return created(call, rc, nc, newintercomm);
}

int intercommMerge(Call& call, rt::Comm* c, int high, MPI_Comm* newintracomm) {
  rt::Comm* nc = nullptr;
  const int rc = rt::mergeIntercomm(*c, high != 0, &nc);
  return created(call, rc, nc, newintracomm);
}

int commFree(Call& call, MPI_Comm* comm) {
  rt::Comm* c = nullptr;
  SHMCOLL_CHECK(check::comm(call, "comm", *comm, &c));
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
    return raisef(*comm, call.fn, MPI_ERR_COMM, "cannot free a predefined communicator");
  const MPI_Comm h = *comm;
  // Attribute delete callbacks run first; the communicator goes even if one
  // fails, since the other members free it too (api/attr.cc).
  const int attrRc = deleteCommAttrs(h, call.fn);
  c = rt::comm(h);  // (a callback may have freed it already)
  if (int rc = c ? rt::freeComm(c) : 0) return raise(h, call.fn, rc);
  *comm = MPI_COMM_NULL;
  return attrRc;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_comm.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/comm.txt)
