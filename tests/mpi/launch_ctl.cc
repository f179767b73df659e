// A non-MPI rank for the launcher tests: it does by hand what MPI_Init,
// MPI_Finalize and MPI_Abort do to the segment, so shmrun's watching can be
// tested without the engine.  Not listed in testlist.txt: shmrun_test runs it.
//
//   launch_ctl check        validate the segment and the environment, print
//                           "rank R ok cpu C numa N allowed <Cpus_allowed_list>"
//   launch_ctl fds          fail if any fd besides 0-2 and the segment is open
//   launch_ctl init-only    mark the rank initialized, exit 0 (no finalize)
//   launch_ctl finalize     initialized, then finalized, exit 0
//   launch_ctl abort R C    rank R aborts with code C as MPI_Abort does; the
//                           others wait to be ended by shmrun
//   launch_ctl spam L B     print L lines of B bytes ('a' + rank % 26) quickly
//   launch_ctl ready DIR [sleep]  write DIR/ready.R holding the pid, then
//                           sleep (default 60 s)
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../src/segment/layout.h"

using namespace shmcoll::segment;

namespace {

[[noreturn]] void die(int rank, const char* what) {
  fprintf(stderr, "launch_ctl rank %d: %s\n", rank, what);
  exit(3);
}

long envInt(const char* name) {
  const char* v = getenv(name);
  return v ? atol(v) : -1;
}

std::string allowedCpus() {
  FILE* f = fopen("/proc/self/status", "r");
  char line[4096];
  std::string out;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
      char* p = line + 18;
      while (*p == ' ' || *p == '\t') ++p;
      out = p;
      while (!out.empty() && (out.back() == '\n')) out.pop_back();
    }
  if (f) fclose(f);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die(-1, "usage: launch_ctl check|fds|init-only|finalize|abort R C|spam L B|ready DIR");
  const std::string mode = argv[1];
  const long rank = envInt("SHMCOLL_RANK"), size = envInt("SHMCOLL_SIZE");
  const long fd = envInt("SHMCOLL_SEG_FD"), segSize = envInt("SHMCOLL_SEG_SIZE");
  const char* jobIdStr = getenv("SHMCOLL_JOBID");
  if (rank < 0 || size <= 0 || rank >= size || fd < 3 || segSize <= 0 || !jobIdStr)
    die(static_cast<int>(rank), "SHMCOLL_* environment missing or inconsistent");
  const int r = static_cast<int>(rank);

  if (mode == "spam") {
    long lines = argc > 2 ? atol(argv[2]) : 1000, bytes = argc > 3 ? atol(argv[3]) : 100;
    std::string s(static_cast<size_t>(bytes), static_cast<char>('a' + r % 26));
    s += '\n';
    // Unbuffered writes of odd sizes so that lines reach the pipe in pieces.
    for (long i = 0; i < lines; ++i) {
      size_t half = s.size() / 3;
      if (write(1, s.data(), half) < 0 || write(1, s.data() + half, s.size() - half) < 0) return 4;
    }
    return 0;
  }
  if (mode == "fds") {
    DIR* d = opendir("/proc/self/fd");
    int self = dirfd(d);
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      int n = atoi(e->d_name);
      if (n <= 2 || n == fd || n == self) continue;
      char target[256] = {0};
      std::string link = std::string("/proc/self/fd/") + e->d_name;
      ssize_t len = readlink(link.c_str(), target, sizeof target - 1);
      (void)len;
      fprintf(stderr, "launch_ctl rank %d: unexpected open fd %d -> %s\n", r, n, target);
      return 5;
    }
    closedir(d);
    printf("rank %d fds ok\n", r);
    return 0;
  }

  void* base = mmap(nullptr, static_cast<size_t>(segSize), PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
  if (base == MAP_FAILED) die(r, "cannot map the segment fd");
  View v(base);
  SegmentHeader* h = v.header();
  RankCtl* me = v.ctl(static_cast<uint32_t>(r));

  if (mode == "check") {
    if (h->magic != kMagic) die(r, "bad magic");
    if (h->version != kVersion) die(r, "bad version");
    if (h->nranks != static_cast<uint32_t>(size)) die(r, "nranks differs from SHMCOLL_SIZE");
    if (h->totalSize != static_cast<uint64_t>(segSize)) die(r, "totalSize differs from SHMCOLL_SEG_SIZE");
    if (h->jobId != strtoull(jobIdStr, nullptr, 10)) die(r, "jobId differs from SHMCOLL_JOBID");
    if (h->launcherPid != static_cast<uint32_t>(getppid())) die(r, "launcherPid is not our parent");
    if (h->abortRank.load() != 0 || me->state.load() != kNotStarted) die(r, "segment not zeroed");
    const std::string allowed = allowedCpus();
    if (me->cpu >= 0 && allowed.find(std::to_string(me->cpu)) == std::string::npos) die(r, "RankCtl.cpu not in our cpuset");
    // Every byte of our area is writable (reserved, no SIGBUS).
    memset(v.rankArea(static_cast<uint32_t>(r)) + kRankCtlBytes, 0x5a, h->rankAreaStride - kRankCtlBytes);
    printf("rank %d ok cpu %d numa %d allowed %s\n", r, me->cpu, me->numaNode, allowed.c_str());
    return 0;
  }
  if (mode == "init-only") {
    me->state.store(kInitialized);
    return 0;
  }
  if (mode == "finalize") {
    me->state.store(kInitialized);
    usleep(1000);
    me->state.store(kFinalized);
    return 0;
  }
  if (mode == "abort" && argc >= 4) {
    me->state.store(kInitialized);
    if (r == atoi(argv[2])) {
      int code = atoi(argv[3]);
      int32_t expected = 0;
      if (h->abortRank.compare_exchange_strong(expected, r + 1)) h->abortCode.store(code);
      _exit(code & 0xff ? code & 0xff : 1);
    }
    sleep(60);
    return 0;
  }
  if (mode == "ready" && argc >= 3) {
    std::string path = std::string(argv[2]) + "/ready." + std::to_string(r);
    std::string tmp = path + ".tmp";
    FILE* f = fopen(tmp.c_str(), "w");
    if (!f) die(r, "cannot write the ready file");
    fprintf(f, "%d\n", static_cast<int>(getpid()));
    fclose(f);
    rename(tmp.c_str(), path.c_str());
    sleep(argc > 3 ? static_cast<unsigned>(atoi(argv[3])) : 60u);
    return 0;
  }
  die(r, "unknown mode");
}
