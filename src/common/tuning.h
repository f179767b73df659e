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
// <key> names a setting (the `key` of its declaration in
// common/settings.def); <op> is an operation name as in SHMCOLL_ALGORITHM_<OP>
// in lower case (alltoall, allgatherv, ...) or `*` for every operation (the
// only one a job-wide key takes); the rule applies to teams of at least
// <ranks> ranks, up to the next rule for the same key and op; <value> is what
// the setting's variable takes (a byte size with an optional k/m/g/t suffix,
// or a count, in the same syntax; common/settings_table.h) or `off` (never:
// the largest value), within the setting's range.  A rule for the operation
// wins over `*`.
//
// Precedence, for every setting with a key: its environment variable, then
// the table, then the built-in default (settings::tuned, common/settings.h).
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

}  // namespace shmcoll::tuning
