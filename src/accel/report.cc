// Calls taken per function, for SHMCOLL_ACCEL_REPORT=calls (the tests check
// that the very calls they exercise were taken, not only some call): a count
// per exported function, found by the name of the function that counted.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>

#include "accel.h"

namespace shmcoll_accel {
namespace {

const char* const kCalls[] = {"MPI_Allgather", "MPI_Allgatherv",          "MPI_Allreduce", "MPI_Alltoall",
                              "MPI_Alltoallv", "MPI_Alltoallw",           "MPI_Barrier",   "MPI_Bcast",
                              "MPI_Reduce",    "MPI_Reduce_scatter_block"};
constexpr int kNumCalls = sizeof kCalls / sizeof kCalls[0];
std::atomic<long> g_calls[kNumCalls + 1];  // the last: any other name

}  // namespace

void NoteTaken(const char* fn) {
  // the names come from __builtin_FUNCTION, one string per caller: found by its address after the first time
  static std::atomic<const char*> seen[kNumCalls];
  int i = 0;
  while (i < kNumCalls && seen[i].load(std::memory_order_relaxed) != fn) ++i;
  if (i == kNumCalls) {
    i = 0;
    while (i < kNumCalls && std::strcmp(fn, kCalls[i]) != 0) ++i;
    if (i < kNumCalls) seen[i].store(fn, std::memory_order_relaxed);
  }
  Bump(g_calls[i]);
}

void ReportCalls(int rank) {
  // "shmcoll-accel: rank R: taken: MPI_Allreduce=12 MPI_Barrier=3 ..." (functions with a call taken)
  std::string line = "shmcoll-accel: rank " + std::to_string(rank) + ": taken:";
  for (int i = 0; i <= kNumCalls; ++i)
    if (long c = g_calls[i].load(std::memory_order_relaxed))
      line += std::string(" ") + (i < kNumCalls ? kCalls[i] : "other") + "=" + std::to_string(c);
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace shmcoll_accel
