// libFuzzer target: the decision table (common/tuning.h), as shmcoll-tune
// writes it or a user edits it.
//
// Checks, beyond "no crash": every line is either accepted or rejected with
// a message naming its number; and every look-up returns a value within the
// setting's declared range (or `off`), so no rule can smuggle a value past
// the checks the environment variable gets.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/settings.h"
#include "common/tuning.h"

using namespace shmcoll;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  tuning::Table t;
  std::string errors;
  const int accepted = t.parse(text, &errors);
  // (a later rule for the same key, op and ranks replaces the earlier one)
  if (accepted < 0 || static_cast<size_t>(accepted) < t.size()) std::abort();
  size_t lines = 0, rejected = 0;
  for (char c : text) lines += c == '\n';
  if (!text.empty() && text.back() != '\n') ++lines;
  for (size_t p = errors.find("  line "); p != std::string::npos; p = errors.find("  line ", p + 1)) ++rejected;
  if (static_cast<size_t>(accepted) + rejected > lines) {
    std::fprintf(stderr, "fuzz_tuning: %d accepted + %zu rejected > %zu lines\n", accepted, rejected, lines);
    std::abort();
  }
  static const char* const kOps[] = {nullptr, "alltoall", "allgatherv", "bcast", "neighbor_alltoall", "nosuchop"};
  static const uint32_t kRanks[] = {0, 1, 2, 3, 64, 1024, UINT32_MAX};
  for (const settings::Spec& sp : settings::kSpecs) {
    if (!sp.key) continue;
    for (const char* op : kOps)
      for (uint32_t r : kRanks) {
        uint64_t v = 0;
        if (!t.lookup(sp.key, op, r, &v)) continue;
        const bool off = v == UINT64_MAX && (sp.type == settings::kSize || sp.type == settings::kCount);
        if (!off && (v < sp.min || v > sp.max)) {
          std::fprintf(stderr, "fuzz_tuning: %s %s %u gave %llu, outside %llu..%llu\n", sp.key, op ? op : "*", r,
                       static_cast<unsigned long long>(v), static_cast<unsigned long long>(sp.min),
                       static_cast<unsigned long long>(sp.max));
          std::abort();
        }
      }
  }
  return 0;
}
