/*
 * shmcoll-forktime: what fork() costs in a rank with a large live malloc
 * buffer (issue 24, item 2).  Standard MPI plus POSIX; run one rank:
 *
 *   shmrun -n 1 ./shmcoll-forktime [gib=1,2,4] [reps=3] [thread=1]
 *   SHMCOLL_SHARED_MALLOC=0 shmrun -n 1 ./shmcoll-forktime   (glibc's malloc: the baseline)
 *
 * For each size: malloc it, write every page, then `reps` times: fork() a
 * child that reads one word per page and exits.  Printed per fork: the time
 * fork() took to return in the parent, the time until the child was running
 * its own code, the child's private ("Anonymous") memory over the buffer as
 * it starts (what fork copied) and after reading everything, the rise in
 * the machine's used memory (anonymous and shared-memory pages) from before fork() to
 * when the child has started, the time the parent then took to rewrite the
 * whole buffer (one byte per page) after it had reaped the child (where a
 * lazy copy pays), the rise in used memory from before fork() to then, and
 * again after one more second in which the program allocates and frees
 * 1 MiB every 10 ms (where the heap reclaims: "settled").  With thread=1 a
 * second thread sleeps in the rank throughout (a multi-threaded parent).
 * (Used memory is the machine's: other processes move it too.)
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* kB of `field` in /proc/self/smaps over mappings overlapping [p, p + n). */
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
    if (sscanf(line, "%lx-%lx %c", &a, &b, &c) == 3 && strchr(line, '-') < strchr(line, ' '))
      in = a < hi && b > lo;
    else if (in && !strncmp(line, field, flen))
      kb += strtol(line + flen, NULL, 10);
  }
  fclose(f);
  return kb;
}

/* The machine's anonymous and shared-memory pages (AnonPages + Shmem), in
 * MiB: every page of the buffer, the heap's memfd or a copy, counted as it is
 * allocated and freed.  (MemTotal - MemAvailable lags behind frees by a
 * second or more on some virtual machines.) */
static long used_mib(void) {
  FILE *f = fopen("/proc/meminfo", "r");
  if (!f) return -1;
  char line[256];
  long anon = -1, shmem = -1;
  while (fgets(line, sizeof line, f)) {
    sscanf(line, "AnonPages: %ld", &anon);
    sscanf(line, "Shmem: %ld", &shmem);
  }
  fclose(f);
  return anon < 0 || shmem < 0 ? -1 : (anon + shmem) / 1024;
}

struct report {
  double started;    /* when the child ran its first line */
  long anon_start;   /* KiB private over the buffer then */
  long anon_end;     /* ... after reading every page */
  long used_started; /* MemTotal - MemAvailable (MiB) then */
};

static int with_thread, hold[2];
static void *sleeper(void *arg) {
  char c;
  (void)arg;
  (void)!read(hold[0], &c, 1);
  return NULL;
}

static void one(size_t bytes, int reps) {
  unsigned char *buf = malloc(bytes);
  if (!buf) {
    printf("%6.2f GiB: malloc failed\n", bytes / 1073741824.0);
    return;
  }
  for (size_t i = 0; i < bytes; i += 4096) buf[i] = (unsigned char)(i >> 12);
  for (int r = 0; r < reps; ++r) {
    int fds[2];
    if (pipe(fds) != 0) return;
    fflush(stdout);
    const long used0 = used_mib();
    const double t0 = now();
    pid_t pid = fork();
    const double t1 = now();
    if (pid == 0) {
      struct report rep;
      rep.started = now();
      rep.anon_start = smaps_kb(buf, bytes, "Anonymous:");
      rep.used_started = used_mib();
      unsigned sum = 0;
      for (size_t i = 0; i < bytes; i += 4096) sum += buf[i];
      rep.anon_end = smaps_kb(buf, bytes, "Anonymous:") + (sum == 1u); /* (keeps the loop) */
      (void)!write(fds[1], &rep, sizeof rep);
      _exit(0);
    }
    close(fds[1]);
    struct report rep = {0, -1, -1, -1};
    if (pid < 0 || read(fds[0], &rep, sizeof rep) != (ssize_t)sizeof rep) printf("fork failed\n");
    close(fds[0]);
    waitpid(pid, NULL, 0);
    const double t2 = now();
    for (size_t i = 0; i < bytes; i += 4096) buf[i] = (unsigned char)(r + 1);
    const double t3 = now();
    const long used_after = used_mib();
    for (int k = 0; k < 100; ++k) {
      void *volatile v = malloc(1 << 20);
      free(v);
      usleep(10000);
    }
    const long used_settled = used_mib();
    printf(
        "%5.2f GiB  fork %8.1f ms  child running after %8.1f ms  child private at start %8ld KiB, after "
        "reading %8ld KiB  memory used +%6ld MiB  parent rewrite after %8.1f ms  memory used then +%6ld MiB"
        "  settled +%6ld MiB\n",
        bytes / 1073741824.0, 1e3 * (t1 - t0), 1e3 * (rep.started - t0), rep.anon_start, rep.anon_end,
        rep.used_started - used0, 1e3 * (t3 - t2), used_after - used0, used_settled - used0);
  }
  free(buf);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char sizes[128] = "1,2,4";
  int reps = 3;
  for (int i = 1; i < argc; ++i) {
    if (!strncmp(argv[i], "gib=", 4))
      snprintf(sizes, sizeof sizes, "%s", argv[i] + 4);
    else if (!strncmp(argv[i], "reps=", 5))
      reps = atoi(argv[i] + 5);
    else if (!strncmp(argv[i], "thread=", 7))
      with_thread = atoi(argv[i] + 7);
  }
  pthread_t t;
  if (with_thread && (pipe(hold) != 0 || pthread_create(&t, NULL, sleeper, NULL) != 0)) {
    printf("cannot start the second thread\n");
    with_thread = 0;
  }
  const char *sm = getenv("SHMCOLL_SHARED_MALLOC");
  printf("shmcoll-forktime: shared malloc heap %s, %s\n", sm && !strcmp(sm, "0") ? "off (glibc)" : "on",
         with_thread ? "a second thread asleep" : "one thread");
  for (char *s = strtok(sizes, ","); s; s = strtok(NULL, ",")) one((size_t)(atof(s) * 1073741824.0), reps);
  if (with_thread) {
    (void)!write(hold[1], "x", 1);
    pthread_join(t, NULL);
  }
  MPI_Finalize();
  return 0;
}
