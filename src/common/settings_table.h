// The settings table (common/settings.def) as constexpr data, and the
// parsers of its values.
//
// Header-only and allocation-free on purpose: the malloc interposer
// (interpose/malloc.cc) runs before anything else and must not allocate, yet
// parses its variables exactly as the rest of the library does.  Everything
// else reads settings through common/settings.h, which checks values and
// words the errors.
//
// Value syntax:
//   byte size  decimal digits, then optionally k, m, g or t (powers of two,
//              either case) and then optionally iB or B: 4096, 64k, 64K,
//              64KiB, 64kB, 4096B.  Not 64kb (b is bits), -1, 1e6, 0x10000,
//              blanks or anything that does not fit in 64 bits.  A setting
//              with a decision-table key also takes `off`: the largest value
//              (never, or no limit), if its range allows that.
//   count      the same syntax (wait_spins 20k is 20480 polls).
//   integer    decimal digits only.
//   flag       1, 0, yes, no, on, off, true, false (either case).
//   choice     one of the listed words (either case).
//   string, path  anything; the reader checks it.
// An empty value is the same as an unset variable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace shmcoll::settings {

enum Type : uint8_t { kSize, kCount, kInteger, kFlag, kChoice, kString, kPath };
// kPerOp: the value may differ per operation (decision-table rules per
// operation; SHMCOLL_ALGORITHM_<OP> is one variable per operation).
enum Scope : uint8_t { kJob, kPerOp };
// Who reads a setting (a bit mask; 0: set by shmrun for programs and tools).
enum Reader : unsigned { kShmrun = 1, kLibrary = 2 };
// kTestHook and kProtocol are internal: left out of `shmrun --help` and the README.
enum Audience : uint8_t { kUser, kTestHook, kProtocol };

struct Spec {
  const char* name = nullptr;      // SHMCOLL_...; "<OP>" stands for each operation's upper-case name
  const char* key = nullptr;       // decision-table key (common/tuning.h), or nullptr
  Scope scope = kJob;
  Type type = kString;
  unsigned readers = 0;            // Reader bits
  Audience audience = kUser;
  uint64_t min = 0, max = UINT64_MAX;  // allowed range (kSize, kCount, kInteger)
  uint64_t dflt = 0;               // default value; kFlag: 0/1; kChoice: index (UINT64_MAX: none)
  const char* choices = nullptr;   // kChoice: "auto|shm|memfd"
  const char* computed = nullptr;  // who computes the default when it depends on the machine or the job
                                   // (the reader passes it to the accessor); nullptr: `dflt`
  const char* dfltText = "";       // the default as users read it (markdown)
  const char* help = "";           // one line (markdown)
};

enum class Id : int {
#define SHMCOLL_SETTING(id, ...) id,
#include "common/settings.def"
#undef SHMCOLL_SETTING
};

inline constexpr Spec kSpecs[] = {
#define SHMCOLL_SETTING(id, ...) Spec{__VA_ARGS__},
#include "common/settings.def"
#undef SHMCOLL_SETTING
};
inline constexpr int kNumSettings = static_cast<int>(sizeof kSpecs / sizeof kSpecs[0]);

constexpr const Spec& spec(Id id) { return kSpecs[static_cast<int>(id)]; }
constexpr Id idAt(int i) { return static_cast<Id>(i); }

enum class Parsed : uint8_t { kOk, kMalformed, kTooLarge, kOutOfRange };

namespace detail {

constexpr char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `s` equals the `n` characters at `word`, ignoring case.
constexpr bool sameWord(const char* s, const char* word, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!s[i] || lower(s[i]) != lower(word[i])) return false;
  return s[n] == '\0';
}
constexpr bool sameWord(const char* s, const char* word) {
  size_t n = 0;
  while (word[n]) ++n;
  return sameWord(s, word, n);
}

// Leading decimal digits into *v; *end past them.  kMalformed when there are none.
constexpr Parsed digits(const char* s, uint64_t* v, const char** end) {
  uint64_t x = 0;
  const char* p = s;
  for (; *p >= '0' && *p <= '9'; ++p) {
    const uint64_t d = static_cast<uint64_t>(*p - '0');
    if (x > (UINT64_MAX - d) / 10) {
      while (*p >= '0' && *p <= '9') ++p;
      *end = p;
      return Parsed::kTooLarge;
    }
    x = x * 10 + d;
  }
  *end = p;
  *v = x;
  return p == s ? Parsed::kMalformed : Parsed::kOk;
}

}  // namespace detail

// A byte size (syntax above) into *out.
constexpr Parsed parseSize(const char* s, uint64_t* out) {
  if (!s) return Parsed::kMalformed;
  uint64_t v = 0;
  const char* p = s;
  Parsed r = detail::digits(s, &v, &p);
  if (r == Parsed::kMalformed) return r;
  int shift = 0;
  switch (*p) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
  }
  if (shift) {
    ++p;
    if ((*p == 'i' || *p == 'I') && p[1] == 'B') p += 2;
    else if (*p == 'B') ++p;
  } else if (*p == 'B') {
    ++p;
  }
  if (*p) return Parsed::kMalformed;  // junk, including a second suffix or `b` for bits
  if (r == Parsed::kTooLarge || v > (UINT64_MAX >> shift)) return Parsed::kTooLarge;
  *out = v << shift;
  return Parsed::kOk;
}

// Decimal digits only.
constexpr Parsed parseInteger(const char* s, uint64_t* out) {
  if (!s) return Parsed::kMalformed;
  const char* p = s;
  uint64_t v = 0;
  Parsed r = detail::digits(s, &v, &p);
  if (r == Parsed::kMalformed || *p) return Parsed::kMalformed;
  if (r == Parsed::kOk) *out = v;
  return r;
}

constexpr Parsed parseFlag(const char* s, bool* out) {
  if (!s) return Parsed::kMalformed;
  for (const char* w : {"1", "yes", "on", "true"})
    if (detail::sameWord(s, w)) return *out = true, Parsed::kOk;
  for (const char* w : {"0", "no", "off", "false"})
    if (detail::sameWord(s, w)) return *out = false, Parsed::kOk;
  return Parsed::kMalformed;
}

// The index of `s` among the '|'-separated `choices`.
constexpr Parsed parseChoice(const char* s, const char* choices, uint64_t* out) {
  if (!s || !choices) return Parsed::kMalformed;
  uint64_t index = 0;
  for (const char* c = choices;; ++index) {
    size_t n = 0;
    while (c[n] && c[n] != '|') ++n;
    if (n && detail::sameWord(s, c, n)) return *out = index, Parsed::kOk;
    if (!c[n]) return Parsed::kMalformed;
    c += n + 1;
  }
}

// `s` as a value of `sp`, range included: a number for kSize, kCount and
// kInteger, 0/1 for kFlag, the index for kChoice, 0 for kString and kPath.
constexpr Parsed parse(const Spec& sp, const char* s, uint64_t* out) {
  uint64_t v = 0;
  Parsed r = Parsed::kMalformed;
  switch (sp.type) {
    case kSize:
    case kCount:
      if (sp.key && s && detail::sameWord(s, "off")) {
        v = UINT64_MAX;
        r = Parsed::kOk;
      } else {
        r = parseSize(s, &v);
      }
      break;
    case kInteger: r = parseInteger(s, &v); break;
    case kFlag: {
      bool b = false;
      r = parseFlag(s, &b);
      v = b;
      break;
    }
    case kChoice: r = parseChoice(s, sp.choices, &v); break;
    case kString:
    case kPath: r = Parsed::kOk; break;
  }
  if (r != Parsed::kOk) return r;
  if ((sp.type == kSize || sp.type == kCount || sp.type == kInteger) && (v < sp.min || v > sp.max))
    return Parsed::kOutOfRange;
  *out = v;
  return Parsed::kOk;
}

}  // namespace shmcoll::settings
