// One element of a predefined type, combined inline (the one-sided atomics'
// common case; everything else goes through op.h's applyPacked).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>

namespace shmcoll::op {

// One element of the common one-sided atomics (MPI_Fetch_and_op, a
// one-element MPI_Accumulate), combined inline rather than through
// applyPacked's tables (their look-ups took a fifth of an 8-byte
// MPI_Fetch_and_op's time under MPI_Win_lock_all, api/rma.cc): MPI_SUM,
// MPI_REPLACE and MPI_NO_OP on 4- and 8-byte integers (sums on unsigned
// values, as the kernels do) and MPI_SUM on MPI_DOUBLE (inout = in + inout,
// the kernels' scalar rule, kernels.h).  one() gives size 0 for every other
// pair: applyPacked must do it.
struct One {
  enum Kind : uint8_t { kNone, kSumInt, kSumDouble, kReplace, kNoOp };
  uint8_t size = 0;
  Kind kind = kNone;
};
inline One one(MPI_Op op, MPI_Datatype h) {
  uint8_t size;
  bool real = false;
  switch (h) {
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_INT32_T:
    case MPI_UINT32_T:
      size = 4;
      break;
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
    case MPI_LONG_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT64_T:
    case MPI_UINT64_T:
      size = 8;
      break;
    case MPI_DOUBLE:
      size = 8, real = true;
      break;
    default:
      return {};
  }
  if (op == MPI_SUM) return {size, real ? One::kSumDouble : One::kSumInt};
  if (op == MPI_REPLACE) return {size, One::kReplace};
  if (op == MPI_NO_OP) return {size, One::kNoOp};
  return {};
}
template <class T>
[[gnu::always_inline]] inline void sumOne(const char* in, char* inout) {
  T x, y;
  std::memcpy(&x, in, sizeof x);
  std::memcpy(&y, inout, sizeof y);
  y = x + y;
  std::memcpy(inout, &y, sizeof y);
}
[[gnu::always_inline]] inline void copyOne(char* to, const char* from, uint8_t size) {
  if (size == 8)
    std::memcpy(to, from, 8);
  else
    std::memcpy(to, from, 4);
}
[[gnu::always_inline]] inline void applyOne(One k, const char* in, char* inout) {
  switch (k.kind) {
    case One::kSumInt:
      if (k.size == 8)
        sumOne<uint64_t>(in, inout);
      else
        sumOne<uint32_t>(in, inout);
      break;
    case One::kSumDouble:
      sumOne<double>(in, inout);
      break;
    case One::kReplace:
      copyOne(inout, in, k.size);
      break;
    default:
      break;
  }
}

}  // namespace shmcoll::op
