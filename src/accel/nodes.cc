// Communicators over several nodes: the node split, pretend nodes, the set-up
// of the hierarchy and the node stages of the hierarchical algorithms.
//
// Node split.  PMPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives a process's
// real node.  SHMCOLL_FAKE_NODES=k (k > 1) splits each real node into k
// pretend nodes, consecutive blocks as even as possible (the first m % k
// blocks of a node of m processes have one more), so that the hierarchical
// path runs on one machine with its inter-node traffic carried by the host.
// A process belongs to one pretend node in every communicator, as on a real
// cluster: its block is its rank in MPI_COMM_WORLD's node split, computed at
// MPI_Init / MPI_Init_thread (which the library defines for this alone; they
// call the host's and, without SHMCOLL_FAKE_NODES, nothing else).  So a
// communicator split with its ranks interleaved has its ranks interleaved
// across pretend nodes too.  A program initialised some other way gets blocks
// of the communicator's own node split instead.
//
// Set-up of a communicator over several nodes (collective over it, host calls
// only, once): a PMPI_Allgather in the node of the members' ranks and one over
// the communicator of each rank's node leader (its node's lowest rank), from
// which every process derives the same node numbering (by lowest rank) and
// member lists; PMPI_Comm_split of the leaders (ranked by node); the node's
// segment (MapSegment on the node communicator, as for a one-node
// communicator); and an PMPI_Allreduce(MIN) so every process agrees.  Any
// failure declines the communicator everywhere, as does a communicator with
// one process on each node (nothing to aggregate: the host alone does better).
//
// Node stages: sequences of the node segment's rounds (engine.cc, Rounds), of
// at most half a slot per round and rank (the reductions' stages; the
// alltoall and the allgather use the node's slots as one area instead).
// Scatter: the leader writes each rank's bytes into that rank's half,
// each rank copies its own out.  Bcast: the leader fills every rank's half in
// turn, every rank reads them all.
// Round 0 carries every local rank's verdict, so a stage also agrees.
#include "nodes.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace shmcoll_accel {

std::atomic<long> g_across{0};
std::atomic<long> g_direct{0};
std::atomic<long> g_single{0};
std::atomic<long> g_heap_reads{0};
std::atomic<long> g_pushed{0};

namespace {

int g_fake_block = -1;  // my pretend node in my real node (MPI_COMM_WORLD's split), -1: unknown

int FakeNodes() {
  static const int k = [] {
    const int v = EnvCount("SHMCOLL_FAKE_NODES", 1 << 20);
    return v ? v : 1;
  }();
  return k;
}

// Block of local rank l among m processes cut into k consecutive blocks, as
// even as possible (the first m % k have one more).
int Block(int l, int m, int k) {
  const int q = m / k, rem = m % k;
  if (l < rem * (q + 1)) return l / (q + 1);
  return rem + (l - rem * (q + 1)) / q;
}

void AfterInit() {
  const int k = FakeNodes();
  if (k <= 1) return;
  MPI_Comm node;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return;
  int m = 0, l = 0;
  PMPI_Comm_size(node, &m);
  PMPI_Comm_rank(node, &l);
  PMPI_Comm_free(&node);
  g_fake_block = Block(l, m, k);
}

// Copies the stream bytes [off, off + len) of a list of spans into dst (read)
// or from src into it (write), walking from a remembered position.
struct Cursor {
  const std::vector<Span>& v;
  size_t i = 0, at = 0;  // span i, byte at in it
  explicit Cursor(const std::vector<Span>& spans) : v(spans) {}
  template <bool kRead>
  void Move(char* mem, size_t len) {
    while (len > 0 && i < v.size()) {
      const size_t k = std::min(len, v[i].n - at);
      if (k) {
        if (kRead)
          std::memcpy(mem, v[i].p + at, k);
        else
          std::memcpy(v[i].p + at, mem, k);
      }
      mem += k, len -= k, at += k;
      if (at == v[i].n) ++i, at = 0;
    }
  }
};

size_t Total(const std::vector<Span>& v) {
  size_t t = 0;
  for (const Span& s : v) t += s.n;
  return t;
}

inline uint64_t Ceil(size_t a, size_t b) { return (a + b - 1) / b; }

}  // namespace

MPI_Comm PretendSplit(MPI_Comm node, int comm_rank) {
  const int k = FakeNodes();
  if (k <= 1) return node;
  int block = g_fake_block;
  if (block < 0) {
    int m = 0, l = 0;
    PMPI_Comm_size(node, &m);
    PMPI_Comm_rank(node, &l);
    block = Block(l, m, k);
  }
  MPI_Comm part = MPI_COMM_NULL;
  if (PMPI_Comm_split(node, block, comm_rank, &part) != MPI_SUCCESS) part = MPI_COMM_NULL;
  PMPI_Comm_free(&node);
  return part;
}

void SetUpNodes(CommState* st, MPI_Comm comm, MPI_Comm node, int machine) {
  auto* nd = new Nodes();
  nd->node_comm = node;
  const int n = st->n;
  bool ok = true;
  PMPI_Comm_size(node, &nd->ln);
  PMPI_Comm_rank(node, &nd->lrank);
  std::vector<int> mine(static_cast<size_t>(nd->ln)), leader_of(static_cast<size_t>(n));
  ok = PMPI_Allgather(&st->me, 1, MPI_INT, mine.data(), 1, MPI_INT, node) == MPI_SUCCESS;
  int my_leader = ok ? *std::min_element(mine.begin(), mine.end()) : st->me;
  ok = PMPI_Allgather(&my_leader, 1, MPI_INT, leader_of.data(), 1, MPI_INT, comm) == MPI_SUCCESS && ok;
  if (ok) {
    std::vector<int> index(static_cast<size_t>(n), -1);  // by leader rank
    nd->node_of.resize(static_cast<size_t>(n));
    nd->local_of.resize(static_cast<size_t>(n));
    for (int j = 0; j < n; ++j) {  // ascending ranks: a node is numbered at its lowest rank, its leader
      int& idx = index[static_cast<size_t>(leader_of[static_cast<size_t>(j)])];
      if (idx < 0) idx = nd->count++, nd->members.emplace_back();
      nd->node_of[static_cast<size_t>(j)] = idx;
      nd->local_of[static_cast<size_t>(j)] = static_cast<int>(nd->members[static_cast<size_t>(idx)].size());
      nd->members[static_cast<size_t>(idx)].push_back(j);
    }
    nd->node = nd->node_of[static_cast<size_t>(st->me)];
    // (one process per node: nothing to aggregate, the host alone does better; declined below, together)
    ok = nd->local_of[static_cast<size_t>(st->me)] == nd->lrank && nd->count < n;
  }
  if (PMPI_Comm_split(comm, nd->lrank == 0 ? 0 : MPI_UNDEFINED, nd->node, &nd->leaders) != MPI_SUCCESS) {
    nd->leaders = MPI_COMM_NULL;
    ok = false;
  }
  nd->seg = new CommState();
  nd->seg->n = nd->ln;
  nd->seg->me = nd->lrank;
  nd->seg->on_machine = machine;
  ok = MapSegment(nd->seg, node) && ok;
  st->nodes = nd;
  if (!AllAgree(ok, comm)) {
    FreeNodes(st);
    return;
  }
  // the hierarchical alltoall's chunk (nodes.h), from the smallest slot and the smallest node
  // (and the eager bound across the nodes, nodes.h)
  long long own[2] = {static_cast<long long>(nd->seg->slot), static_cast<long long>(nd->seg->eager)}, all[2] = {};
  size_t m_min = static_cast<size_t>(n);
  for (const auto& m : nd->members) m_min = std::min(m_min, m.size());
  const bool agreed = PMPI_Allreduce(own, all, 2, MPI_LONG_LONG, MPI_MIN, comm) == MPI_SUCCESS;
  const long long least = all[0];
  nd->eager = agreed && m_min >= 2 ? static_cast<size_t>(std::max(all[1], 0LL)) : 0;
  // (an eager reduce's messages: made here, where every process is, not at the first such call,
  // which an erroneous program may not make everywhere)
  if (nd->eager && PMPI_Comm_dup(comm, &nd->peers) != MPI_SUCCESS) nd->eager = 0;
  if (agreed && m_min < static_cast<size_t>(n)) {
    const size_t c = static_cast<size_t>(least) / (2 * (static_cast<size_t>(n) - m_min));
    nd->chunk = c >= kLine ? c / kLine * kLine : c;
    const size_t g = m_min * static_cast<size_t>(least) / (m_min + static_cast<size_t>(n));
    nd->gchunk = g >= kLine ? g / kLine * kLine : g;
    nd->least_half = static_cast<size_t>(least) / 2;
  }
}

CommState* g_last_state = nullptr;

CommState* TakenOrNodes(MPI_Comm comm) {
  // (the attribute look-up costs a tenth of a small call under Open MPI: the last state is kept)
  if (g_last_state && g_last_state->comm == comm) return g_last_state;
  CommState* st = GetState(comm);
  if (!st || !(st->taken || st->nodes)) return nullptr;
  st->comm = comm;
  g_last_state = st;
  return st;
}

void FreeNodes(CommState* st) {
  Nodes* nd = st->nodes;
  if (!nd) return;
  Forget(st);
  st->nodes = nullptr;
  st->taken = false;
  if (nd->seg) Unmap(nd->seg);
  delete nd->seg;
  // (inside the host's MPI_Finalize the host frees them itself)
  if (!g_finalizing) {
    if (nd->leaders != MPI_COMM_NULL) PMPI_Comm_free(&nd->leaders);
    if (nd->peers != MPI_COMM_NULL) PMPI_Comm_free(&nd->peers);
    if (nd->node_comm != MPI_COMM_NULL) PMPI_Comm_free(&nd->node_comm);
  }
  delete nd;
}

bool LeadersAgree(Nodes& nd, bool ok) { return nd.leader() && AllAgree(ok, nd.leaders); }

bool LeadersAgreeMax(Nodes& nd, bool ok, uint64_t* pieces, bool* all) {
  long long v[3] = {ok ? 0 : 1, static_cast<long long>(*pieces), all && !*all ? 1 : 0};
  const bool done = PMPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_LONG_LONG, MPI_MAX, nd.leaders) == MPI_SUCCESS;
  *pieces = static_cast<uint64_t>(v[1]);
  if (all) *all = done && v[2] == 0;
  return done && v[0] == 0;
}

// (The leader writes into the other ranks' halves, which they do not use in
// these stages: a round starts when every rank has read the round two before,
// the last one to use those halves.)
bool NodeScatter(Nodes& nd, const std::vector<Span>& mine, bool ok) {
  CommState& s = *nd.seg;
  const size_t piece = s.half();
  uint64_t need = std::max<uint64_t>(1, Ceil(Total(mine), piece));
  std::vector<Cursor> src;
  std::vector<size_t> left;
  if (nd.leader() && ok)
    for (const auto& v : nd.out) {
      src.emplace_back(v);
      left.push_back(Total(v));
      need = std::max(need, Ceil(left.back(), piece));
    }
  Cursor dst(mine);
  auto fill = [&](uint64_t) {
    if (!nd.leader()) return;
    for (size_t l = 0; l < src.size(); ++l) {
      const size_t k = std::min(piece, left[l]);
      src[l].Move<true>(s.slot_of(static_cast<int>(l)), k);
      left[l] -= k;
    }
  };
  auto drain = [&](uint64_t) { dst.Move<false>(s.slot_of(nd.lrank), piece); };
  return Rounds(s, need, ok, fill, drain);
}

bool NodeBcast(Nodes& nd, const char* data, size_t bytes, const std::vector<Span>& mine, bool ok) {
  CommState& s = *nd.seg;
  const size_t half = s.half(), chunk = half * static_cast<size_t>(nd.ln);  // every rank's half
  Cursor dst(mine);
  auto fill = [&](uint64_t r) {
    if (!nd.leader()) return;
    for (size_t off = static_cast<size_t>(r) * chunk, l = 0; l < static_cast<size_t>(nd.ln) && off < bytes;
         ++l, off += half)
      std::memcpy(s.slot_of(static_cast<int>(l)), data + off, std::min(half, bytes - off));
  };
  auto drain = [&](uint64_t) {
    for (int l = 0; l < nd.ln; ++l) dst.Move<false>(s.slot_of(l), half);
  };
  return Rounds(s, std::max<uint64_t>(1, Ceil(bytes, chunk)), ok, fill, drain);
}

}  // namespace shmcoll_accel

using namespace shmcoll_accel;

extern "C" {

__attribute__((visibility("default"))) int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) AfterInit();
  return rc;
}

__attribute__((visibility("default"))) int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) AfterInit();
  return rc;
}

}  // extern "C"
