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

#include "api/attr.h"
#include "api/check.h"
#include "common/settings.h"
#include "runtime/comm.h"
#include "runtime/context.h"
#include "runtime/info.h"

namespace shmcoll::api {

namespace {

int gRequestedThreadLevel = MPI_THREAD_SINGLE;

// Checks key argument `key`; on success *out holds it.
int checkKey(const Call& call, const char* key, std::string* out) {
  SHMCOLL_CHECK(check::notNull(call, "key", key));
  const size_t n = strnlen(key, rt::kMaxInfoKey + 1);
  if (n == 0) return check::fail(call, MPI_ERR_INFO_KEY, "key is the empty string");
  if (n > rt::kMaxInfoKey)
    return check::fail(call, MPI_ERR_INFO_KEY, "key is longer than %zu characters (MPI_MAX_INFO_KEY - 1)",
                       rt::kMaxInfoKey);
  out->assign(key, n);
  return MPI_SUCCESS;
}

}  // namespace

namespace impl {

// ---- info objects ------------------------------------------------------------------

int infoCreate(Call&, MPI_Info* info) {
  *info = rt::newInfo();
  return MPI_SUCCESS;
}

int infoCreateEnv(Call& call, int argc, char* argv[], MPI_Info* info) {
  std::vector<std::string> args;
  if (argv) {
    for (int i = 0; i < argc; ++i) {
      if (!argv[i]) return check::fail(call, MPI_ERR_ARG, "argv[%d] is NULL with argc = %d", i, argc);
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

int infoSet(Call& call, rt::Info* in, const char* key, const char* value) {
  std::string k;
  SHMCOLL_CHECK(checkKey(call, key, &k));
  const size_t n = strnlen(value, rt::kMaxInfoValue + 1);
  if (n > rt::kMaxInfoValue)
    return check::fail(call, MPI_ERR_INFO_VALUE, "value is longer than %zu characters (MPI_MAX_INFO_VAL - 1)",
                       rt::kMaxInfoValue);
  in->set(k, std::string(value, n));
  return MPI_SUCCESS;
}

int infoDelete(Call& call, rt::Info* in, const char* key) {
  std::string k;
  SHMCOLL_CHECK(checkKey(call, key, &k));
  if (!in->erase(k)) return check::fail(call, MPI_ERR_INFO_NOKEY, "key = \"%s\" is not set in info", k.c_str());
  return MPI_SUCCESS;
}

// Deprecated in MPI-4 (MPI_Info_get_string replaces it), still common.
// valuelen is the room for characters; value[valuelen] receives the null.
int infoGet(Call& call, rt::Info* in, const char* key, int valuelen, char* value, int* flag) {
  std::string k;
  SHMCOLL_CHECK(checkKey(call, key, &k));
  const std::string* v = in->find(k);
  *flag = v != nullptr;
  if (v) {  // longer values are cut to valuelen characters, as the standard says
    const size_t n = std::min(v->size(), static_cast<size_t>(valuelen));
    memcpy(value, v->data(), n);
    value[n] = '\0';
  }
  return MPI_SUCCESS;
}

int infoGetValuelen(Call& call, rt::Info* in, const char* key, int* valuelen, int* flag) {
  std::string k;
  SHMCOLL_CHECK(checkKey(call, key, &k));
  const std::string* v = in->find(k);
  *flag = v != nullptr;
  if (v) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

// MPI-4: *buflen is the room in value, null included; it comes back as the
// room the whole value needs.  *buflen == 0 only asks for that size.  An
// absent key leaves value and *buflen alone.
int infoGetString(Call& call, rt::Info* in, const char* key, int* buflen, char* value, int* flag) {
  std::string k;
  SHMCOLL_CHECK(checkKey(call, key, &k));
  if (*buflen < 0) return check::fail(call, MPI_ERR_ARG, "*buflen = %d is negative", *buflen);
  if (*buflen > 0 && !value) return check::fail(call, MPI_ERR_ARG, "value is NULL with *buflen = %d", *buflen);
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

int infoGetNkeys(Call&, rt::Info* in, int* nkeys) {
  *nkeys = static_cast<int>(in->entries.size());
  return MPI_SUCCESS;
}

// Keys are numbered 0 .. nkeys-1 in the order they were first set; key needs
// room for MPI_MAX_INFO_KEY characters (null included).
int infoGetNthkey(Call& call, rt::Info* in, int n, char* key) {
  const int nkeys = static_cast<int>(in->entries.size());
  if (n < 0 || n >= nkeys)
    return check::fail(call, MPI_ERR_ARG, "n = %d is outside 0 .. nkeys-1 (info has %d keys)", n, nkeys);
  const std::string& k = in->entries[n].first;
  memcpy(key, k.c_str(), k.size() + 1);
  return MPI_SUCCESS;
}

int infoDup(Call&, rt::Info* in, MPI_Info* newinfo) {
  *newinfo = rt::newInfo(*in);
  return MPI_SUCCESS;
}

int infoFree(Call& call, MPI_Info* info) {
  if (*info == MPI_INFO_ENV) return check::fail(call, MPI_ERR_INFO, "*info = MPI_INFO_ENV cannot be freed");
  rt::Info* in = nullptr;
  SHMCOLL_CHECK(check::info(call, "*info", *info, &in));
  rt::freeInfo(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

// ---- communicator hints ---------------------------------------------------------------

int commSetInfo(Call&, rt::Comm* c, rt::Info* in) {
  if (in)  // (MPI_INFO_NULL: no hints to add)
    for (const auto& kv : in->entries) c->hints.set(kv.first, kv.second);
  return MPI_SUCCESS;
}

int commGetInfo(Call&, rt::Comm* c, MPI_Info* infoUsed) {
  *infoUsed = rt::newInfo(c->hints);
  return MPI_SUCCESS;
}

int commDupWithInfo(Call& call, rt::Comm* c, rt::Info* in, MPI_Comm* newcomm) {
  rt::Comm* nc = nullptr;
  if (int rc = rt::dupComm(*c, &nc)) return check::engine(call, rc);
  return completeDup(c->handle, nc, in ? *in : rt::Info{}, call.fn, newcomm);
}

int commIdupWithInfo(Call& call, rt::Comm* c, rt::Info* in, MPI_Comm* newcomm, MPI_Request* request) {
  return startIdup(c->handle, in ? *in : rt::Info{}, call.fn, newcomm, request);
}

}  // namespace impl

// ---- MPI_INFO_ENV (api/attr.h) ----------------------------------------------------------

void recordInitEnv(int requiredThreadLevel) {
  gRequestedThreadLevel = requiredThreadLevel;
  rt::envInfo() = rt::makeEnvInfo(rt::processArgs(), static_cast<int>(rt::ctx().eng.size), requiredThreadLevel);
}

}  // namespace shmcoll::api

#include "generated/entry_info.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/info.txt)
