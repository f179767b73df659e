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

}  // namespace
