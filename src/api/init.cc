// Start-up, shutdown and the environment queries.
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "api/api.h"
#include "api/attr.h"
#include "runtime/comm.h"
#include "runtime/context.h"

using namespace shmcoll;

namespace {
pthread_t gMainThread;

int doInit(const char* fn, int required, int* provided) {
  rt::Context& c = rt::ctx();
  if (c.initialized || c.finalized)
    return api::raisef(api::kNoComm, fn, MPI_ERR_OTHER,
                       c.finalized ? "called after MPI_Finalize" : "MPI is already initialized");
  if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
    return api::raisef(api::kNoComm, fn, MPI_ERR_ARG, "required = %d is not a thread level", required);
  gMainThread = pthread_self();
  if (int rc = rt::init(required, provided)) return api::raise(api::kNoComm, fn, rc);
  api::recordInitEnv(required);  // MPI_INFO_ENV (api/info.cc)
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Init, (int* argc, char*** argv)) { return doInit("MPI_Init", MPI_THREAD_SINGLE, nullptr); }

SHMCOLL_API(int, MPI_Init_thread, (int* argc, char*** argv, int required, int* provided)) {
  SHMCOLL_REQUIRE(provided, api::kNoComm, "MPI_Init_thread", MPI_ERR_ARG, "provided is NULL");
  return doInit("MPI_Init_thread", required, provided);
}

SHMCOLL_API(int, MPI_Query_thread, (int* provided)) {
  SHMCOLL_REQUIRE(provided, api::kNoComm, "MPI_Query_thread", MPI_ERR_ARG, "provided is NULL");
  *provided = rt::ctx().threadLevel;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Is_thread_main, (int* flag)) {
  SHMCOLL_REQUIRE(flag, api::kNoComm, "MPI_Is_thread_main", MPI_ERR_ARG, "flag is NULL");
  *flag = pthread_equal(gMainThread, pthread_self()) ? 1 : 0;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Initialized, (int* flag)) {
  SHMCOLL_REQUIRE(flag, api::kNoComm, "MPI_Initialized", MPI_ERR_ARG, "flag is NULL");
  *flag = rt::ctx().initialized ? 1 : 0;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Finalized, (int* flag)) {
  SHMCOLL_REQUIRE(flag, api::kNoComm, "MPI_Finalized", MPI_ERR_ARG, "flag is NULL");
  *flag = rt::ctx().finalized ? 1 : 0;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Finalize, (void)) {
  SHMCOLL_REQUIRE(api::active(), api::kNoComm, "MPI_Finalize", MPI_ERR_OTHER,
                  rt::ctx().finalized ? "called twice" : "called before MPI_Init");
  // First, as the standard says: MPI_COMM_SELF's attributes are deleted (api/attr.cc).
  const int attrRc = api::finalizeAttrs();
  if (int rc = rt::finalize()) return api::raise(MPI_COMM_WORLD, "MPI_Finalize", rc);
  return attrRc;
}

SHMCOLL_API(int, MPI_Abort, (MPI_Comm comm, int errorcode)) {
  rt::Context& c = rt::ctx();
  // Under shmrun the launcher reports the abort (it reads the abort word);
  // a singleton has nobody else to say it.
  if (c.singleton || !c.initialized)
    fprintf(stderr, "shmcoll: rank %u called MPI_Abort with error code %d\n", c.eng.rank, errorcode);
  rt::abortJob(errorcode);
}

SHMCOLL_API(double, MPI_Wtime, (void)) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

SHMCOLL_API(double, MPI_Wtick, (void)) {
  struct timespec ts;
  clock_getres(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

SHMCOLL_API(int, MPI_Get_processor_name, (char* name, int* resultlen)) {
  SHMCOLL_REQUIRE(name && resultlen, api::kNoComm, "MPI_Get_processor_name", MPI_ERR_ARG,
                  "name or resultlen is NULL");
  char host[MPI_MAX_PROCESSOR_NAME];
  if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "localhost");
  host[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
  size_t n = strlen(host);
  memcpy(name, host, n + 1);
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Get_version, (int* version, int* subversion)) {
  SHMCOLL_REQUIRE(version && subversion, api::kNoComm, "MPI_Get_version", MPI_ERR_ARG,
                  "version or subversion is NULL");
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Get_library_version, (char* version, int* resultlen)) {
  SHMCOLL_REQUIRE(version && resultlen, api::kNoComm, "MPI_Get_library_version", MPI_ERR_ARG,
                  "version or resultlen is NULL");
  int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                   "shmcoll %s (shared-memory single-node MPI subset, MPI %d.%d)", SHMCOLL_VERSION_STRING,
                   MPI_VERSION, MPI_SUBVERSION);
  *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
  return MPI_SUCCESS;
}
