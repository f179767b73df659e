// Settings: the one place that reads SHMCOLL_* environment variables.
//
// Each setting is declared once in common/settings.def (name, decision-table
// key, scope, type, default, range, readers, help); this module reads the
// environment, checks values against the declaration, words the errors, and
// generates the help and the README's table from it.  Precedence, for a
// setting with a decision-table key: the environment variable, then the
// table (common/tuning.h), then the default.
//
// Reading never fails: a malformed or out-of-range value reads as if unset,
// so the copy kernels can read theirs at load time.  Such a value is an error
// where the job starts instead: shmrun checks every setting it and the
// library read before it starts a rank (launcher/job.cc), and MPI_Init checks
// the library's (runtime/context.cc); neither goes on with a default.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/settings_table.h"

namespace shmcoll::settings {

// The variable's name; for SHMCOLL_ALGORITHM_<OP> the one of operation `op`
// (alltoall: SHMCOLL_ALGORITHM_ALLTOALL).
std::string name(Id id, const char* op = nullptr);
// The variable as the environment has it (nullptr when unset), unchecked.
const char* raw(Id id, const char* op = nullptr);

// The program search path as execvp uses it (PATH, else its default): the
// one variable not of ours that is read, by shmrun, to find the program once.
std::string programSearchPath();

// kSize, kCount: the value, else the declared default.
uint64_t size(Id id);
// The same with the default the caller computed (a Spec with `computed`).
uint64_t size(Id id, uint64_t dflt);
// kInteger.
long long integer(Id id);
long long integer(Id id, long long dflt);
// kFlag.
bool flag(Id id);
// kChoice: the index of the value in Spec::choices, else of the default (-1: none).
int choice(Id id);
// kString, kPath: the text, "" when unset.
std::string str(Id id, const char* op = nullptr);
// A setting with a decision-table key, for operation `op` (nullptr: a job-wide
// key) on `ranks` ranks: the variable, else the table's rule, else the
// declared default (or `dflt` for a computed one).
uint64_t tuned(Id id, const char* op, uint32_t ranks);
uint64_t tuned(Id id, const char* op, uint32_t ranks, uint64_t dflt);

// `text` as a value of `id`: "" when it is valid (then *value, if given, holds
// it as parse() gives it), else the message, which names the variable, the
// text and what is accepted, e.g.
//   SHMCOLL_SLOT_BYTES='-1' is not a byte size (digits with an optional k, m, g
//   or t suffix, e.g. 64k); allowed 64 to 1g
std::string check(Id id, const char* text, uint64_t* value = nullptr);

// Checks every setting read by one of `readers` (Reader bits) -- the launcher
// <-> rank protocol's only when `protocol` -- as the environment has them,
// except where `overrides` ("NAME=value"; of several for one name the last,
// as with shmrun's -x) says otherwise.  One message per bad value; empty when
// all are fine.
std::vector<std::string> validate(unsigned readers, bool protocol, const std::vector<std::string>& overrides = {});

// What a setting takes, for messages and help: "a byte size (digits with an
// optional k, m, g or t suffix, e.g. 64k)", "one of auto, shm, memfd", ...
std::string accepted(const Spec& sp);
// Its range ("64 to 1g", "at most 2", "at least 1"), "" when any value goes.
std::string rangeText(const Spec& sp);
// A kChoice's words, "auto, shm, memfd", each within `quote`.
std::string choiceList(const Spec& sp, const std::string& quote);
// A number in a setting's syntax: 65536 as a size is "64k".
std::string formatValue(const Spec& sp, uint64_t v);

// Generated documentation (settings_doc.cc).
// `shmrun --help`'s section: the user settings, each with its default and help line.
std::string helpText();
// `shmrun --help-settings`: every setting with every field.
std::string fullText();
// The README's table (`shmrun --settings-markdown`, scripts/gen-settings-doc.sh).
std::string markdown();

}  // namespace shmcoll::settings
