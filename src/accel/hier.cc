// Hierarchical allgather(v), bcast and barrier, for a communicator over
// several nodes (nodes.h): a node stage in the node's segment, a leaders'
// stage over the host, a node stage again.  Chosen for every communicator
// whose processes lie on more than one (real or pretend) node; on one node
// engine.cc's rounds run alone.  L nodes of m processes each, b bytes per block.
//
// Allgather(v): every block's size is known everywhere (the receive counts),
// so every process lays out the same pieces without a round of sizes.  The
// node's slots are one area (as in hier_alltoall.cc): its first part holds
// the node's blocks, the rest every node's.  A block moves in pieces of
// Nodes::gchunk bytes (chosen so that a round's pieces fit any node's area).
// The first round writes piece 0 of my block into my node's part and carries
// the node's verdicts; in it the leader agrees with the others
// (PMPI_Allreduce(MAX) of the verdicts and the most pieces) and sends piece 0
// (PMPI_Allgatherv of MPI_BYTE over the leaders, each node's part in local
// order, into the second part); the next round carries the leaders' verdict
// and every process copies piece 0 of every block out; further pieces take
// two rounds each.  Per node and piece: the host's allgatherv over L leaders
// (with a ring, L - 1 messages out per node, (L - 1) * m * b bytes in and out
// per node for blocks of b bytes: one network message carries a whole node's
// blocks, where the host alone sends every rank's block to every other
// node's ranks, m * m times the messages and m times the bytes per node
// pair); in the node each byte is copied once in (by its sender) and once
// out (by each receiver), in parallel.
// Bcast: a node round agrees within each node, the leaders agree (allreduce),
// the root's node broadcasts in its segment (engine.cc's Bcast from the root),
// its leader broadcasts to the other leaders (PMPI_Bcast of the user's buffer
// and type over the leaders: the host's tree, L - 1 messages of the message's
// size in all), and every other node broadcasts in its segment from its leader.
// When the root leads its node, the leaders' broadcast comes first, so that
// all the nodes broadcast in their segments at once.
// A bcast of at most Nodes::eager bytes goes eagerly (HierEagerBcast, below).
// Barrier: a node round, PMPI_Barrier over the leaders, a node round.
//
// Agreement (see accel.h): no receive buffer is written before every node's
// verdict has reached its leader and the leaders have agreed; the node stage
// that writes receive buffers carries the leaders' verdict in its round 0, so
// every process of the communicator takes the call or every one passes it.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "nodes.h"
#include "rounds.h"

namespace shmcoll_accel {
bool HierAllgather(CommState& st, Side& send, std::vector<Side>& recv, bool ok, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;  // (the segments are unmapped: every process passes)
  CommState& seg = *nd.seg;
  std::vector<Side> one(1, send);
  ok = ok && nd.gchunk > 0 && PackSends(one, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const Side& src = one[0];
  const std::vector<int>& mine = nd.members[static_cast<size_t>(nd.node)];
  const size_t ln = static_cast<size_t>(nd.ln), L = nd.members.size(), c = nd.gchunk;
  const size_t me = static_cast<size_t>(nd.lrank);
  // every block's size is known everywhere (the receive counts): so are the layouts and the pieces
  uint64_t pieces = 0;
  for (size_t j = 0; j < recv.size() && ok; ++j) pieces = std::max(pieces, RoundsFor(recv[j].bytes, c));
  char *outgoing = seg.area(), *incoming = seg.area() + ln * c;
  // piece k of my block into my node's part of the outgoing half (its blocks in local order)
  auto write = [&](uint64_t k) {
    size_t pos = 0, off, len;
    for (size_t l = 0; l < me; ++l) pos += Piece(recv[static_cast<size_t>(mine[l])].bytes, k, c, &off);
    len = Piece(recv[static_cast<size_t>(st.me)].bytes, k, c, &off);
    if (off < src.bytes) std::memcpy(outgoing + pos, src.ptr + off, std::min(len, src.bytes - off));
  };
  // piece k (of `chunk` bytes; whole blocks with SIZE_MAX) of every block out of `from`, node by
  // node, each node's blocks in local order
  auto read = [&](const char* from, uint64_t k, size_t chunk) {
    for (const auto& members : nd.members)
      for (int j : members) {
        size_t off, len = Piece(recv[static_cast<size_t>(j)].bytes, k, chunk, &off);
        if (len) std::memcpy(recv[static_cast<size_t>(j)].ptr + off, from, len), from += len;
      }
  };
  // the leader: piece k of every node's part from `out` into `in`, where the same walk reads it
  auto exchange = [&](const char* out, char* in, uint64_t k, size_t chunk) {
    nd.rcounts.assign(L, 0), nd.rdispls.assign(L, 0);
    for (size_t b = 0, at = 0; b < L; at += static_cast<size_t>(nd.rcounts[b]), ++b) {
      size_t part = 0, off;
      for (int j : nd.members[b]) part += Piece(recv[static_cast<size_t>(j)].bytes, k, chunk, &off);
      nd.rcounts[b] = static_cast<int>(part), nd.rdispls[b] = static_cast<int>(at);
    }
    // (after the agreement: an error here has normally ended the job through the host's handler)
    PMPI_Allgatherv(out, nd.rcounts[static_cast<size_t>(nd.node)], MPI_BYTE, in, nd.rcounts.data(), nd.rdispls.data(),
                    MPI_BYTE, nd.leaders);
  };
  bool agreed = false;
  auto agree = [&](bool node_ok) { agreed = LeadersAgreeMax(nd, node_ok, &pieces); };
  // Small: every block at once in the half-slots (parity-safe, so no wait for the area): my block
  // into my half; the leader agrees, gathers its node's blocks and receives every node's into its
  // half of the next round, which carries the leaders' verdict and which every process reads.
  size_t total = 0, part = 0;  // every block; my node's
  for (const Side& r : recv) total += r.bytes;
  for (int j : mine) part += recv[static_cast<size_t>(j)].bytes;
  if (ok && total <= nd.least_half) {  // (the same choice on every node)
    ok = !nd.leader() || Stage(nd.sbuf, part);
    const bool node_small = Rounds(
        seg, 1, ok,
        [&](uint64_t) {
          if (src.bytes) std::memcpy(seg.slot_of(seg.me), src.ptr, std::min(src.bytes, recv[st.me].bytes));
        },
        [&](uint64_t) {
          if (!nd.leader()) return;
          agree(true);
          if (!agreed || !total) return;
          for (size_t l = 0, at = 0; l < ln; ++l) {
            const size_t k = recv[static_cast<size_t>(mine[l])].bytes;
            std::memcpy(nd.sbuf.data() + at, seg.slot_of(static_cast<int>(l)), k), at += k;
          }
          exchange(nd.sbuf.data(), seg.half_of(0, seg.seq + 1), 0, SIZE_MAX);  // into my half of the next round
        });
    if (!node_small) {
      if (nd.leader()) agree(false);
      return false;
    }
    const bool taken = Rounds(
        seg, 1, nd.leader() ? agreed : true, [](uint64_t) {},
        [&](uint64_t) { read(seg.slot_of(0), 0, SIZE_MAX); });  // the leader's half of this round
    if (!taken) return false;
    UnpackRecvs(recv, st.rtmp, comm);
    Bump(g_across);
    return true;
  }
  // 1. one round: piece 0 in; the node's verdicts; the leader agrees and sends piece 0
  const bool node_ok = Rounds(
      seg, 1, ok,
      [&](uint64_t) {
        WaitConsumed(seg, seg.seq - 1);  // everyone has read the rounds before (the area is their half-slots too)
        write(0);
      },
      [&](uint64_t) {
        if (!nd.leader()) return;
        agree(true);
        if (agreed && pieces) exchange(outgoing, incoming, 0, c);
      });
  if (!node_ok) {
    if (nd.leader()) agree(false);  // (the other leaders wait for this node's verdict)
    seg.area_used = true;
    return false;
  }
  // 2. round 0 carries the leaders' verdict and reads piece 0; then per piece k >= 1 a round
  // writing it (the leader sending it) and one reading it
  const bool taken = Rounds(
      seg, std::max<uint64_t>(1, 2 * pieces - (pieces > 0)), nd.leader() ? agreed : true,
      [&](uint64_t r) {
        if (r % 2) write((r + 1) / 2);
      },
      [&](uint64_t r) {
        if (r % 2 == 0)
          read(incoming, r / 2, c);
        else if (nd.leader())
          exchange(outgoing, incoming, (r + 1) / 2, c);
      });
  seg.area_used = true;  // the next rounds on the segment first wait until everyone has read this one
  if (!taken) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  Bump(g_across);
  return true;
}

bool HierBcast(CommState& st, Side& side, int root, bool ok) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;
  const bool node_ok = Rounds(
      *nd.seg, 1, ok, [](uint64_t) {}, [](uint64_t) {});
  bool all = nd.leader() ? LeadersAgree(nd, node_ok) : ok;
  const int rnode = nd.node_of[static_cast<size_t>(root)];
  auto leaders_bcast = [&] {
    if (nd.leader() && all)
      all = PMPI_Bcast(const_cast<void*>(side.buf), side.count, side.type, rnode, nd.leaders) == MPI_SUCCESS;
  };
  // Each node broadcasts from its leader, the root's from the root.  The leaders' bcast comes
  // first wherever the leader has the block by then: in every node but a root's node led by
  // another process, so that the nodes broadcast in their segments at the same time.
  const int from = nd.node == rnode ? nd.local_of[static_cast<size_t>(root)] : 0;
  if (from == 0) leaders_bcast();
  const bool taken = Bcast(*nd.seg, side, from, all, nd.node_comm);
  if (from != 0) leaders_bcast();
  if (taken) Bump(g_across);
  return taken;
}

// Eager across the nodes (at most Nodes::eager bytes): no agreement, as on
// one node (eager.cc).  The root's node broadcasts eagerly from the root; its
// leader sends the root's verdict and the block to the other leaders in one
// host bcast (8 + b bytes, L - 1 messages in the host's tree); each of them
// broadcasts eagerly in its node.  A root that declines (no memory to pack)
// stamps so, its leader sends the verdict, and every process passes the
// call to the host.  A process whose arguments are invalid takes the rounds
// (HierBcast) after HierEagerCheck, which ends the job when its node's
// broadcaster went eager; every node has two processes or more (Nodes::eager),
// so a leader that takes the rounds is seen by a reader of its node.
bool HierEagerBcast(CommState& st, const Side& side, int root, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  CommState& seg = *nd.seg;
  const int rnode = nd.node_of[static_cast<size_t>(root)];
  const size_t bytes = side.bytes;
  // the leaders' bcast of the verdict and the block, through a staging buffer of 8 + b bytes
  auto stage = [&](std::vector<char>& buf) {
    if (!Stage(buf, sizeof(uint64_t) + bytes)) {
      std::fprintf(stderr, "shmcoll-accel: MPI_Bcast: no memory for a block of %zu bytes\n", bytes);
      EndJob(comm);
    }
  };
  auto host = [&](std::vector<char>& buf) {
    if (PMPI_Bcast(buf.data(), static_cast<int>(sizeof(uint64_t) + bytes), MPI_BYTE, rnode, nd.leaders) !=
        MPI_SUCCESS) {
      std::fprintf(stderr, "shmcoll-accel: MPI_Bcast: the node leaders' broadcast of %zu bytes failed\n", bytes);
      EndJob(comm);
    }
  };
  bool taken;
  if (nd.node == rnode) {
    taken = EagerBcast(seg, side, nd.local_of[static_cast<size_t>(root)], true, comm);
    if (nd.leader()) {
      std::vector<Side>& one = st.one_side;
      one.assign(1, side);
      // (the root's block, or what this leader read of it, packed again from its own buffer)
      const bool ok = taken && PackSends(one, st.stmp, comm);
      stage(nd.sbuf);
      const uint64_t verdict = ok;
      std::memcpy(nd.sbuf.data(), &verdict, sizeof verdict);
      if (ok && bytes) std::memcpy(nd.sbuf.data() + sizeof verdict, one[0].ptr, bytes);
      host(nd.sbuf);
      if (!ok && taken) {  // (packing failed after the node took the call: it cannot be passed on now)
        std::fprintf(stderr, "shmcoll-accel: MPI_Bcast: no memory to pack a block of %zu bytes\n", bytes);
        EndJob(comm);
      }
    }
  } else {
    bool ok = true;
    if (nd.leader()) {
      stage(nd.rbuf);
      host(nd.rbuf);
      uint64_t verdict = 0;
      std::memcpy(&verdict, nd.rbuf.data(), sizeof verdict);
      ok = verdict != 0;
      if (ok) {
        std::vector<Side>& one = st.one_side;
        one.assign(1, side);
        if (!LayoutRecvs(one, st.rtmp)) {
          std::fprintf(stderr, "shmcoll-accel: MPI_Bcast: no memory for a block of %zu bytes\n", bytes);
          EndJob(comm);
        }
        if (bytes) std::memcpy(one[0].ptr, nd.rbuf.data() + sizeof verdict, bytes);
        UnpackRecvs(one, st.rtmp, comm);
      }
    }
    taken = EagerBcast(seg, side, 0, ok, comm);  // (this node's leader broadcasts)
  }
  if (taken) Bump(g_across);
  return taken;
}

void HierEagerCheck(CommState& st, int root, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  const int r0 = nd.node == nd.node_of[static_cast<size_t>(root)] ? nd.local_of[static_cast<size_t>(root)] : 0;
  if (nd.lrank != r0) EagerCheck(*nd.seg, r0, "MPI_Bcast", comm);
}

bool HierBarrier(CommState& st) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;
  Barrier(*nd.seg);
  if (nd.leader()) PMPI_Barrier(nd.leaders);
  Barrier(*nd.seg);
  Bump(g_across);
  return true;
}

}  // namespace shmcoll_accel
