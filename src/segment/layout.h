// The layout of the shared segment that every rank of a job maps.
//
//   [ SegmentHeader | RankArea 0 | RankArea 1 | ... | RankArea N-1 ]
//
// Everything is addressed by offsets from the segment base (ranks may map it
// at different addresses).  Each RankArea is written by its owner rank and
// read by peers; it is a multiple of 4 KiB so the launcher can place each one
// on its owner's NUMA node (mbind before the memory is reserved).  Every
// control word that one rank writes and others poll sits on its own 64-byte
// cache line, so a store by one writer invalidates only the readers of that
// one word.
//
// Per-rank memory (the bound the collectives issue asks us to state):
//   kRankCtlBytes + kMaxContexts * kCtxBytes + 2 * laneArea(N)
//   + kAheadLanes * kAheadLaneBytes + kWideSlots * kWideBytes
//   + kNumSlots * (128 + slotAckBytes(N) + slotBytes)
//   + 128 + kP2pCells * kP2pCellBytes
// rounded up to 4 KiB, plus the rank's MPI_Alloc_mem heap (default 2 MiB),
// where laneArea(N) = max(64 KiB, 64 N) rounded up to 4 KiB and
// slotAckBytes(N) = N bits rounded up to 64 bytes.  With the default
// 64 KiB slots and no heap that is 1012 KiB per rank at N = 2 and at
// N = 1024.  Communicators cost nothing here beyond their line set
// (kCtxBytes), and only kMaxContexts of them have one (runtime/ids.h).
//
// Launcher <-> rank protocol (environment of each rank):
//   SHMCOLL_RANK, SHMCOLL_SIZE     this rank and the job size
//   SHMCOLL_SEG_FD                 fd of the segment, inherited across exec
//   SHMCOLL_SEG_SIZE               its size in bytes
//   SHMCOLL_JOBID                  the job id written into the header
// The name in /dev/shm is unlinked before any rank starts, so nothing can
// attach to it and nothing is left behind however the job ends.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace shmcoll::segment {

constexpr uint64_t kMagic = 0x4c4c4f434d485301ull;  // "\x01SHMCOLL"
constexpr uint32_t kVersion = 16;  // 16: the wide slots behind the ring; 15: slots alternate across operations (transport::slotOf); 14: cmaSlow; 13: ring lanes of 68 lines (12: 65; 11: 64 of 1 KiB; 10: the ring)
constexpr size_t kLine = 64;
constexpr size_t kPage = 4096;
constexpr uint32_t kMaxContexts = 256;           // line sets (CtxLines) per rank: communicators that have one
constexpr uint32_t kNumSlots = 2;                // mailbox double buffering
constexpr size_t kDefaultSlotBytes = 64 * 1024;  // when the L2 size is unknown (defaultSlotBytes)
// Point-to-point cells (p2p/): each rank owns kP2pCells cells of
// kP2pCellBytes (a 64-byte header, then payload) that it fills and links into
// a receiver's queue; the receiver frees them when it has read them.
constexpr uint32_t kP2pCells = 64;
// Per-rank heap for MPI_Alloc_mem (SHMCOLL_ALLOC_MEM at launch).
constexpr size_t kDefaultHeapBytes = 2 * 1024 * 1024;
constexpr size_t kP2pCellBytes = 4096;

// Rank life-cycle states, written by the rank, read by the launcher.
enum RankState : uint32_t { kNotStarted = 0, kInitialized = 1, kFinalized = 2 };

struct alignas(kLine) Line64 {
  std::atomic<uint64_t> v;
  char pad[kLine - sizeof(std::atomic<uint64_t>)];
};
static_assert(sizeof(Line64) == kLine);

// Written once by the launcher (or by MPI_Init for a singleton) before any
// rank runs; then read-only except for the abort and attach lines.
struct alignas(kLine) SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t nranks;
  uint64_t jobId;
  uint64_t totalSize;
  uint64_t rankAreaOffset;  // offset of rank 0's area
  uint64_t rankAreaStride;  // bytes per rank area (multiple of kPage)
  uint32_t slotBytes;       // payload bytes of one mailbox slot
  uint32_t launcherPid;     // 0 for a singleton
  uint32_t ncores;          // cores available to the job (for the wait policy)
  uint32_t reserved0;
  // Offsets inside a RankArea.
  uint64_t ctxOffset;   // kMaxContexts * CtxLines
  uint64_t laneOffset;  // 2 lane areas (by sequence parity), then the broadcast ring; see LaneHeader
  uint64_t laneStride;  // bytes per lane area
  uint64_t slotOffset;  // kNumSlots slots
  uint64_t slotStride;
  uint64_t p2pOffset;   // P2pQueue, then kP2pCells cells of kP2pCellBytes
  uint64_t heapOffset;  // the MPI_Alloc_mem heap, heapBytes long (page aligned)
  uint64_t heapBytes;

  // Abort word: 0 while the job runs; the first rank to abort stores rank+1
  // into abortRank (compare-exchange), then why into abortKind and its code
  // into abortCode.
  alignas(kLine) std::atomic<int32_t> abortRank;
  std::atomic<int32_t> abortCode;
  std::atomic<int32_t> abortKind;  // AbortKind
  // Ranks that have mapped the segment.
  alignas(kLine) std::atomic<uint32_t> attached;
  // Ranks whose probe of their neighbour failed in MPI_Init (process_vm_readv,
  // mapping its shared heap): one word for all, so that no rank reads every
  // rank's control line (a page fault per rank and peer).
  std::atomic<uint32_t> cmaRefused;
  std::atomic<uint32_t> heapRefused;
  // Ranks that found process_vm_readv slow in MPI_Init (runtime/context.cc).
  std::atomic<uint32_t> cmaSlow;
  // Ranks that asked for MPI_THREAD_MULTIPLE in MPI_Init (before its first
  // barrier): when any did, no communicator of the job gets engine lines
  // (wait/serial.h).
  std::atomic<uint32_t> threadMultiple;
  // Ranks that will not run membarrier(2) before they sleep (wait/wait.h,
  // "Announcing without a fence"): when any will not, every waker fences.
  std::atomic<uint32_t> fenceRefused;
  // Ranks asleep on their futex right now (wait/wait.h): with ncores, how
  // many ranks compete for the cores.
  alignas(kLine) std::atomic<uint32_t> sleepers;
};

// First lines of every rank's area.
struct alignas(kLine) RankCtl {
  // Line 0: identity and state, written by the owner.
  uint32_t pid;
  std::atomic<uint32_t> state;  // RankState
  int32_t cpu;                  // core it was bound to, -1 if unbound
  int32_t numaNode;             // NUMA node its area was placed on, -1 if unknown
  uint64_t cmaProbeAddr;        // address of a word in this rank that peers try to read with CMA
  uint64_t mapBase;             // where this rank mapped the segment (peers translate its addresses)
  std::atomic<uint32_t> cmaOk;  // 0 unknown, 1 this rank could read its neighbour, 2 it could not
  // This rank's shared malloc heap (os/shared_heap.h), which peers map to
  // copy out of its large buffers: descriptor number (-1 if none), address
  // and reserve here; its inode is on line 1.
  int32_t heapFd;
  std::atomic<uint32_t> heapOk;  // 0 unknown, 1 this rank could map its neighbour's heap, 2 it could not
  uint32_t pad0;
  uint64_t heapBase;
  uint64_t heapBytes;
  // Line 1: wake-up word.  Peers bump `wake` and futex-wake it when `sleeping`
  // is set; the owner futex-waits on it.  Both live on one line because every
  // waker touches both.
  alignas(kLine) std::atomic<uint32_t> wake;
  std::atomic<uint32_t> sleeping;
  uint64_t heapIno;  // (written once, before the job's first barrier)
  // Below heapBase + heapLow the heap is private to the rank (frozen by a
  // fork, os/shared_heap.h): peers must not read it through the memfd.  It
  // moves when the rank forks (before fork() returns, so before any later
  // send of the rank is posted) and when the heap is made whole again.
  std::atomic<uint64_t> heapLow;
};
constexpr size_t kRankCtlBytes = 2 * kLine;
static_assert(sizeof(RankCtl) == kRankCtlBytes);

// Per communicator context, two lines written only by the owner:
//  consumed: sequence number of the last exchange whose inputs the owner has
//            finished reading (so peers may reuse the lanes and buffers they
//            published for it)
//  barrier:  dissemination-barrier round counter
struct CtxLines {
  Line64 consumed;
  Line64 barrier;
};
constexpr size_t kCtxBytes = sizeof(CtxLines);

// Lanes: how a collective tells each reader what it sends it.  Every rank
// owns two lane areas, used by the parity of the operation's sequence number.
// For an operation on a team of n ranks an area is cut into n lanes of
// laneBytes(n) (a multiple of 64), lane p for the team's rank p; an operation
// that sends every reader the same block (the allgather family, bcast) uses
// one lane spanning the whole area.  A lane starts with this header; the
// owner fills the rest, then release-stores `tag`, so one cache line carries
// the announcement, the byte count and the first 48 bytes of an inline
// payload.  A reader that sees the tag of its operation may read the lane
// until it reports that operation finished (transport/lanes.h has the reuse
// rule).
//
// An inline payload of 49 to 440 bytes goes on in the lane's next lines, 56
// bytes each, every such line ending in a stamp: the lane's tag, release-stored
// after the line's bytes.  So a writer may publish the tag as soon as the first
// line is written and a reader may take each line as it arrives (with two
// ranks, a 256-byte block then costs about one cache-line transfer instead of
// two in a row); a reader takes a line only once its stamp shows the tag.
// A longer payload simply follows the header (the tag is stored after all of
// it): with more lines, a reader polling each one as the writer fills it
// costs more than it saves.
struct LaneHeader {
  std::atomic<uint64_t> tag;  // laneTag(seq, ctx) of the operation the lane holds; 0 = never used
  uint64_t bytes;             // bytes for the reader, ORed with one of the kLane* kinds
  // Then, by kind: kLaneInline: the payload; kLanePull: the sender's address of
  // the bytes (uint64_t); kLaneStream: their offset in the sender's stream.
  // A pair with several parts (transport/parts.h) sends their bytes end to
  // end, inline or streamed as one block; pulled, its lane has kLaneParts too
  // and, for each of its `count` parts, where it is and how long:
  // {count, (address, bytes) x count} (uint64_t each).
};
constexpr size_t kLaneHeaderBytes = 16;
constexpr size_t kLaneFirstPayload = kLine - kLaneHeaderBytes;  // 48: inline bytes in the header's line
constexpr size_t kLaneLinePayload = kLine - 8;                  // 56: in each later line, before its stamp
constexpr size_t kLaneStampedLines = 8;
constexpr size_t kLaneStampedMax = kLaneFirstPayload + (kLaneStampedLines - 1) * kLaneLinePayload;  // 440
// True when an inline payload of `bytes` has stamped lines.
constexpr bool laneStamped(uint64_t bytes) { return bytes > kLaneFirstPayload && bytes <= kLaneStampedMax; }
// Lines an inline payload of `bytes` takes, header line included.
constexpr uint64_t laneInlineLines(uint64_t bytes) {
  if (bytes <= kLaneFirstPayload) return 1;
  if (bytes <= kLaneStampedMax) return 1 + (bytes - kLaneFirstPayload + kLaneLinePayload - 1) / kLaneLinePayload;
  return (kLaneHeaderBytes + bytes + kLine - 1) / kLine;
}
// The longest inline payload a lane of `laneBytes` (a multiple of 64) holds.
constexpr uint64_t laneInlineCapacity(uint64_t laneBytes) {
  if (laneBytes < kLine) return 0;
  if (laneBytes >= kLaneStampedLines * kLine) return laneBytes - kLaneHeaderBytes;
  return laneBytes / kLine * kLaneLinePayload - (kLaneLinePayload - kLaneFirstPayload);
}
static_assert(laneInlineLines(48) == 1 && laneInlineLines(49) == 2 && laneInlineLines(104) == 2 &&
              laneInlineLines(105) == 3 && laneInlineLines(440) == 8 && laneInlineLines(441) == 8 &&
              laneInlineLines(497) == 9);
static_assert(laneInlineCapacity(64) == 48 && laneInlineCapacity(128) == 104 && laneInlineCapacity(448) == 384 &&
              laneInlineCapacity(512) == 496);
constexpr uint64_t kLaneInline = 1ull << 63;
constexpr uint64_t kLanePull = 1ull << 62;  // the reader pulls the bytes from the sender's buffer
constexpr uint64_t kLaneStream = 0;
constexpr uint64_t kLaneParts = 1ull << 61;  // with kLanePull: a list of (address, bytes), one per part
// With kLaneInline, in a lane of the broadcast ring: the payload is not in the
// lane but in the sender's wide slots, in the lane format, at the byte offset
// the lane's body holds (uint64_t) from the first slot (kWideArea0).
constexpr uint64_t kLaneWide = 1ull << 60;
constexpr uint64_t kLaneKinds = kLaneInline | kLanePull | kLaneParts | kLaneWide;
constexpr size_t kMinLaneArea = 64 * 1024;
// The broadcast ring.  Behind its two lane areas a rank owns kAheadLanes
// small lanes of kAheadLaneBytes, lane areas 2 to kAheadLanes + 1 to the
// code that reuses areas (transport/lanes.h).  A rank that writes one small
// lane in a rooted collective (the root of MPI_Bcast, the others of a gather
// or reduce; MPI_Scatter's root, one piece of the lane per reader) writes
// operation seq's into lane 2 + seq % kAheadLanes, so it may run up to
// kAheadLanes calls ahead of its reader instead of one
// (coll/exchange_inline.h, "The broadcast ring").
constexpr uint32_t kAheadLanes = 64;
// (A 4 KiB block and the lane's header, and room for a scatter's blocks of
// 2 KiB to 2 readers and 1 KiB to 3 or 4: 68 lines.)
constexpr size_t kAheadLaneBytes = 4096 + 4 * kLine;
constexpr uint32_t kAheadArea0 = 2;
constexpr uint32_t aheadArea(uint64_t seq) { return kAheadArea0 + static_cast<uint32_t>(seq % kAheadLanes); }
// The wide slots.  Behind the ring a rank owns kWideSlots slots of
// kWideBytes, lane areas kWideArea0 to kWideArea0 + kWideSlots - 1 to the
// code that reuses areas.  A rooted collective's sender whose block is too
// large for a ring lane but fits a wide slot (12 KiB; split among a
// scatter's readers as a ring lane is) writes it into the next wide slot, taken in
// turn across calls and communicators, in the lane format, and puts in its
// ring lane a header of kind kLaneInline | kLaneWide that says where: so it
// may still run up to kWideSlots calls ahead of its readers, who find the
// call where they always do (coll/exchange_inline.h, "The wide slots").
constexpr uint32_t kWideSlots = 16;
// (A 12 KiB block and its header line, and blocks of 6 KiB to 2 readers and 4
// KiB to 3 with theirs: 195 lines.)
constexpr size_t kWideBytes = 12288 + 3 * kLine;
constexpr uint32_t kWideArea0 = kAheadArea0 + kAheadLanes;
// A wide slot split among a sender's `readers`, as a ring lane is
// (aheadSplitBytesOf): each one's piece, whole lines.
constexpr uint64_t wideSplitBytes(uint32_t readers) { return readers ? kWideBytes / kLine / readers * kLine : 0; }
static_assert(wideSplitBytes(1) == kWideBytes && wideSplitBytes(2) == 6208 && wideSplitBytes(3) == 4160);
// A ring lane split among a sender's `readers` (MPI_Scatter's root writes a
// block for each): reader i of them, in rank order without the sender, reads
// at i * aheadSplitBytes(readers), whole lines each; 0 when the readers do
// not fit a line each.
constexpr uint64_t aheadSplitBytesOf(uint32_t readers) {
  return readers ? kAheadLaneBytes / kLine / readers * kLine : 0;
}
// (A table: every inline call of a split ring asks, and a division costs more.)
inline constexpr auto kAheadSplit = [] {
  std::array<uint64_t, kAheadLaneBytes / kLine + 1> t{};
  for (uint32_t r = 0; r < t.size(); ++r) t[r] = aheadSplitBytesOf(r);
  return t;
}();
constexpr uint64_t aheadSplitBytes(uint32_t readers) { return readers < kAheadSplit.size() ? kAheadSplit[readers] : 0; }
static_assert(aheadSplitBytes(1) == 4352 && aheadSplitBytes(2) == 2176 && aheadSplitBytes(3) == 1408 &&
              aheadSplitBytes(4) == 1088 && aheadSplitBytes(5) == 832 && aheadSplitBytes(7) == 576 &&
              aheadSplitBytes(16) == 256 && aheadSplitBytes(68) == 64 && aheadSplitBytes(69) == 0);
// Where `reader` finds its piece of `sender`'s split ring lane, pieces of `piece` bytes.
constexpr uint64_t aheadPieceOffset(uint32_t sender, uint32_t reader, uint64_t piece) {
  return (reader < sender ? reader : reader - 1) * piece;
}
// Sequence numbers start at 1 and context ids are < 256, so (seq << 8) | ctx
// is never 0 and names one operation of the job.  The tag is that number
// scrambled by a bijection that keeps 0 at 0 (the 64-bit finalizer of
// MurmurHash3), so it is never 0 either.  Scrambled, because a reader looks for
// it where earlier operations may have left user bytes: a team of another size
// cuts the lane areas differently, and a long inline payload fills the stamp
// positions of the lines a shorter one stamps.  Those bytes would have to
// equal a pseudo-random 64-bit value, where (seq << 8) | ctx is a small
// integer that ordinary data may well contain.
constexpr uint64_t laneTag(uint64_t seq, uint32_t ctx) {
  uint64_t x = (seq << 8) | ctx;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}
static_assert(laneTag(1, 0) != 0 && laneTag(1, 0) != laneTag(1, 1) && laneTag(2, 0) != laneTag(1, 0));
static_assert(kMaxContexts <= 256);

// The incoming point-to-point queue of a rank: a multi-producer,
// single-consumer linked list of cells (any rank's), linked by offsets from
// the segment base.  Producers exchange `tail` and then link the previous
// tail's `next`; the consumer alone walks from its private head.  `anchor` is
// the queue's own empty node (its first word is its `next`); a tail of 0
// (freshly zeroed memory) stands for the anchor.
struct alignas(kLine) P2pQueue {
  std::atomic<uint64_t> tail;
  char pad[kLine - 8];
  alignas(kLine) std::atomic<uint64_t> anchorNext;
};
static_assert(sizeof(P2pQueue) == 2 * kLine);

// The header of a point-to-point cell (p2p/p2p.cc says what each kind means).
struct alignas(kLine) CellHeader {
  std::atomic<uint64_t> next;  // queue link: offset of the next cell, 0 = none
  std::atomic<uint32_t> busy;  // set by the owner when it fills the cell, cleared by the reader
  uint8_t kind;
  uint8_t flags;
  uint16_t reserved;
  uint32_t ctx;  // matching context
  int32_t tag;
  int32_t srcRank;    // sender's rank in the communicator (as the receiver names it)
  uint32_t srcWorld;  // sender's world rank
  uint64_t total;     // bytes of the whole message
  uint64_t bytes;     // payload bytes in this cell
  uint64_t id;        // a request id (which side's depends on the kind)
  uint64_t aux;       // kind-specific: an address, an offset or a second id
};
static_assert(sizeof(CellHeader) == kLine);

// A mailbox slot: header line, ack line, the acknowledgement bits (one per
// world rank, slotAckBytes(N)), then payload.  A reader acknowledges a chunk
// by incrementing `acks`, or, when the chunk is `tracked`, by setting its bit
// (transport/stream.h says why a sender must then know who acknowledged).
struct alignas(kLine) SlotHeader {
  std::atomic<uint64_t> tag;  // (seq, ctx, chunk) of the chunk currently held, see transport/stream.h
  uint64_t seq;               // full sequence number and context of that chunk, checked after the tag
  uint32_t ctx;
  uint32_t tracked;       // nonzero: readers acknowledge through their bit, not `acks`
  uint64_t streamOffset;  // stream bytes [streamOffset, streamOffset + bytes)
  uint64_t bytes;
  char pad[kLine - 40];
  alignas(kLine) std::atomic<uint32_t> acks;  // readers that are done with this chunk (untracked)
};
constexpr size_t kSlotHeaderBytes = sizeof(SlotHeader);
static_assert(kSlotHeaderBytes == 2 * kLine);
constexpr size_t slotAckBytes(uint32_t nranks) { return (size_t{nranks} + 511) / 512 * kLine; }

// Sizes derived from the job size and the slot size.
struct Layout {
  uint32_t nranks = 0;
  uint32_t slotBytes = 0;
  uint64_t rankAreaOffset = 0;
  uint64_t rankAreaStride = 0;
  uint64_t ctxOffset = 0;
  uint64_t laneOffset = 0;
  uint64_t laneStride = 0;
  uint64_t slotOffset = 0;
  uint64_t slotStride = 0;
  uint64_t p2pOffset = 0;
  uint64_t heapOffset = 0;
  uint64_t heapBytes = 0;
  uint64_t totalSize = 0;
};

// Computes the layout for `nranks` ranks and slots of `slotBytes` (rounded up
// to 64).  Pure: used by the launcher to size the segment and by tests.
Layout computeLayout(uint32_t nranks, size_t slotBytes = kDefaultSlotBytes, size_t heapBytes = 0);
// The slot size a job gets when neither SHMCOLL_SLOT_BYTES nor the decision
// table (slot_bytes) says: a quarter of this machine's L2 cache, so the two
// slots and the pieces copied into and out of them stay in it, as a power of
// two from 64 KiB to 1 MiB; kDefaultSlotBytes when the size is unknown.
size_t defaultSlotBytes();

// Writes the header for `layout` into a zeroed segment at `base`.
void initHeader(void* base, const Layout& layout, uint64_t jobId, uint32_t launcherPid, uint32_t ncores);

// Checks a mapped segment's header: magic, version, sizes.  Returns 0 or an
// MPI error class with a reason (see common/status.h).
int validateHeader(const void* base, size_t mappedSize, uint32_t expectRanks);

// Why a rank ended the job (SegmentHeader::abortKind).
enum AbortKind : int32_t {
  kAbortCalled = 0,  // the program called MPI_Abort
  kAbortFatal = 1,   // an error on a communicator whose handler is MPI_ERRORS_ARE_FATAL; the code is its class
};

// Accessors over a mapped segment.
class View {
 public:
  View() = default;
  explicit View(void* base) : base_(static_cast<char*>(base)), hdr_(static_cast<SegmentHeader*>(base)) {}

  SegmentHeader* header() const { return hdr_; }
  uint32_t nranks() const { return hdr_->nranks; }
  char* rankArea(uint32_t r) const { return base_ + hdr_->rankAreaOffset + r * hdr_->rankAreaStride; }
  RankCtl* ctl(uint32_t r) const { return reinterpret_cast<RankCtl*>(rankArea(r)); }
  CtxLines* ctx(uint32_t r, uint32_t c) const {
    return reinterpret_cast<CtxLines*>(rankArea(r) + hdr_->ctxOffset + c * kCtxBytes);
  }
  // Lane area `which` of rank r (0 or 1; from kAheadArea0, a lane of the
  // broadcast ring; from kWideArea0, a wide slot), and the size of one lane
  // for a team of n.
  char* laneArea(uint32_t r, uint32_t which) const {
    const uint64_t off = which < kAheadArea0  ? which * hdr_->laneStride
                         : which < kWideArea0 ? kAheadArea0 * hdr_->laneStride + (which - kAheadArea0) * kAheadLaneBytes
                                              : kAheadArea0 * hdr_->laneStride + uint64_t{kAheadLanes} * kAheadLaneBytes +
                                                    (which - kWideArea0) * kWideBytes;
    return rankArea(r) + hdr_->laneOffset + off;
  }
  uint64_t laneBytes(uint32_t n) const { return (hdr_->laneStride / n) & ~uint64_t{kLine - 1}; }
  uint64_t laneAreaBytes() const { return hdr_->laneStride; }
  SlotHeader* slot(uint32_t r, uint32_t s) const {
    return reinterpret_cast<SlotHeader*>(rankArea(r) + hdr_->slotOffset + s * hdr_->slotStride);
  }
  P2pQueue* p2pQueue(uint32_t r) const { return reinterpret_cast<P2pQueue*>(rankArea(r) + hdr_->p2pOffset); }
  uint64_t cellOffset(uint32_t r, uint32_t i) const {
    return hdr_->rankAreaOffset + r * hdr_->rankAreaStride + hdr_->p2pOffset + sizeof(P2pQueue) + i * kP2pCellBytes;
  }
  char* heap(uint32_t r) const { return rankArea(r) + hdr_->heapOffset; }
  template <class T>
  T* at(uint64_t off) const {
    return reinterpret_cast<T*>(base_ + off);
  }
  // The acknowledgement bits of rank r's slot s: bit (q % 64) of word q / 64 is world rank q's.
  std::atomic<uint64_t>* slotAcks(uint32_t r, uint32_t s) const {
    return reinterpret_cast<std::atomic<uint64_t>*>(reinterpret_cast<char*>(slot(r, s)) + kSlotHeaderBytes);
  }
  char* slotPayload(uint32_t r, uint32_t s) const {
    return reinterpret_cast<char*>(slot(r, s)) + hdr_->slotStride - hdr_->slotBytes;
  }
  uint32_t slotBytes() const { return hdr_->slotBytes; }
  char* base() const { return base_; }

 private:
  char* base_ = nullptr;
  SegmentHeader* hdr_ = nullptr;
};

}  // namespace shmcoll::segment
