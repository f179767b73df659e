// libFuzzer target: info objects through the MPI API (MPI_Info_*), against a
// model, in a singleton process.
//
// The input is a program of operations (set, delete, get, get_string,
// get_valuelen, get_nthkey, dup, free) on a few info objects, with keys and
// values of any bytes and lengths, including over MPI_MAX_INFO_KEY and
// MPI_MAX_INFO_VAL.  The model is the standard's for C: ordered unique keys
// of 1 to MPI_MAX_INFO_KEY - 1 characters, taken as given (only Fortran
// strips blanks), values of up to MPI_MAX_INFO_VAL - 1; set replaces a value in place; a key
// too long or empty, or a value too long, is an MPI_ERR_INFO_KEY /
// MPI_ERR_INFO_VALUE error that changes nothing.  Every result, every flag
// and every byte written into the caller's buffers (guards included) is
// checked.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

using Model = std::vector<std::pair<std::string, std::string>>;

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz_info: %s %s\n", what, detail.c_str());
  std::abort();
}

struct Reader {
  const uint8_t* p;
  size_t n;
  uint8_t byte() {
    if (!n) return 0;
    --n;
    return *p++;
  }
  // A string of a length drawn from the input: short mostly, sometimes around the limits.
  std::string str() {
    uint8_t k = byte();
    size_t len = k & 0x3f;
    if (k & 0x80) len = (k & 0x40) ? MPI_MAX_INFO_VAL - 2 + (k & 3) : MPI_MAX_INFO_KEY - 2 + (k & 3);
    std::string s;
    for (size_t i = 0; i < len; ++i) {
      uint8_t c = n ? byte() : 'a';
      s += static_cast<char>(c ? c : 'z');  // C strings: no NUL inside
    }
    return s;
  }
};

const std::string* find(const Model& m, const std::string& k) {
  for (const auto& kv : m)
    if (kv.first == k) return &kv.second;
  return nullptr;
}

bool keyOk(const std::string& k) { return !k.empty() && k.size() < MPI_MAX_INFO_KEY; }

int errClass(int rc) {
  int c = rc;
  MPI_Error_class(rc, &c);
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Before MPI_Init an error is fatal (the initial error handler), so the
  // process starts as a singleton and returns errors; MPI_Info_* raise theirs
  // on MPI_COMM_SELF.
  if (MPI_Init(nullptr, nullptr) != MPI_SUCCESS) fail("MPI_Init failed");
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  std::atexit([] { MPI_Finalize(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr int kObjs = 3;
  MPI_Info h[kObjs];
  Model m[kObjs];
  for (MPI_Info& x : h)
    if (MPI_Info_create(&x) != MPI_SUCCESS) fail("MPI_Info_create failed");
  Reader in{data, size};
  char buf[MPI_MAX_INFO_VAL + 64];
  for (int steps = 0; in.n && steps < 200; ++steps) {
    const uint8_t op = in.byte();
    const int o = op / 16 % kObjs;
    switch (op % 8) {
      case 0: {  // set
        std::string k = in.str(), v = in.str();
        int rc = MPI_Info_set(h[o], k.c_str(), v.c_str());
        if (!keyOk(k)) {
          if (errClass(rc) != MPI_ERR_INFO_KEY) fail("a bad key was not MPI_ERR_INFO_KEY", k);
        } else if (v.size() >= MPI_MAX_INFO_VAL) {
          if (errClass(rc) != MPI_ERR_INFO_VALUE) fail("a long value was not MPI_ERR_INFO_VALUE");
        } else {
          if (rc != MPI_SUCCESS) fail("MPI_Info_set refused a good pair", k);
          const std::string& sk = k;
          bool replaced = false;
          for (auto& kv : m[o])
            if (kv.first == sk) kv.second = v, replaced = true;
          if (!replaced) m[o].emplace_back(sk, v);
        }
        break;
      }
      case 1: {  // delete
        std::string k = in.str();
        int rc = MPI_Info_delete(h[o], k.c_str());
        if (!keyOk(k)) {
          if (errClass(rc) != MPI_ERR_INFO_KEY) fail("delete: a bad key was not MPI_ERR_INFO_KEY", k);
          break;
        }
        const std::string& sk = k;
        bool had = false;
        for (size_t i = 0; i < m[o].size(); ++i)
          if (m[o][i].first == sk) m[o].erase(m[o].begin() + i), had = true;
        if (had != (rc == MPI_SUCCESS)) fail("MPI_Info_delete disagrees with the model", sk);
        if (!had && errClass(rc) != MPI_ERR_INFO_NOKEY) fail("delete of a missing key was not MPI_ERR_INFO_NOKEY");
        break;
      }
      case 2: {  // get_string with a buffer of some length
        std::string k = in.str();
        int buflen = in.byte() % 80;
        if (in.byte() & 1) buflen = MPI_MAX_INFO_VAL;
        std::memset(buf, 0x5a, sizeof buf);
        int flag = -1, len = buflen;
        int rc = MPI_Info_get_string(h[o], k.c_str(), &len, buf, &flag);
        if (!keyOk(k)) {
          if (errClass(rc) != MPI_ERR_INFO_KEY) fail("get_string: a bad key was not MPI_ERR_INFO_KEY", k);
          break;
        }
        if (rc != MPI_SUCCESS) fail("MPI_Info_get_string failed");
        const std::string* v = find(m[o], k);
        if ((flag != 0) != (v != nullptr)) fail("get_string: flag disagrees with the model");
        if (!v) {
          for (size_t i = 0; i < sizeof buf; ++i)
            if (buf[i] != 0x5a) fail("get_string wrote into the buffer of a missing key");
          break;
        }
        if (len != static_cast<int>(v->size()) + 1) fail("get_string: wrong length");
        size_t copy = buflen > 0 ? std::min<size_t>(v->size(), buflen - 1) : 0;
        if (buflen > 0 && (std::memcmp(buf, v->data(), copy) != 0 || buf[copy] != 0)) fail("get_string: wrong bytes");
        for (size_t i = buflen > 0 ? copy + 1 : 0; i < sizeof buf; ++i)
          if (buf[i] != 0x5a) fail("get_string wrote past its buffer");
        break;
      }
      case 3: {  // get with valuelen
        std::string k = in.str();
        int vl = in.byte() % 70;
        std::memset(buf, 0x5a, sizeof buf);
        int flag = -1;
        int rc = MPI_Info_get(h[o], k.c_str(), vl, buf, &flag);
        if (!keyOk(k)) {
          if (errClass(rc) != MPI_ERR_INFO_KEY) fail("get: a bad key was not MPI_ERR_INFO_KEY", k);
          break;
        }
        if (rc != MPI_SUCCESS) fail("MPI_Info_get failed");
        const std::string* v = find(m[o], k);
        if ((flag != 0) != (v != nullptr)) fail("get: flag disagrees with the model");
        if (!v) break;
        size_t copy = std::min<size_t>(v->size(), vl);
        if (std::memcmp(buf, v->data(), copy) != 0 || buf[copy] != 0) fail("get: wrong bytes");
        for (size_t i = copy + 1; i < sizeof buf; ++i)
          if (buf[i] != 0x5a) fail("get wrote past valuelen + 1");
        int vlen = -1;
        flag = -1;
        if (MPI_Info_get_valuelen(h[o], k.c_str(), &vlen, &flag) != MPI_SUCCESS || !flag ||
            vlen != static_cast<int>(v->size()))
          fail("MPI_Info_get_valuelen disagrees with the model");
        break;
      }
      case 4: {  // nkeys and nthkey
        int nk = -1;
        if (MPI_Info_get_nkeys(h[o], &nk) != MPI_SUCCESS || nk != static_cast<int>(m[o].size()))
          fail("MPI_Info_get_nkeys disagrees with the model");
        int i = nk ? in.byte() % (nk + 1) : 0;
        std::memset(buf, 0x5a, sizeof buf);
        int rc = MPI_Info_get_nthkey(h[o], i, buf);
        if (i >= nk) {
          if (errClass(rc) != MPI_ERR_ARG) fail("get_nthkey past the end was not MPI_ERR_ARG");
          break;
        }
        if (rc != MPI_SUCCESS || m[o][i].first != buf) fail("MPI_Info_get_nthkey disagrees with the model");
        for (size_t j = m[o][i].first.size() + 1; j < sizeof buf; ++j)
          if (buf[j] != 0x5a) fail("get_nthkey wrote past the key");
        break;
      }
      case 5: {  // dup over another object
        const int d = (o + 1) % kObjs;
        MPI_Info_free(&h[d]);
        if (h[d] != MPI_INFO_NULL) fail("MPI_Info_free did not set MPI_INFO_NULL");
        if (MPI_Info_dup(h[o], &h[d]) != MPI_SUCCESS) fail("MPI_Info_dup failed");
        m[d] = m[o];
        break;
      }
      case 6: {  // free and recreate
        MPI_Info_free(&h[o]);
        if (MPI_Info_create(&h[o]) != MPI_SUCCESS) fail("MPI_Info_create failed");
        m[o].clear();
        break;
      }
      default: {  // a handle that is not an info object
        MPI_Info bogus = h[o];
        std::memcpy(&bogus, data, std::min(size, sizeof bogus));
        bool real = false;
        for (MPI_Info x : h) real |= x == bogus;
        if (real || bogus == MPI_INFO_NULL || bogus == MPI_INFO_ENV) break;
        int nk = 0;
        if (errClass(MPI_Info_get_nkeys(bogus, &nk)) != MPI_ERR_INFO) fail("a bad handle was not MPI_ERR_INFO");
        break;
      }
    }
  }
  for (MPI_Info& x : h) MPI_Info_free(&x);
  return 0;
}
