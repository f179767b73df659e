/* accel_types: derived datatypes of every constructor, nested, with holes,
 * negative bounds, resized extents and type maps out of address order, through
 * MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw, MPI_Allgather, MPI_Allgatherv
 * and MPI_Bcast, checked byte for byte against the host MPI's own MPI_Pack and
 * MPI_Unpack: every receive buffer must equal, over its whole length including
 * the holes of its type and guards before and after, what the host's unpack of
 * the host's pack of the sender's data gives on a buffer filled the same way.
 *
 * The types of the "int" family hold only MPI_INTs, so any two of them match
 * when their counts carry the same number of ints: a block is sent as one and
 * received as another (alltoallw pairs them per peer; alltoall(v) and
 * allgather(v) receive as the next type of the family).  The others (a C
 * struct with padding, pair types, a zero-size type with an extent) go to the
 * same type on both sides.
 *
 * Each iteration builds its types anew (in other handles) and frees them.
 *
 *   accel_types [iters=N]
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define MAXT 32

static int me, n, failures;

static void die(const char *what, int rc) {
  fprintf(stderr, "accel_types: rank %d: %s failed (%d)\n", me, what, rc);
  MPI_Abort(MPI_COMM_WORLD, 1);
}
#define CALL(x)                           \
  do {                                    \
    int rc_ = (x);                        \
    if (rc_ != MPI_SUCCESS) die(#x, rc_); \
  } while (0)

typedef struct {
  MPI_Datatype t;
  const char *name;
  int ints; /* MPI_INTs per element (int family), 0 otherwise */
  MPI_Aint lb, extent, tlb, textent;
  int size;
} Ty;
static Ty T[MAXT];
static int nt, nint; /* types; the first nint are the int family */

static void add(MPI_Datatype t, const char *name, int ints) {
  Ty *y = &T[nt++];
  CALL(MPI_Type_commit(&t));
  y->t = t, y->name = name, y->ints = ints;
  CALL(MPI_Type_get_extent(t, &y->lb, &y->extent));
  CALL(MPI_Type_get_true_extent(t, &y->tlb, &y->textent));
  CALL(MPI_Type_size(t, &y->size));
  if (ints && y->size != ints * (int)sizeof(int)) {
    fprintf(stderr, "accel_types: test bug: %s has %d bytes, not %d ints\n", name, y->size, ints);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* `shift` types are made before the others and freed after them, so that
 * each round of types takes other handles than the last (a type freed must
 * take its decoded form with it: a handle the host reuses names a new type). */
static void build(int shift) {
  MPI_Datatype a, b, c, dummy[8];
  nt = 0;
  for (int i = 0; i < shift % 8; ++i) CALL(MPI_Type_contiguous(i + 1, MPI_INT, &dummy[i]));
  /* the int family */
  CALL(MPI_Type_contiguous(3, MPI_INT, &a));
  add(a, "contiguous(3)", 3);
  CALL(MPI_Type_vector(3, 2, 5, MPI_INT, &a));
  add(a, "vector(3,2,5)", 6);
  CALL(MPI_Type_create_hvector(2, 3, 28, MPI_INT, &a));
  add(a, "hvector(2,3,28B)", 6);
  {
    int bl[3] = {2, 1, 3}, d[3] = {5, 0, 9};
    CALL(MPI_Type_indexed(3, bl, d, MPI_INT, &a));
    add(a, "indexed({2,1,3},{5,0,9})", 6);
  }
  {
    int bl[2] = {1, 2};
    MPI_Aint d[2] = {20, -8};
    CALL(MPI_Type_create_hindexed(2, bl, d, MPI_INT, &a));
    add(a, "hindexed({1,2},{20,-8}B)", 3);
  }
  {
    int d[3] = {4, 1, 7};
    CALL(MPI_Type_create_indexed_block(3, 2, d, MPI_INT, &a));
    add(a, "indexed_block(3,2,{4,1,7})", 6);
  }
  {
    MPI_Aint d[3] = {12, 0, 4};
    CALL(MPI_Type_create_hindexed_block(3, 1, d, MPI_INT, &a));
    add(a, "hindexed_block(3,1,{12,0,4}B)", 3);
  }
  {
    int bl[2] = {2, 1};
    MPI_Aint d[2] = {16, 0};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    CALL(MPI_Type_create_struct(2, bl, d, ty, &a));
    add(a, "struct(int[2]@16,int@0)", 3);
  }
  {
    int sz[3] = {4, 3, 5}, sub[3] = {2, 2, 3}, st[3] = {1, 0, 2};
    CALL(MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_INT, &a));
    add(a, "subarray C 4x3x5 [2x2x3 at 1,0,2]", 12);
  }
  {
    int sz[2] = {5, 4}, sub[2] = {3, 2}, st[2] = {2, 1};
    CALL(MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &a));
    add(a, "subarray Fortran 5x4 [3x2 at 2,1]", 6);
  }
  {
    int gs[2] = {6, 5}, di[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, da[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
        ps[2] = {2, 2};
    CALL(MPI_Type_create_darray(4, 1, 2, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &a));
    int s;
    CALL(MPI_Type_size(a, &s));
    add(a, "darray 6x5 block,cyclic(2) rank 1 of 2x2", s / (int)sizeof(int));
  }
  CALL(MPI_Type_vector(2, 1, 3, MPI_INT, &b));
  CALL(MPI_Type_create_resized(b, -4, 20, &a));
  add(a, "resized(vector(2,1,3),-4,20)", 2);
  CALL(MPI_Type_free(&b));
  {
    int bl[3] = {1, 1, 2}, d[3] = {3, 0, 1};
    CALL(MPI_Type_indexed(3, bl, d, MPI_INT, &b));
    CALL(MPI_Type_dup(b, &a));
    add(a, "dup(indexed({1,1,2},{3,0,1}))", 4);
    CALL(MPI_Type_free(&b));
  }
  /* nested: a vector of resized hindexed pairs, a contiguous of structs of vectors */
  {
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {4, 0};
    CALL(MPI_Type_create_hindexed(2, bl, d, MPI_INT, &c));
    CALL(MPI_Type_create_resized(c, 0, 12, &b));
    CALL(MPI_Type_vector(3, 2, 3, b, &a));
    add(a, "vector(3,2,3,resized(hindexed({1,1},{4,0}B),0,12))", 12);
    CALL(MPI_Type_free(&b));
    CALL(MPI_Type_free(&c));
  }
  {
    CALL(MPI_Type_vector(2, 1, 2, MPI_INT, &c));
    int bl[2] = {1, 2};
    MPI_Aint d[2] = {40, 0};
    MPI_Datatype ty[2] = {c, MPI_INT};
    CALL(MPI_Type_create_struct(2, bl, d, ty, &b));
    CALL(MPI_Type_contiguous(2, b, &a));
    add(a, "contiguous(2,struct(vector(2,1,2)@40,int[2]@0))", 8);
    CALL(MPI_Type_free(&b));
    CALL(MPI_Type_free(&c));
  }
  /* one run of data: used in place (a resized contiguous with a negative lb) */
  CALL(MPI_Type_contiguous(4, MPI_INT, &b));
  CALL(MPI_Type_create_resized(b, -8, 16, &a));
  add(a, "resized(contiguous(4),-8,16)", 4);
  CALL(MPI_Type_free(&b));
  nint = nt;
  /* others: same type on both sides */
  {
    struct s {
      char c;
      double d;
      int i;
    };
    int bl[3] = {1, 1, 1};
    MPI_Aint d[3] = {offsetof(struct s, c), offsetof(struct s, d), offsetof(struct s, i)};
    MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
    CALL(MPI_Type_create_struct(3, bl, d, ty, &b));
    CALL(MPI_Type_vector(2, 1, 2, b, &a));
    add(a, "vector(2,1,2,struct{char,double,int})", 0);
    CALL(MPI_Type_free(&b));
  }
  {
    int bl[2] = {1, 2};
    MPI_Aint d[2] = {0, 32};
    MPI_Datatype ty[2] = {MPI_LONG_DOUBLE_INT, MPI_SHORT_INT};
    CALL(MPI_Type_create_struct(2, bl, d, ty, &a));
    add(a, "struct(long_double_int@0,short_int[2]@32)", 0);
  }
  CALL(MPI_Type_contiguous(3, MPI_DOUBLE_INT, &a));
  add(a, "contiguous(3,MPI_DOUBLE_INT)", 0);
  CALL(MPI_Type_contiguous(0, MPI_INT, &b));
  CALL(MPI_Type_create_resized(b, 0, 8, &a));
  add(a, "resized(contiguous(0),0,8)", 0);
  CALL(MPI_Type_free(&b));
  for (int i = 0; i < shift % 8; ++i) CALL(MPI_Type_free(&dummy[i]));
}

/* A buffer holding `slots` blocks of up to `maxcount` elements of type y,
 * block k starting at byte offset k * stride(y, maxcount) from `origin`. */
typedef struct {
  unsigned char *mem; /* allocation */
  unsigned char *origin;
  size_t bytes;
} Buf;

static MPI_Aint lo_of(const Ty *y) { return y->lb < y->tlb ? y->lb : y->tlb; }
static MPI_Aint block_stride(const Ty *y, int maxcount) {
  /* whole elements, so a block's displacement is a multiple of the extent (alltoall(v) count in extents) */
  MPI_Aint span = (MPI_Aint)maxcount * (y->extent > 0 ? y->extent : 1) + y->textent + 64;
  MPI_Aint e = y->extent > 0 ? y->extent : 1;
  return (span + e - 1) / e * e;
}
static void buf_make(Buf *b, const Ty *y, int slots, int maxcount) {
  MPI_Aint before = GUARD - lo_of(y);
  b->bytes = (size_t)(before + (MPI_Aint)slots * block_stride(y, maxcount) + GUARD + 256);
  b->mem = malloc(b->bytes);
  if (!b->mem) die("malloc", 0);
  b->origin = b->mem + before;
}
static unsigned char pat(int who, int salt, size_t i) {
  unsigned x = (unsigned)who * 2654435761u ^ (unsigned)salt * 40503u ^ (unsigned)i * 2246822519u;
  x ^= x >> 15;
  return (unsigned char)(x ^ (x >> 8));
}
static void fill(Buf *b, int who, int salt) {
  for (size_t i = 0; i < b->bytes; ++i) b->mem[i] = pat(who, salt, i);
}

/* The host's reference: pack `count` of sy at `from` (in a copy of the
 * sender's buffer), unpack into `to` as rcount of ry. */
static void reference(const unsigned char *from, int count, const Ty *sy, unsigned char *to, int rcount, const Ty *ry) {
  int sz;
  CALL(MPI_Pack_size(count, sy->t, MPI_COMM_WORLD, &sz));
  void *tmp = malloc(sz > 0 ? sz : 1);
  int pos = 0;
  CALL(MPI_Pack(from, count, sy->t, tmp, sz, &pos, MPI_COMM_WORLD));
  int upos = 0;
  CALL(MPI_Unpack(tmp, pos, &upos, to, rcount, ry->t, MPI_COMM_WORLD));
  free(tmp);
}

static void compare(const Buf *got, const Buf *want, const char *op, const Ty *sy, const Ty *ry, int count) {
  if (memcmp(got->mem, want->mem, got->bytes) == 0) return;
  size_t i = 0;
  while (got->mem[i] == want->mem[i]) ++i;
  fprintf(stderr,
          "accel_types: rank %d of %d: %s send %s recv %s count %d: byte %ld from the receive origin is 0x%02x, "
          "expected 0x%02x\n",
          me, n, op, sy->name, ry->name, count, (long)((got->mem + i) - got->origin), got->mem[i], want->mem[i]);
  ++failures;
}

/* The sender's buffer as it fills it (regenerated by the receivers for the reference). */
static void sender_buf(Buf *b, int who, int salt) { fill(b, who, salt); }

static void run_alltoall(const Ty *sy, const Ty *ry, int scount, int rcount, int salt) {
  Buf s, r, w, peer;
  buf_make(&s, sy, n, scount), buf_make(&r, ry, n, rcount), buf_make(&w, ry, n, rcount), buf_make(&peer, sy, n, scount);
  /* alltoall: block j at j * count * extent; use extents through alltoallv for the gaps */
  sender_buf(&s, me, salt);
  fill(&r, -1, salt), fill(&w, -1, salt);
  CALL(MPI_Alltoall(s.origin, scount, sy->t, r.origin, rcount, ry->t, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p) {
    sender_buf(&peer, p, salt);
    reference(peer.origin + (MPI_Aint)me * scount * sy->extent, scount, sy,
              w.origin + (MPI_Aint)p * rcount * ry->extent, rcount, ry);
  }
  compare(&r, &w, "MPI_Alltoall", sy, ry, scount);
  /* alltoallv: counts by pair (0 for some), blocks in reverse order with gaps */
  int *sc = malloc(sizeof(int) * 4 * n), *sd = sc + n, *rc = sc + 2 * n, *rd = sc + 3 * n;
  const MPI_Aint sst = block_stride(sy, scount), rst = block_stride(ry, rcount);
  for (int p = 0; p < n; ++p) {
    int k = (me + 2 * p + salt) % 3; /* multiplier 0, 1 or 2 halves... of the pair's count */
    int kr = (p + 2 * me + salt) % 3;
    sc[p] = k == 0 ? 0 : scount, rc[p] = kr == 0 ? 0 : rcount;
    sd[p] = (int)((n - 1 - p) * sst / (sy->extent > 0 ? sy->extent : 1));
    rd[p] = (int)((n - 1 - p) * rst / (ry->extent > 0 ? ry->extent : 1));
  }
  fill(&r, -2, salt), fill(&w, -2, salt);
  CALL(MPI_Alltoallv(s.origin, sc, sd, sy->t, r.origin, rc, rd, ry->t, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p) {
    if (!rc[p]) continue;
    sender_buf(&peer, p, salt);
    MPI_Aint sdp = (MPI_Aint)((n - 1 - me) * sst / (sy->extent > 0 ? sy->extent : 1)) * sy->extent;
    reference(peer.origin + sdp, scount, sy, w.origin + (MPI_Aint)rd[p] * ry->extent, rcount, ry);
  }
  compare(&r, &w, "MPI_Alltoallv", sy, ry, scount);
  free(sc);
  free(s.mem), free(r.mem), free(w.mem), free(peer.mem);
}

static void run_allgather(const Ty *sy, const Ty *ry, int scount, int rcount, int salt) {
  Buf s, r, w, peer;
  buf_make(&s, sy, 1, scount), buf_make(&r, ry, n, rcount), buf_make(&w, ry, n, rcount), buf_make(&peer, sy, 1, scount);
  sender_buf(&s, me, salt);
  fill(&r, -3, salt), fill(&w, -3, salt);
  CALL(MPI_Allgather(s.origin, scount, sy->t, r.origin, rcount, ry->t, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p) {
    sender_buf(&peer, p, salt);
    reference(peer.origin, scount, sy, w.origin + (MPI_Aint)p * rcount * ry->extent, rcount, ry);
  }
  compare(&r, &w, "MPI_Allgather", sy, ry, scount);
  /* allgatherv: every other rank sends nothing; blocks reversed with gaps */
  const int give = (me + salt) % 2;
  int *rc = malloc(sizeof(int) * 2 * n), *rd = rc + n;
  const MPI_Aint rst = block_stride(ry, rcount);
  for (int p = 0; p < n; ++p) {
    rc[p] = (p + salt) % 2 ? rcount : 0;
    rd[p] = (int)((n - 1 - p) * rst / (ry->extent > 0 ? ry->extent : 1));
  }
  fill(&r, -4, salt), fill(&w, -4, salt);
  CALL(MPI_Allgatherv(s.origin, give ? scount : 0, sy->t, r.origin, rc, rd, ry->t, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p) {
    if (!rc[p]) continue;
    sender_buf(&peer, p, salt);
    reference(peer.origin, scount, sy, w.origin + (MPI_Aint)rd[p] * ry->extent, rcount, ry);
  }
  compare(&r, &w, "MPI_Allgatherv", sy, ry, scount);
  free(rc);
  free(s.mem), free(r.mem), free(w.mem), free(peer.mem);
}

static void run_bcast(const Ty *y, int count, int salt) {
  Buf b, w;
  buf_make(&b, y, 1, count), buf_make(&w, y, 1, count);
  for (int root = 0; root < n; ++root) {
    fill(&b, me == root ? root : -5, salt + root), fill(&w, -5, salt + root);
    CALL(MPI_Bcast(b.origin, count, y->t, root, MPI_COMM_WORLD));
    if (me == root) {
      fill(&w, root, salt + root);
    } else {
      Buf peer;
      buf_make(&peer, y, 1, count);
      fill(&peer, root, salt + root);
      reference(peer.origin, count, y, w.origin, count, y);
      free(peer.mem);
    }
    compare(&b, &w, "MPI_Bcast", y, y, count);
  }
  free(b.mem), free(w.mem);
}

/* alltoallw: per peer a different pair of int-family types, byte displacements */
static void run_alltoallw(int salt) {
  const int slots = n;
  MPI_Aint st = 0;
  for (int t = 0; t < nint; ++t) {
    MPI_Aint s = block_stride(&T[t], 12);
    if (s > st) st = s;
  }
  MPI_Aint lo = 0;
  for (int t = 0; t < nint; ++t)
    if (lo_of(&T[t]) < lo) lo = lo_of(&T[t]);
  size_t bytes = (size_t)(GUARD - lo + slots * st + GUARD + 256);
  unsigned char *smem = malloc(bytes), *rmem = malloc(bytes), *wmem = malloc(bytes), *pmem = malloc(bytes);
  unsigned char *so = smem + GUARD - lo, *ro = rmem + GUARD - lo, *wo = wmem + GUARD - lo, *po = pmem + GUARD - lo;
  int *sc = malloc(sizeof(int) * 4 * n), *rc = sc + n, *sd = sc + 2 * n, *rd = sc + 3 * n;
  MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * 2 * n), *rts = sts + n;
  /* the pair (sender i, receiver j) sends T[a] x ints(b) as T[b] x ints(a) */
#define TA(i, j) (((i)*3 + (j)*5 + salt) % nint)
#define TB(i, j) (((i)*7 + (j) + 2 * salt) % nint)
  for (int p = 0; p < n; ++p) {
    const Ty *a = &T[TA(me, p)], *b = &T[TB(me, p)];
    sts[p] = a->t, sc[p] = (p + salt) % 4 ? b->ints : 0, sd[p] = (int)((n - 1 - p) * st);
    const Ty *a2 = &T[TA(p, me)], *b2 = &T[TB(p, me)];
    rts[p] = b2->t, rc[p] = (me + salt) % 4 ? a2->ints : 0, rd[p] = (int)(p * st);
  }
  for (size_t i = 0; i < bytes; ++i) smem[i] = pat(me, salt, i), rmem[i] = wmem[i] = pat(-6, salt, i);
  /* (rc[p] is zero exactly when the sender's count to me is: both depend on (me + salt) % 4) */
  for (int p = 0; p < n; ++p)
    if (((me + salt) % 4 == 0) != (rc[p] == 0)) die("test bug: alltoallw counts", 0);
  CALL(MPI_Alltoallw(so, sc, sd, sts, ro, rc, rd, rts, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p) {
    if (!rc[p]) continue;
    for (size_t i = 0; i < bytes; ++i) pmem[i] = pat(p, salt, i);
    const Ty *a2 = &T[TA(p, me)], *b2 = &T[TB(p, me)];
    reference(po + (n - 1 - me) * st, b2->ints, a2, wo + rd[p], a2->ints, b2);
  }
  if (memcmp(rmem, wmem, bytes) != 0) {
    size_t i = 0;
    while (rmem[i] == wmem[i]) ++i;
    fprintf(stderr,
            "accel_types: rank %d of %d: MPI_Alltoallw salt %d: byte %ld from the receive origin is 0x%02x, "
            "expected 0x%02x\n",
            me, n, salt, (long)((rmem + i) - ro), rmem[i], wmem[i]);
    ++failures;
  }
#undef TA
#undef TB
  free(sc), free(sts), free(smem), free(rmem), free(wmem), free(pmem);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int iters = 1;
  for (int i = 1; i < argc; ++i)
    if (!strncmp(argv[i], "iters=", 6)) iters = atoi(argv[i] + 6);
  long cases = 0;
  for (int it = 0; it < iters; ++it) {
    build(it);
    for (int t = 0; t < nt; ++t)
      for (int c = 0; c < 2; ++c) {
        const int count = c ? 3 : 1, salt = it * 1000 + t * 10 + c;
        /* int family: received as the next type of the family (counts keep the ints equal) */
        const Ty *sy = &T[t], *ry = t < nint ? &T[(t + 1) % nint] : &T[t];
        const int scount = t < nint ? count * ry->ints : count, rcount = t < nint ? count * sy->ints : count;
        run_alltoall(sy, ry, scount, rcount, salt);
        run_allgather(sy, ry, scount, rcount, salt);
        run_bcast(sy, count, salt);
        cases += 5;
        if (t < nint) {
          run_alltoallw(salt);
          ++cases;
        }
      }
    for (int t = 0; t < nt; ++t) CALL(MPI_Type_free(&T[t].t));
  }
  int bad = 0;
  MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (me == 0) printf("accel_types: %d ranks, %d types, %ld cases per rank, %d failures\n", n, nt, cases, bad);
  MPI_Finalize();
  return bad ? 1 : 0;
}
