// Start-up, shutdown and the environment queries (MPI_Init, MPI_Finalize,
// MPI_Abort, MPI_Wtime, the thread level, versions, processor name).
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "api/attr.h"
#include "api/check.h"
#include "runtime/comm.h"
#include "runtime/context.h"

namespace shmcoll::api::impl {

namespace {

pthread_t gMainThread;

int start(const Call& call, int required, int* provided) {
  rt::Context& c = rt::ctx();
  if (c.worldInit || c.worldFinalized)
    return check::fail(call, MPI_ERR_OTHER,
                       c.worldFinalized ? "called after MPI_Finalize" : "MPI is already initialized");
  if (c.finalized)
    return check::fail(call, MPI_ERR_OTHER,
                       "called after the last MPI_Session_finalize ended the runtime, which "
                       "cannot start again in this process");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return check::fail(call, MPI_ERR_ARG, "required = %d is not a thread level", required);
  gMainThread = pthread_self();
  if (!c.initialized) {
    if (int rc = rt::init(required, provided)) return check::engine(call, rc);
  } else if (provided) {  // a session started the runtime: its thread level stands
    *provided = c.threadLevel;
  }
  recordInitEnv(required);  // MPI_INFO_ENV (api/info.cc)
  c.worldInit = true;
  return MPI_SUCCESS;
}

}  // namespace

int init(Call& call, int* argc, char*** argv) { return start(call, MPI_THREAD_SINGLE, nullptr); }

int initThread(Call& call, int* argc, char*** argv, int required, int* provided) {
  return start(call, required, provided);
}

int queryThread(Call&, int* provided) { return answer(provided, rt::ctx().threadLevel); }

int isThreadMain(Call&, int* flag) { return answer(flag, pthread_equal(gMainThread, pthread_self()) ? 1 : 0); }
int initializedFlag(Call&, int* flag) { return answer(flag, rt::ctx().worldInit); }
int finalized(Call&, int* flag) { return answer(flag, rt::ctx().worldFinalized); }

int finalize(Call& call) {
  rt::Context& c = rt::ctx();
  if (!c.worldInit || c.worldFinalized)
    return check::fail(call, MPI_ERR_OTHER, c.worldFinalized ? "called twice" : "called before MPI_Init");
  // First, as the standard says: MPI_COMM_SELF's attributes are deleted (api/attr.cc).
  const int attrRc = finalizeAttrs();
  c.worldFinalized = true;
  // Sessions still open keep the runtime: the last MPI_Session_finalize ends it.
  if (c.sessions == 0)
    if (int rc = rt::finalize()) return check::engine(call, rc);
  return attrRc;
}

}  // namespace shmcoll::api::impl

namespace shmcoll::api {

// The runtime for a session (api/session.cc): started if MPI_Init has not.
int startForSession(const Call& call, int required, int* provided) {
  rt::Context& c = rt::ctx();
  if (c.finalized)
    return check::fail(call, MPI_ERR_SESSION,
                       "the runtime has ended (MPI_Finalize, or the last "
                       "MPI_Session_finalize, ran with no session open) and cannot start again in this process");
  if (!c.initialized) {
    impl::gMainThread = pthread_self();
    if (int rc = rt::init(required, provided)) return check::engine(call, rc);
  } else {
    *provided = c.threadLevel;
  }
  ++c.sessions;
  return MPI_SUCCESS;
}

// The end of a session: the last one ends the runtime unless the world model still runs.
int endForSession(const Call& call) {
  rt::Context& c = rt::ctx();
  if (--c.sessions == 0 && (!c.worldInit || c.worldFinalized))
    if (int rc = rt::finalize()) return check::engine(call, rc);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api

namespace shmcoll::api::impl {

int abortAll(Call&, MPI_Comm comm, int errorcode) {
  rt::Context& c = rt::ctx();
  // Under shmrun the launcher reports the abort (it reads the abort word);
  // a singleton has nobody else to say it.
  if (c.singleton || !c.initialized)
    fprintf(stderr, "shmcoll: %s called MPI_Abort with error code %d\n", whoAmI().c_str(), errorcode);
  rt::abortJob(errorcode);
}

namespace {
double seconds(const timespec& ts) { return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec); }
}  // namespace

double wtime(Call&) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return seconds(ts);
}

double wtick(Call&) {
  struct timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return seconds(ts);
}

int getProcessorName(Call&, char* name, int* resultlen) {
  char host[MPI_MAX_PROCESSOR_NAME];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
  host[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  size_t n = strlen(host);
  memcpy(name, host, n + 1);
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

int getVersion(Call&, int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int getLibraryVersion(Call&, char* version, int* resultlen) {
  int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                   "shmcoll %s (shared-memory single-node MPI subset, MPI %d.%d)", SHMCOLL_VERSION_STRING,
                   MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_init.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/init.txt)
