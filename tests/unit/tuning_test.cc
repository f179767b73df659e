// The decision table: parsing (every malformed line rejected with its line
// number and reason, nothing else lost), look-up (operation over `*`, the
// rule with the largest rank count not above the team's), and the
// precedence environment variable > table > built-in default
// (settings::tuned), including a whole process loading a table named by
// SHMCOLL_TUNING.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "common/settings.h"
#include "common/tuning.h"

namespace shmcoll::tuning {
namespace {

uint64_t get(const Table& t, const char* key, const char* op, uint32_t ranks, uint64_t none = 12345) {
  uint64_t v = none;
  return t.lookup(key, op, ranks, &v) ? v : none;
}

TEST(Tuning, ParsesRulesAndLooksUpByOpAndRanks) {
  Table t;
  std::string errors;
  const int n = t.parse(
      "# a comment\n"
      "\n"
      "cma_min   *          2   16k   # trailing comment\n"
      "cma_min   *          8   64k\n"
      "cma_min   alltoall   4   off\n"
      "cma_min   alltoall   16  1m\n"
      "inline_max allgather 1   200\n"
      "wait_spins *         3   50\n"
      "cma_solo_min alltoallv 3 512k\n"
      "cma_solo_max alltoallv 3 4m\n",
      &errors);
  EXPECT_EQ(n, 8);
  EXPECT_EQ(errors, "");
  EXPECT_EQ(t.size(), 8u);
  EXPECT_EQ(get(t, "cma_solo_min", "alltoallv", 8), 512u << 10);
  EXPECT_EQ(get(t, "cma_solo_max", "alltoallv", 8), 4u << 20);
  EXPECT_EQ(get(t, "cma_solo_max", "alltoallw", 8), 12345u);
  // `*` rules by rank count.
  EXPECT_EQ(get(t, "cma_min", "allgather", 1), 12345u);  // no rule for 1 rank
  EXPECT_EQ(get(t, "cma_min", "allgather", 2), 16384u);
  EXPECT_EQ(get(t, "cma_min", "allgather", 7), 16384u);
  EXPECT_EQ(get(t, "cma_min", "allgather", 8), 65536u);
  EXPECT_EQ(get(t, "cma_min", "allgather", 1000), 65536u);
  // An operation's own rules win over `*` once one applies.
  EXPECT_EQ(get(t, "cma_min", "alltoall", 2), 16384u);  // its own start at 4
  EXPECT_EQ(get(t, "cma_min", "alltoall", 4), UINT64_MAX);
  EXPECT_EQ(get(t, "cma_min", "alltoall", 15), UINT64_MAX);
  EXPECT_EQ(get(t, "cma_min", "alltoall", 16), 1u << 20);
  EXPECT_EQ(get(t, "inline_max", "allgather", 5), 200u);
  EXPECT_EQ(get(t, "inline_max", "alltoall", 5), 12345u);
  // Job-wide keys are looked up with no operation.
  EXPECT_EQ(get(t, "wait_spins", nullptr, 2), 12345u);
  EXPECT_EQ(get(t, "wait_spins", nullptr, 3), 50u);
  EXPECT_EQ(get(t, "wait_yields", nullptr, 3), 12345u);
}

TEST(Tuning, LaterRuleForTheSameKeyOpAndRanksWins) {
  Table t;
  EXPECT_EQ(t.parse("cma_min * 2 16k\ncma_min * 2 32k\n", nullptr), 2);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(get(t, "cma_min", "alltoall", 2), 32768u);
}

TEST(Tuning, RejectsMalformedLinesWithReasons) {
  Table t;
  std::string errors;
  const int n = t.parse(
      "cma_min * 2\n"                 // 1: too few words
      "cma_min * 2 16k extra\n"       // 2: too many
      "bogus_key * 2 16k\n"           // 3: unknown key
      "wait_spins alltoall 2 5\n"     // 4: job-wide key with an op
      "cma_min alltoallx 2 16k\n"     // 5: unknown op
      "cma_min * -1 16k\n"            // 6: negative ranks
      "cma_min * 2x 16k\n"            // 7: not a number
      "cma_min * 99999999999 16k\n"   // 8: beyond 32 bits
      "cma_min * 2 16q\n"             // 9: bad suffix
      "cma_min * 2 -5\n"              // 10: negative value
      "cma_min * 2 99999999999999999999\n"  // 11: beyond 64 bits
      "cma_min * 2 17179869184g\n"          // 12: wraps when scaled
      "cma_min allgatherv 2 4k\n"     // 13: fine
      "cma_min * 2 64kb\n"            // 14: b is bits
      "slot_bytes * 2 8g\n"           // 15: outside the setting's range
      "slot_bytes * 2 off\n",         // 16: so is off, the largest value
      &errors);
  EXPECT_EQ(n, 1);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(get(t, "cma_min", "allgatherv", 2), 4096u);
  const char* expect[] = {"line 1: expected <key> <op> <ranks> <value>",
                          "line 2: unexpected 'extra' after the value",
                          "line 3: unknown key 'bogus_key'",
                          "line 4: 'wait_spins' applies to the whole job: its op must be '*'",
                          "line 5: unknown operation 'alltoallx'",
                          "line 6: ranks '-1' is not a rank count",
                          "line 7: ranks '2x' is not a rank count",
                          "line 8: ranks '99999999999' is not a rank count",
                          "line 9: value '16q' is not a size",
                          "line 10: value '-5' is not a size",
                          "line 11: value '99999999999999999999' is not a size",
                          "line 12: value '17179869184g' is not a size",
                          "line 14: value '64kb' is not a size",
                          "line 15: value '8g' is outside slot_bytes's range, 64 to 1g",
                          "line 16: value 'off' is outside slot_bytes's range, 64 to 1g"};
  for (const char* e : expect) EXPECT_NE(errors.find(e), std::string::npos) << e << "\n" << errors;
  EXPECT_EQ(errors.find("line 13"), std::string::npos);
}

// The value syntax is the variables' (settings_table.h): suffixes in either
// case, KiB and kB spellings, t, and counts for the job-wide keys.
TEST(Tuning, ValuesTakeTheSettingsSyntax) {
  Table t;
  std::string errors;
  EXPECT_EQ(t.parse("cma_min * 2 64KiB\ncma_min * 3 64kB\ncma_min * 4 1T\nslot_bytes * 2 1g\n"
                    "wait_spins * 2 20k\nstream_spin_ns * 2 OFF\n",
                    &errors),
            6)
      << errors;
  EXPECT_EQ(get(t, "cma_min", "alltoall", 2), 64u << 10);
  EXPECT_EQ(get(t, "cma_min", "alltoall", 3), 64u << 10);
  EXPECT_EQ(get(t, "cma_min", "alltoall", 4), 1ull << 40);
  EXPECT_EQ(get(t, "slot_bytes", nullptr, 2), 1u << 30);
  EXPECT_EQ(get(t, "wait_spins", nullptr, 2), 20480u);
  EXPECT_EQ(get(t, "stream_spin_ns", nullptr, 2), UINT64_MAX);
}

// settings::tuned() in a fresh process (the table is loaded once per process), with
// the environment given; writes the looked-up values to a pipe.
std::string inChild(const std::string& file, const char* envVar, const char* envValue) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    if (file.empty())
      unsetenv("SHMCOLL_TUNING");
    else
      setenv("SHMCOLL_TUNING", file.c_str(), 1);
    if (envVar) setenv(envVar, envValue, 1);
    else unsetenv("SHMCOLL_CMA_MIN");
    using settings::Id;
    const std::string out = std::to_string(settings::tuned(Id::kCmaMin, "alltoall", 4)) + " " +
                            std::to_string(settings::tuned(Id::kCmaMin, "alltoall", 1)) + " " +
                            std::to_string(table().size()) + " " + tablePath() + " " +
                            std::to_string(settings::validate(settings::kLibrary, true).size());
    if (write(fds[1], out.data(), out.size()) != static_cast<ssize_t>(out.size())) _exit(2);
    _exit(0);
  }
  close(fds[1]);
  std::string got;
  char buf[256];
  for (ssize_t k; (k = read(fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(k));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  return got;
}

TEST(Tuning, EnvironmentOverTableOverDefault) {
  char path[] = "/tmp/shmcoll-tuning-test-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "cma_min alltoall 2 48k\nnot a rule\n";
  const std::string p = path;
  // The last number: how many settings validate() finds bad.
  EXPECT_EQ(inChild(p, nullptr, nullptr), "49152 16384 1 " + p + " 0");        // table, then default below 2 ranks
  EXPECT_EQ(inChild(p, "SHMCOLL_CMA_MIN", "8k"), "8192 8192 1 " + p + " 0");   // the variable wins
  EXPECT_EQ(inChild(p, "SHMCOLL_CMA_MIN", "off"), "18446744073709551615 18446744073709551615 1 " + p + " 0");
  EXPECT_EQ(inChild(p, "SHMCOLL_CMA_MIN", ""), "49152 16384 1 " + p + " 0");   // empty is unset
  // An invalid variable reads as unset, and validate() (MPI_Init, shmrun) reports it.
  EXPECT_EQ(inChild(p, "SHMCOLL_CMA_MIN", "junk"), "49152 16384 1 " + p + " 1");
  EXPECT_EQ(inChild("none", nullptr, nullptr), "16384 16384 0  0");             // no table
  unlink(path);
  EXPECT_EQ(inChild(p, nullptr, nullptr), "16384 16384 0  0");                  // unreadable: defaults
}

}  // namespace
}  // namespace shmcoll::tuning
