// Algorithm: streamed exchange through the sender's mailbox slots, with
// single-copy (CMA) pulls for large contiguous blocks.
//
// How it works.  Each rank lays out everything it sends as one logical byte
// stream: its blocks for peers me+1, me+2, ..., me-1 one after another (for
// the allgather family the stream is just its one block, read by everyone).
// It publishes a table, indexed by peer, of (bytes, offset in the stream) and
// raises its `posted` line to the operation's sequence number.  Blocks that
// are contiguous in the sender and at least `cmaMin` bytes are left out of the
// stream: the table gives their address instead and the receiver pulls them
// with process_vm_readv straight into its receive layout (one copy).
// The stream flows through the sender's two mailbox slots in chunks of the
// slot size: chunk k goes to slot k % 2 once every reader of chunk k - 2 has
// acknowledged it, so the sender packs chunk k+1 while receivers unpack chunk
// k.  A receiver keeps a cursor per sender and takes whatever chunk is ready
// from any sender, starting each sweep at me-1, me-2, ... (the order senders
// stream in, so pairs at one distance tend to move together).  Because a
// receiver never blocks on one sender while a chunk from another is waiting
// for its acknowledgement, every published chunk is eventually consumed and
// the exchange cannot deadlock, whatever the block sizes (in particular for
// the allgather family, where every chunk has readers at every distance); and
// one heavy pair does not hold back the others.  Zero-byte pairs cost one
// table read and nothing else.  A rank interleaves producing and consuming in
// one loop and sleeps (channel/wait.h) only when neither can move.
//
// Safety across operations and communicators.  A table is chosen by the
// parity of the sequence number and rewritten only after every reader of its
// previous use has raised its `consumed` line past that use; a slot is
// rewritten only after all readers of its last chunk acknowledged it; chunk
// tags carry (seq, ctx, chunk) and are checked against the full sequence
// number, so a reader never takes a stale chunk.
//
// Cost per rank, stream of B bytes out and B bytes in: B bytes packed + B
// unpacked through the slots (two copies in total per byte), or one copy for
// CMA blocks; n-1 table reads; ceil(B / slot) chunk hand-offs of about three
// cache-line transfers each.  Memory: fixed per rank (two slots), any message size.
//
// Chosen as "hybrid" by default, "segment" with CMA off, "single_copy" with
// CMA for every contiguous block however small (see registry.cc).
#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include <mpi.h>

#include "channel/wait.h"
#include "coll/coll.h"
#include "coll/streamed.h"
#include "common/status.h"
#include "copy/copy.h"

namespace shmcoll::coll {

namespace {

using segment::TableEntry;

constexpr uint64_t kTableCma = segment::kTableCma;

uint64_t makeTag(uint64_t seq, uint32_t ctx, uint64_t chunk) {
  return (seq << 32) ^ (uint64_t{ctx} << 24) ^ (chunk & 0xffffff) ^ (1ull << 63);
}

// One part of this rank's outgoing stream: the block for `peer`.
struct Part {
  uint32_t peer;
  uint64_t off;
  uint64_t bytes;
};


class Run {
 public:
  Run(Team& team, const ExchangeArgs& a, const StreamParams& prm)
      : e_(engine()), seg_(e_.seg), team_(team), a_(a), prm_(prm) {}

  int go() {
    const uint32_t n = team_.size();
    me_ = team_.rank;
    seq_ = team_.next();
    ctx_ = team_.ctxId;
    slot_ = seg_.slotBytes();
    int status = selfCopy(a_.broadcast ? a_.send(0) : a_.send(me_), a_.recv(me_));
    if (status) statusReason_ = lastReason();
    if (n == 1) return finish(status);

    SHMCOLL_CHECK(planAndPost());

    initConsumer();
    while (!(producerDone() && consumerDone())) {
      bool moved = produce();
      int rc = 0;
      moved |= consume(&rc);
      if (rc) return rc;
      if (!moved) {
        SHMCOLL_CHECK(channel::waitUntil(e_.self(), [&] { return canProduce() || canConsume(); }));
      }
    }
    if (mismatch_ && !status) {
      status = mismatch_;
      statusReason_ = mismatchReason_;
    }
    // Everything addressed to us has been read: release the senders.
    seg_.ctx(e_.rank, ctx_)->consumed.v.store(seq_, std::memory_order_release);
    channel::wakeAll(team_.members, me_, [&](uint32_t r) { return seg_.ctl(r); });
    if (anyCma_) {
      // Our user buffer is being read in place: stay until every reader is done.
      for (uint32_t p = 0; p < n; ++p) {
        if (p == me_ || !sendsTo(p)) continue;
        segment::Line64& c = seg_.ctx(team_.members[p], ctx_)->consumed;
        SHMCOLL_CHECK(channel::waitUntil(e_.self(), [&] { return c.v.load(std::memory_order_acquire) >= seq_; }));
      }
    }
    return finish(status);
  }

 private:
  enum Stage { kWaitPosted, kPull };

  int finish(int status) {
    if (status) return fail(status, "%s", statusReason_.c_str());
    return 0;
  }

  // ---- producer ------------------------------------------------------------

  int planAndPost() {
    const uint32_t n = team_.size();
    const uint32_t t = static_cast<uint32_t>(seq_ & 1);
    // The table for this parity is free once the readers of its last use are done.
    TableUse& use = e_.tableUse[t];
    for (uint32_t r : use.readers) {
      segment::Line64& c = seg_.ctx(r, use.ctx)->consumed;
      SHMCOLL_CHECK(channel::waitUntil(e_.self(), [&] { return c.v.load(std::memory_order_acquire) >= use.seq; }));
    }
    use.ctx = ctx_;
    use.seq = seq_;
    use.readers.clear();
    for (uint32_t p = 0; p < n; ++p)
      if (p != me_ && sendsTo(p)) use.readers.push_back(team_.members[p]);
    nReaders_ = static_cast<uint32_t>(use.readers.size());

    TableEntry* tab = seg_.table(e_.rank, t);
    parts_.clear();
    streamBytes_ = 0;
    anyCma_ = false;
    if (a_.broadcast) {
      Block b = a_.send(0);
      uint64_t bytes = b.bytes();
      dt::Cursor cur(b.buf, b.count, b.type);
      bool cma = useCma(bytes, cur);
      for (uint32_t p = 0; p < n; ++p) {
        if (p == me_ || !sendsTo(p)) continue;
        if (cma)
          tab[p] = {bytes | kTableCma, reinterpret_cast<uint64_t>(cur.contiguousBase())};
        else
          tab[p] = {bytes, 0};
      }
      anyCma_ = cma && nReaders_ > 0;
      if (!cma && bytes && nReaders_ > 0) {
        parts_.push_back({me_, 0, bytes});
        streamBytes_ = bytes;
      }
    } else {
      for (uint32_t d = 1; d < n; ++d) {
        uint32_t p = (me_ + d) % n;
        if (!sendsTo(p)) continue;
        Block b = a_.send(p);
        uint64_t bytes = b.bytes();
        if (bytes == 0) {
          tab[p] = {0, 0};
          continue;
        }
        dt::Cursor cur(b.buf, b.count, b.type);
        if (useCma(bytes, cur)) {
          tab[p] = {bytes | kTableCma, reinterpret_cast<uint64_t>(cur.contiguousBase())};
          anyCma_ = true;
        } else {
          tab[p] = {bytes, streamBytes_};
          parts_.push_back({p, streamBytes_, bytes});
          streamBytes_ += bytes;
        }
      }
    }
    chunks_ = (streamBytes_ + slot_ - 1) / slot_;
    nextChunk_ = 0;
    partIdx_ = 0;
    partCursorFor_ = UINT32_MAX;
    seg_.ctx(e_.rank, ctx_)->posted.v.store(seq_, std::memory_order_release);
    channel::wakeAll(team_.members, me_, [&](uint32_t r) { return seg_.ctl(r); });
    return 0;
  }

  bool sendsTo(uint32_t p) const { return a_.allPairs || a_.sends(p); }
  bool receivesFrom(uint32_t p) const { return a_.allPairs || a_.receives(p); }

  bool useCma(uint64_t bytes, const dt::Cursor& cur) const {
    return prm_.allowCma && bytes > 0 && bytes >= prm_.cmaMin && cur.contiguous() &&
           (e_.cma || inSegment(cur.contiguousBase(), bytes));
  }

  bool producerDone() const { return nextChunk_ >= chunks_; }

  bool canProduce() const {
    if (producerDone()) return false;
    uint32_t s = static_cast<uint32_t>(nextChunk_ % segment::kNumSlots);
    return seg_.slot(e_.rank, s)->acks.load(std::memory_order_acquire) >= e_.slotExpected[s];
  }

  // Packs as many chunks as free slots allow.
  bool produce() {
    bool moved = false;
    while (canProduce()) {
      const uint64_t k = nextChunk_;
      const uint32_t s = static_cast<uint32_t>(k % segment::kNumSlots);
      segment::SlotHeader* h = seg_.slot(e_.rank, s);
      char* payload = seg_.slotPayload(e_.rank, s);
      const uint64_t begin = k * slot_;
      const uint64_t end = std::min<uint64_t>(begin + slot_, streamBytes_);
      uint32_t readers = 0;
      // Pack parts overlapping [begin, end).
      while (partIdx_ < parts_.size() && parts_[partIdx_].off + parts_[partIdx_].bytes <= begin) ++partIdx_;
      size_t i = partIdx_;
      firstWake_.clear();
      for (; i < parts_.size() && parts_[i].off < end; ++i) {
        const Part& pt = parts_[i];
        uint64_t lo = std::max(begin, pt.off), hi = std::min(end, pt.off + pt.bytes);
        if (partCursorFor_ != i) {
          Block b = a_.broadcast ? a_.send(0) : a_.send(pt.peer);
          partCursor_ = dt::Cursor(b.buf, b.count, b.type);
          partCursorFor_ = static_cast<uint32_t>(i);
        }
        partCursor_.pack(lo - pt.off, payload + (lo - begin), hi - lo);
        ++readers;
        firstWake_.push_back(pt.peer);
      }
      if (a_.broadcast) readers = nReaders_;
      e_.slotExpected[s] = readers;
      h->acks.store(0, std::memory_order_relaxed);
      h->seq = seq_;
      h->ctx = ctx_;
      h->streamOffset = begin;
      h->bytes = end - begin;
      h->tag.store(makeTag(seq_, ctx_, k), std::memory_order_release);
      if (a_.broadcast) {
        channel::wakeAll(team_.members, me_, [&](uint32_t r) { return seg_.ctl(r); });
      } else {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        for (uint32_t p : firstWake_) channel::wakeIfSleeping(seg_.ctl(team_.members[p]));
      }
      ++nextChunk_;
      moved = true;
    }
    return moved;
  }

  // ---- consumer ------------------------------------------------------------

  // Progress through one sender's bytes for us.
  struct From {
    uint32_t teamRank;
    Stage stage;
    uint64_t chunk, begin, end, use;
    dt::Cursor cursor;
  };

  void initConsumer() {
    const uint32_t n = team_.size();
    from_.clear();
    for (uint32_t d = 1; d < n; ++d) {
      const uint32_t q = (me_ + n - d) % n;
      if (receivesFrom(q)) from_.push_back({q, kWaitPosted, 0, 0, 0, 0, {}});
    }
  }

  bool consumerDone() const { return from_.empty(); }

  bool ready(const From& f) const {
    const uint32_t q = team_.members[f.teamRank];
    if (f.stage == kWaitPosted) return seg_.ctx(q, ctx_)->posted.v.load(std::memory_order_acquire) >= seq_;
    const uint32_t s = static_cast<uint32_t>(f.chunk % segment::kNumSlots);
    return seg_.slot(q, s)->tag.load(std::memory_order_acquire) == makeTag(seq_, ctx_, f.chunk);
  }

  bool canConsume() const {
    for (const From& f : from_)
      if (ready(f)) return true;
    return false;
  }

  void noteMismatch(uint32_t q, uint64_t theirs, uint64_t ours) {
    if (mismatch_) return;
    mismatch_ = theirs > ours ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT;
    char buf[256];
    snprintf(buf, sizeof buf,
             "rank %u sent %llu bytes to rank %u but the receive block holds %llu bytes "
             "(type signatures differ between sender and receiver)",
             q, (unsigned long long)theirs, me_, (unsigned long long)ours);
    mismatchReason_ = buf;
  }

  // Advances sender f as far as it can go without waiting; returns true when
  // it is finished.  Sets *moved when anything happened.
  bool advance(From& f, bool* moved, int* rc) {
    const uint32_t q = team_.members[f.teamRank];
    while (ready(f)) {
      if (f.stage == kWaitPosted) {
        const TableEntry& te = seg_.table(q, static_cast<uint32_t>(seq_ & 1))[me_];
        const uint64_t bytes = te.bytes & ~kTableCma;
        Block rb = a_.recv(f.teamRank);
        const uint64_t want = rb.bytes();
        if (bytes != want) noteMismatch(f.teamRank, bytes, want);
        f.use = std::min(bytes, want);
        f.cursor = dt::Cursor(rb.buf, rb.count, rb.type);
        *moved = true;
        if (bytes == 0) return true;
        if (te.bytes & kTableCma) {
          *rc = cmaPull(q, te.where, f.cursor, f.use);
          return true;
        }
        f.begin = te.where;
        f.end = te.where + bytes;
        f.chunk = f.begin / slot_;
        f.stage = kPull;
        continue;
      }
      const uint32_t s = static_cast<uint32_t>(f.chunk % segment::kNumSlots);
      segment::SlotHeader* h = seg_.slot(q, s);
      if (h->seq != seq_ || h->ctx != ctx_) return false;  // a stale tag that happens to match: keep waiting
      const char* payload = seg_.slotPayload(q, s);
      const uint64_t cb = f.chunk * slot_;
      const uint64_t lo = std::max(cb, f.begin);
      const uint64_t hi = std::min(cb + slot_, f.end);
      const uint64_t pos = lo - f.begin;  // position within the pair's bytes
      if (pos < f.use) f.cursor.unpack(pos, payload + (lo - cb), std::min(hi, f.begin + f.use) - lo);
      h->acks.fetch_add(1, std::memory_order_acq_rel);
      channel::wakePeer(seg_.ctl(q));
      *moved = true;
      if (hi >= f.end) return true;
      ++f.chunk;
    }
    return false;
  }

  bool consume(int* rc) {
    bool moved = false;
    for (size_t i = 0; i < from_.size();) {
      if (advance(from_[i], &moved, rc)) {
        from_.erase(from_.begin() + static_cast<long>(i));
      } else {
        ++i;
      }
      if (*rc) return moved;
    }
    return moved;
  }

  Engine& e_;
  segment::View& seg_;
  Team& team_;
  const ExchangeArgs& a_;
  StreamParams prm_;
  uint32_t me_ = 0, ctx_ = 0;
  uint64_t seq_ = 0, slot_ = 0;
  // producer
  std::vector<Part> parts_;
  std::vector<uint32_t> firstWake_;
  uint64_t streamBytes_ = 0, chunks_ = 0, nextChunk_ = 0;
  size_t partIdx_ = 0;
  uint32_t partCursorFor_ = UINT32_MAX;
  dt::Cursor partCursor_;
  bool anyCma_ = false;
  uint32_t nReaders_ = 0;  // peers that read what this rank publishes
  // consumer
  std::vector<From> from_;
  int mismatch_ = 0;
  std::string mismatchReason_, statusReason_;
};

}  // namespace

// Copies the self block (sender == receiver) without going through shared memory.
int selfCopy(const Block& s, const Block& r) {
  uint64_t sb = s.bytes(), rb = r.bytes();
  int rc = 0;
  if (sb != rb)
    rc = fail(sb > rb ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
              "this rank sends %llu bytes to itself but its receive block holds %llu bytes",
              (unsigned long long)sb, (unsigned long long)rb);
  uint64_t n = std::min(sb, rb);
  if (n == 0) return rc;
  if (s.buf == r.buf && s.type == r.type && s.count == r.count) return rc;  // in place
  dt::Cursor sc(s.buf, s.count, s.type), rcur(r.buf, r.count, r.type);
  if (sc.contiguous() && rcur.contiguous()) {
    std::memmove(rcur.contiguousBase(), sc.contiguousBase(), n);
  } else if (rcur.contiguous()) {
    sc.pack(0, rcur.contiguousBase(), n);
  } else if (sc.contiguous()) {
    rcur.unpack(0, sc.contiguousBase(), n);
  } else {
    alignas(64) static thread_local char bounce[64 * 1024];
    for (uint64_t pos = 0; pos < n; pos += sizeof bounce) {
      uint64_t len = std::min<uint64_t>(sizeof bounce, n - pos);
      sc.pack(pos, bounce, len);
      rcur.unpack(pos, bounce, len);
    }
  }
  return rc;
}

// Pulls `len` bytes at `remote` in rank `rank` into stream bytes [0, len) of
// `dst`: a plain copy when the bytes lie in the shared segment (MPI_Alloc_mem
// memory: the peer's address translates into our mapping), else one
// process_vm_readv per batch of receive runs.
int cmaPull(uint32_t rank, uint64_t remote, dt::Cursor& dst, uint64_t len) {
  const Engine& e = engine();
  const segment::RankCtl* peer = e.seg.ctl(rank);
  const uint64_t total = e.seg.header()->totalSize;
  if (remote >= peer->mapBase && remote - peer->mapBase <= total && len <= total - (remote - peer->mapBase)) {
    if (len) dst.unpack(0, e.seg.base() + (remote - peer->mapBase), len);
    return 0;
  }
  const pid_t pid = static_cast<pid_t>(peer->pid);
  constexpr size_t kMaxIov = 512;
  struct iovec local[kMaxIov];
  uint64_t pos = 0;
  while (pos < len) {
    uint64_t covered = 0;
    size_t k = dst.iov(pos, len - pos, local, kMaxIov, &covered);
    struct iovec rem = {reinterpret_cast<void*>(remote + pos), covered};
    ssize_t got = process_vm_readv(pid, local, k, &rem, 1, 0);
    if (got <= 0)
      return fail(MPI_ERR_OTHER, "single-copy read of %llu bytes from pid %d failed: %s (set SHMCOLL_CMA=0)",
                  (unsigned long long)covered, static_cast<int>(pid), strerror(errno));
    pos += static_cast<uint64_t>(got);
  }
  return 0;
}

bool inSegment(const void* p, uint64_t len) {
  const Engine& e = engine();
  const char* base = e.seg.base();
  const uint64_t total = e.seg.header()->totalSize;
  const char* q = static_cast<const char*>(p);
  return q >= base && static_cast<uint64_t>(q - base) <= total && len <= total - static_cast<uint64_t>(q - base);
}

int streamedExchange(Team& team, const ExchangeArgs& args, const StreamParams& prm) {
  Run run(team, args, prm);
  return run.go();
}

}  // namespace shmcoll::coll
