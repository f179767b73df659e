// Windows of one-sided communication: creation in the four flavors,
// MPI_Win_shared_query, attach/detach, freeing, and the window's group,
// info and name (runtime/win.h holds the window itself).
//
// The creation calls check their arguments locally, then run the collective
// creation (runtime/win.cc): a rank whose arguments are wrong returns its
// error before the collective part, as the standard lets an erroneous call do.
// Info keys: alloc_shared_noncontig ("true" or "false", MPI_ERR_INFO_VALUE
// otherwise) lays MPI_Win_allocate_shared's memory out page-aligned per rank
// instead of contiguously; every key is kept and MPI_Win_get_info returns it.
#include "runtime/win.h"

#include <cstring>
#include <vector>

#include "api/attr.h"
#include "api/check.h"
#include "runtime/comm.h"

namespace shmcoll::api::impl {

namespace {

// Checks size and disp_unit, reads the info keys this runtime acts on.
template <class D>
int winArgs(Call& call, MPI_Aint size, D dispUnit, rt::Info* info, rt::WinArgs* a) {
  if (size < 0) return check::fail(call, MPI_ERR_SIZE, "size = %ld is negative", static_cast<long>(size));
  if (dispUnit <= 0 || dispUnit > INT32_MAX)
    return check::fail(call, MPI_ERR_DISP, "disp_unit = %lld is not a positive int", static_cast<long long>(dispUnit));
  a->size = static_cast<uint64_t>(size);
  a->dispUnit = static_cast<int>(dispUnit);
  if (info)
    if (const std::string* v = info->find("alloc_shared_noncontig")) {
      if (*v != "true" && *v != "false")
        return check::fail(call, MPI_ERR_INFO_VALUE,
                           "info key alloc_shared_noncontig = \"%s\": the value must be \"true\" or \"false\"",
                           v->c_str());
      a->noncontig = *v == "true";
    }
  return MPI_SUCCESS;
}

int finishCreate(Call& call, rt::Comm* c, const rt::WinArgs& a, rt::Info* info, MPI_Win* win) {
  rt::Win* w = nullptr;
  if (int rc = rt::createWin(*c, a, &w)) {
    *win = MPI_WIN_NULL;
    return check::engine(call, rc);
  }
  if (info) w->hints = *info;
  *win = w->handle;
  return MPI_SUCCESS;
}

}  // namespace

template <class D>
int winCreate(Call& call, void* base, MPI_Aint size, D dispUnit, rt::Info* info, rt::Comm* c, MPI_Win* win) {
  rt::WinArgs a;
  a.flavor = MPI_WIN_FLAVOR_CREATE;
  SHMCOLL_CHECK(winArgs(call, size, dispUnit, info, &a));
  if (!base && size > 0) return check::fail(call, MPI_ERR_BASE, "base is NULL but size = %ld", static_cast<long>(size));
  a.base = base;
  return finishCreate(call, c, a, info, win);
}

template <int kFlavor, class D>
int winAllocate(Call& call, MPI_Aint size, D dispUnit, rt::Info* info, rt::Comm* c, void* baseptr, MPI_Win* win) {
  rt::WinArgs a;
  a.flavor = kFlavor;
  SHMCOLL_CHECK(winArgs(call, size, dispUnit, info, &a));
  SHMCOLL_CHECK(finishCreate(call, c, a, info, win));
  *static_cast<void**>(baseptr) = rt::win(*win)->base;
  return MPI_SUCCESS;
}

int winCreateDynamic(Call& call, rt::Info* info, rt::Comm* c, MPI_Win* win) {
  rt::WinArgs a;
  a.flavor = MPI_WIN_FLAVOR_DYNAMIC;
  SHMCOLL_CHECK(winArgs(call, 0, 1, info, &a));
  return finishCreate(call, c, a, info, win);
}

template <class D>
int winSharedQuery(Call& call, rt::Win* w, int rank, MPI_Aint* size, D* dispUnit, void* baseptr) {
  if (w->flavor != MPI_WIN_FLAVOR_SHARED)
    return check::fail(call, MPI_ERR_RMA_FLAVOR,
                       "win was not made by MPI_Win_allocate_shared, so its memory cannot be queried");
  if (rank == MPI_PROC_NULL) {  // the first rank with memory, if any
    for (uint32_t r = 0; r < w->nranks; ++r)
      if (w->peers[r].size > 0) {
        rank = static_cast<int>(r);
        break;
      }
    if (rank == MPI_PROC_NULL) {
      *size = 0;
      *dispUnit = 1;
      *static_cast<void**>(baseptr) = nullptr;
      return MPI_SUCCESS;
    }
  }
  if (rank < 0 || static_cast<uint32_t>(rank) >= w->nranks)
    return check::fail(call, MPI_ERR_RANK, "rank = %d is not a rank of the window's group (size %u) or MPI_PROC_NULL",
                       rank, w->nranks);
  const rt::WinPeer& p = w->peers[rank];
  *size = static_cast<MPI_Aint>(p.size);
  *dispUnit = static_cast<D>(p.dispUnit);
  *static_cast<void**>(baseptr) = p.direct;
  return MPI_SUCCESS;
}

int winAttach(Call& call, rt::Win* w, void* base, MPI_Aint size) {
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return check::fail(call, MPI_ERR_RMA_FLAVOR, "win was not made by MPI_Win_create_dynamic");
  if (size < 0) return check::fail(call, MPI_ERR_SIZE, "size = %ld is negative", static_cast<long>(size));
  if (!base && size > 0) return check::fail(call, MPI_ERR_BASE, "base is NULL");
  if (int rc = rt::winAttach(*w, base, static_cast<uint64_t>(size))) return check::engine(call, rc);
  return MPI_SUCCESS;
}

int winDetach(Call& call, rt::Win* w, const void* base) {
  if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
    return check::fail(call, MPI_ERR_RMA_FLAVOR, "win was not made by MPI_Win_create_dynamic");
  if (int rc = rt::winDetach(*w, base)) return check::engine(call, rc);
  return MPI_SUCCESS;
}

int winFree(Call& call, MPI_Win* win) {
  rt::Win* w = nullptr;
  SHMCOLL_CHECK(check::win(call, "*win", *win, &w));
  call.win = *win;
  if (w->lockAll || w->locksHeld || w->started || w->posted)
    return check::fail(call, MPI_ERR_RMA_SYNC, "an epoch is still open on win (%s)",
                       w->lockAll     ? "MPI_Win_lock_all without MPI_Win_unlock_all"
                       : w->locksHeld ? "MPI_Win_lock without MPI_Win_unlock"
                       : w->started   ? "MPI_Win_start without MPI_Win_complete"
                                      : "MPI_Win_post without MPI_Win_wait");
  SHMCOLL_CHECK(deleteWinAttrs(*win, call.fn));
  rt::releaseErrhandler(w->errhandler);
  w->errhandler = MPI_ERRORS_ARE_FATAL;
  call.win = MPI_WIN_NULL;  // (gone below: a failure now goes to MPI_COMM_WORLD)
  if (int rc = rt::freeWin(w)) return check::engine(call, rc);
  *win = MPI_WIN_NULL;
  return MPI_SUCCESS;
}

int winGetGroup(Call&, rt::Win* w, MPI_Group* group) {
  *group = rt::newGroup(w->comm->team.members);
  return MPI_SUCCESS;
}

int winSetInfo(Call& call, rt::Win* w, rt::Info* info) {
  if (const std::string* v = info->find("alloc_shared_noncontig"); v && *v != "true" && *v != "false")
    return check::fail(call, MPI_ERR_INFO_VALUE,
                       "info key alloc_shared_noncontig = \"%s\": the value must be \"true\" or \"false\"", v->c_str());
  for (const auto& kv : info->entries) w->hints.set(kv.first, kv.second);
  return MPI_SUCCESS;
}

int winGetInfo(Call&, rt::Win* w, MPI_Info* infoUsed) {
  *infoUsed = rt::newInfo(w->hints);
  return MPI_SUCCESS;
}

int winSetName(Call&, rt::Win* w, const char* name) {
  w->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));  // longer names are cut
  return MPI_SUCCESS;
}

int winGetName(Call&, rt::Win* w, char* name, int* resultlen) {
  const size_t n = std::min<size_t>(w->name.size(), MPI_MAX_OBJECT_NAME - 1);
  memcpy(name, w->name.data(), n);
  name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

// A Fortran handle is the C handle's value, as for sessions: MPI_WIN_NULL maps to itself, and a value that names no
// window gives a handle the other calls reject with MPI_ERR_WIN.
MPI_Fint winC2f(Call&, MPI_Win win) { return static_cast<MPI_Fint>(win); }
MPI_Win winF2c(Call&, MPI_Fint win) { return static_cast<MPI_Win>(win); }

}  // namespace shmcoll::api::impl

#include "generated/entry_win.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/win.txt)
