// MPI_Comm_create_group and MPI_Intercomm_create: the creations whose
// members agree by messages between leaders rather than by a collective over
// the parent (runtime/comm.cc has the others).
#include <algorithm>
#include <cstring>

#include "common/status.h"
#include "runtime/comm_make.h"
#include "runtime/context.h"
#include "transport/lanes.h"
#include "wait/serial.h"

namespace shmcoll::rt {

// MPI_Comm_create_group: only the group's members take part, so nothing of
// the parent's collectives can be used to agree.  Group rank 0 leads: every
// other member sends it a request (its tag, free ids and line sets, highest
// sequence number) on the parent's create-group context; the leader ANDs
// them, picks the lowest id and line set free everywhere and a base above
// every member's numbers, and answers each.  The messages of one pair
// arrive in order, so successive calls on one parent never mix.
namespace {
constexpr uint32_t kCreateGroupCtx = p2p::kInternalCtx | 0x40000000u;  // | the parent's id: no other traffic's
constexpr uint32_t kCreateGroupAnswer = 0x20000000u;
struct GroupAsk {
  int32_t tag;
  uint32_t contended;  // another creation held the turn to offer ids at this member (IdTurn)
  uint64_t highSeq;
  FreeIds free;
};
struct GroupAnswer {
  int32_t err;  // 0, MPI_ERR_TAG, MPI_ERR_OTHER (no common id) or kAgainErr (none while some were held)
  uint32_t ctxId, lines, pad;
  uint64_t base;
};

int createGroupOnce(Comm& parent, const Group& g, int tag, bool turn, bool* again, Comm** out) {
  // Requests on ctxTag, answers on answerTag.  At MPI_THREAD_MULTIPLE the
  // messages carry the call's tag, which the standard has tell apart the
  // calls that threads make on one parent at once; otherwise tag 0, and the
  // leader checks that the members passed the same tag.
  const uint32_t ctxTag = kCreateGroupCtx | parent.team.ctxId, answerTag = ctxTag | kCreateGroupAnswer;
  const int msgTag = wait::gSerialOn ? tag : 0;
  const dt::Type* bytes = dt::byteType();
  auto envelope = [&](uint32_t world, uint32_t ctxId) {
    return p2p::Envelope{world, ctxId, static_cast<int32_t>(parent.team.rank), msgTag};
  };
  auto parentRank = [&](uint32_t world) { return static_cast<int>(indexOf(parent.team.members, world)); };
  GroupAsk mine{};
  mine.tag = tag;
  mine.highSeq = transport::lanes().highSeq;
  mine.contended = turn ? 0 : 1;
  if (turn) freeIds(false, &mine.free);  // (else none)
  GroupAnswer ans{};
  const uint32_t leader = g.members[0];
  if (ctx().eng.rank != leader) {
    p2p::Request* r = p2p::irecv(&ans, sizeof ans, bytes, answerTag, parentRank(leader), msgTag);
    int rc = p2p::send(&mine, sizeof mine, bytes, envelope(leader, ctxTag), p2p::Mode::kStandard);
    if (rc == kOk) rc = p2p::wait(r);
    p2p::release(r);
    SHMCOLL_CHECK(rc);
  } else {
    const size_t n = g.members.size();
    std::vector<GroupAsk> asks(n);
    std::vector<p2p::Request*> rs(n, nullptr);
    for (size_t i = 1; i < n; ++i)
      rs[i] = p2p::irecv(&asks[i], sizeof(GroupAsk), bytes, ctxTag, parentRank(g.members[i]), msgTag);
    int rc = kOk;
    for (size_t i = 1; i < n; ++i) {
      if (rc == kOk) rc = p2p::wait(rs[i]);
      p2p::release(rs[i]);
    }
    SHMCOLL_CHECK(rc);
    FreeIds common = mine.free;
    bool tagsAgree = true, anyContended = mine.contended != 0;
    ans.base = mine.highSeq;
    for (size_t i = 1; i < n; ++i) {
      tagsAgree &= asks[i].tag == tag;
      anyContended |= asks[i].contended != 0;
      ans.base = std::max(ans.base, asks[i].highSeq);
      common.intersect(asks[i].free);
    }
    ans.ctxId = lowestSet(common.ctx, kCtxWords);
    ans.lines = lowestSet(common.lines, kLineWords);
    ans.err = !tagsAgree ? MPI_ERR_TAG : ans.ctxId != UINT32_MAX ? 0 : anyContended ? kAgainErr : MPI_ERR_OTHER;
    for (size_t i = 1; i < n; ++i)
      SHMCOLL_CHECK(p2p::send(&ans, sizeof ans, bytes, envelope(g.members[i], answerTag), p2p::Mode::kStandard));
  }
  *again = ans.err == kAgainErr;
  if (*again) return kOk;
  if (ans.err == MPI_ERR_TAG)
    return fail(MPI_ERR_TAG, "the members of the group passed different tags (this rank passed %d)", tag);
  if (ans.err) return noFreeId();
  *out = install(g.members, ans.ctxId, ans.lines, ans.base, parent);
  return kOk;
}

}  // namespace

int createGroupComm(Comm& parent, const Group& g, int tag, Comm** out) {
  *out = nullptr;
  return inTurns([&](bool turn, bool* again) { return createGroupOnce(parent, g, tag, turn, again, out); },
                 [&] { return creationKey(parent.team.ctxId, static_cast<uint32_t>(tag) + 1); });
}

namespace {

// What one leader tells the other in MPI_Intercomm_create: the context ids
// free on every member of its group, then its group (world ranks).
struct Hello {
  uint64_t freeCtx[kCtxWords];
  uint32_t size;
  uint32_t contended;  // another creation held the turn to offer ids at some member of the group (IdTurn)
  uint32_t localCtx;   // the context id of the group's local communicator
  uint32_t pad;
};

// What each member of the local group contributes first.
struct MemberFree {
  uint64_t ctx[kCtxWords];
  uint64_t contended;
};

// What a leader tells its group afterwards.
struct Verdict {
  int32_t err;  // an error class the leader found, or 0
  uint32_t ctxId;
  uint32_t nremote;
  uint32_t remoteCtx;  // the context id of the remote group's local communicator
};

// The local leader's part: checks remote_leader, swaps a Hello with the
// remote leader over `peer`, and picks the context id free on both groups
// (both leaders compute the same pick from the same two sets).
int leaderExchange(const Comm& local, const uint64_t* localFree, bool contended, Comm* peer, int remoteLeader, int tag,
                   uint32_t* ctxId, std::vector<uint32_t>* remote, uint32_t* remoteCtx, bool* again) {
  if (!peer) return fail(MPI_ERR_COMM, "peer_comm is not a valid communicator at the local leader");
  if (tag < 0) return fail(MPI_ERR_TAG, "tag = %d is negative", tag);
  const uint32_t n = peerCount(*peer);
  if (remoteLeader < 0 || static_cast<uint32_t>(remoteLeader) >= n)
    return fail(MPI_ERR_RANK, "remote_leader = %d is not a rank of peer_comm (size %u)", remoteLeader, n);
  const uint32_t dest = peerWorld(*peer, static_cast<uint32_t>(remoteLeader));
  if (indexOf(local.team.members, dest) < local.team.size())
    return fail(MPI_ERR_RANK, "remote_leader = %d of peer_comm is a member of local_comm (the groups must be disjoint)",
                remoteLeader);
  const dt::Type* bytes = dt::byteType();
  std::vector<char> out(sizeof(Hello) + 4 * local.team.size());
  Hello h{};
  std::copy(localFree, localFree + kCtxWords, h.freeCtx);
  h.size = local.team.size();
  h.contended = contended;
  h.localCtx = local.team.ctxId;
  memcpy(out.data(), &h, sizeof h);
  memcpy(out.data() + sizeof h, local.team.members.data(), 4 * local.team.size());
  std::vector<char> in(sizeof(Hello) + 4 * ctx().eng.size);
  p2p::Envelope env{dest, peer->team.ctxId, static_cast<int32_t>(peer->team.rank), tag};
  p2p::Request* r = p2p::irecv(in.data(), in.size(), bytes, peer->team.ctxId, remoteLeader, tag);
  p2p::Request* s = p2p::isend(out.data(), out.size(), bytes, env, p2p::Mode::kStandard);
  int rc = p2p::wait(s);
  p2p::release(s);
  if (rc == 0) rc = p2p::wait(r);
  const p2p::Status st = r->status;
  p2p::release(r);
  if (rc) return rc;
  Hello theirs;
  memcpy(&theirs, in.data(), sizeof theirs);
  if (st.error || st.bytes < sizeof theirs || st.bytes != sizeof theirs + 4ull * theirs.size || theirs.size == 0)
    return fail(MPI_ERR_OTHER,
                "the message from the remote leader (tag %d on peer_comm) is not an MPI_Intercomm_create greeting "
                "(a message of the program with the same tag?)",
                tag);
  *remoteCtx = theirs.localCtx;
  remote->resize(theirs.size);
  memcpy(remote->data(), in.data() + sizeof theirs, 4 * theirs.size);
  for (uint32_t w : *remote)
    if (indexOf(local.team.members, w) < local.team.size())
      return fail(MPI_ERR_COMM, "the local and remote groups overlap (world rank %u is in both)", w);
  uint64_t both[kCtxWords];
  for (size_t w = 0; w < std::size(both); ++w) both[w] = localFree[w] & theirs.freeCtx[w];
  // (both leaders see the same: the retry is mutual)
  *again = lowestSet(both, kCtxWords) == UINT32_MAX && (contended || theirs.contended);
  return *again ? kOk : lowestFree(both, ctxId);
}

}  // namespace

namespace {
int createIntercommOnce(Comm& local, uint32_t localLeader, Comm* peer, int remoteLeader, int tag, bool turn,
                        uint32_t* remoteCtx, bool* again, Comm** out) {
  const uint32_t n = local.team.size();
  // 1. The context ids free on every member of the local group.
  FreeIds free{};
  MemberFree mine{};
  mine.contended = turn ? 0 : 1;
  if (turn) freeIds(false, &free);  // (else none)
  std::copy(std::begin(free.ctx), std::end(free.ctx), mine.ctx);
  std::vector<MemberFree> all(n);
  SHMCOLL_CHECK(coll::allgatherBytes(local.team, &mine, sizeof mine, all.data()));
  uint64_t localFree[kCtxWords];
  std::fill(std::begin(localFree), std::end(localFree), ~0ull);
  bool anyContended = false;
  for (uint32_t r = 0; r < n; ++r) {
    for (size_t w = 0; w < kCtxWords; ++w) localFree[w] &= all[r].ctx[w];
    anyContended |= all[r].contended != 0;
  }
  // 2. The leaders swap groups and free ids; 3. each tells its group.
  Verdict v{};
  std::vector<uint32_t> remote;
  const bool leader = local.team.rank == localLeader;
  if (leader) {
    bool retry = false;
    v.err = leaderExchange(local, localFree, anyContended, peer, remoteLeader, tag, &v.ctxId, &remote, &v.remoteCtx,
                           &retry);
    if (retry) v.err = kAgainErr;
    v.nremote = static_cast<uint32_t>(remote.size());
  }
  RawBcast hb(&v, sizeof v, localLeader, local.team.rank);
  SHMCOLL_CHECK(coll::exchange(coll::Place{&local.team}, hb));
  *again = v.err == kAgainErr;
  *remoteCtx = v.remoteCtx;
  if (*again) return kOk;
  if (v.err) {
    if (leader) return v.err;  // with the leader's own reason
    return fail(v.err, "the local leader (rank %u of local_comm) failed to set up the intercommunicator", localLeader);
  }
  remote.resize(v.nremote);
  RawBcast gb(remote.data(), 4ull * v.nremote, localLeader, local.team.rank);
  SHMCOLL_CHECK(coll::exchange(coll::Place{&local.team}, gb));
  *out = installInter(local.team.members, std::move(remote), v.ctxId, local);
  return kOk;
}
}  // namespace

int createIntercomm(Comm& local, uint32_t localLeader, Comm* peer, int remoteLeader, int tag, Comm** out) {
  *out = nullptr;
  // (The first attempt tells each member the other group's local
  // communicator: the key, the same on every member, is made of both.)
  uint32_t remoteCtx = 0;
  return inTurns(
      [&](bool turn, bool* again) {
        return createIntercommOnce(local, localLeader, peer, remoteLeader, tag, turn, &remoteCtx, again, out);
      },
      [&] { return intercommKey(local.team.ctxId, remoteCtx); });
}

}  // namespace shmcoll::rt
