// The decision table (see tuning.h).
#include "common/tuning.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/settings.h"

namespace shmcoll::tuning {

namespace {

constexpr const char* kOps[] = {"alltoall", "alltoallv", "alltoallw", "allgather", "allgatherv", "bcast",
                                "gather",   "gatherv",   "scatter",   "scatterv",  "reduce",     "allreduce",
                                "reduce_scatter", "reduce_scatter_block", "scan", "exscan",
                                "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw",
                                "neighbor_allgather", "neighbor_allgatherv"};

// The setting whose decision-table key is `k`, or nullptr.
const settings::Spec* findKey(const std::string& k) {
  for (const settings::Spec& sp : settings::kSpecs)
    if (sp.key && k == sp.key) return &sp;
  return nullptr;
}

bool knownOp(const std::string& op) {
  for (const char* o : kOps)
    if (op == o) return true;
  return false;
}

// share/shmcoll/tuning.txt beside the directory holding this library.
std::string defaultPath() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&defaultPath), &info) || !info.dli_fname) return {};
  std::string lib = info.dli_fname;
  const size_t slash = lib.rfind('/');
  if (slash == std::string::npos) return {};
  return lib.substr(0, slash) + "/../share/shmcoll/tuning.txt";
}

// A decision table is a few KiB of text; a file of this size is something else.
constexpr size_t kMaxTableBytes = 1 << 20;

// Reads the table at `p` into *text: a regular file of at most
// kMaxTableBytes (not a device such as /dev/zero, not a FIFO that would
// block the job's start); else false with *why.
bool readTable(const std::string& p, std::string* text, std::string* why) {
  auto cannotRead = [why] { *why = std::string("cannot read the decision table (") + strerror(errno) + ")"; };
  const int fd = open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    cannotRead();
    return false;
  }
  constexpr const char* kTooLarge = "larger than 1 MiB: not a decision table";
  struct stat st{};
  bool ok = true;
  if (fstat(fd, &st) != 0) {
    cannotRead();
    ok = false;
  } else if (!S_ISREG(st.st_mode)) {
    *why = "not a regular file";
    ok = false;
  } else if (static_cast<uint64_t>(st.st_size) > kMaxTableBytes) {
    *why = kTooLarge;
    ok = false;
  }
  char buf[16384];
  while (ok) {
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got == 0) break;
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      cannotRead();
      ok = false;
    } else if (text->size() + static_cast<size_t>(got) > kMaxTableBytes) {
      *why = kTooLarge;
      ok = false;
    }
    if (!ok) break;
    text->append(buf, static_cast<size_t>(got));
  }
  close(fd);
  return ok;
}

struct Loaded {
  Table table;
  std::string path;
  Loaded() {
    const char* named = settings::raw(settings::Id::kTuning);
    std::string p;
    if (named) {
      if (!*named || !strcmp(named, "none")) return;
      p = named;
    } else {
      p = defaultPath();
      if (p.empty() || access(p.c_str(), R_OK) != 0) return;
    }
    std::string text, why;
    if (!readTable(p, &text, &why)) {
      fprintf(stderr, "shmcoll: SHMCOLL_TUNING=%s: %s; using the defaults\n", p.c_str(), why.c_str());
      return;
    }
    std::string errors;
    table.parse(text, &errors);
    if (!errors.empty()) fprintf(stderr, "shmcoll: decision table %s: skipped\n%s", p.c_str(), errors.c_str());
    path = p;
  }
};

const Loaded& loaded() {
  static const Loaded l;
  return l;
}

}  // namespace

int Table::parse(const std::string& text, std::string* errors) {
  std::istringstream lines(text);
  std::string line;
  int lineNo = 0, accepted = 0;
  auto reject = [&](const std::string& why) {
    if (errors) *errors += "  line " + std::to_string(lineNo) + ": " + why + "\n";
  };
  while (std::getline(lines, line)) {
    ++lineNo;
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string key, op, ranks, value, extra;
    if (!(words >> key)) continue;  // blank or comment
    if (!(words >> op >> ranks >> value)) {
      reject("expected <key> <op> <ranks> <value>");
      continue;
    }
    if (words >> extra) {
      reject("unexpected '" + extra + "' after the value");
      continue;
    }
    const settings::Spec* k = findKey(key);
    if (!k) {
      reject("unknown key '" + key + "'");
      continue;
    }
    if (op != "*" && k->scope != settings::kPerOp) {
      reject("'" + key + "' applies to the whole job: its op must be '*'");
      continue;
    }
    if (op != "*" && !knownOp(op)) {
      reject("unknown operation '" + op + "'");
      continue;
    }
    char* end = nullptr;
    errno = 0;
    const unsigned long r = std::strtoul(ranks.c_str(), &end, 10);
    if (ranks.empty() || *end || errno || ranks[0] == '-' || r > UINT32_MAX) {
      reject("ranks '" + ranks + "' is not a rank count");
      continue;
    }
    // The same parser and range as the setting's variable (settings_table.h).
    uint64_t v = 0;
    const settings::Parsed got = settings::parse(*k, value.c_str(), &v);
    if (got == settings::Parsed::kOutOfRange) {
      reject("value '" + value + "' is outside " + key + "'s range, " + settings::rangeText(*k));
      continue;
    }
    if (got != settings::Parsed::kOk) {
      reject("value '" + value + "' is not a size (e.g. 4096, 64k, 1m) or 'off'");
      continue;
    }
    bool replaced = false;
    for (Rule& rule : rules_)
      if (rule.key == key && rule.op == op && rule.ranks == r) {
        rule.value = v;  // a later rule for the same key, op and ranks wins
        replaced = true;
      }
    if (!replaced) rules_.push_back({key, op, static_cast<uint32_t>(r), v});
    ++accepted;
  }
  return accepted;
}

bool Table::lookup(const char* key, const char* op, uint32_t ranks, uint64_t* out) const {
  for (const char* which : {op, "*"}) {
    if (!which) continue;
    const Rule* best = nullptr;
    for (const Rule& rule : rules_)
      if (rule.key == key && rule.op == which && rule.ranks <= ranks && (!best || rule.ranks > best->ranks))
        best = &rule;
    if (best) {
      *out = best->value;
      return true;
    }
  }
  return false;
}

const Table& table() { return loaded().table; }
const std::string& tablePath() { return loaded().path; }

}  // namespace shmcoll::tuning
