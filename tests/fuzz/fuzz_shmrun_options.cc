// libFuzzer target: shmrun's command line (launcher/options.h).
//
// The input is split at NUL bytes into argv[1..].  parseOptions() must either
// throw UsageError with a non-empty reason or return options that the
// launcher can act on: a rank count of -1 (one per core) or 1..kMaxRanks, a
// non-negative finite timeout, a program unless only help or version was
// asked for, and -x values with a non-empty name.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "launcher/options.h"

using namespace shmcoll::launcher;

namespace {
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_shmrun_options: %s\n", what);
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"shmrun"};
  std::string cur;
  for (size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      words.push_back(cur);
      cur.clear();
    } else {
      cur += static_cast<char>(data[i]);
    }
  }
  if (size) words.push_back(cur);
  if (words.size() > 64) return 0;
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  Options o;
  try {
    o = parseOptions(static_cast<int>(words.size()), argv.data());
  } catch (const UsageError& e) {
    if (std::string(e.what()).empty()) fail("a usage error without a reason");
    return 0;
  }
  if (o.nranks != -1 && (o.nranks < 1 || o.nranks > kMaxRanks)) fail("a rank count outside 1..kMaxRanks");
  if (!(o.timeoutSeconds >= 0) || std::isinf(o.timeoutSeconds)) fail("a negative, NaN or infinite timeout");
  const bool infoOnly = o.help || o.version || o.helpSettings || o.settingsMarkdown;
  if (!infoOnly && o.program.empty()) fail("no program and nothing else to do");
  for (const std::string& v : o.envVars)
    if (v.empty() || v[0] == '=') fail("an -x value without a name");
  return 0;
}
