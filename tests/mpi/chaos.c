/*
 * chaos.c -- the rank program of tests/launcher/chaos_test.cc: every rank
 * writes its pid to DIR/ready.<rank> once MPI_Init has returned, then runs a
 * random sequence of collectives (the same on every rank, from SEED) with
 * random block sizes, until the test kills one rank (or 60 s pass, when it
 * exits 0 and the test reports that no kill landed).  It checks nothing
 * itself: what is tested is how the job ends.
 *
 *   chaos DIR SEED
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t g_state;
static uint32_t next_rand(void) {
  g_state = g_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(g_state >> 33);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: chaos DIR SEED\n");
    return 2;
  }
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  g_state = strtoull(argv[2], NULL, 0) | 1;

  enum { kMaxBlock = 1 << 16 };
  /* a block per rank, and at least the 4 of the 2-D grid's neighbour alltoall */
  const size_t blocks = n > 4 ? (size_t)n : 4;
  char *sbuf = malloc(blocks * kMaxBlock), *rbuf = malloc(blocks * kMaxBlock);
  int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
  memset(sbuf, rank, blocks * kMaxBlock);
  for (int p = 0; p < n; ++p) displs[p] = p * kMaxBlock;
  int dims[2] = {0, 0}, periods[2] = {1, 1};
  MPI_Dims_create(n, 2, dims);
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);

  /* ready: the pid, written whole before the name appears */
  char path[4096], tmp[4200];
  snprintf(path, sizeof path, "%s/ready.%d", argv[1], rank);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "w");
  if (!f) return 3;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  rename(tmp, path);

  const double end = MPI_Wtime() + 60;
  while (MPI_Wtime() < end) {
    const int block = (int)(next_rand() % 4 == 0 ? next_rand() % kMaxBlock : next_rand() % 512);
    for (int p = 0; p < n; ++p) counts[p] = block;
    switch (next_rand() % 8) {
      case 0:
        MPI_Alltoall(sbuf, block, MPI_BYTE, rbuf, block, MPI_BYTE, MPI_COMM_WORLD);
        break;
      case 1:
        MPI_Alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
        break;
      case 2:
        MPI_Allgather(sbuf, block, MPI_BYTE, rbuf, block, MPI_BYTE, MPI_COMM_WORLD);
        break;
      case 3:
        MPI_Allreduce(sbuf, rbuf, block / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        break;
      case 4:
        MPI_Bcast(sbuf, block, MPI_BYTE, (int)(next_rand() % (uint32_t)n), MPI_COMM_WORLD);
        break;
      case 5:
        MPI_Barrier(MPI_COMM_WORLD);
        break;
      case 6:
        MPI_Neighbor_alltoall(sbuf, block, MPI_BYTE, rbuf, block, MPI_BYTE, cart);
        break;
      default: {
        MPI_Request r;
        MPI_Ialltoall(sbuf, block, MPI_BYTE, rbuf, block, MPI_BYTE, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
    }
  }
  MPI_Comm_free(&cart);
  free(sbuf), free(rbuf), free(counts), free(displs);
  MPI_Finalize();
  return 0;
}
