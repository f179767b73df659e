// The decision table: measured thresholds for this machine.
//
// `shmcoll-tune` (perf/tune.sh) measures the node and writes a table of
// rules; the runtime loads it once, at the first look-up, from
// $SHMCOLL_TUNING when that is set (empty or "none": no table), else from
// share/shmcoll/tuning.txt beside the installed library (<prefix>/lib/..).
// A missing default file is normal (the built-in defaults apply); a file
// named by SHMCOLL_TUNING that cannot be read, and every malformed line, is
// reported on stderr once per process and skipped.
//
// Format: one rule per line, `#` starts a comment.
//     <key> <op> <ranks> <value>
// <key> names a tunable (the list is kKeys in tuning.cc); <op> is an
// operation name as in SHMCOLL_ALGORITHM_<OP> in lower case (alltoall,
// allgatherv, ...) or `*` for every operation; the rule applies to teams of
// at least <ranks> ranks, up to the next rule for the same key and op;
// <value> is a byte count with an optional k/m/g suffix, an integer, or
// `off` (never: the largest value).  A rule for the operation wins over `*`.
//
// Precedence, for every tunable: its environment variable, then the table,
// then the built-in default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmcoll::tuning {

class Table {
 public:
  // Adds the rules in `text`; returns how many were accepted and appends a
  // message per rejected line ("line N: why") to `errors`.
  int parse(const std::string& text, std::string* errors);
  // The rule for (key, op) -- falling back to (key, *) -- with the largest
  // <ranks> not above `ranks`; false when there is none.  `op` nullptr: `*` only.
  bool lookup(const char* key, const char* op, uint32_t ranks, uint64_t* out) const;
  size_t size() const { return rules_.size(); }

 private:
  struct Rule {
    std::string key, op;
    uint32_t ranks;
    uint64_t value;
  };
  std::vector<Rule> rules_;
};

// The table of this process (loaded at the first call).
const Table& table();
// The file it came from, or an empty string.
const std::string& tablePath();

// The value of tunable `key` for `op` (nullptr: a job-wide tunable, looked up
// under `*`) on `ranks` ranks: $envVar when set and valid, else the table's
// rule, else `fallback`.  `envVar` may be nullptr.
uint64_t value(const char* envVar, const char* key, const char* op, uint32_t ranks, uint64_t fallback);

}  // namespace shmcoll::tuning
