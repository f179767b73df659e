// One-sided data movement: put, get, the accumulates, fetch-and-op,
// compare-and-swap and their request forms.
//
// Every operation completes in its call (runtime/win.h: every member reaches
// every window directly): the origin side is packed into, or unpacked from,
// a contiguous stream (skipped when the origin type is contiguous), and the
// target side moves through runtime/win.cc (a copy through the type's runs,
// or process_vm_readv/writev).  Accumulates read the target's elements,
// combine and write them back under the target's accumulate mutex, so
// concurrent accumulates to one location from many ranks are atomic per
// element for every operation and type.  The request forms hand out a
// request that is already complete.
//
// Checks, in this order: the target rank (MPI_ERR_RANK; MPI_PROC_NULL makes
// the call do nothing), an access epoch to that target (MPI_ERR_RMA_SYNC),
// matching origin and target type signatures (MPI_ERR_TYPE), the target
// region inside the target's window (MPI_ERR_RMA_RANGE), so nothing is
// written outside a window.
#include <cstring>
#include <vector>

#include "api/check.h"
#include "api/request.h"
#include "copy/copy.h"
#include "op/op.h"
#include "op/one.h"
#include "runtime/win.h"

namespace shmcoll::api::impl {

namespace {

// Staging for origin data that is not contiguous and for the target's old
// values (per thread: the calls never nest).
thread_local std::vector<char> tStage[3];
char* stage(int i, uint64_t bytes) {
  if (tStage[i].size() < bytes) tStage[i].resize(bytes);
  return tStage[i].data();
}

struct Target {
  uint32_t rank = 0;
  uint64_t addr = 0;  // the element origin, in the target's addresses
};

// Checks the target of a call; *skip for MPI_PROC_NULL.  `passive`: the
// request forms, which need a lock epoch.
int target(Call& call, rt::Win* w, int rank, MPI_Aint disp, uint64_t count, const dt::Type* t, bool passive,
           Target* out, bool* skip) {
  *skip = rank == MPI_PROC_NULL;
  if (*skip) return MPI_SUCCESS;
  if (rank < 0 || static_cast<uint32_t>(rank) >= w->nranks)
    return check::fail(call, MPI_ERR_RANK, "target_rank = %d is not a rank of the window's group (size %u)", rank,
                       w->nranks);
  const uint32_t r = static_cast<uint32_t>(rank);
  const bool locked = w->lockAll || w->locked[r];
  if (passive ? !locked : !(locked || w->fenceOpen || (w->started && w->inStart[r])))
    return check::fail(call, MPI_ERR_RMA_SYNC,
                       passive ? "target_rank = %d: a request-based operation needs a passive-target epoch "
                                 "(MPI_Win_lock or MPI_Win_lock_all) open to the target"
                               : "target_rank = %d: no access epoch is open to the target (call MPI_Win_fence, "
                                 "MPI_Win_lock, MPI_Win_lock_all or MPI_Win_start first)",
                       rank);
  const rt::WinPeer& p = w->peers[r];
  out->rank = r;
  out->addr = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? static_cast<uint64_t>(disp)
                                                  : p.base + static_cast<uint64_t>(disp * p.dispUnit);
  if (count == 0 || t->size == 0) return MPI_SUCCESS;
  const __int128 lo = static_cast<__int128>(static_cast<int64_t>(out->addr)) + t->trueLb;
  const __int128 hi = lo - t->trueLb + static_cast<__int128>(count - 1) * t->extent() + t->trueUb;
  if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    if (lo < 0 || !rt::winCovers(*w, r, static_cast<uint64_t>(lo), static_cast<uint64_t>(hi - lo)))
      return check::fail(call, MPI_ERR_RMA_RANGE,
                         "target_disp = %ld with %llu elements of target_datatype reaches bytes [%#llx, %#llx) of "
                         "rank %d, which no region attached to the window holds",
                         static_cast<long>(disp), static_cast<unsigned long long>(count),
                         static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi), rank);
    return MPI_SUCCESS;
  }
  const __int128 base = static_cast<__int128>(p.base);
  if (lo < base || hi > base + static_cast<__int128>(p.size))
    return check::fail(call, MPI_ERR_RMA_RANGE,
                       "target_disp = %ld (disp_unit %d) with %llu elements of target_datatype reaches bytes "
                       "[%lld, %lld) of rank %d's window, which holds %llu bytes",
                       static_cast<long>(disp), p.dispUnit, static_cast<unsigned long long>(count),
                       static_cast<long long>(lo - base), static_cast<long long>(hi - base), rank,
                       static_cast<unsigned long long>(p.size));
  return MPI_SUCCESS;
}

int sameBytes(Call& call, const char* what, uint64_t a, const char* whatB, uint64_t b) {
  if (a == b) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_TYPE, "%s describe %llu bytes but %s describe %llu: the type signatures differ",
                     what, static_cast<unsigned long long>(a), whatB, static_cast<unsigned long long>(b));
}

// The origin's data as a packed stream.
const char* packOrigin(const void* buf, uint64_t count, const dt::Type* t, int slot) {
  if (t->contiguous) return static_cast<const char*>(buf) + t->trueLb;
  char* s = stage(slot, count * t->size);
  dt::Cursor(buf, count, t).pack(0, s, count * t->size);
  return s;
}

// An accumulate's operation and types: a predefined operation (MPI_REPLACE
// and MPI_NO_OP too) defined on the target type's predefined type, which the
// origin type shares.  *basic gets that predefined type.
int accOp(Call& call, MPI_Op op, const dt::Type* origin, const dt::Type* tt, int* basic) {
  *basic = op::basicType(tt);
  if (op != MPI_REPLACE && op != MPI_NO_OP) {
    if (op::valid(op) && !op::isPredefined(op))
      return check::fail(call, MPI_ERR_OP, "op is a user-defined operation, which one-sided accumulates do not allow");
    if (int rc = op::check(op, tt->handle)) return check::engine(call, rc);
  } else if (!op::isPredefined(op)) {
    return check::fail(call, MPI_ERR_OP, "op = %#x is not a valid operation", static_cast<unsigned>(op));
  }
  if (tt->size > 0 && !*basic)
    return check::fail(call, MPI_ERR_TYPE, "target_datatype mixes several predefined types (an accumulate needs one)");
  if (origin && origin->size > 0 && op::basicType(origin) != *basic)
    return check::fail(call, MPI_ERR_TYPE,
                       "origin_datatype and target_datatype are not made of the same predefined type");
  return MPI_SUCCESS;
}

// Target elements (t.addr, count, tt) = origin (op) themselves; with `result`,
// their old values go to (result, rcount, rtype) first.
int combine(Call& call, rt::Win* w, const Target& t, uint64_t count, const dt::Type* tt, MPI_Op op, int basic,
            const char* origin, void* result, uint64_t rcount, const dt::Type* rtype) {
  const uint64_t bytes = count * tt->size;
  if (bytes == 0) return MPI_SUCCESS;
  if (int rc = rt::winAccLock(*w, t.rank)) return check::engine(call, rc);
  w->pending = true;
  int rc = 0;
  char* view = op != MPI_REPLACE && op != MPI_NO_OP ? rt::winContiguousView(*w, t.rank, t.addr, count, tt) : nullptr;
  if (view && origin < view + bytes && view < origin + bytes)
    view = nullptr;  // (overlapping: the copies keep it exact)
  if (view) {        // in place: no copy of the target out and back
    if (result) {
      if (rtype->contiguous)
        memcpy(static_cast<char*>(result) + rtype->trueLb, view, bytes);
      else
        dt::Cursor(result, rcount, rtype).unpack(0, view, bytes);
    }
    op::applyPacked(op, origin, view, bytes, basic);
  } else if (!result && op == MPI_REPLACE) {
    rc = rt::winWrite(*w, t.rank, t.addr, count, tt, origin);
  } else if (result || op != MPI_NO_OP) {
    char* old = result && rtype->contiguous ? static_cast<char*>(result) + rtype->trueLb : stage(1, bytes);
    rc = rt::winRead(*w, t.rank, t.addr, count, tt, old);
    if (rc == 0 && result && !rtype->contiguous) dt::Cursor(result, rcount, rtype).unpack(0, old, bytes);
    if (rc == 0 && op != MPI_NO_OP) {
      char* acc = old;
      if (result) {  // (the result keeps the old values)
        acc = stage(2, bytes);
        memcpy(acc, old, bytes);
      }
      op::applyPacked(op, origin, acc, bytes, basic);
      rc = rt::winWrite(*w, t.rank, t.addr, count, tt, acc);
    }
  }
  rt::winAccUnlock(*w, t.rank);
  return rc ? check::engine(call, rc) : MPI_SUCCESS;
}

// The common case of MPI_Put and MPI_Get, decided in one pass: the target
// type contiguous, a member whose window memory this process maps (not a
// dynamic window), an access epoch open to it (`passive`: a lock epoch), and
// `bytes` (> 0) inside its window.  Returns where those bytes lie here, or
// nullptr: then the general path runs every check in order and reports the
// first that fails.
inline char* directTarget(const rt::Win* w, int rank, MPI_Aint disp, const dt::Type* tt, uint64_t bytes, bool passive) {
  const uint32_t r = static_cast<uint32_t>(rank);  // (MPI_PROC_NULL and negative ranks fail the bound)
  if (r >= w->nranks || !tt->contiguous || w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return nullptr;
  const rt::WinPeer& p = w->peers[r];
  if (!p.direct) return nullptr;
  if (!(w->lockAll || w->locked[r]) && (passive || !(w->fenceOpen || (w->started && w->inStart[r])))) return nullptr;
  int64_t off;
  if (__builtin_mul_overflow(static_cast<int64_t>(disp), static_cast<int64_t>(p.dispUnit), &off) ||
      __builtin_add_overflow(off, tt->trueLb, &off) || off < 0 || static_cast<uint64_t>(off) > p.size ||
      bytes > p.size - static_cast<uint64_t>(off))
    return nullptr;
  return p.direct + off;
}

// The byte count of a put or get the fast path takes, or 0: both sides
// describe the same bytes (no overflow), the origin is contiguous and not
// NULL or MPI_IN_PLACE.
inline uint64_t plainBytes(const void* buf, uint64_t ocount, const dt::Type* ot, uint64_t tcount, const dt::Type* tt) {
  uint64_t b, tb;
  if (__builtin_mul_overflow(ocount, ot->size, &b) || __builtin_mul_overflow(tcount, tt->size, &tb) || b != tb ||
      !ot->contiguous || !buf || buf == MPI_IN_PLACE)
    return 0;
  return b;
}

void completeRequest(Call& call, MPI_Request* request) { *request = newRequest(new DoneRequest, kNoComm, call.fn); }

// A put's or get's bytes: up to 32 inline, then the copy kernel, memmove
// where the two ranges overlap (a rank moving data inside its own window).
inline void moveBytes(char* d, const char* s, uint64_t n) {
  if (n <= copy::kTinyMax)
    copy::tiny(d, s, n);
  else if (d + n <= s || s + n <= d)
    copy::copy(d, s, n);
  else
    memmove(d, s, n);
}

// What a direct get leaves for the next flush (Win::pending: a fence owed).
// On x86-64 a load is never reordered with a later load or store, so the
// get's loads need none; elsewhere they do.
inline void loaded(rt::Win* w) {
#if defined(__x86_64__)
  (void)w;
#else
  w->pending = true;
#endif
}
// After the accumulate mutex's release, a locked exchange on x86-64 (a full
// barrier for every access before it): no fence is owed any more.
inline void fenced(rt::Win* w) {
#if defined(__x86_64__)
  w->pending = false;
#else
  (void)w;
#endif
}

// The window and the two types of a plain MPI_Put or MPI_Get that its entry
// serves without a Call: the window of the last look-up, datatypes valid and
// committed, counts not negative, no thread serialization on.  nullptr
// otherwise (the entry's checks then run in order).
// `builtin`: predefined types only, looked up inline, so that the caller
// makes no call before it moves the data (user types: the caller's general
// form, below).
inline rt::Win* fastArgs(MPI_Win win, int ocount, MPI_Datatype oh, int tcount, MPI_Datatype th, const dt::Type** ot,
                         const dt::Type** tt, bool builtin = false) {
  rt::Win* w = rt::gLastWin;
  if (wait::gSerialOn || !w || w->handle != win || (ocount | tcount) < 0) [[unlikely]]
    return nullptr;
  *ot = builtin ? rt::builtinInline(oh) : rt::type(oh);
  *tt = builtin ? rt::builtinInline(th) : rt::type(th);
  return *ot && *tt && (*ot)->committed && (*tt)->committed ? w : nullptr;
}

// A put's or get's one pass: the window and types (predefined ones only with
// kBuiltin, looked up inline, so that the copy is the one call), then the
// data moved straight to or from the target's memory when the call allows
// (see directTarget); false otherwise, nothing done.  The window's flag is
// set before the copy, so that nothing is live across it.
template <bool kBuiltin>
[[gnu::always_inline]] inline bool putOnePass(const void* origin, int ocount, MPI_Datatype oh, int rank,
                                              MPI_Aint disp, int tcount, MPI_Datatype th, MPI_Win win) {
  const dt::Type *ot, *tt;
  rt::Win* w = fastArgs(win, ocount, oh, tcount, th, &ot, &tt, kBuiltin);
  if (!w) return false;
  const uint64_t bytes = plainBytes(origin, static_cast<uint64_t>(ocount), ot, static_cast<uint64_t>(tcount), tt);
  char* to = bytes ? directTarget(w, rank, disp, tt, bytes, false) : nullptr;
  if (!to) return false;
  w->pending = true;
  moveBytes(to, static_cast<const char*>(origin) + ot->trueLb, bytes);
  return true;
}
template <bool kBuiltin>
[[gnu::always_inline]] inline bool getOnePass(void* origin, int ocount, MPI_Datatype oh, int rank, MPI_Aint disp,
                                              int tcount, MPI_Datatype th, MPI_Win win) {
  const dt::Type *ot, *tt;
  rt::Win* w = fastArgs(win, ocount, oh, tcount, th, &ot, &tt, kBuiltin);
  if (!w) return false;
  const uint64_t bytes = plainBytes(origin, static_cast<uint64_t>(ocount), ot, static_cast<uint64_t>(tcount), tt);
  const char* from = bytes ? directTarget(w, rank, disp, tt, bytes, false) : nullptr;
  if (!from) return false;
  loaded(w);
  moveBytes(static_cast<char*>(origin) + ot->trueLb, from, bytes);
  return true;
}

}  // namespace

// The fast paths' form for any committed types (a user type's look-up is a
// call), tried first on the checked path (desc/rma.txt, fastany=).
bool putAnyType(const void* origin, int ocount, MPI_Datatype oh, int rank, MPI_Aint disp, int tcount, MPI_Datatype th,
                MPI_Win win) {
  return putOnePass<false>(origin, ocount, oh, rank, disp, tcount, th, win);
}
bool getAnyType(void* origin, int ocount, MPI_Datatype oh, int rank, MPI_Aint disp, int tcount, MPI_Datatype th,
                MPI_Win win) {
  return getOnePass<false>(origin, ocount, oh, rank, disp, tcount, th, win);
}

// MPI_Put's and MPI_Get's fast paths (desc/rma.txt, fast=): the one-pass
// case of put() and get() below, reached before the entry builds a Call.
// True when the data moved.  Inlined into the entry, predefined types only,
// so that the copy is its only call (other types: putAnyType and getAnyType,
// first on the checked path): with a flush, 159 instructions a call where
// the two functions' calls and frames made 211 (callgrind, 8 bytes).
[[gnu::always_inline]] inline bool putFast(const void* origin, int ocount, MPI_Datatype oh, int rank, MPI_Aint disp,
                                           int tcount, MPI_Datatype th, MPI_Win win) {
  return putOnePass<true>(origin, ocount, oh, rank, disp, tcount, th, win);
}
[[gnu::always_inline]] inline bool getFast(void* origin, int ocount, MPI_Datatype oh, int rank, MPI_Aint disp,
                                           int tcount, MPI_Datatype th, MPI_Win win) {
  return getOnePass<true>(origin, ocount, oh, rank, disp, tcount, th, win);
}

namespace {

// What MPI_Put and MPI_Get check before they move anything: the target
// (t), the two sides' byte counts, the origin buffer.  *bytes is 0 when
// there is nothing to move (MPI_PROC_NULL, empty sides).
int transferArgs(Call& call, const void* origin, uint64_t ocount, const dt::Type* otype, int rank, MPI_Aint disp,
                 uint64_t tcount, const dt::Type* ttype, rt::Win* w, bool passive, Target* t, uint64_t* bytes) {
  *bytes = 0;
  bool skip;
  SHMCOLL_CHECK(target(call, w, rank, disp, tcount, ttype, passive, t, &skip));
  if (skip) return MPI_SUCCESS;
  const uint64_t b = ocount * otype->size;
  SHMCOLL_CHECK(
      sameBytes(call, "origin_count and origin_datatype", b, "target_count and target_datatype", tcount * ttype->size));
  if (b == 0) return MPI_SUCCESS;
  SHMCOLL_CHECK(check::buffer(call, "origin_addr", origin, ocount, otype));
  *bytes = b;
  return MPI_SUCCESS;
}

}  // namespace

// MPI_Accumulate's and MPI_Fetch_and_op's fast paths (desc/rma.txt, fast=):
// one predefined type on both sides, an operation defined on it, a target
// reached directly that does not overlap the origin's or the result's
// buffer; combined in place under the target's accumulate mutex, as
// combine() does.  True when the call is done.
bool accumulateFast(const void* origin, int ocount, MPI_Datatype oh, int rank, MPI_Aint disp, int tcount,
                    MPI_Datatype th, MPI_Op op, MPI_Win win) {
  const dt::Type *ot = nullptr, *tt = nullptr;
  rt::Win* w = fastArgs(win, ocount, oh, tcount, th, &ot, &tt);
  const op::One one = op == MPI_SUM ? op::one(op, th) : op::One{};  // (MPI_REPLACE: not here, as before)
  if (!w || oh != th || !tt->builtin || (!one.size && !op::definedOn(op, th))) return false;
  const uint64_t bytes = plainBytes(origin, static_cast<uint64_t>(ocount), ot, static_cast<uint64_t>(tcount), tt);
  char* to = bytes ? directTarget(w, rank, disp, tt, bytes, false) : nullptr;
  const char* from = static_cast<const char*>(origin);
  if (!to || (from < to + bytes && to < from + bytes) || rt::winAccLock(*w, static_cast<uint32_t>(rank))) return false;
  w->pending = true;
  if (bytes == one.size)
    op::applyOne(one, from, to);
  else
    op::applyPacked(op, from, to, bytes, th);
  rt::winAccUnlock(*w, static_cast<uint32_t>(rank));
  fenced(w);
  return true;
}

bool fetchAndOpFast(const void* origin, void* result, MPI_Datatype h, int rank, MPI_Aint disp, MPI_Op op,
                    MPI_Win win) {
  const dt::Type *t = nullptr, *same = nullptr;
  rt::Win* w = fastArgs(win, 1, h, 1, h, &t, &same);
  const op::One one = op::one(op, h);
  if (!w || !t->builtin || !result || (op != MPI_NO_OP && !origin) ||
      (!one.size && op != MPI_REPLACE && op != MPI_NO_OP && !op::definedOn(op, h)))
    return false;
  const uint64_t bytes = t->size;
  char* to = bytes ? directTarget(w, rank, disp, t, bytes, false) : nullptr;
  const char *from = static_cast<const char*>(origin), *res = static_cast<const char*>(result);
  if (!to || (op != MPI_NO_OP && from < to + bytes && to < from + bytes) || (res < to + bytes && to < res + bytes) ||
      (op != MPI_NO_OP && from < res + bytes && res < from + bytes) || rt::winAccLock(*w, static_cast<uint32_t>(rank)))
    return false;
  w->pending = true;
  if (one.size == bytes) {
    op::copyOne(const_cast<char*>(res), to, one.size);
    op::applyOne(one, from, to);
  } else {
    memcpy(result, to, bytes);
    op::applyPacked(op, from, to, bytes, h);
  }
  rt::winAccUnlock(*w, static_cast<uint32_t>(rank));
  fenced(w);
  return true;
}

template <class C>
int put(Call& call, const void* origin, C ocount, const dt::Type* otype, int rank, MPI_Aint disp, C tcount,
        const dt::Type* ttype, rt::Win* w, bool passive = false) {
  if (const uint64_t bytes =
          plainBytes(origin, static_cast<uint64_t>(ocount), otype, static_cast<uint64_t>(tcount), ttype))
    if (char* to = directTarget(w, rank, disp, ttype, bytes, passive)) {
      memmove(to, static_cast<const char*>(origin) + otype->trueLb, bytes);  // (a rank may put from its own window)
      w->pending = true;
      return MPI_SUCCESS;
    }
  Target t;
  uint64_t moved;
  SHMCOLL_CHECK(transferArgs(call, origin, static_cast<uint64_t>(ocount), otype, rank, disp,
                             static_cast<uint64_t>(tcount), ttype, w, passive, &t, &moved));
  if (moved == 0) return MPI_SUCCESS;
  const char* src = packOrigin(origin, static_cast<uint64_t>(ocount), otype, 0);
  w->pending = true;
  if (int rc = rt::winWrite(*w, t.rank, t.addr, static_cast<uint64_t>(tcount), ttype, src))
    return check::engine(call, rc);
  return MPI_SUCCESS;
}

template <class C>
int get(Call& call, void* origin, C ocount, const dt::Type* otype, int rank, MPI_Aint disp, C tcount,
        const dt::Type* ttype, rt::Win* w, bool passive = false) {
  if (const uint64_t size =
          plainBytes(origin, static_cast<uint64_t>(ocount), otype, static_cast<uint64_t>(tcount), ttype))
    if (const char* from = directTarget(w, rank, disp, ttype, size, passive)) {
      memmove(static_cast<char*>(origin) + otype->trueLb, from, size);
      loaded(w);
      return MPI_SUCCESS;
    }
  Target t;
  uint64_t bytes;
  SHMCOLL_CHECK(transferArgs(call, origin, static_cast<uint64_t>(ocount), otype, rank, disp,
                             static_cast<uint64_t>(tcount), ttype, w, passive, &t, &bytes));
  if (bytes == 0) return MPI_SUCCESS;
  w->pending = true;
  char* dst = otype->contiguous ? static_cast<char*>(origin) + otype->trueLb : stage(0, bytes);
  if (int rc = rt::winRead(*w, t.rank, t.addr, static_cast<uint64_t>(tcount), ttype, dst))
    return check::engine(call, rc);
  if (!otype->contiguous) dt::Cursor(origin, static_cast<uint64_t>(ocount), otype).unpack(0, dst, bytes);
  return MPI_SUCCESS;
}

template <class C>
int accumulate(Call& call, const void* origin, C ocount, const dt::Type* otype, int rank, MPI_Aint disp, C tcount,
               const dt::Type* ttype, MPI_Op op, rt::Win* w, bool passive = false) {
  if (op == MPI_NO_OP)
    return check::fail(call, MPI_ERR_OP, "op = MPI_NO_OP is allowed only in MPI_Get_accumulate and MPI_Fetch_and_op");
  int basic = 0;
  SHMCOLL_CHECK(accOp(call, op, otype, ttype, &basic));
  Target t;
  bool skip;
  SHMCOLL_CHECK(target(call, w, rank, disp, static_cast<uint64_t>(tcount), ttype, passive, &t, &skip));
  if (skip) return MPI_SUCCESS;
  const uint64_t bytes = static_cast<uint64_t>(ocount) * otype->size;
  SHMCOLL_CHECK(sameBytes(call, "origin_count and origin_datatype", bytes, "target_count and target_datatype",
                          static_cast<uint64_t>(tcount) * ttype->size));
  if (bytes == 0) return MPI_SUCCESS;
  SHMCOLL_CHECK(check::buffer(call, "origin_addr", origin, static_cast<uint64_t>(ocount), otype));
  const char* src = packOrigin(origin, static_cast<uint64_t>(ocount), otype, 0);
  return combine(call, w, t, static_cast<uint64_t>(tcount), ttype, op, basic, src, nullptr, 0, nullptr);
}

template <class C>
int getAccumulate(Call& call, const void* origin, C ocount, MPI_Datatype otypeH, void* result, C rcount,
                  const dt::Type* rtype, int rank, MPI_Aint disp, C tcount, const dt::Type* ttype, MPI_Op op,
                  rt::Win* w, bool passive = false) {
  const dt::Type* otype = nullptr;
  if (op != MPI_NO_OP) {  // (MPI_NO_OP ignores the origin arguments)
    SHMCOLL_CHECK(check::count(call, "origin_count", static_cast<int64_t>(ocount)));
    SHMCOLL_CHECK(check::datatype(call, "origin_datatype", otypeH, &otype));
  }
  int basic = 0;
  SHMCOLL_CHECK(accOp(call, op, otype, ttype, &basic));
  Target t;
  bool skip;
  SHMCOLL_CHECK(target(call, w, rank, disp, static_cast<uint64_t>(tcount), ttype, passive, &t, &skip));
  if (skip) return MPI_SUCCESS;
  const uint64_t bytes = static_cast<uint64_t>(tcount) * ttype->size;
  if (otype)
    SHMCOLL_CHECK(sameBytes(call, "origin_count and origin_datatype", static_cast<uint64_t>(ocount) * otype->size,
                            "target_count and target_datatype", bytes));
  SHMCOLL_CHECK(sameBytes(call, "result_count and result_datatype", static_cast<uint64_t>(rcount) * rtype->size,
                          "target_count and target_datatype", bytes));
  if (bytes == 0) return MPI_SUCCESS;
  SHMCOLL_CHECK(check::buffer(call, "result_addr", result, static_cast<uint64_t>(rcount), rtype));
  const char* src = nullptr;
  if (otype) {
    SHMCOLL_CHECK(check::buffer(call, "origin_addr", origin, static_cast<uint64_t>(ocount), otype));
    src = packOrigin(origin, static_cast<uint64_t>(ocount), otype, 0);
  }
  return combine(call, w, t, static_cast<uint64_t>(tcount), ttype, op, basic, src, result,
                 static_cast<uint64_t>(rcount), rtype);
}

int fetchAndOp(Call& call, const void* origin, void* result, const dt::Type* type, int rank, MPI_Aint disp, MPI_Op op,
               rt::Win* w) {
  if (!type->builtin)
    return check::fail(call, MPI_ERR_TYPE, "datatype must be a predefined datatype for MPI_Fetch_and_op");
  return getAccumulate<int>(call, origin, 1, type->handle, result, 1, type, rank, disp, 1, type, op, w);
}

int compareAndSwap(Call& call, const void* origin, const void* compare, void* result, const dt::Type* type, int rank,
                   MPI_Aint disp, rt::Win* w) {
  if (!type->builtin || type->size == 0 || type->size != static_cast<uint64_t>(type->extent()))
    return check::fail(call, MPI_ERR_TYPE,
                       "datatype must be a predefined integer, logical or byte datatype for MPI_Compare_and_swap");
  Target t;
  bool skip;
  SHMCOLL_CHECK(target(call, w, rank, disp, 1, type, false, &t, &skip));
  if (skip) return MPI_SUCCESS;
  for (const auto& [arg, p] :
       {std::pair<const char*, const void*>{"origin_addr", origin}, {"compare_addr", compare}, {"result_addr", result}})
    SHMCOLL_CHECK(check::buffer(call, arg, p, 1, type));
  if (int rc = rt::winAccLock(*w, t.rank)) return check::engine(call, rc);
  w->pending = true;
  char old[64];
  int rc = rt::winRead(*w, t.rank, t.addr, 1, type, old);
  if (rc == 0 && memcmp(old, compare, type->size) == 0) rc = rt::winWrite(*w, t.rank, t.addr, 1, type, origin);
  rt::winAccUnlock(*w, t.rank);
  if (rc) return check::engine(call, rc);
  memcpy(result, old, type->size);
  return MPI_SUCCESS;
}

template <class C>
int rput(Call& call, const void* origin, C ocount, const dt::Type* otype, int rank, MPI_Aint disp, C tcount,
         const dt::Type* ttype, rt::Win* w, MPI_Request* request) {
  SHMCOLL_CHECK(put(call, origin, ocount, otype, rank, disp, tcount, ttype, w, true));
  completeRequest(call, request);
  return MPI_SUCCESS;
}

template <class C>
int rget(Call& call, void* origin, C ocount, const dt::Type* otype, int rank, MPI_Aint disp, C tcount,
         const dt::Type* ttype, rt::Win* w, MPI_Request* request) {
  SHMCOLL_CHECK(get(call, origin, ocount, otype, rank, disp, tcount, ttype, w, true));
  completeRequest(call, request);
  return MPI_SUCCESS;
}

template <class C>
int raccumulate(Call& call, const void* origin, C ocount, const dt::Type* otype, int rank, MPI_Aint disp, C tcount,
                const dt::Type* ttype, MPI_Op op, rt::Win* w, MPI_Request* request) {
  SHMCOLL_CHECK(accumulate(call, origin, ocount, otype, rank, disp, tcount, ttype, op, w, true));
  completeRequest(call, request);
  return MPI_SUCCESS;
}

template <class C>
int rgetAccumulate(Call& call, const void* origin, C ocount, MPI_Datatype otype, void* result, C rcount,
                   const dt::Type* rtype, int rank, MPI_Aint disp, C tcount, const dt::Type* ttype, MPI_Op op,
                   rt::Win* w, MPI_Request* request) {
  SHMCOLL_CHECK(
      getAccumulate(call, origin, ocount, otype, result, rcount, rtype, rank, disp, tcount, ttype, op, w, true));
  completeRequest(call, request);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_rma.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/rma.txt)
