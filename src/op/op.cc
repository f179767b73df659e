// Reduction operations (see op.h): the predefined set, user functions, and
// how each is applied to buffers in a datatype's memory layout.
//
// Which operation takes which type follows the standard's classes (MPI-4.0
// section 6.9.2): MAX/MIN on C integers and floating point; SUM/PROD also on
// complex; LAND/LOR/LXOR on C integers and logicals; BAND/BOR/BXOR on C
// integers and MPI_BYTE; MAXLOC/MINLOC on the pair types.  MPI_CHAR counts as
// a C integer, as both Open MPI and MPICH accept it everywhere a C integer
// is allowed; MPI_WCHAR is refused as they refuse it.  MPI_REPLACE and
// MPI_NO_OP exist for one-sided accumulate only and are refused here.
//
// The kernels (op/kernels.h, shared with the accelerator in src/accel) are
// plain loops over unaligned element views (a receive buffer at an odd
// address is legal), which the compiler vectorises for the arithmetic and
// bitwise cases.  A predefined type is applied in place; a derived type
// whose type map holds one predefined type is packed from both buffers in
// 64 KiB pieces, combined on the packed form, and unpacked into `inout`, so
// the holes of `inout` are never written.
#include "op/op.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common/status.h"
#include "dt/datatype.h"
#include "op/kernels.h"
#include "runtime/types.h"

namespace shmcoll::op {

namespace {

enum Class : uint8_t { kInt = 1, kFloat = 2, kLogical = 4, kComplex = 8, kByte = 16, kPair = 32 };
using namespace kernels;  // Kind and the element kernels (op/kernels.h)

// Operation index (handle low bits) -> kind and the classes it accepts.
struct OpInfo {
  const char* name;
  Kind kind;
  uint8_t classes;
};
const OpInfo kOps[] = {
    {"MPI_MAX", kMax, kInt | kFloat},
    {"MPI_MIN", kMin, kInt | kFloat},
    {"MPI_SUM", kSum, kInt | kFloat | kComplex},
    {"MPI_PROD", kProd, kInt | kFloat | kComplex},
    {"MPI_LAND", kLand, kInt | kLogical},
    {"MPI_BAND", kBand, kInt | kByte},
    {"MPI_LOR", kLor, kInt | kLogical},
    {"MPI_BOR", kBor, kInt | kByte},
    {"MPI_LXOR", kLxor, kInt | kLogical},
    {"MPI_BXOR", kBxor, kInt | kByte},
    {"MPI_MINLOC", kMinloc, kPair},
    {"MPI_MAXLOC", kMaxloc, kPair},
};
constexpr uint32_t kPredefinedMask = 0x41000000;

const OpInfo* predefined(MPI_Op op) {
  const uint32_t h = static_cast<uint32_t>(op);
  if ((h & 0xff000000u) != kPredefinedMask) return nullptr;
  const uint32_t i = h & 0xffffff;
  if (i < 1 || i > std::size(kOps)) return nullptr;
  return &kOps[i - 1];
}

struct UserOp {
  MPI_User_function* fn = nullptr;
  MPI_User_function_c* fnc = nullptr;
  bool commute = true;
  bool live = false;
  uint32_t holds = 0;  // pending nonblocking reductions (op::hold)
};
std::vector<UserOp>& userOps() {
  static std::vector<UserOp> v;
  return v;
}
constexpr uint32_t kUserMask = 0x42000000;

UserOp* user(MPI_Op op) {
  const uint32_t h = static_cast<uint32_t>(op);
  if ((h & 0xff000000u) != kUserMask) return nullptr;
  const uint32_t i = h & 0xffffff;
  if (i >= userOps().size() || !userOps()[i].live) return nullptr;
  return &userOps()[i];
}

// user(), but also a freed operation that a pending reduction still holds.
UserOp* heldUser(MPI_Op op) {
  const uint32_t h = static_cast<uint32_t>(op);
  if ((h & 0xff000000u) != kUserMask) return nullptr;
  const uint32_t i = h & 0xffffff;
  if (i >= userOps().size() || !(userOps()[i].live || userOps()[i].holds)) return nullptr;
  return &userOps()[i];
}

// How a predefined (builtin) datatype is combined.
// Applies kind `k` to n elements: `packed` says whether the elements are in
// packed form (matters for the pair types only, whose memory form has padding).
using BasicFn = void (*)(Kind k, const void* in, void* io, uint64_t n, bool packed);
struct Basic {
  uint8_t cls = 0;
  BasicFn fn = nullptr;
  uint64_t packedSize = 0;
};

template <class T>
constexpr Basic arithBasic(uint8_t cls) {
  return {cls, [](Kind k, const void* in, void* io, uint64_t n, bool) { arith<T>(k, in, io, n); }, sizeof(T)};
}
template <class T>
constexpr Basic complexBasic() {
  return {kComplex, [](Kind k, const void* in, void* io, uint64_t n, bool) { complexOp<T>(k, in, io, n); },
          2 * sizeof(T)};
}
template <class V>
constexpr Basic pairBasic() {
  struct P {
    V v;
    int i;
  };
  return {kPair,
          [](Kind k, const void* in, void* io, uint64_t n, bool packed) {
            const size_t stride = packed ? sizeof(V) + sizeof(int) : sizeof(P);
            const size_t idxOff = packed ? sizeof(V) : offsetof(P, i);
            loc<V>(k, static_cast<const char*>(in), static_cast<char*>(io), n, stride, idxOff);
          },
          sizeof(V) + sizeof(int)};
}

// Indexed by the builtin id (handle low byte).
// (Built at compile time: every reduction looks its kernel up here.)
constexpr auto kBasics = [] {
  std::array<Basic, SHMCOLL_DT_BUILTIN_COUNT> t{};
  auto set = [&](MPI_Datatype d, Basic b) { t[static_cast<uint32_t>(d) & 0xff] = b; };
  set(MPI_CHAR, arithBasic<signed char>(kInt));
  set(MPI_SIGNED_CHAR, arithBasic<signed char>(kInt));
  set(MPI_UNSIGNED_CHAR, arithBasic<unsigned char>(kInt));
  set(MPI_BYTE, arithBasic<unsigned char>(kByte));
  set(MPI_SHORT, arithBasic<short>(kInt));
  set(MPI_UNSIGNED_SHORT, arithBasic<unsigned short>(kInt));
  set(MPI_INT, arithBasic<int>(kInt));
  set(MPI_UNSIGNED, arithBasic<unsigned>(kInt));
  set(MPI_LONG, arithBasic<long>(kInt));
  set(MPI_UNSIGNED_LONG, arithBasic<unsigned long>(kInt));
  set(MPI_LONG_LONG_INT, arithBasic<long long>(kInt));
  set(MPI_UNSIGNED_LONG_LONG, arithBasic<unsigned long long>(kInt));
  set(MPI_FLOAT, arithBasic<float>(kFloat));
  set(MPI_DOUBLE, arithBasic<double>(kFloat));
  set(MPI_LONG_DOUBLE, arithBasic<long double>(kFloat));
  set(MPI_INT8_T, arithBasic<int8_t>(kInt));
  set(MPI_INT16_T, arithBasic<int16_t>(kInt));
  set(MPI_INT32_T, arithBasic<int32_t>(kInt));
  set(MPI_INT64_T, arithBasic<int64_t>(kInt));
  set(MPI_UINT8_T, arithBasic<uint8_t>(kInt));
  set(MPI_UINT16_T, arithBasic<uint16_t>(kInt));
  set(MPI_UINT32_T, arithBasic<uint32_t>(kInt));
  set(MPI_UINT64_T, arithBasic<uint64_t>(kInt));
  set(MPI_C_BOOL, arithBasic<uint8_t>(kLogical));
  set(MPI_CXX_BOOL, arithBasic<uint8_t>(kLogical));
  set(MPI_C_FLOAT_COMPLEX, complexBasic<float>());
  set(MPI_C_DOUBLE_COMPLEX, complexBasic<double>());
  set(MPI_C_LONG_DOUBLE_COMPLEX, complexBasic<long double>());
  set(MPI_CXX_FLOAT_COMPLEX, complexBasic<float>());
  set(MPI_CXX_DOUBLE_COMPLEX, complexBasic<double>());
  set(MPI_CXX_LONG_DOUBLE_COMPLEX, complexBasic<long double>());
  set(MPI_AINT, arithBasic<int64_t>(kInt));
  set(MPI_OFFSET, arithBasic<int64_t>(kInt));
  set(MPI_COUNT, arithBasic<int64_t>(kInt));
  set(MPI_FLOAT_INT, pairBasic<float>());
  set(MPI_DOUBLE_INT, pairBasic<double>());
  set(MPI_LONG_INT, pairBasic<long>());
  set(MPI_2INT, pairBasic<int>());
  set(MPI_SHORT_INT, pairBasic<short>());
  set(MPI_LONG_DOUBLE_INT, pairBasic<long double>());
  return t;
}();

const Basic* basicOf(MPI_Datatype h) {
  if (rt::builtinSize(h) == 0) return nullptr;
  const uint32_t id = static_cast<uint32_t>(h) & 0xff;
  if (id >= kBasics.size() || !kBasics[id].fn) return nullptr;
  return &kBasics[id];
}

// The one builtin type a type map is made of; 0 when it mixes several (or is empty).
int singleBuiltin(const dt::Type* t) {
  if (t->builtin) return t->handle;
  int found = 0;
  for (const dt::Type::SigPart& p : t->sig) {
    if (p.count == 0) continue;
    const int b = singleBuiltin(p.type);
    if (b == 0 || (found && b != found)) return 0;
    found = b;
  }
  return found;
}

const char* typeName(const dt::Type* t) { return t->name.empty() ? "a derived datatype" : t->name.c_str(); }

}  // namespace

bool valid(MPI_Op op) { return predefined(op) != nullptr || user(op) != nullptr; }

bool commutative(MPI_Op op) {
  if (UserOp* u = user(op)) return u->commute;
  return true;
}

int check(MPI_Op op, MPI_Datatype type) {
  const dt::Type* t = rt::type(type);
  if (!t) return fail(MPI_ERR_TYPE, "datatype = %#x is not a valid datatype", static_cast<unsigned>(type));
  return check(op, t);
}

int check(MPI_Op op, const dt::Type* t) {
  if (!t->committed) return fail(MPI_ERR_TYPE, "datatype is a derived datatype that was not committed");
  if (op == MPI_REPLACE || op == MPI_NO_OP)
    return fail(MPI_ERR_OP, "op = %s is only defined for one-sided accumulate operations, not for reductions",
                op == MPI_REPLACE ? "MPI_REPLACE" : "MPI_NO_OP");
  if (user(op)) return 0;
  const OpInfo* info = predefined(op);
  if (!info)
    return fail(MPI_ERR_OP, "op = %#x is %s", static_cast<unsigned>(op),
                op == MPI_OP_NULL ? "MPI_OP_NULL" : "not a valid operation (or was freed)");
  if (t->size == 0) return 0;  // nothing to combine
  const int b = singleBuiltin(t);
  if (!b)
    return fail(MPI_ERR_OP,
                "%s is not defined on datatype %s: its type map mixes several predefined types (a predefined "
                "operation needs one)",
                info->name, typeName(t));
  const Basic* basic = basicOf(b);
  if (!basic || !(basic->cls & info->classes))
    return fail(MPI_ERR_OP, "%s is not defined on %s%s%s", info->name, typeName(rt::type(b)),
                t->builtin ? "" : ", the predefined type inside datatype ", t->builtin ? "" : typeName(t));
  return 0;
}

void apply(MPI_Op op, const void* in, void* inout, uint64_t count, MPI_Datatype type, const dt::Type* t) {
  if (count == 0 || op == MPI_NO_OP) return;
  if (!t) t = rt::type(type);
  if (UserOp* u = heldUser(op)) {
    const int64_t ext = t->extent();
    const char* a = static_cast<const char*>(in);
    char* b = static_cast<char*>(inout);
    MPI_Datatype dtype = type;
    if (u->fnc) {
      MPI_Count len = static_cast<MPI_Count>(count);
      u->fnc(const_cast<char*>(a), b, &len, &dtype);
      return;
    }
    while (count > 0) {
      int len = static_cast<int>(std::min<uint64_t>(count, INT_MAX));
      u->fn(const_cast<char*>(a), b, &len, &dtype);
      a += ext * len;
      b += ext * len;
      count -= static_cast<uint64_t>(len);
    }
    return;
  }
  if (t->size == 0) return;
  const OpInfo* info = predefined(op);
  if (op == MPI_REPLACE) {
    dt::Cursor src(in, count, t), dst(inout, count, t);
    const uint64_t total = src.totalBytes();
    std::vector<char> tmp(std::min<uint64_t>(total, 1 << 16));
    for (uint64_t pos = 0; pos < total; pos += tmp.size()) {
      const uint64_t len = std::min<uint64_t>(tmp.size(), total - pos);
      src.pack(pos, tmp.data(), len);
      dst.unpack(pos, tmp.data(), len);
    }
    return;
  }
  if (!info) return;
  if (t->builtin) {
    const Basic* b = basicOf(type);
    if (b) b->fn(info->kind, in, inout, count, false);
    return;
  }
  // A derived type of one predefined type: combine on the packed form.
  const Basic* b = basicOf(singleBuiltin(t));
  if (!b) return;
  dt::Cursor ci(in, count, t), co(inout, count, t);
  const uint64_t total = ci.totalBytes();
  const uint64_t piece = std::max<uint64_t>(1, (64 * 1024) / b->packedSize) * b->packedSize;
  std::vector<char> pa(std::min(piece, total)), pb(std::min(piece, total));
  for (uint64_t pos = 0; pos < total; pos += piece) {
    const uint64_t len = std::min(piece, total - pos);
    ci.pack(pos, pa.data(), len);
    co.pack(pos, pb.data(), len);
    b->fn(info->kind, pa.data(), pb.data(), len / b->packedSize, true);
    co.unpack(pos, pb.data(), len);
  }
}

int basicType(const dt::Type* t) { return singleBuiltin(t); }

void applyPacked(MPI_Op op, const void* in, void* inout, uint64_t bytes, int basic) {
  if (bytes == 0 || op == MPI_NO_OP) return;
  if (op == MPI_REPLACE) {
    memmove(inout, in, bytes);
    return;
  }
  const OpInfo* info = predefined(op);
  const Basic* b = basicOf(basic);
  if (info && b) b->fn(info->kind, in, inout, bytes / b->packedSize, true);
}

// ---- user operations (used by api/op.cc) ----------------------------------------------

MPI_Op create(MPI_User_function* fn, MPI_User_function_c* fnc, bool commute) {
  auto& v = userOps();
  uint32_t i = 0;
  while (i < v.size() && (v[i].live || v[i].holds)) ++i;
  if (i == v.size()) v.emplace_back();
  v[i] = {fn, fnc, commute, true, 0};
  return static_cast<MPI_Op>(kUserMask | i);
}

namespace {

// The kernel of predefined operation `info` on predefined type `builtin`
// when the operation is defined on it, else null.
const Basic* kernelFor(const OpInfo* info, MPI_Datatype builtin) {
  const Basic* b = info ? basicOf(builtin) : nullptr;
  return b && (b->cls & info->classes) ? b : nullptr;
}

}  // namespace

bool definedOn(MPI_Op op, MPI_Datatype builtin) { return kernelFor(predefined(op), builtin) != nullptr; }

bool isPredefined(MPI_Op op) { return predefined(op) != nullptr || op == MPI_REPLACE || op == MPI_NO_OP; }

bool release(MPI_Op op) {
  UserOp* u = user(op);
  if (!u) return false;
  u->live = false;
  return true;
}

void hold(MPI_Op op) {
  if (UserOp* u = heldUser(op)) ++u->holds;
}

void unhold(MPI_Op op) {
  if (UserOp* u = heldUser(op); u && u->holds) --u->holds;
}

namespace {

// A predefined operation's kernel on a predefined type, found once when the
// operator is made rather than on every fold (an 8-byte MPI_Reduce folds
// once per call).
coll::Operator kernelOperator(const OpInfo& info, const Basic& b) {
  coll::Operator o;
  o.a = static_cast<uint64_t>(info.kind);
  o.b = reinterpret_cast<uintptr_t>(b.fn);
  o.apply = [](const coll::Operator& self, const void* in, void* inout, uint64_t count, const dt::Type*) {
    if (count) reinterpret_cast<BasicFn>(self.b)(static_cast<Kind>(self.a), in, inout, count, false);
  };
  return o;  // (nothing to hold)
}

}  // namespace

bool predefinedOperator(MPI_Op op, const dt::Type* t, coll::Operator* out) {
  if (!t->builtin || !t->committed || t->size == 0) return false;
  const OpInfo* info = predefined(op);
  const Basic* b = kernelFor(info, t->handle);
  if (!b) return false;
  *out = kernelOperator(*info, *b);
  return true;
}

coll::Operator makeOperator(MPI_Op op, MPI_Datatype type) {
  coll::Operator o;
  if (const OpInfo* info = predefined(op))
    if (const Basic* b = basicOf(type)) return kernelOperator(*info, *b);  // (null for a derived type)
  o.a = static_cast<uint64_t>(static_cast<uint32_t>(op));
  o.b = static_cast<uint64_t>(static_cast<uint32_t>(type));
  o.apply = [](const coll::Operator& self, const void* in, void* inout, uint64_t count, const dt::Type* t) {
    apply(static_cast<MPI_Op>(self.a), in, inout, count, static_cast<MPI_Datatype>(self.b), t);
  };
  o.hold = [](const coll::Operator& self, bool take) {
    if (take)
      hold(static_cast<MPI_Op>(self.a));
    else
      unhold(static_cast<MPI_Op>(self.a));
  };
  return o;
}

}  // namespace shmcoll::op
