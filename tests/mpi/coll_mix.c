/* coll_mix: a seeded random sequence of mixed collectives, checked byte for byte.
 *
 *   coll_mix [seed=S] [iters=N] [max=BYTES]     defaults: seed=1, iters=3000, max=300
 *
 * Every iteration draws, from a stream all ranks compute alike, a
 * communicator (world, a dup, one of two split halves that run different
 * sequences at the same time, a reversed split), an operation (alltoall,
 * allgather, bcast, gather, scatter, reduce, allreduce, barrier), a root and a
 * block size (mostly small, 0..max bytes, now and then up to 96 KiB).  The mix
 * of rooted and unrooted operations, changing roots and interleaved
 * communicators is what the engine's reuse of its per-rank announcement areas
 * has to survive: a rank may rewrite an area only when every reader of its
 * last use is done, and after a rooted operation not every rank has heard
 * from every other.  Each receive area has guard bytes before and after that
 * must stay untouched; send buffers must stay unchanged; every byte received
 * is a function of (iteration, sender, receiver, index).
 *
 * Standard MPI only: the same source passes under Open MPI and MPICH.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 64
#define BIG (96 * 1024)

static int wrank;

static uint64_t rnd(uint64_t *s) { /* xorshift64* */
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  return *s * 0x2545f4914f6cdd1dull;
}

static unsigned char pat(long it, int from, int to, size_t k) {
  uint64_t x = (uint64_t)it * 0x9e3779b97f4a7c15ull ^ (uint64_t)from << 40 ^ (uint64_t)to << 20 ^ k;
  x ^= x >> 31, x *= 0xbf58476d1ce4e5b9ull, x ^= x >> 29;
  return (unsigned char)x;
}

static void die(const char *what, long it, const char *op, int rank, size_t off) {
  fprintf(stderr, "FAIL coll_mix: world rank %d: %s at iteration %ld (%s), comm rank %d, offset %zu\n", wrank, what,
          it, op, rank, off);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void call(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "FAIL coll_mix: world rank %d: %s returned %d\n", wrank, what, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* A receive area of `n` bytes with guards on both sides. */
static unsigned char *area(size_t n) {
  unsigned char *p = malloc(n + 2 * GUARD);
  memset(p, 0xa5, n + 2 * GUARD);
  return p + GUARD;
}
static void check_guards(unsigned char *p, size_t n, long it, const char *op, int me) {
  for (size_t i = 0; i < GUARD; i++) {
    if (p[-1 - (long)i] != 0xa5) die("guard before the receive area written", it, op, me, i);
    if (p[n + i] != 0xa5) die("guard after the receive area written", it, op, me, n + i);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  int wsize;
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  long seed = 1, iters = 3000, maxb = 300;
  for (int i = 1; i < argc; i++) {
    if (!strncmp(argv[i], "seed=", 5)) seed = atol(argv[i] + 5);
    if (!strncmp(argv[i], "iters=", 6)) iters = atol(argv[i] + 6);
    if (!strncmp(argv[i], "max=", 4)) maxb = atol(argv[i] + 4);
  }
  MPI_Comm comms[4];
  comms[0] = MPI_COMM_WORLD;
  call(MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]), "MPI_Comm_dup");
  const int color = wrank % 2;
  call(MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &comms[2]), "MPI_Comm_split");
  call(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &comms[3]), "MPI_Comm_split");
  static const char *const opname[8] = {"alltoall", "allgather", "bcast",     "gather",
                                        "scatter",  "reduce",    "allreduce", "barrier"};
  uint64_t g = (uint64_t)seed * 0x9e3779b97f4a7c15ull | 1, h = ((uint64_t)seed * 31 + 7 + (uint64_t)color) | 1;
  long counts[8] = {0};
  for (long it = 0; it < iters; it++) {
    int ci = (int)(rnd(&g) % 4);
    uint64_t *s = ci == 2 ? &h : &g; /* the halves draw from their own streams */
    MPI_Comm comm = comms[ci];
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    const int op = (int)(rnd(s) % 8);
    const int root = (int)(rnd(s) % (uint64_t)n);
    size_t b = (size_t)(rnd(s) % (uint64_t)(maxb + 1));
    if (rnd(s) % 16 == 0) b = (size_t)(rnd(s) % BIG);
    if (op == 5 || op == 6) b &= ~(size_t)7; /* doubles */
    const long key = it * 8 + ci;
    counts[op]++;
    unsigned char *snd = NULL, *rcv = NULL, *ref = NULL;
    size_t sn = 0, rn = 0;
    switch (op) {
      case 0: /* alltoall: block j of rank i's send buffer goes to rank j */
      case 4: /* scatter */
        sn = (op == 0 || me == root) ? b * n : 0;
        rn = op == 0 ? b * n : b;
        snd = malloc(sn + 1);
        for (int j = 0; j < n && sn; j++)
          for (size_t k = 0; k < b; k++) snd[j * b + k] = pat(key, me, j, k);
        rcv = area(rn);
        if (op == 0)
          call(MPI_Alltoall(snd, (int)b, MPI_BYTE, rcv, (int)b, MPI_BYTE, comm), "MPI_Alltoall");
        else
          call(MPI_Scatter(snd, (int)b, MPI_BYTE, rcv, (int)b, MPI_BYTE, root, comm), "MPI_Scatter");
        for (int i = 0; i < (op == 0 ? n : 1); i++)
          for (size_t k = 0; k < b; k++) {
            int from = op == 0 ? i : root;
            if (rcv[i * b + k] != pat(key, from, me, k)) die("wrong byte", it, opname[op], me, i * b + k);
          }
        for (int j = 0; j < n && sn; j++)
          for (size_t k = 0; k < b; k++)
            if (snd[j * b + k] != pat(key, me, j, k)) die("send buffer changed", it, opname[op], me, j * b + k);
        break;
      case 1: /* allgather */
      case 3: /* gather */
        sn = b;
        rn = (op == 1 || me == root) ? b * n : 0;
        snd = malloc(sn + 1);
        for (size_t k = 0; k < b; k++) snd[k] = pat(key, me, -1, k);
        rcv = area(rn);
        if (op == 1)
          call(MPI_Allgather(snd, (int)b, MPI_BYTE, rcv, (int)b, MPI_BYTE, comm), "MPI_Allgather");
        else
          call(MPI_Gather(snd, (int)b, MPI_BYTE, rcv, (int)b, MPI_BYTE, root, comm), "MPI_Gather");
        for (int i = 0; i < n && rn; i++)
          for (size_t k = 0; k < b; k++)
            if (rcv[i * b + k] != pat(key, i, -1, k)) die("wrong byte", it, opname[op], me, i * b + k);
        for (size_t k = 0; k < b; k++)
          if (snd[k] != pat(key, me, -1, k)) die("send buffer changed", it, opname[op], me, k);
        break;
      case 2: /* bcast */
        rn = b;
        rcv = area(rn);
        if (me == root)
          for (size_t k = 0; k < b; k++) rcv[k] = pat(key, root, -1, k);
        call(MPI_Bcast(rcv, (int)b, MPI_BYTE, root, comm), "MPI_Bcast");
        for (size_t k = 0; k < b; k++)
          if (rcv[k] != pat(key, root, -1, k)) die("wrong byte", it, opname[op], me, k);
        break;
      case 5: /* reduce */
      case 6: { /* allreduce: small integers in doubles, so sums are exact */
        const size_t cnt = b / 8;
        double *in = malloc(cnt * sizeof(double) + 8);
        for (size_t k = 0; k < cnt; k++) in[k] = (double)(pat(key, me, 0, k) % 64);
        rn = (op == 6 || me == root) ? cnt * sizeof(double) : 0;
        rcv = area(rn);
        if (op == 5)
          call(MPI_Reduce(in, rcv, (int)cnt, MPI_DOUBLE, MPI_SUM, root, comm), "MPI_Reduce");
        else
          call(MPI_Allreduce(in, rcv, (int)cnt, MPI_DOUBLE, MPI_SUM, comm), "MPI_Allreduce");
        for (size_t k = 0; k < cnt && rn; k++) {
          double want = 0, got;
          for (int i = 0; i < n; i++) want += (double)(pat(key, i, 0, k) % 64);
          memcpy(&got, rcv + k * sizeof(double), sizeof got);
          if (got != want) die("wrong sum", it, opname[op], me, k * sizeof(double));
        }
        for (size_t k = 0; k < cnt; k++)
          if (in[k] != (double)(pat(key, me, 0, k) % 64)) die("send buffer changed", it, opname[op], me, k);
        free(in);
        break;
      }
      default:
        call(MPI_Barrier(comm), "MPI_Barrier");
    }
    if (rcv) {
      check_guards(rcv, rn, it, opname[op], me);
      free(rcv - GUARD);
    }
    free(snd);
    (void)ref;
  }
  for (int i = 1; i < 4; i++) MPI_Comm_free(&comms[i]);
  MPI_Barrier(MPI_COMM_WORLD);
  if (wrank == 0) {
    printf("coll_mix: seed=%ld iters=%ld ranks=%d:", seed, iters, wsize);
    for (int i = 0; i < 8; i++) printf(" %s %ld", opname[i], counts[i]);
    printf(" (rank 0's draws)\nPASS\n");
  }
  MPI_Finalize();
  return 0;
}
