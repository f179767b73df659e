#include "launcher/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "common/settings.h"

namespace shmcoll::launcher {

namespace {

long parseRanks(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end || errno || v < 1)
    throw UsageError("-n needs a positive number of ranks, got '" + s + "'");
  if (v > kMaxRanks)
    throw UsageError("-n " + s + " is more than the " + std::to_string(kMaxRanks) + " ranks shmrun supports");
  return v;
}

double parseTimeout(const std::string& s) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || errno || !(v > 0) || !std::isfinite(v))
    throw UsageError("--timeout needs a positive number of seconds, got '" + s + "'");
  return v;
}

}  // namespace

std::string usageText() {
  return std::string("Usage: shmrun [options] program [args...]\n"
         "Starts the ranks of an MPI program on this node; they communicate through shared memory.\n"
         "\n"
         "Options:\n"
         "  -n, -np, --np N      number of ranks (default: one per core)\n"
         "  --bind-to core|numa|none\n"
         "                       bind each rank to a core (rank r -> core r % cores), to the NUMA node\n"
         "                       of that core, or not at all.  Default: core when ranks <= cores,\n"
         "                       none otherwise.  Each rank's shared memory is placed on the NUMA\n"
         "                       node it is bound to; with none it is interleaved over all nodes.\n"
         "  -x VAR[=value]       set VAR in the ranks' environment (ranks inherit shmrun's whole\n"
         "                       environment; -x VAR alone just checks that VAR is set; not for\n"
         "                       SHMCOLL_RANK, SHMCOLL_SIZE and the others shmrun sets per rank)\n"
         "  --tag-output         prefix each line of output with [1,rank]<stdout>: or <stderr>:\n"
         "  --report-segment     say on stderr how large the shared segment is (per rank and in\n"
         "                       all), where it lives and on which pages\n"
         "  --timeout SECONDS    end the job after SECONDS and exit with 124\n"
         "  --oversubscribe, --allow-run-as-root\n"
         "                       accepted for familiarity; they change nothing\n"
         "  --version            print the version\n"
         "  -h, --help           print this help\n"
         "  --help-settings      print every setting: syntax, range, default, decision-table key, reader\n"
         "  --settings-markdown  print the settings as the README's markdown table\n"
         "  --                   end of options\n"
         "\n"
         "Rank 0 reads shmrun's standard input; the other ranks read /dev/null.\n"
         "\n"
         "Exit status: 0 when every rank exits 0; otherwise that of the first rank to fail: its exit\n"
         "code, 128 + signal when killed by a signal, or the MPI_Abort error code (1 when that is 0\n"
         "modulo 256); 1 when a rank left after MPI_Init without MPI_Finalize or when the job cannot\n"
         "start; 2 for bad usage; 124 on --timeout; 127 when the program cannot be executed;\n"
         "128 + signal when shmrun itself is interrupted (SIGINT, SIGTERM, SIGHUP are forwarded\n"
         "to the ranks).  A malformed or out-of-range setting is bad usage: no rank starts.\n"
         "\n") +
         settings::helpText();
}

Options parseOptions(int argc, char** argv) {
  Options o;
  int i = 1;
  auto value = [&](const std::string& opt) -> std::string {
    if (i + 1 >= argc) throw UsageError(opt + " needs a value");
    return argv[++i];
  };
  for (; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-') break;  // the program
    // --opt=value spelling for long options.
    std::string inl;
    bool hasInline = false;
    if (a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      if (eq != std::string::npos) {
        inl = a.substr(eq + 1);
        a = a.substr(0, eq);
        hasInline = true;
      }
    }
    auto arg = [&](const std::string& opt) { return hasInline ? inl : value(opt); };
    auto noValue = [&]() {
      if (hasInline) throw UsageError(a + " takes no value");
    };
    if (a == "-n" || a == "-np" || a == "--np" || a == "--n") {
      o.nranks = parseRanks(arg(a));
    } else if (a.size() > 2 && a.rfind("-n", 0) == 0 && a[2] >= '0' && a[2] <= '9') {
      o.nranks = parseRanks(a.substr(2));  // -n4
    } else if (a == "--bind-to") {
      std::string v = arg(a);
      if (!topo::parseBindPolicy(v, &o.bind)) throw UsageError("--bind-to takes core, numa or none, not '" + v + "'");
      o.bindGiven = true;
    } else if (a == "-x") {
      std::string v = value(a);
      size_t eq = v.find('=');
      std::string name = v.substr(0, eq);
      if (name.empty() || name.find_first_of(" \t\n") != std::string::npos)
        throw UsageError("-x needs VAR or VAR=value, got '" + v + "'");
      for (const settings::Spec& sp : settings::kSpecs)
        if (sp.audience == settings::kProtocol && name == sp.name)
          throw UsageError("-x " + name + ": shmrun sets it for each rank; it cannot be passed");
      o.envVars.push_back(v);
    } else if (a == "--tag-output") {
      noValue();
      o.tagOutput = true;
    } else if (a == "--report-segment") {
      noValue();
      o.reportSegment = true;
    } else if (a == "--timeout") {
      o.timeoutSeconds = parseTimeout(arg(a));
    } else if (a == "--version" || a == "-V") {
      noValue();
      o.version = true;
    } else if (a == "--help" || a == "-h") {
      noValue();
      o.help = true;
    } else if (a == "--help-settings") {
      noValue();
      o.helpSettings = true;
    } else if (a == "--settings-markdown") {
      noValue();
      o.settingsMarkdown = true;
    } else if (a == "--oversubscribe" || a == "--allow-run-as-root") {
      noValue();
    } else {
      throw UsageError("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  for (; i < argc; ++i) o.program.push_back(argv[i]);
  if (o.program.empty() && !o.help && !o.helpSettings && !o.settingsMarkdown && !o.version)
    throw UsageError("no program to run");
  return o;
}

}  // namespace shmcoll::launcher
