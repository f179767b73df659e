// MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size (and
// their _c forms): data in the standard's "external32" representation.
//
// external32 lays basic elements end to end, each big-endian, with the
// sizes of the standard's table: MPI_LONG and MPI_UNSIGNED_LONG take 4 bytes
// there (8 here), MPI_WCHAR 2 (4 here: a UTF-32 code unit), every other type
// its size on this ABI (MPI_LONG_DOUBLE 16, as IEEE 754 binary128; MPI_C_BOOL
// 1; MPI_AINT, MPI_OFFSET, MPI_COUNT 8).  Packing first packs the native
// stream (dt::Cursor, no header), then walks the datatype's signature
// (dt::Type::sig, runs of one predefined type at a time) converting each basic
// element into the external stream: bytes reversed, by component for the
// complex and pair types; narrowed with a range check for the three narrower
// types (a value that does not fit is MPI_ERR_CONVERSION, never truncated);
// long doubles from the x87 80-bit extended format to binary128.  Unpacking
// converts back (sign- or zero-extending) into a native stream and unpacks it.
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "api/check.h"
#include "dt/datatype.h"
#include "runtime/types.h"

namespace shmcoll::api::impl {

namespace {

// How one predefined type's element converts: up to two components, each
// `native` bytes here and `ext` bytes in external32.
enum class Kind : uint8_t { kRaw, kSigned, kUnsigned, kLongDouble };
struct Component {
  uint8_t native, ext;
  Kind kind;
};
struct Layout {
  uint8_t n;
  Component c[2];
};

constexpr Layout raw(uint8_t s) { return Layout{1, {{s, s, Kind::kRaw}, {}}}; }
constexpr Layout raw2(uint8_t a, uint8_t b) { return Layout{2, {{a, a, Kind::kRaw}, {b, b, Kind::kRaw}}}; }
constexpr Component kLd{16, 16, Kind::kLongDouble};

Layout layoutOf(int handle) {
  switch (handle) {
    case MPI_WCHAR: return Layout{1, {{4, 2, Kind::kUnsigned}, {}}};
    case MPI_LONG: return Layout{1, {{8, 4, Kind::kSigned}, {}}};
    case MPI_UNSIGNED_LONG: return Layout{1, {{8, 4, Kind::kUnsigned}, {}}};
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT16_T:
    case MPI_UINT16_T: return raw(2);
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_INT32_T:
    case MPI_UINT32_T:
    case MPI_FLOAT: return raw(4);
    case MPI_LONG_LONG_INT:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT64_T:
    case MPI_UINT64_T:
    case MPI_DOUBLE:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT: return raw(8);
    case MPI_LONG_DOUBLE: return Layout{1, {kLd, {}}};
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
    case MPI_FLOAT_INT:
    case MPI_2INT: return raw2(4, 4);
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX: return raw2(8, 8);
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX: return Layout{2, {kLd, kLd}};
    case MPI_DOUBLE_INT: return raw2(8, 4);
    case MPI_LONG_INT: return Layout{2, {{8, 4, Kind::kSigned}, {4, 4, Kind::kRaw}}};
    case MPI_SHORT_INT: return raw2(2, 4);
    case MPI_LONG_DOUBLE_INT: return Layout{2, {kLd, {4, 4, Kind::kRaw}}};
    default:
      return raw(1);  // the one-byte types
  }
}

uint64_t externalSizeOf(int handle) {
  const Layout l = layoutOf(handle);
  return l.n == 1 ? l.c[0].ext : l.c[0].ext + l.c[1].ext;
}

// Bytes of one element of `t` in external32.
uint64_t externalSize(const dt::Type* t) {
  if (t->builtin) return externalSizeOf(t->handle);
  uint64_t n = 0;
  for (const dt::Type::SigPart& s : t->sig) n += s.count * externalSize(s.type);
  return n;
}

// x87 extended (little-endian: 64-bit significand with its integer bit, then
// sign and 15-bit exponent) <-> binary128 big-endian (sign, the same 15-bit
// exponent and bias, 112 fraction bits, the integer bit implied).  Both ways
// keep every value, infinity and NaN; binary128 -> x87 drops the fraction
// bits past 63 (none are set in what x87 values give).
void longDoubleToExternal(const uint8_t* in, uint8_t* p) {
  uint64_t mant;
  uint16_t se;
  std::memcpy(&mant, in, 8);
  std::memcpy(&se, in + 8, 2);
  const uint64_t frac = mant & ~(uint64_t{1} << 63);  // the integer bit is implied (0 with exponent 0)
  // Fraction bits 111..0 = frac << 49: high 48 bits, then low 64.
  const uint64_t hi = (uint64_t{se} << 48) | (frac >> 15);
  const uint64_t lo = frac << 49;
  for (int i = 0; i < 8; ++i) {
    p[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    p[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
}

void longDoubleFromExternal(const uint8_t* in, uint8_t* p) {
  uint64_t hi = 0, lo = 0;
  for (int i = 0; i < 8; ++i) {
    hi = (hi << 8) | in[i];
    lo = (lo << 8) | in[8 + i];
  }
  const uint16_t se = static_cast<uint16_t>(hi >> 48);
  const uint16_t exp = se & 0x7fff;
  uint64_t frac = ((hi & 0xffffffffffffull) << 15) | (lo >> 49);
  if (exp == 0x7fff && frac == 0 && (lo & ((uint64_t{1} << 49) - 1))) frac = uint64_t{1} << 62;  // a NaN stays one
  const uint64_t mant = frac | (exp != 0 ? uint64_t{1} << 63 : 0);
  std::memcpy(p, &mant, 8);
  std::memcpy(p + 8, &se, 2);
  std::memset(p + 10, 0, 6);
}

// Moves the basic elements of a stream from one representation to the other,
// element by element; `bad` names the first value external32 cannot hold.
struct Converter {
  const uint8_t* in;
  uint8_t* out;
  bool toExternal;
  uint64_t element = 0;  // basic elements done
  bool failed = false;
  int badHandle = 0;
  int64_t badValue = 0;

  // One integer component narrowed (to external32) or widened (from it).
  bool integer(const Component& c) {
    const unsigned from = toExternal ? c.native : c.ext, to = toExternal ? c.ext : c.native;
    uint64_t v = 0;
    if (toExternal) {
      std::memcpy(&v, in, from);  // little-endian native
      if (c.kind == Kind::kSigned && from < 8 && (v >> (8 * from - 1)) & 1) v |= ~uint64_t{0} << (8 * from);
    } else {
      for (unsigned i = 0; i < from; ++i) v = (v << 8) | in[i];
      if (c.kind == Kind::kSigned && (v >> (8 * from - 1)) & 1) v |= ~uint64_t{0} << (8 * from);
    }
    if (toExternal && to < from) {
      const int64_t sv = static_cast<int64_t>(v);
      const bool fits = c.kind == Kind::kSigned
                            ? sv >= -(int64_t{1} << (8 * to - 1)) && sv < (int64_t{1} << (8 * to - 1))
                            : (from < 8 ? v & ((uint64_t{1} << (8 * from)) - 1) : v) < (uint64_t{1} << (8 * to));
      if (!fits) {
        badValue = sv;
        return false;
      }
    }
    if (toExternal) {
      for (unsigned i = 0; i < to; ++i) out[i] = static_cast<uint8_t>(v >> (8 * (to - 1 - i)));
    } else {
      std::memcpy(out, &v, to);
    }
    return true;
  }

  bool component(const Component& c) {
    if (c.kind == Kind::kLongDouble) {
      toExternal ? longDoubleToExternal(in, out) : longDoubleFromExternal(in, out);
    } else if (c.native != c.ext) {
      if (!integer(c)) return false;
    } else {
      for (unsigned i = 0; i < c.native; ++i) out[i] = in[c.native - 1 - i];
    }
    in += toExternal ? c.native : c.ext;
    out += toExternal ? c.ext : c.native;
    return true;
  }

  // n elements of the predefined type `handle`.
  bool run(int handle, uint64_t n) {
    const Layout l = layoutOf(handle);
    for (uint64_t e = 0; e < n; ++e) {
      for (unsigned k = 0; k < l.n; ++k, ++element) {
        if (!component(l.c[k])) {
          badHandle = handle;
          return false;
        }
      }
    }
    return true;
  }

  bool walk(const dt::Type* t, uint64_t count) {
    if (t->builtin) return run(t->handle, count);
    for (uint64_t i = 0; i < count; ++i)
      for (const dt::Type::SigPart& s : t->sig)
        if (!walk(s.type, s.count)) return false;
    return true;
  }
};

int checkDatarep(const Call& call, const char* datarep) {
  if (std::strcmp(datarep, "external32") == 0) return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_ARG,
                     "datarep = \"%.64s\" is not a data representation this library knows (only "
                     "\"external32\")",
                     datarep);
}

// count elements of `t`: their bytes in external32 (*bytes) and packed here
// (*native), or an MPI_ERR_COUNT naming the count.
int externalBytes(const Call& call, const char* arg, int64_t count, const dt::Type* t, uint64_t* bytes,
                  uint64_t* native) {
  const uint64_t each = externalSize(t);
  if (!__builtin_mul_overflow(static_cast<uint64_t>(count), each, bytes) &&
      !__builtin_mul_overflow(static_cast<uint64_t>(count), t->size, native) &&
      *bytes <= static_cast<uint64_t>(INT64_MAX) && *native <= static_cast<uint64_t>(INT64_MAX))
    return MPI_SUCCESS;
  return check::fail(call, MPI_ERR_COUNT, "%s = %lld elements of %llu bytes exceed the largest MPI_Count", arg,
                     static_cast<long long>(count), static_cast<unsigned long long>(each));
}

const char* typeName(int handle) {
  const dt::Type* t = rt::type(handle);
  return t ? t->name.c_str() : "?";
}

int conversionError(const Call& call, const Converter& c) {
  return check::fail(call, MPI_ERR_CONVERSION,
                     "basic element %llu (%s) = %lld does not fit the %llu bytes external32 "
                     "gives it",
                     static_cast<unsigned long long>(c.element), typeName(c.badHandle),
                     static_cast<long long>(c.badValue), static_cast<unsigned long long>(externalSizeOf(c.badHandle)));
}

// The window [*position, *position + bytes) inside a buffer of `size` bytes.
template <class A>
int window(const Call& call, const char* sizeName, A size, const A* position, uint64_t bytes, bool pack) {
  if (*position < 0 || *position > size)
    return check::fail(call, MPI_ERR_ARG, "*position = %lld is outside 0..%s = %lld", static_cast<long long>(*position),
                       sizeName, static_cast<long long>(size));
  if (bytes > static_cast<uint64_t>(size - *position))
    return check::fail(call, MPI_ERR_TRUNCATE, "%s %llu bytes at position %lld %s %s = %lld",
                       pack ? "packing" : "unpacking", static_cast<unsigned long long>(bytes),
                       static_cast<long long>(*position), pack ? "overflows" : "runs past", sizeName,
                       static_cast<long long>(size));
  return MPI_SUCCESS;
}

}  // namespace

template <class C, class A>
int packExternal(Call& call, const char datarep[], const void* inbuf, C incount, const dt::Type* t, void* outbuf,
                 A outsize, A* position) {
  SHMCOLL_CHECK(checkDatarep(call, datarep));
  SHMCOLL_CHECK(check::buffer(call, "inbuf", inbuf, static_cast<uint64_t>(incount), t));
  uint64_t bytes, native;
  SHMCOLL_CHECK(externalBytes(call, "incount", incount, t, &bytes, &native));
  SHMCOLL_CHECK(window(call, "outsize", outsize, position, bytes, true));
  if (bytes) {
    if (!outbuf) return check::fail(call, MPI_ERR_BUFFER, "outbuf is NULL");
    std::vector<uint8_t> stream(native);
    dt::Cursor(inbuf, static_cast<uint64_t>(incount), t).pack(0, stream.data(), native);
    Converter c{stream.data(), static_cast<uint8_t*>(outbuf) + *position, true};
    if (!c.walk(t, static_cast<uint64_t>(incount))) return conversionError(call, c);
  }
  *position += static_cast<A>(bytes);
  return MPI_SUCCESS;
}

template <class A, class C>
int unpackExternal(Call& call, const char datarep[], const void* inbuf, A insize, A* position, void* outbuf, C outcount,
                   const dt::Type* t) {
  SHMCOLL_CHECK(checkDatarep(call, datarep));
  SHMCOLL_CHECK(check::buffer(call, "outbuf", outbuf, static_cast<uint64_t>(outcount), t));
  uint64_t bytes, native;
  SHMCOLL_CHECK(externalBytes(call, "outcount", outcount, t, &bytes, &native));
  SHMCOLL_CHECK(window(call, "insize", insize, position, bytes, false));
  if (bytes) {
    if (!inbuf) return check::fail(call, MPI_ERR_BUFFER, "inbuf is NULL");
    std::vector<uint8_t> stream(native);
    Converter c{static_cast<const uint8_t*>(inbuf) + *position, stream.data(), false};
    c.walk(t, static_cast<uint64_t>(outcount));  // widening always fits
    dt::Cursor(outbuf, static_cast<uint64_t>(outcount), t).unpack(0, stream.data(), native);
  }
  *position += static_cast<A>(bytes);
  return MPI_SUCCESS;
}

template <class C, class A>
int packExternalSize(Call& call, const char datarep[], C incount, const dt::Type* t, A* size) {
  SHMCOLL_CHECK(checkDatarep(call, datarep));
  uint64_t bytes, native;
  SHMCOLL_CHECK(externalBytes(call, "incount", incount, t, &bytes, &native));
  *size = static_cast<A>(bytes);
  return MPI_SUCCESS;
}

}  // namespace shmcoll::api::impl

#include "generated/entry_type_external.inc"  // the MPI_ and PMPI_ entry points (src/api/desc/type_external.txt)
