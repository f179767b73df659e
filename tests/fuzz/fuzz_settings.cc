// libFuzzer target: the value of one setting, as SHMCOLL_<NAME>=<text> gives it.
//
// The first byte picks the setting, the rest is the text.  Beyond "no crash,
// no sanitizer report", it checks what the launcher and MPI_Init rely on:
// settings::check() accepts exactly what settings::parse() accepts, with the
// same value, and names the variable when it refuses; an accepted number is
// within the declared range, and formatting it gives text that parses back to
// the same value (the help and the error messages print values that way).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/settings.h"

using namespace shmcoll::settings;

namespace {
void fail(const char* what, const Spec& sp, const std::string& text) {
  std::fprintf(stderr, "fuzz_settings: %s: %s='%s'\n", what, sp.name, text.c_str());
  std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Id id = idAt(data[0] % kNumSettings);
  const Spec& sp = spec(id);
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  if (text.find('\0') != std::string::npos) return 0;  // an environment value has none
  if (text.empty()) {  // an empty variable is an unset one: the default applies
    if (!check(id, "").empty()) fail("an empty value was refused", sp, text);
    return 0;
  }

  uint64_t v = 0;
  const Parsed got = parse(sp, text.c_str(), &v);
  uint64_t cv = 0;
  const std::string msg = check(id, text.c_str(), &cv);
  if ((got == Parsed::kOk) != msg.empty()) fail("check() and parse() disagree", sp, text);
  if (got != Parsed::kOk) {
    if (msg.find(sp.name) == std::string::npos) fail("the message does not name the variable", sp, text);
    return 0;
  }
  if (cv != v) fail("check() and parse() give different values", sp, text);
  const bool numeric = sp.type == kSize || sp.type == kCount || sp.type == kInteger;
  if (!numeric) return 0;
  if (v == UINT64_MAX && sp.key && (sp.type == kSize || sp.type == kCount)) return 0;  // `off`
  if (v < sp.min || v > sp.max) fail("accepted a value outside the range", sp, text);
  const std::string back = formatValue(sp, v);
  uint64_t again = 0;
  if (parse(sp, back.c_str(), &again) != Parsed::kOk || again != v) fail("formatValue() does not parse back", sp, text);
  return 0;
}
