// shmrun: starts the ranks of an MPI program on this node.  See job.h for how
// a job runs and options.cc (usageText) for the command line and exit codes.
#include <cstdio>
#include <exception>

#include "common/settings.h"
#include "launcher/job.h"
#include "launcher/options.h"

#ifndef SHMCOLL_VERSION_STRING
#define SHMCOLL_VERSION_STRING "unknown"
#endif

int main(int argc, char** argv) {
  using namespace shmcoll::launcher;
  Options opts;
  try {
    opts = parseOptions(argc, argv);
  } catch (const UsageError& e) {
    fprintf(stderr, "shmrun: %s\nTry 'shmrun --help' for more information.\n", e.what());
    return kExitUsage;
  }
  if (opts.help) {
    fputs(usageText().c_str(), stdout);
    return 0;
  }
  if (opts.helpSettings || opts.settingsMarkdown) {
    fputs((opts.helpSettings ? shmcoll::settings::fullText() : shmcoll::settings::markdown()).c_str(), stdout);
    return 0;
  }
  if (opts.version) {
    printf("shmrun (shmcoll) %s\n", SHMCOLL_VERSION_STRING);
    return 0;
  }
  try {
    Job job(std::move(opts));
    return job.run();
  } catch (const LaunchError& e) {
    fprintf(stderr, "shmrun: %s\n", e.what());
    return e.exitCode;
  } catch (const std::exception& e) {
    fprintf(stderr, "shmrun: %s\n", e.what());
    return kExitLauncherError;
  }
}
