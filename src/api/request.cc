// The request table and the completion functions: MPI_Wait/Test and their
// any/all/some forms, MPI_Request_free, MPI_Cancel, MPI_Test_cancelled,
// MPI_Request_get_status, MPI_Start/MPI_Startall for persistent requests, and
// generalized requests (MPI_Grequest_start/complete), whose callbacks run
// where the standard says: query_fn when a completion call or
// MPI_Request_get_status reports a complete request, free_fn after it when
// the request is freed (at its completion, or at MPI_Grequest_complete when
// MPI_Request_free came first), cancel_fn from MPI_Cancel.
//
// Every completion function runs the progress engine, so each of them moves
// every outstanding operation of the process forward, not only the ones it
// was given.
#include "api/request.h"

#include <cinttypes>
#include <deque>
#include <vector>

#include "api/check.h"
#include "runtime/comm.h"

namespace shmcoll::api {

namespace {

constexpr uint32_t kReqTag = 0x61000000u;
constexpr uint32_t kReqMask = 0x00ffffffu;

std::deque<RequestEntry> gTable;  // a deque: entries never move
std::vector<uint32_t> gFree;

// The error code for a completed operation's status (0 when it succeeded).
int errorCodeOf(const RequestEntry& e, const p2p::Status& s) {
  if (!s.error) return MPI_SUCCESS;
  if (s.why) return makeErrorCode(s.error, e.what, "%s", s.why);
  if (s.error == MPI_ERR_TRUNCATE)
    return makeErrorCode(MPI_ERR_TRUNCATE, e.what,
                         "message of %" PRIu64
                         " bytes from rank %d (tag %d) is longer than the receive buffer of "
                         "%" PRIu64 " bytes; only those were received",
                         s.sent, s.source, s.tag, s.bytes);
  return makeErrorCode(s.error, e.what, "the operation failed");
}

// A complete generalized request's status, from its query_fn (given a status
// of ours when the caller ignores it); returns query_fn's code.
int queryGrequest(const GRequest* g, MPI_Status* st) {
  MPI_Status local;
  MPI_Status* s = st == MPI_STATUS_IGNORE ? &local : st;
  emptyStatus(s);
  return g->query ? g->query(g->extra, s) : MPI_SUCCESS;
}

// Lets go of a complete generalized request: free_fn, then the object.
int freeGrequest(GRequest* g) {
  const int code = g->free ? g->free(g->extra) : MPI_SUCCESS;
  delete g;
  return code;
}

// Completes the finished request *hp: fills *st, releases the operation,
// frees a non-persistent handle (*hp = MPI_REQUEST_NULL) or makes a
// persistent one inactive.  Returns the operation's error code.
int finish(MPI_Request* hp, MPI_Status* st) {
  RequestEntry* e = requestEntry(*hp);
  if (!e || !e->op) {
    emptyStatus(st);
    return MPI_SUCCESS;
  }
  if (GRequest* g = e->grequest) {
    const int q = queryGrequest(g, st);
    const int f = freeGrequest(g);
    dropRequest(*hp);
    *hp = MPI_REQUEST_NULL;
    return q ? q : f;
  }
  int code = errorCodeOf(*e, e->op->status);
  toStatus(e->op->status, st, code);
  p2p::release(e->op);
  e->op = nullptr;
  if (!e->persistent) {
    dropRequest(*hp);
    *hp = MPI_REQUEST_NULL;
  }
  return code;
}

// A request handle argument: a request or MPI_REQUEST_NULL (MPI_ERR_REQUEST).
int checkHandle(const Call& call, const char* arg, MPI_Request h) {
  if (h == MPI_REQUEST_NULL || requestEntry(h)) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_REQUEST, "%s = %#x is not a valid request", arg, static_cast<unsigned>(h));
}

// An array of `count` request handles (not NULL unless empty).
int checkArray(const Call& call, int count, const MPI_Request* reqs) {
  if (count > 0) SHMCOLL_CHECK(check::notNull(call, "array_of_requests", reqs));
  for (int i = 0; i < count; ++i)
    if (reqs[i] != MPI_REQUEST_NULL && !requestEntry(reqs[i]))
      return check::fail(call, MPI_ERR_REQUEST, "array_of_requests[%d] = %#x is not a valid request", i,
                         static_cast<unsigned>(reqs[i]));
  return MPI_SUCCESS;
}

// An active request: a handle whose operation is running.
bool isActive(MPI_Request h) {
  RequestEntry* e = requestEntry(h);
  return e && e->op;
}

MPI_Comm commOf(MPI_Request h) {
  RequestEntry* e = requestEntry(h);
  return e ? e->comm : kNoComm;
}

struct ArrayWait {
  int count;
  const MPI_Request* reqs;
  bool all;  // wait for all (else for any)
};

bool arrayReady(void* arg) {
  const auto* w = static_cast<const ArrayWait*>(arg);
  bool any = false, anyActive = false;
  for (int i = 0; i < w->count; ++i) {
    RequestEntry* e = requestEntry(w->reqs[i]);
    if (!e || !e->op) continue;
    anyActive = true;
    if (e->op->done) {
      any = true;
    } else if (w->all) {
      return false;
    }
  }
  return w->all ? true : (any || !anyActive);
}

// Waits until the array's requests are ready: all of them, or any (or none is active).
int waitArray(const Call& call, int count, const MPI_Request* reqs, bool all) {
  ArrayWait w{count, reqs, all};
  if (int rc = p2p::waitFor(arrayReady, &w)) return check::fail(call, rc, "the job is ending");
  return MPI_SUCCESS;
}

// Makes one round of progress unless the array's requests are ready (all, or
// any); returns whether they are.
bool testArray(int count, const MPI_Request* reqs, bool all) {
  ArrayWait w{count, reqs, all};
  if (!arrayReady(&w) && !p2p::progress() && !arrayReady(&w)) p2p::idle();
  return arrayReady(&w);
}

// After finishing requests of an array: MPI_ERR_IN_STATUS if any failed
// (on the communicator of the last that did).
int inStatus(const Call& call, bool anyError, MPI_Comm errComm) {
  if (!anyError) return MPI_SUCCESS;
  return raisef(errComm, call.fn, MPI_ERR_IN_STATUS, "a request failed; see the MPI_ERROR fields");
}

// Waitall / Testall once every request is done: finishes them all, each
// status with its own MPI_ERROR.
int finishAll(const Call& call, int count, MPI_Request* reqs, MPI_Status* statuses) {
  bool anyError = false;
  MPI_Comm errComm = kNoComm;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (!isActive(reqs[i])) {
      emptyStatus(st);
      continue;
    }
    MPI_Comm c = commOf(reqs[i]);
    if (const int code = finish(&reqs[i], st)) {
      if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = code;
      anyError = true;
      errComm = c;
    }
  }
  return inStatus(call, anyError, errComm);
}

// Waitsome / Testsome after waiting (or one progress call): finishes the
// done requests, their statuses and indices packed at the front.
int finishSome(const Call& call, int count, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* statuses) {
  bool anyError = false;
  MPI_Comm errComm = kNoComm;
  int k = 0;
  for (int i = 0; i < count; ++i) {
    if (!isActive(reqs[i]) || !requestEntry(reqs[i])->op->done) continue;
    MPI_Comm c = commOf(reqs[i]);
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[k];
    int code = finish(&reqs[i], st);
    if (code) {
      anyError = true;
      errComm = c;
    }
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = code;
    indices[k++] = i;
  }
  *outcount = k;
  return inStatus(call, anyError, errComm);
}

// Waitany / Testany once something is ready (or nothing is active).
int takeAny(int count, MPI_Request* reqs, int* index, MPI_Status* status) {
  for (int i = 0; i < count; ++i) {
    if (isActive(reqs[i]) && requestEntry(reqs[i])->op->done) {
      *index = i;
      MPI_Comm c = commOf(reqs[i]);
      int code = finish(&reqs[i], status);
      return code ? dispatch(c, code) : MPI_SUCCESS;
    }
  }
  *index = MPI_UNDEFINED;
  emptyStatus(status);
  return MPI_SUCCESS;
}

bool anyActive(int count, const MPI_Request* reqs) {
  for (int i = 0; i < count; ++i)
    if (isActive(reqs[i])) return true;
  return false;
}

// Waitsome / Testsome: the indices array, and whether there is anything to wait for.
int beginSome(const Call& call, int count, const MPI_Request* reqs, int* outcount, const int* indices, bool* none) {
  SHMCOLL_CHECK(checkArray(call, count, reqs));
  if (count > 0) SHMCOLL_CHECK(check::notNull(call, "array_of_indices", indices));
  *none = !anyActive(count, reqs);
  if (*none) *outcount = MPI_UNDEFINED;
  return MPI_SUCCESS;
}

// Completes the single request *request, done now.
int finishOne(MPI_Request* request, MPI_Status* status) {
  const MPI_Comm comm = requestEntry(*request)->comm;
  const int code = finish(request, status);
  return code ? dispatch(comm, code) : MPI_SUCCESS;
}

}  // namespace

MPI_Request newRequest(p2p::Request* op, MPI_Comm comm, const char* what) {
  uint32_t i;
  if (!gFree.empty()) {
    i = gFree.back();
    gFree.pop_back();
  } else {
    i = static_cast<uint32_t>(gTable.size());
    gTable.emplace_back();
  }
  gTable[i] = RequestEntry(op, comm, what);
  return static_cast<MPI_Request>(kReqTag | i);
}

RequestEntry* requestEntry(MPI_Request h) {
  uint32_t u = static_cast<uint32_t>(h);
  if ((u & ~kReqMask) != kReqTag) return nullptr;
  uint32_t i = u & kReqMask;
  if (i >= gTable.size() || !gTable[i].live) return nullptr;
  return &gTable[i];
}

void dropRequest(MPI_Request h) {
  RequestEntry* e = requestEntry(h);
  if (!e) return;
  *e = RequestEntry{};
  gFree.push_back(static_cast<uint32_t>(h) & kReqMask);
}

void emptyStatus(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->shmcoll_cancelled_ = 0;
  st->shmcoll_count_ = 0;
}

void toStatus(const p2p::Status& s, MPI_Status* st, int errorCode) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = s.source;
  st->MPI_TAG = s.tag;
  st->MPI_ERROR = errorCode;
  st->shmcoll_cancelled_ = s.cancelled ? 1 : 0;
  st->shmcoll_count_ = static_cast<MPI_Count>(s.bytes);
}

// ---- the MPI functions --------------------------------------------------------------

namespace impl {

int wait(Call& call, MPI_Request* request, MPI_Status* status) {
  SHMCOLL_CHECK(checkHandle(call, "request", *request));
  if (!isActive(*request)) {
    emptyStatus(status);
    return MPI_SUCCESS;
  }
  RequestEntry* e = requestEntry(*request);
  if (int rc = p2p::wait(e->op)) return raisef(e->comm, call.fn, rc, "the job is ending");
  return finishOne(request, status);
}

int test(Call& call, MPI_Request* request, int* flag, MPI_Status* status) {
  SHMCOLL_CHECK(checkHandle(call, "request", *request));
  *flag = 1;
  if (!isActive(*request)) {
    emptyStatus(status);
    return MPI_SUCCESS;
  }
  const MPI_Request one = *request;
  if (!testArray(1, &one, true)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  return finishOne(request, status);
}

// Reports the status without completing the request.
int requestGetStatus(Call& call, MPI_Request request, int* flag, MPI_Status* status) {
  SHMCOLL_CHECK(checkHandle(call, "request", request));
  RequestEntry* e = requestEntry(request);
  if (!e || !e->op) {
    *flag = 1;
    emptyStatus(status);
    return MPI_SUCCESS;
  }
  *flag = testArray(1, &request, true) ? 1 : 0;
  if (*flag && e->grequest) {
    const int q = queryGrequest(e->grequest, status);
    return q ? dispatch(e->comm, q) : MPI_SUCCESS;
  }
  if (*flag) toStatus(e->op->status, status, errorCodeOf(*e, e->op->status));
  return MPI_SUCCESS;
}

int requestFree(Call& call, MPI_Request* request) {
  SHMCOLL_CHECK(checkHandle(call, "request", *request));
  if (*request == MPI_REQUEST_NULL) return check::fail(call, MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
  RequestEntry* e = requestEntry(*request);
  // MPI-4.0 permits freeing an active request only for point-to-point
  // operations; an active persistent collective is refused (and stays active:
  // complete it, then free it).
  if (e->collective && e->op)
    return raisef(e->comm, call.fn, MPI_ERR_REQUEST,
                  "request = %#x is an active persistent collective request (%s); complete it (MPI_Wait, MPI_Test, "
                  "...) before freeing it",
                  static_cast<unsigned>(*request), e->what);
  if (GRequest* g = e->grequest) {
    const MPI_Request h = *request;
    *request = MPI_REQUEST_NULL;
    if (!g->done) {  // free_fn runs at MPI_Grequest_complete, which may name the user's copy of the handle
      e->freedByUser = true;
      return MPI_SUCCESS;
    }
    const MPI_Comm comm = e->comm;
    const int f = freeGrequest(g);
    dropRequest(h);
    return f ? dispatch(comm, f) : MPI_SUCCESS;
  }
  if (e->op) p2p::release(e->op);
  if (e->heldType) dt::release(e->heldType);
  if (e->heldComm) rt::releaseComm(e->heldComm);
  dropRequest(*request);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

int cancel(Call& call, MPI_Request* request) {
  SHMCOLL_CHECK(checkHandle(call, "request", *request));
  if (*request == MPI_REQUEST_NULL) return check::fail(call, MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
  RequestEntry* e = requestEntry(*request);
  if (e->collective)
    return raisef(e->comm, call.fn, MPI_ERR_REQUEST,
                  "request = %#x is a persistent collective request (%s), which cannot be cancelled",
                  static_cast<unsigned>(*request), e->what);
  if (GRequest* g = e->grequest) {  // cancel_fn decides, told whether the request is complete
    const int c = g->cancel ? g->cancel(g->extra, g->done ? 1 : 0) : MPI_SUCCESS;
    return c ? dispatch(e->comm, c) : MPI_SUCCESS;
  }
  // A receive not yet matched is cancelled; anything else completes normally
  // (the standard allows a cancel to fail), and MPI_Test_cancelled says which.
  if (e->op && !e->op->done) e->op->cancel();
  return MPI_SUCCESS;
}

int testCancelled(Call&, const MPI_Status* status, int* flag) {
  *flag = status->shmcoll_cancelled_ ? 1 : 0;
  return MPI_SUCCESS;
}

int statusSetCancelled(Call&, MPI_Status* status, int flag) {
  status->shmcoll_cancelled_ = flag ? 1 : 0;
  return MPI_SUCCESS;
}

int waitall(Call& call, int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[]) {
  SHMCOLL_CHECK(checkArray(call, count, array_of_requests));
  SHMCOLL_CHECK(waitArray(call, count, array_of_requests, true));
  return finishAll(call, count, array_of_requests, array_of_statuses);
}

int testall(Call& call, int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[]) {
  SHMCOLL_CHECK(checkArray(call, count, array_of_requests));
  *flag = testArray(count, array_of_requests, true) ? 1 : 0;
  return *flag ? finishAll(call, count, array_of_requests, array_of_statuses) : MPI_SUCCESS;
}

int waitany(Call& call, int count, MPI_Request array_of_requests[], int* index, MPI_Status* status) {
  SHMCOLL_CHECK(checkArray(call, count, array_of_requests));
  SHMCOLL_CHECK(waitArray(call, count, array_of_requests, false));
  return takeAny(count, array_of_requests, index, status);
}

int testany(Call& call, int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status) {
  SHMCOLL_CHECK(checkArray(call, count, array_of_requests));
  *flag = testArray(count, array_of_requests, false) ? 1 : 0;
  if (!*flag) {
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  return takeAny(count, array_of_requests, index, status);
}

int waitsome(Call& call, int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
             MPI_Status array_of_statuses[]) {
  bool none;
  SHMCOLL_CHECK(beginSome(call, incount, array_of_requests, outcount, array_of_indices, &none));
  if (none) return MPI_SUCCESS;
  SHMCOLL_CHECK(waitArray(call, incount, array_of_requests, false));
  return finishSome(call, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int testsome(Call& call, int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
             MPI_Status array_of_statuses[]) {
  bool none;
  SHMCOLL_CHECK(beginSome(call, incount, array_of_requests, outcount, array_of_indices, &none));
  if (none) return MPI_SUCCESS;
  if (!p2p::progress()) p2p::idle();
  return finishSome(call, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

// ---- generalized requests ------------------------------------------------------

int grequestStart(Call&, MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
                  MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  auto* g = new GRequest;
  g->query = query_fn;
  g->free = free_fn;
  g->cancel = cancel_fn;
  g->extra = extra_state;
  *request = newRequest(g, kNoComm, "MPI_Grequest_start");
  requestEntry(*request)->grequest = g;
  return MPI_SUCCESS;
}

int grequestComplete(Call& call, MPI_Request request) {
  RequestEntry* e = requestEntry(request);
  if (!e || !e->grequest)
    return check::fail(call, MPI_ERR_REQUEST, "request = %#x is not a generalized request (MPI_Grequest_start)",
                       static_cast<unsigned>(request));
  GRequest* g = e->grequest;
  if (g->done)
    return check::fail(call, MPI_ERR_REQUEST, "request = %#x was completed already", static_cast<unsigned>(request));
  g->done = true;
  if (!e->freedByUser) return MPI_SUCCESS;
  const int f = freeGrequest(g);  // MPI_Request_free came first: the request goes now
  dropRequest(request);
  return f ? dispatch(kNoComm, f) : MPI_SUCCESS;
}

// ---- persistent requests -------------------------------------------------------

int start(Call& call, MPI_Request* request) {
  SHMCOLL_CHECK(checkHandle(call, "request", *request));
  RequestEntry* e = requestEntry(*request);
  if (!e || !e->persistent)
    return check::fail(call, MPI_ERR_REQUEST, "request = %#x is not a persistent request",
                       static_cast<unsigned>(*request));
  if (e->op)
    return raisef(e->comm, call.fn, MPI_ERR_REQUEST, "request = %#x is already active",
                  static_cast<unsigned>(*request));
  e->op = e->start();
  return MPI_SUCCESS;
}

int startall(Call& call, int count, MPI_Request array_of_requests[]) {
  SHMCOLL_CHECK(checkArray(call, count, array_of_requests));
  // Nothing starts unless all can: every request persistent, inactive, and
  // named once (a second start of one request would overwrite the first).
  int rc = MPI_SUCCESS, i = 0;
  for (; i < count && rc == MPI_SUCCESS; ++i) {
    RequestEntry* e = requestEntry(array_of_requests[i]);
    if (!e || !e->persistent) {
      rc = check::fail(call, MPI_ERR_REQUEST, "array_of_requests[%d] = %#x is not a persistent request", i,
                       static_cast<unsigned>(array_of_requests[i]));
    } else if (e->op) {
      rc = raisef(e->comm, call.fn, MPI_ERR_REQUEST, "array_of_requests[%d] is already active", i);
    } else if (e->starting) {
      rc = raisef(e->comm, call.fn, MPI_ERR_REQUEST, "array_of_requests[%d] = %#x appears twice in the array", i,
                  static_cast<unsigned>(array_of_requests[i]));
    } else {
      e->starting = true;
    }
  }
  for (int j = 0; j < i; ++j)
    if (RequestEntry* e = requestEntry(array_of_requests[j])) e->starting = false;
  if (rc) return rc;
  for (int k = 0; k < count; ++k) {
    RequestEntry* e = requestEntry(array_of_requests[k]);
    e->op = e->start();
  }
  return MPI_SUCCESS;
}

}  // namespace impl

}  // namespace shmcoll::api

#include "generated/entry_request.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/request.txt)
