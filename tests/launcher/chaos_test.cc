// The chaos test: a job of 2 to 6 ranks runs a random sequence of collectives
// (tests/mpi/chaos.c), and one random rank is killed with SIGKILL at a random
// moment.  Every time, shmrun must end the job promptly with the killed
// rank's status (137), no rank may survive it, and nothing named after that
// shmrun may be left in /dev/shm.  SHMCOLL_CHAOS_ITERS sets how many jobs
// (default 1000, the count: about a minute on 2 cores; 100 in a
// sanitizer build; the seed of job i is i, so a failure names its case).
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

bool alive(pid_t p) { return kill(p, 0) == 0; }

// Starts `shmrun -n n chaos dir seed` in its own process group, stdout to
// /dev/null, stderr to dir/stderr.
pid_t startJob(int n, const std::string& dir, int seed) {
  const std::string errPath = dir + "/stderr";
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int null = open("/dev/null", O_WRONLY);
    const int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(null, 1);
    dup2(err, 2);
    const std::string np = std::to_string(n), s = std::to_string(seed);
    const std::string prog = std::string(MPI_TEST_DIR) + "/chaos";
    execl(SHMRUN_PATH, SHMRUN_PATH, "-n", np.c_str(), prog.c_str(), dir.c_str(), s.c_str(), nullptr);
    _exit(126);
  }
  return pid;
}

// The ranks' pids once every rank has passed MPI_Init (empty after 30 s).
std::vector<pid_t> waitReady(const std::string& dir, int n) {
  std::vector<pid_t> pids(n, -1);
  const auto t0 = Clock::now();
  for (int r = 0; r < n; ++r)
    while (since(t0) < 30) {
      std::ifstream f(dir + "/ready." + std::to_string(r));
      if (f >> pids[r]) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  if (std::count(pids.begin(), pids.end(), -1)) pids.clear();
  return pids;
}

bool leftInDevShm(pid_t shmrun) {
  bool left = false;
  if (DIR* d = opendir("/dev/shm")) {
    const std::string prefix = "shmcoll-" + std::to_string(shmrun) + "-";
    while (dirent* e = readdir(d)) left |= std::string(e->d_name).rfind(prefix, 0) == 0;
    closedir(d);
  }
  return left;
}

TEST(Chaos, AKilledRankEndsTheJobPromptlyAndLeavesNothing) {
  const char* env = getenv("SHMCOLL_CHAOS_ITERS");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const int iters = env ? atoi(env) : 100;  // (instrumented jobs start several times slower)
#else
  const int iters = env ? atoi(env) : 1000;
#endif
  double slowest = 0;
  for (int i = 0; i < iters; ++i) {
    std::mt19937 rng(static_cast<uint32_t>(i));
    const int n = 2 + static_cast<int>(rng() % 5);
    const int victim = static_cast<int>(rng() % static_cast<uint32_t>(n));
    const int delayUs = static_cast<int>(rng() % 50000);
    char tmpl[] = "/tmp/shmcoll-chaos-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    const pid_t job = startJob(n, dir, i);
    const std::vector<pid_t> ranks = waitReady(dir, n);
    if (ranks.empty()) {
      kill(-job, SIGKILL);
      waitpid(job, nullptr, 0);
      FAIL() << "job " << i << ": the ranks never became ready";
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delayUs));
    const auto t0 = Clock::now();
    kill(ranks[victim], SIGKILL);
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(job, &status, WNOHANG)) == 0 && since(t0) < 30)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const double took = since(t0);
    if (done != job) {
      kill(-job, SIGKILL);
      waitpid(job, &status, 0);
    }
    slowest = std::max(slowest, took);
    const std::string what = "job " + std::to_string(i) + " (" + std::to_string(n) + " ranks, rank " +
                             std::to_string(victim) + " killed after " + std::to_string(delayUs) + " us)";
    ASSERT_EQ(done, job) << what << ": shmrun still runs 30 s after the kill";
    std::ifstream errFile(dir + "/stderr");
    const std::string err((std::istreambuf_iterator<char>(errFile)), std::istreambuf_iterator<char>());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 137) << what << ": status " << status << "; shmrun said:\n"
                                                                 << err;
    // A generous bound for a shared, oversubscribed machine (the issue asks
    // for one second; the figure is reported below).
    EXPECT_LT(took, 3.0) << what;
    // (a rank shmrun has reaped is gone; one it signalled just before it
    // exited may be a zombie for a moment, until init reaps it)
    const auto reaped = Clock::now();
    for (int r = 0; r < n; ++r) {
      while (alive(ranks[r]) && since(reaped) < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_FALSE(alive(ranks[r])) << what << ": rank " << r << " survived";
    }
    EXPECT_FALSE(leftInDevShm(job)) << what << ": its segment is still in /dev/shm";
    std::system(("rm -rf " + dir).c_str());
    if (HasFailure()) break;
  }
  std::printf("chaos: %d jobs, the slowest ended %.3f s after its rank was killed\n", iters, slowest);
}

}  // namespace
