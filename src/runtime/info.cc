// Info objects: the handle table, the pairs, and MPI_INFO_ENV's contents.
// See runtime/info.h for the representation and its limits.
#include "runtime/info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

namespace shmcoll::rt {

namespace {

constexpr uint32_t kUserInfo = 0x72000000u;

std::vector<std::unique_ptr<Info>>& table() {
  static std::vector<std::unique_ptr<Info>> t(1);  // index 0 unused
  return t;
}

const char* threadLevelName(int level) {
  switch (level) {
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "MPI_THREAD_SINGLE";
  }
}

}  // namespace

const std::string* Info::find(const std::string& key) const {
  for (const auto& kv : entries)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

void Info::set(const std::string& key, const std::string& value) {
  for (auto& kv : entries)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  entries.emplace_back(key, value);
}

bool Info::erase(const std::string& key) {
  for (auto it = entries.begin(); it != entries.end(); ++it)
    if (it->first == key) {
      entries.erase(it);
      return true;
    }
  return false;
}

Info& envInfo() {
  static Info env;
  return env;
}

Info* info(MPI_Info h) {
  if (h == MPI_INFO_ENV) return &envInfo();
  uint32_t u = static_cast<uint32_t>(h);
  if ((u & 0xff000000u) != kUserInfo) return nullptr;
  uint32_t i = u & 0x00ffffffu;
  auto& t = table();
  return i < t.size() ? t[i].get() : nullptr;
}

MPI_Info newInfo(Info from) {
  auto& t = table();
  size_t i = 1;
  while (i < t.size() && t[i]) ++i;
  if (i == t.size()) t.emplace_back();
  t[i] = std::make_unique<Info>(std::move(from));
  return static_cast<MPI_Info>(kUserInfo | static_cast<uint32_t>(i));
}

void freeInfo(MPI_Info h) {
  uint32_t u = static_cast<uint32_t>(h);
  if ((u & 0xff000000u) != kUserInfo) return;
  uint32_t i = u & 0x00ffffffu;
  auto& t = table();
  if (i < t.size()) t[i].reset();
}

size_t liveInfos() {
  size_t n = 0;
  for (const auto& p : table()) n += p != nullptr;
  return n;
}

std::vector<std::string> processArgs() {
  std::vector<std::string> args;
  FILE* f = fopen("/proc/self/cmdline", "r");
  if (!f) return args;
  std::string cur;
  int ch;
  bool any = false;
  while ((ch = fgetc(f)) != EOF) {
    any = true;
    if (ch == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(static_cast<char>(ch));
    }
  }
  if (any && !cur.empty()) args.push_back(cur);
  fclose(f);
  return args;
}

Info makeEnvInfo(const std::vector<std::string>& args, int jobSize, int threadLevel) {
  Info env;
  // A value longer than an info value can hold (a very long command line or
  // working directory) is left out rather than cut into something wrong.
  auto put = [&env](const char* key, const std::string& v) {
    if (v.size() <= kMaxInfoValue) env.set(key, v);
  };
  if (!args.empty()) {
    put("command", args[0]);
    std::string rest;
    for (size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
    put("argv", rest);
  }
  put("maxprocs", std::to_string(jobSize));
  // Every rank is started at once: the only allowed process count is the job size.
  put("soft", std::to_string(jobSize));
  char host[256];
  if (gethostname(host, sizeof host) == 0) {
    host[sizeof host - 1] = '\0';
    put("host", host);
  }
  struct utsname u;
  if (uname(&u) == 0) put("arch", u.machine);
  std::vector<char> cwd(4096);
  if (getcwd(cwd.data(), cwd.size())) put("wdir", cwd.data());
  put("thread_level", threadLevelName(threadLevel));
  put("mpi_initial_errhandler", "mpi_errors_are_fatal");
  return env;
}

}  // namespace shmcoll::rt
