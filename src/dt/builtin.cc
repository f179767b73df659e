// The predefined datatypes: a static table indexed by the id in the handle.
#include <mpi.h>

#include <array>
#include <cstddef>

#include "dt/datatype.h"
#include "dt/node.h"
#include "dt/registry.h"

namespace shmcoll::dt {

namespace {

template <class A, class B>
struct PairOf {
  A a;
  B b;
};

// Builds the Type for a predefined handle.  Pair types (for MINLOC/MAXLOC)
// have a hole between the value and the int, so they are not contiguous.
Type makeBuiltin(int handle, const char* name, int64_t extent, uint32_t align, std::vector<Block> blocks) {
  Type t;
  t.align = align;
  t.elements = blocks.size();  // pair types count as two basic elements (MPI_Get_elements)
  t.combiner = kNamed;
  std::vector<std::pair<int64_t, NodeP>> leaves;
  for (const Block& b : blocks) leaves.emplace_back(0, leaf(b.disp, b.len));
  t.root = list(std::move(leaves));
  t.blocksComplete = true;
  t.numBlocks = blocks.size();
  t.handle = handle;
  t.name = name;
  t.builtin = true;
  t.committed = true;
  t.blocks = std::move(blocks);
  t.size = 0;
  for (const Block& b : t.blocks) t.size += b.len;
  t.lb = 0;
  t.ub = extent;
  t.trueLb = t.blocks.front().disp;
  t.trueUb = t.blocks.back().disp + static_cast<int64_t>(t.blocks.back().len);
  // blocks stay unmerged (MPI_2INT keeps two): MPI_Get_elements counts its elements by them.
  t.contiguous = t.root->kind == Node::kLeaf && static_cast<int64_t>(t.size) == extent;
  t.tier = t.contiguous ? Tier::kContig : Tier::kIrregular;
  return t;
}

// Alignment of a scalar, as the C ABI (x86-64 SysV) lays it out in a struct:
// complex types align like their parts, long double to 16.
uint32_t scalarAlign(int handle, int64_t sz) {
  if (handle == MPI_C_FLOAT_COMPLEX || handle == MPI_CXX_FLOAT_COMPLEX) return alignof(float);
  if (handle == MPI_C_DOUBLE_COMPLEX || handle == MPI_CXX_DOUBLE_COMPLEX) return alignof(double);
  if (handle == MPI_C_LONG_DOUBLE_COMPLEX || handle == MPI_CXX_LONG_DOUBLE_COMPLEX) return alignof(long double);
  return static_cast<uint32_t>(sz);
}

Type scalar(int handle, const char* name) {
  int64_t sz = static_cast<int64_t>(builtinSize(handle));
  return makeBuiltin(handle, name, sz, scalarAlign(handle, sz), {{0, static_cast<uint64_t>(sz)}});
}

template <class A, class B>
Type pair(int handle, const char* name) {
  using P = PairOf<A, B>;
  return makeBuiltin(handle, name, sizeof(P), alignof(P),
                     {{static_cast<int64_t>(offsetof(P, a)), sizeof(A)},
                      {static_cast<int64_t>(offsetof(P, b)), sizeof(B)}});
}

std::array<Type, SHMCOLL_DT_BUILTIN_COUNT> buildTable() {
  std::array<Type, SHMCOLL_DT_BUILTIN_COUNT> t{};
  auto put = [&](Type x) { t[x.handle & 0xff] = std::move(x); };
  put(scalar(MPI_CHAR, "MPI_CHAR"));
  put(scalar(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"));
  put(scalar(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"));
  put(scalar(MPI_BYTE, "MPI_BYTE"));
  put(scalar(MPI_WCHAR, "MPI_WCHAR"));
  put(scalar(MPI_SHORT, "MPI_SHORT"));
  put(scalar(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"));
  put(scalar(MPI_INT, "MPI_INT"));
  put(scalar(MPI_UNSIGNED, "MPI_UNSIGNED"));
  put(scalar(MPI_LONG, "MPI_LONG"));
  put(scalar(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"));
  put(scalar(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"));
  put(scalar(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"));
  put(scalar(MPI_FLOAT, "MPI_FLOAT"));
  put(scalar(MPI_DOUBLE, "MPI_DOUBLE"));
  put(scalar(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"));
  put(scalar(MPI_PACKED, "MPI_PACKED"));
  put(scalar(MPI_INT8_T, "MPI_INT8_T"));
  put(scalar(MPI_INT16_T, "MPI_INT16_T"));
  put(scalar(MPI_INT32_T, "MPI_INT32_T"));
  put(scalar(MPI_INT64_T, "MPI_INT64_T"));
  put(scalar(MPI_UINT8_T, "MPI_UINT8_T"));
  put(scalar(MPI_UINT16_T, "MPI_UINT16_T"));
  put(scalar(MPI_UINT32_T, "MPI_UINT32_T"));
  put(scalar(MPI_UINT64_T, "MPI_UINT64_T"));
  put(scalar(MPI_C_BOOL, "MPI_C_BOOL"));
  put(scalar(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"));
  put(scalar(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"));
  put(scalar(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"));
  put(scalar(MPI_AINT, "MPI_AINT"));
  put(scalar(MPI_OFFSET, "MPI_OFFSET"));
  put(scalar(MPI_COUNT, "MPI_COUNT"));
  put(pair<float, int>(MPI_FLOAT_INT, "MPI_FLOAT_INT"));
  put(pair<double, int>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT"));
  put(pair<long, int>(MPI_LONG_INT, "MPI_LONG_INT"));
  put(pair<int, int>(MPI_2INT, "MPI_2INT"));
  put(pair<short, int>(MPI_SHORT_INT, "MPI_SHORT_INT"));
  put(pair<long double, int>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"));
  put(scalar(MPI_CXX_BOOL, "MPI_CXX_BOOL"));
  put(scalar(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"));
  put(scalar(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"));
  put(scalar(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"));
  return t;
}

}  // namespace

const Type* builtinType(int handle) {
  static const std::array<Type, SHMCOLL_DT_BUILTIN_COUNT> kTable = buildTable();
  if ((static_cast<uint32_t>(handle) >> 24) != 0x31) return nullptr;
  uint32_t id = static_cast<uint32_t>(handle) & 0xff;
  if (id == 0 || id >= kTable.size() || kTable[id].handle != handle) return nullptr;
  return &kTable[id];
}

const Type* byteType() {
  static const Type* t = builtinType(MPI_BYTE);
  return t;
}

}  // namespace shmcoll::dt
