// The collectives over the segment, in rounds.  Each rank owns one slot of
// CommState::slot bytes in two halves, used by rounds of alternate parity
// (sequence numbers run on across calls); round s is:
//   1. write my part of this round into my half, then post the round;
//   2. wait until every rank has posted it, and copy my parts out of theirs;
//   3. mark the round read.
// One wait over all ranks per round.  My half for round s is free without a
// wait of its own: every rank marks round s - 2 read before it posts s - 1,
// which step 2 of the round before saw.
// Round 0 also carries each rank's verdict (take or decline) and the number
// of rounds it needs; every rank reads all of them before writing anything
// into a receive buffer, so either all take the call or all pass it to the
// host, and all run the largest number of rounds.  Blocks longer than a
// round's share of the half-slot move in pieces, one per round.
//   alltoall(v): a half holds n pieces of slot/2/n bytes, piece j for rank j;
//   allgather(v), bcast: a half holds one piece of my block, for everyone.
// Per round each rank writes at most one half and reads its parts of the
// others' halves: (n-1) * block bytes in and out per rank in all, each byte
// copied twice (into the segment, out of it).  Single copy (CommState::cma;
// alltoall(v,w), allgather(v) and bcast blocks of at least
// SHMCOLL_ACCEL_CMA_MIN bytes, each block by itself): the block's header
// instead of its data in round 0, read out of our mapping of the sender's
// shared malloc heap where the block lies in it, else with process_vm_readv,
// each byte copied once; at least two rounds (see Alltoall).  Where
// process_vm_readv is slow (CommState::cma_slow), a sender with a single-copy
// block of at most PushMax bytes outside its heap sends those blocks
// through the pieces instead and says so in round 0 (PostLine::pushed).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "accel.h"
#include "os/shared_heap.h"
#include "rounds.h"

namespace shmcoll_accel {

namespace {

// Ends the job: a read of a peer's memory failed after every process had
// agreed to take the call, so the receive buffer cannot be completed.
[[noreturn]] void CmaFailed(const char* fn, int peer, MPI_Comm comm) {
  std::fprintf(stderr, "shmcoll-accel: %s: reading rank %d's block with process_vm_readv failed: %s\n", fn, peer,
               std::strerror(errno));
  EndJob(comm);
}

// Ends the job: a process that read the single-copy header of rank `peer`
// found something else there, so that rank took another path, which a
// correct program's block sizes (the same on every process) never make it do.
[[noreturn]] void CmaMismatch(const char* fn, int peer, MPI_Comm comm) {
  std::fprintf(stderr,
               "shmcoll-accel: %s: rank %d's call does not match this one (block sizes differ between the "
               "processes: their counts or datatypes disagree)\n",
               fn, peer);
  EndJob(comm);
}

// A single-copy header, where a block's bytes would go in round 0 (the
// block's piece of the sender's half, at least a line): a tag naming the path
// and the round, the block's address and bytes in the sender's memory, then,
// when the block lies in the part of the sender's shared malloc heap that
// peers may map (os/shared_heap.h), where that heap is (its base, descriptor,
// inode and reserve), else zeros.
constexpr uint64_t kCmaMagic = 0x53484d434f4c4c31ull;
uint64_t CmaTag(const CommState& st) { return kCmaMagic ^ st.seq; }
enum : size_t { kTag, kAddr, kBytes, kHeapBase, kHeapFd, kHeapIno, kHeapReserve, kHeaderWords };
static_assert(kHeaderWords * sizeof(uint64_t) <= kLine);

// Our view of `len` bytes at `addr` in rank `peer`'s heap, as its header `h`
// describes it; nullptr when the block is not in it or the heap cannot be
// mapped (then never tried again for that peer).
const char* HeapView(CommState& st, const uint64_t* h, int peer, size_t len) {
  if (!h[kHeapBase]) return nullptr;
  const size_t n = static_cast<size_t>(st.n), j = static_cast<size_t>(peer);
  if (st.heaps.size() != n) st.heaps.resize(n), st.heap_refused.assign(n, 0);
  if (st.heap_refused[j]) return nullptr;
  const shmcoll::os::PeerHeapId id{static_cast<uint32_t>(st.pids[j]), static_cast<int32_t>(h[kHeapFd]), h[kHeapIno],
                                   h[kHeapReserve]};
  const char* v = st.heaps[j].view(id, h[kAddr] - h[kHeapBase], len);
  if (!v) st.heap_refused[j] = 1;
  return v;
}

}  // namespace

void CmaOffer(const CommState& st, char* at, const char* ptr, size_t bytes) {
  uint64_t h[kHeaderWords] = {CmaTag(st), reinterpret_cast<uintptr_t>(ptr), bytes};
  shmcoll::os::SharedHeap& heap = shmcoll::os::processHeap();
  heap.poll();  // (a fork's frozen pages go back once its children are gone)
  if (bytes && heap.sharedRange(ptr, bytes)) {
    h[kHeapBase] = reinterpret_cast<uintptr_t>(heap.base());
    h[kHeapFd] = static_cast<uint64_t>(heap.fd());
    h[kHeapIno] = heap.inode();
    h[kHeapReserve] = heap.reserve();
  }
  std::memcpy(at, h, sizeof h);
}
// Reads the block rank `peer` offered at `at` into dst (at most `want`
// bytes): out of our mapping of its heap where the block lies there, else with
// process_vm_readv; ends the job when the header is not there or the read fails.
void CmaPull(CommState& st, const char* at, int peer, char* dst, size_t want, const char* fn, MPI_Comm comm) {
  uint64_t h[kHeaderWords];
  std::memcpy(h, at, sizeof h);
  if (h[kTag] != CmaTag(st)) CmaMismatch(fn, peer, comm);
  const size_t len = std::min<size_t>(want, h[kBytes]);
  if (!len) return;
  if (const char* v = HeapView(st, h, peer, len)) {
    std::memcpy(dst, v, len);
    Bump(g_heap_reads);
    return;
  }
  if (!CmaRead(st.pids[static_cast<size_t>(peer)], dst, reinterpret_cast<const char*>(static_cast<uintptr_t>(h[kAddr])),
               len))
    CmaFailed(fn, peer, comm);
}

// A block of this many bytes moves by single copy (CommState::cma): the
// sender and the receiver of a block both know its bytes (the same at both
// ends in a correct program), so they make the same choice.
bool Single(const CommState& st, size_t bytes) { return st.cma && bytes && bytes >= st.cma_min; }

bool PushPrivate(const CommState& st, const Side* sides, size_t count, size_t skip, size_t bound) {
  if (!st.cma_slow) return false;
  shmcoll::os::SharedHeap& heap = shmcoll::os::processHeap();
  heap.poll();  // (as in CmaOffer)
  for (size_t k = 0; k < count; ++k)
    if (k != skip && sides[k].bytes && sides[k].bytes >= bound && sides[k].bytes <= PushMax(st) &&
        !heap.sharedRange(sides[k].ptr, sides[k].bytes))
      return true;
  return false;
}

// Alltoall(v,w): a half holds n pieces of `chunk` bytes, piece j for rank j.
// A block that moves by single copy has, instead of its data, its header in
// piece j of round 0; the receiver reads it in its drain of round 0, out of
// the sender's own buffer, and a round more keeps every sender in the call
// until all have read (each byte copied once, from memory the sender wrote
// before the call instead of lines the other core has just written into the
// segment).  The other blocks go through the pieces, a piece per round.
bool Alltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm,
              bool single_copy) {
  if (st.nodes) return HierAlltoall(st, send, recv, ok, comm);  // several nodes
  const int n = st.n, me = st.me;
  ok = ok && PackSends(send, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const size_t chunk = st.half() / static_cast<size_t>(n) / kLine * kLine;  // (at least kLine: SlotBytes)
  const size_t bound = single_copy && st.cma ? std::max<size_t>(st.cma_min, 1) : SIZE_MAX;
  auto single = [bound](size_t bytes) { return bytes >= bound; };
  uint64_t need = 1;
  bool any_single = false;
  if (ok)
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      for (const Side* s : {&send[j], &recv[j]}) {
        if (single(s->bytes))
          any_single = true;
        else
          need = std::max(need, RoundsFor(s->bytes, chunk));
      }
    }
  // process_vm_readv slow here and a block outside my heap: mine go through the pieces
  const bool push = ok && any_single && PushPrivate(st, send.data(), send.size(), static_cast<size_t>(me), bound);
  auto pushes = [&](size_t bytes) { return push && single(bytes) && bytes <= PushMax(st); };
  for (int j = 0; j < n && push; ++j)
    if (j != me && pushes(send[j].bytes)) need = std::max(need, RoundsFor(send[j].bytes, chunk));
  if (any_single) need = std::max<uint64_t>(need, 2);
  st.push_mine = push;
  if (push) Bump(g_pushed);
  bool did_single = false;
  auto tiny = [n](size_t bytes) { return n == 2 && bytes <= kTiny; };  // (in the post lines: Tiny)
  auto fill = [&](uint64_t r) {
    char* out = st.slot_of(me);
    for (int j = 0; j < n; ++j) {
      if (j == me) continue;
      char* at = out + chunk * static_cast<size_t>(j);
      if (single(send[j].bytes) && !pushes(send[j].bytes)) {
        did_single = true;
        if (r == 0) CmaOffer(st, at, send[j].ptr, send[j].bytes);
        continue;
      }
      size_t off, len = Piece(send[j].bytes, r, chunk, &off);
      if (len) std::memcpy(tiny(send[j].bytes) ? st.tiny_of(me) : at, send[j].ptr + off, len);
    }
  };
  auto drain = [&](uint64_t r) {
    if (r == 0 && recv[me].bytes && recv[me].ptr != send[me].ptr)
      std::memcpy(recv[me].ptr, send[me].ptr, std::min(recv[me].bytes, send[me].bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      const char* at = st.slot_of(j) + chunk * static_cast<size_t>(me);
      if (single(recv[j].bytes) && !Pushed(st, j, recv[j].bytes)) {
        did_single = true;
        if (r == 0) CmaPull(st, at, j, recv[j].ptr, recv[j].bytes, "MPI_Alltoall(v,w)", comm);
        continue;
      }
      size_t off, len = Piece(recv[j].bytes, r, chunk, &off);
      if (len) std::memcpy(recv[j].ptr + off, tiny(recv[j].bytes) ? st.tiny_of(j) : at, len);
    }
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  if (did_single) Bump(g_single);
  return true;
}

bool Allgather(CommState& st, Side& send, std::vector<Side>& recv, bool in_place, bool ok, MPI_Comm comm,
               bool single_copy) {
  if (st.nodes) return HierAllgather(st, send, recv, ok, comm);  // several nodes
  const int n = st.n, me = st.me;
  std::vector<Side>& one = st.one_side;
  one.assign(1, send);
  ok = ok && PackSends(one, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const Side& src = one[0];
  // a half holds a piece of my block for everyone; a block that moves by single copy has its header
  // there in round 0 instead (as in Alltoall)
  const size_t chunk = st.half();
  const size_t bound = single_copy && st.cma ? std::max<size_t>(st.cma_min, 1) : SIZE_MAX;
  auto single = [bound](size_t bytes) { return bytes >= bound; };
  uint64_t need = 1;
  bool any_single = false;
  if (ok) {
    for (int j = 0; j < n; ++j) {
      const size_t bytes = j == me ? src.bytes : recv[j].bytes;
      if (single(bytes))
        any_single = true;
      else
        need = std::max(need, RoundsFor(bytes, chunk));
    }
  }
  // process_vm_readv slow here and my block outside my heap: it goes through the pieces
  const bool push = ok && single(src.bytes) && PushPrivate(st, &src, 1, 1, bound);  // (at most PushMax)
  if (push) need = std::max(need, RoundsFor(src.bytes, chunk));
  if (any_single) need = std::max<uint64_t>(need, 2);
  st.push_mine = push;
  if (push) Bump(g_pushed);
  bool did_single = false;
  auto fill = [&](uint64_t r) {
    if (!push && single(src.bytes)) {
      did_single = true;
      if (r == 0) CmaOffer(st, st.slot_of(me), src.ptr, src.bytes);
      return;
    }
    size_t off, len = Piece(src.bytes, r, chunk, &off);
    // (a block of at most kTiny bytes goes in my post line: Tiny)
    if (len) std::memcpy(src.bytes <= kTiny ? st.tiny_of(me) : st.slot_of(me), src.ptr + off, len);
  };
  auto drain = [&](uint64_t r) {
    // In place, my block already is where it belongs (and packed, it is
    // unpacked onto itself below): copy it only from a separate send buffer.
    if (r == 0 && recv[me].bytes && recv[me].ptr != src.ptr && !(in_place && !recv[me].packed))
      std::memcpy(recv[me].ptr, src.ptr, std::min(recv[me].bytes, src.bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      if (single(recv[j].bytes) && !Pushed(st, j, recv[j].bytes)) {
        did_single = true;
        if (r == 0) CmaPull(st, st.slot_of(j), j, recv[j].ptr, recv[j].bytes, "MPI_Allgather(v)", comm);
        continue;
      }
      size_t off, len = Piece(recv[j].bytes, r, chunk, &off);
      if (len) std::memcpy(recv[j].ptr + off, recv[j].bytes <= kTiny ? st.tiny_of(j) : st.slot_of(j), len);
    }
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  if (did_single) Bump(g_single);
  return true;
}

bool Bcast(CommState& st, Side& side, int root, bool ok, MPI_Comm comm) {
  if (st.nodes) return HierBcast(st, side, root, ok);  // several nodes
  std::vector<Side>& one = st.one_side;
  one.assign(1, side);
  const bool am_root = st.me == root;
  ok = ok && (am_root ? PackSends(one, st.stmp, comm) : LayoutRecvs(one, st.rtmp));
  const Side& s = one[0];
  const size_t chunk = st.half();
  // Single copy (as in Alltoall): the block's size is the same on every process of a correct program.
  // (Where process_vm_readv is slow and the root's block lies outside its heap, the root sends it
  // through the pieces instead, and says so in round 0.)
  if (Single(st, side.bytes) && side.bytes >= st.bcast_cma_min) {
    const bool push = ok && am_root && PushPrivate(st, &s, 1, 1, 1);
    st.push_mine = push;
    if (push) Bump(g_pushed);
    bool pushed = push;
    auto fill = [&](uint64_t r) {
      if (!am_root) return;
      size_t off, len = Piece(s.bytes, r, chunk, &off);
      if (push && len) std::memcpy(st.slot_of(root), s.ptr + off, len);
      if (!push && r == 0) CmaOffer(st, st.slot_of(root), s.ptr, s.bytes);
    };
    auto drain = [&](uint64_t r) {
      if (am_root) return;
      pushed = Pushed(st, root, s.bytes);
      size_t off, len = Piece(s.bytes, r, chunk, &off);
      if (pushed && len) std::memcpy(s.ptr + off, st.slot_of(root), len);
      if (!pushed && r == 0) CmaPull(st, st.slot_of(root), root, s.ptr, s.bytes, "MPI_Bcast", comm);
    };
    const uint64_t need = push ? std::max<uint64_t>(2, RoundsFor(s.bytes, chunk)) : 2;
    if (!RunRounds(st, need, ok, fill, drain)) return false;
    if (!am_root) UnpackRecvs(one, st.rtmp, comm);
    if (!pushed) Bump(g_single);
    return true;
  }
  const uint64_t need = ok ? std::max<uint64_t>(1, RoundsFor(s.bytes, chunk)) : 1;
  auto fill = [&](uint64_t r) {
    size_t off, len = Piece(s.bytes, r, chunk, &off);
    if (am_root && len) std::memcpy(st.slot_of(root), s.ptr + off, len);
  };
  auto drain = [&](uint64_t r) {
    size_t off, len = Piece(s.bytes, r, chunk, &off);
    if (!am_root && len) std::memcpy(s.ptr + off, st.slot_of(root), len);
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  if (!am_root) UnpackRecvs(one, st.rtmp, comm);
  return true;
}

// Right after a bcast (or in a pair a reduce), with nothing run here since
// (CommState::lead), the round is led by the rank whose data the others wait
// for when the same call follows the barrier, as in a loop: it leaves first.
// Otherwise the last rank to arrive leaves first, which in such a loop is a
// bcast's reader (a reduce's root), and it then waits in the call for the
// rank that left after it (src/coll/barrier_dissemination.cc, "led", does
// the same in shmcoll's own jobs; docs/PERFORMANCE.md).  Where the processes
// outnumber the cores, or past 8, every rank still waits for every other.
bool Barrier(CommState& st) {
  if (st.nodes) return HierBarrier(st);  // several nodes
  const bool led = st.lead >= 0 && st.lead < st.n && st.lead_seq == st.seq && st.lead_eager == st.eager_calls &&
                   !st.crowded && st.n <= 8;
  return RunRounds(
      st, 1, true, [](uint64_t) {}, [](uint64_t) {}, led ? st.lead : -1);
}

bool Rounds(CommState& st, uint64_t rounds, bool ok, const std::function<void(uint64_t)>& fill,
            const std::function<void(uint64_t)>& drain) {
  return RunRounds(st, rounds, ok, fill, drain);
}

}  // namespace shmcoll_accel
