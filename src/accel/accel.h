// The accelerator: shmcoll's shared-memory collectives inside an Open MPI or
// MPICH job, through the profiling interface (docs/ARCHITECTURE.md, "The
// accelerator").  Compiled once per host MPI, against that host's mpi.h.
//
// Every MPI_ function it defines either completes the collective itself
// ("taken") or calls the host's PMPI_ function with the same arguments
// ("passed").  A call is taken only when every process of the communicator
// takes it: local reasons to decline (a datatype it does not handle, a memory
// shortage) are agreed on inside the first round of the collective, before
// any receive buffer is written, so all processes then pass it together.
#ifndef SHMCOLL_ACCEL_ACCEL_H
#define SHMCOLL_ACCEL_ACCEL_H

#include <mpi.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "os/peer_heap.h"

namespace shmcoll::dt {
class Type;  // the engine's datatype description (src/dt/datatype.h)
}

namespace shmcoll_accel {

constexpr size_t kLine = 64;

// Per-rank flags at the start of the segment, two cache lines per rank: the
// first is written by the rank when it has filled its slot for a round, the
// second when it has finished reading the others' slots for that round.
// Each slot has two halves used by rounds of alternate parity, so a rank may
// fill the next round's half while the others still read this one's; the
// verdicts of round 0 have a copy per parity for the same reason.  A
// round's data of at most kTiny bytes per writer (Tiny: an allgather's block,
// an alltoall's block between 2 processes, a small reduction's contribution)
// goes in the post line itself, also by parity, so a reader takes one line
// from the writer's core instead of two.
constexpr size_t kTiny = 16;
struct alignas(kLine) PostLine {
  std::atomic<uint64_t> posted;  // sequence number of the last round filled
  // round 0's verdict, by parity: (rounds this rank needs) << 2 | pushed << 1 | takes, where
  // takes: this rank takes the call; pushed: its single-copy blocks of the call go through
  // the pieces instead (CommState::cma_slow and a block outside its shared heap)
  std::atomic<uint64_t> verdict[2];
  alignas(16) char tiny[2][kTiny];
};
static_assert(sizeof(PostLine) == kLine);
struct alignas(kLine) ReadLine {
  std::atomic<uint64_t> consumed;  // sequence number of the last round read
};
struct alignas(kLine) RankFlags {
  PostLine post;
  ReadLine read;
};
static_assert(sizeof(RankFlags) == 2 * kLine);

// One side of a block: the user's buffer, count and datatype, resolved into
// contiguous bytes (the buffer itself, or a place in CommState::stmp/rtmp).
struct Side {
  const void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  size_t bytes = 0;
  bool packed = false;                         // a derived type: goes through stmp/rtmp
  const shmcoll::dt::Type* decoded = nullptr;  // packed by the engine (else by the host's PMPI_Pack)
  bool copy = false;                           // contiguous but copied to stmp first (MPI_IN_PLACE alltoall)
  size_t tmp_off = 0;                          // offset in stmp/rtmp
  char* ptr = nullptr;                         // contiguous bytes of the block
};

// The eager area after the slots (eager.cc): per rank a line with the count
// of eager calls it has finished, then kEagerDepth entries, each a header
// line and kEagerData bytes.  Calls use CommState::eager_depth of them:
// all where the processes outnumber the cores (a root runs further ahead of
// readers waiting for a core), else 8 (fewer lines, kept in the caches).
constexpr uint64_t kEagerDepth = 32, kEagerDepthAlone = 8;
constexpr size_t kEagerData = 1024;
constexpr size_t kEagerEntry = kLine + kEagerData;
// Blocks of at most 40 bytes go in a ring of kEagerSmallDepth head lines
// alone, after the entries (eager.cc).
constexpr uint64_t kEagerSmallDepth = 256;
constexpr size_t kEagerPerRank = kLine + kEagerDepth * kEagerEntry + kEagerSmallDepth * kLine;

struct Nodes;  // nodes.cc: a communicator spanning several (pretend) nodes

// The state of one communicator, cached in an attribute of it.
struct CommState {
  bool taken = false;  // one node, segment mapped (over several nodes: false, and `nodes` set)
  int n = 0, me = 0;
  size_t slot = 0;       // bytes of each rank's slot
  char* base = nullptr;  // the mapping: n RankFlags, then n slots
  size_t map_bytes = 0;
  uint64_t seq = 0;                    // rounds run so far (the same on every rank)
  unsigned spin = 256;                 // pauses before a wait yields: 0 when the processes outnumber the cores
  // A node segment's processes on the machine, where more than n: a pretend
  // node's (SHMCOLL_FAKE_NODES) share the machine's cores with the other
  // pretend nodes there, so they count for spin and crowded.  0: n.
  int on_machine = 0;
  bool crowded = false;                // ... on every process (agreed: the reductions' paths depend on it)
  size_t eager = 0;                    // bcast and reduce blocks of at most this many bytes are eager (agreed; 0: none)
  uint64_t eager_depth = kEagerDepth;  // entries in use (the same on every rank: from n and the node's cores)
  uint64_t eager_calls = 0;            // eager calls so far (the same on every rank)
  uint64_t eager_seen = 0;             // the least count of finished eager calls seen among the ranks
  bool area_used = false;  // the last round wrote outside the half-slots (hier_alltoall.cc): the next waits for all
  // The rank the next barrier lets out first (engine.cc, Barrier): a bcast's
  // root, or in a pair the rank that is not a reduce's root; it holds while
  // seq and eager_calls are what they were after that call, i.e. until any
  // other call runs here.  -1: none.  Set alike on every rank.
  int lead = -1;
  uint64_t lead_seq = 0, lead_eager = 0;
  void SetLead(int r) {
    lead = r;
    lead_seq = seq;
    lead_eager = eager_calls;
  }
  std::vector<char> stmp, rtmp;  // packed send / receive data of derived types
  // Single copy (engine.cc): every process may read every other's memory with
  // process_vm_readv (probed and agreed at set-up, ProbeCma); their pids.
  bool cma = false;
  size_t cma_min = 0;        // CmaMin for this node, agreed (the least among its processes)
  size_t bcast_cma_min = 0;  // the same for MPI_Bcast: kBcastCrowdedCmaMin where crowded and not set
  std::vector<long> pids;
  // process_vm_readv is slow here (most of the node's processes found it more
  // than SHMCOLL_CMA_SLOW_FACTOR times a copy, os/cma_cost.h; not judged where
  // SHMCOLL_ACCEL_CMA_MIN is set, unless the factor is set too): a sender
  // whose single-copy blocks do not all lie in its shared heap sends them
  // through the pieces instead, and says so in round 0 (push_mine, read by
  // every rank into pushed[sender]; PushPrivate below).
  bool cma_slow = false;
  bool push_mine = false;     // for the next RunRounds: its round 0 posts it and clears it
  std::vector<char> pushed;  // by rank, from the last round 0 (RunRounds)
  // Our read-only mappings of the node's processes' shared malloc heaps (the
  // library's malloc serves large requests from a memfd, os/shared_heap.h): a
  // single-copy block that lies in its sender's heap is copied straight out of
  // the mapping, with no system call (CmaPull).  By node rank, sized at the
  // first such block; heap_refused[j]: rank j's heap could not be mapped (read
  // with process_vm_readv from then on).
  std::vector<shmcoll::os::PeerHeapMap> heaps;
  std::vector<char> heap_refused;
  // The sides of the call in progress (entry.cc, engine.cc): kept, so a call allocates nothing.
  std::vector<Side> send_sides, recv_sides, one_side;
  MPI_Comm comm = MPI_COMM_NULL;               // the communicator, once TakenOrNodes has cached it
  CommState *prev = nullptr, *next = nullptr;  // list of mapped states
  // Several nodes: no segment of its own, `taken` false, and the hierarchy here
  // (hier.cc, hier_alltoall.cc, hier_reduce.cc).
  Nodes* nodes = nullptr;

  RankFlags* flags(int r) const { return reinterpret_cast<RankFlags*>(base) + r; }
  size_t half() const { return slot / 2; }  // bytes a round moves through one slot
  // the slots as one area (n * slot bytes, after the flags)
  char* area() const { return base + sizeof(RankFlags) * n; }
  // rank r's half-slot for round s (by its parity), and for the current round (seq)
  char* half_of(int r, uint64_t s) const { return area() + slot * static_cast<size_t>(r) + (s & 1) * half(); }
  char* slot_of(int r) const { return half_of(r, seq); }
  // rank r's tiny area (PostLine::tiny) for the current round
  char* tiny_of(int r) const { return flags(r)->post.tiny[seq & 1]; }
  char* eager_area() const { return area() + slot * static_cast<size_t>(n); }
};

// setup.cc: the state of a communicator, set up at its first collective
// (collective over comm); nullptr when it cannot be looked up.
CommState* GetState(MPI_Comm comm);
void UnmapAll();      // at MPI_Finalize (also ends HostProgress's request)
void HostProgress();  // lets the host progress its pending operations
bool Enabled();       // SHMCOLL_ACCEL=0 declines everything
extern std::atomic<long> g_taken, g_passed;
extern bool g_finalizing;               // set by UnmapAll
extern std::atomic<long> g_across;      // calls taken by the hierarchical path (nodes.cc)
extern std::atomic<long> g_direct;      // ... of them alltoalls whose blocks between nodes went direct
extern std::atomic<long> g_single;      // calls whose blocks moved by single copy (engine.cc)
extern std::atomic<long> g_heap_reads;  // ... blocks of them read out of a sender's shared malloc heap
extern std::atomic<long> g_pushed;      // calls whose single-copy blocks this process sent through the pieces
extern std::atomic<long> g_eager;       // eager bcasts and reduces (eager.cc)
// Maps a segment for comm (all on one node) into st: collective, agreed.
bool MapSegment(CommState* st, MPI_Comm comm);
bool AllAgree(bool ok, MPI_Comm comm);  // PMPI_Allreduce(MIN) of ok
// SHMCOLL_ACCEL_CMA_MIN: blocks of at least this many bytes move by
// process_vm_readv (0: never); unset, 8 KiB where every process of the node
// has a core of its own (alone), else 64 KiB.  MapSegment agrees st->cma_min;
// ProbeCma then sets st->cma and st->pids, collectively.
size_t CmaMin(bool alone);
bool CmaMinSet();  // SHMCOLL_ACCEL_CMA_MIN is set
constexpr size_t kBcastCrowdedCmaMin = size_t{256} << 10;
// An environment variable of bytes (k, m suffixes), or dflt when unset or not a number.
size_t EnvBytes(const char* name, size_t dflt);
// A variable holding a whole number from 1 to max (decimal, nothing after it), else 0.
int EnvCount(const char* name, int max);
void ProbeCma(CommState* st, MPI_Comm comm);
// Reads len bytes at `src` in process `pid` into dst; false on any failure.
bool CmaRead(long pid, char* dst, const char* src, size_t len);
void Unmap(CommState* st);

// nodes.cc: the node split and the state of a communicator over several nodes.
MPI_Comm PretendSplit(MPI_Comm node, int comm_rank);  // frees node; MPI_COMM_NULL on failure
// (machine: comm's processes on this process's machine, which the node segment's
// set-up counts where they are more than the node's: pretend nodes)
void SetUpNodes(CommState* st, MPI_Comm comm, MPI_Comm node, int machine);
// The state of comm when it is taken on one node or has the hierarchy (every
// function has a hierarchical version: hier.cc, hier_alltoall.cc, hier_reduce.cc).
CommState* TakenOrNodes(MPI_Comm comm);
void FreeNodes(CommState* st);
// The last state TakenOrNodes returned (only a taken one, and so never under
// MPI_THREAD_MULTIPLE); cleared when that state is unmapped, freed or deleted.
extern CommState* g_last_state;
inline void Forget(const CommState* st) {
  if (g_last_state == st) g_last_state = nullptr;
}

// datatype.cc: describes buf/count/type (the block at element displacement
// disp); false when it is not handled.
bool Describe(const void* buf, MPI_Aint disp, int count, MPI_Datatype type, Side* side);
// decode.cc: the engine's description of a type, decoded at its first use and
// kept on the type (a predefined type gives one of the engine's, builtin, for
// datatype.cc to keep in its own table); nullptr when the host packs it
// itself (or SHMCOLL_ACCEL_DECODE=0).  Derived types decoded (true) or left
// to the host (false) so far.
const shmcoll::dt::Type* Decoded(MPI_Datatype type);
long TypesDecoded(bool decoded);
// Lays out the packed sides in tmp and packs the send sides; false on failure.
bool PackSends(std::vector<Side>& sides, std::vector<char>& tmp, MPI_Comm comm);
bool LayoutRecvs(std::vector<Side>& sides, std::vector<char>& tmp);
// A staging buffer of at least total bytes; false when memory is short.
bool Grow(std::vector<char>& tmp, size_t total);
void UnpackRecvs(std::vector<Side>& sides, std::vector<char>& tmp, MPI_Comm comm);

// engine.cc: the collectives; true when taken (completed here).
// single_copy: blocks of at least SHMCOLL_ACCEL_CMA_MIN bytes may be read
// straight out of the senders' buffers (where st.cma); each block's choice is
// made by its bytes, which its sender and its receiver both know.
bool Alltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm,
              bool single_copy = false);
bool Allgather(CommState& st, Side& send, std::vector<Side>& recv, bool in_place, bool ok, MPI_Comm comm,
               bool single_copy = false);
bool Bcast(CommState& st, Side& side, int root, bool ok, MPI_Comm comm);
// Single copy's pieces (engine.cc): whether a block of `bytes` moves so; a
// header offering `bytes` at `ptr`, written at `at` (in round 0, where the
// block's data would go); the read of what rank `peer` offered at `at`
// (at most `want` bytes), which ends the job when the header is not there or
// the read fails (fn: the MPI function, for the message).
bool Single(const CommState& st, size_t bytes);
// Where process_vm_readv is slow (CommState::cma_slow), single-copy blocks
// of at most PushMax(st) bytes outside their sender's shared heap go through
// the pieces instead; where every process has a core, larger ones still
// pay for the call (on the VM of docs/PERFORMANCE.md, 2026-11-30, evening,
// the pieces won up to 64 KiB and lost from 256 KiB at N = 2); where the
// processes outnumber the cores, none does (the call lost 2-3x at 128 and
// 256 KiB, N = 3 to 8).  PushPrivate: whether this process sends its
// single-copy blocks of at most PushMax(st) bytes so: st.cma_slow, and one of
// sides[0, count) but sides[skip], of `bound` to PushMax(st) bytes, lies
// outside the part of its shared heap that peers may map.  Pushed: whether
// rank j's block of `bytes` comes through the pieces (it said so in round 0).
constexpr size_t kPushMax = size_t{64} << 10;
inline size_t PushMax(const CommState& st) { return st.crowded ? SIZE_MAX : kPushMax; }
bool PushPrivate(const CommState& st, const Side* sides, size_t count, size_t skip, size_t bound);
inline bool Pushed(const CommState& st, int j, size_t bytes) {
  return bytes <= PushMax(st) && st.pushed[static_cast<size_t>(j)];
}
void CmaOffer(const CommState& st, char* at, const char* ptr, size_t bytes);
void CmaPull(CommState& st, const char* at, int peer, char* dst, size_t want, const char* fn, MPI_Comm comm);
bool Barrier(CommState& st);
// Ends the job after a message this process has just printed to stderr
// (setup.cc): waits a moment first, since a launcher that kills the job at
// once may drop output it has not yet forwarded (MPICH's did, one run in 20),
// and longer the higher its rank, since Open MPI 4.1's mpirun could hang
// when several processes aborted at once.
[[noreturn]] void EndJob(MPI_Comm comm);
struct Fold;  // reduce.cc, below
// eager.cc: MPI_Bcast and MPI_Reduce of at most st.eager bytes on one node
// (the caller has checked that, and st.nodes unset).  EagerCheck: before the
// rounds' path of a bcast (readers, for the root) or reduce (the root, for
// each other rank), ends the job when rank r took the eager path instead.
bool EagerBcast(CommState& st, const Side& side, int root, bool ok, MPI_Comm comm);
bool EagerReduce(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
                 MPI_Comm comm);
void EagerCheck(const CommState& st, int r, const char* fn, MPI_Comm comm);
// The rounds themselves, for the node stages of hier.cc.
bool Rounds(CommState& st, uint64_t rounds, bool ok, const std::function<void(uint64_t)>& fill,
            const std::function<void(uint64_t)>& drain);

// hier.cc, hier_alltoall.cc: the same collectives over several nodes (st.nodes).
bool HierAlltoall(CommState& st, std::vector<Side>& send, std::vector<Side>& recv, bool ok, MPI_Comm comm);
bool HierAllgather(CommState& st, Side& send, std::vector<Side>& recv, bool ok, MPI_Comm comm);
bool HierBcast(CommState& st, Side& side, int root, bool ok);
// Eager across the nodes (at most st.nodes->eager bytes, valid arguments); HierEagerCheck, before
// HierBcast with a valid root: ends the job when this node's broadcaster went eager instead.
bool HierEagerBcast(CommState& st, const Side& side, int root, MPI_Comm comm);
void HierEagerCheck(CommState& st, int root, MPI_Comm comm);
bool HierBarrier(CommState& st);

// reduce.cc: the reductions' rounds on one node's segment (st.nodes unset):
// allreduce (root < 0) or reduce of `count` elements from `in` into `out`
// (where this rank delivers a result), and reduce_scatter_block of n blocks
// of `count` elements into `out`.  The element kernel is f (declared below).
struct Fold;
// comm (a reduce's): a reduce of at least SHMCOLL_ACCEL_CMA_MIN bytes among
// at most 3 processes whose root reads at most kReduceCmaMax in all goes by
// single copy (ReduceCma: the root folds alone, which more processes share
// in the rounds); MPI_COMM_NULL (the node stage of the hierarchy): never.
constexpr size_t kReduceCmaMax = size_t{1} << 20;
bool ReduceRounds(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
                  MPI_Comm comm = MPI_COMM_NULL);
bool ReduceScatterRounds(CommState& st, const char* in, char* out, size_t count, const Fold& f, bool ok);
// hier_reduce.cc: the same over several nodes (st.nodes): root < 0 for allreduce.
bool HierReduce(CommState& st, const void* in, void* out, size_t count, const Fold& f, MPI_Datatype type, MPI_Op op,
                int root, bool ok);
bool HierReduceScatterBlock(CommState& st, const void* in, void* out, size_t count, const Fold& f, MPI_Datatype type,
                            MPI_Op op, bool ok);
// An MPI_Reduce of at most st.nodes->eager bytes (the caller has checked that), eagerly across the
// nodes; HierEagerReduceCheck, before HierReduce with a valid root: ends the job when a process of
// this node went eager instead (only the node's collector looks: the root, or another node's leader).
bool HierEagerReduce(CommState& st, const char* in, char* out, size_t count, const Fold& f, int root, bool ok,
                     MPI_Comm comm);
void HierEagerReduceCheck(CommState& st, int root, MPI_Comm comm);

// optable.cc: a predefined operation on a predefined type, as an element
// kernel over the type's memory form (elements `extent` bytes apart):
// inout[i] = in[i] (op) inout[i].  FindFold is false for anything else (user
// operations, derived or unmapped types, pairs the standard does not allow).
struct Fold {
  void (*fn)(int kind, const void* in, void* inout, uint64_t n) = nullptr;
  int kind = 0;
  size_t extent = 0;
  void apply(const void* in, void* inout, uint64_t n) const { fn(kind, in, inout, n); }
};
bool FindFold(MPI_Op op, MPI_Datatype type, Fold* fold);

// Every function looks its communicator up with TakenOrNodes (nullptr: the
// call goes to the host); Count records the outcome for SHMCOLL_ACCEL_REPORT.
// (SHMCOLL_ACCEL=0 is honoured inside the set-up, whose verdict every process shares.)
// report.cc: counts taken calls per function too (fn: the caller's name).
void NoteTaken(const char* fn);
void ReportCalls(int rank);  // SHMCOLL_ACCEL_REPORT=calls: one more line, the calls taken per function
// Counts a taken call or a step of one.  Calls are taken one at a time
// (only below MPI_THREAD_MULTIPLE), so a plain increment: a locked add
// would wait until the call's stores had left the core, an eager root's
// entry line among them, which the reader's core holds.
inline void Bump(std::atomic<long>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
inline bool Count(bool taken, const char* fn = __builtin_FUNCTION()) {
  if (taken) {
    Bump(g_taken);
    NoteTaken(fn);
  } else {
    g_passed.fetch_add(1, std::memory_order_relaxed);  // (passed calls may run at once, in threads)
  }
  return taken;
}

}  // namespace shmcoll_accel

#endif  // SHMCOLL_ACCEL_ACCEL_H
