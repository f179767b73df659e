// Datatypes: a block is taken as contiguous bytes when its type is a
// predefined type without holes (size == extent, lower bound 0) or a derived
// type whose data is one run.  Any other derived type is packed into and
// unpacked from a contiguous staging buffer: by the engine's datatype loops
// when it was decoded (decode.cc, once per type), else by the host itself
// (PMPI_Pack / PMPI_Unpack), which is correct for every type the host
// accepts provided the host's packed form is the type signature's bytes in
// order.  That is checked once per process (PackIsRaw); where it does not
// hold, blocks of types not decoded are declined.  A predefined type's size,
// extent and shape are asked of the host once (four queries) and kept.
#include "dt/datatype.h"

#include <climits>
#include <cstring>

#include "accel.h"

namespace shmcoll_accel {
namespace {

// True when PMPI_Pack writes exactly the signature bytes (no header, no
// conversion): a strided vector of ints and MPI_DOUBLE_INT (which has a hole).
bool PackIsRaw() {
  static int cached = -1;
  if (cached >= 0) return cached == 1;
  cached = 0;
  int v[4] = {11, 22, 33, 44};
  MPI_Datatype vec;
  if (PMPI_Type_vector(2, 1, 2, MPI_INT, &vec) != MPI_SUCCESS) return false;
  PMPI_Type_commit(&vec);
  char out[64];
  int pos = 0;
  int rc = PMPI_Pack(v, 1, vec, out, sizeof out, &pos, MPI_COMM_SELF);
  PMPI_Type_free(&vec);
  const int want[2] = {11, 33};
  if (rc != MPI_SUCCESS || pos != 8 || std::memcmp(out, want, 8) != 0) return false;
  struct {
    double d;
    int i;
  } di = {1.5, 7};
  pos = 0;
  rc = PMPI_Pack(&di, 1, MPI_DOUBLE_INT, out, sizeof out, &pos, MPI_COMM_SELF);
  if (rc != MPI_SUCCESS || pos != 12 || std::memcmp(out, &di.d, 8) != 0 || std::memcmp(out + 8, &di.i, 4) != 0)
    return false;
  cached = 1;
  return true;
}

}  // namespace

bool Grow(std::vector<char>& tmp, size_t total) {
  if (tmp.size() >= total) return true;
  try {
    tmp.resize(total);
  } catch (...) {
    return false;
  }
  return true;
}

namespace {

// Predefined types looked up once (their handles are never freed, so never
// reused for another type); a derived type's decoded form is looked up in its
// attribute on every call (decode.cc), one not decoded is queried every call.
struct Named {
  MPI_Datatype type;
  int size;
  MPI_Aint extent;
  bool plain;                        // lower bound 0, no holes: a block is its bytes
  const shmcoll::dt::Type* decoded;  // else the engine's type for it (the pair types), or nullptr
};
constexpr int kNamed = 32;
Named g_named[kNamed];
int g_nnamed = 0;  // (calls are taken only below MPI_THREAD_MULTIPLE: one at a time)

const Named* FindNamed(MPI_Datatype type) {
  for (int i = 0; i < g_nnamed; ++i)
    if (g_named[i].type == type) return &g_named[i];
  return nullptr;
}

}  // namespace

bool Describe(const void* buf, MPI_Aint disp, int count, MPI_Datatype type, Side* side) {
  *side = Side();
  side->buf = buf;
  side->count = count;
  side->type = type;
  if (count < 0) return false;
  if (count == 0) return true;
  if (type == MPI_DATATYPE_NULL) return false;
  int size = 0;
  MPI_Aint extent = 0;
  bool plain = false;
  const Named* named = FindNamed(type);
  const shmcoll::dt::Type* t = named ? nullptr : Decoded(type);
  if (t && t->builtin && g_nnamed < kNamed) {  // a predefined type, met for the first time: kept here
    g_named[g_nnamed++] = Named{type, static_cast<int>(t->size), t->extent(), t->contiguous && t->lb == 0, t};
    named = &g_named[g_nnamed - 1];
  }
  if (named) {
    size = named->size, extent = named->extent, plain = named->plain;
    if (!plain && named->decoded) t = named->decoded;  // a pair type: packed by the engine, as below
  }
  if (t && !plain) {
    // a type the engine packs (derived, or a pair type): no host query, no limit on the bytes
    side->bytes = t->size * static_cast<size_t>(count);
    side->buf = static_cast<const char*>(buf) + disp * t->extent();
    if (t->contiguous) {  // one run of bytes: used in place, like a predefined type
      side->ptr = const_cast<char*>(static_cast<const char*>(side->buf)) + t->trueLb;
    } else {
      side->packed = true;
      side->decoded = t;
    }
    return true;
  } else if (!named) {
    int ni, na, nd, combiner;
    MPI_Aint lb, tlb, textent;
    if (PMPI_Type_size(type, &size) != MPI_SUCCESS || PMPI_Type_get_extent(type, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(type, &tlb, &textent) != MPI_SUCCESS ||
        PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
      return false;
    plain = combiner == MPI_COMBINER_NAMED && lb == 0 && tlb == 0 && extent == size && textent == size;
    if (combiner == MPI_COMBINER_NAMED && g_nnamed < kNamed)
      g_named[g_nnamed++] = Named{type, size, extent, plain, nullptr};
  }
  side->bytes = static_cast<size_t>(size) * static_cast<size_t>(count);
  side->buf = static_cast<const char*>(buf) + disp * extent;
  if (plain) {
    side->ptr = const_cast<char*>(static_cast<const char*>(side->buf));
    return true;
  }
  if (side->bytes > static_cast<size_t>(INT_MAX) || !PackIsRaw()) return false;
  side->packed = true;
  return true;
}

bool PackSends(std::vector<Side>& sides, std::vector<char>& tmp, MPI_Comm comm) {
  size_t total = 0;
  for (Side& s : sides)
    if (s.packed || s.copy) {
      s.tmp_off = total;
      total += (s.bytes + kLine - 1) / kLine * kLine;
    }
  if (total == 0) return true;
  if (!Grow(tmp, total)) return false;
  for (Side& s : sides) {
    if (!s.packed && !s.copy) continue;
    const char* data = s.ptr;  // (a contiguous side's bytes, which need not start at buf)
    s.ptr = tmp.data() + s.tmp_off;
    if (s.bytes == 0) continue;
    if (!s.packed) {
      std::memcpy(s.ptr, data, s.bytes);
      continue;
    }
    if (s.decoded) {
      shmcoll::dt::Cursor(s.buf, static_cast<uint64_t>(s.count), s.decoded).pack(0, s.ptr, s.bytes);
      continue;
    }
    int pos = 0;
    if (PMPI_Pack(s.buf, s.count, s.type, s.ptr, static_cast<int>(s.bytes), &pos, comm) != MPI_SUCCESS ||
        static_cast<size_t>(pos) != s.bytes)
      return false;
  }
  return true;
}

bool LayoutRecvs(std::vector<Side>& sides, std::vector<char>& tmp) {
  size_t total = 0;
  for (Side& s : sides)
    if (s.packed) {
      s.tmp_off = total;
      total += (s.bytes + kLine - 1) / kLine * kLine;
    }
  if (total == 0) return true;
  if (!Grow(tmp, total)) return false;
  for (Side& s : sides)
    if (s.packed) s.ptr = tmp.data() + s.tmp_off;
  return true;
}

void UnpackRecvs(std::vector<Side>& sides, std::vector<char>& tmp, MPI_Comm comm) {
  for (Side& s : sides) {
    if (!s.packed || s.bytes == 0) continue;
    if (s.decoded) {
      shmcoll::dt::Cursor(s.buf, static_cast<uint64_t>(s.count), s.decoded).unpack(0, s.ptr, s.bytes);
      continue;
    }
    int pos = 0;
    PMPI_Unpack(s.ptr, static_cast<int>(s.bytes), &pos, const_cast<void*>(s.buf), s.count, s.type, comm);
  }
}

}  // namespace shmcoll_accel
