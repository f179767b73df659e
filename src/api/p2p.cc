// Point-to-point entry points: the send modes (standard, synchronous, ready,
// buffered), blocking and nonblocking, receives, MPI_Sendrecv(_replace),
// probes and matched probes, persistent requests, and the buffered-send
// buffer.  Each exists with int counts and as the MPI-4 `_c` form with
// MPI_Count; both call one template.
//
// A ready send (MPI_Rsend) is a standard send: the standard lets an
// implementation treat it so, and a correct program cannot tell.
#include "p2p/p2p.h"

#include <cinttypes>
#include <cstring>
#include <deque>
#include <vector>

#include "api/api.h"
#include "api/coll_common.h"
#include "api/request.h"

namespace shmcoll::api {

namespace {

enum class SendKind { kStandard, kSync, kReady, kBuffered };

// ---- argument checks -------------------------------------------------------------

// What a rank names: on an intercommunicator, a member of the remote group
// (messages carry the sender's local rank, which is what the receiver names).
const char* groupName(const rt::Comm* c) { return c->inter ? "remote group" : "communicator"; }

struct Peer {
  bool procNull = false;
  p2p::Envelope env;  // sends
  int source = 0;     // receives: communicator rank or p2p::kAnySource
  const dt::Type* type = nullptr;
};

template <class C>
int checkSend(const char* fn, rt::Comm* c, MPI_Comm h, const void* buf, C count, MPI_Datatype type, int dest, int tag,
              Peer* out) {
  Checker k{h, fn};
  CHECK_ARG(k.count("count", static_cast<int64_t>(count)));
  CHECK_ARG(k.type("datatype", type, &out->type));
  const uint32_t n = rt::peerCount(*c);
  SHMCOLL_REQUIRE(dest == MPI_PROC_NULL || (dest >= 0 && static_cast<uint32_t>(dest) < n), h, fn, MPI_ERR_RANK,
                  "dest = %d is not a rank of the %s (size %u) nor MPI_PROC_NULL", dest, groupName(c), n);
  SHMCOLL_REQUIRE(tag >= 0, h, fn, MPI_ERR_TAG, "tag = %d is negative (send tags are 0 .. MPI_TAG_UB)", tag);
  CHECK_ARG(k.buffer("buf", buf, static_cast<uint64_t>(count), out->type));
  out->procNull = dest == MPI_PROC_NULL;
  if (!out->procNull) {
    out->env.destWorld = rt::peerWorld(*c, static_cast<uint32_t>(dest));
    out->env.ctx = c->team.ctxId;
    out->env.srcRank = static_cast<int32_t>(c->team.rank);
    out->env.tag = tag;
  }
  return MPI_SUCCESS;
}

template <class C>
int checkRecv(const char* fn, rt::Comm* c, MPI_Comm h, const void* buf, C count, MPI_Datatype type, int source, int tag,
              Peer* out) {
  Checker k{h, fn};
  CHECK_ARG(k.count("count", static_cast<int64_t>(count)));
  CHECK_ARG(k.type("datatype", type, &out->type));
  const uint32_t n = rt::peerCount(*c);
  SHMCOLL_REQUIRE(
      source == MPI_PROC_NULL || source == MPI_ANY_SOURCE || (source >= 0 && static_cast<uint32_t>(source) < n), h, fn,
      MPI_ERR_RANK, "source = %d is not a rank of the %s (size %u), MPI_ANY_SOURCE nor MPI_PROC_NULL", source,
      groupName(c), n);
  SHMCOLL_REQUIRE(tag >= 0 || tag == MPI_ANY_TAG, h, fn, MPI_ERR_TAG,
                  "tag = %d is neither MPI_ANY_TAG nor in 0 .. MPI_TAG_UB", tag);
  CHECK_ARG(k.buffer("buf", buf, static_cast<uint64_t>(count), out->type));
  out->procNull = source == MPI_PROC_NULL;
  out->source = source == MPI_ANY_SOURCE ? p2p::kAnySource : source;
  return MPI_SUCCESS;
}

p2p::Request* procNullRecv() {
  auto* r = new DoneRequest;
  r->status.source = MPI_PROC_NULL;
  r->status.tag = MPI_ANY_TAG;
  return r;
}

void procNullStatus(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  emptyStatus(st);
  st->MPI_SOURCE = MPI_PROC_NULL;
}

// Completes a blocking operation's request and reports its status.
int finishBlocking(const char* fn, MPI_Comm h, p2p::Request* r, MPI_Status* st) {
  if (int rc = p2p::wait(r)) return raisef(h, fn, rc, "the job is ending");
  const p2p::Status s = r->status;
  p2p::release(r);
  int code = MPI_SUCCESS;
  if (s.error == MPI_ERR_TRUNCATE)
    code = makeErrorCode(MPI_ERR_TRUNCATE, fn,
                         "message of %" PRIu64
                         " bytes from rank %d (tag %d) is longer than the receive buffer of "
                         "%" PRIu64 " bytes; only those were received",
                         s.sent, s.source, s.tag, s.bytes);
  else if (s.error)
    code = makeErrorCode(s.error, fn, "the operation failed");
  toStatus(s, st, code);
  return code ? dispatch(h, code) : MPI_SUCCESS;
}

// ---- buffered sends ------------------------------------------------------------------

struct BsendBuffer {
  char* base = nullptr;
  uint64_t size = 0;
  bool attached = false;
  struct Use {
    uint64_t off, len;
    p2p::Request* op;
  };
  std::deque<Use> uses;  // by offset

  void reap() {
    for (auto it = uses.begin(); it != uses.end();) {
      if (it->op->done) {
        p2p::release(it->op);
        it = uses.erase(it);
      } else {
        ++it;
      }
    }
  }
  // First fit; UINT64_MAX when no gap is large enough.
  uint64_t place(uint64_t need, size_t* at) const {
    uint64_t end = 0;
    for (size_t i = 0; i < uses.size(); ++i) {
      if (uses[i].off - end >= need) {
        *at = i;
        return end;
      }
      end = uses[i].off + uses[i].len;
    }
    if (size >= end && size - end >= need) {
      *at = uses.size();
      return end;
    }
    return UINT64_MAX;
  }
};
BsendBuffer gBsend;

int bufferedSend(const char* fn, MPI_Comm h, const void* buf, uint64_t count, const Peer& p) {
  dt::Cursor cur(buf, count, p.type);
  const uint64_t bytes = cur.totalBytes();
  const uint64_t need = bytes + MPI_BSEND_OVERHEAD;
  gBsend.reap();
  size_t at = 0;
  uint64_t off = gBsend.place(need, &at);
  if (off == UINT64_MAX) {
    p2p::progress();
    gBsend.reap();
    off = gBsend.place(need, &at);
  }
  if (off == UINT64_MAX) {
    if (!gBsend.attached)
      return raisef(h, fn, MPI_ERR_BUFFER,
                    "no buffer is attached (MPI_Buffer_attach) for a buffered send of %" PRIu64 " bytes", bytes);
    return raisef(h, fn, MPI_ERR_BUFFER,
                  "the attached buffer of %" PRIu64 " bytes has no free piece of %" PRIu64 " bytes (%" PRIu64
                  " data + MPI_BSEND_OVERHEAD %d) for this message",
                  gBsend.size, need, bytes, MPI_BSEND_OVERHEAD);
  }
  char* dst = gBsend.base + off + MPI_BSEND_OVERHEAD;
  if (bytes) cur.pack(0, dst, bytes);
  p2p::Request* op = p2p::isend(dst, bytes, byteType(), p.env, p2p::Mode::kStandard);
  gBsend.uses.insert(gBsend.uses.begin() + static_cast<long>(at), BsendBuffer::Use{off, need, op});
  return MPI_SUCCESS;
}

// ---- the operations, generic in the count type -----------------------------------

template <class C>
int doSend(const char* fn, const void* buf, C count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
           SendKind kind) {
  COMM_OR_FAIL(c, comm, fn);
  Peer p;
  CHECK_ARG(checkSend(fn, c, comm, buf, count, type, dest, tag, &p));
  if (p.procNull) return MPI_SUCCESS;
  if (kind == SendKind::kBuffered) return bufferedSend(fn, comm, buf, static_cast<uint64_t>(count), p);
  p2p::Mode mode = kind == SendKind::kSync ? p2p::Mode::kSync : p2p::Mode::kStandard;
  if (int rc = p2p::send(buf, static_cast<uint64_t>(count), p.type, p.env, mode))
    return raisef(comm, fn, rc, "the job is ending");
  return MPI_SUCCESS;
}

template <class C>
p2p::Request* startSend(const void* buf, C count, const Peer& p, SendKind kind, const char* fn, MPI_Comm comm,
                        int* rc) {
  *rc = MPI_SUCCESS;
  if (p.procNull) return new DoneRequest;
  if (kind == SendKind::kBuffered) {
    *rc = bufferedSend(fn, comm, buf, static_cast<uint64_t>(count), p);
    return *rc ? nullptr : new DoneRequest;
  }
  p2p::Mode mode = kind == SendKind::kSync ? p2p::Mode::kSync : p2p::Mode::kStandard;
  return p2p::isend(buf, static_cast<uint64_t>(count), p.type, p.env, mode);
}

template <class C>
int doIsend(const char* fn, const void* buf, C count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
            MPI_Request* request, SendKind kind) {
  COMM_OR_FAIL(c, comm, fn);
  SHMCOLL_REQUIRE(request, comm, fn, MPI_ERR_ARG, "request is NULL");
  Peer p;
  CHECK_ARG(checkSend(fn, c, comm, buf, count, type, dest, tag, &p));
  int rc;
  p2p::Request* op = startSend(buf, count, p, kind, fn, comm, &rc);
  if (!op) return rc;
  *request = newRequest(op, comm, fn);
  return MPI_SUCCESS;
}

template <class C>
int doRecv(const char* fn, void* buf, C count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
           MPI_Status* status) {
  COMM_OR_FAIL(c, comm, fn);
  Peer p;
  CHECK_ARG(checkRecv(fn, c, comm, buf, count, type, source, tag, &p));
  if (p.procNull) {
    procNullStatus(status);
    return MPI_SUCCESS;
  }
  p2p::Request* r = p2p::irecv(buf, static_cast<uint64_t>(count), p.type, c->team.ctxId, p.source, tag);
  return finishBlocking(fn, comm, r, status);
}

template <class C>
int doIrecv(const char* fn, void* buf, C count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
            MPI_Request* request) {
  COMM_OR_FAIL(c, comm, fn);
  SHMCOLL_REQUIRE(request, comm, fn, MPI_ERR_ARG, "request is NULL");
  Peer p;
  CHECK_ARG(checkRecv(fn, c, comm, buf, count, type, source, tag, &p));
  p2p::Request* op =
      p.procNull ? procNullRecv() : p2p::irecv(buf, static_cast<uint64_t>(count), p.type, c->team.ctxId, p.source, tag);
  *request = newRequest(op, comm, fn);
  return MPI_SUCCESS;
}

template <class C>
int doSendrecv(const char* fn, const void* sendbuf, C sendcount, MPI_Datatype sendtype, int dest, int sendtag,
               void* recvbuf, C recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
               MPI_Status* status) {
  COMM_OR_FAIL(c, comm, fn);
  Peer sp, rp;
  CHECK_ARG(checkSend(fn, c, comm, sendbuf, sendcount, sendtype, dest, sendtag, &sp));
  CHECK_ARG(checkRecv(fn, c, comm, recvbuf, recvcount, recvtype, source, recvtag, &rp));
  p2p::Request* r =
      rp.procNull ? procNullRecv()
                  : p2p::irecv(recvbuf, static_cast<uint64_t>(recvcount), rp.type, c->team.ctxId, rp.source, recvtag);
  if (!sp.procNull) {
    if (int rc = p2p::send(sendbuf, static_cast<uint64_t>(sendcount), sp.type, sp.env, p2p::Mode::kStandard))
      return raisef(comm, fn, rc, "the job is ending");
  }
  return finishBlocking(fn, comm, r, status);
}

template <class C>
int doSendrecvReplace(const char* fn, void* buf, C count, MPI_Datatype type, int dest, int sendtag, int source,
                      int recvtag, MPI_Comm comm, MPI_Status* status) {
  COMM_OR_FAIL(c, comm, fn);
  Peer sp, rp;
  CHECK_ARG(checkSend(fn, c, comm, buf, count, type, dest, sendtag, &sp));
  CHECK_ARG(checkRecv(fn, c, comm, buf, count, type, source, recvtag, &rp));
  // The outgoing data is packed aside first: the receive overwrites the buffer.
  std::vector<char> packed;
  p2p::Request* s = nullptr;
  if (!sp.procNull) {
    dt::Cursor cur(buf, static_cast<uint64_t>(count), sp.type);
    packed.resize(cur.totalBytes());
    if (!packed.empty()) cur.pack(0, packed.data(), packed.size());
    s = p2p::isend(packed.data(), packed.size(), byteType(), sp.env, p2p::Mode::kStandard);
  }
  p2p::Request* r = rp.procNull
                        ? procNullRecv()
                        : p2p::irecv(buf, static_cast<uint64_t>(count), rp.type, c->team.ctxId, rp.source, recvtag);
  if (s) {
    if (int rc = p2p::wait(s)) return raisef(comm, fn, rc, "the job is ending");
    p2p::release(s);
  }
  return finishBlocking(fn, comm, r, status);
}

// ---- probes and matched probes -------------------------------------------------------

constexpr uint32_t kMsgTag = 0x81000000u;
std::deque<p2p::Message*> gMessages;
std::vector<uint32_t> gFreeMessages;

MPI_Message newMessage(p2p::Message* m) {
  uint32_t i;
  if (!gFreeMessages.empty()) {
    i = gFreeMessages.back();
    gFreeMessages.pop_back();
    gMessages[i] = m;
  } else {
    i = static_cast<uint32_t>(gMessages.size());
    gMessages.push_back(m);
  }
  return static_cast<MPI_Message>(kMsgTag | i);
}

p2p::Message* takeMessage(MPI_Message h) {
  uint32_t u = static_cast<uint32_t>(h);
  if ((u & 0xff000000u) != kMsgTag) return nullptr;
  uint32_t i = u & 0x00ffffffu;
  if (i >= gMessages.size() || !gMessages[i]) return nullptr;
  p2p::Message* m = gMessages[i];
  gMessages[i] = nullptr;
  gFreeMessages.push_back(i);
  return m;
}

int checkProbe(const char* fn, rt::Comm* c, MPI_Comm h, int source, int tag) {
  const uint32_t n = rt::peerCount(*c);
  SHMCOLL_REQUIRE(
      source == MPI_PROC_NULL || source == MPI_ANY_SOURCE || (source >= 0 && static_cast<uint32_t>(source) < n), h, fn,
      MPI_ERR_RANK, "source = %d is not a rank of the %s (size %u), MPI_ANY_SOURCE nor MPI_PROC_NULL", source,
      groupName(c), n);
  SHMCOLL_REQUIRE(tag >= 0 || tag == MPI_ANY_TAG, h, fn, MPI_ERR_TAG,
                  "tag = %d is neither MPI_ANY_TAG nor in 0 .. MPI_TAG_UB", tag);
  return MPI_SUCCESS;
}

struct ProbeArgs {
  uint32_t ctx;
  int source, tag;
  p2p::Status st;
  p2p::Message** take;
};
bool probeReady(void* a) {
  auto* p = static_cast<ProbeArgs*>(a);
  return p2p::iprobe(p->ctx, p->source, p->tag, &p->st, p->take);
}

int doProbe(const char* fn, int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status,
            bool blocking) {
  COMM_OR_FAIL(c, comm, fn);
  CHECK_ARG(checkProbe(fn, c, comm, source, tag));
  SHMCOLL_REQUIRE(blocking || flag, comm, fn, MPI_ERR_ARG, "flag is NULL");
  if (source == MPI_PROC_NULL) {
    if (flag) *flag = 1;
    if (message) *message = MPI_MESSAGE_NO_PROC;
    procNullStatus(status);
    return MPI_SUCCESS;
  }
  p2p::Message* m = nullptr;
  ProbeArgs a{c->team.ctxId, source == MPI_ANY_SOURCE ? p2p::kAnySource : source, tag, {}, message ? &m : nullptr};
  bool found;
  if (blocking) {
    if (int rc = p2p::waitFor(probeReady, &a)) return raisef(comm, fn, rc, "the job is ending");
    found = true;
  } else {
    found = probeReady(&a);
    if (!found) p2p::idle();
  }
  if (flag) *flag = found ? 1 : 0;
  if (!found) return MPI_SUCCESS;
  toStatus(a.st, status, MPI_SUCCESS);
  if (message) *message = newMessage(m);
  return MPI_SUCCESS;
}

template <class C>
int doMrecv(const char* fn, void* buf, C count, MPI_Datatype type, MPI_Message* message, MPI_Status* status,
            MPI_Request* request) {
  SHMCOLL_REQUIRE(active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(message, kNoComm, fn, MPI_ERR_ARG, "message is NULL");
  Checker k{kNoComm, fn};
  const dt::Type* t = nullptr;
  CHECK_ARG(k.count("count", static_cast<int64_t>(count)));
  CHECK_ARG(k.type("datatype", type, &t));
  CHECK_ARG(k.buffer("buf", buf, static_cast<uint64_t>(count), t));
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    if (request) {
      *request = newRequest(procNullRecv(), kNoComm, fn);
    } else {
      procNullStatus(status);
    }
    return MPI_SUCCESS;
  }
  p2p::Message* m = takeMessage(*message);
  SHMCOLL_REQUIRE(m, kNoComm, fn, MPI_ERR_REQUEST, "message = %#x is not a message from MPI_Mprobe/MPI_Improbe",
                  static_cast<unsigned>(*message));
  *message = MPI_MESSAGE_NULL;
  p2p::Request* r = p2p::imrecv(buf, static_cast<uint64_t>(count), t, m);
  if (request) {
    *request = newRequest(r, kNoComm, fn);
    return MPI_SUCCESS;
  }
  return finishBlocking(fn, kNoComm, r, status);
}

// ---- persistent requests -------------------------------------------------------------

template <class C>
int sendInit(const char* fn, const void* buf, C count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
             MPI_Request* request, SendKind kind) {
  COMM_OR_FAIL(c, comm, fn);
  SHMCOLL_REQUIRE(request, comm, fn, MPI_ERR_ARG, "request is NULL");
  Peer p;
  CHECK_ARG(checkSend(fn, c, comm, buf, count, type, dest, tag, &p));
  dt::retain(p.type);
  MPI_Request h = newRequest(nullptr, comm, fn);
  RequestEntry* e = requestEntry(h);
  e->persistent = true;
  e->heldType = p.type;
  e->start = [buf, count, p, kind, fn, comm]() -> p2p::Request* {
    int rc;
    p2p::Request* r = startSend(buf, count, p, kind, fn, comm, &rc);
    if (!r) {  // a buffered send that found no room: the error went to the handler; complete with it
      r = new DoneRequest;
      r->status.error = rc ? errorClassOf(rc) : MPI_ERR_BUFFER;
    }
    return r;
  };
  *request = h;
  return MPI_SUCCESS;
}

template <class C>
int recvInit(const char* fn, void* buf, C count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Request* request) {
  COMM_OR_FAIL(c, comm, fn);
  SHMCOLL_REQUIRE(request, comm, fn, MPI_ERR_ARG, "request is NULL");
  Peer p;
  CHECK_ARG(checkRecv(fn, c, comm, buf, count, type, source, tag, &p));
  dt::retain(p.type);
  MPI_Request h = newRequest(nullptr, comm, fn);
  RequestEntry* e = requestEntry(h);
  e->persistent = true;
  e->heldType = p.type;
  uint32_t ctx = c->team.ctxId;
  e->start = [buf, count, p, ctx, tag]() -> p2p::Request* {
    if (p.procNull) return procNullRecv();
    return p2p::irecv(buf, static_cast<uint64_t>(count), p.type, ctx, p.source, tag);
  };
  *request = h;
  return MPI_SUCCESS;
}

}  // namespace

// ---- entry points ----------------------------------------------------------------------

#define SEND_FAMILY(NAME, INAME, KIND)                                                                                      \
  SHMCOLL_API(int, MPI_##NAME,                                                                                       \
              (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)) {               \
    return doSend("MPI_" #NAME, buf, count, datatype, dest, tag, comm, KIND);                                        \
  }                                                                                                                  \
  SHMCOLL_API(int, MPI_##NAME##_c,                                                                                   \
              (const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)) {         \
    return doSend("MPI_" #NAME "_c", buf, count, datatype, dest, tag, comm, KIND);                                   \
  }                                                                                                                  \
  SHMCOLL_API(                                                                                                       \
      int, MPI_##INAME,                                                                                              \
      (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request)) { \
    return doIsend("MPI_" #INAME, buf, count, datatype, dest, tag, comm, request, KIND);                             \
  }                                                                                                                  \
  SHMCOLL_API(int, MPI_##INAME##_c,                                                                                  \
              (const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,            \
               MPI_Request* request)) {                                                                              \
    return doIsend("MPI_" #INAME "_c", buf, count, datatype, dest, tag, comm, request, KIND);                        \
  }                                                                                                                  \
  SHMCOLL_API(                                                                                                       \
      int, MPI_##NAME##_init,                                                                                        \
      (const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* request)) { \
    return sendInit("MPI_" #NAME "_init", buf, count, datatype, dest, tag, comm, request, KIND);                     \
  }                                                                                                                  \
  SHMCOLL_API(int, MPI_##NAME##_init_c,                                                                              \
              (const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,            \
               MPI_Request* request)) {                                                                              \
    return sendInit("MPI_" #NAME "_init_c", buf, count, datatype, dest, tag, comm, request, KIND);                   \
  }

SEND_FAMILY(Send, Isend, SendKind::kStandard)
SEND_FAMILY(Ssend, Issend, SendKind::kSync)
SEND_FAMILY(Rsend, Irsend, SendKind::kReady)
SEND_FAMILY(Bsend, Ibsend, SendKind::kBuffered)

SHMCOLL_API(int, MPI_Recv,
            (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status* status)) {
  return doRecv("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
SHMCOLL_API(int, MPI_Recv_c,
            (void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status* status)) {
  return doRecv("MPI_Recv_c", buf, count, datatype, source, tag, comm, status);
}
SHMCOLL_API(int, MPI_Irecv,
            (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request)) {
  return doIrecv("MPI_Irecv", buf, count, datatype, source, tag, comm, request);
}
SHMCOLL_API(int, MPI_Irecv_c,
            (void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Request* request)) {
  return doIrecv("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request);
}
SHMCOLL_API(int, MPI_Recv_init,
            (void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request* request)) {
  return recvInit("MPI_Recv_init", buf, count, datatype, source, tag, comm, request);
}
SHMCOLL_API(int, MPI_Recv_init_c,
            (void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Request* request)) {
  return recvInit("MPI_Recv_init_c", buf, count, datatype, source, tag, comm, request);
}

SHMCOLL_API(int, MPI_Sendrecv,
            (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status)) {
  return doSendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                    recvtag, comm, status);
}
SHMCOLL_API(int, MPI_Sendrecv_c,
            (const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
             MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status)) {
  return doSendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                    recvtag, comm, status);
}
SHMCOLL_API(int, MPI_Sendrecv_replace,
            (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
             MPI_Status* status)) {
  return doSendrecvReplace("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag, source, recvtag, comm, status);
}
SHMCOLL_API(int, MPI_Sendrecv_replace_c,
            (void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int sendtag, int source, int recvtag,
             MPI_Comm comm, MPI_Status* status)) {
  return doSendrecvReplace("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag, source, recvtag, comm,
                           status);
}

SHMCOLL_API(int, MPI_Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status)) {
  return doProbe("MPI_Probe", source, tag, comm, nullptr, nullptr, status, true);
}
SHMCOLL_API(int, MPI_Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status)) {
  return doProbe("MPI_Iprobe", source, tag, comm, flag, nullptr, status, false);
}
SHMCOLL_API(int, MPI_Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status)) {
  SHMCOLL_REQUIRE(message, comm, "MPI_Mprobe", MPI_ERR_ARG, "message is NULL");
  return doProbe("MPI_Mprobe", source, tag, comm, nullptr, message, status, true);
}
SHMCOLL_API(int, MPI_Improbe,
            (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status)) {
  SHMCOLL_REQUIRE(message, comm, "MPI_Improbe", MPI_ERR_ARG, "message is NULL");
  return doProbe("MPI_Improbe", source, tag, comm, flag, message, status, false);
}
SHMCOLL_API(int, MPI_Mrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status)) {
  return doMrecv("MPI_Mrecv", buf, count, datatype, message, status, nullptr);
}
SHMCOLL_API(int, MPI_Mrecv_c,
            (void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Status* status)) {
  return doMrecv("MPI_Mrecv_c", buf, count, datatype, message, status, nullptr);
}
SHMCOLL_API(int, MPI_Imrecv,
            (void* buf, int count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request)) {
  SHMCOLL_REQUIRE(request, kNoComm, "MPI_Imrecv", MPI_ERR_ARG, "request is NULL");
  return doMrecv("MPI_Imrecv", buf, count, datatype, message, MPI_STATUS_IGNORE, request);
}
SHMCOLL_API(int, MPI_Imrecv_c,
            (void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Message* message, MPI_Request* request)) {
  SHMCOLL_REQUIRE(request, kNoComm, "MPI_Imrecv_c", MPI_ERR_ARG, "request is NULL");
  return doMrecv("MPI_Imrecv_c", buf, count, datatype, message, MPI_STATUS_IGNORE, request);
}

// ---- the buffered-send buffer ------------------------------------------------------------

namespace {
int attach(const char* fn, void* buffer, uint64_t size) {
  SHMCOLL_REQUIRE(active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(!gBsend.attached, kNoComm, fn, MPI_ERR_BUFFER,
                  "a buffer is already attached (detach it with MPI_Buffer_detach first)");
  SHMCOLL_REQUIRE(buffer || size == 0, kNoComm, fn, MPI_ERR_BUFFER, "buffer is NULL");
  gBsend.base = static_cast<char*>(buffer);
  gBsend.size = size;
  gBsend.attached = true;
  return MPI_SUCCESS;
}
bool bsendDrained(void*) {
  gBsend.reap();
  return gBsend.uses.empty();
}
int detach(const char* fn, void* bufferAddr, uint64_t* size) {
  SHMCOLL_REQUIRE(active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(bufferAddr && size, kNoComm, fn, MPI_ERR_ARG, "buffer_addr or size is NULL");
  SHMCOLL_REQUIRE(gBsend.attached, kNoComm, fn, MPI_ERR_BUFFER, "no buffer is attached");
  // Blocks until every message buffered in it has been sent.
  if (int rc = p2p::waitFor(bsendDrained, nullptr)) return raisef(kNoComm, fn, rc, "the job is ending");
  *static_cast<void**>(bufferAddr) = gBsend.base;
  *size = gBsend.size;
  gBsend = BsendBuffer{};
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Buffer_attach, (void* buffer, int size)) {
  SHMCOLL_REQUIRE(size >= 0, kNoComm, "MPI_Buffer_attach", MPI_ERR_ARG, "size = %d is negative", size);
  return attach("MPI_Buffer_attach", buffer, static_cast<uint64_t>(size));
}
SHMCOLL_API(int, MPI_Buffer_attach_c, (void* buffer, MPI_Count size)) {
  SHMCOLL_REQUIRE(size >= 0, kNoComm, "MPI_Buffer_attach_c", MPI_ERR_ARG, "size = %lld is negative", size);
  return attach("MPI_Buffer_attach_c", buffer, static_cast<uint64_t>(size));
}
SHMCOLL_API(int, MPI_Buffer_detach, (void* buffer_addr, int* size)) {
  uint64_t s = 0;
  SHMCOLL_REQUIRE(size, kNoComm, "MPI_Buffer_detach", MPI_ERR_ARG, "size is NULL");
  CHECK_ARG(detach("MPI_Buffer_detach", buffer_addr, &s));
  *size = s > INT32_MAX ? MPI_UNDEFINED : static_cast<int>(s);
  return MPI_SUCCESS;
}
SHMCOLL_API(int, MPI_Buffer_detach_c, (void* buffer_addr, MPI_Count* size)) {
  uint64_t s = 0;
  SHMCOLL_REQUIRE(size, kNoComm, "MPI_Buffer_detach_c", MPI_ERR_ARG, "size is NULL");
  CHECK_ARG(detach("MPI_Buffer_detach_c", buffer_addr, &s));
  *size = static_cast<MPI_Count>(s);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api
