// A round: the blocks that the members of a group send each other in one
// operation, moved all at once.  This is the transport's interface to the
// algorithms (coll/): an algorithm describes which member sends which block
// to which (Pairs) and runs one round per step.
//
// How a round moves a block.  For every pair (i, j) the sender i tells j what
// it sends through a lane (transport/lane.h): a piece of one of i's two lane
// areas, chosen by the parity of the operation's sequence number, lane j for
// reader j; a round that sends one block to everybody (broadcast) uses a
// single lane that all readers read.  By size and memory, the block then
//   - travels inline in the lane when it fits (RoundParams::inlineMax, capped
//     by the lane): one cache-line transfer for a small block, nothing
//     acknowledged;
//   - is pulled by the reader (transport/pull.h) when it is contiguous and
//     the reader can copy straight out of the sender's memory: at any size
//     when it lies in the segment or the sender's shared malloc heap, from
//     RoundParams::cmaMin bytes with process_vm_readv; the sender returns
//     only once those readers said they are done;
//   - else streams through the sender's mailbox slots (transport/stream.h).
// A receiver keeps a cursor per sender and takes whatever is ready from any
// sender, starting each sweep at me-1, me-2, ... (the order senders stream
// in, so pairs at one distance tend to move together).  Because a receiver
// never blocks on one sender while a chunk from another waits for its
// acknowledgement, every published chunk is eventually consumed and a round
// cannot deadlock, whatever the block sizes; one heavy pair does not hold back
// the others.  A rank writes its lanes first, then copies its own block (so
// peers start reading at once), then interleaves producing and consuming in
// one loop, sleeping (wait/wait.h) only when neither can move.  At the end it
// raises its `consumed` line (transport/lanes.h).
//
// A receiver compares the sender's byte count with its own; a difference
// gives err::kTruncate (the sender sends more) or err::kCount, only the
// common part is delivered, no byte is written outside the receive blocks,
// and every rank still returns.
//
// Empty pairs (Pairs::skipEmpty).  A receiver does not wait for a lane it
// expects no bytes from; senders still write every lane.  The skipped lanes
// are looked at only while the receiver waits anyway: one that carries bytes
// after all (an erroneous program) is consumed like any other, without
// writing, so its sender is not held up; a sender whose chunks such a
// receiver never acknowledges frees the slot once that receiver has finished
// the operation (transport::Slots::released).
//
// Cost per rank for blocks of b bytes to each of n-1 peers: inline, n-1 lane
// writes and n-1 lane reads of ceil((b + 16) / 64) lines each, two copies per
// byte and no waiting for acknowledgements; streamed, two copies per byte and
// ceil(B / slot) chunk hand-offs of about three line transfers for a stream
// of B bytes; pulled, one copy per byte (plus a system call per block with
// process_vm_readv).  Memory: fixed per rank (two lane areas, two slots),
// any message size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "dt/datatype.h"
#include "segment/layout.h"
#include "transport/block.h"
#include "transport/group.h"
#include "transport/stream.h"

namespace shmcoll::transport {

// Whether a member waits for a lane from `peer` in round `a` (Pairs::
// receivesFrom).  Called with the final argument class, its receives() and
// recv() are inlined rather than called through the vtable (the inline path
// asks it for every peer, twice).
template <class A>
inline bool receivesFrom(const A& a, uint32_t peer) {
  return (a.allPairs || a.receives(peer)) && (!a.skipEmpty || a.recv(peer).bytes() != 0);
}

// The blocks of one round, from one member's side, indexed by group rank.
class Pairs {
 public:
  // send(p) is the same block for every p (allgather family, bcast): the
  // sender announces it once, in a lane all readers share.  Must be the same
  // on every rank of the round, senders or not (readers look for it).
  bool broadcast = false;
  // A rooted operation whose senders write one lane each (MPI_Bcast's root,
  // the other ranks of a gather or reduce): a sender whose lane fits may
  // publish it in its broadcast ring (segment::aheadArea, the lane at offset
  // 0, or at ringOffset when split) rather than the lane area of the
  // operation's parity, and readers look in both, so that a sender and a
  // reader that disagree (counts that differ, erroneously) still meet.  The
  // same on every rank.
  bool ahead = false;
  // With `ahead`: the sender writes a lane to each of the other members
  // (MPI_Scatter's root), all in one ring lane split among them
  // (segment::aheadSplitBytes).  The same on every rank.
  bool aheadSplit = false;
  // Where `reader` finds `sender`'s lane in the sender's ring lane, in a group of n.
  uint64_t ringOffset(uint32_t sender, uint32_t reader, uint32_t n) const {
    return aheadSplit ? segment::aheadPieceOffset(sender, reader, segment::aheadSplitBytes(n - 1)) : 0;
  }
  virtual ~Pairs() = default;
  virtual Block send(uint32_t peer) const = 0;
  virtual Block recv(uint32_t peer) const = 0;
  // Pairs that the round leaves empty by definition, on both sides (the
  // non-root ranks of a rooted collective exchange nothing with each other):
  // they are skipped without writing or reading a lane, so such a round costs
  // O(1) control traffic on a rank outside those pairs.  When `allPairs` is
  // false, sends(p) on rank i must equal receives(i) on rank p.
  bool allPairs = true;
  virtual bool sends(uint32_t peer) const { return true; }
  virtual bool receives(uint32_t peer) const { return true; }
  // Shortcuts for the walks below (forSends, forReceives) in a sparse round,
  // set where they hold on this rank: it sends to nobody (noSends: a
  // broadcast's reader, a gather's root), receives from nobody (noReceives),
  // or pairs with one peer only (onlyPeer >= 0: a rooted collective's
  // non-root, whose one peer is the root).  They change no pair, only how
  // many ranks a walk looks at: O(1) rather than O(group size) on a non-root.
  bool noSends = false, noReceives = false;
  int64_t onlyPeer = -1;
  // A receiver does not wait for the pairs it expects no bytes from (see
  // above): in a sparse alltoallv no rank waits for a peer that sends it
  // nothing.
  bool skipEmpty = false;
  bool sendsTo(uint32_t peer) const { return allPairs || sends(peer); }
  bool receivesFrom(uint32_t peer) const { return transport::receivesFrom(*this, peer); }
  // A sparse round (allPairs false) may list the peers it pairs with, so
  // that its lanes, reads and wake-ups (here and on the inline path,
  // coll/exchange_inline.h) cost O(degree) rather than O(group size): the
  // ranks p with sends(p) (outPeers) and with receives(p) (inPeers),
  // increasing, this rank among them if it pairs with itself.  Null: every
  // rank is looked at.  With lists, only those peers are woken: the readers
  // of this rank's lanes and the senders that wait for its `consumed` line.
  virtual const std::vector<uint32_t>* outPeers() const { return nullptr; }
  virtual const std::vector<uint32_t>* inPeers() const { return nullptr; }
  // A pair this rank skips only because its receive block is empty.
  bool skipsEmpty(uint32_t peer) const { return skipEmpty && (allPairs || receives(peer)) && recv(peer).bytes() == 0; }

  // Pairs that carry several blocks in this one round (a neighbourhood
  // collective's repeated edges: a rank that is both neighbours of another
  // in a dimension of extent 2, a repeated graph edge).  Such a pair's parts
  // travel end to end as one block of their total size (transport/parts.h):
  // send(p) and recv(p) of the pair give that size only, as {nullptr, total
  // bytes, dt::byteType()}, and sendPart(p, k) / recvPart(p, k) the parts,
  // k < sendParts(p) / recvParts(p).  The k-th part of one side meets the
  // k-th of the other; a pulled pair's lane says each part's length and the
  // receiver checks them, the other kinds check only the total.
  bool multiPart = false;
  virtual uint32_t sendParts(uint32_t peer) const { return 1; }
  virtual uint32_t recvParts(uint32_t peer) const { return 1; }
  virtual Block sendPart(uint32_t peer, uint32_t k) const { return send(peer); }
  virtual Block recvPart(uint32_t peer, uint32_t k) const { return recv(peer); }
  bool sendsParts(uint32_t peer) const { return multiPart && sendParts(peer) > 1; }
  bool receivesParts(uint32_t peer) const { return multiPart && recvParts(peer) > 1; }
};

// The peers this rank sends to, in the order me + 1, me + 2, ... (mod n), and
// those it may receive from, in the order me - 1, me - 2, ...: from the
// round's lists when it has them (transport::Pairs::outPeers: O(degree)),
// else every rank.  f(p) returning non-zero stops the walk with that value.
template <class A, class F>
inline int forSends(const A& a, uint32_t n, uint32_t me, F&& f) {
  if (a.noSends) return 0;  // (the shortcuts: Pairs::noSends, Pairs::onlyPeer)
  if (a.onlyPeer >= 0) {
    const auto p = static_cast<uint32_t>(a.onlyPeer);
    return p != me && a.sendsTo(p) ? f(p) : 0;
  }
  if (const std::vector<uint32_t>* l = a.outPeers()) {
    const size_t m = l->size();
    size_t i = std::upper_bound(l->begin(), l->end(), me) - l->begin();
    for (size_t k = 0; k < m; ++k, ++i) {
      if (i == m) i = 0;
      const uint32_t p = (*l)[i];
      if (p != me && a.sendsTo(p)) SHMCOLL_CHECK(f(p));
    }
    return 0;
  }
  for (uint32_t d = 1; d < n; ++d) {
    const uint32_t p = me + d < n ? me + d : me + d - n;
    if (a.sendsTo(p)) SHMCOLL_CHECK(f(p));
  }
  return 0;
}
template <class A, class F>
inline int forReceives(const A& a, uint32_t n, uint32_t me, F&& f) {
  if (a.noReceives) return 0;
  if (a.onlyPeer >= 0) {
    const auto p = static_cast<uint32_t>(a.onlyPeer);
    return p != me ? f(p) : 0;
  }
  if (const std::vector<uint32_t>* l = a.inPeers()) {
    const size_t m = l->size();
    size_t i = std::lower_bound(l->begin(), l->end(), me) - l->begin();
    for (size_t k = 0; k < m; ++k) {
      i = i == 0 ? m - 1 : i - 1;
      const uint32_t p = (*l)[i];
      if (p != me) SHMCOLL_CHECK(f(p));
    }
    return 0;
  }
  for (uint32_t d = 1; d < n; ++d) SHMCOLL_CHECK(f(me >= d ? me - d : me + n - d));
  return 0;
}

// Copies a rank's parts to itself (selfCopy per part), or its one block.
int selfCopyParts(const Pairs& a, uint32_t me);

// How a round chooses between inline, pull and stream for a block.
struct RoundParams {
  bool allowPull = true;            // pull contiguous blocks out of the sender's memory
  uint64_t cmaMin = 0;              // ... with process_vm_readv when they are at least this many bytes
  uint64_t inlineMax = UINT64_MAX;  // largest block carried inline in its lane (also capped by the lane)
  // On groups of 3 or more, a sender's one block longer than a slot is pulled
  // with process_vm_readv when at least cmaSoloMin bytes and shorter than
  // cmaSoloMax: streamed, it would be a chunk-by-chunk handoff between two
  // ranks with nothing to overlap it (slow when ranks outnumber cores), while
  // past some length a streamed one wins again on some machines (shmcoll-tune
  // measures the band).
  uint64_t cmaSoloMin = UINT64_MAX;
  uint64_t cmaSoloMax = UINT64_MAX;
};

// Per-group memory a round reuses from call to call, so that a small round
// allocates nothing.
struct RoundScratch;

// Runs one round of operation `seq` (the group's next sequence number,
// taken by the caller) on `group`.  Returns 0, or err::kTruncate /
// err::kCount when a peer's byte count disagrees with ours (the common part
// is delivered and every rank still returns), or another error class.
int runRound(const Group& group, uint64_t seq, const Pairs& pairs, const RoundParams& prm, RoundScratch& scratch);

// What the inline fast path (coll/exchange_inline.h) hands back when some of
// the lanes it reads were not inline (a peer's block did not fit: an
// erroneous program, or different settings): the round's consumer reads
// them.  This rank published only inline lanes, so it produces nothing.
struct InlineLeftovers {
  uint64_t seq = 0, tag = 0;
  uint32_t area = 0;
  uint64_t laneBytes = 0;
  const uint32_t* peers = nullptr;  // group ranks
  uint32_t count = 0;
};
int finishInlineRound(const Group& group, const Pairs& pairs, const InlineLeftovers& left, RoundScratch& scratch);

RoundScratch* newRoundScratch();
void deleteRoundScratch(RoundScratch* s);

// Receive copies of at least this many bytes bypass the cache in a round
// whose data would not stay in it anyway (see round.cc).
constexpr size_t kNtRecvMin = 16 * 1024;

}  // namespace shmcoll::transport
