// Running a command for the launcher tests: this process's environment less
// every SHMCOLL_* variable, plus the test's own; both outputs captured; at
// most 60 s.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

namespace shmcoll::testing {

struct Result {
  int exitCode = -1;  // -1: killed or timed out
  std::string out, err;
};

// Runs argv with this process's environment less every SHMCOLL_* variable,
// plus `env`; captures both outputs (at most 60 s).
inline Result run(const std::vector<std::string>& argv, const std::vector<std::string>& env = {}) {
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e)
    if (strncmp(*e, "SHMCOLL_", 8) != 0) envs.push_back(*e);
  envs.insert(envs.end(), env.begin(), env.end());
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) abort();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    std::vector<char*> args, envp;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    for (const std::string& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
    args.push_back(nullptr);
    envp.push_back(nullptr);
    execve(args[0], args.data(), envp.data());
    _exit(126);
  }
  close(out[1]);
  close(err[1]);
  Result r;
  pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((p[0].fd >= 0 || p[1].fd >= 0) && std::chrono::steady_clock::now() < deadline) {
    if (poll(p, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !p[i].revents) continue;
      char buf[4096];
      const ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i ? r.err : r.out).append(buf, static_cast<size_t>(n));
      } else {
        close(p[i].fd);
        p[i].fd = -1;
      }
    }
  }
  for (pollfd& f : p)
    if (f.fd >= 0) close(f.fd);
  if (std::chrono::steady_clock::now() >= deadline) kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exitCode = WEXITSTATUS(status);
  return r;
}

}  // namespace shmcoll::testing
