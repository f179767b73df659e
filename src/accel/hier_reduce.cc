// Hierarchical allreduce, reduce and reduce_scatter_block, for a communicator
// over several nodes (nodes.h): the node's own reduction in its segment (the
// rounds of reduce.cc, delivering to the leader), the leaders' reduction over
// the host, then the result handed out in the node.  The same predefined
// operations on predefined types as on one node (optable.cc); anything else
// is declined by every process together and goes to the host.  L nodes of m
// processes, B bytes per process's contribution.
//
// Allreduce: the node folds its m contributions into the leader's buffer
// (reduce.cc's ReduceRounds to local rank 0; in rank order within the node);
// the leaders agree (PMPI_Allreduce(MIN) of the nodes' verdicts, 4 bytes),
// then PMPI_Allreduce in place over the leaders (the host's algorithm: with
// a ring or reduce-scatter/allgather about 2 B bytes out and in per node,
// where the host alone moves about 2 B per rank, m times more per node, and m
// times the messages); then the leader passes the result through every
// process's half-slot to its node (NodeBcast).
// Reduce: the same node stage; the leaders' stage is a PMPI_Reduce to the
// leader of the root's node (in place there; B bytes per node up the host's
// tree), which hands the result to the root through the segment (or keeps it,
// when the root is the leader).  The other nodes' stage only carries the
// verdict, so nothing is written at a process that is not the root.
// Reduce_scatter_block (n blocks of b bytes each): the node folds the whole
// n * b vector into its leader's buffer; the leader reorders it node by node
// (each node's blocks in its local order) and the leaders run one
// PMPI_Reduce_scatter in place, node k receiving its m * b bytes (about
// n * b bytes out and in per node with the host's pairwise or ring algorithm,
// m times less than each rank alone); then the leader scatters each
// process's block to it (NodeScatter).
//
// Eager reduce (HierEagerReduce, at most Nodes::eager bytes): no agreement,
// as on one node (eager.cc).  In the root's node the root folds its node's
// contributions from the eager ring; in every other node the leader does,
// then sends the node's result to the root over the host (one message of B
// bytes per other node, on the communicator's duplicate Nodes::peers), and
// returns.  Every other process copies its contribution into its ring
// entry and returns.  The root folds the nodes' results in node order.
// So a call costs the root's node its ring and L - 1 host messages, and no
// process but the root and the other nodes' leaders waits for anybody.
//
// Order of the folds: within a node, every element is folded in the node's
// rank order (as on one node); across nodes, in the host's order (eager: in
// node order).  Every
// process gets the same bytes (the leaders' result is handed out as it is),
// and the same call gives the same bytes again (the host's algorithms are
// chosen by size and communicator), but not always the bytes of the one-node
// rank-order fold: floating-point sums may differ from it in the last bits.
//
// Agreement, as in hier.cc: every receive buffer is written only in the last
// node stage, whose round 0 carries the leaders' verdict; until then only the
// leaders' own buffers are written.  With MPI_IN_PLACE the input is the
// receive buffer itself, read in the first stage, before that.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstring>

#include "nodes.h"

namespace shmcoll_accel {
bool HierReduce(CommState& st, const void* in, void* out, size_t count, const Fold& f, MPI_Datatype type, MPI_Op op,
                int root, bool ok) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;  // (the segments are unmapped: every process passes)
  const size_t bytes = count * (f.extent ? f.extent : 1);
  // only the leader stages (a local verdict: others never touch nd.rbuf here); a reduce also needs
  // its second buffer, staged before the agreement like the first
  ok = ok && count <= static_cast<size_t>(INT_MAX) &&
       (!nd.leader() || (Stage(nd.rbuf, bytes) && (root < 0 || Stage(nd.sbuf, bytes))));
  const bool node = ReduceRounds(*nd.seg, static_cast<const char*>(in), nd.rbuf.data(), ok ? count : 0, f, 0, ok);
  const int rnode = root < 0 ? -1 : nd.node_of[static_cast<size_t>(root)];
  const bool deliver_here = root < 0 || nd.node == rnode;
  // in the root's node, a root that is not the leader gets the result through the segment
  const bool through_seg = root < 0 || (deliver_here && nd.local_of[static_cast<size_t>(root)] != 0);
  bool all = ok;
  if (nd.leader()) {
    all = LeadersAgree(nd, node);
    if (all && count) {
      const int c = static_cast<int>(count);
      if (root < 0) {
        all = PMPI_Allreduce(MPI_IN_PLACE, nd.rbuf.data(), c, type, op, nd.leaders) == MPI_SUCCESS;
      } else {
        // Into a second buffer, not in place: MPICH 4.0.2's in-place reduce reads through
        // MPI_IN_PLACE (a segmentation fault, seen with 1000 doubles at root 1 of 2 processes,
        // not with 5; the accelerator's reduce_order test under MPICH hit it here).  A
        // non-root's receive buffer goes unused.
        all = PMPI_Reduce(nd.rbuf.data(), nd.sbuf.data(), c, type, op, rnode, nd.leaders) == MPI_SUCCESS;
        if (all && deliver_here) nd.rbuf.swap(nd.sbuf);
      }
      // (an error here after the agreement cannot be declined any more; the host's
      // default handler has already ended the job, as it would without the accelerator)
    }
  }
  std::vector<Span> mine;
  const bool am_receiver = root < 0 || root == st.me;
  if (ok && bytes && am_receiver && through_seg) mine.push_back(Span{static_cast<char*>(out), bytes});
  if (!NodeBcast(nd, nd.rbuf.data(), through_seg ? bytes : 0, mine, nd.leader() ? all : ok)) return false;
  if (am_receiver && !through_seg && bytes) std::memcpy(out, nd.rbuf.data(), bytes);  // the root is the leader
  Bump(g_across);
  return true;
}

bool HierEagerReduce(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
                     MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  CommState& seg = *nd.seg;
  constexpr int kTag = 2;  // (the direct alltoall's messages on nd.peers carry 1)
  // (nd.peers: made with nd.eager, nodes.cc)
  const int rnode = nd.node_of[static_cast<size_t>(root)];
  const size_t bytes = count * f.extent;
  if (nd.node != rnode) {
    if (!nd.leader()) return EagerReduce(seg, in, nullptr, count, f, 0, ok, comm);
    // The node's result, then to the root.
    if (!Stage(nd.sbuf, std::max<size_t>(bytes, 1))) {
      std::fprintf(stderr, "shmcoll-accel: MPI_Reduce: no memory for a block of %zu bytes\n", bytes);
      EndJob(comm);
    }
    EagerReduce(seg, in, nd.sbuf.data(), count, f, 0, ok, comm);  // (a collector folds or ends the job)
    if (PMPI_Send(nd.sbuf.data(), static_cast<int>(bytes), MPI_BYTE, root, kTag, nd.peers) != MPI_SUCCESS) {
      std::fprintf(stderr, "shmcoll-accel: MPI_Reduce: sending the node's %zu bytes to the root failed\n", bytes);
      EndJob(comm);
    }
    Bump(g_across);
    return true;
  }
  const int lroot = nd.local_of[static_cast<size_t>(root)];
  if (st.me != root) return EagerReduce(seg, in, nullptr, count, f, lroot, ok, comm);
  // The root: its node's result into out, then every other node's, folded in node order:
  // out = R0 (op) (R1 (op) ... (op) R(L-1)).
  const size_t L = static_cast<size_t>(nd.count);
  if (!Stage(nd.rbuf, std::max<size_t>(bytes * L, 1))) {
    std::fprintf(stderr, "shmcoll-accel: MPI_Reduce: no memory for %zu blocks of %zu bytes\n", L, bytes);
    EndJob(comm);
  }
  EagerReduce(seg, in, out, count, f, lroot, ok, comm);  // (as above)
  auto result = [&](size_t k) { return nd.rbuf.data() + bytes * k; };
  for (size_t k = 0; k < L; ++k) {
    if (static_cast<int>(k) == rnode) continue;
    MPI_Status status;
    int got = -1;
    const int from = nd.members[k][0];
    if (PMPI_Recv(result(k), static_cast<int>(bytes), MPI_BYTE, from, kTag, nd.peers, &status) != MPI_SUCCESS ||
        PMPI_Get_count(&status, MPI_BYTE, &got) != MPI_SUCCESS || got != static_cast<int>(bytes)) {
      std::fprintf(stderr,
                   "shmcoll-accel: MPI_Reduce: node %zu's result (from rank %d) is not the %zu bytes expected: its "
                   "call does not match this one\n",
                   k, from, bytes);
      EndJob(comm);
    }
  }
  if (bytes) {
    std::memcpy(result(static_cast<size_t>(rnode)), out, bytes);
    std::memcpy(out, result(L - 1), bytes);
    for (size_t k = L - 1; k-- > 0;) f.apply(result(k), out, count);
  }
  Bump(g_across);
  return true;
}

void HierEagerReduceCheck(CommState& st, int root, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  const bool rooted_here = nd.node == nd.node_of[static_cast<size_t>(root)];
  const int collector = rooted_here ? nd.local_of[static_cast<size_t>(root)] : 0;
  if (nd.lrank != collector) return;
  for (int j = 0; j < nd.ln; ++j)
    if (j != collector) EagerCheck(*nd.seg, j, "MPI_Reduce", comm);
}

bool HierReduceScatterBlock(CommState& st, const void* in, void* out, size_t count, const Fold& f, MPI_Datatype type,
                            MPI_Op op, bool ok) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;
  const size_t block = count * (f.extent ? f.extent : 1), n = static_cast<size_t>(st.n);
  // the host's counts: a node's blocks, in elements, must fit an int
  size_t most = 0;
  for (const auto& m : nd.members) most = std::max(most, m.size());
  ok = ok && count * most <= static_cast<size_t>(INT_MAX) &&
       (!nd.leader() || (Stage(nd.rbuf, block * n) && Stage(nd.sbuf, block * n)));
  const bool node = ReduceRounds(*nd.seg, static_cast<const char*>(in), nd.rbuf.data(), ok ? count * n : 0, f, 0, ok);
  bool all = ok;
  if (nd.leader()) {
    all = LeadersAgree(nd, node);
    nd.out.assign(static_cast<size_t>(nd.ln), {});
    if (all && count) {
      // node by node, each node's blocks in local order
      nd.rcounts.assign(static_cast<size_t>(nd.count), 0);
      char* at = nd.sbuf.data();
      for (int b = 0; b < nd.count; ++b) {
        for (int j : nd.members[static_cast<size_t>(b)]) {
          std::memcpy(at, nd.rbuf.data() + block * static_cast<size_t>(j), block);
          at += block;
        }
        nd.rcounts[static_cast<size_t>(b)] = static_cast<int>(count * nd.members[static_cast<size_t>(b)].size());
      }
      all = PMPI_Reduce_scatter(MPI_IN_PLACE, nd.sbuf.data(), nd.rcounts.data(), type, op, nd.leaders) == MPI_SUCCESS;
      for (int l = 0; l < nd.ln; ++l)
        nd.out[static_cast<size_t>(l)].push_back(Span{nd.sbuf.data() + block * static_cast<size_t>(l), block});
    }
  }
  std::vector<Span> mine;
  if (ok && block) mine.push_back(Span{static_cast<char*>(out), block});
  if (!NodeScatter(nd, mine, nd.leader() ? all : ok)) return false;
  Bump(g_across);
  return true;
}

}  // namespace shmcoll_accel
