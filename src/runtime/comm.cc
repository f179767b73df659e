#include "runtime/comm.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "coll/coll.h"
#include "common/status.h"
#include "runtime/comm_make.h"
#include "runtime/context.h"
#include "transport/lanes.h"
#include "wait/wait.h"

namespace shmcoll::rt {

namespace {

constexpr uint32_t kUserComm = 0x12000000u;
constexpr uint32_t kUserGroup = 0x22000000u;
constexpr uint32_t kUserErrh = 0x52000000u;
constexpr uint32_t kWorldCtx = 0, kSelfCtx = 1;

Comm gWorld, gSelf;
std::vector<std::unique_ptr<Comm>> gComms(1);
std::vector<uint32_t> gCommSlots;  // empty entries of gComms (thousands of communicators: no scan)
std::vector<Comm*> gFreed;         // freed while in use (freeComm): destroyed by reapFreed()
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

// What each parent member contributes when a communicator is created: its
// free context ids as a window (ids.h), its free line sets, its highest
// sequence number, and the split's color and key.
struct Proposal {
  FreeWindow ctx;
  uint64_t lines[kLineWords];
  uint64_t highSeq;
  int32_t color;
  int32_t key;
  uint32_t contended;  // another creation held the turn to offer ids at this member (IdTurn)
  uint32_t pad;
};

// One attempt of agree() below; `turn`: this creation holds the rank's turn
// to offer ids (runtime/ids.h), else it offers none.  When the windows do not
// decide the id, every member sees so from the same gathered proposals and
// all exchange their whole free sets.
// *retry: no id was common, but some member offered none for want of the turn.
int agreeOnce(Comm& parent, int color, int key, std::vector<Proposal>* all, uint32_t* ctxId, uint32_t* lines,
              uint64_t* base, bool turn, bool* retry) {
  *retry = false;
  FreeIds free{};
  if (turn) freeIds(false, &free);
  Proposal mine{};
  mine.contended = turn ? 0 : 1;
  mine.ctx = FreeWindow(free.ctx);
  std::copy(std::begin(free.lines), std::end(free.lines), mine.lines);
  // The gathers below advance an intracommunicator's sequence; count them in.
  const uint64_t high = transport::lanes().highSeq;
  mine.highSeq = parent.inter ? high : std::max(high, parent.team.seq + 2);
  mine.color = color;
  mine.key = key;
  const size_t n = scheduleTeam(parent).size();
  all->resize(n);
  SHMCOLL_CHECK(gatherAll(parent, &mine, sizeof mine, all->data()));
  uint64_t commonLines[kLineWords];
  std::copy(std::begin(mine.lines), std::end(mine.lines), commonLines);
  *base = 0;
  for (const Proposal& p : *all) {
    for (size_t k = 0; k < kLineWords; ++k) commonLines[k] &= p.lines[k];
    *base = std::max(*base, p.highSeq);
  }
  *lines = lowestSet(commonLines, kLineWords);
  const bool anyContended = std::any_of(all->begin(), all->end(), [](const Proposal& p) { return p.contended != 0; });
  if (FreeWindow::decide(
          n, [&](size_t i) -> const FreeWindow& { return (*all)[i].ctx; }, ctxId)) {
    *retry = *ctxId == UINT32_MAX && anyContended;
    return *ctxId != UINT32_MAX || *retry ? kOk : noFreeId();
  }
  // (Every member offered a window, so each holds its rank's turn: no other
  // creation installed an id there meanwhile.)
  std::vector<uint64_t> sets(n * kCtxWords);
  SHMCOLL_CHECK(gatherAll(parent, free.ctx, sizeof free.ctx, sets.data()));
  uint64_t common[kCtxWords];
  std::copy(std::begin(free.ctx), std::end(free.ctx), common);
  for (size_t i = 0; i < n; ++i)
    for (size_t k = 0; k < kCtxWords; ++k) common[k] &= sets[i * kCtxWords + k];
  *retry = lowestSet(common, kCtxWords) == UINT32_MAX && anyContended;
  return *retry ? kOk : lowestFree(common, ctxId);
}

// Gathers everybody's proposal over `parent` and agrees on a context id and
// a line set free on all of them (kNoLines if no line set is) and a starting
// sequence number above every sequence number any of them used.  The caller
// installs the communicator before it waits for anything else.
int agree(Comm& parent, int color, int key, std::vector<Proposal>* all, uint32_t* ctxId, uint32_t* lines,
          uint64_t* base) {
  return inTurns(
      [&](bool turn, bool* again) { return agreeOnce(parent, color, key, all, ctxId, lines, base, turn, again); },
      [&] { return creationKey(parent.team.ctxId, 0); });
}

void dropComm(Comm* c) {
  const uint32_t i = static_cast<uint32_t>(c->handle) & 0x00ffffffu;
  gComms[i].reset();
  gCommSlots.push_back(i);
}

Comm* newComm(const Comm& parent) {
  auto nc = std::make_unique<Comm>();
  nc->errhandler = parent.errhandler;  // inherited, as the standard says
  if (Errhandler* e = userErrhandler(nc->errhandler)) ++e->refs;
  Comm* raw = nc.get();
  uint32_t i;
  if (gCommSlots.empty()) {
    i = static_cast<uint32_t>(gComms.size());
    gComms.push_back(std::move(nc));
  } else {
    i = gCommSlots.back();
    gCommSlots.pop_back();
    gComms[i] = std::move(nc);
  }
  raw->handle = static_cast<MPI_Comm>(kUserComm | i);
  return raw;
}

// Raw bytes, one block for every pair (gatherAll on an intercommunicator).
class RawAllgather final : public coll::ExchangeArgs {
 public:
  RawAllgather(const void* mine, uint64_t bytes, void* out)
      : mine_(static_cast<const char*>(mine)), out_(static_cast<char*>(out)), bytes_(bytes) {}
  coll::Block send(uint32_t) const override { return {mine_, bytes_, dt::byteType()}; }
  coll::Block recv(uint32_t p) const override { return {out_ + p * bytes_, bytes_, dt::byteType()}; }

 private:
  const char* mine_;
  char* out_;
  uint64_t bytes_;
};

// Runs a schedule that start(&request) starts to completion.
template <class Start>
int runSchedule(Start&& start) {
  p2p::Request* r = nullptr;
  SHMCOLL_CHECK(start(&r));
  SHMCOLL_CHECK(p2p::wait(r));
  const int err = r->status.error;
  p2p::release(r);
  if (err) return fail(err, "a member's contribution did not have the expected size");
  return kOk;
}

}  // namespace

uint32_t indexOf(const std::vector<uint32_t>& v, uint32_t x) {
  return static_cast<uint32_t>(std::find(v.begin(), v.end(), x) - v.begin());
}

namespace {
void setIntra(Comm& nc, std::vector<uint32_t> members) {
  nc.team.members = std::move(members);
  nc.team.rank = indexOf(nc.team.members, ctx().eng.rank);
}

// The shared order of both groups: the group holding the lower world rank first.
void setInter(Comm& nc, std::vector<uint32_t> local, std::vector<uint32_t> remote) {
  nc.inter = true;
  setIntra(nc, std::move(local));
  nc.remote = std::move(remote);
  const std::vector<uint32_t>& l = nc.team.members;
  const bool localFirst = *std::min_element(l.begin(), l.end()) < *std::min_element(nc.remote.begin(), nc.remote.end());
  nc.peers.members = localFirst ? l : nc.remote;
  nc.peers.members.insert(nc.peers.members.end(), localFirst ? nc.remote.begin() : l.begin(),
                          localFirst ? nc.remote.end() : l.end());
  nc.localBase = localFirst ? 0 : nc.peers.size() - nc.team.size();
  nc.remoteBase = localFirst ? nc.team.size() : 0;
  nc.peers.rank = nc.localBase + nc.team.rank;
}
}  // namespace

Comm* install(std::vector<uint32_t> members, uint32_t ctxId, uint32_t lines, uint64_t base, const Comm& parent) {
  Comm* nc = newComm(parent);
  setIntra(*nc, std::move(members));
  activate(*nc, ctxId, base, lines);
  return nc;
}

Comm* installInter(std::vector<uint32_t> local, std::vector<uint32_t> remote, uint32_t ctxId, const Comm& parent) {
  Comm* nc = newComm(parent);
  setInter(*nc, std::move(local), std::move(remote));
  activate(*nc, ctxId, 0, kNoLines);
  return nc;
}

void backOff(uint32_t attempt) {
  if (attempt == 0) return wait::yieldSerial();
  // (xorshift, seeded per thread: the creations that meet must not draw alike)
  thread_local uint64_t x = (static_cast<uint64_t>(getpid()) << 32) ^ static_cast<uint64_t>(gettid()) ^
                            static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  const uint64_t capUs = std::min<uint64_t>(uint64_t{20} << std::min<uint32_t>(attempt, 8), 5000);
  const timespec ts{0, static_cast<long>((x % capUs + 1) * 1000)};
  const uint32_t depth = wait::releaseSerial();
  nanosleep(&ts, nullptr);
  wait::reacquireSerial(depth);
}

void freeIds(bool async, FreeIds* out) {
  reapFreed();
  const Context& c = ctx();
  c.ctxUsed.freeIn(async ? kAsyncCtxFirst : 0, async ? kCtxIds : kAsyncCtxFirst, out->ctx);
  c.linesUsed.freeIn(async ? kAsyncLinesFirst : 0, async ? segment::kMaxContexts : kAsyncLinesFirst, out->lines);
}

int lowestFree(const uint64_t* ids, uint32_t* ctxId) {
  *ctxId = lowestSet(ids, kCtxWords);
  return *ctxId != UINT32_MAX ? kOk : noFreeId();
}

int noFreeId() {
  return fail(MPI_ERR_OTHER,
              "no communicator context is free on every member (at most %u communicators made by blocking calls "
              "may exist at once)",
              kAsyncCtxFirst);
}

int gatherAll(Comm& c, const void* mine, uint64_t bytes, void* out) {
  if (!c.inter) return coll::allgatherBytes(c.team, mine, bytes, out);
  // (every pair of both groups: the peers team as one group)
  RawAllgather a(mine, bytes, out);
  return runSchedule([&](p2p::Request** r) { return coll::startExchange(coll::Place{&c.peers}, a, {}, r); });
}

Comm* pendingDup(const Comm& parent) {
  Comm* nc = newComm(parent);
  if (parent.inter) {
    setInter(*nc, parent.team.members, parent.remote);
  } else {
    setIntra(*nc, parent.team.members);
  }
  nc->pending = true;
  nc->topo = parent.topo;
  return nc;
}

void activate(Comm& c, uint32_t ctxId, uint64_t base, uint32_t lines) {
  c.team.ctxId = ctxId;
  c.team.seq = base;
  c.team.lines = c.inter || ctx().linesOff ? kNoLines : lines;
  c.peers.ctxId = ctxId;
  c.peers.lines = kNoLines;
  c.pending = false;
  ctx().ctxUsed.set(ctxId);
  if (c.team.hasLines()) ctx().linesUsed.set(lines);
}

void discardComm(Comm* c) {
  releaseErrhandler(c->errhandler);
  dropComm(c);
}

int initComms() {
  Context& c = ctx();
  gWorld.team.members.resize(c.eng.size);
  for (uint32_t r = 0; r < c.eng.size; ++r) gWorld.team.members[r] = r;
  gWorld.team.rank = c.eng.rank;
  gWorld.team.ctxId = kWorldCtx;
  gWorld.team.lines = kWorldCtx;
  gWorld.handle = MPI_COMM_WORLD;
  gWorld.name = "MPI_COMM_WORLD";
  gSelf.team.members = {c.eng.rank};
  gSelf.team.rank = 0;
  gSelf.team.ctxId = kSelfCtx;
  gSelf.team.lines = kSelfCtx;
  gSelf.handle = MPI_COMM_SELF;
  gSelf.name = "MPI_COMM_SELF";
  for (uint32_t id : {kWorldCtx, kSelfCtx}) {
    c.ctxUsed.set(id);
    c.linesUsed.set(id);
  }
  return kOk;
}

void dropWorldLines() {
  for (Comm* c : {&gWorld, &gSelf}) {
    ctx().linesUsed.reset(c->team.lines);
    c->team.lines = kNoLines;
  }
}

coll::Team& worldTeam() { return gWorld.team; }

Comm* anyComm(MPI_Comm h) {
  if (h == MPI_COMM_WORLD) return &gWorld;
  if (h == MPI_COMM_SELF) return &gSelf;
  Comm* c = lookup(gComms, kUserComm, h);
  return c && !c->freed ? c : nullptr;
}

Comm* comm(MPI_Comm h) {
  Comm* c = anyComm(h);
  return c && !c->pending ? c : nullptr;
}

const char* commNote(MPI_Comm h) {
  if (h == MPI_COMM_NULL) return " (MPI_COMM_NULL)";
  if (Comm* c = anyComm(h); c && c->pending) return " (its MPI_Comm_idup has not completed)";
  return "";
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
  uint32_t ctxId, lines;
  uint64_t base;
  SHMCOLL_CHECK(agree(parent, 0, 0, &all, &ctxId, &lines, &base));
  *out = parent.inter ? installInter(parent.team.members, parent.remote, ctxId, parent)
                      : install(parent.team.members, ctxId, lines, base, parent);
  (*out)->topo = parent.topo;  // (the standard: a duplicate keeps the topology)
  return kOk;
}

namespace {
// The members of `group` (`n` ranks from `first` in the gathered proposals)
// that pass `color`, ordered by (key, rank): MPI_Comm_split's order.
std::vector<uint32_t> pick(const std::vector<Proposal>& all, uint32_t first, uint32_t n,
                           const std::vector<uint32_t>& group, int color) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < n; ++i)
    if (all[first + i].color == color) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return all[first + a].key < all[first + b].key; });
  std::vector<uint32_t> members;
  for (uint32_t i : order) members.push_back(group[i]);
  return members;
}

// A split or create result: an intracommunicator, or for an intercommunicator
// parent the local and remote parts with `color`, when the remote part is
// not empty (the standard's MPI_COMM_NULL otherwise).
Comm* installPart(Comm& parent, const std::vector<Proposal>& all, int color, uint32_t ctxId, uint32_t lines,
                  uint64_t base) {
  if (!parent.inter)
    return install(pick(all, 0, parent.team.size(), parent.team.members, color), ctxId, lines, base, parent);
  std::vector<uint32_t> local = pick(all, parent.localBase, parent.team.size(), parent.team.members, color);
  std::vector<uint32_t> remote =
      pick(all, parent.remoteBase, static_cast<uint32_t>(parent.remote.size()), parent.remote, color);
  if (remote.empty()) return nullptr;
  return installInter(std::move(local), std::move(remote), ctxId, parent);
}
}  // namespace

int splitComm(Comm& parent, int color, int key, Comm** out) {
  std::vector<Proposal> all;
  uint32_t ctxId, lines;
  uint64_t base;
  SHMCOLL_CHECK(agree(parent, color, key, &all, &ctxId, &lines, &base));
  *out = color == MPI_UNDEFINED ? nullptr : installPart(parent, all, color, ctxId, lines, base);
  return kOk;
}

// For an intercommunicator parent, `g` is a subgroup of the local group; the
// members' positions in it (each passes its own, -1 when not in it) order
// both parts.
int createComm(Comm& parent, const Group& g, Comm** out) {
  const uint32_t me = indexOf(g.members, ctx().eng.rank);
  const bool in = me < g.members.size();
  std::vector<Proposal> all;
  uint32_t ctxId, lines;
  uint64_t base;
  SHMCOLL_CHECK(agree(parent, in ? 1 : 0, in ? static_cast<int>(me) : -1, &all, &ctxId, &lines, &base));
  *out = nullptr;
  if (!in) return kOk;
  *out =
      parent.inter ? installPart(parent, all, 1, ctxId, lines, base) : install(g.members, ctxId, lines, base, parent);
  return kOk;
}

namespace {
void destroyComm(Comm* c) {
  ctx().ctxUsed.reset(c->team.ctxId);
  if (c->team.hasLines()) ctx().linesUsed.reset(c->team.lines);
  releaseErrhandler(c->errhandler);
  dropComm(c);
}

bool inUse(const Comm& c) { return c.holds || p2p::contextBusy(c.team.ctxId); }
}  // namespace

void reapFreed() {
  for (size_t i = 0; i < gFreed.size();) {
    if (inUse(*gFreed[i])) {
      ++i;
      continue;
    }
    destroyComm(gFreed[i]);
    gFreed[i] = gFreed.back();
    gFreed.pop_back();
  }
}

// Local: a member that frees a communicator has finished its collectives on
// it, and a message still to arrive on it is one a receive posted here waits
// for, which keeps the id taken (inUse).  Sequence numbers only grow, so a
// member still reading this rank's lines of the last operation is not
// misled when the id is reused.
int freeComm(Comm* c) {
  c->freed = true;
  if (inUse(*c)) {
    gFreed.push_back(c);
    return kOk;
  }
  destroyComm(c);
  return kOk;
}

void holdComm(Comm* c) { ++c->holds; }

void releaseComm(Comm* c) {
  --c->holds;
  if (c->freed) reapFreed();
}

int mergeIntercomm(Comm& ic, bool high, Comm** out) {
  std::vector<Proposal> all;
  uint32_t ctxId, lines;
  uint64_t base;
  SHMCOLL_CHECK(agree(ic, high ? 1 : 0, 0, &all, &ctxId, &lines, &base));
  // Each group's leader speaks for its group (the standard asks every member
  // of a group to pass the same value).
  const bool localHigh = all[ic.localBase].color != 0, remoteHigh = all[ic.remoteBase].color != 0;
  std::vector<uint32_t> members = ic.peers.members;
  if (localHigh != remoteHigh) {
    members = localHigh ? ic.remote : ic.team.members;
    const std::vector<uint32_t>& second = localHigh ? ic.team.members : ic.remote;
    members.insert(members.end(), second.begin(), second.end());
  }
  *out = install(std::move(members), ctxId, lines, base, ic);
  return kOk;
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
