// Communicator and group calls.
#include <algorithm>
#include <vector>

#include "api/api.h"
#include "api/attr.h"
#include "api/request.h"
#include "coll/coll.h"
#include "runtime/comm.h"
#include "runtime/context.h"

using namespace shmcoll;

#define NEED_INIT(fn) \
  SHMCOLL_REQUIRE(api::active(), api::kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize")
#define NEED_COMM(c, h, fn)                                                                                   \
  rt::Comm* c = rt::comm(h);                                                                                  \
  SHMCOLL_REQUIRE(c, h, fn, MPI_ERR_COMM, "comm = %#x is not a valid communicator%s", static_cast<unsigned>(h), \
                  ::shmcoll::rt::commNote(h))
#define NEED_GROUP(g, h, fn, arg)                                                                           \
  rt::Group* g = rt::group(h);                                                                              \
  SHMCOLL_REQUIRE(g, api::kNoComm, fn, MPI_ERR_GROUP, "%s = %#x is not a valid group", arg, static_cast<unsigned>(h))

SHMCOLL_API(int, MPI_Comm_rank, (MPI_Comm comm, int* rank)) {
  NEED_INIT("MPI_Comm_rank");
  NEED_COMM(c, comm, "MPI_Comm_rank");
  SHMCOLL_REQUIRE(rank, comm, "MPI_Comm_rank", MPI_ERR_ARG, "rank is NULL");
  *rank = static_cast<int>(c->team.rank);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Comm_size, (MPI_Comm comm, int* size)) {
  NEED_INIT("MPI_Comm_size");
  NEED_COMM(c, comm, "MPI_Comm_size");
  SHMCOLL_REQUIRE(size, comm, "MPI_Comm_size", MPI_ERR_ARG, "size is NULL");
  *size = static_cast<int>(c->team.size());
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Comm_test_inter, (MPI_Comm comm, int* flag)) {
  NEED_INIT("MPI_Comm_test_inter");
  NEED_COMM(c, comm, "MPI_Comm_test_inter");
  SHMCOLL_REQUIRE(flag, comm, "MPI_Comm_test_inter", MPI_ERR_ARG, "flag is NULL");
  *flag = c->inter ? 1 : 0;
  return MPI_SUCCESS;
}

#define NEED_INTER(c, h, fn) \
  SHMCOLL_REQUIRE(c->inter, h, fn, MPI_ERR_COMM, "comm is an intracommunicator; %s needs an intercommunicator", fn)
#define NEED_INTRA(c, h, fn, arg)                                                                          \
  SHMCOLL_REQUIRE(!c->inter, h, fn, MPI_ERR_COMM, "%s is an intercommunicator; %s is not supported on " \
                  "intercommunicators", arg, fn)

SHMCOLL_API(int, MPI_Comm_remote_size, (MPI_Comm comm, int* size)) {
  NEED_INIT("MPI_Comm_remote_size");
  NEED_COMM(c, comm, "MPI_Comm_remote_size");
  NEED_INTER(c, comm, "MPI_Comm_remote_size");
  SHMCOLL_REQUIRE(size, comm, "MPI_Comm_remote_size", MPI_ERR_ARG, "size is NULL");
  *size = static_cast<int>(c->remote.size());
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Comm_remote_group, (MPI_Comm comm, MPI_Group* group)) {
  NEED_INIT("MPI_Comm_remote_group");
  NEED_COMM(c, comm, "MPI_Comm_remote_group");
  NEED_INTER(c, comm, "MPI_Comm_remote_group");
  SHMCOLL_REQUIRE(group, comm, "MPI_Comm_remote_group", MPI_ERR_ARG, "group is NULL");
  *group = rt::newGroup(c->remote);
  return MPI_SUCCESS;
}

namespace {
int finishCreate(MPI_Comm parent, const char* fn, int rc, rt::Comm* nc, MPI_Comm* newcomm) {
  if (rc) return api::raise(parent, fn, rc);
  *newcomm = nc ? nc->handle : MPI_COMM_NULL;
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm)) {
  NEED_INIT("MPI_Comm_dup");
  NEED_COMM(c, comm, "MPI_Comm_dup");
  SHMCOLL_REQUIRE(newcomm, comm, "MPI_Comm_dup", MPI_ERR_ARG, "newcomm is NULL");
  rt::Comm* nc = nullptr;
  if (int rc = rt::dupComm(*c, &nc)) return api::raise(comm, "MPI_Comm_dup", rc);
  // The copy keeps comm's hints, and its attributes as their copy callbacks
  // say; the name is not inherited (api/attr.cc).
  return api::completeDup(comm, nc, c->hints, "MPI_Comm_dup", newcomm);
}

SHMCOLL_API(int, MPI_Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm)) {
  NEED_INIT("MPI_Comm_split");
  NEED_COMM(c, comm, "MPI_Comm_split");
  SHMCOLL_REQUIRE(newcomm, comm, "MPI_Comm_split", MPI_ERR_ARG, "newcomm is NULL");
  SHMCOLL_REQUIRE(color >= 0 || color == MPI_UNDEFINED, comm, "MPI_Comm_split", MPI_ERR_ARG,
                  "color = %d must be non-negative or MPI_UNDEFINED", color);
  rt::Comm* nc = nullptr;
  int rc = rt::splitComm(*c, color, key, &nc);
  return finishCreate(comm, "MPI_Comm_split", rc, nc, newcomm);
}

SHMCOLL_API(int, MPI_Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm)) {
  NEED_INIT("MPI_Comm_split_type");
  NEED_COMM(c, comm, "MPI_Comm_split_type");
  NEED_INTRA(c, comm, "MPI_Comm_split_type", "comm");
  SHMCOLL_REQUIRE(newcomm, comm, "MPI_Comm_split_type", MPI_ERR_ARG, "newcomm is NULL");
  SHMCOLL_REQUIRE(split_type == MPI_UNDEFINED || split_type == MPI_COMM_TYPE_SHARED ||
                      split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED,
                  comm, "MPI_Comm_split_type", MPI_ERR_ARG, "split_type = %d is not a split type", split_type);
  // Every rank of a job shares one node's memory: MPI_COMM_TYPE_SHARED keeps
  // them all together.  The hardware-guided types would need a resource type
  // from the info argument; without one the standard lets us return
  // MPI_COMM_NULL, which we do (still collectively).
  SHMCOLL_REQUIRE(info == MPI_INFO_NULL || rt::info(info), comm, "MPI_Comm_split_type", MPI_ERR_INFO,
                  "info = %#x is not a valid info object", static_cast<unsigned>(info));
  int color = split_type == MPI_COMM_TYPE_SHARED ? 0 : MPI_UNDEFINED;
  rt::Comm* nc = nullptr;
  int rc = rt::splitComm(*c, color, key, &nc);
  // The info argument becomes the new communicator's hints (MPI_Comm_get_info returns them).
  if (rc == 0 && nc && info != MPI_INFO_NULL) nc->hints = *rt::info(info);
  return finishCreate(comm, "MPI_Comm_split_type", rc, nc, newcomm);
}

SHMCOLL_API(int, MPI_Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm)) {
  NEED_INIT("MPI_Comm_create");
  NEED_COMM(c, comm, "MPI_Comm_create");
  SHMCOLL_REQUIRE(newcomm, comm, "MPI_Comm_create", MPI_ERR_ARG, "newcomm is NULL");
  rt::Group* g = rt::group(group);
  SHMCOLL_REQUIRE(g, comm, "MPI_Comm_create", MPI_ERR_GROUP, "group = %#x is not a valid group",
                  static_cast<unsigned>(group));
  // (On an intercommunicator, group is a subgroup of the local group.)
  for (uint32_t m : g->members)
    SHMCOLL_REQUIRE(std::find(c->team.members.begin(), c->team.members.end(), m) != c->team.members.end(), comm,
                    "MPI_Comm_create", MPI_ERR_GROUP, "group holds a process that is not in the %s of comm",
                    c->inter ? "local group" : "group");
  rt::Comm* nc = nullptr;
  int rc = rt::createComm(*c, *g, &nc);
  return finishCreate(comm, "MPI_Comm_create", rc, nc, newcomm);
}

SHMCOLL_API(int, MPI_Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm)) {
  NEED_INIT("MPI_Comm_create_group");
  NEED_COMM(c, comm, "MPI_Comm_create_group");
  NEED_INTRA(c, comm, "MPI_Comm_create_group", "comm");
  SHMCOLL_REQUIRE(newcomm, comm, "MPI_Comm_create_group", MPI_ERR_ARG, "newcomm is NULL");
  SHMCOLL_REQUIRE(tag >= 0, comm, "MPI_Comm_create_group", MPI_ERR_TAG, "tag = %d is negative", tag);
  rt::Group* g = rt::group(group);
  SHMCOLL_REQUIRE(g, comm, "MPI_Comm_create_group", MPI_ERR_GROUP, "group = %#x is not a valid group",
                  static_cast<unsigned>(group));
  for (uint32_t m : g->members)
    SHMCOLL_REQUIRE(std::find(c->team.members.begin(), c->team.members.end(), m) != c->team.members.end(), comm,
                    "MPI_Comm_create_group", MPI_ERR_GROUP, "group holds a process that is not in comm");
  if (g->members.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  SHMCOLL_REQUIRE(std::find(g->members.begin(), g->members.end(), rt::ctx().eng.rank) != g->members.end(), comm,
                  "MPI_Comm_create_group", MPI_ERR_GROUP, "the calling process is not in group");
  rt::Comm* nc = nullptr;
  int rc = rt::createGroupComm(*c, *g, tag, &nc);
  return finishCreate(comm, "MPI_Comm_create_group", rc, nc, newcomm);
}

SHMCOLL_API(int, MPI_Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                        int remote_leader, int tag, MPI_Comm* newintercomm)) {
  const char* fn = "MPI_Intercomm_create";
  NEED_INIT(fn);
  NEED_COMM(c, local_comm, fn);
  NEED_INTRA(c, local_comm, fn, "local_comm");
  SHMCOLL_REQUIRE(newintercomm, local_comm, fn, MPI_ERR_ARG, "newintercomm is NULL");
  const uint32_t n = c->team.size();
  SHMCOLL_REQUIRE(local_leader >= 0 && static_cast<uint32_t>(local_leader) < n, local_comm, fn, MPI_ERR_RANK,
                  "local_leader = %d is not a rank of local_comm (size %u)", local_leader, n);
  // peer_comm, remote_leader and tag matter at the local leader only, which
  // checks them and tells the others (rt::createIntercomm).
  const bool leader = c->team.rank == static_cast<uint32_t>(local_leader);
  rt::Comm* nc = nullptr;
  int rc = rt::createIntercomm(*c, static_cast<uint32_t>(local_leader), leader ? rt::comm(peer_comm) : nullptr,
                               remote_leader, tag, &nc);
  return finishCreate(local_comm, fn, rc, nc, newintercomm);
}

SHMCOLL_API(int, MPI_Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm)) {
  const char* fn = "MPI_Intercomm_merge";
  NEED_INIT(fn);
  NEED_COMM(c, intercomm, fn);
  SHMCOLL_REQUIRE(c->inter, intercomm, fn, MPI_ERR_COMM, "intercomm is an intracommunicator");
  SHMCOLL_REQUIRE(newintracomm, intercomm, fn, MPI_ERR_ARG, "newintracomm is NULL");
  rt::Comm* nc = nullptr;
  int rc = rt::mergeIntercomm(*c, high != 0, &nc);
  return finishCreate(intercomm, fn, rc, nc, newintracomm);
}

SHMCOLL_API(int, MPI_Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request)) {
  NEED_INIT("MPI_Comm_idup");
  NEED_COMM(c, comm, "MPI_Comm_idup");
  SHMCOLL_REQUIRE(newcomm, comm, "MPI_Comm_idup", MPI_ERR_ARG, "newcomm is NULL");
  SHMCOLL_REQUIRE(request, comm, "MPI_Comm_idup", MPI_ERR_ARG, "request is NULL");
  return api::startIdup(comm, c->hints, "MPI_Comm_idup", newcomm, request);
}

SHMCOLL_API(int, MPI_Comm_free, (MPI_Comm * comm)) {
  NEED_INIT("MPI_Comm_free");
  SHMCOLL_REQUIRE(comm, api::kNoComm, "MPI_Comm_free", MPI_ERR_ARG, "comm is NULL");
  NEED_COMM(c, *comm, "MPI_Comm_free");
  SHMCOLL_REQUIRE(*comm != MPI_COMM_WORLD && *comm != MPI_COMM_SELF, *comm, "MPI_Comm_free", MPI_ERR_COMM,
                  "cannot free a predefined communicator");
  MPI_Comm h = *comm;
  // Attribute delete callbacks run first; the communicator goes even if one
  // fails, since the other members free it too (api/attr.cc).
  const int attrRc = api::deleteCommAttrs(h, "MPI_Comm_free");
  c = rt::comm(h);  // (a callback may have freed it already)
  if (int rc = c ? rt::freeComm(c) : 0) return api::raise(h, "MPI_Comm_free", rc);
  *comm = MPI_COMM_NULL;
  return attrRc;
}

namespace {
// MPI_IDENT (same members, same order), MPI_SIMILAR (same members) or MPI_UNEQUAL.
int compareMembers(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b) {
  if (a == b) return MPI_IDENT;
  auto x = a, y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? MPI_SIMILAR : MPI_UNEQUAL;
}
}  // namespace

SHMCOLL_API(int, MPI_Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result)) {
  NEED_INIT("MPI_Comm_compare");
  NEED_COMM(a, comm1, "MPI_Comm_compare");
  NEED_COMM(b, comm2, "MPI_Comm_compare");
  SHMCOLL_REQUIRE(result, comm1, "MPI_Comm_compare", MPI_ERR_ARG, "result is NULL");
  // Intercommunicators compare both groups; one never matches an intracommunicator.
  const int local = compareMembers(a->team.members, b->team.members);
  const int remote = a->inter && b->inter ? compareMembers(a->remote, b->remote) : MPI_IDENT;
  if (comm1 == comm2) {
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

SHMCOLL_API(int, MPI_Comm_group, (MPI_Comm comm, MPI_Group* group)) {
  NEED_INIT("MPI_Comm_group");
  NEED_COMM(c, comm, "MPI_Comm_group");
  SHMCOLL_REQUIRE(group, comm, "MPI_Comm_group", MPI_ERR_ARG, "group is NULL");
  *group = rt::newGroup(c->team.members);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Group_size, (MPI_Group group, int* size)) {
  NEED_GROUP(g, group, "MPI_Group_size", "group");
  SHMCOLL_REQUIRE(size, api::kNoComm, "MPI_Group_size", MPI_ERR_ARG, "size is NULL");
  *size = static_cast<int>(g->members.size());
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Group_rank, (MPI_Group group, int* rank)) {
  NEED_GROUP(g, group, "MPI_Group_rank", "group");
  SHMCOLL_REQUIRE(rank, api::kNoComm, "MPI_Group_rank", MPI_ERR_ARG, "rank is NULL");
  auto it = std::find(g->members.begin(), g->members.end(), rt::ctx().eng.rank);
  *rank = it == g->members.end() ? MPI_UNDEFINED : static_cast<int>(it - g->members.begin());
  return MPI_SUCCESS;
}

namespace {
// Checks ranks[0..n) against a group of `size`: in range and, when `distinct`, no repeats.
int checkRanks(const char* fn, int n, const int* ranks, size_t size) {
  SHMCOLL_REQUIRE(n >= 0, api::kNoComm, fn, MPI_ERR_ARG, "n = %d is negative", n);
  SHMCOLL_REQUIRE(n == 0 || ranks, api::kNoComm, fn, MPI_ERR_ARG, "ranks is NULL with n = %d", n);
  std::vector<bool> seen(size, false);
  for (int i = 0; i < n; ++i) {
    SHMCOLL_REQUIRE(ranks[i] >= 0 && static_cast<size_t>(ranks[i]) < size, api::kNoComm, fn, MPI_ERR_RANK,
                    "ranks[%d] = %d is outside the group of size %zu", i, ranks[i], size);
    SHMCOLL_REQUIRE(!seen[ranks[i]], api::kNoComm, fn, MPI_ERR_RANK, "ranks[%d] = %d appears twice", i, ranks[i]);
    seen[ranks[i]] = true;
  }
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup)) {
  NEED_GROUP(g, group, "MPI_Group_incl", "group");
  SHMCOLL_REQUIRE(newgroup, api::kNoComm, "MPI_Group_incl", MPI_ERR_ARG, "newgroup is NULL");
  if (int rc = checkRanks("MPI_Group_incl", n, ranks, g->members.size())) return rc;
  std::vector<uint32_t> m;
  for (int i = 0; i < n; ++i) m.push_back(g->members[ranks[i]]);
  *newgroup = m.empty() ? MPI_GROUP_EMPTY : rt::newGroup(std::move(m));
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup)) {
  NEED_GROUP(g, group, "MPI_Group_excl", "group");
  SHMCOLL_REQUIRE(newgroup, api::kNoComm, "MPI_Group_excl", MPI_ERR_ARG, "newgroup is NULL");
  if (int rc = checkRanks("MPI_Group_excl", n, ranks, g->members.size())) return rc;
  std::vector<bool> drop(g->members.size(), false);
  for (int i = 0; i < n; ++i) drop[ranks[i]] = true;
  std::vector<uint32_t> m;
  for (size_t i = 0; i < g->members.size(); ++i)
    if (!drop[i]) m.push_back(g->members[i]);
  *newgroup = m.empty() ? MPI_GROUP_EMPTY : rt::newGroup(std::move(m));
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Group_translate_ranks,
            (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[])) {
  NEED_GROUP(a, group1, "MPI_Group_translate_ranks", "group1");
  NEED_GROUP(b, group2, "MPI_Group_translate_ranks", "group2");
  SHMCOLL_REQUIRE(n >= 0, api::kNoComm, "MPI_Group_translate_ranks", MPI_ERR_ARG, "n = %d is negative", n);
  SHMCOLL_REQUIRE(n == 0 || (ranks1 && ranks2), api::kNoComm, "MPI_Group_translate_ranks", MPI_ERR_ARG,
                  "ranks1 or ranks2 is NULL");
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    SHMCOLL_REQUIRE(ranks1[i] >= 0 && static_cast<size_t>(ranks1[i]) < a->members.size(), api::kNoComm,
                    "MPI_Group_translate_ranks", MPI_ERR_RANK, "ranks1[%d] = %d is outside group1", i, ranks1[i]);
    auto it = std::find(b->members.begin(), b->members.end(), a->members[ranks1[i]]);
    ranks2[i] = it == b->members.end() ? MPI_UNDEFINED : static_cast<int>(it - b->members.begin());
  }
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Group_compare, (MPI_Group group1, MPI_Group group2, int* result)) {
  NEED_GROUP(a, group1, "MPI_Group_compare", "group1");
  NEED_GROUP(b, group2, "MPI_Group_compare", "group2");
  SHMCOLL_REQUIRE(result, api::kNoComm, "MPI_Group_compare", MPI_ERR_ARG, "result is NULL");
  if (a->members == b->members) {
    *result = MPI_IDENT;
  } else {
    auto x = a->members, y = b->members;
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    *result = x == y ? MPI_SIMILAR : MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Group_free, (MPI_Group * group)) {
  SHMCOLL_REQUIRE(group, api::kNoComm, "MPI_Group_free", MPI_ERR_ARG, "group is NULL");
  if (*group != MPI_GROUP_EMPTY) {
    NEED_GROUP(g, *group, "MPI_Group_free", "group");
    (void)g;
    rt::releaseGroup(*group);
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}
