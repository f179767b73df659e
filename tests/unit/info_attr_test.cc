// Info objects, communicator hints, attribute caching (keyvals, callbacks,
// predefined attributes, the MPI-1 forms) and communicator names, through
// the MPI API in a singleton process (MPI_Init without shmrun), with
// MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF.  Every error case
// checks the class, that the message names the function and the argument,
// and that nothing changed: the object's contents, output arguments and the
// bytes around output buffers.  The internal counters (live info handles,
// keyvals, datatype handles, communicator contexts) show that nothing leaks.
#include <gtest/gtest.h>
#include <mpi.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "runtime/types.h"
#include "runtime/attr.h"
#include "runtime/context.h"
#include "runtime/info.h"

namespace {

class MpiEnv : public testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(MPI_Init(nullptr, nullptr), MPI_SUCCESS);
    ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), MPI_SUCCESS);
  }
  void TearDown() override { MPI_Finalize(); }
};
const auto* gEnv = testing::AddGlobalTestEnvironment(new MpiEnv);

int classOf(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

std::string text(int code) {
  char s[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(code, s, &n);
  return std::string(s, n);
}

// The call fails with class `cls` and a message naming the function and the argument.
#define EXPECT_ERR(call, cls, fn, arg)                              \
  do {                                                              \
    int rc_ = (call);                                               \
    EXPECT_EQ(classOf(rc_), cls) << #call << ": " << text(rc_);     \
    EXPECT_NE(text(rc_).find(fn), std::string::npos) << text(rc_);  \
    EXPECT_NE(text(rc_).find(arg), std::string::npos) << text(rc_); \
  } while (0)

using Pairs = std::vector<std::pair<std::string, std::string>>;

// Every (key, value) of `info`, in MPI_Info_get_nthkey order.
Pairs contents(MPI_Info info) {
  Pairs out;
  int n = -1;
  EXPECT_EQ(MPI_Info_get_nkeys(info, &n), MPI_SUCCESS);
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY];
    EXPECT_EQ(MPI_Info_get_nthkey(info, i, key), MPI_SUCCESS);
    int len = -1, flag = 0;
    EXPECT_EQ(MPI_Info_get_valuelen(info, key, &len, &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 1);
    std::vector<char> v(len + 1, 'x');
    EXPECT_EQ(MPI_Info_get(info, key, len, v.data(), &flag), MPI_SUCCESS);
    out.emplace_back(key, std::string(v.data()));
  }
  return out;
}

MPI_Info makeInfo(const Pairs& p) {
  MPI_Info info;
  EXPECT_EQ(MPI_Info_create(&info), MPI_SUCCESS);
  for (const auto& kv : p) EXPECT_EQ(MPI_Info_set(info, kv.first.c_str(), kv.second.c_str()), MPI_SUCCESS);
  return info;
}

size_t contextsInUse() { return shmcoll::rt::ctx().ctxUsed.count(); }

// ---- info objects ------------------------------------------------------------------

TEST(Info, InsertionOrderReplaceDeleteDupFree) {
  const size_t live0 = shmcoll::rt::liveInfos();
  MPI_Info info = makeInfo({{"a", "1"}, {"b", "2"}, {"c", "3"}});
  EXPECT_EQ(contents(info), (Pairs{{"a", "1"}, {"b", "2"}, {"c", "3"}}));
  ASSERT_EQ(MPI_Info_set(info, "b", "twenty-two"), MPI_SUCCESS);  // replaced in place
  EXPECT_EQ(contents(info), (Pairs{{"a", "1"}, {"b", "twenty-two"}, {"c", "3"}}));
  ASSERT_EQ(MPI_Info_delete(info, "a"), MPI_SUCCESS);
  ASSERT_EQ(MPI_Info_set(info, "a", "again"), MPI_SUCCESS);  // a new key goes last
  EXPECT_EQ(contents(info), (Pairs{{"b", "twenty-two"}, {"c", "3"}, {"a", "again"}}));
  ASSERT_EQ(MPI_Info_set(info, "B", "case"), MPI_SUCCESS);  // keys are case sensitive
  EXPECT_EQ(contents(info).size(), 4u);

  MPI_Info dup;
  ASSERT_EQ(MPI_Info_dup(info, &dup), MPI_SUCCESS);
  EXPECT_NE(dup, info);
  EXPECT_EQ(contents(dup), contents(info));
  ASSERT_EQ(MPI_Info_set(dup, "c", "changed"), MPI_SUCCESS);
  ASSERT_EQ(MPI_Info_delete(dup, "b"), MPI_SUCCESS);
  EXPECT_EQ(contents(info), (Pairs{{"b", "twenty-two"}, {"c", "3"}, {"a", "again"}, {"B", "case"}}));
  EXPECT_EQ(contents(dup), (Pairs{{"c", "changed"}, {"a", "again"}, {"B", "case"}}));

  EXPECT_EQ(shmcoll::rt::liveInfos(), live0 + 2);
  ASSERT_EQ(MPI_Info_free(&dup), MPI_SUCCESS);
  EXPECT_EQ(dup, MPI_INFO_NULL);
  ASSERT_EQ(MPI_Info_free(&info), MPI_SUCCESS);
  EXPECT_EQ(info, MPI_INFO_NULL);
  EXPECT_EQ(shmcoll::rt::liveInfos(), live0);
}

TEST(Info, KeyAndValueLimits) {
  MPI_Info info = makeInfo({{"first", "1"}});
  const std::string key255(MPI_MAX_INFO_KEY - 1, 'k'), key256(MPI_MAX_INFO_KEY, 'k');
  const std::string val1023(MPI_MAX_INFO_VAL - 1, 'v'), val1024(MPI_MAX_INFO_VAL, 'v');
  ASSERT_EQ(MPI_Info_set(info, key255.c_str(), "long key"), MPI_SUCCESS);
  ASSERT_EQ(MPI_Info_set(info, "long value", val1023.c_str()), MPI_SUCCESS);
  ASSERT_EQ(MPI_Info_set(info, "empty", ""), MPI_SUCCESS);
  const Pairs before = {{"first", "1"}, {key255, "long key"}, {"long value", val1023}, {"empty", ""}};
  EXPECT_EQ(contents(info), before);
  char key[MPI_MAX_INFO_KEY];  // a key of the longest length fits MPI_MAX_INFO_KEY bytes
  ASSERT_EQ(MPI_Info_get_nthkey(info, 1, key), MPI_SUCCESS);
  EXPECT_EQ(std::string(key), key255);
  int len = -1, flag = 0;
  ASSERT_EQ(MPI_Info_get_valuelen(info, "empty", &len, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(len, 0);

  EXPECT_ERR(MPI_Info_set(info, key256.c_str(), "x"), MPI_ERR_INFO_KEY, "MPI_Info_set", "key is longer than 255");
  EXPECT_ERR(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY, "MPI_Info_set", "key is the empty string");
  EXPECT_ERR(MPI_Info_set(info, "first", val1024.c_str()), MPI_ERR_INFO_VALUE, "MPI_Info_set",
             "value is longer than 1023");
  EXPECT_ERR(MPI_Info_set(info, nullptr, "x"), MPI_ERR_ARG, "MPI_Info_set", "key is NULL");
  EXPECT_ERR(MPI_Info_set(info, "first", nullptr), MPI_ERR_ARG, "MPI_Info_set", "value is NULL");
  // Look-ups with bad keys are errors too, and write nothing.
  flag = 7;
  len = 7;
  EXPECT_ERR(MPI_Info_get_valuelen(info, key256.c_str(), &len, &flag), MPI_ERR_INFO_KEY, "MPI_Info_get_valuelen",
             "key");
  EXPECT_ERR(MPI_Info_delete(info, ""), MPI_ERR_INFO_KEY, "MPI_Info_delete", "key");
  EXPECT_EQ(flag, 7);
  EXPECT_EQ(len, 7);
  EXPECT_EQ(contents(info), before);
  MPI_Info_free(&info);
}

TEST(Info, GetAndGetStringWriteExactlyTheirBytes) {
  MPI_Info info = makeInfo({{"key", "abcdefgh"}});
  constexpr int kGuard = 16;
  struct Buf {
    char b[64];
    Buf() { memset(b, '#', sizeof b); }
    char* p() { return b + kGuard; }
    // The bytes at p()[0 .. n) are `s` and the rest is untouched.
    bool holds(const char* s, size_t n) const {
      for (size_t i = 0; i < sizeof b; ++i) {
        const bool in = i >= kGuard && i < kGuard + n;
        if (b[i] != (in ? s[i - kGuard] : '#')) return false;
      }
      return true;
    }
  };
  int flag = -1;
  {
    Buf v;  // MPI_Info_get: valuelen characters, then the null at value[valuelen]
    ASSERT_EQ(MPI_Info_get(info, "key", 3, v.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_TRUE(v.holds("abc", 4));
  }
  {
    Buf v;
    ASSERT_EQ(MPI_Info_get(info, "key", 0, v.p(), &flag), MPI_SUCCESS);
    EXPECT_TRUE(v.holds("", 1));
  }
  {
    Buf v;
    ASSERT_EQ(MPI_Info_get(info, "key", 8, v.p(), &flag), MPI_SUCCESS);
    EXPECT_TRUE(v.holds("abcdefgh", 9));
    Buf w;
    ASSERT_EQ(MPI_Info_get(info, "key", 40, w.p(), &flag), MPI_SUCCESS);
    EXPECT_TRUE(w.holds("abcdefgh", 9));
  }
  {
    Buf v;  // absent key: flag 0, nothing written
    flag = -1;
    ASSERT_EQ(MPI_Info_get(info, "nokey", 8, v.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 0);
    EXPECT_TRUE(v.holds("", 0));
  }
  {
    Buf v;  // MPI_Info_get_string: buflen 0 only asks for the size
    int buflen = 0;
    ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, v.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 1);
    EXPECT_EQ(buflen, 9);
    EXPECT_TRUE(v.holds("", 0));
    buflen = 0;
    ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, nullptr, &flag), MPI_SUCCESS);
    EXPECT_EQ(buflen, 9);
  }
  {
    Buf v;  // a short buffer: buflen-1 characters and the null
    int buflen = 4;
    ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, v.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(buflen, 9);
    EXPECT_TRUE(v.holds("abc", 4));
    Buf w;
    buflen = 1;
    ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, w.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(buflen, 9);
    EXPECT_TRUE(w.holds("", 1));
  }
  {
    Buf v;
    int buflen = 9;
    ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, v.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(buflen, 9);
    EXPECT_TRUE(v.holds("abcdefgh", 9));
    Buf w;
    buflen = 40;
    ASSERT_EQ(MPI_Info_get_string(info, "key", &buflen, w.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(buflen, 9);
    EXPECT_TRUE(w.holds("abcdefgh", 9));
  }
  {
    Buf v;  // absent key: flag 0, buflen and value untouched
    int buflen = 40;
    flag = -1;
    ASSERT_EQ(MPI_Info_get_string(info, "nokey", &buflen, v.p(), &flag), MPI_SUCCESS);
    EXPECT_EQ(flag, 0);
    EXPECT_EQ(buflen, 40);
    EXPECT_TRUE(v.holds("", 0));
  }
  {
    Buf v;  // errors write nothing
    flag = -1;
    EXPECT_ERR(MPI_Info_get(info, "key", -1, v.p(), &flag), MPI_ERR_ARG, "MPI_Info_get", "valuelen = -1");
    int buflen = -2;
    EXPECT_ERR(MPI_Info_get_string(info, "key", &buflen, v.p(), &flag), MPI_ERR_ARG, "MPI_Info_get_string",
               "*buflen = -2");
    EXPECT_EQ(buflen, -2);
    buflen = 5;
    EXPECT_ERR(MPI_Info_get_string(info, "key", &buflen, nullptr, &flag), MPI_ERR_ARG, "MPI_Info_get_string",
               "value is NULL");
    EXPECT_EQ(buflen, 5);
    EXPECT_ERR(MPI_Info_get(info, "key", 8, v.p(), nullptr), MPI_ERR_ARG, "MPI_Info_get", "flag is NULL");
    EXPECT_EQ(flag, -1);
    EXPECT_TRUE(v.holds("", 0));
  }
  MPI_Info_free(&info);
}

TEST(Info, ErrorsLeaveEverythingAsItWas) {
  MPI_Info info = makeInfo({{"x", "1"}, {"y", "2"}});
  const Pairs before = contents(info);
  MPI_Info freed = makeInfo({});
  const MPI_Info stale = freed;
  MPI_Info_free(&freed);
  int n = -5, flag = -5;
  char key[MPI_MAX_INFO_KEY];
  memset(key, '#', sizeof key);
  for (MPI_Info bad : {MPI_INFO_NULL, stale, static_cast<MPI_Info>(0x12345678)}) {
    EXPECT_ERR(MPI_Info_get_nkeys(bad, &n), MPI_ERR_INFO, "MPI_Info_get_nkeys", "info");
    EXPECT_ERR(MPI_Info_set(bad, "k", "v"), MPI_ERR_INFO, "MPI_Info_set", "info");
    EXPECT_ERR(MPI_Info_get_valuelen(bad, "k", &n, &flag), MPI_ERR_INFO, "MPI_Info_get_valuelen", "info");
    EXPECT_ERR(MPI_Info_get_nthkey(bad, 0, key), MPI_ERR_INFO, "MPI_Info_get_nthkey", "info");
    EXPECT_ERR(MPI_Info_delete(bad, "k"), MPI_ERR_INFO, "MPI_Info_delete", "info");
    MPI_Info out = MPI_INFO_NULL, b = bad;
    EXPECT_ERR(MPI_Info_dup(bad, &out), MPI_ERR_INFO, "MPI_Info_dup", "info");
    EXPECT_EQ(out, MPI_INFO_NULL);
    EXPECT_ERR(MPI_Info_free(&b), MPI_ERR_INFO, "MPI_Info_free", "info");
    EXPECT_EQ(b, bad);
  }
  EXPECT_ERR(MPI_Info_get_nkeys(MPI_INFO_NULL, &n), MPI_ERR_INFO, "MPI_Info_get_nkeys", "MPI_INFO_NULL");
  EXPECT_ERR(MPI_Info_get_nthkey(info, -1, key), MPI_ERR_ARG, "MPI_Info_get_nthkey", "n = -1");
  EXPECT_ERR(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG, "MPI_Info_get_nthkey", "n = 2");
  EXPECT_ERR(MPI_Info_get_nthkey(info, 0, nullptr), MPI_ERR_ARG, "MPI_Info_get_nthkey", "key is NULL");
  EXPECT_ERR(MPI_Info_delete(info, "z"), MPI_ERR_INFO_NOKEY, "MPI_Info_delete", "key = \"z\"");
  EXPECT_ERR(MPI_Info_create(nullptr), MPI_ERR_ARG, "MPI_Info_create", "info is NULL");
  EXPECT_ERR(MPI_Info_free(nullptr), MPI_ERR_ARG, "MPI_Info_free", "info is NULL");
  EXPECT_EQ(n, -5);
  EXPECT_EQ(flag, -5);
  for (char c : key) EXPECT_EQ(c, '#');
  EXPECT_EQ(contents(info), before);
  MPI_Info_free(&info);
}

std::vector<std::string> cmdline() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string a;
  while (std::getline(f, a, '\0')) args.push_back(a);
  return args;
}

TEST(Info, EnvHoldsTheReservedKeysAndIsReadOnly) {
  const Pairs env = contents(MPI_INFO_ENV);
  auto value = [&env](const std::string& k) -> std::string {
    for (const auto& kv : env)
      if (kv.first == k) return kv.second;
    ADD_FAILURE() << "MPI_INFO_ENV has no key " << k;
    return "";
  };
  const std::vector<std::string> args = cmdline();
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(value("command"), args[0]);
  std::string rest;
  for (size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
  EXPECT_EQ(value("argv"), rest);
  EXPECT_EQ(value("maxprocs"), "1");
  EXPECT_EQ(value("soft"), "1");
  char host[256];
  ASSERT_EQ(gethostname(host, sizeof host), 0);
  EXPECT_EQ(value("host"), host);
  struct utsname u;
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(value("arch"), u.machine);
  char cwd[4096];
  ASSERT_NE(getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(value("wdir"), cwd);
  EXPECT_EQ(value("thread_level"), "MPI_THREAD_SINGLE");
  EXPECT_EQ(value("mpi_initial_errhandler"), "mpi_errors_are_fatal");

  MPI_Info env2 = MPI_INFO_ENV;
  EXPECT_ERR(MPI_Info_set(MPI_INFO_ENV, "command", "x"), MPI_ERR_INFO, "MPI_Info_set", "MPI_INFO_ENV is read-only");
  EXPECT_ERR(MPI_Info_delete(MPI_INFO_ENV, "command"), MPI_ERR_INFO, "MPI_Info_delete", "MPI_INFO_ENV");
  EXPECT_ERR(MPI_Info_free(&env2), MPI_ERR_INFO, "MPI_Info_free", "MPI_INFO_ENV cannot be freed");
  EXPECT_EQ(env2, MPI_INFO_ENV);
  EXPECT_EQ(contents(MPI_INFO_ENV), env);

  MPI_Info copy;  // a dup is an ordinary, modifiable info
  ASSERT_EQ(MPI_Info_dup(MPI_INFO_ENV, &copy), MPI_SUCCESS);
  EXPECT_EQ(contents(copy), env);
  ASSERT_EQ(MPI_Info_set(copy, "command", "changed"), MPI_SUCCESS);
  EXPECT_EQ(contents(MPI_INFO_ENV), env);
  MPI_Info_free(&copy);

  char a0[] = "prog", a1[] = "-x", a2[] = "two words";
  char* argv[] = {a0, a1, a2, nullptr};
  MPI_Info made;
  ASSERT_EQ(MPI_Info_create_env(3, argv, &made), MPI_SUCCESS);
  Pairs m = contents(made);
  ASSERT_GE(m.size(), 2u);
  EXPECT_EQ(m[0], (std::pair<std::string, std::string>{"command", "prog"}));
  EXPECT_EQ(m[1], (std::pair<std::string, std::string>{"argv", "-x two words"}));
  MPI_Info_free(&made);
  EXPECT_ERR(MPI_Info_create_env(-1, argv, &made), MPI_ERR_ARG, "MPI_Info_create_env", "argc = -1");
}

// ---- communicator hints ------------------------------------------------------------

TEST(CommInfo, HintsAreKeptAsSetAndFollowDup) {
  const size_t live0 = shmcoll::rt::liveInfos();
  MPI_Comm c;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), MPI_SUCCESS);
  MPI_Info got;
  ASSERT_EQ(MPI_Comm_get_info(c, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), Pairs{});
  MPI_Info_free(&got);

  MPI_Info h1 = makeInfo({{"x_unknown", "1"}, {"mpi_assert_no_any_tag", "true"}});
  ASSERT_EQ(MPI_Comm_set_info(c, h1), MPI_SUCCESS);
  MPI_Info h2 = makeInfo({{"x_unknown", "2"}, {"y", "3"}});
  ASSERT_EQ(MPI_Comm_set_info(c, h2), MPI_SUCCESS);  // updates x, adds y, keeps the assertion
  ASSERT_EQ(MPI_Comm_set_info(c, MPI_INFO_NULL), MPI_SUCCESS);
  const Pairs want = {{"x_unknown", "2"}, {"mpi_assert_no_any_tag", "true"}, {"y", "3"}};
  ASSERT_EQ(MPI_Comm_get_info(c, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), want);
  ASSERT_EQ(MPI_Info_set(got, "x_unknown", "changed"), MPI_SUCCESS);  // a copy: the communicator keeps its own
  MPI_Info_free(&got);
  ASSERT_EQ(MPI_Info_set(h1, "x_unknown", "changed"), MPI_SUCCESS);  // so does the info it was given
  ASSERT_EQ(MPI_Comm_get_info(c, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), want);
  MPI_Info_free(&got);

  MPI_Comm d, e, f, s;
  ASSERT_EQ(MPI_Comm_dup(c, &d), MPI_SUCCESS);  // dup: the same hints
  ASSERT_EQ(MPI_Comm_get_info(d, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), want);
  MPI_Info_free(&got);
  MPI_Info h3 = makeInfo({{"z", "9"}});
  ASSERT_EQ(MPI_Comm_dup_with_info(c, h3, &e), MPI_SUCCESS);  // dup_with_info: the info's hints instead
  ASSERT_EQ(MPI_Comm_get_info(e, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), (Pairs{{"z", "9"}}));
  MPI_Info_free(&got);
  ASSERT_EQ(MPI_Comm_dup_with_info(c, MPI_INFO_NULL, &f), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_get_info(f, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), Pairs{});
  MPI_Info_free(&got);
  ASSERT_EQ(MPI_Comm_split(c, 0, 0, &s), MPI_SUCCESS);  // other constructors start without hints
  ASSERT_EQ(MPI_Comm_get_info(s, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), Pairs{});
  MPI_Info_free(&got);

  MPI_Comm out = MPI_COMM_NULL;
  EXPECT_ERR(MPI_Comm_set_info(c, 0x7a000001), MPI_ERR_INFO, "MPI_Comm_set_info", "info = 0x7a000001");
  EXPECT_ERR(MPI_Comm_dup_with_info(c, 0x7a000001, &out), MPI_ERR_INFO, "MPI_Comm_dup_with_info", "info");
  EXPECT_EQ(out, MPI_COMM_NULL);
  EXPECT_ERR(MPI_Comm_get_info(c, nullptr), MPI_ERR_ARG, "MPI_Comm_get_info", "info_used is NULL");
  EXPECT_ERR(MPI_Comm_set_info(MPI_COMM_NULL, h1), MPI_ERR_COMM, "MPI_Comm_set_info", "comm");
  ASSERT_EQ(MPI_Comm_get_info(c, &got), MPI_SUCCESS);
  EXPECT_EQ(contents(got), want);
  MPI_Info_free(&got);

  for (MPI_Comm* x : {&c, &d, &e, &f, &s}) ASSERT_EQ(MPI_Comm_free(x), MPI_SUCCESS);
  for (MPI_Info* x : {&h1, &h2, &h3}) MPI_Info_free(x);
  EXPECT_EQ(shmcoll::rt::liveInfos(), live0);
}

// ---- attributes: a recording callback ------------------------------------------------

struct Event {
  char what;  // 'c' copy, 'd' delete
  int obj, keyval;
  void *value, *extra;
  bool operator==(const Event& o) const {
    return what == o.what && obj == o.obj && keyval == o.keyval && value == o.value && extra == o.extra;
  }
};
std::ostream& operator<<(std::ostream& os, const Event& e) {
  return os << e.what << "(obj " << std::hex << e.obj << ", keyval " << e.keyval << ", value " << e.value
            << ", extra " << e.extra << std::dec << ")";
}
std::vector<Event> gEvents;
int gCopyRc = MPI_SUCCESS, gDeleteRc = MPI_SUCCESS;  // what the recording callbacks return
int gCopyFlag = 1;
uintptr_t gCopyAdd = 0x1000;  // the copy's value is the original's plus this

int recCopy(int obj, int keyval, void* extra, void* in, void* out, int* flag) {
  gEvents.push_back({'c', obj, keyval, in, extra});
  if (gCopyRc != MPI_SUCCESS) return gCopyRc;
  *static_cast<void**>(out) = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(in) + gCopyAdd);
  *flag = gCopyFlag;
  return MPI_SUCCESS;
}
int recDelete(int obj, int keyval, void* value, void* extra) {
  gEvents.push_back({'d', obj, keyval, value, extra});
  return gDeleteRc;
}
void* P(uintptr_t v) { return reinterpret_cast<void*>(v); }

class Attr : public testing::Test {
 protected:
  void SetUp() override {
    gEvents.clear();
    gCopyRc = gDeleteRc = MPI_SUCCESS;
    gCopyFlag = 1;
    keyvals0_ = shmcoll::rt::liveKeyvals();
    contexts0_ = contextsInUse();
    types0_ = shmcoll::rt::liveHandles();
    ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm_), MPI_SUCCESS);
    ASSERT_EQ(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), MPI_SUCCESS);
  }
  void TearDown() override {
    gCopyRc = gDeleteRc = MPI_SUCCESS;
    if (comm_ != MPI_COMM_NULL) {
      EXPECT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
    }
    EXPECT_EQ(shmcoll::rt::liveKeyvals(), keyvals0_) << "keyvals leaked";
    EXPECT_EQ(contextsInUse(), contexts0_) << "communicators leaked";
    EXPECT_EQ(shmcoll::rt::liveHandles(), types0_) << "datatypes leaked";
  }
  int value(MPI_Comm c, int kv, void** v) {
    int flag = -1;
    EXPECT_EQ(MPI_Comm_get_attr(c, kv, v, &flag), MPI_SUCCESS);
    return flag;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  size_t keyvals0_ = 0, contexts0_ = 0, types0_ = 0;
};

TEST_F(Attr, SetGetReplaceDelete) {
  int kv = MPI_KEYVAL_INVALID, kv2 = MPI_KEYVAL_INVALID;
  ASSERT_EQ(MPI_Comm_create_keyval(recCopy, recDelete, &kv, P(0xe1)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(recCopy, recDelete, &kv2, P(0xe2)), MPI_SUCCESS);
  EXPECT_NE(kv, MPI_KEYVAL_INVALID);
  EXPECT_NE(kv, kv2);
  for (int pre : {MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_UNIVERSE_SIZE, MPI_APPNUM, MPI_LASTUSEDCODE})
    EXPECT_NE(kv, pre);

  void* v = P(0x5eed);
  EXPECT_EQ(value(comm_, kv, &v), 0);  // not set: flag 0, value untouched
  EXPECT_EQ(v, P(0x5eed));
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kv, P(0x10)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kv2, P(0x20)), MPI_SUCCESS);
  EXPECT_EQ(value(comm_, kv, &v), 1);
  EXPECT_EQ(v, P(0x10));
  EXPECT_EQ(value(MPI_COMM_WORLD, kv, &v), 0);  // attributes belong to one communicator
  EXPECT_TRUE(gEvents.empty());

  ASSERT_EQ(MPI_Comm_set_attr(comm_, kv, P(0x11)), MPI_SUCCESS);  // replacing deletes the old value
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', comm_, kv, P(0x10), P(0xe1)}}));
  EXPECT_EQ(value(comm_, kv, &v), 1);
  EXPECT_EQ(v, P(0x11));
  gEvents.clear();

  ASSERT_EQ(MPI_Comm_delete_attr(comm_, kv2), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', comm_, kv2, P(0x20), P(0xe2)}}));
  EXPECT_EQ(value(comm_, kv2, &v), 0);
  gEvents.clear();
  ASSERT_EQ(MPI_Comm_delete_attr(comm_, kv2), MPI_SUCCESS);  // not set: nothing to do
  EXPECT_TRUE(gEvents.empty());

  // Freeing the communicator deletes what is left, newest first.
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kv2, P(0x21)), MPI_SUCCESS);
  const MPI_Comm h = comm_;
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
  EXPECT_EQ(comm_, MPI_COMM_NULL);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', h, kv2, P(0x21), P(0xe2)}, {'d', h, kv, P(0x11), P(0xe1)}}));
  ASSERT_EQ(MPI_Comm_free_keyval(&kv), MPI_SUCCESS);
  EXPECT_EQ(kv, MPI_KEYVAL_INVALID);
  ASSERT_EQ(MPI_Comm_free_keyval(&kv2), MPI_SUCCESS);
}

TEST_F(Attr, DupRunsTheCopyCallbacks) {
  int kRec, kDup, kNull, kNullPtr;
  ASSERT_EQ(MPI_Comm_create_keyval(recCopy, recDelete, &kRec, P(0xe1)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, recDelete, &kDup, P(0xe2)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kNull, nullptr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(nullptr, nullptr, &kNullPtr, nullptr), MPI_SUCCESS);  // taken as the null ones
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kDup, P(0x200)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kNull, P(0x300)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kRec, P(0x100)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kNullPtr, P(0x400)), MPI_SUCCESS);

  MPI_Comm d;
  ASSERT_EQ(MPI_Comm_dup(comm_, &d), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'c', comm_, kRec, P(0x100), P(0xe1)}}));
  void* v = nullptr;
  EXPECT_EQ(value(d, kDup, &v), 1);
  EXPECT_EQ(v, P(0x200));
  EXPECT_EQ(value(d, kRec, &v), 1);
  EXPECT_EQ(v, P(0x1100));
  EXPECT_EQ(value(d, kNull, &v), 0);
  EXPECT_EQ(value(d, kNullPtr, &v), 0);
  EXPECT_EQ(value(comm_, kRec, &v), 1);  // the original keeps its own
  EXPECT_EQ(v, P(0x100));

  gCopyFlag = 0;  // a copy callback may decline
  MPI_Comm d2;
  ASSERT_EQ(MPI_Comm_dup(d, &d2), MPI_SUCCESS);
  EXPECT_EQ(value(d2, kRec, &v), 0);
  EXPECT_EQ(value(d2, kDup, &v), 1);
  ASSERT_EQ(MPI_Comm_free(&d2), MPI_SUCCESS);

  gEvents.clear();
  const MPI_Comm dh = d;
  ASSERT_EQ(MPI_Comm_free(&d), MPI_SUCCESS);  // in the order set on d: kDup, then kRec
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', dh, kRec, P(0x1100), P(0xe1)}, {'d', dh, kDup, P(0x200), P(0xe2)}}));
  for (int* k : {&kRec, &kDup, &kNull, &kNullPtr}) ASSERT_EQ(MPI_Comm_free_keyval(k), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
}

TEST_F(Attr, AFailingCopyCallbackFailsTheDupAndLeavesNothing) {
  int kDup, kRec;
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, recDelete, &kDup, P(0xe2)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(recCopy, recDelete, &kRec, P(0xe1)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kDup, P(0x200)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kRec, P(0x100)), MPI_SUCCESS);
  const size_t contexts = contextsInUse();

  // A bare class: raised as that class, naming the callback.
  gCopyRc = MPI_ERR_NO_MEM;
  MPI_Comm d = 0x1234;
  EXPECT_ERR(MPI_Comm_dup(comm_, &d), MPI_ERR_NO_MEM, "MPI_Comm_dup", "copy callback");
  EXPECT_EQ(d, MPI_COMM_NULL);
  ASSERT_EQ(gEvents.size(), 2u);  // the copy that failed, then the delete of what was copied before it
  EXPECT_EQ(gEvents[0], (Event{'c', comm_, kRec, P(0x100), P(0xe1)}));
  EXPECT_EQ(gEvents[1].what, 'd');
  EXPECT_EQ(gEvents[1].keyval, kDup);
  EXPECT_EQ(gEvents[1].value, P(0x200));
  EXPECT_EQ(contextsInUse(), contexts);

  // An MPI error code comes back unchanged; anything else is MPI_ERR_OTHER.
  MPI_Info bad = MPI_INFO_NULL;
  const int code = MPI_Info_get_nkeys(bad, nullptr);
  ASSERT_NE(code, MPI_SUCCESS);
  gCopyRc = code;
  EXPECT_EQ(MPI_Comm_dup(comm_, &d), code);
  gCopyRc = -7;
  EXPECT_ERR(MPI_Comm_dup(comm_, &d), MPI_ERR_OTHER, "MPI_Comm_dup", "returned -7");
  EXPECT_EQ(contextsInUse(), contexts);

  gEvents.clear();
  gCopyRc = MPI_SUCCESS;  // the original is intact
  void* v = nullptr;
  EXPECT_EQ(value(comm_, kRec, &v), 1);
  EXPECT_EQ(v, P(0x100));
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free_keyval(&kDup), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free_keyval(&kRec), MPI_SUCCESS);
}

TEST_F(Attr, AFailingDeleteCallbackFailsTheCall) {
  int kv, kOther;
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, recDelete, &kv, P(0xe1)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, recDelete, &kOther, P(0xe2)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kv, P(0x10)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kOther, P(0x20)), MPI_SUCCESS);
  gDeleteRc = MPI_ERR_ACCESS;
  void* v = nullptr;
  // delete_attr: fails, the attribute stays
  EXPECT_ERR(MPI_Comm_delete_attr(comm_, kv), MPI_ERR_ACCESS, "MPI_Comm_delete_attr", "delete callback");
  EXPECT_EQ(value(comm_, kv, &v), 1);
  EXPECT_EQ(v, P(0x10));
  // set_attr over it: fails, the old value stays
  EXPECT_ERR(MPI_Comm_set_attr(comm_, kv, P(0x11)), MPI_ERR_ACCESS, "MPI_Comm_set_attr", "delete callback");
  EXPECT_EQ(value(comm_, kv, &v), 1);
  EXPECT_EQ(v, P(0x10));
  // MPI_Comm_free: fails, but every delete callback ran and the communicator is gone
  gEvents.clear();
  const MPI_Comm h = comm_;
  EXPECT_ERR(MPI_Comm_free(&comm_), MPI_ERR_ACCESS, "MPI_Comm_free", "delete callback");
  EXPECT_EQ(comm_, MPI_COMM_NULL);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', h, kOther, P(0x20), P(0xe2)}, {'d', h, kv, P(0x10), P(0xe1)}}));
  gDeleteRc = MPI_SUCCESS;
  ASSERT_EQ(MPI_Comm_free_keyval(&kv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free_keyval(&kOther), MPI_SUCCESS);
}

TEST_F(Attr, AFreedKeyvalLivesWhileAttributesUseIt) {
  int kv, kept;
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, recDelete, &kv, P(0xe1)), MPI_SUCCESS);
  kept = kv;
  ASSERT_EQ(MPI_Comm_set_attr(comm_, kv, P(0x10)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free_keyval(&kv), MPI_SUCCESS);
  EXPECT_EQ(kv, MPI_KEYVAL_INVALID);
  void* v = nullptr;
  EXPECT_EQ(value(comm_, kept, &v), 1);  // still readable
  EXPECT_EQ(v, P(0x10));
  EXPECT_ERR(MPI_Comm_set_attr(comm_, kept, P(0x11)), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "was freed");
  int again = kept;  // a copy of the handle still names the keyval: freeing it again does nothing more
  EXPECT_EQ(MPI_Comm_free_keyval(&again), MPI_SUCCESS);
  EXPECT_EQ(again, MPI_KEYVAL_INVALID);
  EXPECT_EQ(value(comm_, kept, &v), 1);
  MPI_Comm d;  // copied attributes hold it too
  ASSERT_EQ(MPI_Comm_dup(comm_, &d), MPI_SUCCESS);
  EXPECT_EQ(value(d, kept, &v), 1);
  const MPI_Comm h = comm_, dh = d;
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
  EXPECT_EQ(shmcoll::rt::liveKeyvals(), keyvals0_ + 1);
  ASSERT_EQ(MPI_Comm_free(&d), MPI_SUCCESS);  // the last use: the keyval goes
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', h, kept, P(0x10), P(0xe1)}, {'d', dh, kept, P(0x10), P(0xe1)}}));
  EXPECT_EQ(shmcoll::rt::liveKeyvals(), keyvals0_);
  int flag = -1;
  EXPECT_ERR(MPI_Comm_get_attr(MPI_COMM_WORLD, kept, &v, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
             "not a valid keyval");
  EXPECT_EQ(flag, -1);
}

TEST_F(Attr, ArgumentErrors) {
  int tkv, ckv;
  ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &tkv, nullptr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &ckv, nullptr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, ckv, P(0x10)), MPI_SUCCESS);
  void* v = P(0x77);
  int flag = -1;
  EXPECT_ERR(MPI_Comm_set_attr(comm_, tkv, P(1)), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "created for datatypes");
  EXPECT_ERR(MPI_Comm_get_attr(comm_, tkv, &v, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "comm_keyval");
  EXPECT_ERR(MPI_Comm_delete_attr(comm_, tkv), MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "comm_keyval");
  EXPECT_ERR(MPI_Comm_set_attr(comm_, MPI_KEYVAL_INVALID, P(1)), MPI_ERR_KEYVAL, "MPI_Comm_set_attr",
             "MPI_KEYVAL_INVALID");
  EXPECT_ERR(MPI_Comm_get_attr(comm_, 0x25fffff0, &v, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr",
             "not a valid keyval");
  EXPECT_ERR(MPI_Comm_get_attr(comm_, 12345, &v, &flag), MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "comm_keyval = 0x3039");
  EXPECT_ERR(MPI_Comm_get_attr(comm_, ckv, nullptr, &flag), MPI_ERR_ARG, "MPI_Comm_get_attr", "attribute_val is NULL");
  EXPECT_ERR(MPI_Comm_get_attr(comm_, ckv, &v, nullptr), MPI_ERR_ARG, "MPI_Comm_get_attr", "flag is NULL");
  EXPECT_ERR(MPI_Comm_set_attr(MPI_COMM_NULL, ckv, P(1)), MPI_ERR_COMM, "MPI_Comm_set_attr", "MPI_COMM_NULL");
  EXPECT_ERR(MPI_Comm_get_attr(0x12345678, ckv, &v, &flag), MPI_ERR_COMM, "MPI_Comm_get_attr", "comm");
  EXPECT_ERR(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, nullptr, nullptr), MPI_ERR_ARG,
             "MPI_Comm_create_keyval", "comm_keyval is NULL");
  int k = tkv;
  EXPECT_ERR(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "created for datatypes");
  EXPECT_EQ(k, tkv);
  k = MPI_KEYVAL_INVALID;
  EXPECT_ERR(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "MPI_KEYVAL_INVALID");
  EXPECT_ERR(MPI_Comm_free_keyval(nullptr), MPI_ERR_ARG, "MPI_Comm_free_keyval", "comm_keyval is NULL");
  k = ckv;
  EXPECT_ERR(MPI_Type_free_keyval(&k), MPI_ERR_KEYVAL, "MPI_Type_free_keyval", "created for communicators");
  EXPECT_EQ(k, ckv);
  EXPECT_EQ(v, P(0x77));
  EXPECT_EQ(flag, -1);
  EXPECT_EQ(value(comm_, ckv, &v), 1);  // unchanged
  EXPECT_EQ(v, P(0x10));
  ASSERT_EQ(MPI_Type_free_keyval(&tkv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free_keyval(&ckv), MPI_SUCCESS);
}

// A delete callback that uses MPI on the communicator being freed, and sets
// a new attribute on it: that one is deleted too, nothing leaks.
int gReentrantKey = MPI_KEYVAL_INVALID, gChildKey = MPI_KEYVAL_INVALID;
int reentrantDelete(MPI_Comm comm, int keyval, void* value, void* extra) {
  gEvents.push_back({'d', comm, keyval, value, extra});
  void* v = nullptr;
  int flag = 0;
  if (MPI_Comm_get_attr(comm, keyval, &v, &flag) != MPI_SUCCESS || !flag || v != value) return MPI_ERR_INTERN;
  if (keyval == gReentrantKey) return MPI_Comm_set_attr(comm, gChildKey, P(0x99));
  return MPI_SUCCESS;
}

TEST_F(Attr, CallbacksMayCallMpiOnTheSameCommunicator) {
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, reentrantDelete, &gReentrantKey, nullptr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, reentrantDelete, &gChildKey, nullptr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_attr(comm_, gReentrantKey, P(0x10)), MPI_SUCCESS);
  const MPI_Comm h = comm_;
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', h, gReentrantKey, P(0x10), nullptr}, {'d', h, gChildKey, P(0x99), nullptr}}));
  ASSERT_EQ(MPI_Comm_free_keyval(&gReentrantKey), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free_keyval(&gChildKey), MPI_SUCCESS);
}

TEST_F(Attr, PredefinedAttributesOnEveryCommunicatorAreReadOnly) {
  struct {
    int key, want;
  } pre[] = {{MPI_TAG_UB, INT_MAX},          {MPI_HOST, MPI_PROC_NULL}, {MPI_IO, MPI_ANY_SOURCE},
             {MPI_WTIME_IS_GLOBAL, 1},       {MPI_UNIVERSE_SIZE, 1},    {MPI_APPNUM, 0},
             {MPI_LASTUSEDCODE, MPI_ERR_LASTCODE}};
  for (MPI_Comm c : {MPI_COMM_WORLD, MPI_COMM_SELF, comm_})
    for (auto& p : pre) {
      int* v = nullptr;
      int flag = 0;
      ASSERT_EQ(MPI_Comm_get_attr(c, p.key, &v, &flag), MPI_SUCCESS);
      ASSERT_EQ(flag, 1) << std::hex << p.key;
      ASSERT_NE(v, nullptr);
      EXPECT_EQ(*v, p.want) << std::hex << p.key;
      ASSERT_EQ(MPI_Attr_get(c, p.key, &v, &flag), MPI_SUCCESS);  // the MPI-1 name too
      EXPECT_EQ(*v, p.want);
      EXPECT_ERR(MPI_Comm_set_attr(c, p.key, P(5)), MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "read-only");
      EXPECT_ERR(MPI_Comm_delete_attr(c, p.key), MPI_ERR_KEYVAL, "MPI_Comm_delete_attr", "predefined");
      EXPECT_ERR(MPI_Attr_put(c, p.key, P(5)), MPI_ERR_KEYVAL, "MPI_Attr_put", "predefined");
      int k = p.key;
      EXPECT_ERR(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL, "MPI_Comm_free_keyval", "cannot be freed");
      EXPECT_EQ(k, p.key);
      ASSERT_EQ(MPI_Comm_get_attr(c, p.key, &v, &flag), MPI_SUCCESS);
      EXPECT_EQ(*v, p.want);
      void* tv = P(0x77);
      flag = -1;
      EXPECT_ERR(MPI_Type_get_attr(MPI_INT, p.key, &tv, &flag), MPI_ERR_KEYVAL, "MPI_Type_get_attr",
                 "communicator attribute key");
      EXPECT_EQ(tv, P(0x77));
    }
  // Copies of communicators answer the same, and predefined keys are not copied as attributes.
  MPI_Comm d;
  ASSERT_EQ(MPI_Comm_dup(comm_, &d), MPI_SUCCESS);
  int* v = nullptr;
  int flag = 0;
  ASSERT_EQ(MPI_Comm_get_attr(d, MPI_TAG_UB, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(*v, INT_MAX);
  ASSERT_EQ(MPI_Comm_free(&d), MPI_SUCCESS);
}

TEST_F(Attr, DeprecatedMpi1Forms) {
  int kv = MPI_KEYVAL_INVALID;
  ASSERT_EQ(MPI_Keyval_create(MPI_DUP_FN, recDelete, &kv, P(0xe5)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Attr_put(comm_, kv, P(0x50)), MPI_SUCCESS);
  void* v = nullptr;
  int flag = 0;
  ASSERT_EQ(MPI_Attr_get(comm_, kv, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(v, P(0x50));
  EXPECT_EQ(value(comm_, kv, &v), 1);  // one keyval space with the MPI-2 calls
  MPI_Comm d;
  ASSERT_EQ(MPI_Comm_dup(comm_, &d), MPI_SUCCESS);
  EXPECT_EQ(value(d, kv, &v), 1);
  EXPECT_EQ(v, P(0x50));
  ASSERT_EQ(MPI_Attr_delete(d, kv), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', d, kv, P(0x50), P(0xe5)}}));
  EXPECT_EQ(value(d, kv, &v), 0);
  ASSERT_EQ(MPI_Comm_free(&d), MPI_SUCCESS);
  int k2;
  ASSERT_EQ(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k2, nullptr), MPI_SUCCESS);
  ASSERT_EQ(MPI_Attr_put(comm_, k2, P(0x60)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_dup(comm_, &d), MPI_SUCCESS);
  EXPECT_EQ(value(d, k2, &v), 0);
  ASSERT_EQ(MPI_Comm_free(&d), MPI_SUCCESS);
  EXPECT_ERR(MPI_Attr_get(comm_, MPI_KEYVAL_INVALID, &v, &flag), MPI_ERR_KEYVAL, "MPI_Attr_get", "keyval");
  EXPECT_ERR(MPI_Attr_delete(comm_, MPI_TAG_UB), MPI_ERR_KEYVAL, "MPI_Attr_delete", "MPI_TAG_UB");
  ASSERT_EQ(MPI_Keyval_free(&k2), MPI_SUCCESS);
  EXPECT_EQ(k2, MPI_KEYVAL_INVALID);
  EXPECT_ERR(MPI_Keyval_free(&k2), MPI_ERR_KEYVAL, "MPI_Keyval_free", "MPI_KEYVAL_INVALID");
  ASSERT_EQ(MPI_Keyval_free(&kv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
}

TEST(PredefinedCallbacks, DoWhatTheStandardSays) {
  void* out = P(0x77);
  int flag = -1;
  EXPECT_EQ(MPI_COMM_DUP_FN(MPI_COMM_WORLD, 0, nullptr, P(0x42), &out, &flag), MPI_SUCCESS);
  EXPECT_EQ(out, P(0x42));
  EXPECT_EQ(flag, 1);
  out = P(0x77);
  EXPECT_EQ(MPI_COMM_NULL_COPY_FN(MPI_COMM_WORLD, 0, nullptr, P(0x42), &out, &flag), MPI_SUCCESS);
  EXPECT_EQ(out, P(0x77));
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(MPI_COMM_NULL_DELETE_FN(MPI_COMM_WORLD, 0, P(0x42), nullptr), MPI_SUCCESS);
  flag = -1;
  EXPECT_EQ(MPI_TYPE_DUP_FN(MPI_INT, 0, nullptr, P(0x43), &out, &flag), MPI_SUCCESS);
  EXPECT_EQ(out, P(0x43));
  EXPECT_EQ(flag, 1);
  out = P(0x77);
  EXPECT_EQ(MPI_TYPE_NULL_COPY_FN(MPI_INT, 0, nullptr, P(0x43), &out, &flag), MPI_SUCCESS);
  EXPECT_EQ(out, P(0x77));
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(MPI_TYPE_NULL_DELETE_FN(MPI_INT, 0, P(0x43), nullptr), MPI_SUCCESS);
  flag = -1;
  EXPECT_EQ(MPI_DUP_FN(MPI_COMM_WORLD, 0, nullptr, P(0x44), &out, &flag), MPI_SUCCESS);
  EXPECT_EQ(out, P(0x44));
  EXPECT_EQ(flag, 1);
  out = P(0x77);
  EXPECT_EQ(MPI_NULL_COPY_FN(MPI_COMM_WORLD, 0, nullptr, P(0x44), &out, &flag), MPI_SUCCESS);
  EXPECT_EQ(out, P(0x77));
  EXPECT_EQ(flag, 0);
  EXPECT_EQ(MPI_NULL_DELETE_FN(MPI_COMM_WORLD, 0, P(0x44), nullptr), MPI_SUCCESS);
}

// ---- datatype attributes -----------------------------------------------------------

TEST_F(Attr, DatatypeAttributes) {
  int kRec, kDup, kNull;
  ASSERT_EQ(MPI_Type_create_keyval(recCopy, recDelete, &kRec, P(0xe1)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, recDelete, &kDup, P(0xe2)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &kNull, nullptr), MPI_SUCCESS);
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_set_attr(t, kRec, P(0x100)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_set_attr(t, kDup, P(0x200)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_set_attr(t, kNull, P(0x300)), MPI_SUCCESS);
  void* v = nullptr;
  int flag = -1;
  ASSERT_EQ(MPI_Type_get_attr(t, kDup, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(v, P(0x200));

  MPI_Datatype d;
  ASSERT_EQ(MPI_Type_dup(t, &d), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'c', t, kRec, P(0x100), P(0xe1)}}));
  ASSERT_EQ(MPI_Type_get_attr(d, kRec, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  EXPECT_EQ(v, P(0x1100));
  ASSERT_EQ(MPI_Type_get_attr(d, kNull, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);

  // A failing copy callback fails MPI_Type_dup and leaves no new type.
  gEvents.clear();
  gCopyRc = MPI_ERR_OTHER;
  MPI_Datatype d2 = MPI_INT;
  const size_t handles = shmcoll::rt::liveHandles();
  EXPECT_ERR(MPI_Type_dup(t, &d2), MPI_ERR_OTHER, "MPI_Type_dup", "copy callback");
  EXPECT_EQ(d2, MPI_DATATYPE_NULL);
  EXPECT_EQ(shmcoll::rt::liveHandles(), handles);
  gCopyRc = MPI_SUCCESS;

  // A failing delete callback fails MPI_Type_free, and the type stays usable.
  gEvents.clear();
  gDeleteRc = MPI_ERR_ACCESS;
  MPI_Datatype keep = d;
  EXPECT_ERR(MPI_Type_free(&d), MPI_ERR_ACCESS, "MPI_Type_free", "delete callback");
  EXPECT_EQ(d, keep);
  int size = 0;
  ASSERT_EQ(MPI_Type_size(d, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 12);
  gDeleteRc = MPI_SUCCESS;
  gEvents.clear();
  ASSERT_EQ(MPI_Type_free(&d), MPI_SUCCESS);  // newest first
  EXPECT_EQ(d, MPI_DATATYPE_NULL);
  ASSERT_EQ(gEvents.size(), 2u);
  EXPECT_EQ(gEvents[0].keyval, kDup);
  EXPECT_EQ(gEvents[1], (Event{'d', keep, kRec, P(0x1100), P(0xe1)}));

  // Predefined datatypes take attributes too.
  ASSERT_EQ(MPI_Type_set_attr(MPI_DOUBLE, kNull, P(0x400)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_attr(MPI_DOUBLE, kNull, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(v, P(0x400));
  ASSERT_EQ(MPI_Type_delete_attr(MPI_DOUBLE, kNull), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_attr(MPI_DOUBLE, kNull, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);

  // Errors.
  int ckv;
  ASSERT_EQ(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &ckv, nullptr), MPI_SUCCESS);
  v = P(0x77);
  flag = -1;
  EXPECT_ERR(MPI_Type_set_attr(t, ckv, P(1)), MPI_ERR_KEYVAL, "MPI_Type_set_attr", "created for communicators");
  EXPECT_ERR(MPI_Type_get_attr(MPI_DATATYPE_NULL, kRec, &v, &flag), MPI_ERR_TYPE, "MPI_Type_get_attr",
             "MPI_DATATYPE_NULL");
  EXPECT_ERR(MPI_Type_delete_attr(t, MPI_KEYVAL_INVALID), MPI_ERR_KEYVAL, "MPI_Type_delete_attr",
             "MPI_KEYVAL_INVALID");
  EXPECT_ERR(MPI_Type_get_attr(t, kRec, &v, nullptr), MPI_ERR_ARG, "MPI_Type_get_attr", "flag is NULL");
  EXPECT_EQ(v, P(0x77));
  EXPECT_EQ(flag, -1);
  ASSERT_EQ(MPI_Comm_free_keyval(&ckv), MPI_SUCCESS);

  gEvents.clear();
  const MPI_Datatype th = t;
  ASSERT_EQ(MPI_Type_free(&t), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', th, kDup, P(0x200), P(0xe2)}, {'d', th, kRec, P(0x100), P(0xe1)}}));
  for (int* k : {&kRec, &kDup, &kNull}) ASSERT_EQ(MPI_Type_free_keyval(k), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
}

TEST_F(Attr, DatatypeAttributesGoWithTheLastHandle) {
  int kv;
  ASSERT_EQ(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, recDelete, &kv, nullptr), MPI_SUCCESS);
  MPI_Datatype child, parent, got[1];
  ASSERT_EQ(MPI_Type_contiguous(2, MPI_INT, &child), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_contiguous(2, child, &parent), MPI_SUCCESS);
  int ints[1];
  MPI_Aint addrs[1];
  ASSERT_EQ(MPI_Type_get_contents(parent, 1, 0, 1, ints, addrs, got), MPI_SUCCESS);
  ASSERT_EQ(got[0], child);  // the same handle, one more free owed
  ASSERT_EQ(MPI_Type_set_attr(child, kv, P(0x10)), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_free(&got[0]), MPI_SUCCESS);
  EXPECT_TRUE(gEvents.empty());
  void* v = nullptr;
  int flag = 0;
  ASSERT_EQ(MPI_Type_get_attr(child, kv, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 1);
  const MPI_Datatype ch = child;
  ASSERT_EQ(MPI_Type_free(&child), MPI_SUCCESS);
  EXPECT_EQ(gEvents, (std::vector<Event>{{'d', ch, kv, P(0x10), nullptr}}));
  // A new handle to the same type (the parent still holds it) has no attributes.
  ASSERT_EQ(MPI_Type_get_contents(parent, 1, 0, 1, ints, addrs, got), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_get_attr(got[0], kv, &v, &flag), MPI_SUCCESS);
  EXPECT_EQ(flag, 0);
  MPI_Type_free(&got[0]);
  MPI_Type_free(&parent);
  ASSERT_EQ(MPI_Type_free_keyval(&kv), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_free(&comm_), MPI_SUCCESS);
}

// ---- names ---------------------------------------------------------------------------

TEST(CommName, DefaultsSetGetTruncation) {
  char name[MPI_MAX_OBJECT_NAME + 16];
  int len = -1;
  ASSERT_EQ(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "MPI_COMM_WORLD");
  EXPECT_EQ(len, 14);
  ASSERT_EQ(MPI_Comm_get_name(MPI_COMM_SELF, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "MPI_COMM_SELF");
  EXPECT_EQ(len, 13);

  MPI_Comm c, d;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_get_name(c, name, &len), MPI_SUCCESS);  // names are not inherited
  EXPECT_STREQ(name, "");
  EXPECT_EQ(len, 0);
  ASSERT_EQ(MPI_Comm_set_name(c, "  solver "), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_get_name(c, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "  solver ");
  EXPECT_EQ(len, 9);
  ASSERT_EQ(MPI_Comm_dup(c, &d), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_get_name(d, name, &len), MPI_SUCCESS);
  EXPECT_EQ(len, 0);

  const std::string longName(300, 'n');  // cut to MPI_MAX_OBJECT_NAME - 1 characters
  ASSERT_EQ(MPI_Comm_set_name(c, longName.c_str()), MPI_SUCCESS);
  memset(name, '#', sizeof name);
  ASSERT_EQ(MPI_Comm_get_name(c, name, &len), MPI_SUCCESS);
  EXPECT_EQ(len, MPI_MAX_OBJECT_NAME - 1);
  EXPECT_EQ(std::string(name), longName.substr(0, MPI_MAX_OBJECT_NAME - 1));
  for (size_t i = MPI_MAX_OBJECT_NAME; i < sizeof name; ++i) EXPECT_EQ(name[i], '#');

  ASSERT_EQ(MPI_Comm_set_name(MPI_COMM_WORLD, "world renamed"), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "world renamed");
  ASSERT_EQ(MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD"), MPI_SUCCESS);

  memset(name, '#', sizeof name);
  len = -1;
  EXPECT_ERR(MPI_Comm_set_name(c, nullptr), MPI_ERR_ARG, "MPI_Comm_set_name", "comm_name is NULL");
  EXPECT_ERR(MPI_Comm_get_name(c, name, nullptr), MPI_ERR_ARG, "MPI_Comm_get_name", "resultlen is NULL");
  EXPECT_ERR(MPI_Comm_get_name(MPI_COMM_NULL, name, &len), MPI_ERR_COMM, "MPI_Comm_get_name", "MPI_COMM_NULL");
  EXPECT_ERR(MPI_Comm_set_name(MPI_COMM_NULL, "x"), MPI_ERR_COMM, "MPI_Comm_set_name", "comm");
  EXPECT_EQ(len, -1);
  for (char ch : name) EXPECT_EQ(ch, '#');
  ASSERT_EQ(MPI_Comm_get_name(c, name, &len), MPI_SUCCESS);
  EXPECT_EQ(len, MPI_MAX_OBJECT_NAME - 1);
  MPI_Comm_free(&d);
  MPI_Comm_free(&c);
}

}  // namespace
