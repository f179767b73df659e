// The datatype queries: size and extent (MPI-3, _x and _c forms), envelope
// and contents (MPI-3 and _c), names, addresses, and the element counts of a
// status (MPI_Get_count, MPI_Get_elements and their _x and _c forms).  The
// generated entry points have checked the datatype and the output pointers.
//
// The MPI-3 envelope and contents queries cannot describe a type built by a
// large-count constructor (its counts do not fit their arguments): MPI-4.0
// makes that MPI_ERR_TYPE.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include "runtime/types.h"
#include "api/check.h"
#include "dt/datatype.h"

namespace shmcoll::api::impl {

namespace {

// Names set on predefined types (the builtin table itself is immutable).
std::string gBuiltinNames[SHMCOLL_DT_BUILTIN_COUNT];
bool gBuiltinNamed[SHMCOLL_DT_BUILTIN_COUNT];

int notLarge(const Call& call, const dt::Type* t) {
  if (t->counts.empty()) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_TYPE,
                     "datatype was built by a large-count constructor (an MPI_Type_..._c function); its %zu large "
                     "count arguments need %s_c",
                     t->counts.size(), call.fn);
}

// Room for `have` values in an array the caller says holds `max`.
template <class C>
int room(const Call& call, const char* arg, C max, size_t have) {
  if (max >= 0 && static_cast<uint64_t>(max) >= have) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_ARG, "%s = %lld but the type has %zu", arg, static_cast<long long>(max), have);
}

// MPI_Type_get_contents(_c) once the maxima are checked; largeCounts is
// unused in the MPI-3 form.
int contentsOf(const Call& call, const dt::Type* t, int* integers, MPI_Aint* addresses, MPI_Count* largeCounts,
               MPI_Datatype* datatypes) {
  if (!t->ints.empty()) SHMCOLL_CHECK(check::notNull(call, "array_of_integers", integers));
  if (!t->addrs.empty()) SHMCOLL_CHECK(check::notNull(call, "array_of_addresses", addresses));
  if (!t->counts.empty()) SHMCOLL_CHECK(check::notNull(call, "array_of_large_counts", largeCounts));
  if (!t->kids.empty()) SHMCOLL_CHECK(check::notNull(call, "array_of_datatypes", datatypes));
  for (size_t i = 0; i < t->ints.size(); ++i) integers[i] = t->ints[i];
  for (size_t i = 0; i < t->addrs.size(); ++i) addresses[i] = t->addrs[i];
  for (size_t i = 0; i < t->counts.size(); ++i) largeCounts[i] = t->counts[i];
  // Derived children come back as handles the caller must free: the live
  // handle with one more free owed, or a new handle if the user freed it.
  std::lock_guard<std::recursive_mutex> g(rt::registryMutex());
  for (size_t i = 0; i < t->kids.size(); ++i) {
    dt::Type* k = t->kids[i];
    if (k->builtin) {
      datatypes[i] = k->handle;
    } else if (k->handle) {
      ++k->handleRefs;
      datatypes[i] = k->handle;
    } else {
      datatypes[i] = rt::registerType(k);
    }
  }
  return MPI_SUCCESS;
}

int derived(const Call& call, const dt::Type* t) {
  if (!t->builtin) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_TYPE, "datatype = %s is predefined (combiner MPI_COMBINER_NAMED)", t->name.c_str());
}

// Basic elements in the bytes a status reports; -1 when not a whole number.
MPI_Count elementsOf(const MPI_Status* status, const dt::Type* t) {
  bool exact = true;
  const uint64_t bytes = status->shmcoll_count_ > 0 ? static_cast<uint64_t>(status->shmcoll_count_) : 0;
  const uint64_t e = dt::elementsIn(t, bytes, &exact);
  return exact ? static_cast<MPI_Count>(e) : -1;
}

}  // namespace

// ---- size and extent ----------------------------------------------------------

// A size that does not fit an int is MPI_UNDEFINED in the MPI-3 form.
template <class C>
int typeSize(Call&, const dt::Type* t, C* size) {
  *size = t->size > static_cast<uint64_t>(std::numeric_limits<C>::max()) ? MPI_UNDEFINED : static_cast<C>(t->size);
  return MPI_SUCCESS;
}

// MPI_Type_get_extent (kTrue false) and MPI_Type_get_true_extent, A is
// MPI_Aint or MPI_Count (all 64-bit here: nothing to narrow).
template <bool kTrue, class A>
int extent(Call&, const dt::Type* t, A* lb, A* extent) {
  *lb = kTrue ? t->trueLb : t->lb;
  *extent = kTrue ? t->trueUb - t->trueLb : t->extent();
  return MPI_SUCCESS;
}

// ---- envelope and contents ---------------------------------------------------------

int envelope(Call& call, const dt::Type* t, int* numIntegers, int* numAddresses, int* numDatatypes, int* combiner) {
  SHMCOLL_CHECK(notLarge(call, t));
  *numIntegers = static_cast<int>(t->ints.size());
  *numAddresses = static_cast<int>(t->addrs.size());
  *numDatatypes = t->builtin ? 0 : static_cast<int>(t->kids.size());
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

int envelope(Call&, const dt::Type* t, MPI_Count* numIntegers, MPI_Count* numAddresses, MPI_Count* numLarge,
             MPI_Count* numDatatypes, int* combiner) {
  *numIntegers = static_cast<MPI_Count>(t->ints.size());
  *numAddresses = static_cast<MPI_Count>(t->addrs.size());
  *numLarge = static_cast<MPI_Count>(t->counts.size());
  *numDatatypes = t->builtin ? 0 : static_cast<MPI_Count>(t->kids.size());
  *combiner = t->combiner;
  return MPI_SUCCESS;
}

int contents(Call& call, const dt::Type* t, int maxIntegers, int maxAddresses, int maxDatatypes, int* integers,
             MPI_Aint* addresses, MPI_Datatype* datatypes) {
  SHMCOLL_CHECK(derived(call, t));
  SHMCOLL_CHECK(notLarge(call, t));
  SHMCOLL_CHECK(room(call, "max_integers", maxIntegers, t->ints.size()));
  SHMCOLL_CHECK(room(call, "max_addresses", maxAddresses, t->addrs.size()));
  SHMCOLL_CHECK(room(call, "max_datatypes", maxDatatypes, t->kids.size()));
  return contentsOf(call, t, integers, addresses, nullptr, datatypes);
}

int contents(Call& call, const dt::Type* t, MPI_Count maxIntegers, MPI_Count maxAddresses, MPI_Count maxLarge,
             MPI_Count maxDatatypes, int* integers, MPI_Aint* addresses, MPI_Count* largeCounts,
             MPI_Datatype* datatypes) {
  SHMCOLL_CHECK(derived(call, t));
  SHMCOLL_CHECK(room(call, "max_integers", maxIntegers, t->ints.size()));
  SHMCOLL_CHECK(room(call, "max_addresses", maxAddresses, t->addrs.size()));
  SHMCOLL_CHECK(room(call, "max_large_counts", maxLarge, t->counts.size()));
  SHMCOLL_CHECK(room(call, "max_datatypes", maxDatatypes, t->kids.size()));
  return contentsOf(call, t, integers, addresses, largeCounts, datatypes);
}

// ---- names --------------------------------------------------------------------

int setName(Call&, const dt::Type* t, const char* typeName) {
  std::string name(typeName, strnlen(typeName, MPI_MAX_OBJECT_NAME - 1));
  if (t->builtin) {
    const int id = t->handle & 0xff;
    gBuiltinNames[id] = std::move(name);
    gBuiltinNamed[id] = true;
  } else {
    const_cast<dt::Type*>(t)->name = std::move(name);
  }
  return MPI_SUCCESS;
}

int getName(Call&, const dt::Type* t, char* typeName, int* resultlen) {
  const int id = t->handle & 0xff;
  const std::string& name = (t->builtin && gBuiltinNamed[id]) ? gBuiltinNames[id] : t->name;
  const size_t n = std::min<size_t>(name.size(), MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(typeName, name.data(), n);
  typeName[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}

// ---- addresses ------------------------------------------------------------------

int getAddress(Call&, const void* location, MPI_Aint* address) {
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

MPI_Aint aintAdd(Call&, MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<unsigned long>(base) + static_cast<unsigned long>(disp));
}

MPI_Aint aintDiff(Call&, MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<unsigned long>(addr1) - static_cast<unsigned long>(addr2));
}

// ---- element counts ---------------------------------------------------------------

// Basic elements received; MPI_UNDEFINED when not a whole number or more than C holds.
template <class C>
int getElements(Call&, const MPI_Status* status, const dt::Type* t, C* count) {
  const MPI_Count e = elementsOf(status, t);
  *count = (e < 0 || e > std::numeric_limits<C>::max()) ? MPI_UNDEFINED : static_cast<C>(e);
  return MPI_SUCCESS;
}

// The predefined MPI_MINLOC/MPI_MAXLOC pair type of (value, index), the C
// ones of the standard's list; MPI_DATATYPE_NULL for any other pair.
int typeGetValueIndex(Call&, const dt::Type* value, const dt::Type* index, MPI_Datatype* pair) {
  *pair = MPI_DATATYPE_NULL;
  if (!value->builtin || !index->builtin || index->handle != MPI_INT) return MPI_SUCCESS;
  switch (value->handle) {
    case MPI_FLOAT:
      *pair = MPI_FLOAT_INT;
      break;
    case MPI_DOUBLE:
      *pair = MPI_DOUBLE_INT;
      break;
    case MPI_LONG:
      *pair = MPI_LONG_INT;
      break;
    case MPI_INT:
      *pair = MPI_2INT;
      break;
    case MPI_SHORT:
      *pair = MPI_SHORT_INT;
      break;
    case MPI_LONG_DOUBLE:
      *pair = MPI_LONG_DOUBLE_INT;
      break;
    default: break;
  }
  return MPI_SUCCESS;
}

// Makes the status say `count` basic elements of `t` arrived: the bytes of the
// shortest prefix of the packed stream of `t`, repeated, that holds that many
// (so MPI_Get_elements reads `count` back and MPI_Get_count the whole
// elements of `t` in it).
template <class C>
int statusSetElements(Call& call, MPI_Status* status, const dt::Type* t, C count) {
  if (count == 0) {
    status->shmcoll_count_ = 0;
    return MPI_SUCCESS;
  }
  if (t->elements == 0)
    return check::fail(call, MPI_ERR_TYPE, "datatype = %s holds no basic elements, so count = %lld cannot be set",
                       t->name.c_str(), static_cast<long long>(count));
  const uint64_t n = static_cast<uint64_t>(count);
  const uint64_t whole = n / t->elements, rest = n % t->elements;
  if (whole > static_cast<uint64_t>(std::numeric_limits<MPI_Count>::max()) / t->size)
    return check::fail(call, MPI_ERR_COUNT, "count = %lld elements of %s exceed the largest MPI_Count bytes",
                       static_cast<long long>(count), t->name.c_str());
  // The shortest b < t->size whose prefix holds `rest` elements (elementsIn grows with b).
  uint64_t lo = 0, hi = rest ? t->size : 0;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    bool exact;
    if (dt::elementsIn(t, mid, &exact) >= rest)
      hi = mid;
    else
      lo = mid + 1;
  }
  status->shmcoll_count_ = static_cast<MPI_Count>(whole * t->size + lo);
  return MPI_SUCCESS;
}

// Whole elements of the datatype received; MPI_UNDEFINED when they are not
// whole or more than C holds.
template <class C>
int getCount(Call&, const MPI_Status* status, const dt::Type* t, C* count) {
  if (t->size == 0) {
    *count = 0;  // MPI: a zero-size type gives a count of zero
    return MPI_SUCCESS;
  }
  const MPI_Count bytes = status->shmcoll_count_;
  const uint64_t b = bytes > 0 ? static_cast<uint64_t>(bytes) : 0;
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<C>::max());
  *count = (b % t->size || b / t->size > limit) ? MPI_UNDEFINED : static_cast<C>(b / t->size);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_type_query.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/type_query.txt)
