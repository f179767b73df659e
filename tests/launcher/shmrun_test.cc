// shmrun driven as a subprocess: start-up, exit codes, failure handling,
// signals, timeouts, output tagging, binding, the memfd fallback and the
// refusal when no memory is left.  After every case nothing named after the
// shmrun processes of the case may be left in /dev/shm.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "os/shm.h"
#include "os/topology.h"
#include "segment/layout.h"

namespace {

using Clock = std::chrono::steady_clock;

const std::string kShmrun = SHMRUN_PATH;
const std::string kCtl = std::string(MPI_TEST_DIR) + "/launch_ctl";
const std::string kMpi = std::string(MPI_TEST_DIR) + "/launch_mpi";

struct Result {
  int exitCode = -1;   // exit status, or -1 when killed
  int termSig = 0;     // signal that killed shmrun itself
  bool timedOut = false;
  std::string out, err;
  double seconds = 0;
};

// A child process with captured stdout/stderr, in its own process group so a
// test timeout can kill it with everything it started.
class Proc {
 public:
  Proc(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
       const std::string& input = "") {
    int out[2], err[2], in[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) abort();
    start_ = Clock::now();
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      dup2(in[0], 0);
      dup2(out[1], 1);
      dup2(err[1], 2);
      // Only 0-2 go to shmrun: its ranks then see exactly what shmrun gives them.
      close_range(3, ~0u, 0);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      for (int s : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(s, SIG_DFL);
      for (const std::string& kv : env) putenv(strdup(kv.c_str()));
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(strdup(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(126);
    }
    close(out[1]);
    close(err[1]);
    close(in[0]);
    if (!input.empty() && write(in[1], input.data(), input.size()) < 0) abort();
    close(in[1]);
    outFd_ = out[0];
    errFd_ = err[0];
  }
  ~Proc() {
    if (!reaped_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (outFd_ >= 0) close(outFd_);
    if (errFd_ >= 0) close(errFd_);
  }

  pid_t pid() const { return pid_; }

  Result wait(double timeoutSeconds = 60) {
    Result r;
    const auto deadline = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeoutSeconds));
    Clock::time_point exitedAt{};
    int status = 0;
    for (;;) {
      pump(50);
      if (!reaped_ && waitpid(pid_, &status, WNOHANG) == pid_) {
        reaped_ = true;
        exitedAt = Clock::now();
        r.seconds = std::chrono::duration<double>(exitedAt - start_).count();
      }
      if (reaped_ && outFd_ < 0 && errFd_ < 0) break;
      // Something shmrun left behind still holds the pipes: do not wait for EOF forever.
      if (reaped_ && Clock::now() - exitedAt > std::chrono::seconds(2)) break;
      if (!reaped_ && Clock::now() > deadline) {
        r.timedOut = true;
        kill(-pid_, SIGKILL);
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        reaped_ = true;
        r.seconds = timeoutSeconds;
        pump(100);
        break;
      }
    }
    if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.termSig = WTERMSIG(status);
    r.out = out_;
    r.err = err_;
    return r;
  }

 private:
  void pump(int ms) {
    pollfd p[2] = {{outFd_, POLLIN, 0}, {errFd_, POLLIN, 0}};
    if (poll(p, 2, ms) <= 0) return;
    char buf[65536];
    for (int i = 0; i < 2; ++i) {
      int& fd = i == 0 ? outFd_ : errFd_;
      if (fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = read(fd, buf, sizeof buf);
      if (n > 0) (i == 0 ? out_ : err_).append(buf, static_cast<size_t>(n));
      else if (n == 0 || errno != EINTR) {
        close(fd);
        fd = -1;
      }
    }
  }

  pid_t pid_ = -1;
  int outFd_ = -1, errFd_ = -1;
  bool reaped_ = false;
  std::string out_, err_;
  Clock::time_point start_;
};

std::vector<std::string> shmrunArgs(std::vector<std::string> args) {
  args.insert(args.begin(), kShmrun);
  return args;
}

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

int count(const std::string& hay, const std::string& needle) {
  int n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

// A zombie counts as gone: it has released everything, and whoever inherited
// it (init) reaps it when it likes.
bool alive(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(f, stat)) return false;
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

class ShmrunTest : public ::testing::Test {
 protected:
  // Runs shmrun with `args` and waits for it.
  Result run(std::vector<std::string> args, std::vector<std::string> env = {}, const std::string& input = "",
             double timeout = 60) {
    Proc p(shmrunArgs(std::move(args)), env, input);
    pids_.push_back(p.pid());
    return p.wait(timeout);
  }
  Proc* start(std::vector<std::string> args, std::vector<std::string> env = {}) {
    procs_.push_back(std::make_unique<Proc>(shmrunArgs(std::move(args)), env));
    pids_.push_back(procs_.back()->pid());
    return procs_.back().get();
  }
  void SetUp() override {
    char tmpl[] = "/tmp/shmrun-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    procs_.clear();
    std::system(("rm -rf " + dir_).c_str());
    // The segment is unlinked before any rank starts, whatever happens after.
    if (DIR* d = opendir("/dev/shm")) {
      while (dirent* e = readdir(d))
        for (pid_t p : pids_)
          EXPECT_NE(std::string(e->d_name).rfind("shmcoll-" + std::to_string(p) + "-", 0), 0u)
              << "left in /dev/shm: " << e->d_name;
      closedir(d);
    }
  }
  // Waits until `n` ranks have written DIR/ready.R; returns their pids.
  std::vector<pid_t> waitReady(int n, double seconds = 20) {
    std::vector<pid_t> pids(n, -1);
    auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    for (int r = 0; r < n; ++r) {
      while (Clock::now() < until) {
        std::ifstream f(dir_ + "/ready." + std::to_string(r));
        if (f >> pids[r]) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (pids[r] < 0) ADD_FAILURE() << "rank " << r << " never became ready";
    }
    return pids;
  }

  std::string dir_;
  std::vector<pid_t> pids_;
  std::vector<std::unique_ptr<Proc>> procs_;
};

// ---- usage ----------------------------------------------------------------------

TEST_F(ShmrunTest, HelpAndVersion) {
  Result h = run({"--help"});
  EXPECT_EQ(h.exitCode, 0);
  EXPECT_NE(h.out.find("Usage: shmrun"), std::string::npos);
  EXPECT_NE(h.out.find("--bind-to"), std::string::npos);
  Result v = run({"--version"});
  EXPECT_EQ(v.exitCode, 0);
  EXPECT_EQ(v.out.rfind("shmrun (shmcoll) ", 0), 0u) << v.out;
}

TEST_F(ShmrunTest, BadUsageExitsTwoWithAReason) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "no program to run"},
           {{"-n", "0", "true"}, "-n needs a positive number of ranks, got '0'"},
           {{"-n", "abc", "true"}, "-n needs a positive number of ranks, got 'abc'"},
           {{"-n"}, "-n needs a value"},
           {{"-n", "999999", "true"}, "-n 999999 is more than the"},
           {{"--bind-to", "socket", "true"}, "--bind-to takes core, numa or none, not 'socket'"},
           {{"--timeout", "-3", "true"}, "--timeout needs a positive number of seconds"},
           {{"--frobnicate", "true"}, "unknown option '--frobnicate'"},
           {{"-x", "=v", "true"}, "-x needs VAR or VAR=value"},
           // (every rank would be rank 0, and wait for ranks 1 and 2 until --timeout)
           {{"-n", "3", "-x", "SHMCOLL_RANK=0", "true"}, "-x SHMCOLL_RANK: shmrun sets it for each rank"},
           {{"-n", "2", "-x", "SHMCOLL_SEG_FD", "true"}, "-x SHMCOLL_SEG_FD: shmrun sets it for each rank"},
           {{"-n", "2", "-x", "SHMCOLL_SIZE=5", "true"}, "-x SHMCOLL_SIZE: shmrun sets it for each rank"},
       }) {
    Result r = run(c.args);
    EXPECT_EQ(r.exitCode, 2) << c.message;
    EXPECT_NE(r.err.find("shmrun: " + c.message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST_F(ShmrunTest, ProtocolVariablesInTheEnvironmentAreReplaced) {
  // A job started from inside another job's rank (or a stray export) carries
  // the protocol's variables: every rank still gets its own.
  Result r = run({"-n", "3", "/bin/sh", "-c", "echo $SHMCOLL_RANK/$SHMCOLL_SIZE"},
                 {"SHMCOLL_RANK=0", "SHMCOLL_SIZE=7", "SHMCOLL_SEG_FD=0", "SHMCOLL_JOBID=1"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::multiset<std::string> lines;
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) lines.insert(l);
  EXPECT_EQ(lines, (std::multiset<std::string>{"0/3", "1/3", "2/3"})) << r.out;
}

TEST_F(ShmrunTest, MissingProgramExits127Once) {
  Result r = run({"-n", "4", "/nonexistent/program"});
  EXPECT_EQ(r.exitCode, 127);
  EXPECT_EQ(count(r.err, "cannot execute '/nonexistent/program'"), 1) << r.err;
  Result p = run({"-n", "4", "no-such-program-in-path"});
  EXPECT_EQ(p.exitCode, 127);
  EXPECT_NE(p.err.find("not found in PATH"), std::string::npos) << p.err;
}

TEST_F(ShmrunTest, FamiliarNoOpOptionsAndDoubleDash) {
  Result r = run({"--oversubscribe", "--allow-run-as-root", "-np", "2", "--", "/bin/sh", "-c", "echo $SHMCOLL_SIZE"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "2\n2\n");
}

TEST_F(ShmrunTest, ReportSegmentGivesTheSizes) {
  // The figures follow segment/layout.h with 64 KiB slots and the default
  // 2 MiB heap: 1012 KiB of lanes, slots, cells and control per rank, at
  // N = 2 as at N = 64.
  Result r = run({"--report-segment", "-n", "2", "true"}, {"SHMCOLL_HUGEPAGES=off", "SHMCOLL_SLOT_BYTES=64k"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.err,
            "shmrun: segment of 6.0 MiB for 2 ranks: 3.0 MiB per rank (1012.0 KiB of lanes, slots, cells and "
            "control, 2.0 MiB of MPI_Alloc_mem heap), on /dev/shm (unlinked), 4.0 KiB pages\n");
  Result big = run({"--report-segment", "-n", "64", "true"},
                   {"SHMCOLL_HUGEPAGES=off", "SHMCOLL_SHM_BACKEND=memfd", "SHMCOLL_SLOT_BYTES=64k"});
  EXPECT_EQ(big.exitCode, 0) << big.err;
  EXPECT_NE(big.err.find("segment of 191.3 MiB for 64 ranks: 3.0 MiB per rank (1012.0 KiB of lanes, slots, cells "
                         "and control, 2.0 MiB of MPI_Alloc_mem heap), on a memfd, 4.0 KiB pages\n"),
            std::string::npos)
      << big.err;
  Result quiet = run({"-n", "2", "true"});
  EXPECT_EQ(quiet.err, "");
  // Unset, and with no decision table, the slots take segment::defaultSlotBytes()
  // (a quarter of this machine's L2, 64 KiB to 1 MiB): two of them, so
  // 2 x (that - 64 KiB) more, which the report words in KiB or MiB.
  const size_t slot = shmcoll::segment::defaultSlotBytes();
  EXPECT_GE(slot, size_t{64} << 10);
  EXPECT_LE(slot, size_t{1} << 20);
  EXPECT_EQ(slot & (slot - 1), 0u) << slot;
  Result dflt = run({"--report-segment", "-n", "2", "true"}, {"SHMCOLL_HUGEPAGES=off", "SHMCOLL_TUNING=none"});
  const uint64_t control = (1012 << 10) + 2 * (slot - (64 << 10));
  const std::string want = "(" + shmcoll::shm::humanBytes(control) + " of lanes";
  EXPECT_NE(dflt.err.find(want), std::string::npos) << want << " in: " << dflt.err;
  // Every slot size the default can take, as the report words it.
  EXPECT_EQ(shmcoll::shm::humanBytes(1012 << 10), "1012.0 KiB");
  EXPECT_EQ(shmcoll::shm::humanBytes((1012 << 10) + 2 * (448 << 10)), "1.9 MiB");     // 512 KiB slots (2 MiB L2)
  EXPECT_EQ(shmcoll::shm::humanBytes((1012 << 10) + 2 * (960 << 10)), "2.9 MiB");     // 1 MiB slots
}

// ---- normal runs ---------------------------------------------------------------

class RankCounts : public ShmrunTest, public ::testing::WithParamInterface<int> {};

TEST_P(RankCounts, EveryRankSeesAConsistentSegment) {
  const int n = GetParam();
  Result r = run({"-n", std::to_string(n), kCtl, "check"}, {}, "", 120);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  std::set<int> seen;
  for (const std::string& l : lines(r.out)) {
    int rank = -1;
    ASSERT_EQ(sscanf(l.c_str(), "rank %d ok", &rank), 1) << l;
    seen.insert(rank);
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(n));
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), n - 1);
}

INSTANTIATE_TEST_SUITE_P(Launch, RankCounts, ::testing::Values(1, 2, 8, 64));

TEST_F(ShmrunTest, ThousandRanks) {
  Result r = run({"-n", "1024", kCtl, "check"}, {}, "", 240);
  ASSERT_EQ(r.exitCode, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(lines(r.out).size(), 1024u);
}

TEST_F(ShmrunTest, ThousandRanksWithTaggedOutput) {
  Result r = run({"-n", "1024", "--tag-output", "/bin/sh", "-c", "echo out; echo err >&2"}, {}, "", 240);
  ASSERT_EQ(r.exitCode, 0) << r.err.substr(0, 2000);
  const std::vector<std::string> all = lines(r.out);
  std::set<std::string> out(all.begin(), all.end());
  EXPECT_EQ(out.size(), 1024u);
  EXPECT_TRUE(out.count("[1,1023]<stdout>: out"));
  EXPECT_EQ(count(r.err, "<stderr>: err\n"), 1024);
}

TEST_F(ShmrunTest, RanksInheritOnlyTheSegmentFd) {
  Result r = run({"-n", "3", kCtl, "fds"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  Result t = run({"-n", "3", "--tag-output", kCtl, "fds"});
  EXPECT_EQ(t.exitCode, 0) << t.err;  // no other rank's pipe leaks into a rank
}

TEST_F(ShmrunTest, StdinGoesToRankZeroOnly) {
  Result r = run({"-n", "3", "/bin/sh", "-c", "cat | sed \"s/^/$SHMCOLL_RANK:/\""}, {}, "hello\n");
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "0:hello\n");
}

// ---- exit codes and failures -----------------------------------------------------

TEST_F(ShmrunTest, ExitCodeOfAFailingRankIsPropagated) {
  Result r = run({"-n", "4", "/bin/sh", "-c", "if [ $SHMCOLL_RANK = 2 ]; then exit 3; fi; exec sleep 30"});
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(shmrun: rank 2 \(pid \d+\) exited with code 3; ending the job)")))
      << r.err;
  EXPECT_LT(r.seconds, 5);
}

TEST_F(ShmrunTest, KilledRankEndsTheOthersWithinASecond) {
  Proc* p = start({"-n", "4", kCtl, "ready", dir_, "60"});
  std::vector<pid_t> ranks = waitReady(4);
  auto t0 = Clock::now();
  kill(ranks[2], SIGKILL);
  Result r = p->wait(30);
  double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(r.exitCode, 137);
  EXPECT_NE(r.err.find("shmrun: rank 2 (pid " + std::to_string(ranks[2]) + ") killed by signal 9 (Killed); ending the job"),
            std::string::npos)
      << r.err;
  EXPECT_LT(took, 1.5);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(alive(ranks[i])) << "rank " << i;
}

TEST_F(ShmrunTest, RankIgnoringSigtermIsKilled) {
  // Rank 1 fails; rank 0 ignores SIGTERM and must get SIGKILL after the grace period.
  Result r = run({"-n", "2", "/bin/sh", "-c",
                  "trap '' TERM; if [ $SHMCOLL_RANK = 1 ]; then sleep 0.3; exit 9; fi; while :; do sleep 0.1; done"});
  EXPECT_EQ(r.exitCode, 9);
  EXPECT_LT(r.seconds, 3);
}

TEST_F(ShmrunTest, ExitZeroAfterInitWithoutFinalizeIsAnError) {
  Result r = run({"-n", "3", kCtl, "init-only"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.err.find("exited with code 0 after MPI_Init without calling MPI_Finalize"), std::string::npos) << r.err;
  Result ok = run({"-n", "3", kCtl, "finalize"});
  EXPECT_EQ(ok.exitCode, 0) << ok.err;
  EXPECT_TRUE(ok.err.empty()) << ok.err;
}

TEST_F(ShmrunTest, AbortWordGivesTheAbortCode) {
  Result r = run({"-n", "4", kCtl, "abort", "2", "42"});
  EXPECT_EQ(r.exitCode, 42);
  EXPECT_NE(r.err.find("shmrun: rank 2 called MPI_Abort with error code 42"), std::string::npos) << r.err;
  Result zero = run({"-n", "2", kCtl, "abort", "1", "0"});
  EXPECT_EQ(zero.exitCode, 1);  // an abort never looks like success
  EXPECT_NE(zero.err.find("rank 1 called MPI_Abort with error code 0"), std::string::npos) << zero.err;
  Result big = run({"-n", "2", kCtl, "abort", "0", "256"});
  EXPECT_EQ(big.exitCode, 1);
}

TEST_F(ShmrunTest, TimeoutEndsTheJob) {
  Result r = run({"-n", "3", "--timeout", "1", "/bin/sleep", "30"});
  EXPECT_EQ(r.exitCode, 124);
  EXPECT_NE(r.err.find("shmrun: timeout: the job ran for more than 1 s (--timeout); ending it"), std::string::npos)
      << r.err;
  EXPECT_GT(r.seconds, 0.9);
  EXPECT_LT(r.seconds, 3);
  // Ranks that ignore SIGTERM are killed all the same.
  Result stubborn = run({"-n", "2", "--timeout", "0.5", "/bin/sh", "-c", "trap '' TERM; while :; do sleep 0.1; done"});
  EXPECT_EQ(stubborn.exitCode, 124);
  EXPECT_LT(stubborn.seconds, 2.5);
  Result fast = run({"-n", "2", "--timeout", "30", "/bin/true"});
  EXPECT_EQ(fast.exitCode, 0);
}

// ---- signals to shmrun -----------------------------------------------------------

class Forwarded : public ShmrunTest, public ::testing::WithParamInterface<int> {};

TEST_P(Forwarded, SignalReachesEveryRankAndShmrunExits128PlusIt) {
  const int sig = GetParam();
  const std::string name = sig == SIGINT ? "INT" : sig == SIGTERM ? "TERM" : "HUP";
  // Each rank reports the signal it got, then exits 0.
  Proc* p = start({"-n", "3", "/bin/sh", "-c",
                   "trap 'echo rank $SHMCOLL_RANK got " + name + "; exit 0' " + name +
                       "; echo $$ > " + dir_ + "/ready.$SHMCOLL_RANK; while :; do sleep 0.05; done"});
  waitReady(3);
  kill(p->pid(), sig);
  Result r = p->wait(30);
  EXPECT_EQ(r.exitCode, 128 + sig) << r.err;
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(r.out.find("rank " + std::to_string(i) + " got " + name), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("received signal " + std::to_string(sig)), std::string::npos) << r.err;
}

INSTANTIATE_TEST_SUITE_P(Signals, Forwarded, ::testing::Values(SIGINT, SIGTERM, SIGHUP));

TEST_F(ShmrunTest, RanksDieWithAKilledShmrunAndNothingIsLeft) {
  Proc* p = start({"-n", "3", kCtl, "ready", dir_, "60"});
  std::vector<pid_t> ranks = waitReady(3);
  kill(p->pid(), SIGKILL);
  Result r = p->wait(10);
  EXPECT_EQ(r.termSig, SIGKILL);
  auto until = Clock::now() + std::chrono::seconds(2);
  for (pid_t rk : ranks)
    while (alive(rk) && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (pid_t rk : ranks) EXPECT_FALSE(alive(rk)) << rk;
}

// ---- environment, output, binding ------------------------------------------------

TEST_F(ShmrunTest, DashXPassesVariables) {
  Result r = run({"-n", "2", "-x", "FOO=bar baz", "-x", "INHERITED", "-x", "OVERRIDDEN=new", "/bin/sh", "-c",
                  "echo \"$FOO|$INHERITED|$OVERRIDDEN\""},
                 {"INHERITED=from-launcher", "OVERRIDDEN=old"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "bar baz|from-launcher|new\nbar baz|from-launcher|new\n");
  Result unset = run({"-n", "1", "-x", "SHMRUN_TEST_UNSET_VAR", "/bin/true"});
  EXPECT_EQ(unset.exitCode, 0);
  EXPECT_NE(unset.err.find("-x SHMRUN_TEST_UNSET_VAR: SHMRUN_TEST_UNSET_VAR is not set"), std::string::npos);
}

TEST_F(ShmrunTest, StaleJobVariablesAreReplaced) {
  Result r = run({"-n", "2", "/bin/sh", "-c", "echo $SHMCOLL_RANK/$SHMCOLL_SIZE"}, {"SHMCOLL_RANK=7", "SHMCOLL_SIZE=9"});
  EXPECT_EQ(r.exitCode, 0);
  std::vector<std::string> l = lines(r.out);
  std::sort(l.begin(), l.end());
  EXPECT_EQ(l, (std::vector<std::string>{"0/2", "1/2"}));
}

TEST_F(ShmrunTest, TagOutputPrefixesEveryLine) {
  Result r = run({"-n", "3", "--tag-output", "/bin/sh", "-c",
                  "echo out$SHMCOLL_RANK; echo err$SHMCOLL_RANK >&2; printf 'no newline'"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> out = lines(r.out), err = lines(r.err);
  std::sort(out.begin(), out.end());
  std::sort(err.begin(), err.end());
  EXPECT_EQ(out, (std::vector<std::string>{"[1,0]<stdout>: no newline", "[1,0]<stdout>: out0",
                                           "[1,1]<stdout>: no newline", "[1,1]<stdout>: out1",
                                           "[1,2]<stdout>: no newline", "[1,2]<stdout>: out2"}));
  EXPECT_EQ(err, (std::vector<std::string>{"[1,0]<stderr>: err0", "[1,1]<stderr>: err1", "[1,2]<stderr>: err2"}));
}

TEST_F(ShmrunTest, TaggedLinesNeverInterleave) {
  // 8 ranks write 2000 lines of 300 bytes each in pieces, all at once.
  Result r = run({"-n", "8", "--tag-output", kCtl, "spam", "2000", "300"}, {}, "", 120);
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::vector<std::string> l = lines(r.out);
  ASSERT_EQ(l.size(), 8u * 2000);
  std::vector<int> perRank(8, 0);
  for (const std::string& s : l) {
    int rank = -1;
    ASSERT_EQ(sscanf(s.c_str(), "[1,%d]<stdout>: ", &rank), 1) << s.substr(0, 80);
    ASSERT_TRUE(rank >= 0 && rank < 8);
    const std::string prefix = "[1," + std::to_string(rank) + "]<stdout>: ";
    ASSERT_EQ(s, prefix + std::string(300, static_cast<char>('a' + rank))) << s.substr(0, 80);
    ++perRank[rank];
  }
  for (int n : perRank) EXPECT_EQ(n, 2000);
}

TEST_F(ShmrunTest, BindToCoreBindsEachRankToItsCore) {
  shmcoll::topo::Topology t;
  ASSERT_EQ(t.loadSystem(), 0);
  const unsigned ncores = t.ncores();
  const int n = static_cast<int>(ncores) + 1;  // one more than cores: wraps around
  Result r = run({"-n", std::to_string(n), "--bind-to", "core", kCtl, "check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  int matched = 0;
  for (const std::string& l : lines(r.out)) {
    int rank, cpu, numa;
    char allowed[256];
    ASSERT_EQ(sscanf(l.c_str(), "rank %d ok cpu %d numa %d allowed %255s", &rank, &cpu, &numa, allowed), 4) << l;
    const auto& core = t.info().cores[rank % ncores];
    EXPECT_EQ(std::string(allowed), shmcoll::topo::cpuListString(core.pus)) << l;
    EXPECT_EQ(cpu, static_cast<int>(core.pus.front())) << l;
    EXPECT_EQ(numa, core.numaNode) << l;
    ++matched;
  }
  EXPECT_EQ(matched, n);
}

TEST_F(ShmrunTest, DefaultBindingIsCoreUpToTheCoreCountThenNone) {
  shmcoll::topo::Topology t;
  ASSERT_EQ(t.loadSystem(), 0);
  const unsigned ncores = t.ncores();
  std::string all;
  for (const auto& c : t.info().cores) all += (all.empty() ? "" : ",") + shmcoll::topo::cpuListString(c.pus);
  Result r = run({"-n", std::to_string(ncores), kCtl, "check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  for (const std::string& l : lines(r.out)) EXPECT_EQ(l.find(" cpu -1 "), std::string::npos) << "bound: " << l;
  Result over = run({"-n", std::to_string(ncores + 1), kCtl, "check"});
  ASSERT_EQ(over.exitCode, 0) << over.err;
  for (const std::string& l : lines(over.out)) EXPECT_NE(l.find(" cpu -1 "), std::string::npos) << "unbound: " << l;
  Result none = run({"-n", "2", "--bind-to", "none", "/bin/grep", "Cpus_allowed_list", "/proc/self/status"});
  std::ifstream self("/proc/self/status");
  std::string line, mine;
  while (std::getline(self, line))
    if (line.rfind("Cpus_allowed_list", 0) == 0) mine = line;
  EXPECT_EQ(none.out, mine + "\n" + mine + "\n");
}

TEST_F(ShmrunTest, BindToNumaBindsToTheWholeNode) {
  shmcoll::topo::Topology t;
  ASSERT_EQ(t.loadSystem(), 0);
  Result r = run({"-n", "2", "--bind-to", "numa", kCtl, "check"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  auto plan = shmcoll::topo::planBinding(t.info(), 2, shmcoll::topo::BindPolicy::kNuma);
  for (const std::string& l : lines(r.out)) {
    int rank;
    char allowed[256];
    ASSERT_EQ(sscanf(l.c_str(), "rank %d ok cpu %*d numa %*d allowed %255s", &rank, allowed), 2) << l;
    EXPECT_EQ(std::string(allowed), shmcoll::topo::cpuListString(plan[rank].cpuset));
  }
}

// ---- memory ---------------------------------------------------------------------

TEST_F(ShmrunTest, SmallDevShmFallsBackToMemfdOnce) {
  Result r = run({"-n", "8", kCtl, "check"}, {"SHMCOLL_SHM_LIMIT=64k"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(lines(r.out).size(), 8u);
  EXPECT_EQ(count(r.err, "memfd"), 1) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(^shmrun: /dev/shm has 64\.0 KiB free but the segment needs [0-9.]+ MiB; using anonymous shared memory \(memfd\) instead\n$)")))
      << r.err;
}

TEST_F(ShmrunTest, ALowOpenFileLimitIsWordedForWhatNeedsIt) {
  // (dash's ulimit -n sets the hard limit too, so that shmrun cannot raise the soft one)
  auto under = [](int limit, std::vector<std::string> args) {
    std::vector<std::string> argv{"/bin/sh", "-c", "ulimit -n " + std::to_string(limit) + " && exec \"$@\"", "sh",
                                  kShmrun};
    argv.insert(argv.end(), args.begin(), args.end());
    Proc p(argv);
    return p.wait(60);
  };
  Result r = under(32, {"-n", "2", kCtl, "check"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(lines(r.out).size(), 2u) << r.out;
  Result tagged = under(32, {"-n", "20", "--tag-output", "true"});
  EXPECT_EQ(tagged.exitCode, 1);
  EXPECT_NE(tagged.err.find("shmrun: --tag-output with 20 ranks needs 56 open files but the limit is 32 (ulimit -n)"),
            std::string::npos)
      << tagged.err;
  Result tiny = under(8, {"-n", "2", "true"});
  EXPECT_EQ(tiny.exitCode, 1);
  EXPECT_NE(tiny.err.find("shmrun: shmrun needs 16 open files but the limit is 8 (ulimit -n)"), std::string::npos)
      << tiny.err;
  EXPECT_EQ(tiny.err.find("--tag-output"), std::string::npos) << tiny.err;
}

TEST_F(ShmrunTest, RealOneMegabyteDevShmFallsBackToMemfd) {
  if (geteuid() != 0 || access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "needs root and unshare";
  Proc p({"/usr/bin/unshare", "-m", "/bin/sh", "-c",
          "mount --make-rprivate / && mount -t tmpfs -o size=1m tmpfs /dev/shm || exit 77; exec \"$@\"", "sh",
          kShmrun, "-n", "64", kCtl, "check"});
  Result r = p.wait(60);
  if (r.exitCode == 77) GTEST_SKIP() << "cannot mount a private tmpfs: " << r.err;
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(lines(r.out).size(), 64u);
  EXPECT_EQ(count(r.err, "\n"), 1) << r.err;
  EXPECT_NE(r.err.find("shmrun: /dev/shm has 1.0 MiB free but the segment needs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("using anonymous shared memory (memfd) instead"), std::string::npos) << r.err;
}

TEST_F(ShmrunTest, ForcedMemfdBackendIsQuiet) {
  Result r = run({"-n", "4", kCtl, "check"}, {"SHMCOLL_SHM_BACKEND=memfd"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(ShmrunTest, NoMemoryAtAllIsRefused) {
  // 64 ranks with two 1 GiB slots each: more than this machine has.
  Result r = run({"-n", "64", kCtl, "check"}, {"SHMCOLL_SLOT_BYTES=1g"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(shmrun: cannot start 64 ranks: the shared segment needs 128\.[0-9] GiB but only [0-9.]+ [KMGT]iB of memory is available)")))
      << r.err;
  EXPECT_NE(r.err.find("SHMCOLL_SLOT_BYTES"), std::string::npos);
  // The same through the test hook, with both backends too small.
  Result hook = run({"-n", "8", kCtl, "check"}, {"SHMCOLL_SHM_LIMIT=4k", "SHMCOLL_MEM_LIMIT=4k"});
  EXPECT_EQ(hook.exitCode, 1);
  EXPECT_NE(hook.err.find("of memory is available (4.0 KiB free in /dev/shm)"), std::string::npos) << hook.err;
}

TEST_F(ShmrunTest, TheRefusalNamesWhatToChange) {
  struct Case {
    std::string hugepages, hint;
  };
  for (const Case& c : std::vector<Case>{
           // the MPI_Alloc_mem heap makes the segment too large: that is what to shrink, not the slots
           {"off", "; use fewer ranks or a smaller SHMCOLL_ALLOC_MEM (1.0 TiB per rank now)\n"},
           // reserved huge pages required: the huge pages are what is missing
           {"hugetlb", "; reserve more huge pages (vm.nr_hugepages) or set SHMCOLL_HUGEPAGES=auto\n"},
       }) {
    Result r = run({"-n", "2", "true"}, {"SHMCOLL_ALLOC_MEM=1t", "SHMCOLL_HUGEPAGES=" + c.hugepages});
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_NE(r.err.find(c.hint), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("SHMCOLL_SLOT_BYTES"), std::string::npos) << r.err;
  }
  // An address-space limit below the segment: the limit is named, not the free memory.
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer cannot start under ulimit -v (its shadow memory)";
#endif
  Proc p({"/bin/sh", "-c", "ulimit -v 400000 && exec \"$@\"", "sh", kShmrun, "-n", "2", "true"},
         {"SHMCOLL_ALLOC_MEM=1g", "SHMCOLL_HUGEPAGES=off"});
  Result as = p.wait(60);
  EXPECT_EQ(as.exitCode, 1);
  EXPECT_NE(as.err.find("the shared segment needs 2.0 GiB of address space but the limit is 390.6 MiB (ulimit -v); "
                        "raise the limit (ulimit -v) or use fewer ranks\n"),
            std::string::npos)
      << as.err;
}

TEST_F(ShmrunTest, ADecisionTableThatIsNoTableIsSetAsideAtOnce) {
  const std::string fifo = dir_ + "/table.fifo", big = dir_ + "/table.big";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  {
    std::ofstream f(big);
    f << "# " << std::string(2 << 20, 'x') << "\n";
  }
  struct Case {
    std::string path, why;
  };
  for (const Case& c : std::vector<Case>{{"/dev/zero", "not a regular file"},
                                         {fifo, "not a regular file"},
                                         {big, "larger than 1 MiB: not a decision table"},
                                         {dir_ + "/none", "cannot read the decision table (No such file"}}) {
    Result r = run({"-n", "2", "true"}, {"SHMCOLL_TUNING=" + c.path}, "", 20);
    EXPECT_EQ(r.exitCode, 0) << c.path << ": " << r.err;
    EXPECT_NE(r.err.find("SHMCOLL_TUNING=" + c.path + ": " + c.why), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("; using the defaults"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 10) << c.path;
  }
}

TEST_F(ShmrunTest, BadSlotSizeIsAUsageError) {
  Result r = run({"-n", "2", "/bin/true"}, {"SHMCOLL_SLOT_BYTES=8g"});
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("shmrun: SHMCOLL_SLOT_BYTES='8g' is out of range; allowed 64 to 1g"), std::string::npos) << r.err;
}

// ---- real MPI ranks -------------------------------------------------------------

TEST_F(ShmrunTest, MpiRanksRunToCompletion) {
  Result r = run({"-n", "4", kMpi, "ok"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(lines(r.out).size(), 4u) << r.out;
}

TEST_F(ShmrunTest, MpiRankKilledInBarrier) {
  Result r = run({"-n", "4", kMpi, "kill", "1"}, {}, "", 30);
  EXPECT_EQ(r.exitCode, 137) << r.err;
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(shmrun: rank 1 \(pid \d+\) killed by signal 9 \(Killed\); ending the job)")))
      << r.err;
  EXPECT_LT(r.seconds, 5);
}

TEST_F(ShmrunTest, MpiAbort) {
  Result r = run({"-n", "4", kMpi, "abort", "3", "17"}, {}, "", 30);
  EXPECT_EQ(r.exitCode, 17) << r.err;
  EXPECT_NE(r.err.find("shmrun: rank 3 called MPI_Abort with error code 17"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5);
}

TEST_F(ShmrunTest, MpiErrorsAreFatalIsNotReportedAsMpiAbort) {
  Result r = run({"-n", "3", kMpi, "fatal", "1"}, {}, "", 30);
  EXPECT_EQ(r.exitCode, 6) << r.err;  // MPI_ERR_RANK
  EXPECT_NE(r.err.find("shmrun: rank 1 ended the job: an MPI error (class 6) on a communicator whose handler is "
                       "MPI_ERRORS_ARE_FATAL\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("shmcoll: rank 1: MPI_Send: "), std::string::npos) << r.err;  // the error itself, first
  EXPECT_EQ(r.err.find("MPI_Abort"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("returned"), std::string::npos) << r.err;
  EXPECT_LT(r.seconds, 5);
}

TEST_F(ShmrunTest, AnErrorBeforeMpiInitNamesTheRankShmrunGave) {
  Result r = run({"-n", "2", kMpi, "preinit"}, {}, "", 30);
  EXPECT_NE(r.exitCode, 0);
  EXPECT_TRUE(std::regex_search(r.err, std::regex(R"(shmcoll: rank [01] \(before MPI_Init\): MPI_Send: called outside)")))
      << r.err;
  for (const char* who : {"rank 0 (before MPI_Init): MPI_Send", "rank 1 (before MPI_Init): MPI_Send"})
    EXPECT_LE(count(r.err, who), 1) << r.err;  // each rank under its own number
}

TEST_F(ShmrunTest, WhatACrashedRankStartedEndsWithTheJob) {
  Result r = run({"-n", "3", kMpi, "orphan", "1", dir_}, {}, "", 30);
  EXPECT_EQ(r.exitCode, 128 + SIGKILL) << r.err;
  std::ifstream f(dir_ + "/child");
  pid_t child = 0;
  ASSERT_TRUE(f >> child) << "the rank did not start its child";
  // (it ignores SIGTERM: the SIGKILL after the grace period ends it)
  for (int i = 0; i < 200 && alive(child); ++i) usleep(10000);
  EXPECT_FALSE(alive(child)) << "pid " << child << " outlived the job";
  if (alive(child)) kill(child, SIGKILL);
  EXPECT_LT(r.seconds, 5);
}

TEST_F(ShmrunTest, MpiExitWithoutFinalize) {
  Result r = run({"-n", "4", kMpi, "nofinalize", "2"}, {}, "", 30);
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_TRUE(std::regex_search(
      r.err, std::regex(R"(shmrun: rank 2 \(pid \d+\) exited with code 0 after MPI_Init without calling MPI_Finalize)")))
      << r.err;
  EXPECT_LT(r.seconds, 5);
}

}  // namespace
