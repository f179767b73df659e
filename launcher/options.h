// Command line of shmrun.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "os/topology.h"

namespace shmcoll::launcher {

// Exit codes of shmrun itself (the job's own failures are reported with the
// rank's exit code, or 128 + signal as shells do).
constexpr int kExitLauncherError = 1;  // cannot start the job (resources, segment, ...)
constexpr int kExitUsage = 2;          // bad command line
constexpr int kExitTimeout = 124;      // --timeout expired (as coreutils timeout)
constexpr int kExitNotFound = 127;     // the program does not exist or is not executable

// Largest job we accept: far beyond the 1024 the design asks for, but below
// the default pid_max, so a typo (-n 1000000) fails with a message instead of
// a fork storm.
constexpr long kMaxRanks = 16384;

struct Options {
  long nranks = -1;              // -1: one per core
  bool bindGiven = false;
  topo::BindPolicy bind = topo::BindPolicy::kCore;
  std::vector<std::string> envVars;  // -x arguments, "VAR" or "VAR=value"
  bool tagOutput = false;
  bool reportSegment = false;    // --report-segment
  double timeoutSeconds = 0;     // 0: none
  bool version = false;
  bool help = false;
  bool helpSettings = false;      // --help-settings: the whole settings table
  bool settingsMarkdown = false;  // --settings-markdown: the README's table
  std::vector<std::string> program;  // program and its arguments
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Parses argv; throws UsageError with a one-line reason on bad usage.
Options parseOptions(int argc, char** argv);

// The --help text (its settings section comes from common/settings.def).
std::string usageText();

}  // namespace shmcoll::launcher
