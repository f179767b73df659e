// The request table and the completion functions: MPI_Wait/Test and their
// any/all/some forms, MPI_Request_free, MPI_Cancel, MPI_Test_cancelled,
// MPI_Request_get_status, and MPI_Start/MPI_Startall for persistent requests.
//
// Every completion function runs the progress engine, so each of them moves
// every outstanding operation of the process forward, not only the ones it
// was given.
#include "api/request.h"

#include <cinttypes>
#include <deque>
#include <vector>

#include "api/api.h"
#include "api/coll_common.h"

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

// Completes the finished request *hp: fills *st, releases the operation,
// frees a non-persistent handle (*hp = MPI_REQUEST_NULL) or makes a
// persistent one inactive.  Returns the operation's error code.
int finish(MPI_Request* hp, MPI_Status* st) {
  RequestEntry* e = requestEntry(*hp);
  if (!e || !e->op) {
    emptyStatus(st);
    return MPI_SUCCESS;
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

// Checks an array of request handles.
int checkArray(const char* fn, int count, const MPI_Request* reqs) {
  SHMCOLL_REQUIRE(active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(count >= 0, kNoComm, fn, MPI_ERR_COUNT, "count = %d is negative", count);
  SHMCOLL_REQUIRE(count == 0 || reqs, kNoComm, fn, MPI_ERR_ARG, "array_of_requests is NULL");
  for (int i = 0; i < count; ++i)
    SHMCOLL_REQUIRE(reqs[i] == MPI_REQUEST_NULL || requestEntry(reqs[i]), kNoComm, fn, MPI_ERR_REQUEST,
                    "array_of_requests[%d] = %#x is not a valid request", i, static_cast<unsigned>(reqs[i]));
  return MPI_SUCCESS;
}

int checkOne(const char* fn, const MPI_Request* req) {
  SHMCOLL_REQUIRE(active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize");
  SHMCOLL_REQUIRE(req, kNoComm, fn, MPI_ERR_ARG, "request is NULL");
  SHMCOLL_REQUIRE(*req == MPI_REQUEST_NULL || requestEntry(*req), kNoComm, fn, MPI_ERR_REQUEST,
                  "request = %#x is not a valid request", static_cast<unsigned>(*req));
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

int waitDone(const char* fn, MPI_Comm comm, p2p::Request* op) {
  if (int rc = p2p::wait(op)) return raisef(comm, fn, rc, "%s", "the job is ending");
  return MPI_SUCCESS;
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

// Finishes every done request of the array; returns how many, and the
// indices in `idx` (may be null).  Sets *anyError.
int harvest(const char* fn, int count, MPI_Request* reqs, MPI_Status* statuses, bool compact, int* idx, bool* anyError,
            MPI_Comm* errComm) {
  (void)fn;
  int k = 0;
  for (int i = 0; i < count; ++i) {
    if (!isActive(reqs[i]) || !requestEntry(reqs[i])->op->done) continue;
    MPI_Comm c = commOf(reqs[i]);
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[compact ? k : i];
    int code = finish(&reqs[i], st);
    if (code) {
      *anyError = true;
      *errComm = c;
    }
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = code;
    if (idx) idx[k] = i;
    ++k;
  }
  return k;
}

// Waitall / Testall once every request is done: finishes them all, each
// status with its own MPI_ERROR, and MPI_ERR_IN_STATUS if any failed.
int finishAll(const char* fn, int count, MPI_Request* reqs, MPI_Status* statuses) {
  bool anyError = false;
  MPI_Comm errComm = kNoComm;
  for (int i = 0; i < count; ++i) {
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    if (!isActive(reqs[i])) {
      emptyStatus(st);
      continue;
    }
    MPI_Comm c = commOf(reqs[i]);
    if (finish(&reqs[i], st)) {
      anyError = true;
      errComm = c;
    }
  }
  if (anyError) return raisef(errComm, fn, MPI_ERR_IN_STATUS, "a request failed; see the MPI_ERROR fields");
  return MPI_SUCCESS;
}

// Waitsome / Testsome after waiting (or one progress call): finishes the done requests.
int finishSome(const char* fn, int incount, MPI_Request* reqs, int* outcount, int* indices, MPI_Status* statuses) {
  bool anyError = false;
  MPI_Comm errComm = kNoComm;
  *outcount = harvest(fn, incount, reqs, statuses, true, indices, &anyError, &errComm);
  if (anyError) return raisef(errComm, fn, MPI_ERR_IN_STATUS, "a request failed; see the MPI_ERROR fields");
  return MPI_SUCCESS;
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
  RequestEntry& e = gTable[i];
  e = RequestEntry{};
  e.op = op;
  e.comm = comm;
  e.what = what;
  e.live = true;
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

// ---- single completion -------------------------------------------------------

SHMCOLL_API(int, MPI_Wait, (MPI_Request * request, MPI_Status* status)) {
  const char* fn = "MPI_Wait";
  if (int rc = checkOne(fn, request)) return rc;
  if (!isActive(*request)) {
    emptyStatus(status);
    return MPI_SUCCESS;
  }
  RequestEntry* e = requestEntry(*request);
  MPI_Comm comm = e->comm;
  if (int rc = waitDone(fn, comm, e->op)) return rc;
  int code = finish(request, status);
  return code ? dispatch(comm, code) : MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Test, (MPI_Request * request, int* flag, MPI_Status* status)) {
  const char* fn = "MPI_Test";
  if (int rc = checkOne(fn, request)) return rc;
  SHMCOLL_REQUIRE(flag, kNoComm, fn, MPI_ERR_ARG, "flag is NULL");
  if (!isActive(*request)) {
    *flag = 1;
    emptyStatus(status);
    return MPI_SUCCESS;
  }
  RequestEntry* e = requestEntry(*request);
  if (!e->op->done && !p2p::progress() && !e->op->done) p2p::idle();
  if (!e->op->done) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  MPI_Comm comm = e->comm;
  int code = finish(request, status);
  return code ? dispatch(comm, code) : MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Request_get_status, (MPI_Request request, int* flag, MPI_Status* status)) {
  const char* fn = "MPI_Request_get_status";
  if (int rc = checkOne(fn, &request)) return rc;
  SHMCOLL_REQUIRE(flag, kNoComm, fn, MPI_ERR_ARG, "flag is NULL");
  RequestEntry* e = requestEntry(request);
  if (!e || !e->op) {
    *flag = 1;
    emptyStatus(status);
    return MPI_SUCCESS;
  }
  if (!e->op->done && !p2p::progress() && !e->op->done) p2p::idle();
  *flag = e->op->done ? 1 : 0;
  if (*flag) toStatus(e->op->status, status, errorCodeOf(*e, e->op->status));
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Request_free, (MPI_Request * request)) {
  const char* fn = "MPI_Request_free";
  if (int rc = checkOne(fn, request)) return rc;
  SHMCOLL_REQUIRE(*request != MPI_REQUEST_NULL, kNoComm, fn, MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
  RequestEntry* e = requestEntry(*request);
  // MPI-4.0 permits freeing an active request only for point-to-point
  // operations; an active persistent collective is refused (and stays active:
  // complete it, then free it).
  SHMCOLL_REQUIRE(!(e->collective && e->op), e->comm, fn, MPI_ERR_REQUEST,
                  "request = %#x is an active persistent collective request (%s); complete it (MPI_Wait, MPI_Test, "
                  "...) before freeing it",
                  static_cast<unsigned>(*request), e->what);
  if (e->op) p2p::release(e->op);
  if (e->heldType) dt::release(e->heldType);
  dropRequest(*request);
  *request = MPI_REQUEST_NULL;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Cancel, (MPI_Request * request)) {
  const char* fn = "MPI_Cancel";
  if (int rc = checkOne(fn, request)) return rc;
  SHMCOLL_REQUIRE(*request != MPI_REQUEST_NULL, kNoComm, fn, MPI_ERR_REQUEST, "request is MPI_REQUEST_NULL");
  RequestEntry* e = requestEntry(*request);
  SHMCOLL_REQUIRE(!e->collective, e->comm, fn, MPI_ERR_REQUEST,
                  "request = %#x is a persistent collective request (%s), which cannot be cancelled",
                  static_cast<unsigned>(*request), e->what);
  // A receive not yet matched is cancelled; anything else completes normally
  // (the standard allows a cancel to fail), and MPI_Test_cancelled says which.
  if (e->op && !e->op->done) e->op->cancel();
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Test_cancelled, (const MPI_Status* status, int* flag)) {
  const char* fn = "MPI_Test_cancelled";
  SHMCOLL_REQUIRE(status, kNoComm, fn, MPI_ERR_ARG, "status is NULL");
  SHMCOLL_REQUIRE(flag, kNoComm, fn, MPI_ERR_ARG, "flag is NULL");
  *flag = status->shmcoll_cancelled_ ? 1 : 0;
  return MPI_SUCCESS;
}

// ---- multiple completion -------------------------------------------------------

SHMCOLL_API(int, MPI_Waitall, (int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])) {
  const char* fn = "MPI_Waitall";
  if (int rc = checkArray(fn, count, array_of_requests)) return rc;
  ArrayWait w{count, array_of_requests, true};
  if (int rc = p2p::waitFor(arrayReady, &w)) return raisef(kNoComm, fn, rc, "the job is ending");
  return finishAll(fn, count, array_of_requests, array_of_statuses);
}

SHMCOLL_API(int, MPI_Testall, (int count, MPI_Request array_of_requests[], int* flag, MPI_Status array_of_statuses[])) {
  const char* fn = "MPI_Testall";
  if (int rc = checkArray(fn, count, array_of_requests)) return rc;
  SHMCOLL_REQUIRE(flag, kNoComm, fn, MPI_ERR_ARG, "flag is NULL");
  ArrayWait w{count, array_of_requests, true};
  if (!arrayReady(&w) && !p2p::progress() && !arrayReady(&w)) p2p::idle();
  if (!arrayReady(&w)) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return finishAll(fn, count, array_of_requests, array_of_statuses);
}

namespace {
// Waitany / Testany once something is ready (or nothing is active).
int takeAny(const char* fn, int count, MPI_Request* reqs, int* index, MPI_Status* status) {
  (void)fn;
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
}  // namespace

SHMCOLL_API(int, MPI_Waitany, (int count, MPI_Request array_of_requests[], int* index, MPI_Status* status)) {
  const char* fn = "MPI_Waitany";
  if (int rc = checkArray(fn, count, array_of_requests)) return rc;
  SHMCOLL_REQUIRE(index, kNoComm, fn, MPI_ERR_ARG, "index is NULL");
  ArrayWait w{count, array_of_requests, false};
  if (int rc = p2p::waitFor(arrayReady, &w)) return raisef(kNoComm, fn, rc, "the job is ending");
  return takeAny(fn, count, array_of_requests, index, status);
}

SHMCOLL_API(int, MPI_Testany, (int count, MPI_Request array_of_requests[], int* index, int* flag, MPI_Status* status)) {
  const char* fn = "MPI_Testany";
  if (int rc = checkArray(fn, count, array_of_requests)) return rc;
  SHMCOLL_REQUIRE(index, kNoComm, fn, MPI_ERR_ARG, "index is NULL");
  SHMCOLL_REQUIRE(flag, kNoComm, fn, MPI_ERR_ARG, "flag is NULL");
  ArrayWait w{count, array_of_requests, false};
  if (!arrayReady(&w) && !p2p::progress() && !arrayReady(&w)) p2p::idle();
  if (!arrayReady(&w)) {
    *flag = 0;
    *index = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  *flag = 1;
  return takeAny(fn, count, array_of_requests, index, status);
}

SHMCOLL_API(int, MPI_Waitsome,
            (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
             MPI_Status array_of_statuses[])) {
  const char* fn = "MPI_Waitsome";
  if (int rc = checkArray(fn, incount, array_of_requests)) return rc;
  SHMCOLL_REQUIRE(outcount, kNoComm, fn, MPI_ERR_ARG, "outcount is NULL");
  SHMCOLL_REQUIRE(incount == 0 || array_of_indices, kNoComm, fn, MPI_ERR_ARG, "array_of_indices is NULL");
  if (!anyActive(incount, array_of_requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  ArrayWait w{incount, array_of_requests, false};
  if (int rc = p2p::waitFor(arrayReady, &w)) return raisef(kNoComm, fn, rc, "the job is ending");
  return finishSome(fn, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

SHMCOLL_API(int, MPI_Testsome,
            (int incount, MPI_Request array_of_requests[], int* outcount, int array_of_indices[],
             MPI_Status array_of_statuses[])) {
  const char* fn = "MPI_Testsome";
  if (int rc = checkArray(fn, incount, array_of_requests)) return rc;
  SHMCOLL_REQUIRE(outcount, kNoComm, fn, MPI_ERR_ARG, "outcount is NULL");
  SHMCOLL_REQUIRE(incount == 0 || array_of_indices, kNoComm, fn, MPI_ERR_ARG, "array_of_indices is NULL");
  if (!anyActive(incount, array_of_requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (!p2p::progress()) p2p::idle();
  return finishSome(fn, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

// ---- persistent requests -------------------------------------------------------

SHMCOLL_API(int, MPI_Start, (MPI_Request * request)) {
  const char* fn = "MPI_Start";
  if (int rc = checkOne(fn, request)) return rc;
  RequestEntry* e = requestEntry(*request);
  SHMCOLL_REQUIRE(e && e->persistent, kNoComm, fn, MPI_ERR_REQUEST, "request = %#x is not a persistent request",
                  static_cast<unsigned>(*request));
  SHMCOLL_REQUIRE(!e->op, e->comm, fn, MPI_ERR_REQUEST, "request = %#x is already active",
                  static_cast<unsigned>(*request));
  e->op = e->start();
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Startall, (int count, MPI_Request array_of_requests[])) {
  const char* fn = "MPI_Startall";
  if (int rc = checkArray(fn, count, array_of_requests)) return rc;
  // Nothing starts unless all can: every request persistent, inactive, and
  // named once (a second start of one request would overwrite the first).
  int rc = MPI_SUCCESS, i = 0;
  for (; i < count && rc == MPI_SUCCESS; ++i) {
    RequestEntry* e = requestEntry(array_of_requests[i]);
    if (!e || !e->persistent) {
      rc = raisef(kNoComm, fn, MPI_ERR_REQUEST, "array_of_requests[%d] = %#x is not a persistent request", i,
                  static_cast<unsigned>(array_of_requests[i]));
    } else if (e->op) {
      rc = raisef(e->comm, fn, MPI_ERR_REQUEST, "array_of_requests[%d] is already active", i);
    } else if (e->starting) {
      rc = raisef(e->comm, fn, MPI_ERR_REQUEST, "array_of_requests[%d] = %#x appears twice in the array", i,
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

}  // namespace shmcoll::api
