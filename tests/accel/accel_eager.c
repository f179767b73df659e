/* accel_eager: long runs of small MPI_Bcast and MPI_Reduce calls with no
 * other collective between them, so that the ranks that need not wait (a
 * bcast's root, a reduce's contributors) run far ahead of the others: the
 * accelerator's eager ring (tests/accel/list.txt) must make them wait for a
 * slot instead of overwriting one a slow rank has not read.  One rank sleeps
 * now and then to be that slow rank (a reader, a root, or both in turn).
 * Every call carries values that depend on the call's number and the
 * sender, and each result is checked, with guard bytes after it.
 *
 *   accel_eager [iters=N]      default 3000
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GUARD 16
#define MAXB 1024

static int me, n;

static void fail(const char *what, int it, int at, long long got, long long want) {
  fprintf(stderr, "FAIL accel_eager: rank %d: %s call %d element %d: got %lld, want %lld\n", me, what, it, at, got,
          want);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static unsigned char byte_of(int it, int i) { return (unsigned char)(it * 131 + i * 7 + 1); }

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int iters = 3000;
  for (int a = 1; a < argc; ++a)
    if (strncmp(argv[a], "iters=", 6) == 0) iters = atoi(argv[a] + 6);
  const int slow = n - 1;
  unsigned char buf[MAXB + GUARD];
  long long in[MAXB / 8], out[MAXB / 8 + GUARD];
  for (int it = 0; it < iters; ++it) {
    if (me == slow && it % 97 == 0) usleep(2000);
    /* bcast: runs of calls from one root, then the next; sizes 0 to MAXB bytes */
    const int root = (it / 211) % n, bytes = (it * 40) % (MAXB + 8);
    memset(buf, 0xEE, sizeof buf);
    if (me == root)
      for (int i = 0; i < bytes; ++i) buf[i] = byte_of(it, i);
    if (MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS) fail("MPI_Bcast returned", it, 0, 0, 0);
    for (int i = 0; i < bytes + GUARD; ++i)
      if (buf[i] != (i < bytes ? byte_of(it, i) : 0xEE))
        fail("MPI_Bcast", it, i, buf[i], i < bytes ? byte_of(it, i) : 0xEE);
    /* reduce: runs of calls to one root; counts 0 to MAXB / 8 */
    if (it % 3 == 0) {
      const int rroot = (it / 301) % n, count = (it / 3) % (MAXB / 8 + 1);
      for (int i = 0; i < count; ++i) in[i] = (long long)(me + 1) * (it + i);
      for (int i = 0; i < count + GUARD; ++i) out[i] = -7;
      if (MPI_Reduce(in, out, count, MPI_LONG_LONG, MPI_SUM, rroot, MPI_COMM_WORLD) != MPI_SUCCESS)
        fail("MPI_Reduce returned", it, 0, 0, 0);
      const long long ranks = (long long)n * (n + 1) / 2;
      for (int i = 0; i < count + GUARD; ++i) {
        const long long want = me != rroot || i >= count ? -7 : ranks * (it + i);
        if (out[i] != want) fail("MPI_Reduce", it, i, out[i], want);
      }
      for (int i = 0; i < count; ++i)
        if (in[i] != (long long)(me + 1) * (it + i)) fail("MPI_Reduce changed the send buffer", it, i, in[i], 0);
    }
  }
  MPI_Finalize();
  return 0;
}
