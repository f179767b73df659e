// The predefined reduction operations on predefined types, for reduce.cc: the
// host's MPI_Op and MPI_Datatype handles (pointers in Open MPI, integers in
// MPICH) mapped once, at the first reduction, onto shmcoll's own element
// kernels (src/op/kernels.h, the ones behind shmcoll's MPI_Op).  The classes
// follow the standard (MPI-4.0 section 6.9.2): MAX/MIN on C integers and
// floating point; SUM/PROD also on complex; LAND/LOR/LXOR on C integers and
// logicals; BAND/BOR/BXOR on C integers and MPI_BYTE; MAXLOC/MINLOC on the
// pair types.  MPI_CHAR counts as a C integer, as both hosts accept it there.
// A type whose size or extent in the host differs from the C type's is left
// out of the table, as are Fortran types and MPI_WCHAR: reduce.cc declines
// every (op, type) FindFold does not know, and the host then does it (or
// reports the error of a pair the standard does not allow).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "accel.h"
#include "op/kernels.h"

namespace shmcoll_accel {
namespace {

namespace k = shmcoll::op::kernels;

enum Class : uint8_t { kInt = 1, kFloat = 2, kLogical = 4, kComplex = 8, kByte = 16, kPair = 32 };

struct TypeEntry {
  MPI_Datatype type;
  uint8_t cls;
  size_t extent;
  void (*fn)(int kind, const void* in, void* inout, uint64_t n);
};

template <class T>
TypeEntry Arith(MPI_Datatype t, uint8_t cls) {
  return {t, cls, sizeof(T),
          [](int kind, const void* in, void* io, uint64_t n) { k::arith<T>(static_cast<k::Kind>(kind), in, io, n); }};
}
template <class T>
TypeEntry Complex(MPI_Datatype t) {
  return {t, kComplex, 2 * sizeof(T), [](int kind, const void* in, void* io, uint64_t n) {
            k::complexOp<T>(static_cast<k::Kind>(kind), in, io, n);
          }};
}
template <class V>
struct PairOf {
  V v;
  int i;
};
template <class V>
TypeEntry Pair(MPI_Datatype t) {
  return {t, kPair, sizeof(PairOf<V>), [](int kind, const void* in, void* io, uint64_t n) {
            k::loc<V>(static_cast<k::Kind>(kind), static_cast<const char*>(in), static_cast<char*>(io), n,
                      sizeof(PairOf<V>), offsetof(PairOf<V>, i));
          }};
}

// The host's predefined types this table handles, checked against the host's
// own size and extent.
const std::vector<TypeEntry>& Types() {
  static const std::vector<TypeEntry> table = [] {
    const TypeEntry all[] = {
        Arith<int>(MPI_INT, kInt),
        Arith<double>(MPI_DOUBLE, kFloat),
        Arith<long long>(MPI_LONG_LONG_INT, kInt),
        Arith<float>(MPI_FLOAT, kFloat),
        Arith<long>(MPI_LONG, kInt),
        Arith<unsigned>(MPI_UNSIGNED, kInt),
        Arith<unsigned long>(MPI_UNSIGNED_LONG, kInt),
        Arith<unsigned long long>(MPI_UNSIGNED_LONG_LONG, kInt),
        Arith<signed char>(MPI_CHAR, kInt),
        Arith<signed char>(MPI_SIGNED_CHAR, kInt),
        Arith<unsigned char>(MPI_UNSIGNED_CHAR, kInt),
        Arith<unsigned char>(MPI_BYTE, kByte),
        Arith<short>(MPI_SHORT, kInt),
        Arith<unsigned short>(MPI_UNSIGNED_SHORT, kInt),
        Arith<long double>(MPI_LONG_DOUBLE, kFloat),
        Arith<int8_t>(MPI_INT8_T, kInt),
        Arith<int16_t>(MPI_INT16_T, kInt),
        Arith<int32_t>(MPI_INT32_T, kInt),
        Arith<int64_t>(MPI_INT64_T, kInt),
        Arith<uint8_t>(MPI_UINT8_T, kInt),
        Arith<uint16_t>(MPI_UINT16_T, kInt),
        Arith<uint32_t>(MPI_UINT32_T, kInt),
        Arith<uint64_t>(MPI_UINT64_T, kInt),
        Arith<uint8_t>(MPI_C_BOOL, kLogical),
        Arith<uint8_t>(MPI_CXX_BOOL, kLogical),
        Arith<MPI_Aint>(MPI_AINT, kInt),
        Arith<MPI_Offset>(MPI_OFFSET, kInt),
        Arith<MPI_Count>(MPI_COUNT, kInt),
        Complex<float>(MPI_C_FLOAT_COMPLEX),
        Complex<double>(MPI_C_DOUBLE_COMPLEX),
        Complex<long double>(MPI_C_LONG_DOUBLE_COMPLEX),
        Complex<float>(MPI_CXX_FLOAT_COMPLEX),
        Complex<double>(MPI_CXX_DOUBLE_COMPLEX),
        Complex<long double>(MPI_CXX_LONG_DOUBLE_COMPLEX),
        Pair<float>(MPI_FLOAT_INT),
        Pair<double>(MPI_DOUBLE_INT),
        Pair<long>(MPI_LONG_INT),
        Pair<int>(MPI_2INT),
        Pair<short>(MPI_SHORT_INT),
        Pair<long double>(MPI_LONG_DOUBLE_INT),
    };
    std::vector<TypeEntry> t;
    for (const TypeEntry& e : all) {
      if (e.type == MPI_DATATYPE_NULL) continue;
      int size = 0;
      MPI_Aint lb = 0, extent = 0;
      if (PMPI_Type_size(e.type, &size) != MPI_SUCCESS || PMPI_Type_get_extent(e.type, &lb, &extent) != MPI_SUCCESS)
        continue;
      // (the pair types have padding: their size is smaller than the extent)
      const bool pair = e.cls == kPair;
      if (lb != 0 || static_cast<size_t>(extent) != e.extent || (!pair && static_cast<size_t>(size) != e.extent))
        continue;
      t.push_back(e);
    }
    return t;
  }();
  return table;
}

struct OpEntry {
  MPI_Op op;
  k::Kind kind;
  uint8_t classes;
};

const OpEntry* FindOp(MPI_Op op) {
  static const OpEntry ops[] = {
      {MPI_SUM, k::kSum, kInt | kFloat | kComplex},
      {MPI_MAX, k::kMax, kInt | kFloat},
      {MPI_MIN, k::kMin, kInt | kFloat},
      {MPI_PROD, k::kProd, kInt | kFloat | kComplex},
      {MPI_LAND, k::kLand, kInt | kLogical},
      {MPI_LOR, k::kLor, kInt | kLogical},
      {MPI_LXOR, k::kLxor, kInt | kLogical},
      {MPI_BAND, k::kBand, kInt | kByte},
      {MPI_BOR, k::kBor, kInt | kByte},
      {MPI_BXOR, k::kBxor, kInt | kByte},
      {MPI_MAXLOC, k::kMaxloc, kPair},
      {MPI_MINLOC, k::kMinloc, kPair},
  };
  for (const OpEntry& e : ops)
    if (e.op == op) return &e;
  return nullptr;
}

}  // namespace

bool FindFold(MPI_Op op, MPI_Datatype type, Fold* fold) {
  if (op == MPI_OP_NULL || type == MPI_DATATYPE_NULL) return false;
  const OpEntry* o = FindOp(op);
  if (!o) return false;  // a user operation (or MPI_REPLACE, MPI_NO_OP): the host's
  for (const TypeEntry& t : Types()) {
    if (t.type != type) continue;
    if (!(t.cls & o->classes)) return false;
    fold->fn = t.fn;
    fold->kind = o->kind;
    fold->extent = t.extent;
    return true;
  }
  return false;
}

}  // namespace shmcoll_accel
