/*
 * perf/pack/pack_compare.c -- MPI_Pack / MPI_Unpack throughput, standard MPI only.
 *
 * Built unchanged against shmcoll (install/bin/shmcc), Open MPI (mpicc.openmpi)
 * and MPICH (mpicc.mpich) by perf/pack/compare.sh, so that shmcoll's datatype
 * engine can be compared with theirs.  Single rank (run as an MPI singleton).
 *
 * Cases
 *   vec_b1, vec_b8, vec_b64   MPI_Type_vector of doubles, block length b, stride
 *                             2*b elements (every other block: the gaps are as
 *                             long as the blocks); 1 Mi doubles = 8 MiB payload
 *   struct_cdi                struct {char c; double d; int i;} built with
 *                             MPI_Type_create_struct from offsetof() and resized
 *                             to sizeof(struct); 1 Mi elements (13 B payload each)
 *   face_x, face_y, face_z    faces of a 256^3 double array (C order) through
 *                             MPI_Type_create_subarray, subsizes {1,256,256},
 *                             {256,1,256}, {256,256,1}; 512 KiB payload each
 *
 * For every case MPI_Pack and MPI_Unpack are timed (one warm-up call, then
 * batches that repeat the call until ~0.3 s have elapsed; the best of 3 batches
 * is kept), and so is memcpy of the same number of payload bytes (contiguous),
 * as the reference.  Once per case unpack(pack(x)) into a zeroed buffer is
 * checked byte for byte against x at the type map positions.
 *
 * Output: one CSV line per (case, op), no header:
 *   impl,case,op,payload_bytes,seconds,GBps,share_of_memcpy
 * seconds is the best per-call time; GBps = payload_bytes / seconds / 1e9;
 * share_of_memcpy = memcpy seconds / op seconds (1.0 = as fast as memcpy).
 *
 * The environment variable PACK_BATCH_SECONDS overrides the 0.3 s batch length.
 *
 * MPI calls used: MPI_Init, MPI_Type_vector, MPI_Type_create_struct,
 * MPI_Type_create_resized (for the struct's extent), MPI_Type_create_subarray,
 * MPI_Type_commit, MPI_Pack, MPI_Unpack, MPI_Pack_size, MPI_Wtime,
 * MPI_Type_free, MPI_Finalize.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(SHMCOLL)
#define IMPL_NAME "shmcoll"
#elif defined(OMPI_MAJOR_VERSION)
#define IMPL_NAME "openmpi"
#elif defined(MPICH_VERSION)
#define IMPL_NAME "mpich"
#else
#define IMPL_NAME "unknown"
#endif

#define NBATCH 3
#define VEC_DOUBLES (1 << 20)  /* 8 MiB of payload */
#define STRUCT_COUNT (1 << 20) /* ~1M elements */
#define N3 256

struct cdi {
  char c;
  double d;
  int i;
};

static double batch_seconds = 0.3;

/* Keeps the compiler from treating the reference copy as dead. */
static void *(*volatile memcpy_fn)(void *, const void *, size_t) = memcpy;

static void die(const char *what, const char *case_name) {
  fprintf(stderr, "pack_compare [%s] %s: %s\n", IMPL_NAME, case_name, what);
  exit(1);
}

static void check(int rc, const char *call, const char *case_name) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "pack_compare [%s] %s: %s returned %d\n", IMPL_NAME, case_name, call, rc);
    exit(1);
  }
}

static void *xmalloc(size_t n, const char *case_name) {
  void *p = malloc(n ? n : 1);
  if (!p) die("out of memory", case_name);
  return p;
}

static void fill_pattern(unsigned char *p, size_t n) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (size_t k = 0; k < n; k++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    unsigned char v = (unsigned char)(s >> 56);
    p[k] = v ? v : 0x5a; /* never zero, so a missed byte is always visible */
  }
}

/* ---------------------------------------------------------------- timing */

enum op { OP_PACK, OP_UNPACK, OP_MEMCPY };

struct job {
  const char *name;
  MPI_Datatype type;
  int count;
  unsigned char *src;   /* typed buffer (the original) */
  unsigned char *dst;   /* typed buffer for unpack */
  unsigned char *packed;
  int packed_size;      /* MPI_Pack_size */
  unsigned char *mc_src, *mc_dst;
  size_t payload;
};

static void run_once(struct job *j, enum op op) {
  int pos = 0;
  switch (op) {
  case OP_PACK:
    check(MPI_Pack(j->src, j->count, j->type, j->packed, j->packed_size, &pos, MPI_COMM_WORLD),
          "MPI_Pack", j->name);
    break;
  case OP_UNPACK:
    check(MPI_Unpack(j->packed, j->packed_size, &pos, j->dst, j->count, j->type, MPI_COMM_WORLD),
          "MPI_Unpack", j->name);
    break;
  case OP_MEMCPY:
    memcpy_fn(j->mc_dst, j->mc_src, j->payload);
    break;
  }
}

/* Best per-call seconds over NBATCH batches of ~batch_seconds each. */
static double time_op(struct job *j, enum op op) {
  run_once(j, op); /* warm-up */
  double best = 1e300;
  for (int b = 0; b < NBATCH; b++) {
    long iters = 0;
    double t0 = MPI_Wtime(), t;
    do {
      run_once(j, op);
      iters++;
      t = MPI_Wtime() - t0;
    } while (t < batch_seconds);
    double per = t / (double)iters;
    if (per < best) best = per;
  }
  return best;
}

/* memcpy reference, cached per payload size (several cases share one). */
static double memcpy_seconds(struct job *j) {
  static size_t cached_bytes[8];
  static double cached_secs[8];
  static int ncached = 0;
  for (int k = 0; k < ncached; k++)
    if (cached_bytes[k] == j->payload) return cached_secs[k];
  j->mc_src = xmalloc(j->payload, j->name);
  j->mc_dst = xmalloc(j->payload, j->name);
  fill_pattern(j->mc_src, j->payload);
  memset(j->mc_dst, 0, j->payload);
  double s = time_op(j, OP_MEMCPY);
  if (j->mc_dst[j->payload - 1] != j->mc_src[j->payload - 1]) die("memcpy reference broken", j->name);
  free(j->mc_src);
  free(j->mc_dst);
  j->mc_src = j->mc_dst = NULL;
  if (ncached < 8) {
    cached_bytes[ncached] = j->payload;
    cached_secs[ncached] = s;
    ncached++;
  }
  return s;
}

static void emit(const struct job *j, const char *op, double secs, double mc_secs) {
  printf("%s,%s,%s,%zu,%.9e,%.4f,%.4f\n", IMPL_NAME, j->name, op, j->payload, secs,
         (double)j->payload / secs / 1e9, mc_secs / secs);
  fflush(stdout);
}

/* ---------------------------------------------------------------- verification */

/* Compares dst against src over n bytes at offset off; the type-map walkers call it. */
static int cmp_block(const struct job *j, size_t off, size_t n) {
  if (memcmp(j->dst + off, j->src + off, n) != 0) {
    for (size_t k = 0; k < n; k++)
      if (j->dst[off + k] != j->src[off + k]) {
        fprintf(stderr,
                "pack_compare [%s] %s: round trip mismatch at byte offset %zu: got 0x%02x, want 0x%02x\n",
                IMPL_NAME, j->name, off + k, j->dst[off + k], j->src[off + k]);
        break;
      }
    return 1;
  }
  return 0;
}

/* Pack x, unpack into a zeroed buffer, compare at the type map positions. */
static void verify(struct job *j, size_t extent_bytes, int (*walk)(const struct job *, const void *),
                   const void *arg) {
  memset(j->dst, 0, extent_bytes);
  memset(j->packed, 0, (size_t)j->packed_size);
  int pos = 0;
  check(MPI_Pack(j->src, j->count, j->type, j->packed, j->packed_size, &pos, MPI_COMM_WORLD), "MPI_Pack",
        j->name);
  if ((size_t)pos != j->payload) {
    fprintf(stderr, "pack_compare [%s] %s: MPI_Pack wrote %d bytes, expected %zu\n", IMPL_NAME, j->name, pos,
            j->payload);
    exit(1);
  }
  int upos = 0;
  check(MPI_Unpack(j->packed, pos, &upos, j->dst, j->count, j->type, MPI_COMM_WORLD), "MPI_Unpack",
        j->name);
  if (upos != pos) {
    fprintf(stderr, "pack_compare [%s] %s: MPI_Unpack consumed %d bytes, MPI_Pack wrote %d\n", IMPL_NAME,
            j->name, upos, pos);
    exit(1);
  }
  if (walk(j, arg)) die("unpack(pack(x)) does not round-trip", j->name);
}

struct vec_arg {
  int nblocks, blen, stride; /* in doubles */
};

static int walk_vector(const struct job *j, const void *a) {
  const struct vec_arg *v = a;
  for (int b = 0; b < v->nblocks; b++)
    if (cmp_block(j, (size_t)b * v->stride * sizeof(double), (size_t)v->blen * sizeof(double))) return 1;
  return 0;
}

static int walk_struct(const struct job *j, const void *a) {
  int n = *(const int *)a;
  for (int e = 0; e < n; e++) {
    size_t base = (size_t)e * sizeof(struct cdi);
    if (cmp_block(j, base + offsetof(struct cdi, c), sizeof(char)) ||
        cmp_block(j, base + offsetof(struct cdi, d), sizeof(double)) ||
        cmp_block(j, base + offsetof(struct cdi, i), sizeof(int)))
      return 1;
  }
  return 0;
}

static int walk_face(const struct job *j, const void *a) {
  const int *sub = a; /* subsizes, starts are 0 */
  for (int x = 0; x < sub[0]; x++)
    for (int y = 0; y < sub[1]; y++) {
      size_t off = (((size_t)x * N3 + (size_t)y) * N3) * sizeof(double);
      if (cmp_block(j, off, (size_t)sub[2] * sizeof(double))) return 1;
    }
  return 0;
}

/* ---------------------------------------------------------------- cases */

static void setup_packbuf(struct job *j) {
  check(MPI_Pack_size(j->count, j->type, MPI_COMM_WORLD, &j->packed_size), "MPI_Pack_size", j->name);
  if ((size_t)j->packed_size < j->payload) die("MPI_Pack_size smaller than the payload", j->name);
  j->packed = xmalloc((size_t)j->packed_size, j->name);
}

static void measure(struct job *j) {
  double mc = memcpy_seconds(j);
  double tp = time_op(j, OP_PACK);
  double tu = time_op(j, OP_UNPACK);
  emit(j, "pack", tp, mc);
  emit(j, "unpack", tu, mc);
  emit(j, "memcpy", mc, mc);
}

static void case_vector(int blen) {
  static char name[32];
  snprintf(name, sizeof name, "vec_b%d", blen);
  struct vec_arg v = {VEC_DOUBLES / blen, blen, 2 * blen};
  size_t extent = (size_t)v.nblocks * v.stride * sizeof(double);
  struct job j = {.name = name, .count = 1, .payload = (size_t)VEC_DOUBLES * sizeof(double)};
  check(MPI_Type_vector(v.nblocks, v.blen, v.stride, MPI_DOUBLE, &j.type), "MPI_Type_vector", name);
  check(MPI_Type_commit(&j.type), "MPI_Type_commit", name);
  j.src = xmalloc(extent, name);
  j.dst = xmalloc(extent, name);
  fill_pattern(j.src, extent);
  setup_packbuf(&j);
  verify(&j, extent, walk_vector, &v);
  measure(&j);
  check(MPI_Type_free(&j.type), "MPI_Type_free", name);
  free(j.src);
  free(j.dst);
  free(j.packed);
}

static void case_struct(void) {
  const char *name = "struct_cdi";
  int n = STRUCT_COUNT;
  int blens[3] = {1, 1, 1};
  MPI_Aint disps[3] = {offsetof(struct cdi, c), offsetof(struct cdi, d), offsetof(struct cdi, i)};
  MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
  MPI_Datatype raw;
  struct job j = {.name = name, .count = n,
                  .payload = (size_t)n * (sizeof(char) + sizeof(double) + sizeof(int))};
  check(MPI_Type_create_struct(3, blens, disps, types, &raw), "MPI_Type_create_struct", name);
  check(MPI_Type_create_resized(raw, 0, (MPI_Aint)sizeof(struct cdi), &j.type), "MPI_Type_create_resized",
        name);
  check(MPI_Type_free(&raw), "MPI_Type_free", name);
  check(MPI_Type_commit(&j.type), "MPI_Type_commit", name);
  size_t extent = (size_t)n * sizeof(struct cdi);
  j.src = xmalloc(extent, name);
  j.dst = xmalloc(extent, name);
  fill_pattern(j.src, extent);
  setup_packbuf(&j);
  verify(&j, extent, walk_struct, &n);
  measure(&j);
  check(MPI_Type_free(&j.type), "MPI_Type_free", name);
  free(j.src);
  free(j.dst);
  free(j.packed);
}

static void case_faces(void) {
  static const char *names[3] = {"face_x", "face_y", "face_z"};
  static const int subs[3][3] = {{1, N3, N3}, {N3, 1, N3}, {N3, N3, 1}};
  const int sizes[3] = {N3, N3, N3};
  const int starts[3] = {0, 0, 0};
  size_t extent = (size_t)N3 * N3 * N3 * sizeof(double);
  unsigned char *src = xmalloc(extent, "faces");
  unsigned char *dst = xmalloc(extent, "faces");
  fill_pattern(src, extent);
  for (int f = 0; f < 3; f++) {
    struct job j = {.name = names[f], .count = 1, .src = src, .dst = dst,
                    .payload = (size_t)subs[f][0] * subs[f][1] * subs[f][2] * sizeof(double)};
    check(MPI_Type_create_subarray(3, sizes, subs[f], starts, MPI_ORDER_C, MPI_DOUBLE, &j.type),
          "MPI_Type_create_subarray", names[f]);
    check(MPI_Type_commit(&j.type), "MPI_Type_commit", names[f]);
    setup_packbuf(&j);
    verify(&j, extent, walk_face, subs[f]);
    measure(&j);
    check(MPI_Type_free(&j.type), "MPI_Type_free", names[f]);
    free(j.packed);
  }
  free(src);
  free(dst);
}

int main(int argc, char **argv) {
  const char *env = getenv("PACK_BATCH_SECONDS");
  if (env && *env) {
    double s = atof(env);
    if (s > 0) batch_seconds = s;
  }
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "pack_compare [%s]: MPI_Init failed\n", IMPL_NAME);
    return 1;
  }
  case_vector(1);
  case_vector(8);
  case_vector(64);
  case_struct();
  case_faces();
  MPI_Finalize();
  return 0;
}
