// MPI_Allreduce, MPI_Reduce and MPI_Reduce_scatter_block on one node (over
// several nodes: hier_reduce.cc, built on the rounds here): the
// predefined operations on predefined types (optable.cc), through the
// segment's rounds (rounds.h).  Anything else -- a user operation, a derived
// or unmapped type, a negative count, an invalid root, MPI_IN_PLACE where the
// standard does not allow it -- is declined by every rank together in round
// 0, before any receive buffer is written, and goes to the host.
//
// Every element is folded in rank order, a0 (op) (a1 (op) (... a(n-1))),
// whichever rank folds it and however the block is cut, so results do not
// depend on timing or on the path and are identical on every rank.
//
// Allreduce and reduce, two paths chosen by the block's bytes B:
//  - B below SHMCOLL_ACCEL_REDUCE_SPLIT (bytes, k/m/g suffixes; default 8 KiB, and where the
//    processes outnumber the cores 256 KiB for reduce and 64 KiB for allreduce: SplitBytes): one round per
//    piece; every rank posts its piece and each rank that delivers a result
//    (all of them for allreduce, the root for reduce) folds the n pieces
//    itself.  One wait per piece; n * B bytes read by each folding rank.
//  - otherwise, reduce-scatter then gather, pipelined: a half-slot holds a
//    piece of my contribution (region C) and my folded slice of the previous
//    piece (region R).  In round r each rank posts piece r, folds slice `me`
//    of piece r (1/n of it) from every rank's C into its R of the other
//    half, and copies every rank's slice of piece r-1 from their R into its
//    result.  Pieces + 1 rounds; each rank folds B / n bytes and reads about
//    2 B, whatever n.
// Reduce_scatter_block: like alltoall, a half holds n sub-pieces, sub-piece
// j of block j; rank j folds block j from every slot straight into its
// receive buffer.  One round per piece; each rank reads n * count bytes.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "accel.h"
#include "nodes.h"
#include "rounds.h"

namespace shmcoll_accel {
namespace {

// Blocks of at least this many bytes are split across the ranks (see
// above): SHMCOLL_ACCEL_REDUCE_SPLIT where set, else 8 KiB where every
// process has a core of its own.  Where the processes outnumber the cores
// (st.crowded, agreed) a round costs a turn of the scheduler for every
// process, and the split's extra round cost more than the unsplit fold up
// to 128 KiB for a reduce (only the root folds) and 32 KiB for an allreduce
// (all fold), so blocks below 256 and 64 KiB go unsplit there (N = 4 and 8
// on 2 cores, docs/PERFORMANCE.md, 2026-11-30, evening).
size_t SplitBytes(const CommState& st, bool all) {
  static const size_t set = [] {
    const char* e = std::getenv("SHMCOLL_ACCEL_REDUCE_SPLIT");
    if (!e || !*e) return SIZE_MAX;
    char* end = nullptr;
    unsigned long long v = std::strtoull(e, &end, 0);
    const char unit = end ? *end | 0x20 : 0;  // k, m, g in either case
    return static_cast<size_t>(v << (unit == 'k' ? 10 : unit == 'm' ? 20 : unit == 'g' ? 30 : 0));
  }();
  if (set != SIZE_MAX) return set;
  if (!st.crowded) return 8 * 1024;
  return all ? 64 * 1024 : 256 * 1024;
}

// out = a0 (op) (a1 (op) ... a(n-1)) over `elems` elements, where a(j) is at
// src(j) + byte offset `at`; out may be a receive buffer (never one of the a(j)).
template <class Src>
void FoldAll(const CommState& st, const Fold& f, Src src, size_t at, char* out, size_t elems) {
  if (elems == 0) return;
  std::memcpy(out, src(st.n - 1) + at, elems * f.extent);
  for (int j = st.n - 2; j >= 0; --j) f.apply(src(j) + at, out, elems);
}

}  // namespace

// Reduce by single copy: the root reads every contribution straight out of
// its sender's buffer (a header in round 0, as in Alltoall) and folds it in
// rank order; round 1 keeps the senders in the call until it has read.
// Where process_vm_readv is slow, a contribution of at most PushMax bytes
// outside its sender's heap comes through the sender's slot instead, a
// piece per round (PushPrivate, engine.cc); then the root gathers every
// contribution in rtmp (rank j's at j * bytes, its own in place at n * bytes)
// and folds after the rounds.
bool ReduceCma(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
               MPI_Comm comm) {
  const int n = st.n, me = st.me;
  const size_t bytes = count * f.extent, chunk = st.half();
  const bool in_place = in == out;  // (MPI_IN_PLACE at the root: my contribution is in the result's place)
  // (a shortage goes into the verdict: every rank passes the call to the host)
  if (me == root)
    ok = ok && Grow(st.rtmp, st.cma_slow ? static_cast<size_t>(n + 1) * bytes : in_place ? 2 * bytes : bytes);
  Side mine;
  mine.ptr = const_cast<char*>(in), mine.bytes = bytes;
  const bool push = ok && me != root && PushPrivate(st, &mine, 1, 1, 1);
  st.push_mine = push;
  if (push) Bump(g_pushed);
  bool staged = false, single = me != root && !push;
  auto fill = [&](uint64_t r) {
    if (me == root) return;
    size_t off, len = Piece(bytes, r, chunk, &off);
    if (push && len) std::memcpy(st.slot_of(me), in + off, len);
    if (!push && r == 0) CmaOffer(st, st.slot_of(me), in, bytes);
  };
  auto stage = [&](uint64_t r) {  // some contribution comes in pieces: every one into rtmp
    char* tmp = st.rtmp.data();
    if (r == 0 && in_place) std::memcpy(tmp + static_cast<size_t>(n) * bytes, in, bytes);
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      char* at = tmp + static_cast<size_t>(j) * bytes;
      size_t off, len = Piece(bytes, r, chunk, &off);
      if (Pushed(st, j, bytes)) {
        if (len) std::memcpy(at + off, st.slot_of(j), len);
      } else if (r == 0) {
        single = true;
        CmaPull(st, st.slot_of(j), j, at, bytes, "MPI_Reduce", comm);
      }
    }
  };
  auto drain = [&](uint64_t r) {
    if (me != root) return;
    if (r == 0)
      for (int j = 0; j < n; ++j) staged = staged || (j != me && Pushed(st, j, bytes));
    if (staged) return stage(r);
    if (r) return;
    single = true;
    char* tmp = st.rtmp.data();
    const char* own = in;
    if (in_place) own = static_cast<const char*>(std::memcpy(tmp + bytes, in, bytes));
    auto get = [&](int j, char* dst) {  // a(j) into dst, or where it already is
      if (j == me) return own;
      CmaPull(st, st.slot_of(j), j, dst, bytes, "MPI_Reduce", comm);
      return static_cast<const char*>(dst);
    };
    const char* last = get(n - 1, out);  // out = a0 (op) (a1 (op) ... a(n-1)), as FoldAll
    if (last != out) std::memcpy(out, last, bytes);
    for (int j = n - 2; j >= 0; --j) f.apply(get(j, tmp), out, count);
  };
  if (!RunRounds(st, push ? std::max<uint64_t>(2, RoundsFor(bytes, chunk)) : 2, ok, fill, drain)) return false;
  if (staged) {  // out = a0 (op) (a1 (op) ... a(n-1)), as FoldAll, out of rtmp
    const char* tmp = st.rtmp.data();
    auto a = [&](int j) { return j != me ? tmp + static_cast<size_t>(j) * bytes : in_place ? tmp + n * bytes : in; };
    if (a(n - 1) != out) std::memcpy(out, a(n - 1), bytes);
    for (int j = n - 2; j >= 0; --j) f.apply(a(j), out, count);
  }
  if (single) Bump(g_single);
  return true;
}

// Allreduce (root < 0) or reduce to `root`: `in` is this rank's contribution
// and `out` its result (used where this rank delivers one).
bool ReduceRounds(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
                  MPI_Comm comm) {
  const int n = st.n, me = st.me;
  const bool deliver = root < 0 || root == me;
  const size_t ext = f.extent ? f.extent : 1, bytes = count * ext;
  // (root, count and type are the same on every rank: so is the choice)
  if (root >= 0 && comm != MPI_COMM_NULL && n <= 3 && Single(st, bytes) &&
      bytes * static_cast<size_t>(n - 1) <= kReduceCmaMax)
    return ReduceCma(st, in, out, count, f, root, ok, comm);
  if (bytes < SplitBytes(st, root < 0)) {
    const size_t per = st.half() / ext;  // elements per piece
    const uint64_t need = ok ? std::max<uint64_t>(1, RoundsFor(count, per)) : 1;
    const bool tiny = bytes <= kTiny;  // (in the post lines: Tiny)
    auto fill = [&](uint64_t r) {
      size_t off, len = Piece(count, r, per, &off);
      if (len) std::memcpy(tiny ? st.tiny_of(me) : st.slot_of(me), in + off * ext, len * ext);
    };
    auto drain = [&](uint64_t r) {
      size_t off, len = Piece(count, r, per, &off);
      if (deliver)
        FoldAll(
            st, f, [&](int j) { return tiny ? st.tiny_of(j) : st.slot_of(j); }, 0, out + off * ext, len);
    };
    return RunRounds(st, need, ok, fill, drain);
  }
  // per: elements per piece, so that C (per) and R (a slice, per / n rounded up) fit in a half
  const size_t h = st.half() / ext;
  size_t per = h * static_cast<size_t>(n) / (n + 1);
  while (per > 1 && per + (per + n - 1) / n > h) --per;
  const size_t pieces = RoundsFor(count, per), rpos = per * ext;
  auto slice = [&](size_t len, int j, size_t* lo) {
    *lo = len * static_cast<size_t>(j) / n;
    return len * static_cast<size_t>(j + 1) / n - *lo;
  };
  auto fill = [&](uint64_t r) {
    size_t off, len = Piece(count, r, per, &off);
    if (len) std::memcpy(st.slot_of(me), in + off * ext, len * ext);
  };
  auto drain = [&](uint64_t r) {
    size_t off, len, lo, sl;
    if (r >= 1 && deliver) {  // the slices of piece r - 1, folded in the last round
      len = Piece(count, r - 1, per, &off);
      for (int k = 0; k < n; ++k) {
        const int j = (me + k) % n;
        if ((sl = slice(len, j, &lo))) std::memcpy(out + (off + lo) * ext, st.half_of(j, st.seq) + rpos, sl * ext);
      }
    }
    len = Piece(count, r, per, &off);
    if ((sl = slice(len, me, &lo)))
      FoldAll(
          st, f, [&](int j) { return st.slot_of(j); }, lo * ext, st.half_of(me, st.seq + 1) + rpos, sl);
  };
  return RunRounds(st, ok && count ? pieces + 1 : 1, ok, fill, drain);
}

bool ReduceScatterRounds(CommState& st, const char* in, char* out, size_t count, const Fold& f, bool ok) {
  const int n = st.n, me = st.me;
  const size_t ext = f.extent ? f.extent : 1, block = count * ext;
  const size_t per = st.half() / static_cast<size_t>(n) / ext;  // elements per sub-piece
  const uint64_t need = ok ? std::max<uint64_t>(1, RoundsFor(count, per)) : 1;
  auto fill = [&](uint64_t r) {
    size_t off, len = Piece(count, r, per, &off);
    if (len)
      for (int j = 0; j < n; ++j) std::memcpy(st.slot_of(me) + per * ext * j, in + block * j + off * ext, len * ext);
  };
  auto drain = [&](uint64_t r) {
    size_t off, len = Piece(count, r, per, &off);
    FoldAll(
        st, f, [&](int j) { return st.slot_of(j); }, per * ext * me, out + off * ext, len);
  };
  return RunRounds(st, need, ok, fill, drain);
}

namespace {

// The buffers' part of the local verdict: (a null buffer or a send buffer
// that is the receive buffer: the host reports the error).
bool BuffersOk(const void* in, const void* out, int count, bool delivers) {
  return count == 0 || (in != nullptr && (!delivers || (out != nullptr && out != in)));
}

// Local verdict on the arguments; *fold is set when true.
bool Accept(const void* in, const void* out, int count, MPI_Datatype type, MPI_Op op, bool delivers, Fold* fold) {
  if (count < 0 || !FindFold(op, type, fold)) return false;
  if (count == 0) return true;
  // (a null buffer or a send buffer that is the receive buffer: the host reports the error)
  return in != nullptr && (!delivers || (out != nullptr && out != in));
}

// The input of a reduction whose result every rank receives (allreduce,
// reduce_scatter_block): sendbuf, or recvbuf with MPI_IN_PLACE, in *in.
bool AcceptEverywhere(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, Fold* f,
                      const void** in) {
  const bool in_place = sendbuf == MPI_IN_PLACE;
  *in = in_place ? recvbuf : sendbuf;
  return in_place ? Accept(*in, nullptr, count, datatype, op, false, f)
                  : Accept(*in, recvbuf, count, datatype, op, true, f);
}

}  // namespace
}  // namespace shmcoll_accel

using namespace shmcoll_accel;

#define ACCEL_EXPORT __attribute__((visibility("default")))

extern "C" {

ACCEL_EXPORT int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm) {
  CommState* st = TakenOrNodes(comm);
  bool taken = false;
  if (st) {
    Fold f;
    const void* in = nullptr;
    const bool ok = AcceptEverywhere(sendbuf, recvbuf, count, datatype, op, &f, &in);
    const size_t c = ok ? static_cast<size_t>(count) : 0;
    taken = st->nodes ? HierReduce(*st, in, recvbuf, c, f, datatype, op, -1, ok)
                      : ReduceRounds(*st, static_cast<const char*>(in), static_cast<char*>(recvbuf), c, f, -1, ok);
  }
  if (Count(taken)) return MPI_SUCCESS;
  return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

ACCEL_EXPORT int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm) {
  CommState* st = TakenOrNodes(comm);
  bool taken = false;
  if (st) {
    Fold f;
    // root is the same on every rank (else the program is erroneous): an invalid one is declined by all;
    // MPI_IN_PLACE is the root's only
    const bool valid_root = root >= 0 && root < st->n, am_root = root == st->me;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const void* in = in_place ? recvbuf : sendbuf;
    // (count, datatype, op and root are the same on every rank of a correct program: so is the path;
    // the buffers are each rank's own)
    const bool foldable = valid_root && count >= 0 && FindFold(op, datatype, &f);
    const bool ok = foldable && (!in_place || am_root) &&
                    (in_place ? BuffersOk(in, nullptr, count, false) : BuffersOk(in, recvbuf, count, am_root));
    const size_t c = ok ? static_cast<size_t>(count) : 0;
    const size_t eager = st->nodes ? st->nodes->eager : st->eager;
    if (eager && foldable && static_cast<size_t>(count) * f.extent <= eager) {
      taken = st->nodes ? HierEagerReduce(*st, static_cast<const char*>(in), static_cast<char*>(recvbuf),
                                          static_cast<size_t>(count), f, root, ok, comm)
                        : EagerReduce(*st, static_cast<const char*>(in), static_cast<char*>(recvbuf),
                                      static_cast<size_t>(count), f, root, ok, comm);
    } else {
      if (st->nodes && eager && valid_root) HierEagerReduceCheck(*st, root, comm);
      if (!st->nodes && st->eager && valid_root && am_root)
        for (int j = 0; j < st->n; ++j)
          if (j != st->me) EagerCheck(*st, j, "MPI_Reduce", comm);
      taken = st->nodes ? HierReduce(*st, in, recvbuf, c, f, datatype, op, valid_root ? root : 0, ok)
                        : ReduceRounds(*st, static_cast<const char*>(in), static_cast<char*>(recvbuf), c, f,
                                       valid_root ? root : 0, ok, comm);
    }
    if (valid_root && !st->nodes && st->n == 2) st->SetLead(1 - root);
  }
  if (Count(taken)) return MPI_SUCCESS;
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

ACCEL_EXPORT int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm) {
  CommState* st = TakenOrNodes(comm);
  bool taken = false;
  if (st) {
    Fold f;
    const void* in = nullptr;
    const bool ok = AcceptEverywhere(sendbuf, recvbuf, recvcount, datatype, op, &f, &in);
    const size_t c = ok ? static_cast<size_t>(recvcount) : 0;
    taken = st->nodes ? HierReduceScatterBlock(*st, in, recvbuf, c, f, datatype, op, ok)
                      : ReduceScatterRounds(*st, static_cast<const char*>(in), static_cast<char*>(recvbuf), c, f, ok);
  }
  if (Count(taken)) return MPI_SUCCESS;
  return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

}  // extern "C"
