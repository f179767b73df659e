/*
 * fork_heap.c -- fork() in a rank whose shared malloc heap holds a large
 * live buffer (issue 24, item 2).  Standard MPI API plus POSIX and Linux's
 * /proc.  Rank 0 forks; rank 1 (if any) receives from it.  Checked, every
 * byte (argument mib=N: the big buffer's size, default 256):
 *  - fork copies nothing: right after fork() the child's "Anonymous" memory
 *    (smaps) over the big buffer is under 1 MiB (the old heap copied all of
 *    it there); once the child has written a quarter of the buffer, about a
 *    quarter of it is its own -- copy-on-write, page by page;
 *  - the child reads the buffers as they were at fork(), although the
 *    parent has meanwhile rewritten half of the big one, freed another and
 *    allocated and filled a new one (which may reuse its pages); the child's
 *    writes do not show in the parent; malloc/calloc/realloc/free work in
 *    the child, which ends with exit(0);
 *  - while the child lives, rank 1 receives the parent's rewritten half and
 *    a buffer allocated after fork(), with MPI_Send and MPI_Bcast: the bytes
 *    the parent has now, never the frozen ones the child sees;
 *  - memory: once the child has exited, and again after a fork() whose
 *    child calls exec, the parent rewrites the whole big buffer; then its
 *    heap (the memfd's resident pages plus the private pages over the big
 *    buffer) comes back under 1.25 times the buffer (plus the 16 MiB one
 *    allocated after fork), not twice (a page count, polled for up to 10 s
 *    while the heap reclaims -- never a time);
 *  - no /dev/shm entry belongs to the child, and the launcher's are as
 *    before;
 *  - with argument `thread`, rank 0 runs a second thread (asleep) from
 *    before the first fork() to the end of the checks above: the heap
 *    cannot be made shared again meanwhile, and the memory bound holds all
 *    the same (the copies the parent makes after its child is gone are
 *    swept); once the thread has ended, the big buffer is in a shared
 *    mapping of the heap again within 10 s, its bytes intact, and rank 1
 *    receives from it.
 * Under `off` (SHMCOLL_SHARED_MALLOC=0) or a sanitizer there is no heap:
 * only the byte checks run.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <pthread.h>
#include <unistd.h>

#define PROG "fork_heap"
static int rank, size;
#include "abortutil.h"

enum { MiB = 1024 * 1024 };

static uint64_t word(uint64_t i, uint64_t salt) {
  uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ salt * 0xbf58476d1ce4e5b9ull;
  return x ^ (x >> 29);
}
static void wfill(void *p, size_t bytes, size_t from, uint64_t salt) {
  uint64_t *w = p;
  for (size_t i = 0; i < bytes / 8; ++i) w[i] = word(from / 8 + i, salt);
}
/* Byte offset (relative to p) of the first wrong word, or bytes. */
static size_t wbad(const void *p, size_t bytes, size_t from, uint64_t salt) {
  const uint64_t *w = p;
  for (size_t i = 0; i < bytes / 8; ++i)
    if (w[i] != word(from / 8 + i, salt)) return i * 8;
  return bytes;
}
#define WCHECK(p, bytes, from, salt, what)                                                         \
  do {                                                                                             \
    size_t at_ = wbad((p), (bytes), (from), (salt));                                               \
    if (at_ != (size_t)(bytes)) FAIL("%s: byte %zu of %zu differs", (what), at_, (size_t)(bytes)); \
  } while (0)

/* In the child: report and leave with status `code` (no MPI here). */
#define CHILD_FAIL(code, ...)                                \
  do {                                                       \
    fprintf(stderr, PROG ": fork child of rank %d: ", rank); \
    fprintf(stderr, __VA_ARGS__);                            \
    fprintf(stderr, "\n");                                   \
    fflush(stderr);                                          \
    _exit(code);                                             \
  } while (0)

/* kB of `field` ("Anonymous:", "Rss:") in /proc/self/smaps over the
 * mappings that overlap [p, p + n). */
static long smaps_kb(const void *p, size_t n, const char *field) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int in = 0;
  long kb = 0;
  const uintptr_t lo = (uintptr_t)p, hi = lo + n;
  const size_t flen = strlen(field);
  while (fgets(line, sizeof line, f)) {
    unsigned long a, b;
    char c;
    if (sscanf(line, "%lx-%lx %c", &a, &b, &c) == 3 && strchr(line, '-') < strchr(line, ' ')) {
      in = a < hi && b > lo;
    } else if (in && !strncmp(line, field, flen)) {
      kb += strtol(line + flen, NULL, 10);
    }
  }
  fclose(f);
  return kb;
}

/* Whether p lies in a mapping of the heap's memfd, and whether shared ('s'). */
static int heap_mapping(const void *p, int *shared) {
  FILE *f = fopen("/proc/self/maps", "r");
  if (!f) return 0;
  char line[512];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    unsigned long a, b;
    char perms[8];
    if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3 && (uintptr_t)p >= a && (uintptr_t)p < b) {
      found = strstr(line, "memfd:shmcoll-heap") != NULL;
      *shared = perms[3] == 's';
    }
  }
  fclose(f);
  return found;
}

/* Resident bytes of this process's heap memfd (found through /proc/self/fd). */
static long long memfd_bytes(void) {
  DIR *d = opendir("/proc/self/fd");
  if (!d) return -1;
  long long bytes = -1;
  struct dirent *e;
  while ((e = readdir(d))) {
    char path[300], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = 0;
    struct stat st;
    if (strstr(target, "memfd:shmcoll-heap") && stat(path, &st) == 0) bytes = (long long)st.st_blocks * 512;
  }
  closedir(d);
  return bytes;
}

/* Entries of /dev/shm whose name starts with prefix. */
static int shm_entries(const char *prefix) {
  DIR *d = opendir("/dev/shm");
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (!strncmp(e->d_name, prefix, strlen(prefix))) ++n;
  closedir(d);
  return n;
}

static int have_heap;
static size_t big_bytes = 256u * MiB;
static int with_thread;
static int hold[2] = {-1, -1}; /* the second thread sleeps in a read of hold[0] */
static pthread_t sleeper;

static void *sleep_on_pipe(void *arg) {
  (void)arg;
  char c;
  while (read(hold[0], &c, 1) < 0 && errno == EINTR) {
  }
  return NULL;
}

/* The parent's heap comes back to about one copy of the big buffer (salt:
 * what the parent wrote last).  Polls, as the heap reclaims on its own
 * allocations and frees, at most every 10 ms. */
static void expect_one_copy(unsigned char *big, uint64_t salt, const char *when) {
  wfill(big, big_bytes, 0, salt);
  /* 1.25 copies of the big buffer, and the 16 MiB one allocated after fork() */
  const long long limit = (long long)big_bytes * 5 / 4 + 16 * MiB;
  long long heap = 0;
  long anon = 0;
  for (int i = 0; i < 1000; ++i) {
    void *volatile v = malloc(MiB); /* a heap allocation and free: the reclaim's chance */
    free(v);                        /* (volatile: the compiler may drop the pair) */
    heap = memfd_bytes();
    anon = smaps_kb(big, big_bytes, "Anonymous:");
    if (heap >= 0 && heap + anon * 1024LL < limit) break;
    usleep(10000);
  }
  if (heap < 0 || heap + anon * 1024LL >= limit)
    FAIL("%s: the heap holds %lld bytes in the memfd and %ld KiB private over the %zu-byte buffer: more than %lld",
         when, heap, anon, big_bytes, limit);
  WCHECK(big, big_bytes, 0, salt, when);
}

static void fork_and_check(void) {
  unsigned char *big = malloc(big_bytes), *other = malloc(16 * MiB);
  if (!big || !other) FAIL("malloc failed");
  int shared = 0;
  have_heap = heap_mapping(big, &shared) && shared;
  wfill(big, big_bytes, 0, 1);
  wfill(other, 16 * MiB, 0, 2);
  char prefix[64];
  snprintf(prefix, sizeof prefix, "shmcoll-%d-", (int)getppid());
  const int launcher_shm = shm_entries(prefix);
  int go[2], done[2];
  if (pipe(go) != 0 || pipe(done) != 0) FAIL("pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) FAIL("fork: %s", strerror(errno));
  if (pid == 0) {
    close(go[1]);
    close(done[0]);
    long anon = smaps_kb(big, big_bytes, "Anonymous:");
    if (have_heap && (anon < 0 || anon >= 1024))
      CHILD_FAIL(2, "right after fork() %ld KiB of the %zu-byte buffer are private copies already", anon, big_bytes);
    char c;
    if (read(go[0], &c, 1) != 1) CHILD_FAIL(3, "no go from the parent");
    size_t at = wbad(big, big_bytes, 0, 1);
    if (at != big_bytes) CHILD_FAIL(4, "big buffer: byte %zu is not as at fork() (the parent's write shows?)", at);
    at = wbad(other, 16 * MiB, 0, 2);
    if (at != 16 * MiB) CHILD_FAIL(5, "the buffer the parent freed: byte %zu is not as at fork()", at);
    if (heap_mapping(big, &shared) && shared) CHILD_FAIL(6, "the child's big buffer is in a shared heap mapping");
    const size_t q = big_bytes / 4;
    wfill(big + q, q, q, 3);
    anon = smaps_kb(big, big_bytes, "Anonymous:");
    if (have_heap && (anon < (long)(q / 1024) || anon > (long)(q / 1024) + 4096))
      CHILD_FAIL(7, "after writing %zu KiB the child has %ld KiB private over the buffer", q / 1024, anon);
    unsigned char *m = malloc(8 * MiB);
    if (!m) CHILD_FAIL(8, "malloc(8 MiB) failed in the child");
    wfill(m, 8 * MiB, 0, 4);
    if (wbad(m, 8 * MiB, 0, 4) != 8 * MiB) CHILD_FAIL(9, "malloc(8 MiB) in the child: pattern lost");
    if (heap_mapping(m, &shared) && shared) CHILD_FAIL(10, "malloc(8 MiB) in the child is in a shared heap mapping");
    free(m);
    free(other);
    unsigned char *z = calloc(1, 24 * MiB);
    if (!z) CHILD_FAIL(11, "calloc(1, 24 MiB) failed in the child");
    for (size_t k = 0; k < 24 * MiB; ++k)
      if (z[k]) CHILD_FAIL(12, "calloc(1, 24 MiB) in the child: byte %zu is %#x", k, z[k]);
    z = realloc(z, 40 * MiB);
    if (!z) CHILD_FAIL(13, "realloc(40 MiB) failed in the child");
    free(z);
    if (wbad(big, q, 0, 1) != q || wbad(big + q, q, q, 3) != q || wbad(big + 2 * q, 2 * q, 2 * q, 1) != 2 * q)
      CHILD_FAIL(14, "the child's big buffer changed under it");
    if (write(done[1], "q", 1) != 1) CHILD_FAIL(15, "cannot write to the parent");
    if (read(go[0], &c, 1) != 1) CHILD_FAIL(16, "no second go from the parent");
    exit(0);
  }
  close(go[0]);
  close(done[1]);
  /* Before the child looks: rewrite the first half, free `other`, fill a new buffer. */
  wfill(big, big_bytes / 2, 0, 5);
  free(other);
  unsigned char *fresh = malloc(16 * MiB);
  if (!fresh) FAIL("malloc after fork failed");
  wfill(fresh, 16 * MiB, 0, 6);
  if (write(go[1], "g", 1) != 1) FAIL("cannot write to the child");
  /* Peers read what the parent has now (the child is alive: the heap is frozen). */
  const size_t n = 8 * MiB;
  if (size > 1) {
    OK(MPI_Send(big + 3 * MiB, (int)n, MPI_BYTE, 1, 7, MPI_COMM_WORLD));
    OK(MPI_Send(fresh, (int)n, MPI_BYTE, 1, 8, MPI_COMM_WORLD));
    OK(MPI_Bcast(big + 5 * MiB, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
  }
  char c;
  if (read(done[0], &c, 1) != 1) FAIL("the fork child died before its checks ended (see its message)");
  WCHECK(big, big_bytes / 2, 0, 5, "the parent's rewritten half, child alive");
  WCHECK(big + big_bytes / 2, big_bytes / 2, big_bytes / 2, 1, "the parent's other half (the child wrote over part)");
  WCHECK(fresh, 16 * MiB, 0, 6, "the buffer allocated after fork()");
  if (write(go[1], "g", 1) != 1) FAIL("cannot write to the child");
  int st = 0;
  if (waitpid(pid, &st, 0) != pid) FAIL("waitpid: %s", strerror(errno));
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    FAIL("fork child: %s %d", WIFEXITED(st) ? "exit status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
  close(go[1]);
  close(done[0]);
  snprintf(prefix, sizeof prefix, "shmcoll-%d-", (int)pid);
  if (shm_entries(prefix)) FAIL("/dev/shm holds an entry of the fork child (%s*)", prefix);
  snprintf(prefix, sizeof prefix, "shmcoll-%d-", (int)getppid());
  if (shm_entries(prefix) != launcher_shm) FAIL("the launcher's /dev/shm entries changed across the fork");
  if (have_heap) expect_one_copy(big, 9, "after the child exited");

  /* fork() + exec, as a program starts a tool: the same, and no wait for the heap. */
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) FAIL("fork: %s", strerror(errno));
  if (pid == 0) {
    execl("/bin/true", "true", (char *)NULL);
    _exit(127);
  }
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) FAIL("fork + exec /bin/true failed");
  if (have_heap)
    expect_one_copy(big, 10, "after fork + exec");
  else
    wfill(big, big_bytes, 0, 10);
  if (with_thread) {
    if (write(hold[1], "x", 1) != 1 || pthread_join(sleeper, NULL) != 0) FAIL("cannot end the second thread");
    /* Alone now: the next sweep makes the heap whole (allocations and frees are its chance). */
    for (int i = 0; have_heap && i < 1000 && !(heap_mapping(big, &shared) && shared); ++i) {
      void *volatile v = malloc(MiB);
      free(v);
      usleep(10000);
    }
    if (have_heap && !(heap_mapping(big, &shared) && shared))
      FAIL("10 s after the second thread ended, the big buffer is still not in a shared mapping of the heap");
    WCHECK(big, big_bytes, 0, 10, "the big buffer once the heap is shared again");
  }
  if (size > 1) OK(MPI_Send(big + 11 * MiB, (int)n, MPI_BYTE, 1, 9, MPI_COMM_WORLD));
  free(fresh);
  free(big);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "mib=", 4))
      big_bytes = (size_t)strtoul(argv[i] + 4, NULL, 10) * MiB;
    else if (!strcmp(argv[i], "thread"))
      with_thread = 1;
    else if (strcmp(argv[i], "off"))
      FAIL("unknown argument %s", argv[i]);
  }
  if (with_thread && rank == 0) {
    if (pipe(hold) != 0 || pthread_create(&sleeper, NULL, sleep_on_pipe, NULL) != 0)
      FAIL("cannot start the second thread");
  }
  if (big_bytes < 64u * MiB) FAIL("mib= must be at least 64");
  const size_t n = 8 * MiB;
  if (rank == 0) {
    fork_and_check();
  } else if (rank == 1) {
    unsigned char *r = malloc(n);
    if (!r) FAIL("malloc failed");
    OK(MPI_Recv(r, (int)n, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    WCHECK(r, n, 3 * MiB, 5, "MPI_Send from the parent's rewritten half (frozen by fork)");
    OK(MPI_Recv(r, (int)n, MPI_BYTE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    WCHECK(r, n, 0, 6, "MPI_Send from a buffer allocated after fork()");
    OK(MPI_Bcast(r, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
    WCHECK(r, n, 5 * MiB, 5, "MPI_Bcast from the parent's rewritten half");
    OK(MPI_Recv(r, (int)n, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    WCHECK(r, n, 11 * MiB, 10, "MPI_Send after fork + exec");
    free(r);
  }
  if (rank > 1) {
    unsigned char *r = malloc(n);
    if (!r) FAIL("malloc failed");
    OK(MPI_Bcast(r, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD));
    WCHECK(r, n, 5 * MiB, 5, "MPI_Bcast from the parent's rewritten half");
    free(r);
  }
  OK(MPI_Barrier(MPI_COMM_WORLD));
  if (rank == 0) printf(PROG ": OK (%s)\n", have_heap ? "shared heap" : "no shared heap");
  MPI_Finalize();
  return 0;
}
