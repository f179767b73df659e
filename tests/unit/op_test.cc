// The reduction-operation library (src/op): which (operation, type) pairs are
// accepted, and apply() on unaligned buffers, pair types in memory and packed
// (derived) form, and derived types with holes, with guard bytes checked;
// every arithmetic and bitwise kernel against a scalar reference, at
// vector-tail lengths and odd addresses.
#include "op/op.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "dt/datatype.h"
#include "op/kernels.h"

namespace {

class OpTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) MPI_Init(nullptr, nullptr);
  }
};

TEST_F(OpTest, ClassesFollowTheStandard) {
  struct Case {
    MPI_Op op;
    MPI_Datatype type;
    bool ok;
  } cases[] = {
      {MPI_SUM, MPI_INT, true},
      {MPI_SUM, MPI_DOUBLE, true},
      {MPI_SUM, MPI_C_DOUBLE_COMPLEX, true},
      {MPI_MAX, MPI_C_DOUBLE_COMPLEX, false},
      {MPI_SUM, MPI_C_BOOL, false},
      {MPI_LAND, MPI_C_BOOL, true},
      {MPI_LAND, MPI_DOUBLE, false},
      {MPI_BAND, MPI_BYTE, true},
      {MPI_SUM, MPI_BYTE, false},
      {MPI_BAND, MPI_DOUBLE, false},
      {MPI_MAXLOC, MPI_2INT, true},
      {MPI_MAXLOC, MPI_INT, false},
      {MPI_SUM, MPI_2INT, false},
      {MPI_MAX, MPI_CHAR, true},
      {MPI_MAX, MPI_WCHAR, false},
      {MPI_BXOR, MPI_UINT64_T, true},
      {MPI_PROD, MPI_LONG_DOUBLE, true},
      {MPI_MIN, MPI_AINT, true},
      {MPI_REPLACE, MPI_INT, false},
      {MPI_NO_OP, MPI_INT, false},
      {MPI_OP_NULL, MPI_INT, false},
  };
  for (const Case& c : cases) {
    const int rc = shmcoll::op::check(c.op, c.type);
    EXPECT_EQ(rc == 0, c.ok) << "op " << std::hex << c.op << " type " << c.type;
    if (!c.ok && c.op != MPI_OP_NULL) {
      EXPECT_EQ(rc, MPI_ERR_OP);
    }
  }
  // A derived type made of one predefined type is accepted; a mixed one is not.
  MPI_Datatype vec, st;
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec);
  MPI_Type_commit(&vec);
  EXPECT_EQ(shmcoll::op::check(MPI_SUM, vec), 0);
  int bl[2] = {1, 1};
  MPI_Aint disp[2] = {0, 8};
  MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, bl, disp, types, &st);
  MPI_Type_commit(&st);
  EXPECT_EQ(shmcoll::op::check(MPI_SUM, st), MPI_ERR_OP);
  MPI_Type_free(&vec);
  MPI_Type_free(&st);
}

// in (op) inout, element by element, as the standard defines it (integers wrap).
template <class T, bool = std::is_integral_v<T>>
struct Wrapping {
  using type = T;
};
template <class T>
struct Wrapping<T, true> {
  using type = std::make_unsigned_t<T>;
};

template <class T>
T reference(MPI_Op op, T a, T b) {
  using U = typename Wrapping<T>::type;
  if (op == MPI_MAX) return a > b ? a : b;
  if (op == MPI_MIN) return a < b ? a : b;
  if (op == MPI_SUM) return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  if (op == MPI_PROD) return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  if (op == MPI_LAND) return static_cast<T>(a != T(0) && b != T(0));
  if (op == MPI_LOR) return static_cast<T>(a != T(0) || b != T(0));
  if (op == MPI_LXOR) return static_cast<T>((a != T(0)) != (b != T(0)));
  if constexpr (std::is_integral_v<T>) {
    if (op == MPI_BAND) return static_cast<T>(a & b);
    if (op == MPI_BOR) return static_cast<T>(a | b);
    if (op == MPI_BXOR) return static_cast<T>(a ^ b);
  }
  ADD_FAILURE() << "no reference for op " << op;
  return T(0);
}

template <class T>
void checkKernel(MPI_Datatype type, const char* name) {
  std::vector<MPI_Op> ops = {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_LOR, MPI_LXOR};
  if (std::is_integral_v<T>) ops.insert(ops.end(), {MPI_BAND, MPI_BOR, MPI_BXOR});
  for (MPI_Op op : ops)
    for (int n : {0, 1, 3, 7, 8, 15, 31, 33, 64, 65, 100, 257})
      for (size_t mis : {0, 1, 3}) {
        const size_t bytes = n * sizeof(T), guard = 24;
        std::vector<T> x(n), y(n);
        for (int i = 0; i < n; ++i) {  // small values (exact in floating point), zeros, the top of the range
          x[i] = static_cast<T>(i % 5 == 0 ? 0 : (i * 37 + 11) % 23 - 9);
          y[i] = static_cast<T>(i % 7 == 0 ? 0 : (i * 53 + 5) % 19 - 6);
          if (std::is_integral_v<T> && i % 11 == 10) x[i] = std::numeric_limits<T>::max();
        }
        std::vector<unsigned char> a(bytes + 2 * guard, 0x5A), b(bytes + 2 * guard, 0xC3);
        if (n > 0) {  // x.data() of an empty vector may be null, which memcpy must not be given
          std::memcpy(a.data() + guard + mis, x.data(), bytes);
          std::memcpy(b.data() + guard + mis, y.data(), bytes);
        }
        shmcoll::op::apply(op, a.data() + guard + mis, b.data() + guard + mis, n, type);
        for (int i = 0; i < n; ++i) {
          T got;
          std::memcpy(&got, b.data() + guard + mis + i * sizeof(T), sizeof(T));
          const T want = reference<T>(op, x[i], y[i]);
          const bool same = std::is_floating_point_v<T> ? got == want : std::memcmp(&got, &want, sizeof(T)) == 0;
          ASSERT_TRUE(same) << name << " op " << op << " n " << n << " misalignment " << mis << " element " << i
                            << ": got " << +got << ", want " << +want;
        }
        for (size_t k = 0; k < guard + mis; ++k) ASSERT_EQ(b[k], 0xC3) << name << " front guard byte " << k;
        for (size_t k = guard + mis + bytes; k < b.size(); ++k) ASSERT_EQ(b[k], 0xC3) << name << " back guard " << k;
        for (size_t k = 0; k < guard + mis; ++k) ASSERT_EQ(a[k], 0x5A) << name << " input changed";
      }
}

TEST_F(OpTest, EveryArithmeticKernelMatchesTheScalarDefinition) {
  checkKernel<signed char>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR");
  checkKernel<unsigned char>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR");
  checkKernel<short>(MPI_SHORT, "MPI_SHORT");
  checkKernel<unsigned short>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT");
  checkKernel<int>(MPI_INT, "MPI_INT");
  checkKernel<unsigned>(MPI_UNSIGNED, "MPI_UNSIGNED");
  checkKernel<long>(MPI_LONG, "MPI_LONG");
  checkKernel<unsigned long long>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG");
  checkKernel<float>(MPI_FLOAT, "MPI_FLOAT");
  checkKernel<double>(MPI_DOUBLE, "MPI_DOUBLE");
  checkKernel<long double>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE");
}

// The arithmetic kernels' three builds (16-byte and, where the CPU has AVX2
// or AVX-512, 32- and 64-byte vectors) give the same bytes for every kind, at every length and
// misalignment, with in and inout apart, the same, or overlapping (in
// starting after inout, or before it).
template <class T>
void compareBuilds(const char* name) {
  namespace k = shmcoll::op::kernels;
  std::vector<k::Kind> kinds = {k::kMax, k::kMin, k::kSum, k::kProd, k::kLand, k::kLor, k::kLxor};
  if (std::is_integral_v<T>) kinds.insert(kinds.end(), {k::kBand, k::kBor, k::kBxor});
  uint64_t seed = 12345;
  auto next = [&] { return seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; };
  for (k::Kind kind : kinds)
    for (int n : {1, 2, 5, 16, 31, 64, 129, 1000})
      for (size_t mis : {0, 4, 7})
        for (int overlap : {-1, 0, 3, -3}) {  // -1: separate buffers; else in = inout + overlap elements
          const size_t bytes = n * sizeof(T), guard = 32, total = bytes + 2 * guard + 8 * sizeof(T);
          std::vector<unsigned char> a(total), b(total);
          for (auto& c : a) c = static_cast<unsigned char>(next() >> 56);
          if (std::is_floating_point_v<T>)  // (small integers: no NaN, exact results)
            for (size_t i = 0; i + sizeof(T) <= total; i += sizeof(T)) {
              const T v = static_cast<T>(static_cast<int>(next() >> 59) - 15);
              std::memcpy(a.data() + i, &v, sizeof(T));
            }
          b = a;
          unsigned char* io1 = a.data() + guard + mis;
          unsigned char* io2 = b.data() + guard + mis;
          std::vector<unsigned char> src(a);  // (separate: in lives in its own copy)
          const void* in1 = overlap == -1 ? src.data() + guard : io1 + overlap * static_cast<ptrdiff_t>(sizeof(T));
          const void* in2 = overlap == -1 ? src.data() + guard : io2 + overlap * static_cast<ptrdiff_t>(sizeof(T));
          k::arithBase<T>(kind, in1, io1, n);
          std::vector<unsigned char> c(b);  // (the third build's copy of the inputs)
          unsigned char* io3 = c.data() + guard + mis;
          const void* in3 = overlap == -1 ? src.data() + guard : io3 + overlap * static_cast<ptrdiff_t>(sizeof(T));
#if defined(__x86_64__)
          if (k::hasAvx2())
            k::arithAvx2<T>(kind, in2, io2, n);
          else
            k::arithBase<T>(kind, in2, io2, n);
          if (k::hasAvx512())
            k::arithAvx512<T>(kind, in3, io3, n);
          else
            k::arithBase<T>(kind, in3, io3, n);
#else
          k::arithBase<T>(kind, in2, io2, n);
          k::arithBase<T>(kind, in3, io3, n);
#endif
          ASSERT_EQ(0, std::memcmp(a.data(), b.data(), total))
              << name << " kind " << int(kind) << " n " << n << " misalignment " << mis << " overlap " << overlap;
          ASSERT_EQ(0, std::memcmp(a.data(), c.data(), total))
              << name << " (64-byte build) kind " << int(kind) << " n " << n << " misalignment " << mis << " overlap "
              << overlap;
        }
}

TEST_F(OpTest, EveryVectorBuildOfTheKernelsGivesTheSameBytes) {
  compareBuilds<signed char>("signed char");
  compareBuilds<unsigned short>("unsigned short");
  compareBuilds<int>("int");
  compareBuilds<unsigned>("unsigned");
  compareBuilds<long long>("long long");
  compareBuilds<uint64_t>("uint64_t");
  compareBuilds<float>("float");
  compareBuilds<double>("double");
}

// MAX and MIN where an element is NaN or a zero of either sign: every build
// keeps the scalar rule (in > inout ? in : inout, and < for MIN), so it
// returns inout when they compare equal or either is NaN; SUM and PROD of
// infinities and NaNs the same bits.  (The vector loops take blocks of
// four vectors; 1000 elements cover them and the tail.)
template <class T>
void compareSpecials(const char* name) {
  namespace k = shmcoll::op::kernels;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  const T values[] = {T(0), T(-0.0), nan, T(1), T(-1), inf, -inf, T(2.5)};
  const int n = 1000;
  std::vector<T> in(n), io(n);
  for (int i = 0; i < n; ++i) {
    in[i] = values[i % 8];
    io[i] = values[(i / 8) % 8];
  }
  for (k::Kind kind : {k::kMax, k::kMin, k::kSum, k::kProd}) {
    std::vector<T> base(io), vec(io);
    k::arithBase<T>(kind, in.data(), base.data(), n);
    k::arith<T>(kind, in.data(), vec.data(), n);  // (the widest build this CPU runs)
    for (int i = 0; i < n; ++i) {
      T want = io[i];
      if (kind == k::kMax) want = in[i] > io[i] ? in[i] : io[i];
      if (kind == k::kMin) want = in[i] < io[i] ? in[i] : io[i];
      if (kind == k::kSum) want = in[i] + io[i];
      if (kind == k::kProd) want = in[i] * io[i];
      ASSERT_EQ(0, std::memcmp(&base[i], &want, sizeof(T)))
          << name << " base build, kind " << int(kind) << " element " << i;
      ASSERT_EQ(0, std::memcmp(&vec[i], &want, sizeof(T)))
          << name << " widest build, kind " << int(kind) << " element " << i << ": " << in[i] << " and " << io[i];
    }
  }
}

TEST_F(OpTest, VectorBuildsKeepTheScalarRuleForNaNAndSignedZeros) {
  compareSpecials<float>("float");
  compareSpecials<double>("double");
}

TEST_F(OpTest, UnalignedIntegersWrapAndGuardsStay) {
  for (size_t mis = 0; mis < 8; ++mis) {
    const int n = 37;
    std::vector<unsigned char> a(n * 4 + 16, 0), b(n * 4 + 16, 0xEE);
    std::vector<int> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = i == 3 ? 0x7fffffff : i * 1000 - 7;
      y[i] = i == 3 ? 1 : -i * 3;
    }
    std::memcpy(a.data() + mis, x.data(), n * 4);
    std::memcpy(b.data() + mis, y.data(), n * 4);
    shmcoll::op::apply(MPI_SUM, a.data() + mis, b.data() + mis, n, MPI_INT);
    for (int i = 0; i < n; ++i) {
      int got;
      std::memcpy(&got, b.data() + mis + 4 * i, 4);
      const int want = static_cast<int>(static_cast<unsigned>(x[i]) + static_cast<unsigned>(y[i]));
      EXPECT_EQ(got, want) << "misalignment " << mis << " element " << i;
    }
    for (size_t k = 0; k < mis; ++k) EXPECT_EQ(b[k], 0xEE);
    for (size_t k = mis + n * 4; k < b.size(); ++k) EXPECT_EQ(b[k], 0xEE);
  }
}

TEST_F(OpTest, MaxlocKeepsTheSmallerIndexOnTies) {
  struct SI {
    short v;
    int i;
  };
  SI in[4] = {{5, 9}, {5, 2}, {7, 1}, {-3, 0}}, io[4] = {{5, 4}, {5, 4}, {6, 0}, {-2, 7}};
  shmcoll::op::apply(MPI_MAXLOC, in, io, 4, MPI_SHORT_INT);
  EXPECT_EQ(io[0].v, 5);
  EXPECT_EQ(io[0].i, 4);
  EXPECT_EQ(io[1].i, 2);
  EXPECT_EQ(io[2].v, 7);
  EXPECT_EQ(io[2].i, 1);
  EXPECT_EQ(io[3].v, -2);
  EXPECT_EQ(io[3].i, 7);
  // The same through a derived type (packed form: 6 bytes per pair).
  MPI_Datatype c;
  MPI_Type_contiguous(2, MPI_SHORT_INT, &c);
  MPI_Type_commit(&c);
  SI in2[2] = {{1, 5}, {9, 3}}, io2[2] = {{1, 2}, {8, 0}};
  shmcoll::op::apply(MPI_MINLOC, in2, io2, 1, c);
  EXPECT_EQ(io2[0].v, 1);
  EXPECT_EQ(io2[0].i, 2);
  EXPECT_EQ(io2[1].v, 8);
  EXPECT_EQ(io2[1].i, 0);
  MPI_Type_free(&c);
}

TEST_F(OpTest, DerivedTypeHolesAreNotWritten) {
  MPI_Datatype vec;
  MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vec);  // extent 10 doubles, 4 used
  MPI_Type_commit(&vec);
  std::vector<double> a(20), b(20);
  for (int i = 0; i < 20; ++i) a[i] = i + 1, b[i] = -100.0 - i;
  shmcoll::op::apply(MPI_MAX, a.data(), b.data(), 2, vec);
  for (int i = 0; i < 20; ++i) {
    const int pos = i % 10;
    const bool used = pos % 3 == 0;
    EXPECT_EQ(b[i], used ? a[i] : -100.0 - i) << "double " << i;
  }
  MPI_Type_free(&vec);
}

void sub(void* in, void* inout, int* len, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = a[i] - b[i];
}

TEST_F(OpTest, UserOperationsAndTheirLifetime) {
  MPI_Op op;
  ASSERT_EQ(MPI_Op_create(sub, 0, &op), MPI_SUCCESS);
  EXPECT_TRUE(shmcoll::op::valid(op));
  EXPECT_FALSE(shmcoll::op::commutative(op));
  int in[3] = {10, 20, 30}, io[3] = {1, 2, 3};
  ASSERT_EQ(MPI_Reduce_local(in, io, 3, MPI_INT, op), MPI_SUCCESS);
  EXPECT_EQ(io[0], 9);
  EXPECT_EQ(io[2], 27);
  ASSERT_EQ(MPI_Op_free(&op), MPI_SUCCESS);
  EXPECT_EQ(op, MPI_OP_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Op sum = MPI_SUM;
  int cls = 0;
  MPI_Error_class(MPI_Op_free(&sum), &cls);
  EXPECT_EQ(cls, MPI_ERR_OP);
  MPI_Error_class(MPI_Reduce_local(in, io, -1, MPI_INT, MPI_SUM), &cls);
  EXPECT_EQ(cls, MPI_ERR_COUNT);
  MPI_Error_class(MPI_Reduce_local(in, io, 1, MPI_DOUBLE, MPI_BXOR), &cls);
  EXPECT_EQ(cls, MPI_ERR_OP);
}

}  // namespace
