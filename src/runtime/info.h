// Info objects: ordered (key, value) string pairs behind MPI_Info handles.
//
// An Info keeps its pairs in insertion order (MPI_Info_get_nthkey numbers
// them that way; setting an existing key replaces the value in place), in a
// vector searched linearly: info objects hold a handful of hints, and a
// vector keeps the order for free.  User handles are 0x72000000 | index into
// a table whose slots are reused lowest-first, like the communicator table.
// MPI_INFO_ENV is a separate, read-only object filled at MPI_Init.
//
// Limits: a key has 1 .. kMaxKey characters and a value 0 .. kMaxValue, so
// that a key always fits a char[MPI_MAX_INFO_KEY] and a value a
// char[MPI_MAX_INFO_VAL] with its terminating null (programs size their
// buffers either way, with or without the "+1" the standard asks for).
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

namespace shmcoll::rt {

constexpr size_t kMaxInfoKey = MPI_MAX_INFO_KEY - 1;
constexpr size_t kMaxInfoValue = MPI_MAX_INFO_VAL - 1;

struct Info {
  std::vector<std::pair<std::string, std::string>> entries;  // insertion order

  const std::string* find(const std::string& key) const;
  // Replaces the value of an existing key in place, or appends the pair.
  void set(const std::string& key, const std::string& value);
  // False when the key is absent.
  bool erase(const std::string& key);
};

// The user info behind `h`, or MPI_INFO_ENV's object; nullptr for
// MPI_INFO_NULL and anything else.
Info* info(MPI_Info h);
// A new user info (a copy of `from`) and its handle.
MPI_Info newInfo(Info from = {});
// Releases a user handle (not MPI_INFO_ENV).
void freeInfo(MPI_Info h);
// Number of live user info handles (tests check for leaks).
size_t liveInfos();

// MPI_INFO_ENV's object, empty until fillEnvInfo() runs.
Info& envInfo();
// The standard's reserved keys for this process: command and argv (from
// `args`, argv[0] first), maxprocs and soft (the job size), host, arch, wdir
// (the current directory), thread_level (`threadLevel`, the level the program
// asked for) and mpi_initial_errhandler.  A value longer than an info value
// may be (a very long command line) is left out rather than cut.
Info makeEnvInfo(const std::vector<std::string>& args, int jobSize, int threadLevel);
// This process's command line, from /proc/self/cmdline (empty if unreadable).
std::vector<std::string> processArgs();

}  // namespace shmcoll::rt
