// Point-to-point: the send modes (standard, synchronous, ready, buffered) and
// receives, each in every form the Call names (blocking, nonblocking
// MPI_I..., persistent MPI_..._init; int and big counts), MPI_Sendrecv(_replace)
// and MPI_Isendrecv(_replace),
// probes and matched probes.  The generated entry points have checked the
// counts, datatypes, ranks and tags; what is left here is the buffer against
// its count, and the work.
//
// A ready send (MPI_Rsend) is a standard send: the standard lets an
// implementation treat it so, and a correct program cannot tell.
#include "p2p/p2p.h"

#include <cinttypes>
#include <deque>
#include <vector>

#include "api/bsend.h"
#include "api/coll_common.h"
#include "api/request.h"

namespace shmcoll::api {

enum class SendKind { kStandard, kSync, kReady, kBuffered };

namespace {

// Where a send goes.
p2p::Envelope envelope(const rt::Comm* c, int dest, int tag) {
  p2p::Envelope env;
  env.destWorld = rt::peerWorld(*c, static_cast<uint32_t>(dest));
  env.ctx = c->team.ctxId;
  env.srcRank = static_cast<int32_t>(c->team.rank);
  env.tag = tag;
  return env;
}

// A receive's source for the engine (communicator rank or p2p::kAnySource).
int sourceOf(int source) { return source == MPI_ANY_SOURCE ? p2p::kAnySource : source; }

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
int finishBlocking(const Call& call, p2p::Request* r, MPI_Status* st) {
  if (int rc = p2p::wait(r)) return check::fail(call, rc, "the job is ending");
  const p2p::Status s = r->status;
  p2p::release(r);
  int code = MPI_SUCCESS;
  if (s.error == MPI_ERR_TRUNCATE)
    code = makeErrorCode(MPI_ERR_TRUNCATE, call.fn,
                         "message of %" PRIu64
                         " bytes from rank %d (tag %d) is longer than the receive buffer of "
                         "%" PRIu64 " bytes; only those were received",
                         s.sent, s.source, s.tag, s.bytes);
  else if (s.error)
    code = makeErrorCode(s.error, call.fn, "the operation failed");
  toStatus(s, st, code);
  return code ? dispatch(call.comm, code) : MPI_SUCCESS;
}

// Starts a send (nonblocking and persistent forms); nullptr when a buffered
// send found no room (*rc: the error, raised already).
p2p::Request* startSend(const Call& call, SendKind kind, const void* buf, uint64_t count, const dt::Type* t,
                        bool procNull, const p2p::Envelope& env, int* rc) {
  *rc = MPI_SUCCESS;
  if (procNull) return new DoneRequest;
  if (kind == SendKind::kBuffered) {
    *rc = bufferedSend(call, buf, count, t, env);
    return *rc ? nullptr : new DoneRequest;
  }
  return p2p::isend(buf, count, t, env, kind == SendKind::kSync ? p2p::Mode::kSync : p2p::Mode::kStandard);
}

// MPI_Isendrecv(_replace): a send and a receive under one request, done when
// both are, with the receive's status (or the send's error).  Stepped by the
// progress engine (p2p::addActive), which deletes it if MPI_Request_free let
// go of it first.
struct SendRecvRequest final : p2p::Request {
  SendRecvRequest() : Request(Kind::kOther) {}
  ~SendRecvRequest() override {
    p2p::release(send);
    p2p::release(recv);
  }
  bool step() override {
    if (done || (send && !send->done) || !recv->done) return false;
    status = recv->status;
    if (send && send->status.error && !status.error) {
      status.error = send->status.error;
      status.why = send->status.why;
    }
    done = true;
    return true;
  }
  p2p::Request* send = nullptr;  // nullptr for MPI_PROC_NULL
  p2p::Request* recv = nullptr;
  std::vector<char> packed;  // MPI_Isendrecv_replace: the outgoing data
};

// Hands out the request of an MPI_Isendrecv(_replace).
void handOutSendRecv(Call& call, SendRecvRequest* r) {
  r->step();
  if (!r->done) p2p::addActive(r);
  handOut(call, r);
}

// A persistent request (MPI_Send_init, MPI_Recv_init, ...) holding `t` and
// its communicator, whose context id `start` keeps using after an
// MPI_Comm_free; `start` starts one instance.
template <class Start>
int persistent(Call& call, rt::Comm* c, const dt::Type* t, Start&& start) {
  dt::retain(t);
  rt::holdComm(c);
  MPI_Request h = newRequest(nullptr, call.comm, call.fn);
  RequestEntry* e = requestEntry(h);
  e->persistent = true;
  e->heldType = t;
  e->heldComm = c;
  e->start = std::forward<Start>(start);
  *call.request = h;
  call.started = true;
  return MPI_SUCCESS;
}

}  // namespace

namespace impl {

template <SendKind kKind, class C>
int send(Call& call, const void* buf, C count, const dt::Type* t, int dest, int tag, rt::Comm* c) {
  SHMCOLL_CHECK(check::buffer(call, "buf", buf, static_cast<uint64_t>(count), t));
  const bool procNull = dest == MPI_PROC_NULL;
  const p2p::Envelope env = procNull ? p2p::Envelope{} : envelope(c, dest, tag);
  const uint64_t n = static_cast<uint64_t>(count);
  if (call.persistent()) {
    return persistent(call, c, t, [buf, n, t, procNull, env, fn = call.fn, comm = call.comm]() -> p2p::Request* {
      const Call again(fn, comm);
      int rc;
      p2p::Request* r = startSend(again, kKind, buf, n, t, procNull, env, &rc);
      if (!r) {  // a buffered send that found no room: the error went to the handler; complete with it
        r = new DoneRequest;
        r->status.error = rc ? errorClassOf(rc) : MPI_ERR_BUFFER;
      }
      return r;
    });
  }
  if (!call.blocking()) {
    int rc;
    p2p::Request* op = startSend(call, kKind, buf, n, t, procNull, env, &rc);
    if (!op) return rc;
    handOut(call, op);
    return MPI_SUCCESS;
  }
  if (procNull) return MPI_SUCCESS;
  if (kKind == SendKind::kBuffered) return bufferedSend(call, buf, n, t, env);
  const p2p::Mode mode = kKind == SendKind::kSync ? p2p::Mode::kSync : p2p::Mode::kStandard;
  if (int rc = p2p::send(buf, n, t, env, mode)) return check::fail(call, rc, "the job is ending");
  return MPI_SUCCESS;
}

template <class C>
int recv(Call& call, void* buf, C count, const dt::Type* t, int source, int tag, rt::Comm* c, MPI_Status* status) {
  SHMCOLL_CHECK(check::buffer(call, "buf", buf, static_cast<uint64_t>(count), t));
  const uint64_t n = static_cast<uint64_t>(count);
  const uint32_t ctx = c->team.ctxId;
  const bool procNull = source == MPI_PROC_NULL;
  const int src = sourceOf(source);
  if (call.persistent()) {
    return persistent(call, c, t, [buf, n, t, procNull, ctx, src, tag]() -> p2p::Request* {
      return procNull ? procNullRecv() : p2p::irecv(buf, n, t, ctx, src, tag);
    });
  }
  if (!call.blocking()) {
    handOut(call, procNull ? procNullRecv() : p2p::irecv(buf, n, t, ctx, src, tag));
    return MPI_SUCCESS;
  }
  if (procNull) {
    procNullStatus(status);
    return MPI_SUCCESS;
  }
  return finishBlocking(call, p2p::irecv(buf, n, t, ctx, src, tag), status);
}

template <class C>
int sendrecv(Call& call, const void* sendbuf, C sendcount, const dt::Type* sendtype, int dest, int sendtag,
             void* recvbuf, C recvcount, const dt::Type* recvtype, int source, int recvtag, rt::Comm* c,
             MPI_Status* status) {
  SHMCOLL_CHECK(check::buffer(call, "sendbuf", sendbuf, static_cast<uint64_t>(sendcount), sendtype));
  SHMCOLL_CHECK(check::buffer(call, "recvbuf", recvbuf, static_cast<uint64_t>(recvcount), recvtype));
  if (!call.blocking()) {  // MPI_Isendrecv
    auto* sr = new SendRecvRequest;
    sr->recv = source == MPI_PROC_NULL ? procNullRecv()
                                       : p2p::irecv(recvbuf, static_cast<uint64_t>(recvcount), recvtype, c->team.ctxId,
                                                    sourceOf(source), recvtag);
    if (dest != MPI_PROC_NULL)
      sr->send = p2p::isend(sendbuf, static_cast<uint64_t>(sendcount), sendtype, envelope(c, dest, sendtag),
                            p2p::Mode::kStandard);
    handOutSendRecv(call, sr);
    return MPI_SUCCESS;
  }
  p2p::Request* r = source == MPI_PROC_NULL ? procNullRecv()
                                            : p2p::irecv(recvbuf, static_cast<uint64_t>(recvcount), recvtype,
                                                         c->team.ctxId, sourceOf(source), recvtag);
  if (dest != MPI_PROC_NULL) {
    if (int rc = p2p::send(sendbuf, static_cast<uint64_t>(sendcount), sendtype, envelope(c, dest, sendtag),
                           p2p::Mode::kStandard))
      return check::fail(call, rc, "the job is ending");
  }
  return finishBlocking(call, r, status);
}

template <class C>
int sendrecvReplace(Call& call, void* buf, C count, const dt::Type* t, int dest, int sendtag, int source, int recvtag,
                    rt::Comm* c, MPI_Status* status) {
  SHMCOLL_CHECK(check::buffer(call, "buf", buf, static_cast<uint64_t>(count), t));
  // The outgoing data is packed aside first: the receive overwrites the buffer.
  if (!call.blocking()) {  // MPI_Isendrecv_replace: the packed copy lives in the request
    auto* sr = new SendRecvRequest;
    if (dest != MPI_PROC_NULL) {
      dt::Cursor cur(buf, static_cast<uint64_t>(count), t);
      sr->packed.resize(cur.totalBytes());
      if (!sr->packed.empty()) cur.pack(0, sr->packed.data(), sr->packed.size());
      sr->send = p2p::isend(sr->packed.data(), sr->packed.size(), byteType(), envelope(c, dest, sendtag),
                            p2p::Mode::kStandard);
    }
    sr->recv = source == MPI_PROC_NULL
                   ? procNullRecv()
                   : p2p::irecv(buf, static_cast<uint64_t>(count), t, c->team.ctxId, sourceOf(source), recvtag);
    handOutSendRecv(call, sr);
    return MPI_SUCCESS;
  }
  std::vector<char> packed;
  p2p::Request* s = nullptr;
  if (dest != MPI_PROC_NULL) {
    dt::Cursor cur(buf, static_cast<uint64_t>(count), t);
    packed.resize(cur.totalBytes());
    if (!packed.empty()) cur.pack(0, packed.data(), packed.size());
    s = p2p::isend(packed.data(), packed.size(), byteType(), envelope(c, dest, sendtag), p2p::Mode::kStandard);
  }
  p2p::Request* r = source == MPI_PROC_NULL
                        ? procNullRecv()
                        : p2p::irecv(buf, static_cast<uint64_t>(count), t, c->team.ctxId, sourceOf(source), recvtag);
  if (s) {
    if (int rc = p2p::wait(s)) return check::fail(call, rc, "the job is ending");
    p2p::release(s);
  }
  return finishBlocking(call, r, status);
}

}  // namespace impl

// ---- probes and matched probes -------------------------------------------------------

namespace {

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

struct ProbeArgs {
  uint32_t ctx;
  int source, tag;
  p2p::Status st;
  p2p::Message** take;
};
// (With `take` it takes the message it finds: p2p::waitFor, like every wait,
// never asks again once it said yes.)
bool probeReady(void* a) {
  auto* p = static_cast<ProbeArgs*>(a);
  return p2p::iprobe(p->ctx, p->source, p->tag, &p->st, p->take);
}

// The four probes: blocking or not (flag), matched or not (message).
int probeAny(const Call& call, int source, int tag, rt::Comm* c, int* flag, MPI_Message* message,
             MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    if (flag) *flag = 1;
    if (message) *message = MPI_MESSAGE_NO_PROC;
    procNullStatus(status);
    return MPI_SUCCESS;
  }
  p2p::Message* m = nullptr;
  ProbeArgs a{c->team.ctxId, sourceOf(source), tag, {}, message ? &m : nullptr};
  bool found;
  if (!flag) {
    if (int rc = p2p::waitFor(probeReady, &a)) return check::fail(call, rc, "the job is ending");
    found = true;
  } else {
    found = probeReady(&a);
    if (!found) p2p::idle();
    *flag = found ? 1 : 0;
  }
  if (!found) return MPI_SUCCESS;
  toStatus(a.st, status, MPI_SUCCESS);
  if (message) *message = newMessage(m);
  return MPI_SUCCESS;
}

}  // namespace

namespace impl {

int probe(Call& call, int source, int tag, rt::Comm* c, MPI_Status* status) {
  return probeAny(call, source, tag, c, nullptr, nullptr, status);
}
int iprobe(Call& call, int source, int tag, rt::Comm* c, int* flag, MPI_Status* status) {
  return probeAny(call, source, tag, c, flag, nullptr, status);
}
int mprobe(Call& call, int source, int tag, rt::Comm* c, MPI_Message* message, MPI_Status* status) {
  return probeAny(call, source, tag, c, nullptr, message, status);
}
int improbe(Call& call, int source, int tag, rt::Comm* c, int* flag, MPI_Message* message, MPI_Status* status) {
  return probeAny(call, source, tag, c, flag, message, status);
}

// MPI_Mrecv and MPI_Imrecv (nonblocking: the Call's request).
template <class C>
int mrecv(Call& call, void* buf, C count, const dt::Type* t, MPI_Message* message, MPI_Status* status) {
  SHMCOLL_CHECK(check::buffer(call, "buf", buf, static_cast<uint64_t>(count), t));
  if (*message == MPI_MESSAGE_NO_PROC) {
    *message = MPI_MESSAGE_NULL;
    if (!call.blocking()) {
      handOut(call, procNullRecv());
    } else {
      procNullStatus(status);
    }
    return MPI_SUCCESS;
  }
  p2p::Message* m = takeMessage(*message);
  if (!m)
    return check::fail(call, MPI_ERR_REQUEST, "message = %#x is not a message from MPI_Mprobe/MPI_Improbe",
                       static_cast<unsigned>(*message));
  *message = MPI_MESSAGE_NULL;
  p2p::Request* r = p2p::imrecv(buf, static_cast<uint64_t>(count), t, m);
  if (!call.blocking()) {
    handOut(call, r);
    return MPI_SUCCESS;
  }
  return finishBlocking(call, r, status);
}

}  // namespace impl

}  // namespace shmcoll::api

#include "generated/entry_p2p.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/p2p.txt)
