// Info objects (MPI_Info_*), MPI_INFO_ENV, and communicator hints
// (MPI_Comm_set_info, MPI_Comm_get_info, MPI_Comm_dup_with_info).
//
// The MPI_Info_* calls are local and work before MPI_Init and after
// MPI_Finalize too, as MPI-4 allows.  Keys have 1 .. MPI_MAX_INFO_KEY - 1
// characters and values at most MPI_MAX_INFO_VAL - 1 (runtime/info.h says
// why); an empty value is allowed.  MPI_INFO_ENV is read-only: setting,
// deleting or freeing it is MPI_ERR_INFO; MPI_Info_dup of it gives a
// modifiable copy.
//
// Communicator hints are kept exactly as set, recognised or not (shmcoll acts
// on none of them today): MPI_Comm_set_info adds or replaces the keys it is
// given and leaves the others; MPI_Comm_get_info returns a copy;
// MPI_Comm_dup copies them; MPI_Comm_dup_with_info takes its info's instead;
// no other constructor passes them on.  MPI_INFO_NULL stands for "no hints"
// in MPI_Comm_set_info and MPI_Comm_dup_with_info.
#include <cstring>
#include <string>

#include "api/api.h"
#include "api/attr.h"
#include "common/settings.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/info.h"

using namespace shmcoll;
using api::kNoComm;

namespace {

int gRequestedThreadLevel = MPI_THREAD_SINGLE;

#define NEED_INIT(fn) \
  SHMCOLL_REQUIRE(api::active(), kNoComm, fn, MPI_ERR_OTHER, "called outside MPI_Init ... MPI_Finalize")
#define NEED_COMM(c, h, fn)                                                                                   \
  rt::Comm* c = rt::comm(h);                                                                                  \
  SHMCOLL_REQUIRE(c, h, fn, MPI_ERR_COMM, "comm = %#x is not a valid communicator%s", static_cast<unsigned>(h), \
                  ::shmcoll::rt::commNote(h))
#define NOT_NULL(ptr, errComm, fn, arg) SHMCOLL_REQUIRE((ptr) != nullptr, errComm, fn, MPI_ERR_ARG, "%s is NULL", arg)
// Resolves info argument `h` (named `arg`) or returns MPI_ERR_INFO.
#define INFO_ARG(var, h, errComm, fn, arg)                                                                  \
  rt::Info* var = rt::info(h);                                                                            \
  SHMCOLL_REQUIRE(var, errComm, fn, MPI_ERR_INFO, "%s = %#x is %s", arg, static_cast<unsigned>(h),         \
                  (h) == MPI_INFO_NULL ? "MPI_INFO_NULL" : "not a valid info object (never created, or freed)")
#define WRITABLE(h, fn) \
  SHMCOLL_REQUIRE((h) != MPI_INFO_ENV, kNoComm, fn, MPI_ERR_INFO, "info = MPI_INFO_ENV is read-only")

// Checks key argument `key`; on success *out holds it.
int checkKey(const char* fn, const char* key, std::string* out) {
  NOT_NULL(key, kNoComm, fn, "key");
  const size_t n = strnlen(key, rt::kMaxInfoKey + 1);
  SHMCOLL_REQUIRE(n > 0, kNoComm, fn, MPI_ERR_INFO_KEY, "key is the empty string");
  SHMCOLL_REQUIRE(n <= rt::kMaxInfoKey, kNoComm, fn, MPI_ERR_INFO_KEY,
                  "key is longer than %zu characters (MPI_MAX_INFO_KEY - 1)", rt::kMaxInfoKey);
  out->assign(key, n);
  return MPI_SUCCESS;
}

}  // namespace

// ---- info objects ------------------------------------------------------------------

SHMCOLL_API(int, MPI_Info_create, (MPI_Info * info)) {
  NOT_NULL(info, kNoComm, "MPI_Info_create", "info");
  *info = rt::newInfo();
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_create_env, (int argc, char* argv[], MPI_Info* info)) {
  const char* fn = "MPI_Info_create_env";
  NOT_NULL(info, kNoComm, fn, "info");
  SHMCOLL_REQUIRE(argc >= 0, kNoComm, fn, MPI_ERR_ARG, "argc = %d is negative", argc);
  std::vector<std::string> args;
  if (argv) {
    for (int i = 0; i < argc; ++i) {
      SHMCOLL_REQUIRE(argv[i], kNoComm, fn, MPI_ERR_ARG, "argv[%d] is NULL with argc = %d", i, argc);
      args.emplace_back(argv[i]);
    }
  } else {
    args = rt::processArgs();  // C allows NULL, as for MPI_Init
  }
  const rt::Context& c = rt::ctx();
  const int size =
      c.initialized ? static_cast<int>(c.eng.size) : static_cast<int>(settings::integer(settings::Id::kJobSize));
  *info = rt::newInfo(rt::makeEnvInfo(args, size, c.initialized ? gRequestedThreadLevel : MPI_THREAD_SINGLE));
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_set, (MPI_Info info, const char* key, const char* value)) {
  const char* fn = "MPI_Info_set";
  INFO_ARG(in, info, kNoComm, fn, "info");
  WRITABLE(info, fn);
  std::string k;
  if (int rc = checkKey(fn, key, &k)) return rc;
  NOT_NULL(value, kNoComm, fn, "value");
  const size_t n = strnlen(value, rt::kMaxInfoValue + 1);
  SHMCOLL_REQUIRE(n <= rt::kMaxInfoValue, kNoComm, fn, MPI_ERR_INFO_VALUE,
                  "value is longer than %zu characters (MPI_MAX_INFO_VAL - 1)", rt::kMaxInfoValue);
  in->set(k, std::string(value, n));
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_delete, (MPI_Info info, const char* key)) {
  const char* fn = "MPI_Info_delete";
  INFO_ARG(in, info, kNoComm, fn, "info");
  WRITABLE(info, fn);
  std::string k;
  if (int rc = checkKey(fn, key, &k)) return rc;
  SHMCOLL_REQUIRE(in->erase(k), kNoComm, fn, MPI_ERR_INFO_NOKEY, "key = \"%s\" is not set in info", k.c_str());
  return MPI_SUCCESS;
}

// Deprecated in MPI-4 (MPI_Info_get_string replaces it), still common.
// valuelen is the room for characters; value[valuelen] receives the null.
SHMCOLL_API(int, MPI_Info_get, (MPI_Info info, const char* key, int valuelen, char* value, int* flag)) {
  const char* fn = "MPI_Info_get";
  INFO_ARG(in, info, kNoComm, fn, "info");
  std::string k;
  if (int rc = checkKey(fn, key, &k)) return rc;
  SHMCOLL_REQUIRE(valuelen >= 0, kNoComm, fn, MPI_ERR_ARG, "valuelen = %d is negative", valuelen);
  NOT_NULL(value, kNoComm, fn, "value");
  NOT_NULL(flag, kNoComm, fn, "flag");
  const std::string* v = in->find(k);
  *flag = v != nullptr;
  if (v) {  // longer values are cut to valuelen characters, as the standard says
    const size_t n = std::min(v->size(), static_cast<size_t>(valuelen));
    memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag)) {
  const char* fn = "MPI_Info_get_valuelen";
  INFO_ARG(in, info, kNoComm, fn, "info");
  std::string k;
  if (int rc = checkKey(fn, key, &k)) return rc;
  NOT_NULL(valuelen, kNoComm, fn, "valuelen");
  NOT_NULL(flag, kNoComm, fn, "flag");
  const std::string* v = in->find(k);
  *flag = v != nullptr;
  if (v) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

// MPI-4: *buflen is the room in value, null included; it comes back as the
// room the whole value needs.  *buflen == 0 only asks for that size.  An
// absent key leaves value and *buflen alone.
SHMCOLL_API(int, MPI_Info_get_string, (MPI_Info info, const char* key, int* buflen, char* value, int* flag)) {
  const char* fn = "MPI_Info_get_string";
  INFO_ARG(in, info, kNoComm, fn, "info");
  std::string k;
  if (int rc = checkKey(fn, key, &k)) return rc;
  NOT_NULL(buflen, kNoComm, fn, "buflen");
  SHMCOLL_REQUIRE(*buflen >= 0, kNoComm, fn, MPI_ERR_ARG, "*buflen = %d is negative", *buflen);
  SHMCOLL_REQUIRE(*buflen == 0 || value, kNoComm, fn, MPI_ERR_ARG, "value is NULL with *buflen = %d", *buflen);
  NOT_NULL(flag, kNoComm, fn, "flag");
  const std::string* v = in->find(k);
  *flag = v != nullptr;
  if (!v) return MPI_SUCCESS;
  if (*buflen > 0) {
    const size_t n = std::min(v->size(), static_cast<size_t>(*buflen) - 1);
    memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  *buflen = static_cast<int>(v->size()) + 1;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_get_nkeys, (MPI_Info info, int* nkeys)) {
  INFO_ARG(in, info, kNoComm, "MPI_Info_get_nkeys", "info");
  NOT_NULL(nkeys, kNoComm, "MPI_Info_get_nkeys", "nkeys");
  *nkeys = static_cast<int>(in->entries.size());
  return MPI_SUCCESS;
}

// Keys are numbered 0 .. nkeys-1 in the order they were first set; key needs
// room for MPI_MAX_INFO_KEY characters (null included).
SHMCOLL_API(int, MPI_Info_get_nthkey, (MPI_Info info, int n, char* key)) {
  const char* fn = "MPI_Info_get_nthkey";
  INFO_ARG(in, info, kNoComm, fn, "info");
  NOT_NULL(key, kNoComm, fn, "key");
  const int nkeys = static_cast<int>(in->entries.size());
  SHMCOLL_REQUIRE(n >= 0 && n < nkeys, kNoComm, fn, MPI_ERR_ARG, "n = %d is outside 0 .. nkeys-1 (info has %d keys)",
                  n, nkeys);
  const std::string& k = in->entries[n].first;
  memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_dup, (MPI_Info info, MPI_Info* newinfo)) {
  INFO_ARG(in, info, kNoComm, "MPI_Info_dup", "info");
  NOT_NULL(newinfo, kNoComm, "MPI_Info_dup", "newinfo");
  *newinfo = rt::newInfo(*in);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Info_free, (MPI_Info * info)) {
  const char* fn = "MPI_Info_free";
  NOT_NULL(info, kNoComm, fn, "info");
  SHMCOLL_REQUIRE(*info != MPI_INFO_ENV, kNoComm, fn, MPI_ERR_INFO, "*info = MPI_INFO_ENV cannot be freed");
  INFO_ARG(in, *info, kNoComm, fn, "*info");
  (void)in;
  rt::freeInfo(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

// ---- communicator hints ---------------------------------------------------------------

SHMCOLL_API(int, MPI_Comm_set_info, (MPI_Comm comm, MPI_Info info)) {
  const char* fn = "MPI_Comm_set_info";
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  if (info == MPI_INFO_NULL) return MPI_SUCCESS;
  INFO_ARG(in, info, comm, fn, "info");
  for (const auto& kv : in->entries) c->hints.set(kv.first, kv.second);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Comm_get_info, (MPI_Comm comm, MPI_Info* info_used)) {
  const char* fn = "MPI_Comm_get_info";
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  NOT_NULL(info_used, comm, fn, "info_used");
  *info_used = rt::newInfo(c->hints);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm)) {
  const char* fn = "MPI_Comm_dup_with_info";
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  NOT_NULL(newcomm, comm, fn, "newcomm");
  rt::Info hints;
  if (info != MPI_INFO_NULL) {
    INFO_ARG(in, info, comm, fn, "info");
    hints = *in;
  }
  rt::Comm* nc = nullptr;
  if (int rc = rt::dupComm(*c, &nc)) return api::raise(comm, fn, rc);
  return api::completeDup(comm, nc, std::move(hints), fn, newcomm);
}

SHMCOLL_API(int, MPI_Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request)) {
  const char* fn = "MPI_Comm_idup_with_info";
  NEED_INIT(fn);
  NEED_COMM(c, comm, fn);
  NOT_NULL(newcomm, comm, fn, "newcomm");
  NOT_NULL(request, comm, fn, "request");
  (void)c;
  rt::Info hints;
  if (info != MPI_INFO_NULL) {
    INFO_ARG(in, info, comm, fn, "info");
    hints = *in;
  }
  return api::startIdup(comm, std::move(hints), fn, newcomm, request);
}

// ---- MPI_INFO_ENV (api/attr.h) ----------------------------------------------------------

namespace shmcoll::api {

void recordInitEnv(int requiredThreadLevel) {
  gRequestedThreadLevel = requiredThreadLevel;
  rt::envInfo() = rt::makeEnvInfo(rt::processArgs(), static_cast<int>(rt::ctx().eng.size), requiredThreadLevel);
}

}  // namespace shmcoll::api
