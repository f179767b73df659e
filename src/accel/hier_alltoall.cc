// Hierarchical alltoall(v) (and alltoallw, whose blocks come described the
// same way), for a communicator over several nodes (nodes.h): the blocks
// bound for each other node aggregated in the node's segment, one message per
// pair of nodes per round between the leaders, every process copying its own
// blocks in and out.  Chosen for every communicator whose processes lie on
// more than one (real or pretend) node; on one node engine.cc's rounds run
// alone.
//
//  A. Sizes (NodeAllgather, in the segment's half-slots): every process of the
//     node learns every other's send and receive sizes (16 bytes per rank of
//     the communicator each), and the node's verdict.
//  B. The leaders agree (one PMPI_Allreduce(MAX) over the leaders: whether a
//     node declines, and the most pieces any node's blocks to or from other
//     nodes need).
//  C. The blocks within the node (mine to myself included): the node's own
//     alltoall over its segment (engine.cc; blocks of at least the node's
//     single-copy bound read straight out of their senders' buffers, as on
//     one node), whose round 0 carries the leaders' verdict to every process
//     -- nothing is written into a receive buffer before it.  Blocks within
//     the node ride along with the sizes in A instead where they all fit the
//     half-slots and none would go single copy (riding along copies a block
//     three times: into the slot, aside, out; single copy once).
//  D. Pieces, two node rounds each.  A block to or from another node moves
//     in pieces of Nodes::chunk bytes (the same on every process; chosen so a
//     round's pieces fit half of any node's slots).  The node's slots are one
//     area: the first half holds the outgoing messages, the second the
//     incoming ones.
//       1. every process writes its pieces straight into the outgoing half,
//          where the message to node b holds, for each process d of b in
//          local order, the pieces of my node's processes to d in local
//          order; the leader then runs one PMPI_Alltoallv of MPI_BYTE over
//          the leaders, from the outgoing half into the incoming one;
//       2. every process copies its pieces out of the incoming half straight
//          into its receive buffer (the message from node b holds, for each
//          of my node's processes in local order, b's processes' pieces to
//          it in local order, which is rank order: sizes from the receivers'
//          counts, which a correct program matches to the senders').
//     The area is written outside the half-slot discipline of the rounds, so
//     the first round waits until every process has read the round before it,
//     and the next rounds on the segment (the next collective's) wait until
//     every process has read the last one (CommState::area_used).
//
//  Direct (blocks of at least SHMCOLL_ACCEL_DIRECT_MIN, 32 KiB by default, to
//  and from every other node): instead of D, every process sends its blocks
//  to the processes of other nodes and receives theirs itself, one host
//  message per pair (PMPI_Isend / PMPI_Irecv on a private duplicate of the
//  communicator, zero-byte blocks included, so that every pair exchanges
//  exactly one message each way), posted before C so that the host moves
//  them while the node's own alltoall runs (its waits let the host
//  progress).  A large block gains nothing from aggregation, whose saving is
//  per message, and costs two copies more: on two pretend nodes of 4
//  processes on 2 cores, 64 KiB blocks took 247 us this way against 370
//  aggregated and 249 for Open MPI alone (docs/PERFORMANCE.md).  Every
//  process asks for it in its sizes (A); a node takes it when all of its
//  processes asked, and the call when every node did (the leaders' agreement,
//  B), which one more node round (V) brings to the other processes.
//
// Cost, L nodes of m processes, b bytes per block: per node and round L - 1
// messages out and L - 1 in over the network (the host alone sends m * m per
// node pair), (L - 1) * m * m * b bytes out and in per node in all, as
// without aggregation: what aggregation saves is the per-message cost
// (latency, headers, matching), by a factor m * m.  In the node a byte bound
// elsewhere is copied once on its way out (into the segment, by its sender)
// and once on its way in (out of the segment, by its receiver), the leader
// only starting the transfer; a byte within the node is copied twice, as on
// one node.  The node rounds: 1 (sizes) + 1 (the node's own alltoall, more
// for large blocks) + 2 per piece.  Direct: m * m * (L - 1) messages out and
// in per node, as the host alone; a byte bound elsewhere moves once, by the
// host; the node rounds: 1 (sizes) + 1 (V) + the node's own alltoall.
#include <algorithm>
#include <climits>
#include <cstring>

#include "nodes.h"
#include "rounds.h"

namespace shmcoll_accel {
namespace {

// Every local process's `len` bytes (`mine`) to every local process: process
// l's at all + l * len.  Round 0 carries the verdicts (false: some process
// declined, and every process returns false).
bool NodeAllgather(Nodes& nd, const char* mine, size_t len, char* all, bool ok) {
  CommState& s = *nd.seg;
  const size_t half = s.half();
  auto fill = [&](uint64_t r) {
    size_t off, k = Piece(len, r, half, &off);
    if (k) std::memcpy(s.slot_of(s.me), mine + off, k);
  };
  auto drain = [&](uint64_t r) {
    size_t off, k = Piece(len, r, half, &off);
    if (k)
      for (int l = 0; l < nd.ln; ++l) std::memcpy(all + static_cast<size_t>(l) * len + off, s.slot_of(l), k);
  };
  return Rounds(s, std::max<uint64_t>(1, RoundsFor(len, half)), ok, fill, drain);
}

// The node's sizes as stage A left them: per local process l, its chunk,
// its flags (kInlined: its blocks within the node follow its sizes in its
// half-slot; kDirect, kCrosses: DirectFlags), then what it sends to
// each rank j, then what it receives from j.
constexpr uint64_t kInlined = 1, kDirect = 2, kCrosses = 4;  // (DirectFlags)
struct Sizes {
  const uint64_t* v;
  size_t un;
  size_t stride() const { return 2 + 2 * un; }
  uint64_t chunk(size_t l) const { return v[l * stride()]; }
  bool inlined(size_t l) const { return (v[l * stride() + 1] & kInlined) != 0; }
  uint64_t flags(size_t l) const { return v[l * stride() + 1]; }
  uint64_t to(size_t l, size_t j) const { return v[l * stride() + 2 + j]; }
  uint64_t from(size_t l, size_t j) const { return v[l * stride() + 2 + un + j]; }
};

// Walks piece k of the outgoing messages (out = true) or the incoming ones,
// node by node, calling at(b, l, j, off, len, pos) for each piece in message
// order: outgoing, local process l's piece to rank j of node b; incoming,
// rank j's (of node b) piece to local process l.  pos runs on from 0 across
// messages; off is the piece's offset in its block.  *bytes gets each node's
// message size when given.
template <class At>
void Walk(const Nodes& nd, const Sizes& sz, uint64_t k, bool out, At at, std::vector<size_t>* bytes = nullptr) {
  const size_t ln = static_cast<size_t>(nd.ln), c = nd.chunk;
  size_t pos = 0;
  for (size_t b = 0; b < nd.members.size(); ++b) {
    const size_t start = pos;
    if (static_cast<int>(b) != nd.node) {
      for (int j : nd.members[b]) {
        if (out) {
          for (size_t l = 0; l < ln; ++l) {
            size_t off, len = Piece(sz.to(l, static_cast<size_t>(j)), k, c, &off);
            if (len) at(b, l, static_cast<size_t>(j), off, len, pos), pos += len;
          }
        }
      }
      if (!out)
        for (size_t l = 0; l < ln; ++l)
          for (int j : nd.members[b]) {
            size_t off, len = Piece(sz.from(l, static_cast<size_t>(j)), k, c, &off);
            if (len) at(b, l, static_cast<size_t>(j), off, len, pos), pos += len;
          }
    }
    if (bytes) (*bytes)[b] = pos - start;
  }
}

// SHMCOLL_ACCEL_DIRECT_MIN: bytes (k, m suffixes; 0: never).
size_t DirectMin() {
  static const size_t v = EnvBytes("SHMCOLL_ACCEL_DIRECT_MIN", 32 * 1024);
  return v;
}

// What this process says of the direct path: kDirect when every block it
// sends to or receives from another node is empty or of at least DirectMin()
// bytes, and fits one host message; kCrosses when some such block is not
// empty.  (A node asks for the path when all of its processes say kDirect and
// one says kCrosses: with nothing between nodes, one empty host call among
// the leaders costs less than a message per pair.)
uint64_t DirectFlags(const Nodes& nd, const std::vector<Side>& send, const std::vector<Side>& recv) {
  const size_t least = DirectMin();
  if (!least) return 0;
  auto fits = [&](size_t b) { return b == 0 || (b >= least && b <= static_cast<size_t>(INT_MAX)); };
  uint64_t f = kDirect;
  for (size_t j = 0; j < send.size(); ++j) {
    if (nd.node_of[j] == nd.node) continue;
    if (!(fits(send[j].bytes) && fits(recv[j].bytes))) return 0;
    if (send[j].bytes || recv[j].bytes) f |= kCrosses;
  }
  return f;
}

// The direct path's messages: a receive from and a send to every process of
// another node (the sends in the order of the ranks after mine, so that not
// every process starts with the same receiver).
void PostDirect(Nodes& nd, std::vector<Side>& send, std::vector<Side>& recv, int me, MPI_Comm comm,
                std::vector<MPI_Request>* reqs) {
  constexpr int kTag = 1;
  // (every process of the communicator is here: its first direct call makes the duplicate)
  if (nd.peers == MPI_COMM_NULL) PMPI_Comm_dup(comm, &nd.peers);
  const size_t un = send.size();
  reqs->reserve(2 * un);
  for (size_t j = 0; j < un; ++j) {
    if (nd.node_of[j] == nd.node) continue;
    reqs->emplace_back();
    PMPI_Irecv(recv[j].ptr, static_cast<int>(recv[j].bytes), MPI_BYTE, static_cast<int>(j), kTag, nd.peers,
               &reqs->back());
  }
  for (size_t k = 1; k <= un; ++k) {
    const size_t j = (static_cast<size_t>(me) + k) % un;
    if (nd.node_of[j] == nd.node) continue;
    reqs->emplace_back();
    PMPI_Isend(send[j].ptr, static_cast<int>(send[j].bytes), MPI_BYTE, static_cast<int>(j), kTag, nd.peers,
               &reqs->back());
  }
}

// D. the pieces between nodes, aggregated per node pair (the leader's round
// count is every leader's: the others' are at most that); false when declined.
bool Aggregated(Nodes& nd, const Sizes& sz, std::vector<Side>& send, std::vector<Side>& recv, uint64_t pieces,
                bool agreed) {
  CommState& seg = *nd.seg;
  const size_t ln = static_cast<size_t>(nd.ln), L = nd.members.size(), me = static_cast<size_t>(nd.lrank);
  char *outgoing = seg.area(), *incoming = seg.area() + seg.slot * ln / 2;
  std::vector<size_t> sbytes(L), rbytes(L);
  auto fill = [&](uint64_t r) {
    if (r % 2) return;
    if (r == 0) WaitConsumed(seg, seg.seq - 1);  // everyone has read the rounds before
    Walk(nd, sz, r / 2, true, [&](size_t, size_t l, size_t j, size_t off, size_t len, size_t pos) {
      if (l == me) std::memcpy(outgoing + pos, send[j].ptr + off, len);
    });
  };
  auto drain = [&](uint64_t r) {
    if (r % 2 == 0) {  // the leader sends the messages (every process has written its pieces)
      if (!nd.leader()) return;
      Walk(
          nd, sz, r / 2, true, [](size_t, size_t, size_t, size_t, size_t, size_t) {}, &sbytes);
      Walk(
          nd, sz, r / 2, false, [](size_t, size_t, size_t, size_t, size_t, size_t) {}, &rbytes);
      nd.scounts.assign(L, 0), nd.sdispls.assign(L, 0), nd.rcounts.assign(L, 0), nd.rdispls.assign(L, 0);
      for (size_t b = 0, so = 0, ro = 0; b < L; so += sbytes[b], ro += rbytes[b], ++b) {
        nd.scounts[b] = static_cast<int>(sbytes[b]), nd.sdispls[b] = static_cast<int>(so);
        nd.rcounts[b] = static_cast<int>(rbytes[b]), nd.rdispls[b] = static_cast<int>(ro);
      }
      // (after the agreement: an error here has normally ended the job through the host's handler)
      PMPI_Alltoallv(outgoing, nd.scounts.data(), nd.sdispls.data(), MPI_BYTE, incoming, nd.rcounts.data(),
                     nd.rdispls.data(), MPI_BYTE, nd.leaders);
      return;
    }
    Walk(nd, sz, r / 2, false, [&](size_t, size_t l, size_t j, size_t off, size_t len, size_t pos) {
      if (l == me) std::memcpy(recv[j].ptr + off, incoming + pos, len);
    });
  };
  // (every process runs the leader's count, the largest: at least one round, an empty one when no
  // block crosses a node, so that every leader makes the same host calls)
  const bool taken = Rounds(seg, std::max<uint64_t>(1, 2 * pieces), agreed, fill, drain);
  seg.area_used = true;  // the next rounds on the segment first wait until everyone has read this one
  return taken;
}

}  // namespace

bool HierAlltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;  // (the segments are unmapped: every process passes)
  CommState& seg = *nd.seg;
  const size_t un = static_cast<size_t>(st.n), ln = static_cast<size_t>(nd.ln);
  const size_t me = static_cast<size_t>(nd.lrank);
  ok = ok && PackSends(send, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  // A. sizes; small blocks within the node ride along (kept aside until the verdict)
  const std::vector<int>& mine = nd.members[static_cast<size_t>(nd.node)];
  const size_t hlen = 8 * (2 + 2 * un), half = seg.half();
  std::vector<uint64_t> head(2 + 2 * un, 0), all(ln * (2 + 2 * un));
  head[0] = nd.chunk;
  size_t local = 0;                    // my blocks to the other processes of my node
  std::vector<char>& aside = nd.sbuf;  // the others' blocks to me (the leader's staging buffers are unused here)
  if (ok) {
    for (size_t j = 0; j < un; ++j) head[2 + j] = send[j].bytes, head[2 + un + j] = recv[j].bytes;
    // (my blocks within the node ride along unless one goes single copy in C:
    // riding along copies a block three times)
    bool single = false;
    for (size_t l = 0; l < ln; ++l) {
      if (l == me) continue;
      const size_t j = static_cast<size_t>(mine[l]);
      local += send[j].bytes;
      single = single || Single(seg, send[j].bytes) || Single(seg, recv[j].bytes);
    }
    head[1] = hlen + local <= half && !single ? kInlined : 0;
    head[1] |= DirectFlags(nd, send, recv);
    size_t bytes = 0;  // what the others of my node send me
    for (size_t l = 0; l < ln; ++l)
      if (l != me) bytes += recv[static_cast<size_t>(mine[l])].bytes;
    try {
      if (head[1] & kInlined) aside.resize(bytes);
    } catch (...) {
      ok = false;
    }
  }
  bool node_ok, inlined = false;
  if (hlen <= half) {
    auto fill = [&](uint64_t) {
      char* p = seg.slot_of(seg.me);
      std::memcpy(p, head.data(), hlen);
      p += hlen;
      for (size_t l = 0; l < ln && (head[1] & kInlined); ++l) {
        const Side& b = send[static_cast<size_t>(mine[l])];
        if (l != me && b.bytes) std::memcpy(p, b.ptr, b.bytes), p += b.bytes;
      }
    };
    auto drain = [&](uint64_t) {
      for (size_t l = 0; l < ln; ++l) std::memcpy(all.data() + l * head.size(), seg.slot_of(static_cast<int>(l)), hlen);
      const Sizes sz{all.data(), un};
      inlined = true;
      for (size_t l = 0; l < ln; ++l) inlined = inlined && sz.inlined(l);
      if (!inlined) return;
      char* at = aside.data();
      for (size_t l = 0; l < ln; ++l) {
        if (l == me) continue;
        const char* p = seg.slot_of(static_cast<int>(l)) + hlen;  // l's blocks to the others before me
        for (size_t d = 0; d < me; ++d)
          if (d != l) p += sz.to(l, static_cast<size_t>(mine[d]));
        const size_t k = std::min(sz.to(l, static_cast<size_t>(mine[me])), sz.from(me, static_cast<size_t>(mine[l])));
        std::memcpy(at, p, k);
        at += sz.from(me, static_cast<size_t>(mine[l]));
      }
    };
    node_ok = Rounds(seg, 1, ok, fill, drain);
  } else {
    node_ok =
        NodeAllgather(nd, reinterpret_cast<const char*>(head.data()), hlen, reinterpret_cast<char*>(all.data()), ok);
  }
  // (`inlined` is the same on every process of the node: they all read the same headers)
  const Sizes sz{all.data(), un};
  uint64_t pieces = 0;  // what my node's blocks to and from other nodes need
  for (size_t l = 0; l < ln && node_ok; ++l) {
    node_ok = sz.chunk(l) == nd.chunk && nd.chunk > 0;
    for (size_t j = 0; j < un && node_ok; ++j)
      if (nd.node_of[j] != nd.node)
        pieces = std::max(pieces, RoundsFor(std::max(sz.to(l, j), sz.from(l, j)), nd.chunk));
  }
  bool asks = node_ok, crosses = false;  // my node asks for the direct path (the same on every process of it)
  for (size_t l = 0; l < ln && asks; ++l) asks = (sz.flags(l) & kDirect) != 0, crosses |= (sz.flags(l) & kCrosses) != 0;
  asks = asks && crosses;
  // B. the leaders agree on the verdict, the number of pieces and whether every node asks for
  // the direct path; V: the leader of a node that asks tells its processes the answer
  bool agreed = node_ok, direct = asks;
  if (nd.leader()) agreed = LeadersAgreeMax(nd, node_ok, &pieces, &direct);
  if (asks) {
    auto fill = [&](uint64_t) {
      if (nd.leader()) *seg.slot_of(seg.me) = direct ? 1 : 0;
    };
    auto drain = [&](uint64_t) { direct = *seg.slot_of(0) == 1; };
    if (!Rounds(seg, 1, agreed, fill, drain)) return false;
    agreed = true;
  }
  std::vector<MPI_Request> reqs;
  if (direct) PostDirect(nd, send, recv, st.me, comm, &reqs);
  // C. the blocks within the node, unless they rode along: the node's own
  // alltoall, whose round 0 carries the leaders' verdict (else D's does)
  if (!inlined) {
    std::vector<Side> ls(ln), lr(ln);
    for (size_t l = 0; l < ln && node_ok; ++l) {
      const size_t j = static_cast<size_t>(mine[l]);
      ls[l].ptr = send[j].ptr, ls[l].bytes = send[j].bytes;
      lr[l].ptr = recv[j].ptr, lr[l].bytes = recv[j].bytes;
    }
    if (!Alltoall(seg, ls, lr, agreed, nd.node_comm, true)) return false;
    agreed = true;
  }
  if (direct) {
    // (after the agreement: an error here has normally ended the job through the host's handler)
    PMPI_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPI_STATUSES_IGNORE);
    Bump(g_direct);
  } else if (!Aggregated(nd, sz, send, recv, pieces, agreed)) {
    return false;
  }
  if (inlined) {  // the blocks within the node, mine to myself included
    const char* at = aside.data();
    for (size_t l = 0; l < ln; ++l) {
      Side& r = recv[static_cast<size_t>(mine[l])];
      const Side& b = send[static_cast<size_t>(mine[l])];
      if (l == me) {
        if (r.bytes && r.ptr != b.ptr) std::memcpy(r.ptr, b.ptr, std::min(r.bytes, b.bytes));
      } else {
        if (r.bytes) std::memcpy(r.ptr, at, r.bytes);
        at += r.bytes;
      }
    }
  }
  UnpackRecvs(recv, st.rtmp, comm);
  Bump(g_across);
  return true;
}

}  // namespace shmcoll_accel
