// Hierarchical allgather(v), bcast and barrier, for a communicator over
// several nodes (nodes.h): a node stage in the node's segment, a leaders'
// stage over the host, a node stage again.  Chosen for every communicator
// whose processes lie on more than one (real or pretend) node; on one node
// engine.cc's rounds run alone.  L nodes of m processes each, b bytes per block.
//
// Allgather(v): every process's block goes to its leader through the segment
// (NodeGather); the leaders agree (PMPI_Allreduce(MIN) of the nodes'
// verdicts, 4 bytes), then exchange their nodes' blocks with one
// PMPI_Allgatherv of MPI_BYTE in place, each node's blocks in rank order of
// the node (the host chooses its algorithm: with a ring, L - 1 messages out
// per node, (L - 1) * m * b bytes in and out per node; one network message
// carries a whole node's blocks, where the host alone sends every rank's
// block to every other node's ranks: m * m times the messages, m times the
// bytes per node pair).  Then the leader passes the whole result, node by
// node, through the node's half-slots (all of them, filled by the leader in
// turn, m halves per round: NodeBcast) to every local process, which copies
// each block straight into its receive buffer.
// Bcast: a node round agrees within each node, the leaders agree (allreduce),
// the root's node broadcasts in its segment (engine.cc's Bcast from the root),
// its leader broadcasts to the other leaders (PMPI_Bcast of the user's buffer
// and type over the leaders: the host's tree, L - 1 messages of the message's
// size in all), and every other node broadcasts in its segment from its leader.
// Barrier: a node round, PMPI_Barrier over the leaders, a node round.
//
// Agreement (see accel.h): no receive buffer is written before every node's
// verdict has reached its leader and the leaders have agreed; the node stage
// that writes receive buffers carries the leaders' verdict in its round 0, so
// every process of the communicator takes the call or every one passes it.
#include <climits>
#include <cstring>

#include "nodes.h"

namespace shmcoll_accel {

bool HierAllgather(CommState& st, Side& send, std::vector<Side>& recv, bool ok, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;  // (the segments are unmapped: every process passes)
  std::vector<Side> one(1, send);
  ok = ok && PackSends(one, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  const Side& src = one[0];
  // The result, node by node, each node's blocks in local order (the leaders' layout).
  std::vector<Span> mine, out;
  size_t total = 0;
  bool fits = true;  // every node's part and offset fit an int (the host's counts)
  if (ok) {
    nd.rcounts.assign(static_cast<size_t>(nd.count), 0);
    nd.rdispls.assign(static_cast<size_t>(nd.count), 0);
    for (int b = 0; b < nd.count; ++b) {
      fits = fits && total <= static_cast<size_t>(INT_MAX);
      nd.rdispls[static_cast<size_t>(b)] = static_cast<int>(std::min<size_t>(total, INT_MAX));
      size_t part = 0;
      for (int j : nd.members[static_cast<size_t>(b)]) {
        out.push_back(Span{recv[static_cast<size_t>(j)].ptr, recv[static_cast<size_t>(j)].bytes});
        part += recv[static_cast<size_t>(j)].bytes;
      }
      fits = fits && part <= static_cast<size_t>(INT_MAX);
      nd.rcounts[static_cast<size_t>(b)] = static_cast<int>(std::min<size_t>(part, INT_MAX));
      total += part;
    }
    ok = fits;
    mine.push_back(Span{src.ptr, src.bytes});
  }
  bool all = NodeGather(nd, mine, ok);
  if (nd.leader()) {
    bool mem = all;
    if (mem) try {
        nd.rbuf.resize(total);
      } catch (...) {
        mem = false;
      }
    all = LeadersAgree(nd, mem);
    if (all) {
      // my node's blocks into place, then everybody's
      size_t at = static_cast<size_t>(nd.rdispls[static_cast<size_t>(nd.node)]);
      const std::vector<int>& mem_of = nd.members[static_cast<size_t>(nd.node)];
      for (int l = 0; l < nd.ln; ++l) {
        const size_t want = recv[static_cast<size_t>(mem_of[static_cast<size_t>(l)])].bytes;
        const std::vector<char>& v = nd.in[static_cast<size_t>(l)];
        std::memcpy(nd.rbuf.data() + at, v.data(), std::min(want, v.size()));
        at += want;
      }
      all = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_BYTE, nd.rbuf.data(), nd.rcounts.data(), nd.rdispls.data(), MPI_BYTE,
                            nd.leaders) == MPI_SUCCESS;
      // (an error here after the agreement cannot be declined any more; the host's
      // default handler has already ended the job, as it would without the accelerator)
    }
  }
  if (!NodeBcast(nd, nd.rbuf.data(), total, out, nd.leader() ? all : ok)) return false;
  UnpackRecvs(recv, st.rtmp, comm);
  g_across.fetch_add(1, std::memory_order_relaxed);
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
  bool taken;
  if (nd.node == rnode) {
    taken = Bcast(*nd.seg, side, nd.local_of[static_cast<size_t>(root)], all, nd.node_comm);
    leaders_bcast();
  } else {
    leaders_bcast();
    taken = Bcast(*nd.seg, side, 0, all, nd.node_comm);
  }
  if (taken) g_across.fetch_add(1, std::memory_order_relaxed);
  return taken;
}

bool HierBarrier(CommState& st) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;
  Barrier(*nd.seg);
  if (nd.leader()) PMPI_Barrier(nd.leaders);
  Barrier(*nd.seg);
  g_across.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace shmcoll_accel
