// The MPI datatype functions: constructors, queries, names, addresses,
// element counts, MPI_Pack/MPI_Unpack.  Each entry point checks its
// arguments, converts handles and calls one engine function in dt/.
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
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
  SHMCOLL_REQUIRE((n) >= 0, kNoComm, fn, MPI_ERR_COUNT, "%s = %d is negative", arg, static_cast<int>(n))

// Registers a freshly built type and records its constructor arguments.
int publish(dt::Type* t, int combiner, std::vector<int> ints, std::vector<int64_t> addrs, MPI_Datatype* out) {
  dt::setContents(t, combiner, std::move(ints), std::move(addrs));
  *out = dt::registerType(t);
  return MPI_SUCCESS;
}

// The engine failed (the reason is recorded): raise it.
int engineError(const char* fn, int rc) { return api::raise(kNoComm, fn, rc); }

// Names set on predefined types (the builtin table itself is immutable).
std::string gBuiltinNames[SHMCOLL_DT_BUILTIN_COUNT];
bool gBuiltinNamed[SHMCOLL_DT_BUILTIN_COUNT];

int checkBlocklens(const char* fn, int count, const int* bl) {
  for (int i = 0; i < count; ++i)
    SHMCOLL_REQUIRE(bl[i] >= 0, kNoComm, fn, MPI_ERR_ARG, "array_of_blocklengths[%d] = %d is negative", i, bl[i]);
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

SHMCOLL_API(int, MPI_Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent)) {
  TYPE_ARG(t, datatype, "MPI_Type_get_extent", "datatype");
  NOT_NULL(lb, "MPI_Type_get_extent", "lb");
  NOT_NULL(extent, "MPI_Type_get_extent", "extent");
  *lb = t->lb;
  *extent = t->extent();
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_get_extent_x, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent)) {
  TYPE_ARG(t, datatype, "MPI_Type_get_extent_x", "datatype");
  NOT_NULL(lb, "MPI_Type_get_extent_x", "lb");
  NOT_NULL(extent, "MPI_Type_get_extent_x", "extent");
  *lb = t->lb;
  *extent = t->extent();
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent)) {
  TYPE_ARG(t, datatype, "MPI_Type_get_true_extent", "datatype");
  NOT_NULL(true_lb, "MPI_Type_get_true_extent", "true_lb");
  NOT_NULL(true_extent, "MPI_Type_get_true_extent", "true_extent");
  *true_lb = t->trueLb;
  *true_extent = t->trueUb - t->trueLb;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent)) {
  TYPE_ARG(t, datatype, "MPI_Type_get_true_extent_x", "datatype");
  NOT_NULL(true_lb, "MPI_Type_get_true_extent_x", "true_lb");
  NOT_NULL(true_extent, "MPI_Type_get_true_extent_x", "true_extent");
  *true_lb = t->trueLb;
  *true_extent = t->trueUb - t->trueLb;
  return MPI_SUCCESS;
}

// ---- constructors ---------------------------------------------------------------

SHMCOLL_API(int, MPI_Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_contiguous";
  COUNT_ARG(count, fn, "count");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeContiguous(static_cast<uint64_t>(count), old, &t)) return engineError(fn, rc);
  return publish(t, dt::kContiguous, {count}, {}, newtype);
}

SHMCOLL_API(int, MPI_Type_vector,
            (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_vector";
  COUNT_ARG(count, fn, "count");
  SHMCOLL_REQUIRE(blocklength >= 0, kNoComm, fn, MPI_ERR_ARG, "blocklength = %d is negative", blocklength);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeHvector(static_cast<uint64_t>(count), static_cast<uint64_t>(blocklength),
                               static_cast<int64_t>(stride) * old->extent(), old, &t))
    return engineError(fn, rc);
  return publish(t, dt::kVector, {count, blocklength, stride}, {}, newtype);
}

SHMCOLL_API(int, MPI_Type_create_hvector,
            (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_hvector";
  COUNT_ARG(count, fn, "count");
  SHMCOLL_REQUIRE(blocklength >= 0, kNoComm, fn, MPI_ERR_ARG, "blocklength = %d is negative", blocklength);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeHvector(static_cast<uint64_t>(count), static_cast<uint64_t>(blocklength), stride, old, &t))
    return engineError(fn, rc);
  return publish(t, dt::kHvector, {count, blocklength}, {stride}, newtype);
}

SHMCOLL_API(int, MPI_Type_indexed,
            (int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_indexed";
  COUNT_ARG(count, fn, "count");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) {
    NOT_NULL(array_of_blocklengths, fn, "array_of_blocklengths");
    NOT_NULL(array_of_displacements, fn, "array_of_displacements");
    if (int rc = checkBlocklens(fn, count, array_of_blocklengths)) return rc;
  }
  std::vector<uint64_t> bl(count);
  std::vector<int64_t> d(count);
  std::vector<int> ints{count};
  for (int i = 0; i < count; ++i) {
    bl[i] = static_cast<uint64_t>(array_of_blocklengths[i]);
    d[i] = static_cast<int64_t>(array_of_displacements[i]) * old->extent();
    ints.push_back(array_of_blocklengths[i]);
  }
  for (int i = 0; i < count; ++i) ints.push_back(array_of_displacements[i]);
  dt::Type* t;
  if (int rc = dt::makeHindexed(static_cast<uint64_t>(count), bl.data(), d.data(), old, &t)) return engineError(fn, rc);
  return publish(t, dt::kIndexed, std::move(ints), {}, newtype);
}

SHMCOLL_API(int, MPI_Type_create_hindexed,
            (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
             MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_hindexed";
  COUNT_ARG(count, fn, "count");
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) {
    NOT_NULL(array_of_blocklengths, fn, "array_of_blocklengths");
    NOT_NULL(array_of_displacements, fn, "array_of_displacements");
    if (int rc = checkBlocklens(fn, count, array_of_blocklengths)) return rc;
  }
  std::vector<uint64_t> bl(count);
  std::vector<int64_t> d(count);
  std::vector<int> ints{count};
  for (int i = 0; i < count; ++i) {
    bl[i] = static_cast<uint64_t>(array_of_blocklengths[i]);
    d[i] = array_of_displacements[i];
    ints.push_back(array_of_blocklengths[i]);
  }
  dt::Type* t;
  if (int rc = dt::makeHindexed(static_cast<uint64_t>(count), bl.data(), d.data(), old, &t)) return engineError(fn, rc);
  return publish(t, dt::kHindexed, std::move(ints), d, newtype);
}

SHMCOLL_API(int, MPI_Type_create_indexed_block,
            (int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_indexed_block";
  COUNT_ARG(count, fn, "count");
  SHMCOLL_REQUIRE(blocklength >= 0, kNoComm, fn, MPI_ERR_ARG, "blocklength = %d is negative", blocklength);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) NOT_NULL(array_of_displacements, fn, "array_of_displacements");
  std::vector<int64_t> d(count);
  std::vector<int> ints{count, blocklength};
  for (int i = 0; i < count; ++i) {
    d[i] = static_cast<int64_t>(array_of_displacements[i]) * old->extent();
    ints.push_back(array_of_displacements[i]);
  }
  dt::Type* t;
  if (int rc = dt::makeHindexedBlock(static_cast<uint64_t>(count), static_cast<uint64_t>(blocklength), d.data(), old,
                                     &t))
    return engineError(fn, rc);
  return publish(t, dt::kIndexedBlock, std::move(ints), {}, newtype);
}

SHMCOLL_API(int, MPI_Type_create_hindexed_block,
            (int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_hindexed_block";
  COUNT_ARG(count, fn, "count");
  SHMCOLL_REQUIRE(blocklength >= 0, kNoComm, fn, MPI_ERR_ARG, "blocklength = %d is negative", blocklength);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) NOT_NULL(array_of_displacements, fn, "array_of_displacements");
  std::vector<int64_t> d(array_of_displacements, array_of_displacements + count);
  dt::Type* t;
  if (int rc = dt::makeHindexedBlock(static_cast<uint64_t>(count), static_cast<uint64_t>(blocklength), d.data(), old,
                                     &t))
    return engineError(fn, rc);
  return publish(t, dt::kHindexedBlock, {count, blocklength}, d, newtype);
}

SHMCOLL_API(int, MPI_Type_create_struct,
            (int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[],
             const MPI_Datatype array_of_types[], MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_struct";
  COUNT_ARG(count, fn, "count");
  NOT_NULL(newtype, fn, "newtype");
  if (count > 0) {
    NOT_NULL(array_of_blocklengths, fn, "array_of_blocklengths");
    NOT_NULL(array_of_displacements, fn, "array_of_displacements");
    NOT_NULL(array_of_types, fn, "array_of_types");
    if (int rc = checkBlocklens(fn, count, array_of_blocklengths)) return rc;
  }
  std::vector<uint64_t> bl(count);
  std::vector<int64_t> d(array_of_displacements, array_of_displacements + count);
  std::vector<const dt::Type*> types(count);
  std::vector<int> ints{count};
  for (int i = 0; i < count; ++i) {
    types[i] = dt::fromHandle(array_of_types[i]);
    SHMCOLL_REQUIRE(types[i], kNoComm, fn, MPI_ERR_TYPE, "array_of_types[%d] = %#x is %s", i,
                    static_cast<unsigned>(array_of_types[i]), nullOrGarbage(array_of_types[i]));
    bl[i] = static_cast<uint64_t>(array_of_blocklengths[i]);
    ints.push_back(array_of_blocklengths[i]);
  }
  dt::Type* t;
  if (int rc = dt::makeStruct(static_cast<uint64_t>(count), bl.data(), d.data(), types.data(), &t))
    return engineError(fn, rc);
  return publish(t, dt::kStruct, std::move(ints), d, newtype);
}

SHMCOLL_API(int, MPI_Type_create_resized,
            (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_resized";
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  dt::Type* t;
  if (int rc = dt::makeResized(old, lb, extent, &t)) return engineError(fn, rc);
  return publish(t, dt::kResized, {}, {lb, extent}, newtype);
}

SHMCOLL_API(int, MPI_Type_create_subarray,
            (int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[],
             int order, MPI_Datatype oldtype, MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_subarray";
  SHMCOLL_REQUIRE(ndims > 0, kNoComm, fn, MPI_ERR_ARG, "ndims = %d is not positive", ndims);
  NOT_NULL(array_of_sizes, fn, "array_of_sizes");
  NOT_NULL(array_of_subsizes, fn, "array_of_subsizes");
  NOT_NULL(array_of_starts, fn, "array_of_starts");
  SHMCOLL_REQUIRE(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, kNoComm, fn, MPI_ERR_ARG,
                  "order = %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  for (int i = 0; i < ndims; ++i) {
    const int n = array_of_sizes[i], s = array_of_subsizes[i], st = array_of_starts[i];
    SHMCOLL_REQUIRE(n > 0, kNoComm, fn, MPI_ERR_ARG, "array_of_sizes[%d] = %d is not positive", i, n);
    SHMCOLL_REQUIRE(s >= 0 && s <= n, kNoComm, fn, MPI_ERR_ARG,
                    "array_of_subsizes[%d] = %d is outside 0..array_of_sizes[%d] = %d", i, s, i, n);
    SHMCOLL_REQUIRE(st >= 0 && st <= n - s, kNoComm, fn, MPI_ERR_ARG,
                    "array_of_starts[%d] = %d puts the subarray (subsize %d) outside the array (size %d)", i, st, s,
                    n);
  }
  dt::Type* t;
  if (int rc = dt::makeSubarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts,
                                order == MPI_ORDER_C ? 0 : 1, old, &t))
    return engineError(fn, rc);
  std::vector<int> ints{ndims};
  ints.insert(ints.end(), array_of_sizes, array_of_sizes + ndims);
  ints.insert(ints.end(), array_of_subsizes, array_of_subsizes + ndims);
  ints.insert(ints.end(), array_of_starts, array_of_starts + ndims);
  ints.push_back(order);
  return publish(t, dt::kSubarray, std::move(ints), {}, newtype);
}

SHMCOLL_API(int, MPI_Type_create_darray,
            (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
             const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
             MPI_Datatype* newtype)) {
  const char* fn = "MPI_Type_create_darray";
  SHMCOLL_REQUIRE(size > 0, kNoComm, fn, MPI_ERR_ARG, "size = %d is not positive", size);
  SHMCOLL_REQUIRE(rank >= 0 && rank < size, kNoComm, fn, MPI_ERR_RANK, "rank = %d is outside 0..%d", rank, size - 1);
  SHMCOLL_REQUIRE(ndims > 0, kNoComm, fn, MPI_ERR_ARG, "ndims = %d is not positive", ndims);
  NOT_NULL(array_of_gsizes, fn, "array_of_gsizes");
  NOT_NULL(array_of_distribs, fn, "array_of_distribs");
  NOT_NULL(array_of_dargs, fn, "array_of_dargs");
  NOT_NULL(array_of_psizes, fn, "array_of_psizes");
  SHMCOLL_REQUIRE(order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN, kNoComm, fn, MPI_ERR_ARG,
                  "order = %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
  TYPE_ARG(old, oldtype, fn, "oldtype");
  NOT_NULL(newtype, fn, "newtype");
  long long procs = 1;
  std::vector<int> dist(ndims), dargs(ndims);
  for (int i = 0; i < ndims; ++i) {
    SHMCOLL_REQUIRE(array_of_gsizes[i] > 0, kNoComm, fn, MPI_ERR_ARG, "array_of_gsizes[%d] = %d is not positive", i,
                    array_of_gsizes[i]);
    SHMCOLL_REQUIRE(array_of_psizes[i] > 0, kNoComm, fn, MPI_ERR_ARG, "array_of_psizes[%d] = %d is not positive", i,
                    array_of_psizes[i]);
    procs *= array_of_psizes[i];
    const int di = array_of_distribs[i];
    SHMCOLL_REQUIRE(di == MPI_DISTRIBUTE_BLOCK || di == MPI_DISTRIBUTE_CYCLIC || di == MPI_DISTRIBUTE_NONE, kNoComm,
                    fn, MPI_ERR_ARG, "array_of_distribs[%d] = %d is not an MPI_DISTRIBUTE_* value", i, di);
    dist[i] = di == MPI_DISTRIBUTE_BLOCK ? 0 : di == MPI_DISTRIBUTE_CYCLIC ? 1 : 2;
    const int da = array_of_dargs[i];
    SHMCOLL_REQUIRE(da == MPI_DISTRIBUTE_DFLT_DARG || da > 0, kNoComm, fn, MPI_ERR_ARG,
                    "array_of_dargs[%d] = %d is neither positive nor MPI_DISTRIBUTE_DFLT_DARG", i, da);
    SHMCOLL_REQUIRE(di != MPI_DISTRIBUTE_NONE || array_of_psizes[i] == 1, kNoComm, fn, MPI_ERR_ARG,
                    "array_of_psizes[%d] = %d but dimension %d is MPI_DISTRIBUTE_NONE (needs 1)", i,
                    array_of_psizes[i], i);
    dargs[i] = da == MPI_DISTRIBUTE_DFLT_DARG ? -1 : da;
  }
  SHMCOLL_REQUIRE(procs == size, kNoComm, fn, MPI_ERR_ARG,
                  "the product of array_of_psizes (%lld) is not size = %d", procs, size);
  dt::Type* t;
  if (int rc = dt::makeDarray(size, rank, ndims, array_of_gsizes, dist.data(), dargs.data(), array_of_psizes,
                              order == MPI_ORDER_C ? 0 : 1, old, &t))
    return engineError(fn, rc);
  std::vector<int> ints{size, rank, ndims};
  ints.insert(ints.end(), array_of_gsizes, array_of_gsizes + ndims);
  ints.insert(ints.end(), array_of_distribs, array_of_distribs + ndims);
  ints.insert(ints.end(), array_of_dargs, array_of_dargs + ndims);
  ints.insert(ints.end(), array_of_psizes, array_of_psizes + ndims);
  ints.push_back(order);
  return publish(t, dt::kDarray, std::move(ints), {}, newtype);
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

SHMCOLL_API(int, MPI_Type_get_envelope,
            (MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes, int* combiner)) {
  const char* fn = "MPI_Type_get_envelope";
  TYPE_ARG(t, datatype, fn, "datatype");
  NOT_NULL(num_integers, fn, "num_integers");
  NOT_NULL(num_addresses, fn, "num_addresses");
  NOT_NULL(num_datatypes, fn, "num_datatypes");
  NOT_NULL(combiner, fn, "combiner");
  *num_integers = static_cast<int>(t->ints.size());
  *num_addresses = static_cast<int>(t->addrs.size());
  *num_datatypes = t->builtin ? 0 : static_cast<int>(t->kids.size());
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Type_get_contents,
            (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[],
             MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])) {
  const char* fn = "MPI_Type_get_contents";
  TYPE_ARG(t, datatype, fn, "datatype");
  SHMCOLL_REQUIRE(!t->builtin, kNoComm, fn, MPI_ERR_TYPE, "datatype = %s is predefined (combiner MPI_COMBINER_NAMED)",
                  t->name.c_str());
  SHMCOLL_REQUIRE(max_integers >= static_cast<int>(t->ints.size()), kNoComm, fn, MPI_ERR_ARG,
                  "max_integers = %d but the type has %zu", max_integers, t->ints.size());
  SHMCOLL_REQUIRE(max_addresses >= static_cast<int>(t->addrs.size()), kNoComm, fn, MPI_ERR_ARG,
                  "max_addresses = %d but the type has %zu", max_addresses, t->addrs.size());
  SHMCOLL_REQUIRE(max_datatypes >= static_cast<int>(t->kids.size()), kNoComm, fn, MPI_ERR_ARG,
                  "max_datatypes = %d but the type has %zu", max_datatypes, t->kids.size());
  if (!t->ints.empty()) NOT_NULL(array_of_integers, fn, "array_of_integers");
  if (!t->addrs.empty()) NOT_NULL(array_of_addresses, fn, "array_of_addresses");
  if (!t->kids.empty()) NOT_NULL(array_of_datatypes, fn, "array_of_datatypes");
  for (size_t i = 0; i < t->ints.size(); ++i) array_of_integers[i] = t->ints[i];
  for (size_t i = 0; i < t->addrs.size(); ++i) array_of_addresses[i] = t->addrs[i];
  // Derived children come back as handles the caller must free: the live
  // handle with one more free owed, or a new handle if the user freed it.
  std::lock_guard<std::recursive_mutex> g(dt::registryMutex());
  for (size_t i = 0; i < t->kids.size(); ++i) {
    dt::Type* k = t->kids[i];
    if (k->builtin) {
      array_of_datatypes[i] = k->handle;
    } else if (k->handle) {
      ++k->handleRefs;
      array_of_datatypes[i] = k->handle;
    } else {
      array_of_datatypes[i] = dt::registerType(k);
    }
  }
  return MPI_SUCCESS;
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

SHMCOLL_API(int, MPI_Pack,
            (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position,
             MPI_Comm comm)) {
  const char* fn = "MPI_Pack";
  if (int rc = checkComm(fn, comm)) return rc;
  SHMCOLL_REQUIRE(incount >= 0, comm, fn, MPI_ERR_COUNT, "incount = %d is negative", incount);
  const dt::Type* t = dt::fromHandle(datatype);
  SHMCOLL_REQUIRE(t, comm, fn, MPI_ERR_TYPE, "datatype = %#x is %s", static_cast<unsigned>(datatype),
                  nullOrGarbage(datatype));
  SHMCOLL_REQUIRE(t->committed, comm, fn, MPI_ERR_TYPE,
                  "datatype is a derived datatype that was not committed (MPI_Type_commit)");
  SHMCOLL_REQUIRE(position, comm, fn, MPI_ERR_ARG, "position is NULL");
  SHMCOLL_REQUIRE(outsize >= 0, comm, fn, MPI_ERR_ARG, "outsize = %d is negative", outsize);
  SHMCOLL_REQUIRE(*position >= 0 && *position <= outsize, comm, fn, MPI_ERR_ARG,
                  "*position = %d is outside 0..outsize = %d", *position, outsize);
  const uint64_t bytes = static_cast<uint64_t>(incount) * t->size;
  SHMCOLL_REQUIRE(bytes <= static_cast<uint64_t>(outsize - *position), comm, fn, MPI_ERR_TRUNCATE,
                  "packing %llu bytes at position %d overflows outsize = %d", (unsigned long long)bytes, *position,
                  outsize);
  if (bytes) {
    SHMCOLL_REQUIRE(outbuf, comm, fn, MPI_ERR_BUFFER, "outbuf is NULL");
    dt::Cursor c(inbuf, static_cast<uint64_t>(incount), t);
    c.pack(0, static_cast<char*>(outbuf) + *position, bytes);
  }
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Unpack,
            (const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype,
             MPI_Comm comm)) {
  const char* fn = "MPI_Unpack";
  if (int rc = checkComm(fn, comm)) return rc;
  SHMCOLL_REQUIRE(outcount >= 0, comm, fn, MPI_ERR_COUNT, "outcount = %d is negative", outcount);
  const dt::Type* t = dt::fromHandle(datatype);
  SHMCOLL_REQUIRE(t, comm, fn, MPI_ERR_TYPE, "datatype = %#x is %s", static_cast<unsigned>(datatype),
                  nullOrGarbage(datatype));
  SHMCOLL_REQUIRE(t->committed, comm, fn, MPI_ERR_TYPE,
                  "datatype is a derived datatype that was not committed (MPI_Type_commit)");
  SHMCOLL_REQUIRE(position, comm, fn, MPI_ERR_ARG, "position is NULL");
  SHMCOLL_REQUIRE(insize >= 0, comm, fn, MPI_ERR_ARG, "insize = %d is negative", insize);
  SHMCOLL_REQUIRE(*position >= 0 && *position <= insize, comm, fn, MPI_ERR_ARG,
                  "*position = %d is outside 0..insize = %d", *position, insize);
  const uint64_t bytes = static_cast<uint64_t>(outcount) * t->size;
  SHMCOLL_REQUIRE(bytes <= static_cast<uint64_t>(insize - *position), comm, fn, MPI_ERR_TRUNCATE,
                  "unpacking %llu bytes at position %d runs past insize = %d", (unsigned long long)bytes, *position,
                  insize);
  if (bytes) {
    SHMCOLL_REQUIRE(inbuf, comm, fn, MPI_ERR_BUFFER, "inbuf is NULL");
    dt::Cursor c(outbuf, static_cast<uint64_t>(outcount), t);
    c.unpack(0, static_cast<const char*>(inbuf) + *position, bytes);
  }
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

SHMCOLL_API(int, MPI_Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size)) {
  const char* fn = "MPI_Pack_size";
  if (int rc = checkComm(fn, comm)) return rc;
  SHMCOLL_REQUIRE(incount >= 0, comm, fn, MPI_ERR_COUNT, "incount = %d is negative", incount);
  const dt::Type* t = dt::fromHandle(datatype);
  SHMCOLL_REQUIRE(t, comm, fn, MPI_ERR_TYPE, "datatype = %#x is %s", static_cast<unsigned>(datatype),
                  nullOrGarbage(datatype));
  SHMCOLL_REQUIRE(size, comm, fn, MPI_ERR_ARG, "size is NULL");
  const uint64_t bytes = static_cast<uint64_t>(incount) * t->size;
  SHMCOLL_REQUIRE(bytes <= static_cast<uint64_t>(INT_MAX), comm, fn, MPI_ERR_VALUE_TOO_LARGE,
                  "%d elements of %llu bytes do not fit in an int", incount, (unsigned long long)t->size);
  *size = static_cast<int>(bytes);  // the packed format is the raw bytes, no header
  return MPI_SUCCESS;
}
