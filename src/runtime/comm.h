// Communicators, groups and error handlers: the handle tables behind the API.
//
// An intercommunicator is a Comm with `inter` set: `team` is its local group
// (MPI_Comm_rank/size/group answer from it), `remote` the remote group, and
// `peers` both groups in one order every member of either group shares (the
// group holding the lower world rank first), so that the point-to-point
// schedules of its collectives (coll/sched.h, coll/inter_exchange.cc) can address
// any member of either group.  Its context id is free on every member of both
// groups; user messages travel on it with the sender's local rank, and its
// collectives on the internal context of the same id with the sender's index
// in `peers`, so the two never meet.  No engine lines are used on it.
//
// Context ids and line sets (runtime/ids.h): blocking creations (dup,
// split, create, create_group, intercomm create and merge) take the lowest
// id, and line set, free on every member below their idup ranges;
// MPI_Comm_idup takes them from those ranges with the reservation protocol
// of runtime/idup.cc.  Keeping the two apart is what lets a blocking
// creation sample what is free, wait for its peers (running the progress
// engine, which may complete an idup) and install the pick without anything
// else taking it meanwhile.  An intercommunicator takes no line set.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "coll/coll.h"
#include "runtime/attr.h"
#include "runtime/ids.h"
#include "runtime/info.h"
#include "runtime/topo.h"

namespace shmcoll::rt {

struct Comm {
  coll::Team team;  // intercommunicator: the local group
  MPI_Comm handle = MPI_COMM_NULL;
  bool inter = false;
  std::vector<uint32_t> remote;     // intercommunicator: the remote group (world ranks, in rank order)
  coll::Team peers;                 // intercommunicator: both groups, the shared order (see above)
  uint32_t localBase = 0, remoteBase = 0;  // where each group starts in peers.members
  bool pending = false;             // made by MPI_Comm_idup, not yet complete: not usable
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  AttrList attrs;  // cached attributes (runtime/attr.h)
  Info hints;      // MPI_Comm_set_info / MPI_Comm_dup_with_info hints, as set
  std::shared_ptr<const Topology> topo;  // its process topology (runtime/topo.h), kept by dup and idup
  uint32_t holds = 0;  // persistent collective requests on it (holdComm)
  bool freed = false;  // MPI_Comm_free'd while in use: no handle finds it, it waits (freeComm)
};

struct Group {
  std::vector<uint32_t> members;  // world ranks, in group rank order
  int refs = 1;
};

struct Errhandler {
  MPI_Comm_errhandler_function* fn = nullptr;
  int refs = 1;
};

// The team a communicator's nonblocking schedules run on: the communicator
// itself, or both groups of an intercommunicator.
inline coll::Team& scheduleTeam(Comm& c) { return c.inter ? c.peers : c.team; }
// Where a communicator's collectives run, as the engine takes it.
inline coll::Place placeOf(Comm& c) {
  if (!c.inter) return coll::Place{&c.team};
  return coll::Place{&c.team, &c.peers,
                     coll::Groups{c.localBase, c.team.size(), c.remoteBase, static_cast<uint32_t>(c.remote.size())}};
}
// Peers a point-to-point rank names: the remote group of an intercommunicator.
inline uint32_t peerCount(const Comm& c) { return c.inter ? static_cast<uint32_t>(c.remote.size()) : c.team.size(); }
inline uint32_t peerWorld(const Comm& c, uint32_t rank) { return c.inter ? c.remote[rank] : c.team.members[rank]; }

// Creates MPI_COMM_WORLD (context 0) and MPI_COMM_SELF (context 1).
int initComms();
// MPI_THREAD_MULTIPLE somewhere in the job (wait/serial.h): MPI_COMM_WORLD and
// MPI_COMM_SELF give up their engine lines at the end of MPI_Init, as every
// later communicator goes without.
void dropWorldLines();
coll::Team& worldTeam();

// Handle look-ups: nullptr for null or invalid handles (and for a
// communicator whose MPI_Comm_idup has not completed; anyComm finds those).
Comm* comm(MPI_Comm h);
Comm* anyComm(MPI_Comm h);
// Why comm(h) found nothing, for error messages: " (MPI_COMM_NULL)", " (its
// MPI_Comm_idup has not completed)" or "".
const char* commNote(MPI_Comm h);
Group* group(MPI_Group h);          // MPI_GROUP_EMPTY resolves to a static empty group
Errhandler* userErrhandler(MPI_Errhandler h);
bool validErrhandler(MPI_Errhandler h);

// Collective over `parent` (both groups of an intercommunicator, which then
// gives intercommunicators: split and create apply to each group, and a rank
// whose color or group finds nobody on the other side gets none); a rank
// that gets no communicator (color MPI_UNDEFINED, or not in the group) gets
// *out == nullptr.
int dupComm(Comm& parent, Comm** out);
int splitComm(Comm& parent, int color, int key, Comm** out);
int createComm(Comm& parent, const Group& g, Comm** out);
// Collective over the members of `g` only (the caller must be one).
int createGroupComm(Comm& parent, const Group& g, int tag, Comm** out);
// MPI_Comm_free, local (the standard expects it so): the handle goes at
// once; the context id and the Comm stay while persistent requests hold it
// or operations of this rank still use its context (p2p::contextBusy), until
// reapFreed() finds them unused.
int freeComm(Comm* c);
// Destroys the freed communicators nothing uses any more (run before free
// context ids are collected).
void reapFreed();
// A persistent collective request keeps its communicator, which the standard
// lets the program free first: the request still starts on it, and its
// context id stays taken (so no new communicator's traffic can meet its
// messages) until releaseComm() drops the last hold.
void holdComm(Comm* c);
void releaseComm(Comm* c);

// MPI_Intercomm_create, collective over `local`: the leaders (local rank
// `localLeader`, and rank `remoteLeader` of `peer`, which only the local
// leader passes) exchange their groups and free context ids over `peer`
// with `tag`, then each tells its group.  An error found by a leader reaches
// every member of its group.
int createIntercomm(Comm& local, uint32_t localLeader, Comm* peer, int remoteLeader, int tag, Comm** out);
// MPI_Intercomm_merge, collective over both groups: the group that passed
// high = false comes first (the shared order when both passed the same).
int mergeIntercomm(Comm& ic, bool high, Comm** out);

// Gathers `bytes` from every member of c's schedule team into out, indexed as
// that team (one blocking collective on c).
int gatherAll(Comm& c, const void* mine, uint64_t bytes, void* out);

// MPI_Comm_idup's new communicator before its context is agreed: the same
// group(s) as `parent`, its error handler, a handle, but `pending` (the API
// refuses it) and no context yet.
Comm* pendingDup(const Comm& parent);
// Gives a pending communicator its context id, starting sequence number and
// line set (kNoLines: none).
void activate(Comm& c, uint32_t ctxId, uint64_t base, uint32_t lines);
// Releases a handle that never became usable (a failed idup).
void discardComm(Comm* c);

// The context ids and line sets free here, in the blocking creations'
// ranges or (`async`) in MPI_Comm_idup's.
void freeIds(bool async, FreeIds* out);
// The lowest context id in `ids` (the AND of every member's), or
// MPI_ERR_OTHER with a reason.
int lowestFree(const uint64_t* ids, uint32_t* ctxId);
int noFreeId();  // (that reason)

MPI_Group newGroup(std::vector<uint32_t> members);
void releaseGroup(MPI_Group h);
MPI_Errhandler newErrhandler(MPI_Comm_errhandler_function* fn);
void releaseErrhandler(MPI_Errhandler h);

}  // namespace shmcoll::rt
