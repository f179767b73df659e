// Settings checked where a job starts: shmrun refuses a malformed or
// out-of-range value (its own or the library's, -x included) with exit status
// 2 and a message naming the variable, before any rank starts; a program run
// without shmrun (a singleton) fails MPI_Init with the message instead of
// going on with a default.  Also the help that shmrun generates from the
// table.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "process.h"

namespace {

const std::string kShmrun = SHMRUN_PATH;
const std::string kMpi = std::string(MPI_TEST_DIR) + "/launch_mpi";

using shmcoll::testing::Result;
using shmcoll::testing::run;

Result shmrun(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
  args.insert(args.begin(), kShmrun);
  return run(args, env);
}

// shmrun refuses `env` with exit status 2 and `message`, and the program never ran.
void expectRefused(const std::vector<std::string>& env, const std::string& message,
                   const std::vector<std::string>& extraArgs = {}) {
  std::vector<std::string> args = extraArgs;
  for (const char* a : {"-n", "2", "/bin/echo", "ran"}) args.push_back(a);
  const Result r = shmrun(args, env);
  EXPECT_EQ(r.exitCode, 2) << r.err;
  EXPECT_NE(r.err.find("shmrun: " + message + "\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

const std::string kSizeSyntax = "is not a byte size (digits with an optional k, m, g or t suffix, e.g. 64k)";
// (a setting with a decision-table key also takes off)
const std::string kTunedSizeSyntax =
    "is not a byte size (digits with an optional k, m, g or t suffix, e.g. 64k, or off)";

TEST(ShmrunSettings, MalformedSlotBytesAreRefused) {
  for (const char* v : {"abc", "-1", "1e6", "0x10000", "64kb", "64k junk", " 64k"})
    expectRefused({std::string("SHMCOLL_SLOT_BYTES=") + v},
                  std::string("SHMCOLL_SLOT_BYTES='") + v + "' " + kSizeSyntax + "; allowed 64 to 1g");
  expectRefused({"SHMCOLL_SLOT_BYTES=99999999999999999999"},
                "SHMCOLL_SLOT_BYTES='99999999999999999999' does not fit in 64 bits; allowed 64 to 1g");
  expectRefused({"SHMCOLL_SLOT_BYTES=32"}, "SHMCOLL_SLOT_BYTES='32' is out of range; allowed 64 to 1g");
}

TEST(ShmrunSettings, HeapSizeOutOfRangeIsRefused) {
  expectRefused({"SHMCOLL_ALLOC_MEM=2t"}, "SHMCOLL_ALLOC_MEM='2t' is out of range; allowed at most 1t");
  expectRefused({"SHMCOLL_ALLOC_MEM=1tb"}, "SHMCOLL_ALLOC_MEM='1tb' " + kSizeSyntax + "; allowed at most 1t");
}

TEST(ShmrunSettings, ChoicesFlagsAndIntegersAreStrict) {
  expectRefused({"SHMCOLL_SHM_BACKEND=tmpfs"}, "SHMCOLL_SHM_BACKEND='tmpfs' is not one of auto, shm, memfd");
  expectRefused({"SHMCOLL_HUGEPAGES=maybe"}, "SHMCOLL_HUGEPAGES='maybe' is not one of auto, off, hugetlb");
  expectRefused({"SHMCOLL_KILL_GRACE_MS=1s"},
                "SHMCOLL_KILL_GRACE_MS='1s' is not an integer (decimal digits); allowed at most 3600000");
  // The library's settings too, although shmrun itself does not read them.
  expectRefused({"SHMCOLL_CMA=maybe"}, "SHMCOLL_CMA='maybe' is not a flag (1, 0, yes, no, on, off, true or false)");
  expectRefused({"SHMCOLL_VERBOSE=3"}, "SHMCOLL_VERBOSE='3' is out of range; allowed at most 2");
}

TEST(ShmrunSettings, EveryBadValueIsReported) {
  const Result r = shmrun({"-n", "2", "/bin/true"}, {"SHMCOLL_SLOT_BYTES=x", "SHMCOLL_CMA_MIN=y", "SHMCOLL_CMA=z"});
  EXPECT_EQ(r.exitCode, 2);
  for (const char* m : {"shmrun: SHMCOLL_SLOT_BYTES='x'", "\nshmrun: SHMCOLL_CMA_MIN='y'", "\nshmrun: SHMCOLL_CMA='z'"})
    EXPECT_NE(r.err.find(m), std::string::npos) << m << "\n" << r.err;
}

TEST(ShmrunSettings, TheRanksEnvironmentIsChecked) {
  // -x sets a variable for the ranks: its value is the one checked.
  expectRefused({}, "SHMCOLL_CMA_MIN='1e6' " + kTunedSizeSyntax, {"-x", "SHMCOLL_CMA_MIN=1e6"});
  const Result fixed = shmrun({"-x", "SHMCOLL_CMA_MIN=16k", "-n", "2", "/bin/true"}, {"SHMCOLL_CMA_MIN=abc"});
  EXPECT_EQ(fixed.exitCode, 0) << fixed.err;
  // The protocol's variables are shmrun's to set: stale ones are replaced, not refused.
  const Result stale = shmrun({"-n", "2", "/bin/true"}, {"SHMCOLL_RANK=x", "SHMCOLL_SEG_FD=-1"});
  EXPECT_EQ(stale.exitCode, 0) << stale.err;
}

TEST(ShmrunSettings, ValidSpellingsRun) {
  const Result r = shmrun({"-n", "2", kMpi, "ok"},
                          {"SHMCOLL_SLOT_BYTES=64KiB", "SHMCOLL_ALLOC_MEM=4MB", "SHMCOLL_CMA_MIN=off",
                           "SHMCOLL_CMA=Yes", "SHMCOLL_SHM_BACKEND=MEMFD", "SHMCOLL_WAIT_SPINS=20k",
                           "SHMCOLL_HUGEPAGES=off", "SHMCOLL_VERBOSE=", "SHMCOLL_P2P_EAGER=8k"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("rank 1 of 2 done"), std::string::npos) << r.out;
}

TEST(SingletonSettings, BadValueFailsMpiInit) {
  Result r = run({kMpi, "ok"}, {"SHMCOLL_CMA_MIN=abc"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("MPI_Init: SHMCOLL_CMA_MIN='abc' " + kTunedSizeSyntax), std::string::npos) << r.err;
  r = run({kMpi, "ok"}, {"SHMCOLL_ALLOC_MEM=2t"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("MPI_Init: SHMCOLL_ALLOC_MEM='2t' is out of range; allowed at most 1t"), std::string::npos)
      << r.err;
  // Read before main (the copy kernels, the malloc interposer), checked at MPI_Init all the same.
  r = run({kMpi, "ok"}, {"SHMCOLL_SHARED_MALLOC_MIN=64kb"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("MPI_Init: SHMCOLL_SHARED_MALLOC_MIN='64kb' " + kSizeSyntax), std::string::npos) << r.err;
  r = run({kMpi, "ok"}, {"SHMCOLL_NT_THRESHOLD=1e6"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("MPI_Init: SHMCOLL_NT_THRESHOLD='1e6'"), std::string::npos) << r.err;
}

TEST(SingletonSettings, ValidValuesRun) {
  const Result r = run({kMpi, "ok"}, {"SHMCOLL_CMA_MIN=64KiB", "SHMCOLL_ALLOC_MEM=1m", "SHMCOLL_SHARED_MALLOC=off"});
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_EQ(r.out, "rank 0 of 1 done\n");
}

TEST(ShmrunSettings, HelpComesFromTheTable) {
  const Result help = shmrun({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_NE(help.out.find("  SHMCOLL_SLOT_BYTES  default: a quarter of the L2 cache, 64k to 1m"), std::string::npos)
      << help.out;
  EXPECT_NE(help.out.find("  SHMCOLL_KILL_GRACE_MS  default: 300\n"), std::string::npos);
  EXPECT_EQ(help.out.find("SHMCOLL_SEG_FD"), std::string::npos);  // internal
  const Result full = shmrun({"--help-settings"});
  EXPECT_EQ(full.exitCode, 0);
  EXPECT_NE(full.out.find("\nSHMCOLL_SEG_FD\n"), std::string::npos);
  EXPECT_NE(full.out.find("decision-table key slot_bytes; read by shmrun\n"), std::string::npos) << full.out;
  const Result md = shmrun({"--settings-markdown"});
  EXPECT_EQ(md.exitCode, 0);
  EXPECT_EQ(md.out.rfind("| variable | default | values | effect |\n", 0), 0u);
}

}  // namespace
