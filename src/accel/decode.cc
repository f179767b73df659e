// A host's datatype decoded into the engine's description (dt/datatype.h),
// once per type, and kept on the type with an attribute whose delete callback
// frees it when the host frees the type.
//
// The decoding follows MPI_Type_get_envelope and MPI_Type_get_contents down to
// the predefined types, and rebuilds each level with the engine's constructor
// of the same combiner.  The data's place in the type map is fixed by the
// standard, but a type's bounds are not quite (the struct padding, Open MPI's
// padding of byte-strided vectors, MPICH's reading of lb/ub markers), and a
// parent steps its copies by its child's extent.  So every level is checked
// against what the host says of that very handle: the size must match; lb and
// extent are the host's (the level is resized to them where the engine's
// differ); the true lb and true extent, which only the data decides, must
// match, or the type is not decoded.  A type not decoded (a Fortran combiner,
// a predefined type with holes other than the C pair types, a type the host
// will not describe) is packed by the host itself (datatype.cc), and that
// verdict is kept on the type too.
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "accel.h"
#include "dt/datatype.h"

namespace shmcoll_accel {
namespace {

namespace dt = shmcoll::dt;

int g_key = MPI_KEYVAL_INVALID;
char g_not_decoded;  // the attribute value for a type the host packs itself
long g_counts[2];    // types decoded, types left to the host (SHMCOLL_ACCEL_REPORT)

int DeleteDecoded(MPI_Datatype, int, void* attr, void*) {
  if (attr != &g_not_decoded) dt::release(static_cast<dt::Type*>(attr));
  return MPI_SUCCESS;
}

struct Bounds {
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
};

bool HostBounds(MPI_Datatype type, Bounds* b) {
  return PMPI_Type_size(type, &b->size) == MPI_SUCCESS &&
         PMPI_Type_get_extent(type, &b->lb, &b->extent) == MPI_SUCCESS &&
         PMPI_Type_get_true_extent(type, &b->tlb, &b->textent) == MPI_SUCCESS;
}

// The predefined types met so far, as engine types (never freed: the hosts
// never free a predefined handle, so it never names another type).
struct Leaf {
  MPI_Datatype type;
  dt::Type* t;  // nullptr: not decoded
};
std::vector<Leaf> g_leaves;

// A C pair type's two runs, from the C struct it describes.
template <typename T>
std::vector<dt::Block> PairBlocks(MPI_Aint* extent) {
  struct S {
    T a;
    int b;
  };
  *extent = sizeof(S);
  return {{0, sizeof(T)}, {static_cast<int64_t>(offsetof(S, b)), sizeof(int)}};
}

dt::Type* NamedLeaf(MPI_Datatype type) {
  for (const Leaf& l : g_leaves)
    if (l.type == type) return l.t;
  Bounds b;
  dt::Type* t = nullptr;
  if (HostBounds(type, &b) && b.size > 0) {
    std::vector<dt::Block> blocks;
    MPI_Aint extent = b.extent;
    if (b.lb == 0 && b.tlb == 0 && b.extent == b.size && b.textent == b.size)
      blocks = {{0, static_cast<uint64_t>(b.size)}};
    else if (type == MPI_FLOAT_INT)
      blocks = PairBlocks<float>(&extent);
    else if (type == MPI_DOUBLE_INT)
      blocks = PairBlocks<double>(&extent);
    else if (type == MPI_LONG_INT)
      blocks = PairBlocks<long>(&extent);
    else if (type == MPI_SHORT_INT)
      blocks = PairBlocks<short>(&extent);
    else if (type == MPI_2INT)
      blocks = PairBlocks<int>(&extent);
    else if (type == MPI_LONG_DOUBLE_INT)
      blocks = PairBlocks<long double>(&extent);
    uint64_t data = 0;
    for (const dt::Block& k : blocks) data += k.len;
    // (the host must describe the pair as the C struct lays it out)
    if (!blocks.empty() && data == static_cast<uint64_t>(b.size) && extent == b.extent && b.lb == 0 && b.tlb == 0 &&
        b.textent == blocks.back().disp + static_cast<MPI_Aint>(blocks.back().len))
      t = new dt::Type(dt::makeNamed("host type", extent, 1, std::move(blocks)));
  }
  g_leaves.push_back({type, t});
  return t;
}

bool Mul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// One level built from its combiner's arguments and its children (each
// already matching the host); nullptr when this combiner is not decoded.
dt::Type* Construct(int combiner, const std::vector<int>& ints, const std::vector<MPI_Aint>& addrs,
                    const std::vector<dt::Type*>& kids) {
  dt::Type* out = nullptr;
  int rc = -1;
  const dt::Type* old = kids.empty() ? nullptr : kids[0];
  auto u = [](int v) { return static_cast<uint64_t>(v); };
  switch (combiner) {
    case MPI_COMBINER_DUP:
      rc = dt::makeDup(old, &out);
      break;
    case MPI_COMBINER_CONTIGUOUS:
      rc = dt::makeContiguous(u(ints[0]), old, &out);
      break;
    case MPI_COMBINER_VECTOR: {
      int64_t stride;
      if (Mul(ints[2], old->extent(), &stride)) rc = dt::makeHvector(u(ints[0]), u(ints[1]), stride, old, &out);
      break;
    }
    case MPI_COMBINER_HVECTOR:
      rc = dt::makeHvector(u(ints[0]), u(ints[1]), addrs[0], old, &out);
      break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_INDEXED_BLOCK: {
      const bool block = combiner == MPI_COMBINER_INDEXED_BLOCK;
      const int n = ints[0];
      std::vector<uint64_t> lens(n);
      std::vector<int64_t> disps(n);
      bool ok = true;
      for (int i = 0; i < n; ++i) {
        lens[i] = u(block ? ints[1] : ints[1 + i]);
        ok = ok && Mul(ints[(block ? 2 : 1 + n) + i], old->extent(), &disps[i]);
      }
      if (ok) rc = dt::makeHindexed(u(n), lens.data(), disps.data(), old, &out);
      break;
    }
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const bool block = combiner == MPI_COMBINER_HINDEXED_BLOCK;
      const int n = ints[0];
      std::vector<uint64_t> lens(n);
      std::vector<int64_t> disps(addrs.begin(), addrs.begin() + n);
      for (int i = 0; i < n; ++i) lens[i] = u(block ? ints[1] : ints[1 + i]);
      rc = dt::makeHindexed(u(n), lens.data(), disps.data(), old, &out);
      break;
    }
    case MPI_COMBINER_STRUCT: {
      const int n = ints[0];
      std::vector<uint64_t> lens(n);
      std::vector<int64_t> disps(addrs.begin(), addrs.begin() + n);
      for (int i = 0; i < n; ++i) lens[i] = u(ints[1 + i]);
      rc = dt::makeStruct(u(n), lens.data(), disps.data(), kids.data(), &out);
      break;
    }
    case MPI_COMBINER_SUBARRAY: {
      const int nd = ints[0];
      std::vector<int64_t> sizes(nd), subs(nd), starts(nd);
      for (int i = 0; i < nd; ++i) sizes[i] = ints[1 + i], subs[i] = ints[1 + nd + i], starts[i] = ints[1 + 2 * nd + i];
      const int order = ints[1 + 3 * nd] == MPI_ORDER_FORTRAN ? 1 : 0;
      rc = dt::makeSubarray(nd, sizes.data(), subs.data(), starts.data(), order, old, &out);
      break;
    }
    case MPI_COMBINER_DARRAY: {
      const int nd = ints[2];
      std::vector<int64_t> gsizes(nd);
      std::vector<int> distribs(nd), dargs(nd), psizes(nd);
      bool ok = true;
      for (int i = 0; i < nd; ++i) {
        gsizes[i] = ints[3 + i];
        const int d = ints[3 + nd + i];
        distribs[i] = d == MPI_DISTRIBUTE_BLOCK ? 0 : d == MPI_DISTRIBUTE_CYCLIC ? 1 : 2;
        ok = ok && (d == MPI_DISTRIBUTE_BLOCK || d == MPI_DISTRIBUTE_CYCLIC || d == MPI_DISTRIBUTE_NONE);
        const int a = ints[3 + 2 * nd + i];
        dargs[i] = a == MPI_DISTRIBUTE_DFLT_DARG ? -1 : a;
        psizes[i] = ints[3 + 3 * nd + i];
      }
      const int order = ints[3 + 4 * nd] == MPI_ORDER_FORTRAN ? 1 : 0;
      if (ok)
        rc = dt::makeDarray(ints[0], ints[1], nd, gsizes.data(), distribs.data(), dargs.data(), psizes.data(), order,
                            old, &out);
      break;
    }
    case MPI_COMBINER_RESIZED:
      rc = dt::makeResized(old, addrs[0], addrs[1], &out);
      break;
    default:  // the Fortran combiners, and any a host adds
      break;
  }
  if (rc != 0) return nullptr;
  dt::retain(out);
  return out;
}

// The engine's type for `type` with one reference for the caller (none is
// counted for a predefined type); nullptr when it is not decoded.  *named:
// whether `type` is a predefined type (also when the host will not say).
dt::Type* Build(MPI_Datatype type, int depth, bool* named) {
  int ni, na, nd, combiner;
  *named = true;
  if (depth > 64 || PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS) return nullptr;
  *named = combiner == MPI_COMBINER_NAMED;
  if (*named) return NamedLeaf(type);
  std::vector<int> ints(ni);
  std::vector<MPI_Aint> addrs(na);
  std::vector<MPI_Datatype> types(nd);
  if (PMPI_Type_get_contents(type, ni, na, nd, ints.data(), addrs.data(), types.data()) != MPI_SUCCESS) return nullptr;
  std::vector<dt::Type*> kids(nd, nullptr);
  bool ok = nd > 0;
  for (int i = 0; i < nd; ++i) {
    bool kid_named;
    kids[i] = Build(types[i], depth + 1, &kid_named);
    ok = ok && kids[i] != nullptr;
    // (the handles MPI_Type_get_contents gives out for derived types are the caller's to free)
    if (!kid_named) PMPI_Type_free(&types[i]);
  }
  dt::Type* out = ok ? Construct(combiner, ints, addrs, kids) : nullptr;
  for (dt::Type* k : kids) dt::release(k);
  Bounds b;
  if (!out) return nullptr;
  if (!HostBounds(type, &b) || out->size != static_cast<uint64_t>(b.size)) {
    dt::release(out);
    return nullptr;
  }
  if (out->lb != b.lb || out->extent() != b.extent) {
    dt::Type* r = nullptr;
    if (dt::makeResized(out, b.lb, b.extent, &r) == 0) dt::retain(r);
    dt::release(out);
    if (!(out = r)) return nullptr;
  }
  if (out->size > 0 && (out->trueLb != b.tlb || out->trueUb - out->trueLb != b.textent)) {
    dt::release(out);
    return nullptr;
  }
  return out;
}

// SHMCOLL_ACCEL_DECODE=0: every derived type packed by the host (for comparison).
bool Decoding() {
  static const bool on = [] {
    const char* v = std::getenv("SHMCOLL_ACCEL_DECODE");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}

}  // namespace

const shmcoll::dt::Type* Decoded(MPI_Datatype type) {
  if (g_key == MPI_KEYVAL_INVALID &&
      PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, DeleteDecoded, &g_key, nullptr) != MPI_SUCCESS) {
    g_key = MPI_KEYVAL_INVALID;
    return nullptr;
  }
  void* attr = nullptr;
  int found = 0;
  if (PMPI_Type_get_attr(type, g_key, &attr, &found) != MPI_SUCCESS) return nullptr;
  if (found) return attr == &g_not_decoded ? nullptr : static_cast<const dt::Type*>(attr);
  bool named = false;
  dt::Type* t = nullptr;
  int ni, na, nd, combiner;
  if (Decoding())
    t = Build(type, 0, &named);
  else
    named = PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS || combiner == MPI_COMBINER_NAMED;
  if (t) dt::commit(t);
  if (PMPI_Type_set_attr(type, g_key, t ? static_cast<void*>(t) : &g_not_decoded) != MPI_SUCCESS) {
    dt::release(t);
    return nullptr;
  }
  if (!named) ++g_counts[t ? 0 : 1];  // (the report counts derived types only)
  return t;
}

long TypesDecoded(bool decoded) { return g_counts[decoded ? 0 : 1]; }

}  // namespace shmcoll_accel
