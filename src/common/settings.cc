// Settings: reading, checking and the wording of errors (see settings.h).
#include "common/settings.h"

#include <cstdlib>
#include <cstring>

#include "common/tuning.h"

namespace shmcoll::settings {

std::string programSearchPath() {
  const char* path = std::getenv("PATH");
  return path ? path : "/usr/local/bin:/usr/bin:/bin";
}

namespace {

bool isFamily(const Spec& sp) { return std::strstr(sp.name, "<OP>") != nullptr; }

// The value to use: the variable when set, not empty and valid.
bool fromEnv(Id id, const char* op, uint64_t* out) {
  const char* t = raw(id, op);
  return t && *t && parse(spec(id), t, out) == Parsed::kOk;
}

bool numeric(const Spec& sp) { return sp.type == kSize || sp.type == kCount || sp.type == kInteger; }

// `off` is accepted (parse()) when the range reaches the largest value.
bool takesOff(const Spec& sp) { return sp.key && (sp.type == kSize || sp.type == kCount) && sp.max == UINT64_MAX; }

}  // namespace

std::string choiceList(const Spec& sp, const std::string& quote) {
  std::string out = quote;
  for (const char* c = sp.choices ? sp.choices : ""; *c; ++c)
    if (*c == '|') out += quote + ", " + quote;
    else out += *c;
  return out + quote;
}

std::string name(Id id, const char* op) {
  const Spec& sp = spec(id);
  std::string n = sp.name;
  if (const size_t at = n.find("<OP>"); at != std::string::npos) {
    std::string up = op ? op : "";
    for (char& c : up) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    n.replace(at, 4, up);
  }
  return n;
}

const char* raw(Id id, const char* op) {
  const Spec& sp = spec(id);
  return isFamily(sp) ? std::getenv(name(id, op).c_str()) : std::getenv(sp.name);
}

uint64_t size(Id id) { return size(id, spec(id).dflt); }

uint64_t size(Id id, uint64_t dflt) {
  uint64_t v = 0;
  return fromEnv(id, nullptr, &v) ? v : dflt;
}

long long integer(Id id) { return integer(id, static_cast<long long>(spec(id).dflt)); }

long long integer(Id id, long long dflt) {
  uint64_t v = 0;
  return fromEnv(id, nullptr, &v) ? static_cast<long long>(v) : dflt;
}

bool flag(Id id) {
  uint64_t v = 0;
  return fromEnv(id, nullptr, &v) ? v != 0 : spec(id).dflt != 0;
}

int choice(Id id) {
  uint64_t v = 0;
  if (fromEnv(id, nullptr, &v)) return static_cast<int>(v);
  return spec(id).dflt == UINT64_MAX ? -1 : static_cast<int>(spec(id).dflt);
}

std::string str(Id id, const char* op) {
  const char* t = raw(id, op);
  return t ? t : "";
}

uint64_t tuned(Id id, const char* op, uint32_t ranks) { return tuned(id, op, ranks, spec(id).dflt); }

uint64_t tuned(Id id, const char* op, uint32_t ranks, uint64_t dflt) {
  uint64_t v = 0;
  if (fromEnv(id, nullptr, &v)) return v;
  return spec(id).key && tuning::table().lookup(spec(id).key, op, ranks, &v) ? v : dflt;
}

std::string formatValue(const Spec& sp, uint64_t v) {
  if (sp.type != kSize || v == 0) return std::to_string(v);
  const char* suffix = "kmgt";
  int unit = -1;
  while (unit < 3 && v % (uint64_t{1} << (10 * (unit + 2))) == 0) ++unit;
  return unit < 0 ? std::to_string(v) : std::to_string(v >> (10 * (unit + 1))) + suffix[unit];
}

std::string rangeText(const Spec& sp) {
  if (!numeric(sp)) return "";
  const bool low = sp.min > 0, high = sp.max < UINT64_MAX;
  if (low && high) return formatValue(sp, sp.min) + " to " + formatValue(sp, sp.max);
  if (high) return "at most " + formatValue(sp, sp.max);
  if (low) return "at least " + formatValue(sp, sp.min);
  return "";
}

std::string accepted(const Spec& sp) {
  const std::string off = takesOff(sp) ? ", or off" : "";
  switch (sp.type) {
    case kSize: return "a byte size (digits with an optional k, m, g or t suffix, e.g. 64k" + off + ")";
    case kCount: return "a number (digits with an optional k, m, g or t multiplier, e.g. 20000" + off + ")";
    case kInteger: return "an integer (decimal digits)";
    case kFlag: return "a flag (1, 0, yes, no, on, off, true or false)";
    case kChoice: return "one of " + choiceList(sp, "");
    case kString: return "any text";
    case kPath: return "a file name";
  }
  return "";
}

std::string check(Id id, const char* text, uint64_t* value) {
  const Spec& sp = spec(id);
  uint64_t v = 0;
  const Parsed r = text && *text ? parse(sp, text, &v) : Parsed::kOk;
  if (r == Parsed::kOk) {
    if (value) *value = v;
    return "";
  }
  std::string msg = std::string(sp.name) + "='" + text + "' ";
  switch (r) {
    case Parsed::kMalformed: msg += "is not " + accepted(sp); break;
    case Parsed::kTooLarge: msg += "does not fit in 64 bits"; break;
    default: msg += "is out of range"; break;
  }
  if (const std::string range = rangeText(sp); !range.empty()) msg += "; allowed " + range;
  return msg;
}

std::vector<std::string> validate(unsigned readers, bool protocol, const std::vector<std::string>& overrides) {
  auto lookup = [&](const char* n) -> const char* {
    const size_t len = std::strlen(n);
    for (auto kv = overrides.rbegin(); kv != overrides.rend(); ++kv)
      if (kv->size() > len && kv->compare(0, len, n) == 0 && (*kv)[len] == '=') return kv->c_str() + len + 1;
    return std::getenv(n);
  };
  std::vector<std::string> errors;
  for (int i = 0; i < kNumSettings; ++i) {
    const Spec& sp = kSpecs[i];
    if (!(sp.readers & readers) || (sp.audience == kProtocol && !protocol)) continue;
    if (sp.type == kString || sp.type == kPath || isFamily(sp)) continue;  // their readers check them
    const char* text = lookup(sp.name);
    if (std::string e = check(idAt(i), text); !e.empty()) errors.push_back(std::move(e));
  }
  return errors;
}

}  // namespace shmcoll::settings
