/*
 * shmcoll-splitgroups: collectives on small communicators inside a larger job,
 * all groups at once -- the case where a communicator's own size says its
 * processes have a core each while the job's other processes share those
 * cores with them.  Standard MPI only, so the same source builds against any
 * MPI (and runs under the accelerator with the host's launcher):
 *
 *   shmrun -n 8 ./shmcoll-splitgroups [group=2] [bytes=8] [iters=20000] [op=alltoall|allreduce|bcast]
 *   mpicc.openmpi -O2 perf/bench/split_groups.c -o splitgroups-openmpi
 *   OMPI_MCA_mpi_yield_when_idle=1 mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none \
 *     -n 8 [-x LD_PRELOAD=<prefix>/lib/libshmcoll_accel_openmpi.so] ./splitgroups-openmpi group=2
 *
 * MPI_COMM_WORLD is split into consecutive groups of `group` ranks; each group
 * runs `iters` calls of the operation (after 1000 untimed ones) on its own
 * communicator, every group at the same time.  Printed by rank 0: the slowest
 * rank's time per call in us.  With `check=1` every call's result is checked.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The value of key=value among the arguments, or dflt. */
static const char* sarg(int argc, char** argv, const char* key, const char* dflt) {
  size_t k = strlen(key);
  for (int i = 1; i < argc; i++)
    if (!strncmp(argv[i], key, k) && argv[i][k] == '=') return argv[i] + k + 1;
  return dflt;
}

static long arg(int argc, char** argv, const char* key, long dflt) {
  const char* v = sarg(argc, argv, key, NULL);
  return v ? atol(v) : dflt;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  const long group = arg(argc, argv, "group", 2), bytes = arg(argc, argv, "bytes", 8);
  const long iters = arg(argc, argv, "iters", 20000), check = arg(argc, argv, "check", 0);
  const char* op = sarg(argc, argv, "op", "alltoall");
  if (group < 1 || bytes < 8 || bytes % 8 || iters < 1 ||
      (strcmp(op, "alltoall") && strcmp(op, "allreduce") && strcmp(op, "bcast"))) {
    if (!me) fprintf(stderr, "splitgroups: group >= 1, bytes a multiple of 8, iters >= 1, op alltoall|allreduce|bcast\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm c;
  MPI_Comm_split(MPI_COMM_WORLD, (int)(me / group), me, &c);
  int gme, gn;
  MPI_Comm_rank(c, &gme);
  MPI_Comm_size(c, &gn);
  const size_t total = (size_t)bytes * (size_t)gn;
  double* sb = malloc(total);
  double* rb = malloc(total);
  if (!sb || !rb) MPI_Abort(MPI_COMM_WORLD, 3);
  const size_t per = (size_t)bytes / 8;
  int bad = 0;
  double t = 0;
  for (long i = -1000; i < iters; i++) {
    if (i == 0) {
      MPI_Barrier(MPI_COMM_WORLD);
      t = MPI_Wtime();
    }
    if (check)
      for (size_t k = 0; k < total / 8; k++) sb[k] = (double)(gme * 1000003 + (long)k + i), rb[k] = -1;
    if (!strcmp(op, "alltoall")) {
      MPI_Alltoall(sb, (int)bytes, MPI_BYTE, rb, (int)bytes, MPI_BYTE, c);
      if (check)
        for (int j = 0; j < gn; j++)
          for (size_t k = 0; k < per; k++)
            bad |= rb[(size_t)j * per + k] != (double)(j * 1000003 + (long)((size_t)gme * per + k) + i);
    } else if (!strcmp(op, "allreduce")) {
      MPI_Allreduce(sb, rb, (int)per, MPI_DOUBLE, MPI_SUM, c);
      if (check)
        for (size_t k = 0; k < per; k++) {
          double want = 0;
          for (int j = 0; j < gn; j++) want += (double)(j * 1000003 + (long)k + i);
          bad |= rb[k] != want;
        }
    } else {
      MPI_Bcast(gme ? rb : sb, (int)bytes, MPI_BYTE, 0, c);
      if (check && gme)
        for (size_t k = 0; k < per; k++) bad |= rb[k] != (double)((long)k + i);
    }
  }
  t = MPI_Wtime() - t;
  double slowest;
  int anybad;
  MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (!me)
    printf("splitgroups: %d ranks in groups of %ld, %s of %ld B: %.2f us per call (slowest rank)%s\n", n, group, op,
           bytes, slowest / (double)iters * 1e6, check ? (anybad ? ", WRONG RESULTS" : ", results checked") : "");
  free(sb);
  free(rb);
  MPI_Comm_free(&c);
  MPI_Finalize();
  return anybad ? 1 : 0;
}
