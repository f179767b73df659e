// One shmrun job: the segment, the ranks, and the watch loop.
//
// Life of a job:
//   prepare()  topology and binding plan, segment sized with
//              segment::computeLayout, created/placed/reserved/unlinked by
//              shm::createSegment, header written; resource limits checked
//   spawn()    fork N ranks; each child: own process group (so the launcher
//              can signal a rank together with anything it started), parent
//              death signal, default signal state, binding through hwloc,
//              then exec with SHMCOLL_* in its environment and the segment fd
//              inherited
//   watch()    one epoll loop over a signalfd (SIGCHLD, SIGINT, SIGTERM,
//              SIGHUP), the --tag-output pipes and the deadlines; the first
//              rank to fail ends the job (SIGTERM, then SIGKILL after the
//              grace period) and decides the exit code.
// Everything the launcher needs to know from a rank comes from its wait
// status and from the segment (RankCtl::state, the abort word).
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "launcher/options.h"
#include "launcher/output.h"
#include "os/shm.h"
#include "os/topology.h"
#include "segment/layout.h"

namespace shmcoll::launcher {

// A fatal launcher error: message for stderr and the exit code.
struct LaunchError : std::runtime_error {
  LaunchError(const std::string& msg, int code = kExitLauncherError) : std::runtime_error(msg), exitCode(code) {}
  int exitCode;
};

class Job {
 public:
  explicit Job(Options opts);
  ~Job();

  // Returns shmrun's exit status.  Throws LaunchError before any rank starts.
  int run();

 private:
  using Clock = std::chrono::steady_clock;

  void prepare();
  void spawn();
  int watch();

  [[noreturn]] void childExec(uint32_t rank, int outFd, int errFd);
  void onSignal(int sig);
  void onExit(pid_t pid, int status);
  void endJob(int sig);        // first phase: `sig` to every live rank
  // Whether a process group of a rank still has members.
  bool groupsLeft() const;
  // Whether rank r leads a process group of its own (rank 0 shares shmrun's
  // when stdin is a terminal).
  bool ownGroup(uint32_t r) const { return !(r == 0 && rank0SharesGroup_); }
  void killRemaining(int sig);
  std::string describeRank(uint32_t rank) const;

  Options opts_;
  uint32_t n_ = 0;
  topo::Topology topo_;
  unsigned realCpus_ = 0;  // the CPUs this machine gives us, when topo_ describes another one
  topo::BindPolicy policy_ = topo::BindPolicy::kNone;
  std::vector<topo::RankBinding> plan_;
  segment::Layout layout_;
  shm::Shm shm_;
  segment::View view_;
  uint64_t jobId_ = 0;
  int segFd_ = -1;  // inheritable copy for the ranks
  std::string programPath_;
  std::vector<std::string> env_;          // common environment of the ranks
  std::vector<char*> envp_;               // env_ plus the per-rank slot, null-terminated
  char rankVar_[48] = {};                 // "SHMCOLL_RANK=<r>", rewritten before each fork
  std::vector<char*> argv_;
  int devNull_ = -1;
  pid_t launcherPid_ = 0;
  bool rank0SharesGroup_ = false;        // stdin is a terminal: rank 0 stays in our group to read it
  int epoll_ = -1;
  int sigFd_ = -1;
  sigset_t origMask_{};
  rlim_t origNofile_ = 0;
  std::unique_ptr<OutputPump> pump_;

  struct Rank {
    pid_t pid = -1;
    bool running = false;
  };
  std::vector<Rank> ranks_;
  std::unordered_map<pid_t, uint32_t> byPid_;
  uint32_t live_ = 0;

  // Outcome.
  bool ending_ = false;
  int exitCode_ = 0;
  bool abortSeen_ = false;
  int forwardedSignal_ = 0;
  Clock::time_point killAt_ = Clock::time_point::max();     // SIGKILL the rest
  Clock::time_point giveUpAt_ = Clock::time_point::max();   // stop waiting for unkillable ranks
  Clock::time_point timeoutAt_ = Clock::time_point::max();
  std::chrono::milliseconds grace_{300};
};

}  // namespace shmcoll::launcher
