// The point-to-point engine (see p2p.h for the protocols).
//
// Cell kinds and what their header fields mean:
//   kEager  envelope + the whole packed message; flags kSyncFlag: answer ACK;
//           id = the sender's request id (for the ACK)
//   kRts    envelope of a large message; id = sender request id,
//           aux = address of the sender's contiguous data for a single-copy
//           pull (0: the sender will stream after CTS)
//   kCts    receiver -> sender: id = sender request id, aux = receiver request id
//   kData   sender -> receiver: id = receiver request id, aux = offset in the
//           message, bytes = payload bytes
//   kFin    receiver -> sender: the data was pulled; id = sender request id
//   kAck    receiver -> sender: a synchronous eager send matched; id as kFin
#include "p2p/p2p.h"

#include <mpi.h>

#include <algorithm>
#include <cstring>
#include <deque>
#include <list>
#include <memory>
#include <unordered_map>

#include "common/settings.h"
#include "common/status.h"
#include "copy/copy.h"
#include "transport/pull.h"
#include "transport/world.h"
#include "wait/wait.h"

namespace shmcoll::p2p {

namespace {

using segment::CellHeader;
using segment::kP2pCellBytes;
using segment::kP2pCells;

constexpr uint64_t kPayload = kP2pCellBytes - sizeof(CellHeader);
static_assert(kPayload == settings::spec(settings::Id::kP2pEager).dflt);  // SHMCOLL_P2P_EAGER's default
enum Kind : uint8_t { kEager = 1, kRts, kCts, kData, kFin, kAck };
constexpr uint8_t kSyncFlag = 1;

// A request keeps its datatype alive: MPI_Type_free may come before it
// completes, and the standard defers the free until then.
struct TypeHold {
  TypeHold() = default;
  TypeHold(const TypeHold&) = delete;
  TypeHold& operator=(const TypeHold&) = delete;
  const dt::Type* type = nullptr;
  void hold(const dt::Type* t) {
    dt::retain(t);
    type = t;
  }
  ~TypeHold() { dt::release(type); }
};

struct SendReq final : Request {
  SendReq() : Request(Kind::kSend) {}
  dt::Cursor cur;
  TypeHold held;
  Envelope env;
  uint64_t total = 0;
  uint64_t id = 0;
  uint64_t peerId = 0;    // the receiver's request id, from CTS
  uint64_t streamed = 0;  // bytes sent as DATA so far
  Mode mode = Mode::kStandard;
};

struct RecvReq final : Request {
  RecvReq() : Request(Kind::kRecv) {}
  dt::Cursor cur;
  TypeHold held;
  uint32_t ctx = 0;
  int source = kAnySource;
  int tag = kAnyTag;
  uint64_t id = 0;      // set while DATA is expected
  uint64_t got = 0;     // DATA bytes seen (delivered or dropped)
  bool posted = false;  // in the posted list (cancellable)
  bool cancel() override;
};

// A message that arrived before its receive (or was taken by MPI_Mprobe).
}  // namespace

struct Message {
  uint8_t kind = 0;
  uint8_t flags = 0;
  uint32_t ctx = 0;
  int32_t tag = 0;
  int32_t srcRank = 0;
  uint32_t srcWorld = 0;
  uint64_t total = 0;
  uint64_t senderId = 0;
  uint64_t addr = 0;
  std::vector<char> data;  // eager payload
};

namespace {

// An item of the outgoing FIFO: a message to push when a cell is free.
struct Out {
  uint8_t kind = 0;
  uint32_t dest = 0;
  SendReq* req = nullptr;  // kEager, kRts, kData: the send; kData streams until all is sent
  uint64_t id = 0;         // control messages
  uint64_t aux = 0;
};

class Endpoint {
 public:
  void init() {
    const transport::World& e = transport::world();
    seg_ = e.seg;
    me_ = e.rank;
    cma_ = transport::pulls().cma;
    queue_ = seg_.p2pQueue(me_);
    anchorOff_ = reinterpret_cast<char*>(&queue_->anchorNext) - seg_.base();
    head_ = anchorOff_;
    eagerMax_ = std::min<uint64_t>(kPayload, settings::tuned(settings::Id::kP2pEager, nullptr, e.size));
    cmaMin_ = settings::tuned(settings::Id::kP2pCmaMin, nullptr, e.size);
    for (uint32_t i = 0; i < kP2pCells; ++i) cellOff_[i] = seg_.cellOffset(me_, i);
    wait::gProgressHook = &Endpoint::hook;
  }
  void refreshCma() { cma_ = transport::pulls().cma && settings::flag(settings::Id::kCma); }

  static bool hook();

  Request* isend(const void* buf, uint64_t count, const dt::Type* type, const Envelope& env, Mode mode) {
    auto* s = new SendReq;
    s->cur = dt::Cursor(buf, count, type);
    s->held.hold(type);
    s->env = env;
    s->total = s->cur.totalBytes();
    s->mode = mode;
    s->status.bytes = s->total;
    startSend(s);
    return s;
  }

  int send(const void* buf, uint64_t count, const dt::Type* type, const Envelope& env, Mode mode) {
    dt::Cursor cur(buf, count, type);
    if (mode == Mode::kStandard && cur.totalBytes() <= eagerMax_ && out_.empty()) {
      if (CellHeader* c = grabCell()) {
        fillEnvelope(c, kEager, env, cur.totalBytes(), 0);
        c->bytes = cur.totalBytes();
        if (c->bytes) cur.pack(0, payload(c), c->bytes);
        push(env.destWorld, c);
        return 0;
      }
    }
    Request* r = isend(buf, count, type, env, mode);
    int rc = wait(r);
    if (rc == 0) delete r;
    return rc;
  }

  Request* irecv(void* buf, uint64_t count, const dt::Type* type, uint32_t ctx, int source, int tag) {
    auto* r = new RecvReq;
    r->cur = dt::Cursor(buf, count, type);
    r->held.hold(type);
    r->ctx = ctx;
    r->source = source;
    r->tag = tag;
    progress();
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
      if (matches(*r, **it)) {
        std::unique_ptr<Message> m = std::move(*it);
        unexpected_.erase(it);
        deliver(r, *m, m->data.data());
        return r;
      }
    }
    r->posted = true;
    posted_.push_back(r);
    return r;
  }

  bool iprobe(uint32_t ctx, int source, int tag, Status* st, Message** take) {
    progress();
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
      const Message& m = **it;
      if (m.ctx != ctx || (source != kAnySource && source != m.srcRank) || (tag != kAnyTag && tag != m.tag)) continue;
      if (st) {
        *st = Status{};
        st->source = m.srcRank;
        st->tag = m.tag;
        st->bytes = m.total;
        st->sent = m.total;
      }
      if (take) {
        *take = it->release();
        unexpected_.erase(it);
      }
      return true;
    }
    return false;
  }

  Request* imrecv(void* buf, uint64_t count, const dt::Type* type, Message* m) {
    auto* r = new RecvReq;
    r->cur = dt::Cursor(buf, count, type);
    r->held.hold(type);
    r->ctx = m->ctx;
    r->source = m->srcRank;
    r->tag = m->tag;
    deliver(r, *m, m->data.data());
    delete m;
    return r;
  }

  bool cancelRecv(RecvReq* r) {
    if (!r->posted) return false;
    posted_.erase(std::find(posted_.begin(), posted_.end(), r));
    r->posted = false;
    r->status = Status{};
    r->status.cancelled = true;
    complete(r);
    return true;
  }

  bool progress() {
    if (busy_) return false;
    busy_ = true;
    bool did = false;
    for (int k = 0; k < 1024; ++k) {
      uint64_t off = pop();
      if (!off) break;
      handle(seg_.at<CellHeader>(off));
      did = true;
    }
    if (!out_.empty()) did |= flush();
    if (!active_.empty()) {
      for (size_t i = 0; i < active_.size(); ++i) did |= active_[i]->step();
      size_t k = 0;
      for (size_t i = 0; i < active_.size(); ++i) {
        Request* r = active_[i];
        if (r->done) {
          if (r->freed) delete r;
        } else {
          active_[k++] = r;
        }
      }
      active_.resize(k);
    }
    busy_ = false;
    return did;
  }

  void addActive(Request* r) { active_.push_back(r); }

  bool contextBusy(uint32_t id) const {
    const uint32_t internal = kInternalCtx | id;
    for (const RecvReq* r : posted_)
      if (r->ctx == id || r->ctx == internal) return true;
    for (const Request* r : active_)
      if (!r->done && r->usesContext(internal)) return true;
    return false;
  }

  uint32_t cellsInUse() const {
    uint32_t n = 0;
    for (uint32_t i = 0; i < kP2pCells; ++i) n += cell(i)->busy.load(std::memory_order_acquire) != 0;
    return n;
  }

 private:
  CellHeader* cell(uint32_t i) const { return seg_.at<CellHeader>(cellOff_[i]); }
  static char* payload(CellHeader* c) { return reinterpret_cast<char*>(c) + sizeof(CellHeader); }
  std::atomic<uint64_t>* nextOf(uint64_t off) const { return seg_.at<std::atomic<uint64_t>>(off); }

  CellHeader* grabCell() {
    for (uint32_t k = 0; k < kP2pCells; ++k) {
      uint32_t i = (nextCell_ + k) % kP2pCells;
      CellHeader* c = cell(i);
      if (c->busy.load(std::memory_order_acquire) == 0) {
        nextCell_ = i + 1;
        c->busy.store(1, std::memory_order_relaxed);
        return c;
      }
    }
    return nullptr;
  }

  void fillEnvelope(CellHeader* c, uint8_t kind, const Envelope& env, uint64_t total, uint64_t id) {
    c->kind = kind;
    c->flags = 0;
    c->ctx = env.ctx;
    c->tag = env.tag;
    c->srcRank = env.srcRank;
    c->srcWorld = me_;
    c->total = total;
    c->bytes = 0;
    c->id = id;
    c->aux = 0;
  }

  // Links a filled cell into `dest`'s queue and wakes it.
  void push(uint32_t dest, CellHeader* c) {
    uint64_t off = reinterpret_cast<char*>(c) - seg_.base();
    c->next.store(0, std::memory_order_relaxed);
    segment::P2pQueue* q = seg_.p2pQueue(dest);
    uint64_t prev = q->tail.exchange(off, std::memory_order_acq_rel);
    std::atomic<uint64_t>* link = prev ? nextOf(prev) : &q->anchorNext;  // 0: the queue was never used (its anchor)
    link->store(off, std::memory_order_release);
    wait::wakePeer(seg_.ctl(dest));
  }

  // Takes the oldest cell from this rank's queue; 0 when none is ready.
  uint64_t pop() {
    uint64_t h = head_;
    uint64_t nxt = nextOf(h)->load(std::memory_order_acquire);
    if (h == anchorOff_) {
      if (!nxt) return 0;
      head_ = h = nxt;
      nxt = nextOf(h)->load(std::memory_order_acquire);
    }
    if (nxt) {
      head_ = nxt;
      return h;
    }
    uint64_t t = queue_->tail.load(std::memory_order_acquire);
    if (t != h) return 0;  // a producer is between its exchange and its link
    queue_->anchorNext.store(0, std::memory_order_relaxed);
    uint64_t prev = queue_->tail.exchange(anchorOff_, std::memory_order_acq_rel);
    nextOf(prev)->store(anchorOff_, std::memory_order_release);
    nxt = nextOf(h)->load(std::memory_order_acquire);
    if (nxt) {
      head_ = nxt;
      return h;
    }
    return 0;
  }

  void freeCell(CellHeader* c) {
    c->busy.store(0, std::memory_order_release);
    wait::wakePeer(seg_.ctl(c->srcWorld));
  }

  void startSend(SendReq* s) {
    if (s->total > eagerMax_ || s->mode == Mode::kSync) s->id = nextId_++;
    if (s->total > eagerMax_) sends_[s->id] = s;
    if (s->mode == Mode::kSync && s->total <= eagerMax_) sends_[s->id] = s;
    Out o;
    o.kind = s->total > eagerMax_ ? kRts : kEager;
    o.dest = s->env.destWorld;
    o.req = s;
    out_.push_back(o);
    flush();
  }

  void control(uint8_t kind, uint32_t dest, uint64_t id, uint64_t aux) {
    Out o;
    o.kind = kind;
    o.dest = dest;
    o.id = id;
    o.aux = aux;
    out_.push_back(o);
    flush();
  }

  // Pushes queued items while cells are free; true if any went out.
  bool flush() {
    bool did = false;
    while (!out_.empty()) {
      Out& o = out_.front();
      CellHeader* c = grabCell();
      if (!c) break;
      did = true;
      SendReq* s = o.req;
      switch (o.kind) {
        case kEager:
          fillEnvelope(c, kEager, s->env, s->total, s->id);
          if (s->mode == Mode::kSync) c->flags = kSyncFlag;
          c->bytes = s->total;
          if (s->total) s->cur.pack(0, payload(c), s->total);
          push(o.dest, c);
          if (s->mode != Mode::kSync) complete(s);
          out_.pop_front();
          break;
        case kRts:
          fillEnvelope(c, kRts, s->env, s->total, s->id);
          // The receiver pulls the data in one copy: a plain copy, at any
          // rendezvous size, when the buffer is in the segment or the shared
          // malloc heap; process_vm_readv from cmaMin_ bytes.
          if (s->cur.contiguous() && o.dest != me_ &&
              ((cma_ && s->total >= cmaMin_) || transport::peerReadable(s->cur.contiguousBase(), s->total)))
            c->aux = reinterpret_cast<uint64_t>(s->cur.contiguousBase());
          push(o.dest, c);
          out_.pop_front();
          break;
        case kData: {
          uint64_t len = std::min<uint64_t>(kPayload, s->total - s->streamed);
          c->kind = kData;
          c->flags = 0;
          c->srcWorld = me_;
          c->id = s->peerId;
          c->aux = s->streamed;
          c->bytes = len;
          c->total = s->total;
          s->cur.pack(s->streamed, payload(c), len);
          s->streamed += len;
          push(o.dest, c);
          if (s->streamed == s->total) {
            out_.pop_front();
            sends_.erase(s->id);
            complete(s);
          }
          break;
        }
        default:
          c->kind = o.kind;
          c->flags = 0;
          c->srcWorld = me_;
          c->id = o.id;
          c->aux = o.aux;
          c->bytes = 0;
          c->total = 0;
          push(o.dest, c);
          out_.pop_front();
          break;
      }
    }
    return did;
  }

  static bool matches(const RecvReq& r, const Message& m) {
    return r.ctx == m.ctx && (r.source == kAnySource || r.source == m.srcRank) && (r.tag == kAnyTag || r.tag == m.tag);
  }
  static bool matches(const RecvReq& r, const CellHeader& c) {
    return r.ctx == c.ctx && (r.source == kAnySource || r.source == c.srcRank) && (r.tag == kAnyTag || r.tag == c.tag);
  }

  void complete(Request* r) {
    r->done = true;
    if (r->freed && r->kind != Request::Kind::kOther) delete r;
  }

  SendReq* findSend(uint64_t id) {
    auto it = sends_.find(id);
    return it == sends_.end() ? nullptr : it->second;
  }

  void handle(CellHeader* c) {
    switch (c->kind) {
      case kEager:
      case kRts: {
        RecvReq* r = nullptr;
        for (auto it = posted_.begin(); it != posted_.end(); ++it) {
          if (matches(**it, *c)) {
            r = *it;
            posted_.erase(it);
            r->posted = false;
            break;
          }
        }
        Message m;
        m.kind = c->kind;
        m.flags = c->flags;
        m.ctx = c->ctx;
        m.tag = c->tag;
        m.srcRank = c->srcRank;
        m.srcWorld = c->srcWorld;
        m.total = c->total;
        m.senderId = c->id;
        m.addr = c->aux;
        if (r) {
          deliver(r, m, payload(c));
          freeCell(c);
        } else {
          auto u = std::make_unique<Message>(std::move(m));
          if (c->kind == kEager) u->data.assign(payload(c), payload(c) + c->bytes);
          freeCell(c);
          unexpected_.push_back(std::move(u));
        }
        break;
      }
      case kCts: {
        SendReq* s = findSend(c->id);
        uint64_t peer = c->aux;
        uint32_t from = c->srcWorld;
        freeCell(c);
        if (s) {
          s->peerId = peer;
          Out o;
          o.kind = kData;
          o.dest = from;
          o.req = s;
          out_.push_back(o);
        }
        break;
      }
      case kData: {
        auto it = recvs_.find(c->id);
        if (it != recvs_.end()) {
          RecvReq* r = it->second;
          uint64_t cap = r->cur.totalBytes();
          if (c->aux < cap) r->cur.unpack(c->aux, payload(c), std::min<uint64_t>(c->bytes, cap - c->aux));
          r->got += c->bytes;
          if (r->got >= r->status.sent) {
            recvs_.erase(it);
            complete(r);
          }
        }
        freeCell(c);
        break;
      }
      case kFin:
      case kAck: {
        SendReq* s = findSend(c->id);
        freeCell(c);
        if (s) {
          sends_.erase(s->id);
          complete(s);
        }
        break;
      }
      default:
        freeCell(c);
        break;
    }
  }

  // Delivers message `m` (payload: its eager bytes) into receive `r`.
  void deliver(RecvReq* r, const Message& m, const char* payload) {
    Status& st = r->status;
    st = Status{};
    st.source = m.srcRank;
    st.tag = m.tag;
    st.sent = m.total;
    uint64_t cap = r->cur.totalBytes();
    uint64_t n = std::min(m.total, cap);
    st.bytes = n;
    if (m.total > cap) st.error = MPI_ERR_TRUNCATE;
    if (m.kind == kEager) {
      if (n) r->cur.unpack(0, payload, n);
      if (m.flags & kSyncFlag) control(kAck, m.srcWorld, m.senderId, 0);
      complete(r);
      return;
    }
    if (m.srcWorld == me_) {
      // A message to self: copy from the sender's layout to the receiver's.
      if (SendReq* s = findSend(m.senderId)) {
        alignas(64) char bounce[16 * 1024];
        for (uint64_t pos = 0; pos < n; pos += sizeof bounce) {
          uint64_t len = std::min<uint64_t>(sizeof bounce, n - pos);
          s->cur.pack(pos, bounce, len);
          r->cur.unpack(pos, bounce, len);
        }
        sends_.erase(s->id);
        // The RTS may still sit in the FIFO only if it was never pushed, which
        // cannot be: it was popped from our own queue.
        complete(s);
      }
      complete(r);
      return;
    }
    if (m.addr) {
      if (transport::pull(m.srcWorld, m.addr, r->cur, n) == 0) {
        control(kFin, m.srcWorld, m.senderId, 0);
        complete(r);
        return;
      }
      // The kernel refused: fall back to streaming.
    }
    r->id = nextId_++;
    r->got = 0;
    recvs_[r->id] = r;
    control(kCts, m.srcWorld, m.senderId, r->id);
  }

  segment::View seg_;
  uint32_t me_ = 0;
  bool cma_ = false;
  segment::P2pQueue* queue_ = nullptr;
  uint64_t anchorOff_ = 0;
  uint64_t head_ = 0;
  uint64_t eagerMax_ = kPayload;
  uint64_t cmaMin_ = 0;
  uint64_t cellOff_[kP2pCells] = {};
  uint32_t nextCell_ = 0;
  uint64_t nextId_ = 1;
  bool busy_ = false;
  std::deque<Out> out_;
  std::list<RecvReq*> posted_;
  std::list<std::unique_ptr<Message>> unexpected_;
  std::unordered_map<uint64_t, SendReq*> sends_;
  std::unordered_map<uint64_t, RecvReq*> recvs_;
  std::vector<Request*> active_;
};

Endpoint gEndpoint;

bool Endpoint::hook() { return gEndpoint.progress(); }

bool RecvReq::cancel() { return gEndpoint.cancelRecv(this); }

}  // namespace

bool gOversubscribed = false;

void init(bool oversubscribed) {
  gOversubscribed = oversubscribed;
  gEndpoint.init();
  gEndpoint.refreshCma();
}

Request* isend(const void* buf, uint64_t count, const dt::Type* type, const Envelope& env, Mode mode) {
  return gEndpoint.isend(buf, count, type, env, mode);
}
int send(const void* buf, uint64_t count, const dt::Type* type, const Envelope& env, Mode mode) {
  return gEndpoint.send(buf, count, type, env, mode);
}
Request* irecv(void* buf, uint64_t count, const dt::Type* type, uint32_t ctx, int source, int tag) {
  return gEndpoint.irecv(buf, count, type, ctx, source, tag);
}
bool iprobe(uint32_t ctx, int source, int tag, Status* st, Message** msg) {
  return gEndpoint.iprobe(ctx, source, tag, st, msg);
}
Request* imrecv(void* buf, uint64_t count, const dt::Type* type, Message* msg) {
  return gEndpoint.imrecv(buf, count, type, msg);
}
bool progress() { return gEndpoint.progress(); }

void idle() {
  if (gOversubscribed) wait::yieldSerial();  // (MPI_THREAD_MULTIPLE: the rank's other threads may run meanwhile)
}

int wait(Request* r) {
  if (r->done) return 0;
  return wait::waitUntil(transport::world().self(), [r] {
    gEndpoint.progress();
    return r->done;
  });
}

int waitFor(bool (*pred)(void*), void* arg) {
  if (pred(arg)) return 0;
  return wait::waitUntil(transport::world().self(), [pred, arg] {
    gEndpoint.progress();
    return pred(arg);
  });
}

void addActive(Request* r) { gEndpoint.addActive(r); }

void release(Request* r) {
  if (!r) return;
  if (r->done) {
    delete r;
    return;
  }
  r->freed = true;  // kOther requests are on the active list until done
}

bool contextBusy(uint32_t id) { return gEndpoint.contextBusy(id); }

uint32_t cellsInUse() { return gEndpoint.cellsInUse(); }

}  // namespace shmcoll::p2p
