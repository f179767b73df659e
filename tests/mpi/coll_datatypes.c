/* coll_datatypes: every collective with many predefined datatypes, including
 * the pair types whose padding (e.g. bytes 12..15 of MPI_DOUBLE_INT) must not
 * be written in the receive buffer, and derived types built on them.
 *
 *   coll_datatypes [quick]      quick: one count per type (for big N)
 */
#include <complex.h>
#include <stdbool.h>

#include "testutil.h"

#define PAIR(T1, T2, dt, name)                                                                                  \
  do {                                                                                                          \
    struct s_ {                                                                                                 \
      T1 a;                                                                                                     \
      T2 b;                                                                                                     \
    };                                                                                                          \
    MPI_Aint off[2] = {offsetof(struct s_, a), offsetof(struct s_, b)};                                         \
    int len[2] = {(int)sizeof(T1), (int)sizeof(T2)};                                                            \
    tu_type_init(&types[nt], dt, name, 100 + nt, 1, 2, off, len, 0);                                            \
    if (types[nt].extent != (MPI_Aint)sizeof(struct s_) || types[nt].lb != 0)                                   \
      tu_fail("%s: lb %ld extent %ld, expected 0 and sizeof(struct) = %zu", name, (long)types[nt].lb,          \
              (long)types[nt].extent, sizeof(struct s_));                                                       \
    ++nt;                                                                                                       \
  } while (0)

#define PREDEF(dt, ctype)                                                                                       \
  do {                                                                                                          \
    tu_type_predef(&types[nt], dt, #dt, 100 + nt);                                                              \
    if (types[nt].size != (int)sizeof(ctype) || types[nt].extent != (MPI_Aint)sizeof(ctype))                    \
      tu_fail("%s: size %d extent %ld, expected sizeof(%s) = %zu", #dt, types[nt].size, (long)types[nt].extent, \
              #ctype, sizeof(ctype));                                                                           \
    ++nt;                                                                                                       \
  } while (0)

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "coll_datatypes");
  int quick = tu_arg_flag(argc, argv, "quick");
  tu_type types[64];
  int nt = 0;
  PREDEF(MPI_CHAR, char);
  PREDEF(MPI_SIGNED_CHAR, signed char);
  PREDEF(MPI_UNSIGNED_CHAR, unsigned char);
  PREDEF(MPI_BYTE, unsigned char);
  PREDEF(MPI_SHORT, short);
  PREDEF(MPI_UNSIGNED_SHORT, unsigned short);
  PREDEF(MPI_INT, int);
  PREDEF(MPI_UNSIGNED, unsigned);
  PREDEF(MPI_LONG, long);
  PREDEF(MPI_UNSIGNED_LONG, unsigned long);
  PREDEF(MPI_LONG_LONG, long long);
  PREDEF(MPI_UNSIGNED_LONG_LONG, unsigned long long);
  PREDEF(MPI_FLOAT, float);
  PREDEF(MPI_DOUBLE, double);
  PREDEF(MPI_LONG_DOUBLE, long double);
  PREDEF(MPI_INT8_T, int8_t);
  PREDEF(MPI_INT16_T, int16_t);
  PREDEF(MPI_INT32_T, int32_t);
  PREDEF(MPI_INT64_T, int64_t);
  PREDEF(MPI_UINT8_T, uint8_t);
  PREDEF(MPI_UINT16_T, uint16_t);
  PREDEF(MPI_UINT32_T, uint32_t);
  PREDEF(MPI_UINT64_T, uint64_t);
  PREDEF(MPI_C_BOOL, bool);
  PREDEF(MPI_C_FLOAT_COMPLEX, float _Complex);
  PREDEF(MPI_C_DOUBLE_COMPLEX, double _Complex);
  PREDEF(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex);
  PREDEF(MPI_AINT, MPI_Aint);
  PREDEF(MPI_COUNT, MPI_Count);
  PREDEF(MPI_OFFSET, MPI_Offset);
  const int npredef = nt;
  PAIR(double, int, MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
  PAIR(float, int, MPI_FLOAT_INT, "MPI_FLOAT_INT");
  PAIR(long, int, MPI_LONG_INT, "MPI_LONG_INT");
  PAIR(short, int, MPI_SHORT_INT, "MPI_SHORT_INT");
  PAIR(int, int, MPI_2INT, "MPI_2INT");
  PAIR(long double, int, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
  /* derived types over pair types: padding inside and between elements */
  const int di = npredef; /* MPI_DOUBLE_INT */
  {
    MPI_Datatype t;
    MPI_Aint off[4] = {0, 8, 16, 24};
    int len[4] = {8, 4, 8, 4};
    TU_CALL(MPI_Type_contiguous(2, MPI_DOUBLE_INT, &t));
    tu_type_derived(&types[nt], t, "contiguous(2,MPI_DOUBLE_INT)", types[di].family, 2, 4, off, len);
    ++nt;
  }
  {
    MPI_Datatype t; /* second element first: type-map order is not address order */
    int bl[2] = {1, 1}, dis[2] = {2, 0};
    MPI_Aint off[4] = {32, 40, 0, 8};
    int len[4] = {8, 4, 8, 4};
    TU_CALL(MPI_Type_indexed(2, bl, dis, MPI_DOUBLE_INT, &t));
    tu_type_derived(&types[nt], t, "indexed({1,1},{2,0},MPI_DOUBLE_INT)", types[di].family, 2, 4, off, len);
    ++nt;
  }
  {
    MPI_Datatype t;
    MPI_Aint off[2] = {0, 3};
    int len[2] = {1, 1};
    TU_CALL(MPI_Type_vector(2, 1, 3, MPI_C_BOOL, &t));
    tu_type_derived(&types[nt], t, "vector(2,1,3,MPI_C_BOOL)", 100 + 23, 2, 2, off, len);
    ++nt;
  }
  if (types[23].dt != MPI_C_BOOL) tu_fail("test bug: C_BOOL index");
  {
    MPI_Datatype t;
    MPI_Aint off[1] = {0};
    int len[1] = {32};
    TU_CALL(MPI_Type_contiguous(2, MPI_C_DOUBLE_COMPLEX, &t));
    tu_type_derived(&types[nt], t, "contiguous(2,MPI_C_DOUBLE_COMPLEX)", 100 + 25, 2, 1, off, len);
    ++nt;
  }
  if (types[25].dt != MPI_C_DOUBLE_COMPLEX) tu_fail("test bug: complex index");

  int n = tu_size, me = tu_rank;
  long *E = (long *)tu_malloc(sizeof(long) * n * n);
  tu_type **sv = (tu_type **)tu_malloc(sizeof(tu_type *) * n), **rv = (tu_type **)tu_malloc(sizeof(tu_type *) * n);
  unsigned salt = 1000;
  char label[160];
  static const long counts[] = {1, 7, 33};

  /* every type with every collective: same type on both sides */
  for (int t = 0; t < nt; ++t)
    for (int op = 0; op < TU_NOPS; ++op)
      for (int ci = 0; ci < 3; ++ci) {
        if (quick && ci != 1) continue;
        int ip = (ci + op + t) % 2, v = op != TU_ALLTOALL && op != TU_ALLGATHER;
        int kind = v ? (t + ci) % TU_NE : TU_E_UNIFORM;
        tu_counts(E, op, n, kind, counts[ci], types[t].nbase, ip && !tu_is_gather(op));
        snprintf(label, sizeof label, "type %s count %ld %s", types[t].name, counts[ci], tu_e_name[kind]);
        tu_run_simple(op, MPI_COMM_WORLD, E, &types[t], &types[t], ip, (t + op + ci) % TU_NDISP, salt++, label);
      }

  /* pair-type family: the predefined pair vs the derived ones, per rank and per peer */
  tu_type *fam[3] = {&types[di], &types[npredef + 6], &types[npredef + 7]};
  for (int op = 0; op < TU_NOPS; ++op)
    for (int k = 0; k < 3; ++k)
      for (int ip = 0; ip < 2; ++ip) {
        int v = op != TU_ALLTOALL && op != TU_ALLGATHER;
        tu_counts(E, op, n, v ? TU_E_VARIED : TU_E_UNIFORM, 6 + 2 * k, 2, ip && !tu_is_gather(op));
        for (int p = 0; p < n; ++p) {
          int w = op == TU_ALLTOALLW;
          sv[p] = fam[(me + (w ? p : 0) + k) % 3];
          rv[p] = fam[(2 * me + (w ? p : 0) + k + 1) % 3];
          /* see tu_ompi_agv_sizes in testutil.h: fam[0] is half the size of the others */
          if (op == TU_ALLGATHERV && tu_ompi_agv_sizes) sv[p] = fam[1 + (me + k) % 2], rv[p] = fam[1 + (me + k + 1) % 2];
        }
        snprintf(label, sizeof label, "MPI_DOUBLE_INT type maps k=%d", k);
        tu_case c = {op, MPI_COMM_WORLD, ip, (k + ip) % TU_NDISP, salt++, E, sv, rv, 0, 0, 0, label};
        tu_run(&c);
      }

  /* alltoallw: a different predefined type for every pair */
  for (int k = 0; k < (quick ? 2 : 6); ++k)
    for (int ip = 0; ip < 2; ++ip) {
      tu_counts(E, TU_ALLTOALLW, n, k % TU_NE, 5 + k, 1, ip);
      for (int p = 0; p < n; ++p) sv[p] = rv[p] = &types[(me + p + 7 * k) % (npredef + 6)];
      snprintf(label, sizeof label, "alltoallw type per pair k=%d", k);
      tu_case c = {TU_ALLTOALLW, MPI_COMM_WORLD, ip, k % TU_NDISP, salt++, E, sv, rv, 0, 0, 0, label};
      tu_run(&c);
    }

  for (int t = 0; t < nt; ++t) tu_type_free(&types[t]);
  free(E), free(sv), free(rv);
  return tu_finish(NULL);
}
