/*
 * cma_choice.c -- whether blocks outside the shared heap are read with
 * process_vm_readv follows MPI_Init's judgement of the call.
 *
 * MPI_Init times process_vm_readv against a copy (SHMCOLL_CMA_SLOW_FACTOR);
 * where most ranks find it slow, SHMCOLL_CMA_MIN's built-in value is `off`
 * and such blocks are streamed through the mailbox slots.  This program
 * counts the library's process_vm_readv calls (it defines the function, which
 * the library's call then reaches, and passes each call on to the kernel),
 * runs MPI_Alltoall, MPI_Allgather and MPI_Bcast of 64 KiB blocks in buffers
 * from malloc (the list line turns the shared heap off), checks every result
 * byte for byte with guard bytes around it, and then checks the count summed
 * over the ranks:
 *   stream  no call at all after MPI_Init;
 *   pull    at least one call per rank that receives in MPI_Bcast.
 * Where the kernel refuses process_vm_readv to this process there is nothing
 * to check: it says so and passes.
 *
 * Linux only; shmcoll's own judgement, so not a crosslib test.
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "testutil.h"

#define BLOCK (64 * 1024)
#define G 64

static long calls;

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long liovcnt, const struct iovec *remote,
                         unsigned long riovcnt, unsigned long flags) {
  ++calls;
  return syscall(SYS_process_vm_readv, pid, local, liovcnt, remote, riovcnt, flags);
}

static unsigned char pattern(int from, int to, size_t k) { return (unsigned char)(from * 31 + to * 7 + k * 13 + 1); }

/* rb[G .. G+len) must hold `want`; the guard bytes around it stay 0x5a. */
static void check(const unsigned char *rb, const unsigned char *want, size_t len, const char *what) {
  for (size_t i = 0; i < G; ++i)
    if (rb[i] != 0x5a || rb[G + len + i] != 0x5a) tu_fail("%s: guard byte %zu written", what, i);
  for (size_t i = 0; i < len; ++i)
    if (rb[G + i] != want[i]) tu_fail("%s: byte %zu is %u, want %u", what, i, rb[G + i], want[i]);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "cma_choice");
  const int stream = tu_arg_flag(argc, argv, "stream"), pull = tu_arg_flag(argc, argv, "pull");
  if (stream == pull) tu_fail("say `stream` or `pull`");
  const int n = tu_size, me = tu_rank;
  const size_t total = (size_t)n * BLOCK;
  unsigned char *sb = (unsigned char *)tu_malloc(total), *rb = (unsigned char *)tu_malloc(total + 2 * G);
  unsigned char *want = (unsigned char *)tu_malloc(total);

  /* Can this process read its own memory with the call at all? */
  char probe_src[8] = "probe", probe_dst[8] = "";
  struct iovec l = {probe_dst, sizeof probe_dst}, r = {probe_src, sizeof probe_src};
  int usable = syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0) == (long)sizeof probe_src;
  int all_usable = 0;
  TU_CALL(MPI_Allreduce(&usable, &all_usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));

  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  calls = 0;
  for (int p = 0; p < n; ++p)
    for (size_t k = 0; k < BLOCK; ++k) sb[(size_t)p * BLOCK + k] = pattern(me, p, k);
  memset(rb, 0x5a, total + 2 * G);
  TU_CALL(MPI_Alltoall(sb, BLOCK, MPI_BYTE, rb + G, BLOCK, MPI_BYTE, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p)
    for (size_t k = 0; k < BLOCK; ++k) want[(size_t)p * BLOCK + k] = pattern(p, me, k);
  check(rb, want, total, "MPI_Alltoall");

  memset(rb, 0x5a, total + 2 * G);
  for (size_t k = 0; k < BLOCK; ++k) sb[k] = pattern(me, n, k);
  TU_CALL(MPI_Allgather(sb, BLOCK, MPI_BYTE, rb + G, BLOCK, MPI_BYTE, MPI_COMM_WORLD));
  for (int p = 0; p < n; ++p)
    for (size_t k = 0; k < BLOCK; ++k) want[(size_t)p * BLOCK + k] = pattern(p, n, k);
  check(rb, want, total, "MPI_Allgather");

  memset(rb, 0x5a, total + 2 * G);
  for (size_t k = 0; k < BLOCK; ++k) want[k] = pattern(0, n + 1, k);
  if (me == 0) memcpy(rb + G, want, BLOCK);
  TU_CALL(MPI_Bcast(rb + G, BLOCK, MPI_BYTE, 0, MPI_COMM_WORLD));
  for (size_t i = 0; i < G; ++i)
    if (rb[G + BLOCK + i] != 0x5a) tu_fail("MPI_Bcast: byte %zu after the block written", i);
  check(rb, want, BLOCK, "MPI_Bcast");

  long mine = calls, sum = 0;
  TU_CALL(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  tu_ncases += 3;
  char extra[96];
  if (!all_usable) {
    snprintf(extra, sizeof extra, "(process_vm_readv refused here: nothing to check)");
  } else {
    if (stream && sum != 0) tu_fail("%ld process_vm_readv calls over the ranks, none expected", sum);
    if (pull && sum < n - 1) tu_fail("%ld process_vm_readv calls over the ranks, at least %d expected", sum, n - 1);
    snprintf(extra, sizeof extra, "process_vm_readv calls=%ld", sum);
  }
  free(sb);
  free(rb);
  free(want);
  return tu_finish(extra);
}
