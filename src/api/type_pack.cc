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

}  // namespace

template <class C>
int pack(Call& call, const void* inbuf, C incount, const dt::Type* t, void* outbuf, C outsize, C* position,
         MPI_Comm comm) {
  uint64_t bytes;
  SHMCOLL_CHECK(inside(call, "outsize", outsize, position));
  SHMCOLL_CHECK(streamBytes(call, "incount", incount, t, &bytes));
  if (bytes > static_cast<uint64_t>(outsize - *position))
    return check::fail(call, MPI_ERR_TRUNCATE, "packing %llu bytes at position %lld overflows outsize = %lld",
                       static_cast<unsigned long long>(bytes), static_cast<long long>(*position),
                       static_cast<long long>(outsize));
  if (bytes) {
    if (!outbuf) return check::fail(call, MPI_ERR_BUFFER, "outbuf is NULL");
    dt::Cursor c(inbuf, static_cast<uint64_t>(incount), t);
    c.pack(0, static_cast<char*>(outbuf) + *position, bytes);
  }
  *position += static_cast<C>(bytes);
  return MPI_SUCCESS;
}

template <class C>
int unpack(Call& call, const void* inbuf, C insize, C* position, void* outbuf, C outcount, const dt::Type* t,
           MPI_Comm comm) {
  uint64_t bytes;
  SHMCOLL_CHECK(inside(call, "insize", insize, position));
  SHMCOLL_CHECK(streamBytes(call, "outcount", outcount, t, &bytes));
  if (bytes > static_cast<uint64_t>(insize - *position))
    return check::fail(call, MPI_ERR_TRUNCATE, "unpacking %llu bytes at position %lld runs past insize = %lld",
                       static_cast<unsigned long long>(bytes), static_cast<long long>(*position),
                       static_cast<long long>(insize));
  if (bytes) {
    if (!inbuf) return check::fail(call, MPI_ERR_BUFFER, "inbuf is NULL");
    dt::Cursor c(outbuf, static_cast<uint64_t>(outcount), t);
    c.unpack(0, static_cast<const char*>(inbuf) + *position, bytes);
  }
  *position += static_cast<C>(bytes);
  return MPI_SUCCESS;
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
