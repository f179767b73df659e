// Hierarchical alltoall(v), for a communicator over several nodes (nodes.h):
// aggregate at each node's leader, one message per pair of nodes, scatter.
// Chosen for every communicator whose processes lie on more than one (real or
// pretend) node; on one node engine.cc's rounds run alone.
//
//  1. Gather (NodeGather, in the node's segment): every process sends its
//     leader its send and receive sizes (16 bytes per rank of the
//     communicator) and its blocks bound for other nodes.
//  2. The leaders agree (PMPI_Allreduce(MIN) of the nodes' verdicts), then
//     exchange one message per ordered pair of nodes with one PMPI_Alltoallv
//     of MPI_BYTE over the leaders: the message from node A to node B holds,
//     for each process d of B in local order, the blocks of A's processes to
//     d in local order (sizes from the senders' counts; the receiving leader
//     lays it out from its processes' receive sizes).
//  3. Scatter (NodeScatter): the leader lists for each of its processes
//     where in the arrived messages the blocks it receives lie, in rank
//     order, and copies them from there into that process's half-slot, a
//     half per round; each process copies them straight into its receive
//     buffer.
//  4. The blocks between processes of one node never leave it: the node's own
//     alltoall in its segment (engine.cc), every process copying its share.
//
// Cost, L nodes of m processes, b bytes per block: per node L - 1 messages
// out and L - 1 in over the network (the host alone sends m * m per node
// pair), each of m * m * b bytes, so (L - 1) * m * m * b bytes out and in per
// node, as without aggregation: what aggregation saves is the per-message
// cost (latency, headers, matching), by a factor m * m.  In the node, a byte
// bound elsewhere is copied three times on its way out (into the segment, out
// to the leader's buffer, into the message) and twice on its way in (into
// the segment, out of it), and the leader does its node's copies of stages 2
// and 3 alone; a byte within the node is copied twice, as on one node.
//
// Agreement: as in hier.cc; nothing is written into a receive buffer before
// the leaders have agreed and the scatter's round 0 has carried the verdict.
#include <climits>
#include <cstring>

#include "nodes.h"

namespace shmcoll_accel {
namespace {

// The leader's stages 2 and 3 on what it gathered: false when memory is short
// or a message would not fit the host's int counts (before any send), or when
// the exchange failed.
bool Exchange(Nodes& nd, int n, bool agree_ok, bool* agreed) {
  const size_t un = static_cast<size_t>(n), ln = static_cast<size_t>(nd.ln), L = static_cast<size_t>(nd.count);
  // process l's sizes: to rank j at send[l][j], from rank j at recv[l][j]; its blocks follow in rank order
  auto sizes = [&](size_t l) { return reinterpret_cast<const uint64_t*>(nd.in[l].data()); };
  std::vector<std::vector<size_t>> at(ln);  // where process l's block to rank j starts in nd.in[l]
  bool ok = agree_ok;
  for (size_t l = 0; l < ln && ok; ++l) {
    ok = nd.in[l].size() >= 16 * un;
    if (!ok) break;
    at[l].resize(un);
    size_t off = 16 * un;
    const int me = nd.members[static_cast<size_t>(nd.node)][l];
    for (size_t j = 0; j < un; ++j) {
      at[l][j] = off;
      if (static_cast<int>(j) != me && nd.node_of[j] != nd.node) off += sizes(l)[j];
    }
    ok = off == nd.in[l].size();
  }
  // the message sizes and offsets, node by node
  std::vector<size_t> scount(L, 0), rcount(L, 0);
  for (size_t b = 0; b < L && ok; ++b) {
    if (static_cast<int>(b) == nd.node) continue;
    for (int d : nd.members[b])
      for (size_t l = 0; l < ln; ++l) scount[b] += sizes(l)[static_cast<size_t>(d)];
    for (size_t l = 0; l < ln; ++l)
      for (int s : nd.members[b]) rcount[b] += sizes(l)[un + static_cast<size_t>(s)];
  }
  size_t stotal = 0, rtotal = 0;
  if (ok) {
    nd.scounts.assign(L, 0), nd.sdispls.assign(L, 0), nd.rcounts.assign(L, 0), nd.rdispls.assign(L, 0);
    for (size_t b = 0; b < L; ++b) {
      ok = ok && scount[b] <= INT_MAX && rcount[b] <= INT_MAX && stotal <= INT_MAX && rtotal <= INT_MAX;
      nd.scounts[b] = static_cast<int>(scount[b] & INT_MAX), nd.sdispls[b] = static_cast<int>(stotal & INT_MAX);
      nd.rcounts[b] = static_cast<int>(rcount[b] & INT_MAX), nd.rdispls[b] = static_cast<int>(rtotal & INT_MAX);
      stotal += scount[b], rtotal += rcount[b];
    }
  }
  if (ok) try {
      nd.sbuf.resize(stotal);
      nd.rbuf.resize(rtotal);
      nd.out.resize(ln);
      for (auto& v : nd.out) v.clear(), v.reserve(un);
    } catch (...) {
      ok = false;
    }
  *agreed = LeadersAgree(nd, ok);
  if (!*agreed) return false;
  // 2. the messages: for node b, for each of its processes d, my processes' blocks to d
  for (size_t b = 0; b < L; ++b) {
    char* p = nd.sbuf.data() + nd.sdispls[b];
    if (static_cast<int>(b) == nd.node) continue;
    for (int d : nd.members[b])
      for (size_t l = 0; l < ln; ++l) {
        const size_t k = sizes(l)[static_cast<size_t>(d)];
        std::memcpy(p, nd.in[l].data() + at[l][static_cast<size_t>(d)], k);
        p += k;
      }
  }
  if (PMPI_Alltoallv(nd.sbuf.data(), nd.scounts.data(), nd.sdispls.data(), MPI_BYTE, nd.rbuf.data(), nd.rcounts.data(),
                     nd.rdispls.data(), MPI_BYTE, nd.leaders) != MPI_SUCCESS)
    return false;  // (after the agreement: the host's handler has normally ended the job)
  // 3. each of my processes' blocks in rank order: from my node's processes
  // straight from what they sent, from elsewhere out of the arrived messages
  std::vector<size_t> rat(L);  // read position in the message from each node
  for (size_t b = 0; b < L; ++b) rat[b] = static_cast<size_t>(nd.rdispls[b]);
  for (size_t l = 0; l < ln; ++l)
    for (size_t j = 0; j < un; ++j) {
      const size_t b = static_cast<size_t>(nd.node_of[j]);
      if (static_cast<int>(b) == nd.node) continue;
      const size_t k = sizes(l)[un + j];
      nd.out[l].push_back(Span{nd.rbuf.data() + rat[b], k});
      rat[b] += k;
    }
  // (The message from node b holds, for each of my processes in local order,
  // b's processes' blocks in their local order, which is rank order: the loop
  // above reads each message in the order it was written.)
  return true;
}

}  // namespace

bool HierAlltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm) {
  Nodes& nd = *st.nodes;
  if (g_finalizing) return false;  // (the segments are unmapped: every process passes)
  const int n = st.n;
  const size_t un = static_cast<size_t>(n);
  ok = ok && PackSends(send, st.stmp, comm) && LayoutRecvs(recv, st.rtmp);
  std::vector<uint64_t> head;
  std::vector<Span> out, in;
  if (ok) {
    head.resize(2 * un);
    for (size_t j = 0; j < un; ++j) head[j] = send[j].bytes, head[un + j] = recv[j].bytes;
    out.push_back(Span{reinterpret_cast<char*>(head.data()), 16 * un});
    for (size_t j = 0; j < un; ++j)
      if (nd.node_of[j] != nd.node) {
        out.push_back(Span{send[j].ptr, send[j].bytes});
        in.push_back(Span{recv[j].ptr, recv[j].bytes});
      }
  }
  bool all = NodeGather(nd, out, ok);
  if (nd.leader()) {
    bool agreed = false;
    all = Exchange(nd, n, all, &agreed) && agreed;
  }
  if (!NodeScatter(nd, in, nd.leader() ? all : ok)) return false;
  // 4. the blocks within the node (mine to myself included): the node's own
  // alltoall over its segment, every process copying its share (engine.cc)
  const std::vector<int>& mine = nd.members[static_cast<size_t>(nd.node)];
  std::vector<Side> ls(mine.size()), lr(mine.size());
  for (size_t l = 0; l < mine.size(); ++l) {
    const size_t j = static_cast<size_t>(mine[l]);
    ls[l].ptr = send[j].ptr, ls[l].bytes = send[j].bytes;
    lr[l].ptr = recv[j].ptr, lr[l].bytes = recv[j].bytes;
  }
  Alltoall(*nd.seg, ls, lr, true, nd.node_comm);  // (every process takes it: nothing to decline)
  UnpackRecvs(recv, st.rtmp, comm);
  g_across.fetch_add(1, std::memory_order_relaxed);
  return true;
}

}  // namespace shmcoll_accel
