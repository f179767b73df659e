#include "runtime/comm.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "channel/wait.h"
#include "coll/coll.h"
#include "common/status.h"
#include "runtime/context.h"

namespace shmcoll::rt {

namespace {

constexpr uint32_t kUserComm = 0x12000000u;
constexpr uint32_t kUserGroup = 0x22000000u;
constexpr uint32_t kUserErrh = 0x52000000u;
constexpr uint32_t kWorldCtx = 0, kSelfCtx = 1;

Comm gWorld, gSelf;
std::vector<std::unique_ptr<Comm>> gComms(1);
std::vector<std::unique_ptr<Group>> gGroups(1);
std::vector<std::unique_ptr<Errhandler>> gErrh(1);
Group gEmpty;

template <class T>
uint32_t insert(std::vector<std::unique_ptr<T>>& tab, std::unique_ptr<T> x) {
  for (size_t i = 1; i < tab.size(); ++i)
    if (!tab[i]) {
      tab[i] = std::move(x);
      return static_cast<uint32_t>(i);
    }
  tab.push_back(std::move(x));
  return static_cast<uint32_t>(tab.size() - 1);
}

template <class T>
T* lookup(std::vector<std::unique_ptr<T>>& tab, uint32_t kind, int h) {
  uint32_t u = static_cast<uint32_t>(h);
  if ((u & 0xff000000u) != kind) return nullptr;
  uint32_t i = u & 0x00ffffffu;
  return i < tab.size() ? tab[i].get() : nullptr;
}

// What each parent member contributes when a communicator is created.
struct Proposal {
  uint64_t freeCtx[segment::kMaxContexts / 64];
  uint64_t highSeq;
  int32_t color;
  int32_t key;
};

// Agrees on a context id and a starting sequence number for new teams made
// from `parent`, and returns everybody's proposal.
int agree(Comm& parent, int color, int key, std::vector<Proposal>* all, uint32_t* ctxId, uint64_t* base) {
  Context& c = ctx();
  Proposal mine{};
  for (uint32_t i = 0; i < segment::kMaxContexts; ++i)
    if (!c.ctxUsed[i]) mine.freeCtx[i / 64] |= 1ull << (i % 64);
  // The gather below advances the parent's sequence; count it in.
  mine.highSeq = std::max(c.eng.highSeq, parent.team.seq + 1);
  mine.color = color;
  mine.key = key;
  all->resize(parent.team.size());
  SHMCOLL_CHECK(coll::allgatherBytes(parent.team, &mine, sizeof mine, all->data()));
  uint64_t freeAll[segment::kMaxContexts / 64];
  std::fill(std::begin(freeAll), std::end(freeAll), ~0ull);
  *base = 0;
  for (const Proposal& p : *all) {
    for (size_t w = 0; w < std::size(freeAll); ++w) freeAll[w] &= p.freeCtx[w];
    *base = std::max(*base, p.highSeq);
  }
  for (uint32_t i = 0; i < segment::kMaxContexts; ++i)
    if (freeAll[i / 64] & (1ull << (i % 64))) {
      *ctxId = i;
      return kOk;
    }
  return fail(MPI_ERR_OTHER, "no free communicator context (at most %u communicators may exist at once)",
              segment::kMaxContexts);
}

Comm* install(std::vector<uint32_t> members, uint32_t ctxId, uint64_t base, const Comm& parent) {
  Context& c = ctx();
  auto nc = std::make_unique<Comm>();
  nc->team.members = std::move(members);
  nc->team.rank = static_cast<uint32_t>(
      std::find(nc->team.members.begin(), nc->team.members.end(), c.eng.rank) - nc->team.members.begin());
  nc->team.ctxId = ctxId;
  nc->team.seq = base;
  nc->errhandler = parent.errhandler;  // inherited, as the standard says
  if (Errhandler* e = userErrhandler(nc->errhandler)) ++e->refs;
  c.ctxUsed.set(ctxId);
  Comm* raw = nc.get();
  raw->handle = static_cast<MPI_Comm>(kUserComm | insert(gComms, std::move(nc)));
  return raw;
}

}  // namespace

int initComms() {
  Context& c = ctx();
  gWorld.team.members.resize(c.eng.size);
  for (uint32_t r = 0; r < c.eng.size; ++r) gWorld.team.members[r] = r;
  gWorld.team.rank = c.eng.rank;
  gWorld.team.ctxId = kWorldCtx;
  gWorld.handle = MPI_COMM_WORLD;
  gWorld.name = "MPI_COMM_WORLD";
  gSelf.team.members = {c.eng.rank};
  gSelf.team.rank = 0;
  gSelf.team.ctxId = kSelfCtx;
  gSelf.handle = MPI_COMM_SELF;
  gSelf.name = "MPI_COMM_SELF";
  c.ctxUsed.set(kWorldCtx);
  c.ctxUsed.set(kSelfCtx);
  return kOk;
}

coll::Team& worldTeam() { return gWorld.team; }

Comm* comm(MPI_Comm h) {
  if (h == MPI_COMM_WORLD) return &gWorld;
  if (h == MPI_COMM_SELF) return &gSelf;
  return lookup(gComms, kUserComm, h);
}

Group* group(MPI_Group h) {
  if (h == MPI_GROUP_EMPTY) return &gEmpty;
  return lookup(gGroups, kUserGroup, h);
}

Errhandler* userErrhandler(MPI_Errhandler h) { return lookup(gErrh, kUserErrh, h); }

bool validErrhandler(MPI_Errhandler h) {
  return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT || userErrhandler(h);
}

int dupComm(Comm& parent, Comm** out) {
  std::vector<Proposal> all;
  uint32_t ctxId;
  uint64_t base;
  SHMCOLL_CHECK(agree(parent, 0, 0, &all, &ctxId, &base));
  *out = install(parent.team.members, ctxId, base, parent);
  return kOk;
}

int splitComm(Comm& parent, int color, int key, Comm** out) {
  std::vector<Proposal> all;
  uint32_t ctxId;
  uint64_t base;
  SHMCOLL_CHECK(agree(parent, color, key, &all, &ctxId, &base));
  *out = nullptr;
  if (color == MPI_UNDEFINED) return kOk;
  std::vector<uint32_t> order;  // parent ranks with my color, by (key, parent rank)
  for (uint32_t i = 0; i < all.size(); ++i)
    if (all[i].color == color) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return all[a].key < all[b].key; });
  std::vector<uint32_t> members;
  for (uint32_t i : order) members.push_back(parent.team.members[i]);
  *out = install(std::move(members), ctxId, base, parent);
  return kOk;
}

int createComm(Comm& parent, const Group& g, Comm** out) {
  std::vector<Proposal> all;
  uint32_t ctxId;
  uint64_t base;
  SHMCOLL_CHECK(agree(parent, 0, 0, &all, &ctxId, &base));
  *out = nullptr;
  if (std::find(g.members.begin(), g.members.end(), ctx().eng.rank) == g.members.end()) return kOk;
  *out = install(g.members, ctxId, base, parent);
  return kOk;
}

// MPI_Comm_create_group: only the group's members take part, so the parent's
// context lines cannot be used to agree.  Group rank 0 leads: every other
// member writes a request (its free contexts and highest sequence number)
// into its boot line for the leader; the leader waits for all of them, picks
// the lowest context free everywhere and a base above every member's
// sequence numbers, and answers in its boot line for each member.  Each pair
// numbers its exchanges (bootCount), so both know which message is next.
int createGroupComm(Comm& parent, const Group& g, int tag, Comm** out) {
  Context& c = ctx();
  coll::Engine& e = c.eng;
  const uint32_t me = e.rank;
  *out = nullptr;
  static std::vector<uint64_t> bootCount;
  bootCount.resize(e.size, 0);
  uint64_t freeMine[segment::kMaxContexts / 64] = {};
  for (uint32_t i = 0; i < segment::kMaxContexts; ++i)
    if (!c.ctxUsed[i]) freeMine[i / 64] |= 1ull << (i % 64);
  const uint32_t leader = g.members[0];
  uint32_t ctxId = UINT32_MAX;
  uint64_t base = e.highSeq;
  if (me != leader) {
    const uint64_t k = ++bootCount[leader];
    segment::BootEntry* req = e.seg.boot(me, leader);
    req->tag = tag;
    req->highSeq = e.highSeq;
    std::copy(std::begin(freeMine), std::end(freeMine), req->freeCtx);
    req->count.store(k, std::memory_order_release);
    channel::wakePeer(e.seg.ctl(leader));
    segment::BootEntry* ans = e.seg.boot(leader, me);
    SHMCOLL_CHECK(channel::waitUntil(e.self(), [&] { return ans->count.load(std::memory_order_acquire) >= k; }));
    ctxId = ans->ctx;
    base = ans->highSeq;
  } else {
    uint64_t freeAll[segment::kMaxContexts / 64];
    std::copy(std::begin(freeMine), std::end(freeMine), freeAll);
    bool tagsAgree = true;
    for (size_t i = 1; i < g.members.size(); ++i) {
      const uint32_t m = g.members[i];
      const uint64_t k = bootCount[m] + 1;
      segment::BootEntry* req = e.seg.boot(m, me);
      SHMCOLL_CHECK(channel::waitUntil(e.self(), [&] { return req->count.load(std::memory_order_acquire) >= k; }));
      tagsAgree &= req->tag == tag;
      base = std::max(base, req->highSeq);
      for (size_t w = 0; w < std::size(freeAll); ++w) freeAll[w] &= req->freeCtx[w];
    }
    if (tagsAgree)
      for (uint32_t i = 0; i < segment::kMaxContexts; ++i)
        if (freeAll[i / 64] & (1ull << (i % 64))) {
          ctxId = i;
          break;
        }
    for (size_t i = 1; i < g.members.size(); ++i) {
      const uint32_t m = g.members[i];
      const uint64_t k = ++bootCount[m];
      segment::BootEntry* ans = e.seg.boot(me, m);
      ans->tag = tag;
      ans->ctx = tagsAgree ? ctxId : UINT32_MAX - 1;
      ans->highSeq = base;
      ans->count.store(k, std::memory_order_release);
      channel::wakePeer(e.seg.ctl(m));
    }
    if (!tagsAgree) ctxId = UINT32_MAX - 1;
  }
  if (ctxId == UINT32_MAX - 1)
    return fail(MPI_ERR_TAG, "the members of the group passed different tags (this rank passed %d)", tag);
  if (ctxId == UINT32_MAX)
    return fail(MPI_ERR_OTHER, "no free communicator context (at most %u communicators may exist at once)",
                segment::kMaxContexts);
  *out = install(g.members, ctxId, base, parent);
  return kOk;
}

int freeComm(Comm* c) {
  int rc = coll::barrier(c->team);
  ctx().ctxUsed.reset(c->team.ctxId);
  releaseErrhandler(c->errhandler);
  uint32_t i = static_cast<uint32_t>(c->handle) & 0x00ffffffu;
  gComms[i].reset();
  return rc;
}

MPI_Group newGroup(std::vector<uint32_t> members) {
  auto g = std::make_unique<Group>();
  g->members = std::move(members);
  return static_cast<MPI_Group>(kUserGroup | insert(gGroups, std::move(g)));
}

void releaseGroup(MPI_Group h) {
  if (Group* g = lookup(gGroups, kUserGroup, h))
    if (--g->refs == 0) gGroups[static_cast<uint32_t>(h) & 0x00ffffffu].reset();
}

MPI_Errhandler newErrhandler(MPI_Comm_errhandler_function* fn) {
  auto e = std::make_unique<Errhandler>();
  e->fn = fn;
  return static_cast<MPI_Errhandler>(kUserErrh | insert(gErrh, std::move(e)));
}

void releaseErrhandler(MPI_Errhandler h) {
  if (Errhandler* e = userErrhandler(h))
    if (--e->refs == 0) gErrh[static_cast<uint32_t>(h) & 0x00ffffffu].reset();
}

}  // namespace shmcoll::rt
