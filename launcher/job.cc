#include "launcher/job.h"

#include <fcntl.h>
#include <mpi.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "common/settings.h"
#include "common/status.h"
#include "os/numa.h"

extern char** environ;

namespace shmcoll::launcher {

namespace {

// The CPUs this process may run on (its affinity mask), at least 1.
unsigned onlineCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

constexpr uint64_t kKeySignal = 1;
constexpr const char* kOurVars[] = {"SHMCOLL_RANK", "SHMCOLL_SIZE", "SHMCOLL_SEG_FD", "SHMCOLL_SEG_SIZE",
                                    "SHMCOLL_JOBID"};

void say(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void say(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  size_t len = std::min(static_cast<size_t>(n), sizeof buf - 2);
  buf[len++] = '\n';
  writeAll(2, "shmrun: ", 8);
  writeAll(2, buf, len);
}

// Async-signal-safe message from a forked child (no stdio, no allocation).
void childSay(const char* a, const char* b, const char* c) {
  char buf[512];
  size_t n = 0;
  for (const char* s : {"shmrun: ", a, b, c, "\n"})
    for (; s && *s && n < sizeof buf; ++s) buf[n++] = *s;
  ssize_t ignored = write(2, buf, n);
  (void)ignored;
}

bool isExecutableFile(const std::string& p) {
  struct stat st{};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

// Finds `prog` as execvp would, once, so that a typo gives one message
// instead of N and every rank execs the same file.
std::string resolveProgram(const std::string& prog) {
  if (prog.find('/') != std::string::npos) {
    if (isExecutableFile(prog)) return prog;
    int err = errno;
    struct stat st{};
    if (stat(prog.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) err = EISDIR;
    else if (err == 0) err = EACCES;
    throw LaunchError("cannot execute '" + prog + "': " + strerror(err), kExitNotFound);
  }
  const std::string p = settings::programSearchPath();
  size_t start = 0;
  for (;;) {
    size_t end = p.find(':', start);
    std::string dir = p.substr(start, end == std::string::npos ? std::string::npos : end - start);
    std::string cand = (dir.empty() ? "." : dir) + "/" + prog;
    if (isExecutableFile(cand)) return cand;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  throw LaunchError("cannot execute '" + prog + "': not found in PATH", kExitNotFound);
}

// Every setting shmrun reads, from its own environment, and every one the
// library reads, as the ranks will see them (-x wins): one bad value and no
// rank starts.  The protocol's variables are left out: shmrun sets them.
void checkSettings(const std::vector<std::string>& xVars) {
  std::vector<std::string> bad = settings::validate(settings::kShmrun, false);
  for (std::string& msg : settings::validate(settings::kLibrary, false, xVars))
    if (std::find(bad.begin(), bad.end(), msg) == bad.end()) bad.push_back(std::move(msg));
  if (bad.empty()) return;
  std::string all;
  for (const std::string& msg : bad) all += (all.empty() ? "" : "\nshmrun: ") + msg;
  throw LaunchError(all, kExitUsage);
}

std::string signalName(int sig) {
  const char* d = strsignal(sig);
  return std::to_string(sig) + " (" + (d ? d : "unknown") + ")";
}

}  // namespace

Job::Job(Options opts) : opts_(std::move(opts)) {}

Job::~Job() {
  pump_.reset();
  if (segFd_ >= 0) close(segFd_);
  shm::release(&shm_);
  if (devNull_ >= 0) close(devNull_);
  if (sigFd_ >= 0) close(sigFd_);
  if (epoll_ >= 0) close(epoll_);
}

int Job::run() {
  // --timeout counts from shmrun's start: preparing the job is part of it.
  if (opts_.timeoutSeconds > 0)
    timeoutAt_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(opts_.timeoutSeconds));
  prepare();
  spawn();
  return watch();
}

void Job::prepare() {
  checkSettings(opts_.envVars);
  if (topo_.loadSystem() != kOk) throw LaunchError("cannot read the machine topology: " + lastReason());
  const unsigned ncores = topo_.ncores();
  n_ = static_cast<uint32_t>(opts_.nranks > 0 ? opts_.nranks : ncores);
  policy_ = opts_.bindGiven ? opts_.bind : (n_ <= ncores ? topo::BindPolicy::kCore : topo::BindPolicy::kNone);
  plan_ = topo::planBinding(topo_.info(), n_, policy_);
  // A topology of another machine (HWLOC_SYNTHETIC, HWLOC_XMLFILE: tests of
  // the NUMA logic) lays the job out as on it: each rank's NUMA node is
  // recorded as there, for the library's levels (coll/levels.h), but nothing
  // is bound or placed, and the wait policy counts this machine's CPUs.
  if (!topo_.thisSystem()) {
    for (topo::RankBinding& b : plan_) b.cpuset.clear();
    realCpus_ = onlineCpus();
  }
  programPath_ = resolveProgram(opts_.program[0]);
  grace_ = std::chrono::milliseconds(settings::integer(settings::Id::kKillGraceMs));

  // Slot size: SHMCOLL_SLOT_BYTES, else the decision table's slot_bytes for
  // this rank count, else a quarter of the L2 cache.  Its declared range (the
  // layout stores it in 32 bits) holds for the variable (checkSettings) and
  // for the table's rules (common/tuning.cc) alike.
  const size_t slotBytes =
      static_cast<size_t>(settings::tuned(settings::Id::kSlotBytes, nullptr, n_, segment::defaultSlotBytes()));
  // MPI_Alloc_mem heap per rank: memory every rank can read without a system call.
  static_assert(segment::kDefaultHeapBytes == settings::spec(settings::Id::kAllocMem).dflt);
  const size_t heapBytes = settings::size(settings::Id::kAllocMem);
  layout_ = segment::computeLayout(n_, slotBytes, heapBytes);

  // File descriptors: shmrun's own (the standard three, /dev/null, epoll,
  // signalfd, the segment, a file hwloc reads) and, with --tag-output, two
  // pipe ends per rank.
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  origNofile_ = rl.rlim_cur;
  constexpr rlim_t kOwnFds = 16;
  const rlim_t needFds = (opts_.tagOutput ? 2 * rlim_t{n_} : 0) + kOwnFds;
  if (rl.rlim_cur < needFds) {
    rlimit raised = rl;
    raised.rlim_cur = rl.rlim_max == RLIM_INFINITY ? needFds : std::min<rlim_t>(rl.rlim_max, needFds + 1024);
    setrlimit(RLIMIT_NOFILE, &raised);
    getrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < needFds)
      throw LaunchError((opts_.tagOutput ? "--tag-output with " + std::to_string(n_) + " ranks needs "
                                         : std::string("shmrun needs ")) +
                        std::to_string(needFds) + " open files but the limit is " + std::to_string(rl.rlim_cur) +
                        " (ulimit -n)");
  }

  // The segment.
  shm::Request req;
  req.size = layout_.totalSize;
  // (in the order of the declaration's choices)
  static_assert(std::string_view(settings::spec(settings::Id::kShmBackend).choices) == "auto|shm|memfd");
  constexpr shm::Backend kBackends[] = {shm::Backend::kAuto, shm::Backend::kNamed, shm::Backend::kMemfd};
  req.backend = kBackends[settings::choice(settings::Id::kShmBackend)];
  // Test hooks: pretend /dev/shm or memory is this small.
  req.namedCap = settings::size(settings::Id::kShmLimit);
  req.memCap = settings::size(settings::Id::kMemLimit);
  // Each rank's area on its node; with --bind-to none the node is -1 (or the
  // only node) for every rank, and placeAreas interleaves the whole range.
  std::vector<int> nodes(n_);
  for (uint32_t r = 0; r < n_; ++r)
    nodes[r] = policy_ == topo::BindPolicy::kNone || realCpus_ ? -1 : plan_[r].numaNode;
  req.place = [this, nodes](void* base, size_t, size_t pageSize) {
    return numa::placeAreas(static_cast<char*>(base) + layout_.rankAreaOffset, layout_.rankAreaStride, nodes,
                            false, pageSize);
  };
  static_assert(std::string_view(settings::spec(settings::Id::kHugepages).choices) == "auto|off|hugetlb");
  constexpr shm::HugePages kHuge[] = {shm::HugePages::kAuto, shm::HugePages::kOff, shm::HugePages::kHugetlb};
  req.hugePages = kHuge[settings::choice(settings::Id::kHugepages)];
  if (int rc = shm::createSegment(req, &shm_); rc != kOk) {
    const std::string why = lastReason();
    // What would make the segment fit: what the failure names, else what takes most of it.
    auto segmentHint = [&](const std::string& reason) -> std::string {
      if (req.hugePages == shm::HugePages::kHugetlb)
        return "reserve more huge pages (vm.nr_hugepages) or set SHMCOLL_HUGEPAGES=auto";
      if (reason.find("ulimit -v") != std::string::npos) return "raise the limit (ulimit -v) or use fewer ranks";
      if (layout_.heapBytes * 2 >= layout_.rankAreaStride)
        return "use fewer ranks or a smaller SHMCOLL_ALLOC_MEM (" + shm::humanBytes(layout_.heapBytes) +
               " per rank now)";
      return "use fewer ranks or a smaller SHMCOLL_SLOT_BYTES";
    };
    throw LaunchError("cannot start " + std::to_string(n_) + " rank" + (n_ == 1 ? "" : "s") + ": " + why +
                      (rc == MPI_ERR_NO_MEM ? "; " + segmentHint(why) : ""));
  }
  if (shm_.memfd && !shm_.fallbackReason.empty())
    say("%s; using anonymous shared memory (memfd) instead", shm_.fallbackReason.c_str());
  if (opts_.reportSegment) {
    const uint64_t heap = layout_.heapBytes;
    say("segment of %s for %u rank%s: %s per rank (%s of lanes, slots, cells and control, %s of MPI_Alloc_mem "
        "heap), on %s, %s pages%s",
        shm::humanBytes(shm_.size).c_str(), n_, n_ == 1 ? "" : "s", shm::humanBytes(layout_.rankAreaStride).c_str(),
        shm::humanBytes(layout_.rankAreaStride - heap).c_str(), shm::humanBytes(heap).c_str(),
        shm_.memfd ? "a memfd" : "/dev/shm (unlinked)", shm::humanBytes(shm_.pageSize).c_str(),
        shm_.hugePages == "hugetlb" ? " (reserved huge pages)"
        : shm_.hugePages == "advised" ? " (transparent huge pages requested)" : "");
  }

  if (getrandom(&jobId_, sizeof jobId_, GRND_NONBLOCK) != sizeof jobId_)
    jobId_ = static_cast<uint64_t>(getpid()) << 32 ^ static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  jobId_ &= (1ull << 63) - 1;  // stays positive for any reader that parses it signed
  segment::initHeader(shm_.base, layout_, jobId_, static_cast<uint32_t>(getpid()), realCpus_ ? realCpus_ : ncores);
  view_ = segment::View(shm_.base);
  for (uint32_t r = 0; r < n_; ++r) {
    view_.ctl(r)->cpu = policy_ == topo::BindPolicy::kCore && !realCpus_ ? plan_[r].cpu : -1;
    view_.ctl(r)->numaNode = plan_[r].numaNode;
  }
  segFd_ = shm::inheritableFd(shm_);
  if (segFd_ < 0) throw LaunchError(std::string("cannot duplicate the segment fd: ") + strerror(errno));

  // The ranks' environment: ours, minus stale SHMCOLL_* job variables (shmrun
  // started from inside a rank), plus -x, plus the protocol of layout.h.
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    std::string name = kv.substr(0, kv.find('='));
    bool ours = false;
    for (const char* v : kOurVars) ours |= name == v;
    if (!ours) env_.push_back(kv);
  }
  for (const std::string& x : opts_.envVars) {
    size_t eq = x.find('=');
    std::string name = x.substr(0, eq);
    auto sameName = [&](const std::string& kv) { return kv.compare(0, name.size() + 1, name + "=") == 0; };
    if (eq == std::string::npos) {
      if (std::none_of(env_.begin(), env_.end(), sameName))
        say("-x %s: %s is not set here, so the ranks do not get it", name.c_str(), name.c_str());
      continue;  // inherited with the rest of the environment
    }
    std::erase_if(env_, sameName);
    env_.push_back(x);
  }
  env_.push_back("SHMCOLL_SIZE=" + std::to_string(n_));
  env_.push_back("SHMCOLL_SEG_FD=" + std::to_string(segFd_));
  env_.push_back("SHMCOLL_SEG_SIZE=" + std::to_string(shm_.size));
  env_.push_back("SHMCOLL_JOBID=" + std::to_string(jobId_));
  for (std::string& kv : env_) envp_.push_back(kv.data());
  envp_.push_back(rankVar_);
  envp_.push_back(nullptr);
  for (std::string& a : opts_.program) argv_.push_back(a.data());
  argv_.push_back(nullptr);

  devNull_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  rank0SharesGroup_ = isatty(0);
}

void Job::childExec(uint32_t rank, int outFd, int errFd) {
  // Only async-signal-safe calls until exec: the launcher is single-threaded,
  // but keep the child cheap and predictable anyway.  hwloc binding is the
  // exception the design asks for (it allocates one bitmap).
  if (ownGroup(rank)) setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcherPid_) _exit(kExitLauncherError);  // the launcher died before prctl
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &origMask_, nullptr);
  if (outFd >= 0) {
    dup2(outFd, 1);
    dup2(errFd, 2);
  }
  if (rank != 0 && devNull_ >= 0) dup2(devNull_, 0);
  rlimit rl{};
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = origNofile_;
  setrlimit(RLIMIT_NOFILE, &rl);
  if (topo_.bindProcess(plan_[rank].cpuset) != kOk) {
    childSay(rankVar_, ": ", lastReason().c_str());
    _exit(kExitLauncherError);
  }
  execve(programPath_.c_str(), argv_.data(), envp_.data());
  childSay("cannot execute ", programPath_.c_str(), strerror(errno));
  _exit(kExitNotFound);
}

void Job::spawn() {
  epoll_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) throw LaunchError(std::string("epoll_create1: ") + strerror(errno));
  // Signals arrive through a signalfd so the watch loop sees them in order
  // with child exits; they are blocked before the first fork so none is lost.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&set, s);
  sigprocmask(SIG_BLOCK, &set, &origMask_);
  sigFd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sigFd_ < 0) throw LaunchError(std::string("signalfd: ") + strerror(errno));
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kKeySignal;
  epoll_ctl(epoll_, EPOLL_CTL_ADD, sigFd_, &ev);
  // Writing tagged output to a closed pipe must not kill the launcher.
  signal(SIGPIPE, SIG_IGN);
  if (opts_.tagOutput) pump_ = std::make_unique<OutputPump>(epoll_, n_);

  ranks_.resize(n_);
  fflush(nullptr);
  launcherPid_ = getpid();
  for (uint32_t r = 0; r < n_; ++r) {
    int outFd = -1, errFd = -1;
    if (pump_) {
      try {
        pump_->open(r, &outFd, &errFd);
      } catch (const std::exception& e) {
        say("%s; ending the job", e.what());
        exitCode_ = kExitLauncherError;
        endJob(SIGTERM);
        return;
      }
    }
    snprintf(rankVar_, sizeof rankVar_, "SHMCOLL_RANK=%u", r);
    pid_t pid = fork();
    if (pid == 0) childExec(r, outFd, errFd);
    if (pump_) pump_->closeChildEnds(r);
    if (pid < 0) {
      int err = errno;
      rlimit rl{};
      getrlimit(RLIMIT_NPROC, &rl);
      say("cannot start rank %u of %u: fork: %s (process limit, ulimit -u: %s); ending the job", r, n_,
          strerror(err), rl.rlim_cur == RLIM_INFINITY ? "unlimited" : std::to_string(rl.rlim_cur).c_str());
      exitCode_ = kExitLauncherError;
      endJob(SIGTERM);
      return;
    }
    // Also from this side, so that a signal sent right after fork already
    // reaches the group (whichever of parent and child runs first).
    if (ownGroup(r)) setpgid(pid, pid);
    ranks_[r].pid = pid;
    ranks_[r].running = true;
    byPid_[pid] = r;
    ++live_;
  }
}

std::string Job::describeRank(uint32_t r) const {
  return "rank " + std::to_string(r) + " (pid " + std::to_string(ranks_[r].pid) + ")";
}

void Job::killRemaining(int sig) {
  for (uint32_t r = 0; r < n_; ++r) {
    if (ranks_[r].pid <= 0) continue;
    // The group too, so whatever the rank started goes with it, also when
    // the rank itself is gone already (a group outlives its leader while it
    // has members, and its id is not reused meanwhile).
    if (ownGroup(r)) kill(-ranks_[r].pid, sig);
    if (ranks_[r].running) kill(ranks_[r].pid, sig);
  }
}

bool Job::groupsLeft() const {
  for (uint32_t r = 0; r < n_; ++r)
    if (ranks_[r].pid > 0 && ownGroup(r) && kill(-ranks_[r].pid, 0) == 0) return true;
  return false;
}

void Job::endJob(int sig) {
  if (ending_) return;
  ending_ = true;
  killRemaining(sig);
  if (sig != SIGKILL) killAt_ = Clock::now() + grace_;
  giveUpAt_ = Clock::now() + grace_ + std::chrono::seconds(5);
}

void Job::onSignal(int sig) {
  if (sig == SIGCHLD) return;
  if (ending_) {
    // A second interrupt, or one while the job is already ending: no more
    // patience.  The exit code stays that of the first cause.
    killRemaining(SIGKILL);
    return;
  }
  forwardedSignal_ = sig;
  say("received signal %s; forwarding it to the ranks", signalName(sig).c_str());
  endJob(sig);
}

void Job::onExit(pid_t pid, int status) {
  auto it = byPid_.find(pid);
  if (it == byPid_.end()) return;  // not a rank (cannot happen: we reap only our children)
  const uint32_t r = it->second;
  byPid_.erase(it);
  ranks_[r].running = false;
  --live_;
  if (pump_) pump_->finish(r);
  if (ending_) return;

  const segment::SegmentHeader* h = view_.header();
  if (h->abortRank.load(std::memory_order_acquire) != 0) {
    // Reported once every rank is gone, when the abort code is surely stored.
    abortSeen_ = true;
    endJob(SIGTERM);
    return;
  }
  const uint32_t state = view_.ctl(r)->state.load(std::memory_order_acquire);
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    say("%s killed by signal %s; ending the job", describeRank(r).c_str(), signalName(sig).c_str());
    exitCode_ = 128 + sig;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    say("%s exited with code %d; ending the job", describeRank(r).c_str(), WEXITSTATUS(status));
    exitCode_ = WEXITSTATUS(status);
  } else if (state == segment::kInitialized) {
    say("%s exited with code 0 after MPI_Init without calling MPI_Finalize; ending the job",
        describeRank(r).c_str());
    exitCode_ = kExitLauncherError;
  } else {
    return;  // a clean exit: finalized, or not an MPI program
  }
  endJob(SIGTERM);
}

int Job::watch() {
  epoll_event events[64];
  while (live_ > 0) {
    auto now = Clock::now();
    if (now >= timeoutAt_ && !ending_) {
      say("timeout: the job ran for more than %g s (--timeout); ending it", opts_.timeoutSeconds);
      exitCode_ = kExitTimeout;
      timeoutAt_ = Clock::time_point::max();
      endJob(SIGTERM);
    }
    if (now >= killAt_) {
      killAt_ = Clock::time_point::max();
      killRemaining(SIGKILL);
    }
    if (now >= giveUpAt_) {
      say("%u rank%s still running after SIGKILL (stuck in the kernel?); leaving them", live_,
          live_ == 1 ? " is" : "s are");
      break;
    }
    auto next = std::min({timeoutAt_, killAt_, giveUpAt_});
    int waitMs = -1;
    if (next != Clock::time_point::max()) {
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
      waitMs = static_cast<int>(std::clamp<long long>(ms, 0, 60000));
    }
    int ne = epoll_wait(epoll_, events, 64, waitMs);
    if (ne < 0 && errno != EINTR) throw LaunchError(std::string("epoll_wait: ") + strerror(errno));
    bool sawSignal = false;
    for (int i = 0; i < ne; ++i) {
      if (events[i].data.u64 == kKeySignal) sawSignal = true;
      else if (pump_) pump_->onEvent(events[i].data.u64);
    }
    if (sawSignal) {
      // Interrupts first: when Ctrl-C reaches a rank and shmrun together, the
      // rank's death is a consequence, not the failure to report.
      signalfd_siginfo si[16];
      ssize_t got;
      while ((got = read(sigFd_, si, sizeof si)) > 0)
        for (size_t k = 0; k < static_cast<size_t>(got) / sizeof si[0]; ++k)
          onSignal(static_cast<int>(si[k].ssi_signo));
    }
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) onExit(pid, status);
  }
  // An ended job takes the processes its ranks started along: those that
  // outlived SIGTERM get SIGKILL once the grace period is over.
  if (ending_) {
    const auto until = std::min(killAt_, Clock::now() + grace_);
    while (groupsLeft() && Clock::now() < until) usleep(10000);
    if (groupsLeft()) killRemaining(SIGKILL);
  }
  if (pump_) pump_->finishAll();

  const segment::SegmentHeader* h = view_.header();
  const int32_t abortRank = h->abortRank.load(std::memory_order_acquire);
  if (forwardedSignal_) return 128 + forwardedSignal_;
  if ((abortSeen_ || exitCode_ == 0) && abortRank != 0) {
    int code = h->abortCode.load(std::memory_order_acquire);
    if (h->abortKind.load(std::memory_order_relaxed) == segment::kAbortFatal)
      say("rank %d ended the job: an MPI error (class %d) on a communicator whose handler is MPI_ERRORS_ARE_FATAL",
          abortRank - 1, code);
    else
      say("rank %d called MPI_Abort with error code %d", abortRank - 1, code);
    // Exit statuses are 8 bits; an abort must never look like success.
    return (code & 0xff) ? (code & 0xff) : 1;
  }
  return exitCode_;
}

}  // namespace shmcoll::launcher
