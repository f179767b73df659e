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
// copied twice (into the segment, out of it).  Single copy (CommState::cma,
// MPI_Alltoall, MPI_Allgather and MPI_Bcast blocks of at least SHMCOLL_ACCEL_CMA_MIN):
// two rounds whatever the size, (n-1) reads of a block per rank with
// process_vm_readv, each byte copied once (AlltoallCma).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "accel.h"
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

// A single-copy header in rank r's half of the round: a tag naming the path
// and the round, then (address, bytes) of each block the rank offers.
constexpr uint64_t kCmaMagic = 0x53484d434f4c4c31ull;
inline uint64_t CmaTag(const CommState& st) { return kCmaMagic ^ st.seq; }
uint64_t* CmaHeader(CommState& st) {
  auto* h = reinterpret_cast<uint64_t*>(st.slot_of(st.me));
  h[0] = CmaTag(st);
  return h + 1;
}
inline void CmaOffer(uint64_t* blocks, size_t k, const char* ptr, size_t bytes) {
  blocks[2 * k] = reinterpret_cast<uintptr_t>(ptr), blocks[2 * k + 1] = bytes;
}
// Reads block k of rank `peer`'s header into dst (at most `want` bytes),
// ending the job when the header is not there or the read fails.
void CmaPull(const CommState& st, int peer, size_t k, char* dst, size_t want, const char* fn, MPI_Comm comm) {
  const auto* h = reinterpret_cast<const uint64_t*>(st.slot_of(peer));
  if (h[0] != CmaTag(st)) CmaMismatch(fn, peer, comm);
  const size_t len = std::min<size_t>(want, h[2 + 2 * k]);
  if (len && !CmaRead(st.pids[static_cast<size_t>(peer)], dst,
                      reinterpret_cast<const char*>(static_cast<uintptr_t>(h[1 + 2 * k])), len))
    CmaFailed(fn, peer, comm);
}

// Single copy (CommState::cma): round 0 publishes where my block for each
// rank lies (a tag, then two words per rank in my half); after it every rank reads its
// blocks straight out of their senders' buffers, and round 1 keeps every
// sender in the call until all have read.  Each byte is copied once, from a
// buffer the sender wrote before the call instead of lines the other core
// has just written into the segment.
bool AlltoallCma(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm) {
  const int n = st.n, me = st.me;
  auto fill = [&](uint64_t r) {
    if (r) return;
    uint64_t* blocks = CmaHeader(st);
    for (int j = 0; j < n; ++j) CmaOffer(blocks, static_cast<size_t>(j), send[j].ptr, send[j].bytes);
  };
  auto drain = [&](uint64_t r) {
    if (r) return;
    if (recv[me].bytes && recv[me].ptr != send[me].ptr)
      std::memcpy(recv[me].ptr, send[me].ptr, std::min(recv[me].bytes, send[me].bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      CmaPull(st, j, static_cast<size_t>(me), recv[j].ptr, recv[j].bytes, "MPI_Alltoall", comm);
    }
  };
  if (!RunRounds(st, 2, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  g_single.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace

bool Alltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm,
              size_t uniform) {
  if (st.nodes) return HierAlltoall(st, send, recv, ok, comm);  // several nodes
  const int n = st.n, me = st.me;
  ok = ok && PackSends(send, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  // (the same choice on every process: st.cma was agreed, `uniform` is the call's)
  if (st.cma && uniform && uniform >= CmaMin() && st.half() >= 8 + 16 * static_cast<size_t>(n))
    return AlltoallCma(st, send, recv, ok, comm);
  const size_t chunk = st.half() / static_cast<size_t>(n) / kLine * kLine;
  uint64_t need = 1;
  if (ok)
    for (int j = 0; j < n; ++j)
      if (j != me) need = std::max(need, RoundsFor(std::max(send[j].bytes, recv[j].bytes), chunk));
  auto fill = [&](uint64_t r) {
    char* out = st.slot_of(me);
    for (int j = 0; j < n; ++j) {
      size_t off, len = Piece(send[j].bytes, r, chunk, &off);
      if (j != me && len) std::memcpy(out + chunk * static_cast<size_t>(j), send[j].ptr + off, len);
    }
  };
  auto drain = [&](uint64_t r) {
    if (r == 0 && recv[me].bytes && recv[me].ptr != send[me].ptr)
      std::memcpy(recv[me].ptr, send[me].ptr, std::min(recv[me].bytes, send[me].bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      size_t off, len = Piece(recv[j].bytes, r, chunk, &off);
      if (len) std::memcpy(recv[j].ptr + off, st.slot_of(j) + chunk * static_cast<size_t>(me), len);
    }
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  return true;
}

bool Allgather(CommState& st, Side& send, std::vector<Side>& recv, bool in_place, bool ok, MPI_Comm comm,
               size_t uniform) {
  if (st.nodes) return HierAllgather(st, send, recv, ok, comm);  // several nodes
  const int n = st.n, me = st.me;
  std::vector<Side>& one = st.one_side;
  one.assign(1, send);
  ok = ok && PackSends(one, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const Side& src = one[0];
  if (st.cma && uniform && uniform >= CmaMin() && st.half() >= 24) {
    // Single copy, as AlltoallCma: round 0 publishes where my block lies, then every rank reads
    // every other's; round 1 keeps each in the call until all have read.
    auto fill = [&](uint64_t r) {
      if (r) return;
      CmaOffer(CmaHeader(st), 0, src.ptr, src.bytes);
    };
    auto drain = [&](uint64_t r) {
      if (r) return;
      if (recv[me].bytes && recv[me].ptr != src.ptr && !(in_place && !recv[me].packed))
        std::memcpy(recv[me].ptr, src.ptr, std::min(recv[me].bytes, src.bytes));
      for (int k = 1; k < n; ++k) {
        const int j = (me + k) % n;
        CmaPull(st, j, 0, recv[j].ptr, recv[j].bytes, "MPI_Allgather", comm);
      }
    };
    if (!RunRounds(st, 2, ok, fill, drain)) return false;
    UnpackRecvs(recv, st.rtmp, comm);
    g_single.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const size_t chunk = st.half();
  uint64_t need = 1;
  if (ok) {
    need = std::max(need, RoundsFor(src.bytes, chunk));
    for (int j = 0; j < n; ++j) need = std::max(need, RoundsFor(recv[j].bytes, chunk));
  }
  auto fill = [&](uint64_t r) {
    size_t off, len = Piece(src.bytes, r, chunk, &off);
    if (len) std::memcpy(st.slot_of(me), src.ptr + off, len);
  };
  auto drain = [&](uint64_t r) {
    // In place, my block already is where it belongs (and packed, it is
    // unpacked onto itself below): copy it only from a separate send buffer.
    if (r == 0 && recv[me].bytes && recv[me].ptr != src.ptr && !(in_place && !recv[me].packed))
      std::memcpy(recv[me].ptr, src.ptr, std::min(recv[me].bytes, src.bytes));
    for (int k = 1; k < n; ++k) {
      const int j = (me + k) % n;
      size_t off, len = Piece(recv[j].bytes, r, chunk, &off);
      if (len) std::memcpy(recv[j].ptr + off, st.slot_of(j), len);
    }
  };
  if (!RunRounds(st, need, ok, fill, drain)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  return true;
}

bool Bcast(CommState& st, Side& side, int root, bool ok, MPI_Comm comm) {
  if (st.nodes) return HierBcast(st, side, root, ok);  // several nodes
  std::vector<Side>& one = st.one_side;
  one.assign(1, side);
  const bool am_root = st.me == root;
  ok = ok && (am_root ? PackSends(one, st.stmp, comm) : LayoutRecvs(one, st.rtmp));
  const Side& s = one[0];
  // Single copy (as AlltoallCma): the block's size is the same on every process of a correct program.
  if (st.cma && side.bytes && side.bytes >= CmaMin() && st.half() >= 24) {
    auto fill = [&](uint64_t r) {
      if (r || !am_root) return;
      CmaOffer(CmaHeader(st), 0, s.ptr, s.bytes);
    };
    auto drain = [&](uint64_t r) {
      if (r || am_root) return;
      CmaPull(st, root, 0, s.ptr, s.bytes, "MPI_Bcast", comm);
    };
    if (!RunRounds(st, 2, ok, fill, drain)) return false;
    if (!am_root) UnpackRecvs(one, st.rtmp, comm);
    g_single.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  const size_t chunk = st.half();
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

bool Barrier(CommState& st) {
  if (st.nodes) return HierBarrier(st);  // several nodes
  return RunRounds(
      st, 1, true, [](uint64_t) {}, [](uint64_t) {});
}

bool Rounds(CommState& st, uint64_t rounds, bool ok, const std::function<void(uint64_t)>& fill,
            const std::function<void(uint64_t)>& drain) {
  return RunRounds(st, rounds, ok, fill, drain);
}

}  // namespace shmcoll_accel
