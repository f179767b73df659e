// MPI_Pack, MPI_Unpack and MPI_Pack_size, with int or MPI_Count sizes and
// positions.  The packed format is the raw data bytes, no header.  The
// generated entry points have checked the counts, sizes, the datatype and
// the position pointer; the communicator only says where errors go.
#include <cstdint>
#include <limits>

#include "api/check.h"
#include "dt/datatype.h"

namespace shmcoll::api::impl {

namespace {

// count elements of `t` in bytes, or an MPI_ERR_COUNT naming the count.
int streamBytes(const Call& call, const char* arg, int64_t count, const dt::Type* t, uint64_t* bytes) {
  if (!__builtin_mul_overflow(static_cast<uint64_t>(count), t->size, bytes) &&
      *bytes <= static_cast<uint64_t>(INT64_MAX))
    return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_COUNT, "%s = %lld elements of %llu bytes exceed the largest MPI_Count", arg,
                     static_cast<long long>(count), static_cast<unsigned long long>(t->size));
}

// *position is inside the packed buffer of `size` bytes (MPI_ERR_ARG).
template <class C>
int inside(const Call& call, const char* sizeName, C size, const C* position) {
  if (*position >= 0 && *position <= size) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_ARG, "*position = %lld is outside 0..%s = %lld", static_cast<long long>(*position),
                     sizeName, static_cast<long long>(size));
}

// Moves the data between a typed buffer (`count` elements of `t`) and the
// packed buffer of `size` bytes at *position: packing it there (kPack), or
// unpacking it from there.
template <bool kPack, class C>
int move(const Call& call, const void* typed, C count, const dt::Type* t, const void* packed, C size, C* position) {
  const char* sizeName = kPack ? "outsize" : "insize";
  SHMCOLL_CHECK(inside(call, sizeName, size, position));
  uint64_t bytes;
  SHMCOLL_CHECK(streamBytes(call, kPack ? "incount" : "outcount", count, t, &bytes));
  if (bytes > static_cast<uint64_t>(size - *position))
    return check::fail(call, MPI_ERR_TRUNCATE, "%s %llu bytes at position %lld %s %s = %lld",
                       kPack ? "packing" : "unpacking", static_cast<unsigned long long>(bytes),
                       static_cast<long long>(*position), kPack ? "overflows" : "runs past", sizeName,
                       static_cast<long long>(size));
  if (bytes) {
    if (!packed) return check::fail(call, MPI_ERR_BUFFER, "%s is NULL", kPack ? "outbuf" : "inbuf");
    dt::Cursor c(typed, static_cast<uint64_t>(count), t);
    char* at = static_cast<char*>(const_cast<void*>(packed)) + *position;
    if (kPack) {
      c.pack(0, at, bytes);
    } else {
      c.unpack(0, at, bytes);
    }
  }
  *position += static_cast<C>(bytes);
  return MPI_SUCCESS;
}

}  // namespace

template <class C>
int pack(Call& call, const void* inbuf, C incount, const dt::Type* t, void* outbuf, C outsize, C* position,
         MPI_Comm comm) {
  return move<true>(call, inbuf, incount, t, outbuf, outsize, position);
}

template <class C>
int unpack(Call& call, const void* inbuf, C insize, C* position, void* outbuf, C outcount, const dt::Type* t,
           MPI_Comm comm) {
  return move<false>(call, outbuf, outcount, t, inbuf, insize, position);
}

// An int result that does not fit is MPI_ERR_VALUE_TOO_LARGE (the value
// exists, the argument cannot hold it); a product past the largest
// MPI_Count is MPI_ERR_COUNT.
template <class C>
int packSize(Call& call, C incount, const dt::Type* t, MPI_Comm comm, C* size) {
  uint64_t bytes;
  SHMCOLL_CHECK(streamBytes(call, "incount", incount, t, &bytes));
  if (bytes > static_cast<uint64_t>(std::numeric_limits<C>::max()))
    return check::fail(call, MPI_ERR_VALUE_TOO_LARGE, "%lld elements of %llu bytes do not fit in an int",
                       static_cast<long long>(incount), static_cast<unsigned long long>(t->size));
  *size = static_cast<C>(bytes);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_type_pack.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/type_pack.txt)
