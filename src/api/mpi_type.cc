// The MPI datatype functions: constructors, queries, names, addresses,
// element counts, MPI_Pack/MPI_Unpack.  Each entry point checks its
// arguments, converts handles and calls one engine function in dt/.
//
// The MPI-4 large-count forms (MPI_X_c) take MPI_Count where the MPI-3 forms
// take int (counts, block lengths, element displacements) or MPI_Aint (byte
// displacements, strides, bounds).  Both forms of a function are one
// template over the count type C; what differs is kept in the template:
// negative counts are refused the same way, products and sums that could
// leave 64 bits are checked (the engine reports a size past the largest
// MPI_Count as MPI_ERR_COUNT and bounds past the address range as
// MPI_ERR_ARG), and the arguments are recorded for MPI_Type_get_contents as
// the standard lays them out for each form (Args below).
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "api/api.h"
#include "api/attr.h"
#include "dt/datatype.h"
#include "dt/registry.h"
#include "runtime/comm.h"

using namespace shmcoll;
using api::kNoComm;

namespace {

const char* nullOrGarbage(MPI_Datatype h) { return h == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype"; }

// Resolves datatype argument `h` (named `arg`) or returns MPI_ERR_TYPE from the entry point.
#define TYPE_ARG(var, h, fn, arg)                                                                            \
  const dt::Type* var = dt::fromHandle(h);                                                                   \
  SHMCOLL_REQUIRE(var, kNoComm, fn, MPI_ERR_TYPE, "%s = %#x is %s", arg, static_cast<unsigned>(h), nullOrGarbage(h))

#define NOT_NULL(ptr, fn, arg) SHMCOLL_REQUIRE((ptr) != nullptr, kNoComm, fn, MPI_ERR_ARG, "%s is NULL", arg)

#define COUNT_ARG(n, fn, arg) \
  SHMCOLL_REQUIRE((n) >= 0, kNoComm, fn, MPI_ERR_COUNT, "%s = %lld is negative", arg, static_cast<long long>(n))

// A non-negative argument that is not a count in the standard's sense (a
// block length): MPI_ERR_ARG, as Open MPI and MPICH report it.
#define NONNEG_ARG(n, fn, arg) \
  SHMCOLL_REQUIRE((n) >= 0, kNoComm, fn, MPI_ERR_ARG, "%s = %lld is negative", arg, static_cast<long long>(n))

// The constructor arguments MPI_Type_get_contents(_c) returns.  The MPI-3
// forms keep counts and element displacements among the integers and byte
// displacements among the addresses; the large-count forms keep both among
// the large counts and only the remaining int arguments (ndims, order, the
// darray's size, rank, distributions, dargs and process grid) among the
// integers.  Calls go in argument order, so each array is in the order the
// standard gives.
template <class C>
struct Args {
  static constexpr bool kLarge = std::is_same_v<C, MPI_Count>;
  std::vector<int> ints;
  std::vector<int64_t> addrs, counts;
  void i(int v) { ints.push_back(v); }
  void c(C v) {
    if constexpr (kLarge) counts.push_back(v);
    else ints.push_back(v);
  }
  void a(int64_t v) {
    if constexpr (kLarge) counts.push_back(v);
    else addrs.push_back(v);
  }
};

// Registers a freshly built type and records its constructor arguments.
int publish(dt::Type* t, int combiner, std::vector<int> ints, std::vector<int64_t> addrs, MPI_Datatype* out) {
  dt::setContents(t, combiner, std::move(ints), std::move(addrs));
  *out = dt::registerType(t);
  return MPI_SUCCESS;
}
template <class C>
int publish(dt::Type* t, int combiner, Args<C>&& args, MPI_Datatype* out) {
  dt::setContents(t, combiner, std::move(args.ints), std::move(args.addrs), std::move(args.counts));
  *out = dt::registerType(t);
  return MPI_SUCCESS;
}

// Runs a constructor body; memory running out (a count far beyond what the
// arrays hold, say) becomes MPI_ERR_NO_MEM instead of an exception.
template <class F>
int guarded(const char* fn, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return api::raisef(kNoComm, fn, MPI_ERR_NO_MEM, "out of memory while building the datatype");
  } catch (const std::length_error&) {
    return api::raisef(kNoComm, fn, MPI_ERR_NO_MEM, "out of memory while building the datatype");
  }
}

// count * extent of oldtype in bytes (an element stride or displacement).
int elementBytes(const char* fn, const char* arg, int64_t v, const dt::Type* old, int64_t* out) {
  SHMCOLL_REQUIRE(!__builtin_mul_overflow(v, old->extent(), out), kNoComm, fn, MPI_ERR_ARG,
                  "%s = %lld times the extent of oldtype (%lld bytes) leaves the 64-bit address range", arg,
                  static_cast<long long>(v), static_cast<long long>(old->extent()));
  return MPI_SUCCESS;
}

// The engine failed (the reason is recorded): raise it.
int engineError(const char* fn, int rc) { return api::raise(kNoComm, fn, rc); }

// Names set on predefined types (the builtin table itself is immutable).
std::string gBuiltinNames[SHMCOLL_DT_BUILTIN_COUNT];
bool gBuiltinNamed[SHMCOLL_DT_BUILTIN_COUNT];

template <class C>
int checkBlocklens(const char* fn, C count, const C* bl) {
  for (C i = 0; i < count; ++i)
    SHMCOLL_REQUIRE(bl[i] >= 0, kNoComm, fn, MPI_ERR_ARG, "array_of_blocklengths[%lld] = %lld is negative",
                    static_cast<long long>(i), static_cast<long long>(bl[i]));
  return MPI_SUCCESS;
}

// Checks the communicator argument of MPI_Pack/Unpack/Pack_size (used for error reporting only).
int checkComm(const char* fn, MPI_Comm comm) {
  if (api::active() && !rt::comm(comm))
    return api::raisef(comm, fn, MPI_ERR_COMM, "comm = %#x is not a valid communicator%s", static_cast<unsigned>(comm),
                       comm == MPI_COMM_NULL ? " (MPI_COMM_NULL)" : "");
  return MPI_SUCCESS;
}

}  // namespace

// ---- queries ------------------------------------------------------------------

SHMCOLL_API(int, MPI_Type_size, (MPI_Datatype datatype, int* size)) {
  TYPE_ARG(t, datatype, "MPI_Type_size", "datatype");
  NOT_NULL(size, "MPI_Type_size", "size");
  *size = t->size > static_cast<uint64_t>(INT_MAX) ? MPI_UNDEFINED : static_cast<int>(t->size);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_size_c, (MPI_Datatype datatype, MPI_Count* size)) {
  TYPE_ARG(t, datatype, "MPI_Type_size_c", "datatype");
  NOT_NULL(size, "MPI_Type_size_c", "size");
  *size = static_cast<MPI_Count>(t->size);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_size_x, (MPI_Datatype datatype, MPI_Count* size)) {
  TYPE_ARG(t, datatype, "MPI_Type_size_x", "datatype");
  NOT_NULL(size, "MPI_Type_size_x", "size");
  *size = static_cast<MPI_Count>(t->size);
  return MPI_SUCCESS;
}

namespace {
// MPI_Type_get_extent and MPI_Type_get_true_extent in their MPI_Aint, _x and
// _c forms (all 64-bit here: nothing to narrow).
template <class A>
int getExtent(const char* fn, MPI_Datatype datatype, A* lb, A* extent, bool trueBounds) {
  TYPE_ARG(t, datatype, fn, "datatype");
  NOT_NULL(lb, fn, trueBounds ? "true_lb" : "lb");
  NOT_NULL(extent, fn, trueBounds ? "true_extent" : "extent");
  *lb = trueBounds ? t->trueLb : t->lb;
  *extent = trueBounds ? t->trueUb - t->trueLb : t->extent();
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent)) {
  return getExtent("MPI_Type_get_extent", datatype, lb, extent, false);
}

SHMCOLL_API(int, MPI_Type_get_extent_x, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent)) {
  return getExtent("MPI_Type_get_extent_x", datatype, lb, extent, false);
}

SHMCOLL_API(int, MPI_Type_get_extent_c, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent)) {
  return getExtent("MPI_Type_get_extent_c", datatype, lb, extent, false);
}

SHMCOLL_API(int, MPI_Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent)) {
  return getExtent("MPI_Type_get_true_extent", datatype, true_lb, true_extent, true);
}

SHMCOLL_API(int, MPI_Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent)) {
  return getExtent("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent, true);
}

SHMCOLL_API(int, MPI_Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent)) {
  return getExtent("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent, true);
}

// ---- constructors ---------------------------------------------------------------

namespace {

template <class C>
int contiguous(const char* fn, C count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  COUNT_ARG(count, fn, "count");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeContiguous(static_cast<uint64_t>(count), old, &t)) return engineError(fn, rc);
  Args<C> args;
  args.c(count);
  return publish(t, dt::kContiguous, std::move(args), newtype);
}

// vector (stride in elements of oldtype) and hvector (stride in bytes; S is
// MPI_Aint, or MPI_Count in the large-count form).
template <class C, class S>
int vector(const char* fn, C count, C blocklength, S stride, bool bytes, MPI_Datatype oldtype,
           MPI_Datatype* newtype) {
  COUNT_ARG(count, fn, "count");
  NONNEG_ARG(blocklength, fn, "blocklength");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  int64_t strideBytes = stride;
  if (!bytes)
    if (int rc = elementBytes(fn, "stride", stride, old, &strideBytes)) return rc;
  dt::Type* t;
  if (int rc = dt::makeHvector(static_cast<uint64_t>(count), static_cast<uint64_t>(blocklength), strideBytes, old, &t))
    return engineError(fn, rc);
  Args<C> args;
  args.c(count);
  args.c(blocklength);
  if (bytes) args.a(stride);
  else args.c(static_cast<C>(stride));
  return publish(t, bytes ? dt::kHvector : dt::kVector, std::move(args), newtype);
}

// indexed (displacements D = C in elements) and hindexed (D = MPI_Aint, or
// MPI_Count in the large-count form, in bytes).
template <class C, class D>
int indexed(const char* fn, C count, const C* blocklengths, const D* displacements, bool bytes, MPI_Datatype oldtype,
            MPI_Datatype* newtype) {
  COUNT_ARG(count, fn, "count");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) {
    NOT_NULL(blocklengths, fn, "array_of_blocklengths");
    NOT_NULL(displacements, fn, "array_of_displacements");
    if (int rc = checkBlocklens(fn, count, blocklengths)) return rc;
  }
  return guarded(fn, [&] {
    const auto n = static_cast<size_t>(count);
    std::vector<uint64_t> bl(n);
    std::vector<int64_t> d(n);
    Args<C> args;
    args.c(count);
    for (size_t i = 0; i < n; ++i) {
      bl[i] = static_cast<uint64_t>(blocklengths[i]);
      d[i] = displacements[i];
      if (!bytes)
        if (int rc = elementBytes(fn, "an element of array_of_displacements", displacements[i], old, &d[i])) return rc;
      args.c(blocklengths[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      if (bytes) args.a(displacements[i]);
      else args.c(static_cast<C>(displacements[i]));
    }
    dt::Type* t;
    if (int rc = dt::makeHindexed(n, bl.data(), d.data(), old, &t)) return engineError(fn, rc);
    return publish(t, bytes ? dt::kHindexed : dt::kIndexed, std::move(args), newtype);
  });
}

// indexed_block (displacements in elements) and hindexed_block (in bytes).
template <class C, class D>
int indexedBlock(const char* fn, C count, C blocklength, const D* displacements, bool bytes, MPI_Datatype oldtype,
                 MPI_Datatype* newtype) {
  COUNT_ARG(count, fn, "count");
  NONNEG_ARG(blocklength, fn, "blocklength");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) NOT_NULL(displacements, fn, "array_of_displacements");
  return guarded(fn, [&] {
    const auto n = static_cast<size_t>(count);
    std::vector<int64_t> d(n);
    Args<C> args;
    args.c(count);
    args.c(blocklength);
    for (size_t i = 0; i < n; ++i) {
      d[i] = displacements[i];
      if (!bytes)
        if (int rc = elementBytes(fn, "an element of array_of_displacements", displacements[i], old, &d[i])) return rc;
      if (bytes) args.a(displacements[i]);
      else args.c(static_cast<C>(displacements[i]));
    }
    dt::Type* t;
    if (int rc = dt::makeHindexedBlock(n, static_cast<uint64_t>(blocklength), d.data(), old, &t))
      return engineError(fn, rc);
    return publish(t, bytes ? dt::kHindexedBlock : dt::kIndexedBlock, std::move(args), newtype);
  });
}

template <class C, class D>
int structType(const char* fn, C count, const C* blocklengths, const D* displacements, const MPI_Datatype* types,
               MPI_Datatype* newtype) {
  COUNT_ARG(count, fn, "count");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) {
    NOT_NULL(blocklengths, fn, "array_of_blocklengths");
    NOT_NULL(displacements, fn, "array_of_displacements");
    NOT_NULL(types, fn, "array_of_types");
    if (int rc = checkBlocklens(fn, count, blocklengths)) return rc;
  }
  return guarded(fn, [&] {
    const auto n = static_cast<size_t>(count);
    std::vector<uint64_t> bl(n);
    std::vector<int64_t> d(displacements, displacements + n);
    std::vector<const dt::Type*> kids(n);
    Args<C> args;
    args.c(count);
    for (size_t i = 0; i < n; ++i) {
      kids[i] = dt::fromHandle(types[i]);
      SHMCOLL_REQUIRE(kids[i], kNoComm, fn, MPI_ERR_TYPE, "array_of_types[%zu] = %#x is %s", i,
                      static_cast<unsigned>(types[i]), nullOrGarbage(types[i]));
      bl[i] = static_cast<uint64_t>(blocklengths[i]);
      args.c(blocklengths[i]);
    }
    for (size_t i = 0; i < n; ++i) args.a(displacements[i]);
    dt::Type* t;
    if (int rc = dt::makeStruct(n, bl.data(), d.data(), kids.data(), &t)) return engineError(fn, rc);
    return publish(t, dt::kStruct, std::move(args), newtype);
  });
}

// lb and extent: MPI_Aint, or MPI_Count in the large-count form.
template <class C>
int resized(const char* fn, MPI_Datatype oldtype, C lb, C extent, MPI_Datatype* newtype) {
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeResized(old, lb, extent, &t)) return engineError(fn, rc);
  Args<std::conditional_t<std::is_same_v<C, MPI_Count>, MPI_Count, int>> args;
  args.a(lb);
  args.a(extent);
  return publish(t, dt::kResized, std::move(args), newtype);
}

template <class C>
int subarray(const char* fn, int ndims, const C* sizes, const C* subsizes, const C* starts, int order,
             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SHMCOLL_REQUIRE(ndims > 0, kNoComm, fn, MPI_ERR_ARG, "ndims = %d is not positive", ndims);
  NOT_NULL(sizes, fn, "array_of_sizes");
  NOT_NULL(subsizes, fn, "array_of_subsizes");
  NOT_NULL(starts, fn, "array_of_starts");
  SHMCOLL_REQUIRE(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, kNoComm, fn, MPI_ERR_ARG,
                  "order = %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  for (int i = 0; i < ndims; ++i) {
    const long long n = sizes[i], s = subsizes[i], st = starts[i];
    SHMCOLL_REQUIRE(n > 0, kNoComm, fn, MPI_ERR_ARG, "array_of_sizes[%d] = %lld is not positive", i, n);
    SHMCOLL_REQUIRE(s >= 0 && s <= n, kNoComm, fn, MPI_ERR_ARG,
                    "array_of_subsizes[%d] = %lld is outside 0..array_of_sizes[%d] = %lld", i, s, i, n);
    SHMCOLL_REQUIRE(st >= 0 && st <= n - s, kNoComm, fn, MPI_ERR_ARG,
                    "array_of_starts[%d] = %lld puts the subarray (subsize %lld) outside the array (size %lld)", i, st,
                    s, n);
  }
  return guarded(fn, [&] {
    const std::vector<int64_t> sz(sizes, sizes + ndims), sub(subsizes, subsizes + ndims), st(starts, starts + ndims);
    dt::Type* t;
    if (int rc = dt::makeSubarray(ndims, sz.data(), sub.data(), st.data(), order == MPI_ORDER_C ? 0 : 1, old, &t))
      return engineError(fn, rc);
    Args<C> args;
    args.i(ndims);
    for (const C* a : {sizes, subsizes, starts})
      for (int i = 0; i < ndims; ++i) args.c(a[i]);
    args.i(order);
    return publish(t, dt::kSubarray, std::move(args), newtype);
  });
}

template <class C>
int darray(const char* fn, int size, int rank, int ndims, const C* gsizes, const int* distribs, const int* dargs,
           const int* psizes, int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  SHMCOLL_REQUIRE(size > 0, kNoComm, fn, MPI_ERR_ARG, "size = %d is not positive", size);
  SHMCOLL_REQUIRE(rank >= 0 && rank < size, kNoComm, fn, MPI_ERR_RANK, "rank = %d is outside 0..%d", rank, size - 1);
  SHMCOLL_REQUIRE(ndims > 0, kNoComm, fn, MPI_ERR_ARG, "ndims = %d is not positive", ndims);
  NOT_NULL(gsizes, fn, "array_of_gsizes");
  NOT_NULL(distribs, fn, "array_of_distribs");
  NOT_NULL(dargs, fn, "array_of_dargs");
  NOT_NULL(psizes, fn, "array_of_psizes");
  SHMCOLL_REQUIRE(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, kNoComm, fn, MPI_ERR_ARG,
                  "order = %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  return guarded(fn, [&] {
    long long procs = 1;
    std::vector<int> dist(ndims), da(ndims);
    for (int i = 0; i < ndims; ++i) {
      SHMCOLL_REQUIRE(gsizes[i] > 0, kNoComm, fn, MPI_ERR_ARG, "array_of_gsizes[%d] = %lld is not positive", i,
                      static_cast<long long>(gsizes[i]));
      SHMCOLL_REQUIRE(psizes[i] > 0, kNoComm, fn, MPI_ERR_ARG, "array_of_psizes[%d] = %d is not positive", i,
                      psizes[i]);
      // (the product stays below 2^62 until it passes size, an int)
      if (procs <= size) procs *= psizes[i];
      const int di = distribs[i];
      SHMCOLL_REQUIRE(di == MPI_DISTRIBUTE_BLOCK || di == MPI_DISTRIBUTE_CYCLIC || di == MPI_DISTRIBUTE_NONE, kNoComm,
                      fn, MPI_ERR_ARG, "array_of_distribs[%d] = %d is not an MPI_DISTRIBUTE_* value", i, di);
      dist[i] = di == MPI_DISTRIBUTE_BLOCK ? 0 : di == MPI_DISTRIBUTE_CYCLIC ? 1 : 2;
      const int a = dargs[i];
      SHMCOLL_REQUIRE(a == MPI_DISTRIBUTE_DFLT_DARG || a > 0, kNoComm, fn, MPI_ERR_ARG,
                      "array_of_dargs[%d] = %d is neither positive nor MPI_DISTRIBUTE_DFLT_DARG", i, a);
      SHMCOLL_REQUIRE(di != MPI_DISTRIBUTE_NONE || psizes[i] == 1, kNoComm, fn, MPI_ERR_ARG,
                      "array_of_psizes[%d] = %d but dimension %d is MPI_DISTRIBUTE_NONE (needs 1)", i, psizes[i], i);
      da[i] = a == MPI_DISTRIBUTE_DFLT_DARG ? -1 : a;
    }
    SHMCOLL_REQUIRE(procs == size, kNoComm, fn, MPI_ERR_ARG, "the product of array_of_psizes (%s%lld) is not size = %d",
                    procs > size ? "at least " : "", procs, size);
    const std::vector<int64_t> gs(gsizes, gsizes + ndims);
    dt::Type* t;
    if (int rc = dt::makeDarray(size, rank, ndims, gs.data(), dist.data(), da.data(), psizes,
                                order == MPI_ORDER_C ? 0 : 1, old, &t))
      return engineError(fn, rc);
    Args<C> args;
    args.i(size);
    args.i(rank);
    args.i(ndims);
    for (int i = 0; i < ndims; ++i) args.c(gsizes[i]);
    for (const int* a : {distribs, dargs, psizes})
      for (int i = 0; i < ndims; ++i) args.i(a[i]);
    args.i(order);
    return publish(t, dt::kDarray, std::move(args), newtype);
  });
}

}  // namespace

SHMCOLL_API(int, MPI_Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return contiguous("MPI_Type_contiguous", count, oldtype, newtype);
}
SHMCOLL_API(int, MPI_Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return contiguous("MPI_Type_contiguous_c", count, oldtype, newtype);
}

SHMCOLL_API(int, MPI_Type_vector,
            (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return vector("MPI_Type_vector", count, blocklength, stride, false, oldtype, newtype);
}
SHMCOLL_API(int, MPI_Type_vector_c,
            (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return vector("MPI_Type_vector_c", count, blocklength, stride, false, oldtype, newtype);
}

SHMCOLL_API(int, MPI_Type_create_hvector,
            (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return vector("MPI_Type_create_hvector", count, blocklength, stride, true, oldtype, newtype);
}
SHMCOLL_API(int, MPI_Type_create_hvector_c,
            (MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return vector("MPI_Type_create_hvector_c", count, blocklength, stride, true, oldtype, newtype);
}

SHMCOLL_API(int, MPI_Type_indexed,
            (int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return indexed("MPI_Type_indexed", count, array_of_blocklengths, array_of_displacements, false, oldtype, newtype);
}
SHMCOLL_API(int, MPI_Type_indexed_c,
            (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return indexed("MPI_Type_indexed_c", count, array_of_blocklengths, array_of_displacements, false, oldtype, newtype);
}

SHMCOLL_API(int, MPI_Type_create_hindexed,
            (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return indexed("MPI_Type_create_hindexed", count, array_of_blocklengths, array_of_displacements, true, oldtype,
                 newtype);
}
SHMCOLL_API(int, MPI_Type_create_hindexed_c,
            (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return indexed("MPI_Type_create_hindexed_c", count, array_of_blocklengths, array_of_displacements, true, oldtype,
                 newtype);
}

SHMCOLL_API(int, MPI_Type_create_indexed_block,
            (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return indexedBlock("MPI_Type_create_indexed_block", count, blocklength, array_of_displacements, false, oldtype,
                      newtype);
}
SHMCOLL_API(int, MPI_Type_create_indexed_block_c,
            (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return indexedBlock("MPI_Type_create_indexed_block_c", count, blocklength, array_of_displacements, false, oldtype,
                      newtype);
}

SHMCOLL_API(int, MPI_Type_create_hindexed_block,
            (int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return indexedBlock("MPI_Type_create_hindexed_block", count, blocklength, array_of_displacements, true, oldtype,
                      newtype);
}
SHMCOLL_API(int, MPI_Type_create_hindexed_block_c,
            (MPI_Count count, MPI_Count blocklength, const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return indexedBlock("MPI_Type_create_hindexed_block_c", count, blocklength, array_of_displacements, true, oldtype,
                      newtype);
}

SHMCOLL_API(int, MPI_Type_create_struct,
            (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
             const MPI_Datatype array_of_types[], MPI_Datatype* newtype)) {
  return structType("MPI_Type_create_struct", count, array_of_blocklengths, array_of_displacements, array_of_types,
                    newtype);
}
SHMCOLL_API(int, MPI_Type_create_struct_c,
            (MPI_Count count, const MPI_Count array_of_blocklengths[], const MPI_Count array_of_displacements[],
             const MPI_Datatype array_of_types[], MPI_Datatype* newtype)) {
  return structType("MPI_Type_create_struct_c", count, array_of_blocklengths, array_of_displacements, array_of_types,
                    newtype);
}

SHMCOLL_API(int, MPI_Type_create_resized,
            (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype)) {
  return resized("MPI_Type_create_resized", oldtype, lb, extent, newtype);
}
SHMCOLL_API(int, MPI_Type_create_resized_c,
            (MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype* newtype)) {
  return resized("MPI_Type_create_resized_c", oldtype, lb, extent, newtype);
}

SHMCOLL_API(int, MPI_Type_create_subarray,
            (int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[],
             int order, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return subarray("MPI_Type_create_subarray", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                  oldtype, newtype);
}
SHMCOLL_API(int, MPI_Type_create_subarray_c,
            (int ndims, const MPI_Count array_of_sizes[], const MPI_Count array_of_subsizes[],
             const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  return subarray("MPI_Type_create_subarray_c", ndims, array_of_sizes, array_of_subsizes, array_of_starts, order,
                  oldtype, newtype);
}

SHMCOLL_API(int, MPI_Type_create_darray,
            (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
             const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return darray("MPI_Type_create_darray", size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                array_of_psizes, order, oldtype, newtype);
}
SHMCOLL_API(int, MPI_Type_create_darray_c,
            (int size, int rank, int ndims, const MPI_Count array_of_gsizes[], const int array_of_distribs[],
             const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  return darray("MPI_Type_create_darray_c", size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                array_of_psizes, order, oldtype, newtype);
}

SHMCOLL_API(int, MPI_Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_dup";
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeDup(old, &t)) return engineError(fn, rc);
  publish(t, dt::kDup, {}, {}, newtype);
  return api::copyTypeAttrs(oldtype, newtype, fn);  // copy callbacks (api/attr.cc)
}

SHMCOLL_API(int, MPI_Type_commit, (MPI_Datatype * datatype)) {
  NOT_NULL(datatype, "MPI_Type_commit", "datatype");
  TYPE_ARG(t, *datatype, "MPI_Type_commit", "*datatype");
  if (!t->builtin) dt::commit(const_cast<dt::Type*>(t));
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_free, (MPI_Datatype * datatype)) {
  NOT_NULL(datatype, "MPI_Type_free", "datatype");
  TYPE_ARG(t, *datatype, "MPI_Type_free", "*datatype");
  SHMCOLL_REQUIRE(!t->builtin, kNoComm, "MPI_Type_free", MPI_ERR_TYPE, "*datatype = %s is predefined and cannot be freed",
                  t->name.c_str());
  dt::Type* u = const_cast<dt::Type*>(t);
  // The last handle's attributes go first; a failing delete callback leaves
  // the type as it was (api/attr.cc).
  if (u->handleRefs <= 1)
    if (int rc = api::deleteTypeAttrs(*datatype, "MPI_Type_free")) return rc;
  bool last;
  {
    std::lock_guard<std::recursive_mutex> g(dt::registryMutex());
    last = --u->handleRefs <= 0;
  }
  if (last) dt::releaseHandle(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

namespace {

// The MPI-3 forms cannot describe a type built by a large-count constructor
// (its counts do not fit their arguments): MPI-4.0 makes that MPI_ERR_TYPE.
int notLarge(const char* fn, const dt::Type* t) {
  SHMCOLL_REQUIRE(t->counts.empty(), kNoComm, fn, MPI_ERR_TYPE,
                  "datatype was built by a large-count constructor (an MPI_Type_..._c function); its %zu large "
                  "count arguments need %s_c",
                  t->counts.size(), fn);
  return MPI_SUCCESS;
}

// MPI_Type_get_envelope(_c); numLarge is null in the MPI-3 form.
template <class C>
int envelope(const char* fn, MPI_Datatype datatype, C* numIntegers, C* numAddresses, C* numLarge, C* numDatatypes,
             int* combiner) {
  TYPE_ARG(t, datatype, fn, "datatype");
  NOT_NULL(numIntegers, fn, "num_integers");
  NOT_NULL(numAddresses, fn, "num_addresses");
  if constexpr (std::is_same_v<C, MPI_Count>) NOT_NULL(numLarge, fn, "num_large_counts");
  else if (int rc = notLarge(fn, t)) return rc;
  NOT_NULL(numDatatypes, fn, "num_datatypes");
  NOT_NULL(combiner, fn, "combiner");
  *numIntegers = static_cast<C>(t->ints.size());
  *numAddresses = static_cast<C>(t->addrs.size());
  if (numLarge) *numLarge = static_cast<C>(t->counts.size());
  *numDatatypes = t->builtin ? 0 : static_cast<C>(t->kids.size());
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

// MPI_Type_get_contents(_c); maxLarge and largeCounts unused in the MPI-3 form.
template <class C>
int contents(const char* fn, MPI_Datatype datatype, C maxIntegers, C maxAddresses, C maxLarge, C maxDatatypes,
             int* integers, MPI_Aint* addresses, MPI_Count* largeCounts, MPI_Datatype* datatypes) {
  constexpr bool kLarge = std::is_same_v<C, MPI_Count>;
  TYPE_ARG(t, datatype, fn, "datatype");
  SHMCOLL_REQUIRE(!t->builtin, kNoComm, fn, MPI_ERR_TYPE, "datatype = %s is predefined (combiner MPI_COMBINER_NAMED)",
                  t->name.c_str());
  if (!kLarge)
    if (int rc = notLarge(fn, t)) return rc;
  auto room = [&](const char* arg, C max, size_t have) {
    SHMCOLL_REQUIRE(max >= 0 && static_cast<uint64_t>(max) >= have, kNoComm, fn, MPI_ERR_ARG,
                    "%s = %lld but the type has %zu", arg, static_cast<long long>(max), have);
    return MPI_SUCCESS;
  };
  if (int rc = room("max_integers", maxIntegers, t->ints.size())) return rc;
  if (int rc = room("max_addresses", maxAddresses, t->addrs.size())) return rc;
  if (kLarge)
    if (int rc = room("max_large_counts", maxLarge, t->counts.size())) return rc;
  if (int rc = room("max_datatypes", maxDatatypes, t->kids.size())) return rc;
  if (!t->ints.empty()) NOT_NULL(integers, fn, "array_of_integers");
  if (!t->addrs.empty()) NOT_NULL(addresses, fn, "array_of_addresses");
  if (!t->counts.empty()) NOT_NULL(largeCounts, fn, "array_of_large_counts");
  if (!t->kids.empty()) NOT_NULL(datatypes, fn, "array_of_datatypes");
  for (size_t i = 0; i < t->ints.size(); ++i) integers[i] = t->ints[i];
  for (size_t i = 0; i < t->addrs.size(); ++i) addresses[i] = t->addrs[i];
  for (size_t i = 0; i < t->counts.size(); ++i) largeCounts[i] = t->counts[i];
  // Derived children come back as handles the caller must free: the live
  // handle with one more free owed, or a new handle if the user freed it.
  std::lock_guard<std::recursive_mutex> g(dt::registryMutex());
  for (size_t i = 0; i < t->kids.size(); ++i) {
    dt::Type* k = t->kids[i];
    if (k->builtin) {
      datatypes[i] = k->handle;
    } else if (k->handle) {
      ++k->handleRefs;
      datatypes[i] = k->handle;
    } else {
      datatypes[i] = dt::registerType(k);
    }
  }
  return MPI_SUCCESS;
}

}  // namespace

SHMCOLL_API(int, MPI_Type_get_envelope,
            (MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes, int* combiner)) {
  return envelope<int>("MPI_Type_get_envelope", datatype, num_integers, num_addresses, nullptr, num_datatypes,
                       combiner);
}

SHMCOLL_API(int, MPI_Type_get_envelope_c,
            (MPI_Datatype datatype, MPI_Count* num_integers, MPI_Count* num_addresses, MPI_Count* num_large_counts,
             MPI_Count* num_datatypes, int* combiner)) {
  return envelope<MPI_Count>("MPI_Type_get_envelope_c", datatype, num_integers, num_addresses, num_large_counts,
                             num_datatypes, combiner);
}

SHMCOLL_API(int, MPI_Type_get_contents,
            (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[],
             MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])) {
  return contents<int>("MPI_Type_get_contents", datatype, max_integers, max_addresses, 0, max_datatypes,
                       array_of_integers, array_of_addresses, nullptr, array_of_datatypes);
}

SHMCOLL_API(int, MPI_Type_get_contents_c,
            (MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses, MPI_Count max_large_counts,
             MPI_Count max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])) {
  return contents<MPI_Count>("MPI_Type_get_contents_c", datatype, max_integers, max_addresses, max_large_counts,
                             max_datatypes, array_of_integers, array_of_addresses, array_of_large_counts,
                             array_of_datatypes);
}

// ---- names --------------------------------------------------------------------

SHMCOLL_API(int, MPI_Type_set_name, (MPI_Datatype datatype, const char* type_name)) {
  TYPE_ARG(t, datatype, "MPI_Type_set_name", "datatype");
  NOT_NULL(type_name, "MPI_Type_set_name", "type_name");
  std::string name(type_name, strnlen(type_name, MPI_MAX_OBJECT_NAME - 1));
  if (t->builtin) {
    const int id = datatype & 0xff;
    gBuiltinNames[id] = std::move(name);
    gBuiltinNamed[id] = true;
  } else {
    const_cast<dt::Type*>(t)->name = std::move(name);
  }
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_get_name, (MPI_Datatype datatype, char* type_name, int* resultlen)) {
  TYPE_ARG(t, datatype, "MPI_Type_get_name", "datatype");
  NOT_NULL(type_name, "MPI_Type_get_name", "type_name");
  NOT_NULL(resultlen, "MPI_Type_get_name", "resultlen");
  const std::string& name = (t->builtin && gBuiltinNamed[datatype & 0xff]) ? gBuiltinNames[datatype & 0xff] : t->name;
  const size_t n = std::min<size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(type_name, name.data(), n);
  type_name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

// ---- addresses ------------------------------------------------------------------

SHMCOLL_API(int, MPI_Get_address, (const void* location, MPI_Aint* address)) {
  NOT_NULL(address, "MPI_Get_address", "address");
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

SHMCOLL_API(MPI_Aint, MPI_Aint_add, (MPI_Aint base, MPI_Aint disp)) {
  return static_cast<MPI_Aint>(static_cast<unsigned long>(base) + static_cast<unsigned long>(disp));
}

SHMCOLL_API(MPI_Aint, MPI_Aint_diff, (MPI_Aint addr1, MPI_Aint addr2)) {
  return static_cast<MPI_Aint>(static_cast<unsigned long>(addr1) - static_cast<unsigned long>(addr2));
}

// ---- element counts ---------------------------------------------------------------

namespace {
// Basic elements in the bytes a status reports; -1 when not a whole number.
int elementsOf(const char* fn, const MPI_Status* status, MPI_Datatype datatype, MPI_Count* out) {
  NOT_NULL(status, fn, "status");
  TYPE_ARG(t, datatype, fn, "datatype");
  bool exact = true;
  const uint64_t bytes = status->shmcoll_count_ > 0 ? static_cast<uint64_t>(status->shmcoll_count_) : 0;
  const uint64_t e = dt::elementsIn(t, bytes, &exact);
  *out = exact ? static_cast<MPI_Count>(e) : -1;
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count)) {
  NOT_NULL(count, "MPI_Get_elements", "count");
  MPI_Count e = 0;
  if (int rc = elementsOf("MPI_Get_elements", status, datatype, &e)) return rc;
  *count = (e < 0 || e > INT_MAX) ? MPI_UNDEFINED : static_cast<int>(e);
  return MPI_SUCCESS;
}

namespace {
// MPI_Get_elements_x and its MPI-4 name MPI_Get_elements_c.
int elementsCount(const char* fn, const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  NOT_NULL(count, fn, "count");
  MPI_Count e = 0;
  if (int rc = elementsOf(fn, status, datatype, &e)) return rc;
  *count = e < 0 ? MPI_UNDEFINED : e;
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Get_elements_x, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count)) {
  return elementsCount("MPI_Get_elements_x", status, datatype, count);
}

SHMCOLL_API(int, MPI_Get_elements_c, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count)) {
  return elementsCount("MPI_Get_elements_c", status, datatype, count);
}

namespace {
// MPI_Get_count and MPI_Get_count_c: whole elements of `datatype` in the
// received bytes, MPI_UNDEFINED when they are not whole or exceed `limit`.
template <class C>
int getCount(const char* fn, const MPI_Status* status, MPI_Datatype datatype, C* count, uint64_t limit) {
  NOT_NULL(status, fn, "status");
  NOT_NULL(count, fn, "count");
  TYPE_ARG(t, datatype, fn, "datatype");
  if (t->size == 0) {
    *count = 0;  // MPI: a zero-size type gives a count of zero
    return MPI_SUCCESS;
  }
  const MPI_Count bytes = status->shmcoll_count_;
  const uint64_t b = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  *count = (b % t->size || b / t->size > limit) ? MPI_UNDEFINED : static_cast<C>(b / t->size);
  return MPI_SUCCESS;
}
}  // namespace

SHMCOLL_API(int, MPI_Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count)) {
  return getCount("MPI_Get_count", status, datatype, count, static_cast<uint64_t>(INT_MAX));
}

SHMCOLL_API(int, MPI_Get_count_c, (const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count)) {
  return getCount("MPI_Get_count_c", status, datatype, count, static_cast<uint64_t>(INT64_MAX));
}

// ---- pack / unpack ---------------------------------------------------------------------

namespace {

// incount elements of `t` in bytes, or an MPI_ERR_COUNT naming the count.
template <class C>
int streamBytes(const char* fn, MPI_Comm comm, const char* arg, C count, const dt::Type* t, uint64_t* bytes) {
  SHMCOLL_REQUIRE(!__builtin_mul_overflow(static_cast<uint64_t>(count), t->size, bytes) &&
                      *bytes <= static_cast<uint64_t>(INT64_MAX),
                  comm, fn, MPI_ERR_COUNT, "%s = %lld elements of %llu bytes exceed the largest MPI_Count", arg,
                  static_cast<long long>(count), static_cast<unsigned long long>(t->size));
  return MPI_SUCCESS;
}

int committedType(const char* fn, MPI_Comm comm, MPI_Datatype datatype, const dt::Type** out) {
  const dt::Type* t = dt::fromHandle(datatype);
  SHMCOLL_REQUIRE(t, comm, fn, MPI_ERR_TYPE, "datatype = %#x is %s", static_cast<unsigned>(datatype),
                  nullOrGarbage(datatype));
  SHMCOLL_REQUIRE(t->committed, comm, fn, MPI_ERR_TYPE,
                  "datatype is a derived datatype that was not committed (MPI_Type_commit)");
  *out = t;
  return MPI_SUCCESS;
}

// MPI_Pack and MPI_Unpack, int or MPI_Count sizes and positions (the packed
// format is the raw data bytes, no header).
template <class C>
int pack(const char* fn, const void* inbuf, C incount, MPI_Datatype datatype, void* outbuf, C outsize, C* position,
         MPI_Comm comm) {
  if (int rc = checkComm(fn, comm)) return rc;
  SHMCOLL_REQUIRE(incount >= 0, comm, fn, MPI_ERR_COUNT, "incount = %lld is negative", static_cast<long long>(incount));
  const dt::Type* t = nullptr;
  if (int rc = committedType(fn, comm, datatype, &t)) return rc;
  SHMCOLL_REQUIRE(position, comm, fn, MPI_ERR_ARG, "position is NULL");
  SHMCOLL_REQUIRE(outsize >= 0, comm, fn, MPI_ERR_ARG, "outsize = %lld is negative", static_cast<long long>(outsize));
  SHMCOLL_REQUIRE(*position >= 0 && *position <= outsize, comm, fn, MPI_ERR_ARG,
                  "*position = %lld is outside 0..outsize = %lld", static_cast<long long>(*position),
                  static_cast<long long>(outsize));
  uint64_t bytes;
  if (int rc = streamBytes(fn, comm, "incount", incount, t, &bytes)) return rc;
  SHMCOLL_REQUIRE(bytes <= static_cast<uint64_t>(outsize - *position), comm, fn, MPI_ERR_TRUNCATE,
                  "packing %llu bytes at position %lld overflows outsize = %lld", (unsigned long long)bytes,
                  static_cast<long long>(*position), static_cast<long long>(outsize));
  if (bytes) {
    SHMCOLL_REQUIRE(outbuf, comm, fn, MPI_ERR_BUFFER, "outbuf is NULL");
    dt::Cursor c(inbuf, static_cast<uint64_t>(incount), t);
    c.pack(0, static_cast<char*>(outbuf) + *position, bytes);
  }
  *position += static_cast<C>(bytes);
  return MPI_SUCCESS;
}

template <class C>
int unpack(const char* fn, const void* inbuf, C insize, C* position, void* outbuf, C outcount, MPI_Datatype datatype,
           MPI_Comm comm) {
  if (int rc = checkComm(fn, comm)) return rc;
  SHMCOLL_REQUIRE(outcount >= 0, comm, fn, MPI_ERR_COUNT, "outcount = %lld is negative",
                  static_cast<long long>(outcount));
  const dt::Type* t = nullptr;
  if (int rc = committedType(fn, comm, datatype, &t)) return rc;
  SHMCOLL_REQUIRE(position, comm, fn, MPI_ERR_ARG, "position is NULL");
  SHMCOLL_REQUIRE(insize >= 0, comm, fn, MPI_ERR_ARG, "insize = %lld is negative", static_cast<long long>(insize));
  SHMCOLL_REQUIRE(*position >= 0 && *position <= insize, comm, fn, MPI_ERR_ARG,
                  "*position = %lld is outside 0..insize = %lld", static_cast<long long>(*position),
                  static_cast<long long>(insize));
  uint64_t bytes;
  if (int rc = streamBytes(fn, comm, "outcount", outcount, t, &bytes)) return rc;
  SHMCOLL_REQUIRE(bytes <= static_cast<uint64_t>(insize - *position), comm, fn, MPI_ERR_TRUNCATE,
                  "unpacking %llu bytes at position %lld runs past insize = %lld", (unsigned long long)bytes,
                  static_cast<long long>(*position), static_cast<long long>(insize));
  if (bytes) {
    SHMCOLL_REQUIRE(inbuf, comm, fn, MPI_ERR_BUFFER, "inbuf is NULL");
    dt::Cursor c(outbuf, static_cast<uint64_t>(outcount), t);
    c.unpack(0, static_cast<const char*>(inbuf) + *position, bytes);
  }
  *position += static_cast<C>(bytes);
  return MPI_SUCCESS;
}

// MPI_Pack_size(_c): an int result that does not fit is MPI_ERR_VALUE_TOO_LARGE
// (the value exists, the argument cannot hold it); a product past the
// largest MPI_Count is MPI_ERR_COUNT.
template <class C>
int packSize(const char* fn, C incount, MPI_Datatype datatype, MPI_Comm comm, C* size) {
  if (int rc = checkComm(fn, comm)) return rc;
  SHMCOLL_REQUIRE(incount >= 0, comm, fn, MPI_ERR_COUNT, "incount = %lld is negative", static_cast<long long>(incount));
  const dt::Type* t = dt::fromHandle(datatype);
  SHMCOLL_REQUIRE(t, comm, fn, MPI_ERR_TYPE, "datatype = %#x is %s", static_cast<unsigned>(datatype),
                  nullOrGarbage(datatype));
  SHMCOLL_REQUIRE(size, comm, fn, MPI_ERR_ARG, "size is NULL");
  uint64_t bytes;
  if (int rc = streamBytes(fn, comm, "incount", incount, t, &bytes)) return rc;
  SHMCOLL_REQUIRE(bytes <= static_cast<uint64_t>(std::numeric_limits<C>::max()), comm, fn, MPI_ERR_VALUE_TOO_LARGE,
                  "%lld elements of %llu bytes do not fit in an int", static_cast<long long>(incount),
                  (unsigned long long)t->size);
  *size = static_cast<C>(bytes);
  return MPI_SUCCESS;
}

}  // namespace

SHMCOLL_API(int, MPI_Pack,
            (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
             MPI_Comm comm)) {
  return pack("MPI_Pack", inbuf, incount, datatype, outbuf, outsize, position, comm);
}

SHMCOLL_API(int, MPI_Pack_c,
            (const void* inbuf, MPI_Count incount, MPI_Datatype datatype, void* outbuf, MPI_Count outsize,
             MPI_Count* position, MPI_Comm comm)) {
  return pack("MPI_Pack_c", inbuf, incount, datatype, outbuf, outsize, position, comm);
}

SHMCOLL_API(int, MPI_Unpack,
            (const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
             MPI_Comm comm)) {
  return unpack("MPI_Unpack", inbuf, insize, position, outbuf, outcount, datatype, comm);
}

SHMCOLL_API(int, MPI_Unpack_c,
            (const void* inbuf, MPI_Count insize, MPI_Count* position, void* outbuf, MPI_Count outcount,
             MPI_Datatype datatype, MPI_Comm comm)) {
  return unpack("MPI_Unpack_c", inbuf, insize, position, outbuf, outcount, datatype, comm);
}

SHMCOLL_API(int, MPI_Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size)) {
  return packSize("MPI_Pack_size", incount, datatype, comm, size);
}

SHMCOLL_API(int, MPI_Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count* size)) {
  return packSize("MPI_Pack_size_c", incount, datatype, comm, size);
}
