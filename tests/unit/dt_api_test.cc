// The MPI datatype entry points: error classes and messages, envelopes and
// contents, names, addresses, element counts.  Runs as a singleton MPI
// process (MPI_Init without shmrun) with MPI_ERRORS_RETURN on MPI_COMM_WORLD.
#include <gtest/gtest.h>
#include <mpi.h>

#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace {

class MpiEnv : public testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(MPI_Init(nullptr, nullptr), MPI_SUCCESS);
    ASSERT_EQ(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
  }
  void TearDown() override { MPI_Finalize(); }
};
const auto* gEnv = testing::AddGlobalTestEnvironment(new MpiEnv);

int classOf(int code) {
  int cls = -1;
  MPI_Error_class(code, &cls);
  return cls;
}

std::string text(int code) {
  char s[MPI_MAX_ERROR_STRING];
  int n = 0;
  MPI_Error_string(code, s, &n);
  return std::string(s, n);
}

// The call fails with class `cls` and a message naming the function and the argument.
#define EXPECT_ERR(call, cls, fn, arg)                                   \
  do {                                                                   \
    int rc_ = (call);                                                    \
    EXPECT_EQ(classOf(rc_), cls) << #call << ": " << text(rc_);          \
    EXPECT_NE(text(rc_).find(fn), std::string::npos) << text(rc_);       \
    EXPECT_NE(text(rc_).find(arg), std::string::npos) << text(rc_);      \
  } while (0)

TEST(DtApi, ErrorsHaveTheRightClassAndSayWhy) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  EXPECT_ERR(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_contiguous", "count = -1");
  EXPECT_ERR(MPI_Type_vector(-3, 1, 1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_vector", "count = -3");
  EXPECT_ERR(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_vector", "blocklength");
  EXPECT_ERR(MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE, "MPI_Type_contiguous",
             "MPI_DATATYPE_NULL");
  EXPECT_ERR(MPI_Type_contiguous(2, 0x12345678, &t), MPI_ERR_TYPE, "MPI_Type_contiguous", "oldtype");
  EXPECT_ERR(MPI_Type_contiguous(2, 0x32fffff0, &t), MPI_ERR_TYPE, "MPI_Type_contiguous", "not a valid datatype");
  int bl[2] = {1, -2};
  MPI_Aint d[2] = {0, 8};
  MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
  EXPECT_ERR(MPI_Type_create_struct(2, bl, d, ty, &t), MPI_ERR_ARG, "MPI_Type_create_struct",
             "array_of_blocklengths[1] = -2");
  bl[1] = 1;
  EXPECT_ERR(MPI_Type_create_struct(2, bl, d, ty, &t), MPI_ERR_TYPE, "MPI_Type_create_struct", "array_of_types[1]");
  int sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {3, 1};
  EXPECT_ERR(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_subarray", "array_of_starts[0] = 3");
  st[0] = 0;
  sub[1] = 6;
  EXPECT_ERR(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_subarray", "array_of_subsizes[1] = 6");
  sub[1] = 3;
  EXPECT_ERR(MPI_Type_create_subarray(2, sizes, sub, st, 99, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_create_subarray",
             "order = 99");
  int gs[1] = {10}, di[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {2}, ps[1] = {3};
  EXPECT_ERR(MPI_Type_create_darray(3, 0, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_darray", "array_of_dargs[0] = 2");
  ps[0] = 2;
  EXPECT_ERR(MPI_Type_create_darray(3, 0, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_darray", "array_of_psizes");
  MPI_Datatype b = MPI_INT;
  EXPECT_ERR(MPI_Type_free(&b), MPI_ERR_TYPE, "MPI_Type_free", "MPI_INT");
  EXPECT_EQ(b, MPI_INT);

  // MPI_Pack: uncommitted type, short output, negative count.
  MPI_Datatype v;
  ASSERT_EQ(MPI_Type_vector(2, 1, 2, MPI_INT, &v), MPI_SUCCESS);
  int in[4] = {1, 2, 3, 4};
  char out[16];
  int pos = 0;
  EXPECT_ERR(MPI_Pack(in, 1, v, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE, "MPI_Pack", "committed");
  ASSERT_EQ(MPI_Type_commit(&v), MPI_SUCCESS);
  pos = 10;
  EXPECT_ERR(MPI_Pack(in, 1, v, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Pack", "outsize = 16");
  EXPECT_EQ(pos, 10);
  EXPECT_ERR(MPI_Pack(in, -1, v, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Pack", "incount = -1");
  pos = 0;
  EXPECT_ERR(MPI_Unpack(out, 4, &pos, in, 1, v, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Unpack", "insize = 4");
  EXPECT_ERR(MPI_Pack(in, 1, v, out, sizeof out, &pos, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Pack", "comm");
  MPI_Type_free(&v);
}

TEST(DtApi, PackUnpackRoundTrip) {
  MPI_Datatype v;
  MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &v);
  MPI_Type_commit(&v);
  double a[5] = {1, 2, 3, 4, 5}, b[5] = {0, 0, 0, 0, 0};
  char buf[64];
  int pos = 0, size = 0;
  ASSERT_EQ(MPI_Pack_size(1, v, MPI_COMM_WORLD, &size), MPI_SUCCESS);
  EXPECT_EQ(size, 24);
  ASSERT_EQ(MPI_Pack(a, 1, v, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
  ASSERT_EQ(MPI_Pack(&a[1], 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
  EXPECT_EQ(pos, 32);
  pos = 0;
  ASSERT_EQ(MPI_Unpack(buf, 32, &pos, b, 1, v, MPI_COMM_WORLD), MPI_SUCCESS);
  double x = 0;
  ASSERT_EQ(MPI_Unpack(buf, 32, &pos, &x, 1, MPI_DOUBLE, MPI_COMM_WORLD), MPI_SUCCESS);
  double expect[5] = {1, 0, 3, 0, 5};
  EXPECT_EQ(0, std::memcmp(b, expect, sizeof b));
  EXPECT_EQ(x, 2);
  EXPECT_EQ(pos, 32);
  MPI_Type_free(&v);
}

TEST(DtApi, EnvelopeAndContents) {
  MPI_Datatype v, s, r, got[2];
  MPI_Type_vector(3, 2, 5, MPI_INT, &v);
  int ni, na, nd, comb;
  MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, MPI_COMBINER_VECTOR);
  EXPECT_EQ(ni, 3);
  EXPECT_EQ(na, 0);
  EXPECT_EQ(nd, 1);
  int ints[8];
  MPI_Aint addrs[4];
  ASSERT_EQ(MPI_Type_get_contents(v, 8, 4, 2, ints, addrs, got), MPI_SUCCESS);
  EXPECT_EQ(ints[0], 3);
  EXPECT_EQ(ints[1], 2);
  EXPECT_EQ(ints[2], 5);
  EXPECT_EQ(got[0], MPI_INT);

  int bl[2] = {1, 2};
  MPI_Aint d[2] = {0, 16};
  MPI_Datatype ty[2] = {MPI_DOUBLE, v};
  MPI_Type_create_struct(2, bl, d, ty, &s);
  MPI_Type_get_envelope(s, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, MPI_COMBINER_STRUCT);
  EXPECT_EQ(ni, 3);
  EXPECT_EQ(na, 2);
  EXPECT_EQ(nd, 2);
  ASSERT_EQ(MPI_Type_get_contents(s, 8, 4, 2, ints, addrs, got), MPI_SUCCESS);
  EXPECT_EQ(ints[2], 2);
  EXPECT_EQ(addrs[1], 16);
  EXPECT_EQ(got[0], MPI_DOUBLE);
  EXPECT_EQ(got[1], v);  // the same handle, with one more free owed
  MPI_Type_free(&got[1]);
  int size;
  EXPECT_EQ(MPI_Type_size(v, &size), MPI_SUCCESS);  // v still valid after the owed free
  MPI_Type_free(&v);
  // v's handle is gone; get_contents hands out a fresh handle to the same type.
  ASSERT_EQ(MPI_Type_get_contents(s, 8, 4, 2, ints, addrs, got), MPI_SUCCESS);
  EXPECT_EQ(MPI_Type_size(got[1], &size), MPI_SUCCESS);
  EXPECT_EQ(size, 24);
  MPI_Type_free(&got[1]);

  MPI_Type_create_resized(s, -8, 100, &r);
  MPI_Type_get_envelope(r, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, MPI_COMBINER_RESIZED);
  EXPECT_EQ(na, 2);
  ASSERT_EQ(MPI_Type_get_contents(r, 0, 2, 1, nullptr, addrs, got), MPI_SUCCESS);
  EXPECT_EQ(addrs[0], -8);
  EXPECT_EQ(addrs[1], 100);
  MPI_Type_free(&got[0]);

  MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, MPI_COMBINER_NAMED);
  EXPECT_EQ(ni + na + nd, 0);
  EXPECT_EQ(classOf(MPI_Type_get_contents(MPI_INT, 0, 0, 0, nullptr, nullptr, nullptr)), MPI_ERR_TYPE);
  EXPECT_EQ(classOf(MPI_Type_get_contents(r, 0, 0, 0, nullptr, nullptr, nullptr)), MPI_ERR_ARG);

  int sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 1};
  MPI_Datatype sa;
  MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &sa);
  MPI_Type_get_envelope(sa, &ni, &na, &nd, &comb);
  EXPECT_EQ(comb, MPI_COMBINER_SUBARRAY);
  EXPECT_EQ(ni, 3 * 2 + 2);
  MPI_Type_free(&sa);
  MPI_Type_free(&r);
  MPI_Type_free(&s);
}

TEST(DtApi, Names) {
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  ASSERT_EQ(MPI_Type_get_name(MPI_INT, name, &len), MPI_SUCCESS);
  EXPECT_STREQ(name, "MPI_INT");
  EXPECT_EQ(len, 7);
  MPI_Type_get_name(MPI_DOUBLE_INT, name, &len);
  EXPECT_STREQ(name, "MPI_DOUBLE_INT");
  MPI_Datatype v;
  MPI_Type_contiguous(2, MPI_INT, &v);
  MPI_Type_get_name(v, name, &len);
  EXPECT_STREQ(name, "");
  EXPECT_EQ(len, 0);
  MPI_Type_set_name(v, "pair of ints");
  MPI_Type_get_name(v, name, &len);
  EXPECT_STREQ(name, "pair of ints");
  std::string longName(500, 'x');
  MPI_Type_set_name(v, longName.c_str());
  MPI_Type_get_name(v, name, &len);
  EXPECT_EQ(len, MPI_MAX_OBJECT_NAME - 1);
  MPI_Type_free(&v);
}

TEST(DtApi, Addresses) {
  double a[4] = {};
  MPI_Aint p0, p2;
  MPI_Get_address(&a[0], &p0);
  MPI_Get_address(&a[2], &p2);
  EXPECT_EQ(MPI_Aint_diff(p2, p0), 16);
  EXPECT_EQ(MPI_Aint_add(p0, 16), p2);
  EXPECT_EQ(p0, reinterpret_cast<MPI_Aint>(&a[0]));
}

TEST(DtApi, CountsAndElements) {
  MPI_Status st{};
  int n;
  // 3 ints and a half: count undefined, elements undefined.
  st.shmcoll_count_ = 14;
  MPI_Get_count(&st, MPI_INT, &n);
  EXPECT_EQ(n, MPI_UNDEFINED);
  MPI_Get_elements(&st, MPI_INT, &n);
  EXPECT_EQ(n, MPI_UNDEFINED);
  st.shmcoll_count_ = 12;
  MPI_Get_count(&st, MPI_INT, &n);
  EXPECT_EQ(n, 3);
  // struct {double, int} (size 12): 20 bytes = 1 whole struct + a double = 2 + 1 elements.
  MPI_Datatype s;
  int bl[2] = {1, 1};
  MPI_Aint d[2] = {0, 8};
  MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, bl, d, ty, &s);
  MPI_Type_commit(&s);
  st.shmcoll_count_ = 20;
  MPI_Get_count(&st, s, &n);
  EXPECT_EQ(n, MPI_UNDEFINED);
  MPI_Get_elements(&st, s, &n);
  EXPECT_EQ(n, 3);
  st.shmcoll_count_ = 24;
  MPI_Get_count(&st, s, &n);
  EXPECT_EQ(n, 2);
  MPI_Count e;
  MPI_Get_elements_x(&st, s, &e);
  EXPECT_EQ(e, 4);
  e = -2;
  MPI_Get_elements_c(&st, s, &e);
  EXPECT_EQ(e, 4);
  st.shmcoll_count_ = 14;
  MPI_Get_elements_c(&st, MPI_INT, &e);
  EXPECT_EQ(e, MPI_UNDEFINED);
  // MPI_2INT: two basic elements per pair.
  st.shmcoll_count_ = 12;
  MPI_Get_elements(&st, MPI_2INT, &n);
  EXPECT_EQ(n, 3);
  // Zero-size type: count 0.
  MPI_Datatype z;
  MPI_Type_contiguous(0, MPI_INT, &z);
  st.shmcoll_count_ = 0;
  MPI_Get_count(&st, z, &n);
  EXPECT_EQ(n, 0);
  // Sizes beyond int: MPI_Type_size says MPI_UNDEFINED, MPI_Type_size_x the value.
  MPI_Datatype big;
  MPI_Type_vector(1 << 20, 1 << 12, 1 << 12, MPI_DOUBLE, &big);  // 2^35 bytes
  MPI_Type_size(big, &n);
  EXPECT_EQ(n, MPI_UNDEFINED);
  MPI_Count sx;
  MPI_Type_size_x(big, &sx);
  EXPECT_EQ(sx, MPI_Count{1} << 35);
  for (MPI_Datatype* t : {&s, &z, &big}) MPI_Type_free(t);
}

// The large-count (_c) forms: the same checks as the int forms, named after
// the _c function; what only 64-bit arguments can reach (sizes past the
// largest MPI_Count, bounds past the address range) fails instead of wrapping.
TEST(DtApi, LargeCountErrorsNameTheFunctionAndArgument) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  const MPI_Count big = MPI_Count{1} << 62, max = INT64_MAX;
  EXPECT_ERR(MPI_Type_contiguous_c(-1, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_contiguous_c", "count = -1");
  EXPECT_ERR(MPI_Type_vector_c(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_vector_c", "blocklength = -1");
  EXPECT_ERR(MPI_Type_vector_c(2, 1, big, MPI_DOUBLE, &t), MPI_ERR_ARG, "MPI_Type_vector_c", "stride = 4611686018427387904");
  EXPECT_ERR(MPI_Type_contiguous_c(big, MPI_INT, &t), MPI_ERR_COUNT, "MPI_Type_contiguous_c", "MPI_Count");
  EXPECT_ERR(MPI_Type_create_hvector_c(3, 1, big, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_create_hvector_c",
             "address range");
  EXPECT_ERR(MPI_Type_create_hvector_c(2, -4, 8, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_create_hvector_c",
             "blocklength = -4");
  const MPI_Count bl[2] = {1, -3}, d[2] = {0, 8};
  EXPECT_ERR(MPI_Type_indexed_c(2, bl, d, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_indexed_c",
             "array_of_blocklengths[1] = -3");
  EXPECT_ERR(MPI_Type_create_hindexed_c(2, bl, nullptr, MPI_INT, &t), MPI_ERR_ARG, "MPI_Type_create_hindexed_c",
             "array_of_displacements is NULL");
  const MPI_Count far[2] = {0, big};
  EXPECT_ERR(MPI_Type_create_indexed_block_c(2, 1, far, MPI_DOUBLE, &t), MPI_ERR_ARG,
             "MPI_Type_create_indexed_block_c", "array_of_displacements");
  EXPECT_ERR(MPI_Type_create_hindexed_block_c(-2, 1, far, MPI_DOUBLE, &t), MPI_ERR_COUNT,
             "MPI_Type_create_hindexed_block_c", "count = -2");
  const MPI_Count sbl[2] = {1, 1};
  const MPI_Datatype ty[2] = {MPI_INT, MPI_DATATYPE_NULL};
  EXPECT_ERR(MPI_Type_create_struct_c(2, sbl, d, ty, &t), MPI_ERR_TYPE, "MPI_Type_create_struct_c",
             "array_of_types[1]");
  EXPECT_ERR(MPI_Type_create_resized_c(MPI_INT, max - 5, 100, &t), MPI_ERR_ARG, "MPI_Type_create_resized_c",
             "lb = 9223372036854775802");
  const MPI_Count sz[2] = {4, 0}, sub[2] = {2, 0}, st[2] = {0, 0};
  EXPECT_ERR(MPI_Type_create_subarray_c(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_subarray_c", "array_of_sizes[1] = 0");
  const MPI_Count huge[2] = {MPI_Count{1} << 40, MPI_Count{1} << 40}, zero[2] = {0, 0};
  EXPECT_ERR(MPI_Type_create_subarray_c(2, huge, huge, zero, MPI_ORDER_C, MPI_CHAR, &t), MPI_ERR_COUNT,
             "MPI_Type_create_subarray_c", "MPI_Count");
  const MPI_Count gs[1] = {-7};
  const int di[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {1};
  EXPECT_ERR(MPI_Type_create_darray_c(1, 0, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_darray_c", "array_of_gsizes[0] = -7");
  const int ps3[3] = {1 << 30, 1 << 30, 1 << 30}, di3[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK,
                                                             MPI_DISTRIBUTE_BLOCK},
            da3[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
  const MPI_Count gs3[3] = {1 << 30, 1 << 30, 1 << 30};
  EXPECT_ERR(MPI_Type_create_darray_c(4, 0, 3, gs3, di3, da3, ps3, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG,
             "MPI_Type_create_darray_c", "is not size = 4");  // (the product of 2^90 does not wrap to 4)

  // Pack, unpack, pack size.
  int in[4] = {1, 2, 3, 4};
  char out[16];
  MPI_Count pos = 10, size = 0;
  EXPECT_ERR(MPI_Pack_c(in, 2, MPI_INT, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE, "MPI_Pack_c",
             "outsize = 16");
  EXPECT_EQ(pos, 10);
  EXPECT_ERR(MPI_Pack_c(in, -1, MPI_INT, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Pack_c",
             "incount = -1");
  EXPECT_ERR(MPI_Unpack_c(out, 4, &pos, in, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_ARG, "MPI_Unpack_c",
             "*position = 10");
  MPI_Datatype g;
  ASSERT_EQ(MPI_Type_contiguous_c(big, MPI_BYTE, &g), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&g), MPI_SUCCESS);
  EXPECT_ERR(MPI_Pack_size_c(4, g, MPI_COMM_WORLD, &size), MPI_ERR_COUNT, "MPI_Pack_size_c", "incount = 4");
  pos = 0;
  EXPECT_ERR(MPI_Pack_c(in, 4, g, out, sizeof out, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Pack_c",
             "incount = 4");
  EXPECT_EQ(pos, 0);
  ASSERT_EQ(MPI_Pack_size_c(1, g, MPI_COMM_WORLD, &size), MPI_SUCCESS);
  EXPECT_EQ(size, big);
  int isize = 0;
  EXPECT_ERR(MPI_Pack_size(1, g, MPI_COMM_WORLD, &isize), MPI_ERR_VALUE_TOO_LARGE, "MPI_Pack_size", "int");
  EXPECT_ERR(MPI_Type_contiguous_c(4, g, &t), MPI_ERR_COUNT, "MPI_Type_contiguous_c", "MPI_Count");

  // The MPI-3 queries refuse a large-count type (MPI-4.0: MPI_ERR_TYPE).
  int ni, na, nd, comb, ints[4];
  MPI_Aint addrs[4];
  MPI_Datatype kids[2];
  EXPECT_ERR(MPI_Type_get_envelope(g, &ni, &na, &nd, &comb), MPI_ERR_TYPE, "MPI_Type_get_envelope",
             "MPI_Type_get_envelope_c");
  EXPECT_ERR(MPI_Type_get_contents(g, 4, 4, 2, ints, addrs, kids), MPI_ERR_TYPE, "MPI_Type_get_contents",
             "MPI_Type_get_contents_c");
  MPI_Count counts[2];
  EXPECT_ERR(MPI_Type_get_contents_c(g, 4, 4, 0, 2, ints, addrs, counts, kids), MPI_ERR_ARG,
             "MPI_Type_get_contents_c", "max_large_counts = 0");
  MPI_Count cni, cna, cnc, cnd;
  ASSERT_EQ(MPI_Type_get_envelope_c(g, &cni, &cna, &cnc, &cnd, &comb), MPI_SUCCESS);
  EXPECT_EQ(comb, MPI_COMBINER_CONTIGUOUS);
  EXPECT_EQ(cni + cna, 0);
  EXPECT_EQ(cnc, 1);
  EXPECT_EQ(cnd, 1);
  ASSERT_EQ(MPI_Type_get_contents_c(g, 0, 0, 1, 1, nullptr, nullptr, counts, kids), MPI_SUCCESS);
  EXPECT_EQ(counts[0], big);
  EXPECT_EQ(kids[0], MPI_BYTE);
  MPI_Type_free(&g);
}

// A cyclic darray over 2^33 elements is one vector, not 2^31 runs: building
// it is instant and its bounds are exact.
TEST(DtApi, LargeCyclicDarrayIsCompact) {
  const MPI_Count gs[1] = {MPI_Count{1} << 33};
  const int di[1] = {MPI_DISTRIBUTE_CYCLIC}, da[1] = {3}, ps[1] = {4};
  MPI_Datatype t;
  ASSERT_EQ(MPI_Type_create_darray_c(4, 3, 1, gs, di, da, ps, MPI_ORDER_C, MPI_SHORT, &t), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
  // Rank 3 owns runs of 3 shorts at 9 + 12k; 2^33 = 12 * 715827882 + 8, so the
  // last run starts past the end: 715827882 full runs.
  MPI_Count size, lb, ext, tlb, text;
  MPI_Type_size_c(t, &size);
  MPI_Type_get_extent_c(t, &lb, &ext);
  MPI_Type_get_true_extent_c(t, &tlb, &text);
  EXPECT_EQ(size, MPI_Count{715827882} * 3 * 2);
  EXPECT_EQ(ext, (MPI_Count{1} << 33) * 2);
  EXPECT_EQ(tlb, 9 * 2);
  EXPECT_EQ(tlb + text, (MPI_Count{12} * 715827881 + 9 + 3) * 2);
  // Packing a window of it: the first two runs.
  std::vector<short> buf(64);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<short>(i);
  MPI_Datatype win;
  const MPI_Count gw[1] = {24};
  ASSERT_EQ(MPI_Type_create_darray_c(4, 3, 1, gw, di, da, ps, MPI_ORDER_C, MPI_SHORT, &win), MPI_SUCCESS);
  ASSERT_EQ(MPI_Type_commit(&win), MPI_SUCCESS);
  short packed[6];
  MPI_Count pos = 0;
  ASSERT_EQ(MPI_Pack_c(buf.data(), 1, win, packed, sizeof packed, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
  const short want[6] = {9, 10, 11, 21, 22, 23};
  EXPECT_EQ(0, std::memcmp(packed, want, sizeof want));
  EXPECT_EQ(pos, 12);
  MPI_Type_free(&win);
  MPI_Type_free(&t);
}

// MPI_Type_create_darray(_c) against a brute-force reading of the standard:
// a process owns global index i of a dimension when i / b == its coordinate
// (block) or (i / b) % p == its coordinate (cyclic), and its type map is
// the owned elements in the storage order of the whole array.  Random
// shapes, every process of the grid, both orders, both forms.
TEST(DtApi, DarrayMatchesBruteForce) {
  uint64_t seed = 12345;
  auto rnd = [&](int n) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int>((seed >> 33) % static_cast<uint64_t>(n));
  };
  for (int trial = 0; trial < 300; ++trial) {
    const int ndims = 1 + rnd(3);
    int gs[3], di[3], da[3], ps[3], size = 1;
    MPI_Count cgs[3];
    for (int d = 0; d < ndims; ++d) {
      gs[d] = 1 + rnd(9);
      cgs[d] = gs[d];
      di[d] = rnd(3) == 0 ? MPI_DISTRIBUTE_NONE : rnd(2) ? MPI_DISTRIBUTE_CYCLIC : MPI_DISTRIBUTE_BLOCK;
      ps[d] = di[d] == MPI_DISTRIBUTE_NONE ? 1 : 1 + rnd(3);
      da[d] = MPI_DISTRIBUTE_DFLT_DARG;
      if (di[d] == MPI_DISTRIBUTE_CYCLIC && rnd(2)) da[d] = 1 + rnd(3);
      if (di[d] == MPI_DISTRIBUTE_BLOCK && rnd(2)) da[d] = (gs[d] + ps[d] - 1) / ps[d] + rnd(2);
      size *= ps[d];
    }
    const int order = rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    int total = 1;
    for (int d = 0; d < ndims; ++d) total *= gs[d];
    std::vector<int> src(total);
    for (int i = 0; i < total; ++i) src[i] = i * 7 + 1;
    for (int rank = 0; rank < size; ++rank) {
      int coord[3], r = rank;
      for (int d = ndims - 1; d >= 0; --d) coord[d] = r % ps[d], r /= ps[d];
      std::vector<int> want;
      for (int lin = 0; lin < total; ++lin) {
        int idx[3], rest = lin;  // the per-dimension index of storage position lin
        for (int k = 0; k < ndims; ++k) {
          const int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
          idx[d] = rest % gs[d], rest /= gs[d];
        }
        bool mine = true;
        for (int d = 0; d < ndims; ++d) {
          if (di[d] == MPI_DISTRIBUTE_NONE) continue;
          const int b = da[d] != MPI_DISTRIBUTE_DFLT_DARG ? da[d]
                        : di[d] == MPI_DISTRIBUTE_BLOCK   ? (gs[d] + ps[d] - 1) / ps[d]
                                                          : 1;
          mine &= di[d] == MPI_DISTRIBUTE_BLOCK ? idx[d] / b == coord[d] : (idx[d] / b) % ps[d] == coord[d];
        }
        if (mine) want.push_back(src[lin]);
      }
      for (int form = 0; form < 2; ++form) {
        MPI_Datatype t;
        const int rc = form ? MPI_Type_create_darray_c(size, rank, ndims, cgs, di, da, ps, order, MPI_INT, &t)
                            : MPI_Type_create_darray(size, rank, ndims, gs, di, da, ps, order, MPI_INT, &t);
        ASSERT_EQ(rc, MPI_SUCCESS) << "trial " << trial << ": " << text(rc);
        ASSERT_EQ(MPI_Type_commit(&t), MPI_SUCCESS);
        int tsize = -1;
        MPI_Aint lb, ext;
        MPI_Type_size(t, &tsize);
        MPI_Type_get_extent(t, &lb, &ext);
        EXPECT_EQ(tsize, static_cast<int>(want.size() * sizeof(int))) << "trial " << trial << " rank " << rank;
        EXPECT_EQ(lb, 0);
        EXPECT_EQ(ext, static_cast<MPI_Aint>(total * sizeof(int)));
        std::vector<int> got(want.size() + 1, -1);
        int pos = 0;
        ASSERT_EQ(MPI_Pack(src.data(), 1, t, got.data(), static_cast<int>(got.size() * sizeof(int)), &pos,
                           MPI_COMM_WORLD),
                  MPI_SUCCESS);
        got.pop_back();
        EXPECT_EQ(got, want) << "trial " << trial << " rank " << rank << " form " << form;
        MPI_Type_free(&t);
      }
    }
  }
}

}  // namespace
