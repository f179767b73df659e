// Eager rooted collectives on one node: an MPI_Bcast or MPI_Reduce of at most
// CommState::eager bytes (SHMCOLL_ACCEL_EAGER_MAX, agreed at set-up) does
// not hold the ranks together as the rounds do (engine.cc).  Each rank has,
// after the slots, a count of the eager calls it has finished, then two
// rings: D = CommState::eager_depth entries of a head line and kEagerData
// bytes, and kEagerSmallDepth = 256 head lines alone, for blocks of at most
// 40 bytes (in the head's line).  Eager call e uses entry e % D of the first
// ring or line e % 256 of the second, by its block's bytes:
//   bcast:  the root copies its block into its entry, stamps it e + 1 and
//           returns; a reader waits for the stamp, copies the block out and
//           returns.
//   reduce: every other rank copies its contribution into its entry, stamps
//           it and returns; the root waits for the n - 1 stamps and folds in
//           rank order, as ReduceRounds does (the same bits whichever path).
// Before writing entry e % D (line e % 256) a rank waits until every rank has
// finished call e - D (e - 256), the last that may have read it: a root runs
// up to D (256) calls ahead of its slowest reader, where the rounds would
// make every call a barrier (at 4 ranks per core, ~6 us).  The deep ring of
// lines is what counts where processes outnumber cores: a reader takes all
// the calls the root made in its time slice in one of its own (8-byte bcast
// back to back, Open MPI host, 8 processes on 2 cores: 1.63 us with the 32
// entries, 0.32 with 256 lines; docs/PERFORMANCE.md).  256 lines are 16 KiB
// per rank; 256 entries would be 272 KiB.
// Verdicts: the root's is in its entry (a bcast root that declines stamps
// its entry "declined", and every rank passes the call to the host);
// whether a call is eager, and in which ring, is decided by its bytes, the
// same on every rank of a correct program.  A rank whose call does not match
// (sizes that put one rank here and another in the rounds, or in the other
// ring, or a reader's invalid arguments) sees the other path's flag or ring
// while it waits and ends the job, saying so.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "accel.h"
#include "copy/copy.h"
#include "rounds.h"

namespace shmcoll_accel {

std::atomic<long> g_eager{0};

namespace {

struct alignas(kLine) EagerHead {
  std::atomic<uint64_t> stamp;  // e + 1 once call e's block is in
  uint64_t bytes;               // the block's bytes, as the writer counted them
  uint64_t ok;                  // 0: the root declined (bcast) or the writer's arguments were invalid (reduce)
  char small[kLine - 3 * sizeof(uint64_t)];  // a block of at most this many bytes, in the stamp's line
};
static_assert(sizeof(EagerHead) == kLine);

std::atomic<uint64_t>* Done(const CommState& st, int r) {
  return reinterpret_cast<std::atomic<uint64_t>*>(st.eager_area() + kEagerPerRank * static_cast<size_t>(r));
}
constexpr size_t kSmall = sizeof(EagerHead::small);
EagerHead* Entry(const CommState& st, int r, uint64_t e) {
  return reinterpret_cast<EagerHead*>(st.eager_area() + kEagerPerRank * static_cast<size_t>(r) + kLine +
                                      kEagerEntry * static_cast<size_t>(e % st.eager_depth));
}
EagerHead* SmallEntry(const CommState& st, int r, uint64_t e) {
  return reinterpret_cast<EagerHead*>(st.eager_area() + kEagerPerRank * static_cast<size_t>(r) + kLine +
                                      kEagerEntry * kEagerDepth + kLine * static_cast<size_t>(e % kEagerSmallDepth));
}
// Call e's entry of rank r for a block of `bytes`.
EagerHead* EntryFor(const CommState& st, int r, uint64_t e, size_t bytes) {
  return bytes <= kSmall ? SmallEntry(st, r, e) : Entry(st, r, e);
}
uint64_t DepthFor(const CommState& st, size_t bytes) {
  return bytes <= kSmall ? kEagerSmallDepth : st.eager_depth;
}
// Rank r's entry of call e once it is stamped (WaitPath): the one for
// `bytes`, else the other (the writer's block has another size).
const EagerHead* Stamped(const CommState& st, int r, uint64_t e, size_t bytes) {
  const EagerHead* h = EntryFor(st, r, e, bytes);
  if (h->stamp.load(std::memory_order_acquire) > e) return h;
  return bytes <= kSmall ? Entry(st, r, e) : SmallEntry(st, r, e);
}
// Where an entry's block of `bytes` lies: in its head's line when small (a
// reader then takes one line from the writer's core, not two), else after
// it.  Writer and reader both know the bytes (a reader checks the head's
// against its own before it reads).
char* Data(EagerHead* h, size_t bytes) {
  return bytes <= kSmall ? h->small : reinterpret_cast<char*>(h) + kLine;
}
const char* Data(const EagerHead* h, size_t bytes) { return Data(const_cast<EagerHead*>(h), bytes); }

// Every rank has finished eager call e - depth (so the entry or line call e
// uses is free everywhere: depth is its ring's, DepthFor); st.eager_seen
// caches the least count seen.
void WaitFree(CommState& st, uint64_t e, uint64_t depth) {
  if (e < depth) return;
  const uint64_t want = e - depth + 1;
  if (st.eager_seen >= want) return;
  uint64_t least = UINT64_MAX;
  for (int k = 1; k <= st.n; ++k) {
    const std::atomic<uint64_t>& d = *Done(st, (st.me + k) % st.n);
    WaitFor(d, want, st.spin);
    least = std::min(least, d.load(std::memory_order_relaxed));
  }
  st.eager_seen = least;
}

// A reader of small blocks (in the ring of head lines) fetches the lines of
// the next kPrefetchAhead calls as it leaves a call, where every
// process has a core: a root runs up to 255 calls ahead, so those lines
// are usually written, and the next call then finds its line in the cache
// instead of waiting for a transfer from the root's core (N = 2, Open MPI
// host, 8 B back to back: bcast and reduce 0.18-0.19 -> 0.12-0.13 us on a
// 2-core AMD EPYC VM, docs/PERFORMANCE.md).  Not for larger blocks (their
// data lines fetched too: 512 B and 1 KiB reduce 0.18 -> 0.24, 0.37 ->
// 0.53) nor where processes outnumber the cores (N = 3 and 8 on 2 cores
// unchanged, N = 4 0.51 -> 0.70 us with a wide spread).  (An asm
// prefetch: GCC removed loops of __builtin_prefetch here.)
constexpr uint64_t kPrefetchAhead = 2;
bool ReadsAhead(const CommState& st, size_t bytes) { return st.spin != 0 && bytes <= kSmall; }
void PrefetchHeads(const CommState& st, int r, uint64_t e) {
  for (uint64_t d = 1; d <= kPrefetchAhead; ++d) asm volatile("prefetcht0 %0" ::"m"(*SmallEntry(st, r, e + d)));
}

// A writer of a small block (a bcast root, a reduce's contributor) asks, as
// it leaves call e, for its line of call e + kWriteAhead in exclusive state:
// that line's last readers (call e + kWriteAhead - 256) are long done, and
// the writer's store then finds it in its cache instead of waiting for the
// readers' copies to be invalidated, which held the writer as long as a
// line transfer.  Open MPI host, 8 B back to back, AMD EPYC VM, 3-5
// alternated runs, none / 4 ahead / 8 ahead: N = 2 bcast 0.10 / 0.04 /
// 0.06 us, reduce 0.09 / 0.04 / 0.08; N = 8 bcast 0.34 / 0.24 / 0.24,
// reduce 0.47 / 0.32 / 0.34 (docs/PERFORMANCE.md).
constexpr uint64_t kWriteAhead = 4;
void PrepareLine(const CommState& st, uint64_t e, size_t bytes) {
  if (bytes <= kSmall && shmcoll::copy::hasPrefetchW())
    shmcoll::copy::prefetchW(SmallEntry(st, st.me, e + kWriteAhead));
}

[[noreturn]] void Mismatch(const char* fn, int peer, MPI_Comm comm) {
  std::fprintf(stderr,
               "shmcoll-accel: %s: rank %d's call does not match this one (its count or datatype is invalid, or "
               "its block size differs from this rank's)\n",
               fn, peer);
  EndJob(comm);
}

// Waits for rank r to show its path for the coming call: its stamp of eager
// call e (want_stamp), or its post of the next round; ends the job when it
// shows the other one.  (r stamps before it posts anything later, and the
// reverse: the flag waited for is read again after the other is seen.)
void WaitPath(const CommState& st, int r, uint64_t e, bool want_stamp, const char* fn, MPI_Comm comm) {
  const std::atomic<uint64_t>&small = SmallEntry(st, r, e)->stamp, &large = Entry(st, r, e)->stamp;
  const std::atomic<uint64_t>& posted = st.flags(r)->post.posted;
  auto stamped = [&] { return small.load(std::memory_order_acquire) > e || large.load(std::memory_order_acquire) > e; };
  auto next_posted = [&] { return posted.load(std::memory_order_acquire) > st.seq; };
  WaitUntil(
      [&] {
        if (want_stamp ? stamped() : next_posted()) return true;
        if (want_stamp ? next_posted() && !stamped() : stamped() && !next_posted()) Mismatch(fn, r, comm);
        return false;
      },
      st.spin);
}

}  // namespace

void EagerCheck(const CommState& st, int r, const char* fn, MPI_Comm comm) {
  WaitPath(st, r, st.eager_calls, false, fn, comm);
}

bool EagerBcast(CommState& st, const Side& side, int root, bool ok, MPI_Comm comm) {
  const uint64_t e = st.eager_calls++;
  const int me = st.me;
  std::vector<Side>& one = st.one_side;
  one.assign(1, side);
  if (me == root) {
    EagerHead* h = EntryFor(st, root, e, side.bytes);
    ok = ok && PackSends(one, st.stmp, comm);
    WaitFree(st, e, DepthFor(st, side.bytes));
    if (ok && one[0].bytes) std::memcpy(Data(h, one[0].bytes), one[0].ptr, one[0].bytes);
    h->bytes = one[0].bytes, h->ok = ok;
    h->stamp.store(e + 1, std::memory_order_release);
    Done(st, me)->store(e + 1, std::memory_order_release);
    PrepareLine(st, e, side.bytes);
    if (ok) Bump(g_eager);
    return ok;
  }
  WaitPath(st, root, e, true, "MPI_Bcast", comm);
  const EagerHead* h = Stamped(st, root, e, side.bytes);
  if (!h->ok) {  // the root declined: every rank passes the call to the host
    Done(st, me)->store(e + 1, std::memory_order_release);
    return false;
  }
  if (!ok || h->bytes != side.bytes) Mismatch("MPI_Bcast", root, comm);
  if (!LayoutRecvs(one, st.rtmp)) {
    std::fprintf(stderr, "shmcoll-accel: MPI_Bcast: no memory for a block of %zu bytes\n", side.bytes);
    EndJob(comm);
  }
  if (side.bytes) std::memcpy(one[0].ptr, Data(h, side.bytes), side.bytes);
  Done(st, me)->store(e + 1, std::memory_order_release);
  if (ReadsAhead(st, side.bytes)) PrefetchHeads(st, root, e);
  UnpackRecvs(one, st.rtmp, comm);
  Bump(g_eager);
  return true;
}

bool EagerReduce(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
                 MPI_Comm comm) {
  const uint64_t e = st.eager_calls++;
  const int n = st.n, me = st.me;
  const size_t bytes = count * f.extent;
  if (me != root) {
    WaitFree(st, e, DepthFor(st, bytes));
    EagerHead* h = EntryFor(st, me, e, bytes);
    if (ok && bytes) std::memcpy(Data(h, bytes), in, bytes);
    h->bytes = bytes, h->ok = ok;
    h->stamp.store(e + 1, std::memory_order_release);
    Done(st, me)->store(e + 1, std::memory_order_release);
    PrepareLine(st, e, bytes);
    if (ok) Bump(g_eager);
    return ok;  // (not ok: the arguments are invalid; the host reports it)
  }
  for (int k = 1; k < n; ++k) {
    const int j = (me + k) % n;
    WaitPath(st, j, e, true, "MPI_Reduce", comm);
    const EagerHead* h = Stamped(st, j, e, bytes);
    if (!h->ok || h->bytes != bytes) Mismatch("MPI_Reduce", j, comm);
  }
  if (!ok) {  // (the others have returned: the host's call, which may not check these, could wait for them forever)
    std::fprintf(stderr,
                 "shmcoll-accel: MPI_Reduce: rank %d (the root): recvbuf or sendbuf is a null pointer, or sendbuf "
                 "is recvbuf without MPI_IN_PLACE\n",
                 me);
    EndJob(comm);
  }
  if (count) {
    alignas(kLine) char mine[kEagerData];
    if (in == out) std::memcpy(mine, in, bytes);  // MPI_IN_PLACE: my contribution is the result's place
    const char* own = in == out ? mine : in;
    std::memcpy(out, n - 1 == me ? own : Data(EntryFor(st, n - 1, e, bytes), bytes), bytes);
    for (int j = n - 2; j >= 0; --j) f.apply(j == me ? own : Data(EntryFor(st, j, e, bytes), bytes), out, count);
  }
  Done(st, me)->store(e + 1, std::memory_order_release);
  if (ReadsAhead(st, bytes))
    for (int j = 0; j < n; ++j)
      if (j != me) PrefetchHeads(st, j, e);
  Bump(g_eager);
  return true;
}

}  // namespace shmcoll_accel
