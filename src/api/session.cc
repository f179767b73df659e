// Sessions (MPI-4): MPI_Session_init/finalize, the process sets, session
// error handlers, MPI_Group_from_session_pset and MPI_Comm_create_from_group.
//
// A session is a table entry (its error handler, the info it was given, its
// thread level).  The runtime under it is the one MPI_Init starts: the first
// MPI_Session_init starts it when MPI_Init has not (api/init.cc,
// startForSession), and it ends when neither the world model nor a session is
// left, so sessions work before, alongside and after the world model; but
// once it has ended it cannot start again in this process (MPI_ERR_SESSION).
// Starting and ending it is collective over the job, as MPI_Init and
// MPI_Finalize are: every rank must start its first session (or MPI_Init) and
// end its last one (or MPI_Finalize) at the same point.
//
// Two process sets exist: "mpi://WORLD" (every rank shmrun started) and
// "mpi://SELF".  MPI_Comm_create_from_group builds its communicator as
// MPI_Comm_create_group does over the job's world team, the string tag
// hashed to a tag of the library's own range (2^30 and up); two different
// string tags in use at once by overlapping groups are told apart unless
// their hashes collide (1 in 2^30).
#include <strings.h>

#include <algorithm>
#include <cstdarg>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "api/check.h"
#include "runtime/comm.h"
#include "runtime/context.h"

namespace shmcoll::api {

int startForSession(const Call& call, int required, int* provided);  // api/init.cc
int endForSession(const Call& call);

namespace {

constexpr uint32_t kSessionTag = 0x91000000u;
constexpr uint32_t kSessionMask = 0x00ffffffu;
const char* const kPsets[] = {"mpi://WORLD", "mpi://SELF"};
constexpr int kNumPsets = 2;

struct Session {
  bool live = false;
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  rt::Info info;  // what MPI_Session_init was given, and "thread_level"
};
std::deque<Session> gSessions;

Session* sessionOf(MPI_Session h) {
  const uint32_t u = static_cast<uint32_t>(h);
  if ((u & ~kSessionMask) != kSessionTag || (u & kSessionMask) >= gSessions.size()) return nullptr;
  Session* s = &gSessions[u & kSessionMask];
  return s->live ? s : nullptr;
}

// Raises an error of class `cls` on session `h` (its handler decides).
[[gnu::format(printf, 4, 5)]] int fail(const Call& call, MPI_Session h, int cls, const char* fmt, ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  const int code = makeErrorCode(cls, call.fn, "%s", buf);
  const Session* s = sessionOf(h);
  return dispatchTo(s ? s->errhandler : MPI_ERRORS_ARE_FATAL, h, "a session", code);
}

// A valid session handle (MPI_ERR_SESSION, raised on MPI_COMM_WORLD's handler
// while MPI is initialized, else fatal: there is no session to ask).
int checkSession(const Call& call, MPI_Session h, Session** out) {
  *out = sessionOf(h);
  if (*out) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_SESSION, "session = %#x is not an initialized session", static_cast<unsigned>(h));
}

int threadLevelOf(const std::string& v) {
  static const char* const kNames[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                       "MPI_THREAD_MULTIPLE"};
  for (int i = 0; i < 4; ++i)
    if (strcasecmp(v.c_str(), kNames[i]) == 0) return i;
  return -1;
}

const char* threadLevelName(int level) {
  static const char* const kNames[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED", "MPI_THREAD_SERIALIZED",
                                       "MPI_THREAD_MULTIPLE"};
  return kNames[level < 0 || level > 3 ? 0 : level];
}

// Writes `text` into a buffer of `len` bytes, cut to fit with its '\0'.
void copyOut(const char* text, int len, char* out) {
  const size_t n = std::min(strlen(text), static_cast<size_t>(len - 1));
  memcpy(out, text, n);
  out[n] = '\0';
}

// The members of the process set `name`, or false if there is none such.
bool psetMembers(const char* name, std::vector<uint32_t>* m) {
  const transport::World& w = rt::ctx().eng;
  if (strcmp(name, kPsets[0]) == 0) {
    for (uint32_t r = 0; r < w.size; ++r) m->push_back(r);
    return true;
  }
  if (strcmp(name, kPsets[1]) == 0) {
    m->push_back(w.rank);
    return true;
  }
  return false;
}

int refErrhandler(MPI_Errhandler h) {
  if (rt::Errhandler* e = rt::userErrhandler(h)) ++e->refs;
  return h;
}

}  // namespace

namespace impl {

int sessionInit(Call& call, rt::Info* info, MPI_Errhandler errhandler, MPI_Session* session) {
  if (!rt::validErrhandler(errhandler))
    return check::fail(call, MPI_ERR_ARG, "errhandler = %#x is not a valid error handler",
                       static_cast<unsigned>(errhandler));
  int required = MPI_THREAD_SINGLE;
  if (const std::string* v = info ? info->find("thread_level") : nullptr) {
    const int level = threadLevelOf(*v);
    if (level >= 0) required = level;  // (an unknown value is a hint the library ignores)
  }
  if (rt::ctx().finalized)  // (raised on the handler given, as the standard says for this call)
    return dispatchTo(errhandler, MPI_SESSION_NULL, "a session being initialized",
                      makeErrorCode(MPI_ERR_SESSION, call.fn,
                                    "the runtime has ended (MPI_Finalize, or the last MPI_Session_finalize, ran with "
                                    "no session open) and cannot start again in this process"));
  int provided = MPI_THREAD_SINGLE;
  SHMCOLL_CHECK(startForSession(call, required, &provided));
  uint32_t i = 0;
  while (i < gSessions.size() && gSessions[i].live) ++i;
  if (i == gSessions.size()) gSessions.emplace_back();
  Session& s = gSessions[i];
  s.live = true;
  s.errhandler = refErrhandler(errhandler);
  s.info = info ? *info : rt::Info{};
  s.info.set("thread_level", threadLevelName(provided));
  *session = static_cast<MPI_Session>(kSessionTag | i);
  return MPI_SUCCESS;
}

int sessionFinalize(Call& call, MPI_Session* session) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, *session, &s));
  rt::releaseErrhandler(s->errhandler);
  *s = Session{};
  *session = MPI_SESSION_NULL;
  return endForSession(call);
}

int sessionGetNumPsets(Call& call, MPI_Session session, rt::Info*, int* npsetNames) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  *npsetNames = kNumPsets;
  return MPI_SUCCESS;
}

// *psetLen 0 asks for the length (with its '\0'); otherwise the name is
// written, cut to *psetLen - 1 characters.
int sessionGetNthPset(Call& call, MPI_Session session, rt::Info*, int n, int* psetLen, char* psetName) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  if (n < 0 || n >= kNumPsets)
    return fail(call, session, MPI_ERR_ARG, "n = %d is not a process set number (0 .. %d)", n, kNumPsets - 1);
  if (*psetLen < 0) return fail(call, session, MPI_ERR_ARG, "*pset_len = %d is negative", *psetLen);
  if (*psetLen == 0) {
    *psetLen = static_cast<int>(strlen(kPsets[n])) + 1;
    return MPI_SUCCESS;
  }
  if (!psetName) return fail(call, session, MPI_ERR_ARG, "pset_name is NULL with *pset_len = %d", *psetLen);
  copyOut(kPsets[n], *psetLen, psetName);
  return MPI_SUCCESS;
}

int sessionGetInfo(Call& call, MPI_Session session, MPI_Info* infoUsed) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  *infoUsed = rt::newInfo(s->info);
  return MPI_SUCCESS;
}

namespace {

// The members of process set `psetName` of a valid session, or the error.
int sessionPset(Call& call, MPI_Session session, const char* psetName, std::vector<uint32_t>* m) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  if (!psetMembers(psetName, m))
    return fail(call, session, MPI_ERR_ARG, "pset_name = \"%.128s\" is not a process set (mpi://WORLD, mpi://SELF)",
                psetName);
  return MPI_SUCCESS;
}

}  // namespace

int sessionGetPsetInfo(Call& call, MPI_Session session, const char* psetName, MPI_Info* info) {
  std::vector<uint32_t> m;
  SHMCOLL_CHECK(sessionPset(call, session, psetName, &m));
  rt::Info in;
  in.set("mpi_size", std::to_string(m.size()));
  *info = rt::newInfo(std::move(in));
  return MPI_SUCCESS;
}

int sessionCreateErrhandler(Call&, MPI_Session_errhandler_function* fn, MPI_Errhandler* errhandler) {
  // (Both handler kinds take a pointer to an int handle and to the code.)
  *errhandler = rt::newErrhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(fn));
  return MPI_SUCCESS;
}

int sessionSetErrhandler(Call& call, MPI_Session session, MPI_Errhandler errhandler) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  if (!rt::validErrhandler(errhandler))
    return fail(call, session, MPI_ERR_ARG, "errhandler = %#x is not a valid error handler",
                static_cast<unsigned>(errhandler));
  refErrhandler(errhandler);
  rt::releaseErrhandler(s->errhandler);
  s->errhandler = errhandler;
  return MPI_SUCCESS;
}

int sessionGetErrhandler(Call& call, MPI_Session session, MPI_Errhandler* errhandler) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  *errhandler = refErrhandler(s->errhandler);
  return MPI_SUCCESS;
}

int sessionCallErrhandler(Call& call, MPI_Session session, int errorcode) {
  Session* s;
  SHMCOLL_CHECK(checkSession(call, session, &s));
  dispatchTo(s->errhandler, session, "a session", errorcode);
  return MPI_SUCCESS;
}

int groupFromSessionPset(Call& call, MPI_Session session, const char* psetName, MPI_Group* newgroup) {
  std::vector<uint32_t> m;
  SHMCOLL_CHECK(sessionPset(call, session, psetName, &m));
  *newgroup = rt::newGroup(std::move(m));
  return MPI_SUCCESS;
}

int commCreateFromGroup(Call& call, rt::Group* g, const char* stringtag, rt::Info* info, MPI_Errhandler errhandler,
                        MPI_Comm* newcomm) {
  SHMCOLL_CHECK(check::initialized(call));
  const size_t len = strnlen(stringtag, MPI_MAX_STRINGTAG_LEN);
  if (len >= MPI_MAX_STRINGTAG_LEN)
    return check::fail(call, MPI_ERR_ARG, "stringtag is longer than MPI_MAX_STRINGTAG_LEN - 1 = %d characters",
                       MPI_MAX_STRINGTAG_LEN - 1);
  if (!rt::validErrhandler(errhandler))
    return check::fail(call, MPI_ERR_ARG, "errhandler = %#x is not a valid error handler",
                       static_cast<unsigned>(errhandler));
  if (g->members.empty()) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  if (std::find(g->members.begin(), g->members.end(), rt::ctx().eng.rank) == g->members.end())
    return check::fail(call, MPI_ERR_GROUP, "the calling process is not in group");
  uint32_t h = 2166136261u;  // FNV-1a
  for (size_t i = 0; i < len; ++i) h = (h ^ static_cast<uint8_t>(stringtag[i])) * 16777619u;
  const int tag = static_cast<int>((h & 0x3fffffffu) | 0x40000000u);
  rt::Comm* nc = nullptr;
  if (int rc = rt::createGroupComm(*rt::comm(MPI_COMM_WORLD), *g, tag, &nc)) return check::engine(call, rc);
  rt::releaseErrhandler(nc->errhandler);
  nc->errhandler = refErrhandler(errhandler);
  if (info)
    for (const auto& kv : info->entries) nc->hints.set(kv.first, kv.second);
  *newcomm = nc->handle;
  return MPI_SUCCESS;
}

MPI_Fint sessionC2f(Call&, MPI_Session session) { return static_cast<MPI_Fint>(session); }
MPI_Session sessionF2c(Call&, MPI_Fint session) { return static_cast<MPI_Session>(session); }

}  // namespace impl

}  // namespace shmcoll::api

#include "generated/entry_session.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/session.txt)
