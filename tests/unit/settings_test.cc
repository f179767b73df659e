// The settings module: the value parsers (every malformed spelling refused,
// suffixes, boundaries, overflow), the checks and the wording of their
// errors, the accessors' precedence, validate() as shmrun and MPI_Init use it,
// the table's own consistency, and the generated help.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/settings.h"

namespace shmcoll::settings {
namespace {

// The parsers work at compile time (and so allocate nothing: the malloc
// interposer uses them).
static_assert([] {
  uint64_t v = 0;
  return parseSize("64KiB", &v) == Parsed::kOk && v == 65536;
}());
static_assert([] {
  uint64_t v = 0;
  return parse(spec(Id::kSlotBytes), "63", &v) == Parsed::kOutOfRange;
}());

uint64_t sizeOf(const char* s, Parsed want = Parsed::kOk) {
  uint64_t v = 12345;
  EXPECT_EQ(parseSize(s, &v), want) << (s ? s : "(null)");
  return v;
}

TEST(SettingsParse, SizesWithSuffixes) {
  EXPECT_EQ(sizeOf("0"), 0u);
  EXPECT_EQ(sizeOf("4096"), 4096u);
  EXPECT_EQ(sizeOf("007"), 7u);
  EXPECT_EQ(sizeOf("4096B"), 4096u);
  for (const char* s : {"64k", "64K", "64KiB", "64kiB", "64kB", "64KB"}) EXPECT_EQ(sizeOf(s), 65536u) << s;
  EXPECT_EQ(sizeOf("2M"), 2u << 20);
  EXPECT_EQ(sizeOf("2MiB"), 2u << 20);
  EXPECT_EQ(sizeOf("256g"), 256ull << 30);
  EXPECT_EQ(sizeOf("1t"), 1ull << 40);
  EXPECT_EQ(sizeOf("1TiB"), 1ull << 40);
  EXPECT_EQ(sizeOf("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(sizeOf("16777215t"), 16777215ull << 40);
}

TEST(SettingsParse, MalformedSizesAreRefused) {
  for (const char* s : {"", "abc", "-1", "+5", "1e6", "0x10000", " 64k", "64k ", "64 k", "k", "1.5m", "64kb",
                        "64Kb", "64kib", "64KIb", "64kk", "64KiBB", "64iB", "64b", "64q", "1,000", "١٢"})
    sizeOf(s, Parsed::kMalformed);
  sizeOf(nullptr, Parsed::kMalformed);
}

TEST(SettingsParse, OverflowIsTooLarge) {
  sizeOf("18446744073709551616", Parsed::kTooLarge);
  sizeOf("99999999999999999999", Parsed::kTooLarge);
  sizeOf("16777216t", Parsed::kTooLarge);
  sizeOf("17179869184g", Parsed::kTooLarge);
  sizeOf("99999999999999999999k", Parsed::kTooLarge);
  sizeOf("99999999999999999999x", Parsed::kMalformed);  // junk is junk, however long the number
}

TEST(SettingsParse, IntegersFlagsAndChoices) {
  uint64_t v = 0;
  EXPECT_EQ(parseInteger("300", &v), Parsed::kOk);
  EXPECT_EQ(v, 300u);
  for (const char* s : {"", "-1", "+1", "1k", "0x1", " 1", "1 ", "3.0"})
    EXPECT_EQ(parseInteger(s, &v), Parsed::kMalformed) << s;
  EXPECT_EQ(parseInteger("99999999999999999999", &v), Parsed::kTooLarge);

  bool b = false;
  for (const char* s : {"1", "yes", "YES", "on", "On", "true", "TRUE"}) {
    b = false;
    EXPECT_EQ(parseFlag(s, &b), Parsed::kOk) << s;
    EXPECT_TRUE(b) << s;
  }
  for (const char* s : {"0", "no", "No", "off", "OFF", "false", "False"}) {
    b = true;
    EXPECT_EQ(parseFlag(s, &b), Parsed::kOk) << s;
    EXPECT_FALSE(b) << s;
  }
  for (const char* s : {"", "2", "maybe", " 1", "1 ", "yess", "of"})
    EXPECT_EQ(parseFlag(s, &b), Parsed::kMalformed) << s;

  EXPECT_EQ(parseChoice("memfd", "auto|shm|memfd", &v), Parsed::kOk);
  EXPECT_EQ(v, 2u);
  EXPECT_EQ(parseChoice("SHM", "auto|shm|memfd", &v), Parsed::kOk);
  EXPECT_EQ(v, 1u);
  for (const char* s : {"", "tmpfs", "memf", "memfdx", "auto|shm", "|"})
    EXPECT_EQ(parseChoice(s, "auto|shm|memfd", &v), Parsed::kMalformed) << s;
}

TEST(SettingsCheck, MessagesNameTheVariableTheValueAndWhatIsAccepted) {
  EXPECT_EQ(check(Id::kSlotBytes, "-1"),
            "SHMCOLL_SLOT_BYTES='-1' is not a byte size (digits with an optional k, m, g or t suffix, e.g. 64k); "
            "allowed 64 to 1g");
  EXPECT_EQ(check(Id::kSlotBytes, "abc"),
            "SHMCOLL_SLOT_BYTES='abc' is not a byte size (digits with an optional k, m, g or t suffix, e.g. 64k); "
            "allowed 64 to 1g");
  EXPECT_EQ(check(Id::kSlotBytes, "8g"), "SHMCOLL_SLOT_BYTES='8g' is out of range; allowed 64 to 1g");
  EXPECT_EQ(check(Id::kSlotBytes, "99999999999999999999"),
            "SHMCOLL_SLOT_BYTES='99999999999999999999' does not fit in 64 bits; allowed 64 to 1g");
  for (const char* bad : {"1e6", "0x10000", "64kb", " 64k", "64k\n"})
    EXPECT_NE(check(Id::kSlotBytes, bad).find("' is not a byte size"), std::string::npos) << bad;
  EXPECT_EQ(check(Id::kAllocMem, "2t"), "SHMCOLL_ALLOC_MEM='2t' is out of range; allowed at most 1t");
  EXPECT_EQ(check(Id::kAllocMem, "1tb"),
            "SHMCOLL_ALLOC_MEM='1tb' is not a byte size (digits with an optional k, m, g or t suffix, e.g. 64k); "
            "allowed at most 1t");
  // A tuned setting whose range reaches the largest value also takes off.
  EXPECT_EQ(check(Id::kCmaMin, "junk"),
            "SHMCOLL_CMA_MIN='junk' is not a byte size (digits with an optional k, m, g or t suffix, e.g. 64k, or "
            "off)");
  EXPECT_EQ(check(Id::kWaitSpins, "lots"),
            "SHMCOLL_WAIT_SPINS='lots' is not a number (digits with an optional k, m, g or t multiplier, e.g. "
            "20000, or off)");
  EXPECT_EQ(check(Id::kCma, "maybe"), "SHMCOLL_CMA='maybe' is not a flag (1, 0, yes, no, on, off, true or false)");
  EXPECT_EQ(check(Id::kShmBackend, "tmpfs"), "SHMCOLL_SHM_BACKEND='tmpfs' is not one of auto, shm, memfd");
  EXPECT_EQ(check(Id::kCopyKernel, "mmx"), "SHMCOLL_COPY_KERNEL='mmx' is not one of avx512, avx2, sse2, scalar");
  EXPECT_EQ(check(Id::kVerbose, "3"), "SHMCOLL_VERBOSE='3' is out of range; allowed at most 2");
  EXPECT_EQ(check(Id::kVerbose, "-1"), "SHMCOLL_VERBOSE='-1' is not an integer (decimal digits); allowed at most 2");
  EXPECT_EQ(check(Id::kKillGraceMs, "1s"),
            "SHMCOLL_KILL_GRACE_MS='1s' is not an integer (decimal digits); allowed at most 3600000");
  EXPECT_EQ(check(Id::kJobSize, "0"), "SHMCOLL_SIZE='0' is out of range; allowed 1 to 2147483647");
}

TEST(SettingsCheck, BoundariesAndValidSpellings) {
  uint64_t v = 0;
  EXPECT_EQ(check(Id::kSlotBytes, "64", &v), "");
  EXPECT_EQ(v, 64u);
  EXPECT_NE(check(Id::kSlotBytes, "63"), "");
  EXPECT_EQ(check(Id::kSlotBytes, "1g", &v), "");
  EXPECT_EQ(v, 1u << 30);
  EXPECT_EQ(check(Id::kSlotBytes, "1073741825"), "SHMCOLL_SLOT_BYTES='1073741825' is out of range; allowed 64 to 1g");
  EXPECT_EQ(check(Id::kSlotBytes, "off"), "SHMCOLL_SLOT_BYTES='off' is out of range; allowed 64 to 1g");
  EXPECT_EQ(check(Id::kAllocMem, "1t", &v), "");
  EXPECT_EQ(v, 1ull << 40);
  EXPECT_EQ(check(Id::kAllocMem, "0", &v), "");
  EXPECT_NE(check(Id::kAllocMem, "off"), "");  // no decision-table key: no off
  EXPECT_EQ(check(Id::kCmaSoloMax, "off", &v), "");
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_EQ(check(Id::kWaitSpins, "20k", &v), "");
  EXPECT_EQ(v, 20480u);
  EXPECT_EQ(check(Id::kVerbose, "2", &v), "");
  EXPECT_EQ(check(Id::kHugepages, "HugeTLB", &v), "");
  EXPECT_EQ(v, 2u);
  EXPECT_EQ(check(Id::kCma, "Off", &v), "");
  EXPECT_EQ(v, 0u);
  // Unset and empty are fine (the default); strings take anything.
  EXPECT_EQ(check(Id::kSlotBytes, nullptr), "");
  EXPECT_EQ(check(Id::kSlotBytes, ""), "");
  EXPECT_EQ(check(Id::kAlgorithm, "whatever"), "");
}

// Every setting declared once, with what the module and its docs need.
TEST(SettingsTable, DeclarationsAreConsistent) {
  std::set<std::string> names, keys, perOpKeys;
  for (const Spec& sp : kSpecs) {
    SCOPED_TRACE(sp.name);
    EXPECT_EQ(std::string(sp.name).rfind("SHMCOLL_", 0), 0u);
    EXPECT_TRUE(names.insert(sp.name).second) << "declared twice";
    EXPECT_NE(std::string(sp.help), "");
    EXPECT_NE(std::string(sp.dfltText), "");
    EXPECT_LE(sp.min, sp.max);
    if (sp.key) {
      EXPECT_TRUE(keys.insert(sp.key).second) << "key declared twice";
      EXPECT_TRUE(sp.type == kSize || sp.type == kCount);
      if (sp.scope == kPerOp) perOpKeys.insert(sp.key);
    }
    if (sp.audience == kUser) {
      EXPECT_NE(sp.readers, 0u);
    }
    if (sp.type == kChoice) {
      ASSERT_NE(sp.choices, nullptr);
      const uint64_t n = 1 + static_cast<uint64_t>(std::count(sp.choices, sp.choices + strlen(sp.choices), '|'));
      EXPECT_TRUE(sp.dflt == UINT64_MAX ? sp.computed != nullptr : sp.dflt < n);
    }
    // A declared default must be a value the variable could take.
    const bool numeric = sp.type == kSize || sp.type == kCount || sp.type == kInteger;
    if (numeric && !sp.computed && sp.audience != kProtocol) {
      EXPECT_GE(sp.dflt, sp.min);
      EXPECT_LE(sp.dflt, sp.max);
    }
  }
  EXPECT_EQ(keys, (std::set<std::string>{"cma_min", "cma_solo_min", "cma_solo_max", "inline_max", "reduce_small",
                                         "p2p_eager", "p2p_cma_min", "nt_threshold", "wait_spins", "wait_yields",
                                         "stream_spin_ns", "slot_bytes"}));
  EXPECT_EQ(perOpKeys,
            (std::set<std::string>{"cma_min", "cma_solo_min", "cma_solo_max", "inline_max", "reduce_small"}));
  for (const char* n : {"SHMCOLL_RANK", "SHMCOLL_SIZE", "SHMCOLL_SEG_FD", "SHMCOLL_SEG_SIZE", "SHMCOLL_JOBID",
                        "SHMCOLL_ALGORITHM", "SHMCOLL_ALGORITHM_<OP>", "SHMCOLL_SHARED_MALLOC_RESERVE",
                        "SHMCOLL_SHM_LIMIT", "SHMCOLL_MEM_LIMIT", "SHMCOLL_TUNING", "SHMCOLL_KILL_GRACE_MS"})
    EXPECT_EQ(names.count(n), 1u) << n;
}

// Sets variables for one test and restores them after.
class SettingsEnv : public ::testing::Test {
 protected:
  void set(const char* name, const char* value) {
    const char* old = getenv(name);
    saved_.push_back({name, old ? old : "", old != nullptr});
    setenv(name, value, 1);
  }
  void TearDown() override {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
      if (it->wasSet) setenv(it->name.c_str(), it->value.c_str(), 1);
      else unsetenv(it->name.c_str());
  }

 private:
  struct Saved {
    std::string name, value;
    bool wasSet;
  };
  std::vector<Saved> saved_;
};

TEST_F(SettingsEnv, AccessorsReadValidValuesElseTheDefault) {
  unsetenv("SHMCOLL_COPY_REP_MIN");
  EXPECT_EQ(settings::size(Id::kCopyRepMin), 32u << 10);
  set("SHMCOLL_COPY_REP_MIN", "64KiB");
  EXPECT_EQ(settings::size(Id::kCopyRepMin), 64u << 10);
  set("SHMCOLL_COPY_REP_MIN", "64kb");  // invalid: reads as unset; validate() reports it
  EXPECT_EQ(settings::size(Id::kCopyRepMin), 32u << 10);
  set("SHMCOLL_NT_THRESHOLD", "");
  EXPECT_EQ(settings::size(Id::kNtThreshold, 777), 777u);  // empty is unset
  set("SHMCOLL_CMA", "no");
  EXPECT_FALSE(flag(Id::kCma));
  set("SHMCOLL_CMA", "perhaps");
  EXPECT_TRUE(flag(Id::kCma));
  set("SHMCOLL_HUGEPAGES", "hugetlb");
  EXPECT_EQ(choice(Id::kHugepages), 2);
  set("SHMCOLL_HUGEPAGES", "bogus");
  EXPECT_EQ(choice(Id::kHugepages), 0);
  set("SHMCOLL_COPY_KERNEL", "bogus");
  EXPECT_EQ(choice(Id::kCopyKernel), -1);
  EXPECT_STREQ(raw(Id::kCopyKernel), "bogus");
  set("SHMCOLL_VERBOSE", "2");
  EXPECT_EQ(integer(Id::kVerbose), 2);
  set("SHMCOLL_SEG_FD", "x");
  EXPECT_EQ(integer(Id::kSegFd, -1), -1);
  // The variable wins without the table being asked.
  set("SHMCOLL_P2P_EAGER", "1k");
  EXPECT_EQ(tuned(Id::kP2pEager, nullptr, 2), 1024u);
  set("SHMCOLL_CMA_SOLO_MIN", "off");
  EXPECT_EQ(tuned(Id::kCmaSoloMin, "alltoallv", 4, 5), UINT64_MAX);
}

TEST_F(SettingsEnv, FamiliesNameOneVariablePerOperation) {
  EXPECT_EQ(name(Id::kAlgorithmOp, "reduce_scatter_block"), "SHMCOLL_ALGORITHM_REDUCE_SCATTER_BLOCK");
  EXPECT_EQ(name(Id::kCmaMin, "alltoall"), "SHMCOLL_CMA_MIN");
  set("SHMCOLL_ALGORITHM_ALLTOALL", "segment");
  EXPECT_EQ(str(Id::kAlgorithmOp, "alltoall"), "segment");
  EXPECT_EQ(str(Id::kAlgorithmOp, "bcast"), "");
}

TEST_F(SettingsEnv, ValidateReportsEveryBadValueOfItsReaders) {
  set("SHMCOLL_SLOT_BYTES", "abc");      // shmrun's
  set("SHMCOLL_CMA_MIN", "1e6");          // the library's
  set("SHMCOLL_ALLOC_MEM", "2t");         // both
  set("SHMCOLL_RANK", "-1");              // the protocol (the library's)
  set("SHMCOLL_ALGORITHM", "nonsense");   // the registry checks it, not validate()
  auto has = [](const std::vector<std::string>& v, const std::string& prefix) {
    for (const std::string& s : v)
      if (s.rfind(prefix, 0) == 0) return true;
    return false;
  };
  const std::vector<std::string> lib = validate(kLibrary, true);
  EXPECT_EQ(lib.size(), 3u);
  EXPECT_TRUE(has(lib, "SHMCOLL_CMA_MIN='1e6' is not a byte size"));
  EXPECT_TRUE(has(lib, "SHMCOLL_ALLOC_MEM='2t' is out of range"));
  EXPECT_TRUE(has(lib, "SHMCOLL_RANK='-1' is not an integer"));
  EXPECT_EQ(validate(kLibrary, false).size(), 2u);  // shmrun sets the protocol itself
  const std::vector<std::string> run = validate(kShmrun, false);
  EXPECT_EQ(run.size(), 2u);
  EXPECT_TRUE(has(run, "SHMCOLL_SLOT_BYTES='abc'"));
  // Overrides (shmrun's -x) win over the environment, the last of a name first.
  const std::vector<std::string> fixed =
      validate(kLibrary, false, {"SHMCOLL_CMA_MIN=bad", "SHMCOLL_CMA_MIN=16k", "SHMCOLL_ALLOC_MEM=", "OTHER=1"});
  EXPECT_TRUE(fixed.empty()) << fixed.front();
  const std::vector<std::string> broken = validate(kLibrary, false, {"SHMCOLL_CMA_MIN=16k", "SHMCOLL_CMA=2"});
  EXPECT_EQ(broken.size(), 2u);
  EXPECT_TRUE(has(broken, "SHMCOLL_CMA='2' is not a flag"));
}

TEST(SettingsDoc, GeneratedFromTheTable) {
  const std::string help = helpText(), full = fullText(), md = markdown();
  for (const Spec& sp : kSpecs) {
    SCOPED_TRACE(sp.name);
    const bool user = sp.audience == kUser;
    EXPECT_EQ(help.find(std::string("  ") + sp.name + "  default: ") != std::string::npos, user);
    EXPECT_EQ(md.find(std::string("| `") + sp.name + "` |") != std::string::npos, user);
    EXPECT_NE(full.find(std::string("\n") + sp.name + "\n"), std::string::npos);
  }
  EXPECT_EQ(help.find('`'), std::string::npos);
  EXPECT_NE(help.find("SHMCOLL_SLOT_BYTES  default: a quarter of the L2 cache, 64k to 1m"), std::string::npos);
  EXPECT_NE(full.find("decision-table key cma_min"), std::string::npos);
  EXPECT_NE(full.find("internal: the launcher <-> rank protocol"), std::string::npos);
  EXPECT_NE(md.find("| `SHMCOLL_ALLOC_MEM` | `2m` | byte size, at most 1t |"), std::string::npos) << md;
  for (const std::string& line : {help, full})
    for (size_t at = 0, end; at < line.size(); at = end + 1) {
      end = line.find('\n', at);
      EXPECT_LE(end - at, 100u) << line.substr(at, end - at);
    }
}

}  // namespace
}  // namespace shmcoll::settings
