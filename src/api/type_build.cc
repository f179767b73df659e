// The datatype constructors (contiguous, vector, hvector, indexed, hindexed,
// indexed_block, hindexed_block, struct, resized, subarray, darray), and
// MPI_Type_dup, MPI_Type_commit and MPI_Type_free.  The generated entry
// points have checked count, block length, oldtype and newtype; each
// constructor checks the rest and calls one engine function in dt/.
//
// The MPI-4 large-count forms (MPI_X_c) take MPI_Count where the MPI-3 forms
// take int (counts, block lengths, element displacements) or MPI_Aint (byte
// displacements, strides, bounds).  Both forms of a constructor are one
// template over the count type C; products and sums that could leave 64 bits
// are checked (the engine reports a size past the largest MPI_Count as
// MPI_ERR_COUNT and bounds past the address range as MPI_ERR_ARG), and the
// arguments are recorded for MPI_Type_get_contents as the standard lays them
// out for each form (Args below).
#include <cstdint>
#include <mutex>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "runtime/types.h"
#include "api/attr.h"
#include "api/check.h"
#include "dt/datatype.h"

namespace shmcoll::api::impl {

namespace {

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

// Registers a freshly built type (or raises the engine's failure to build
// it) and records its constructor arguments.
template <class C>
int publish(const Call& call, int rc, dt::Type* t, int combiner, Args<C>&& args, MPI_Datatype* out) {
  if (rc) return check::engine(call, rc);
  dt::setContents(t, combiner, std::move(args.ints), std::move(args.addrs), std::move(args.counts));
  *out = rt::registerType(t);
  return MPI_SUCCESS;
}

// Runs a constructor body; memory running out (a count far beyond what the
// arrays hold, say) becomes MPI_ERR_NO_MEM instead of an exception.
template <class F>
int guarded(const Call& call, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return check::fail(call, MPI_ERR_NO_MEM, "out of memory while building the datatype");
  } catch (const std::length_error&) {
    return check::fail(call, MPI_ERR_NO_MEM, "out of memory while building the datatype");
  }
}

// count * extent of oldtype in bytes (an element stride or displacement).
int elementBytes(const Call& call, const char* arg, int64_t v, const dt::Type* old, int64_t* out) {
  if (!__builtin_mul_overflow(v, old->extent(), out)) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_ARG,
                     "%s = %lld times the extent of oldtype (%lld bytes) leaves the 64-bit address range", arg,
                     static_cast<long long>(v), static_cast<long long>(old->extent()));
}

// The arrays of an indexed or struct type, read when count is positive: not
// NULL, no block length negative (MPI_ERR_ARG, as for `blocklength`).
template <class C, class D>
int blockArrays(const Call& call, C count, const C* blocklengths, const D* displacements) {
  if (count <= 0) return MPI_SUCCESS;
  SHMCOLL_CHECK(check::notNull(call, "array_of_blocklengths", blocklengths));
  SHMCOLL_CHECK(check::notNull(call, "array_of_displacements", displacements));
  for (C i = 0; i < count; ++i)
    if (blocklengths[i] < 0)
      return check::fail(call, MPI_ERR_ARG, "array_of_blocklengths[%lld] = %lld is negative", static_cast<long long>(i),
                         static_cast<long long>(blocklengths[i]));
  return MPI_SUCCESS;
}

// A byte displacement, or an element displacement in bytes of oldtype.
template <bool kBytes, class D>
int displacement(const Call& call, D v, const dt::Type* old, int64_t* out) {
  *out = v;
  if constexpr (kBytes) return MPI_SUCCESS;
  return elementBytes(call, "an element of array_of_displacements", v, old, out);
}

// An order argument of subarray and darray (MPI_ERR_ARG).
int order(const Call& call, int order) {
  if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_ARG, "order = %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
}

int positive(const Call& call, const char* arg, int v) {
  return v > 0 ? MPI_SUCCESS : check::fail(call, MPI_ERR_ARG, "%s = %d is not positive", arg, v);
}

}  // namespace

template <class C>
int contiguous(Call& call, C count, const dt::Type* old, MPI_Datatype* newtype) {
  dt::Type* t = nullptr;
  const int rc = dt::makeContiguous(static_cast<uint64_t>(count), old, &t);
  Args<C> args;
  args.c(count);
  return publish(call, rc, t, dt::kContiguous, std::move(args), newtype);
}

// vector (stride in elements of oldtype) and hvector (kBytes: stride in bytes;
// S is MPI_Aint, or MPI_Count in the large-count form).
template <bool kBytes, class C, class S>
int vector(Call& call, C count, C blocklength, S stride, const dt::Type* old, MPI_Datatype* newtype) {
  int64_t strideBytes = stride;
  if (!kBytes) SHMCOLL_CHECK(elementBytes(call, "stride", stride, old, &strideBytes));
  dt::Type* t = nullptr;
  const int rc =
      dt::makeHvector(static_cast<uint64_t>(count), static_cast<uint64_t>(blocklength), strideBytes, old, &t);
  Args<C> args;
  args.c(count);
  args.c(blocklength);
  if (kBytes) args.a(stride);
  else args.c(static_cast<C>(stride));
  return publish(call, rc, t, kBytes ? dt::kHvector : dt::kVector, std::move(args), newtype);
}

// indexed (displacements in elements) and hindexed (kBytes: in bytes; D is
// MPI_Aint, or MPI_Count in the large-count form).
template <bool kBytes, class C, class D>
int indexed(Call& call, C count, const C* blocklengths, const D* displacements, const dt::Type* old,
            MPI_Datatype* newtype) {
  SHMCOLL_CHECK(blockArrays(call, count, blocklengths, displacements));
  return guarded(call, [&] {
    const auto n = static_cast<size_t>(count);
    std::vector<uint64_t> bl(n);
    std::vector<int64_t> d(n);
    Args<C> args;
    args.c(count);
    for (size_t i = 0; i < n; ++i) {
      bl[i] = static_cast<uint64_t>(blocklengths[i]);
      SHMCOLL_CHECK(displacement<kBytes>(call, displacements[i], old, &d[i]));
      args.c(blocklengths[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      if (kBytes) args.a(displacements[i]);
      else args.c(static_cast<C>(displacements[i]));
    }
    dt::Type* t = nullptr;
    const int rc = dt::makeHindexed(n, bl.data(), d.data(), old, &t);
    return publish(call, rc, t, kBytes ? dt::kHindexed : dt::kIndexed, std::move(args), newtype);
  });
}

// indexed_block (displacements in elements) and hindexed_block (kBytes: in bytes).
template <bool kBytes, class C, class D>
int indexedBlock(Call& call, C count, C blocklength, const D* displacements, const dt::Type* old,
                 MPI_Datatype* newtype) {
  if (count > 0) SHMCOLL_CHECK(check::notNull(call, "array_of_displacements", displacements));
  return guarded(call, [&] {
    const auto n = static_cast<size_t>(count);
    std::vector<int64_t> d(n);
    Args<C> args;
    args.c(count);
    args.c(blocklength);
    for (size_t i = 0; i < n; ++i) {
      SHMCOLL_CHECK(displacement<kBytes>(call, displacements[i], old, &d[i]));
      if (kBytes) args.a(displacements[i]);
      else args.c(static_cast<C>(displacements[i]));
    }
    dt::Type* t = nullptr;
    const int rc = dt::makeHindexedBlock(n, static_cast<uint64_t>(blocklength), d.data(), old, &t);
    return publish(call, rc, t, kBytes ? dt::kHindexedBlock : dt::kIndexedBlock, std::move(args), newtype);
  });
}

template <class C, class D>
int structType(Call& call, C count, const C* blocklengths, const D* displacements, const MPI_Datatype* types,
               MPI_Datatype* newtype) {
  SHMCOLL_CHECK(blockArrays(call, count, blocklengths, displacements));
  if (count > 0) SHMCOLL_CHECK(check::notNull(call, "array_of_types", types));
  return guarded(call, [&] {
    const auto n = static_cast<size_t>(count);
    std::vector<uint64_t> bl(n);
    std::vector<int64_t> d(displacements, displacements + n);
    std::vector<const dt::Type*> kids(n);
    Args<C> args;
    args.c(count);
    for (size_t i = 0; i < n; ++i) {
      SHMCOLL_CHECK(check::typeAt(call, "array_of_types", i, types[i], &kids[i]));
      bl[i] = static_cast<uint64_t>(blocklengths[i]);
      args.c(blocklengths[i]);
    }
    for (size_t i = 0; i < n; ++i) args.a(displacements[i]);
    dt::Type* t = nullptr;
    const int rc = dt::makeStruct(n, bl.data(), d.data(), kids.data(), &t);
    return publish(call, rc, t, dt::kStruct, std::move(args), newtype);
  });
}

// lb and extent: MPI_Aint, or MPI_Count in the large-count form.
template <class C>
int resized(Call& call, const dt::Type* old, C lb, C extent, MPI_Datatype* newtype) {
  dt::Type* t = nullptr;
  const int rc = dt::makeResized(old, lb, extent, &t);
  Args<std::conditional_t<std::is_same_v<C, MPI_Count>, MPI_Count, int>> args;
  args.a(lb);
  args.a(extent);
  return publish(call, rc, t, dt::kResized, std::move(args), newtype);
}

template <class C>
int subarray(Call& call, int ndims, const C* sizes, const C* subsizes, const C* starts, int ord,
             const dt::Type* old, MPI_Datatype* newtype) {
  SHMCOLL_CHECK(positive(call, "ndims", ndims));
  SHMCOLL_CHECK(order(call, ord));
  for (int i = 0; i < ndims; ++i) {
    const long long n = sizes[i], s = subsizes[i], st = starts[i];
    if (n <= 0) return check::fail(call, MPI_ERR_ARG, "array_of_sizes[%d] = %lld is not positive", i, n);
    if (s < 0 || s > n)
      return check::fail(call, MPI_ERR_ARG, "array_of_subsizes[%d] = %lld is outside 0..array_of_sizes[%d] = %lld",
                         i, s, i, n);
    if (st < 0 || st > n - s)
      return check::fail(call, MPI_ERR_ARG,
                         "array_of_starts[%d] = %lld puts the subarray (subsize %lld) outside the array (size %lld)", i,
                         st, s, n);
  }
  return guarded(call, [&] {
    const std::vector<int64_t> sz(sizes, sizes + ndims), sub(subsizes, subsizes + ndims), st(starts, starts + ndims);
    dt::Type* t = nullptr;
    const int rc = dt::makeSubarray(ndims, sz.data(), sub.data(), st.data(), ord == MPI_ORDER_C ? 0 : 1, old, &t);
    Args<C> args;
    args.i(ndims);
    for (const C* a : {sizes, subsizes, starts})
      for (int i = 0; i < ndims; ++i) args.c(a[i]);
    args.i(ord);
    return publish(call, rc, t, dt::kSubarray, std::move(args), newtype);
  });
}

template <class C>
int darray(Call& call, int size, int rank, int ndims, const C* gsizes, const int* distribs, const int* dargs,
           const int* psizes, int ord, const dt::Type* old, MPI_Datatype* newtype) {
  SHMCOLL_CHECK(positive(call, "size", size));
  if (rank < 0 || rank >= size) return check::fail(call, MPI_ERR_RANK, "rank = %d is outside 0..%d", rank, size - 1);
  SHMCOLL_CHECK(positive(call, "ndims", ndims));
  SHMCOLL_CHECK(order(call, ord));
  return guarded(call, [&] {
    long long procs = 1;
    std::vector<int> dist(ndims), da(ndims);
    for (int i = 0; i < ndims; ++i) {
      if (gsizes[i] <= 0)
        return check::fail(call, MPI_ERR_ARG, "array_of_gsizes[%d] = %lld is not positive", i,
                           static_cast<long long>(gsizes[i]));
      if (psizes[i] <= 0)
        return check::fail(call, MPI_ERR_ARG, "array_of_psizes[%d] = %d is not positive", i, psizes[i]);
      // (the product stays below 2^62 until it passes size, an int)
      if (procs <= size) procs *= psizes[i];
      const int di = distribs[i];
      if (di != MPI_DISTRIBUTE_BLOCK && di != MPI_DISTRIBUTE_CYCLIC && di != MPI_DISTRIBUTE_NONE)
        return check::fail(call, MPI_ERR_ARG, "array_of_distribs[%d] = %d is not an MPI_DISTRIBUTE_* value", i, di);
      dist[i] = di == MPI_DISTRIBUTE_BLOCK ? 0 : di == MPI_DISTRIBUTE_CYCLIC ? 1 : 2;
      const int a = dargs[i];
      if (a != MPI_DISTRIBUTE_DFLT_DARG && a <= 0)
        return check::fail(call, MPI_ERR_ARG,
                           "array_of_dargs[%d] = %d is neither positive nor MPI_DISTRIBUTE_DFLT_DARG", i, a);
      if (di == MPI_DISTRIBUTE_NONE && psizes[i] != 1)
        return check::fail(call, MPI_ERR_ARG,
                           "array_of_psizes[%d] = %d but dimension %d is MPI_DISTRIBUTE_NONE (needs 1)", i, psizes[i],
                           i);
      da[i] = a == MPI_DISTRIBUTE_DFLT_DARG ? -1 : a;
    }
    if (procs != size)
      return check::fail(call, MPI_ERR_ARG, "the product of array_of_psizes (%s%lld) is not size = %d",
                         procs > size ? "at least " : "", procs, size);
    const std::vector<int64_t> gs(gsizes, gsizes + ndims);
    dt::Type* t = nullptr;
    const int rc = dt::makeDarray(size, rank, ndims, gs.data(), dist.data(), da.data(), psizes,
                                  ord == MPI_ORDER_C ? 0 : 1, old, &t);
    Args<C> args;
    args.i(size);
    args.i(rank);
    args.i(ndims);
    for (int i = 0; i < ndims; ++i) args.c(gsizes[i]);
    for (const int* a : {distribs, dargs, psizes})
      for (int i = 0; i < ndims; ++i) args.i(a[i]);
    args.i(ord);
    return publish(call, rc, t, dt::kDarray, std::move(args), newtype);
  });
}

int typeDup(Call& call, const dt::Type* old, MPI_Datatype* newtype) {
  dt::Type* t = nullptr;
  const int rc = dt::makeDup(old, &t);
  SHMCOLL_CHECK(publish(call, rc, t, dt::kDup, Args<int>{}, newtype));
  return copyTypeAttrs(old->handle, newtype, call.fn);  // copy callbacks (api/attr.cc)
}

int typeCommit(Call& call, MPI_Datatype* datatype) {
  const dt::Type* t = nullptr;
  SHMCOLL_CHECK(check::type(call, "*datatype", *datatype, &t));
  if (!t->builtin) dt::commit(const_cast<dt::Type*>(t));
  return MPI_SUCCESS;
}

int typeFree(Call& call, MPI_Datatype* datatype) {
  const dt::Type* t = nullptr;
  SHMCOLL_CHECK(check::type(call, "*datatype", *datatype, &t));
  if (t->builtin)
    return check::fail(call, MPI_ERR_TYPE, "*datatype = %s is predefined and cannot be freed", t->name.c_str());
  dt::Type* u = const_cast<dt::Type*>(t);
  // The last handle's attributes go first; a failing delete callback leaves
  // the type as it was (api/attr.cc).
  if (u->handleRefs <= 1) SHMCOLL_CHECK(deleteTypeAttrs(*datatype, call.fn));
  bool last;
  {
    std::lock_guard<std::recursive_mutex> g(rt::registryMutex());
    last = --u->handleRefs <= 0;
  }
  if (last) rt::releaseHandle(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_type_build.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/type_build.txt)
