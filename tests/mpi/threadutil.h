/*
 * threadutil.h -- what the MPI_THREAD_MULTIPLE test programs (threads_*.c)
 * share, on top of testutil.h: per-thread failure reports (the thread and the
 * case being run), MPI call checks, guarded-buffer comparison, and start-up
 * that insists on MPI_THREAD_MULTIPLE and checks MPI_Query_thread and
 * MPI_Is_thread_main in the main thread and in every thread started.
 */
#ifndef SHMCOLL_TESTS_MPI_THREADUTIL_H
#define SHMCOLL_TESTS_MPI_THREADUTIL_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "testutil.h"

#if defined(MPICH_VERSION) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

static int nthreads = 4;
static _Thread_local int my_t = -1; /* thread index; -1 in the main thread */
static _Thread_local char my_case[200] = "main";
static atomic_llong nchecks;

static void tfail(const char *fmt, ...) {
  char msg[1500];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL %s: rank %d thread %d: case %s: %s%s%s\n", tu_prog, tu_rank, my_t, my_case, msg,
          *tu_context ? " | " : "", tu_context);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}
static void tcheck(int rc, const char *call, int line) {
  if (rc == MPI_SUCCESS) return;
  char s[MPI_MAX_ERROR_STRING];
  int len = 0, cls = -1;
  s[0] = 0;
  MPI_Error_string(rc, s, &len);
  MPI_Error_class(rc, &cls);
  tfail("%s returned %d (class %d: %s) at line %d", call, rc, cls, s, line);
}
#define CK(call) tcheck((call), #call, __LINE__)
#define SETCASE(...) snprintf(my_case, sizeof my_case, __VA_ARGS__)

static void nap_us(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, NULL);
}

/* Compares a guarded buffer (testutil.h's gb) with its image. */
static void gcheck(const gb *g, const char *which) {
  size_t tot = g->len + 2 * TU_GUARD;
  if (!memcmp(g->all, g->img, tot)) {
    atomic_fetch_add(&nchecks, 1);
    return;
  }
  size_t o = 0, nbad = 0;
  while (g->all[o] == g->img[o]) ++o;
  for (size_t i = o; i < tot; ++i) nbad += g->all[i] != g->img[i];
  long rel = (long)o - TU_GUARD;
  const char *where = rel < 0 ? "guard before the buffer" : rel >= (long)g->len ? "guard after the buffer" : "data";
  tfail("%s: first differing byte at offset %ld of %zu (%s): expected 0x%02x got 0x%02x; %zu bytes differ", which,
        rel, g->len, where, g->img[o], g->all[o], nbad);
}

static void thr_init(int *argc, char ***argv, const char *prog) {
  tu_prog = prog;
  int provided = -1;
  int rc = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (rc != MPI_SUCCESS) {
    fprintf(stderr, "FAIL %s: MPI_Init_thread returned %d\n", prog, rc);
    exit(1);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &tu_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &tu_size);
  CK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  if (provided < MPI_THREAD_MULTIPLE)
    tfail("MPI_Init_thread(MPI_THREAD_MULTIPLE) provided only level %d (MPI_THREAD_MULTIPLE is %d): this program "
          "needs MPI_THREAD_MULTIPLE",
          provided, MPI_THREAD_MULTIPLE);
  int q = -1, m = 0;
  CK(MPI_Query_thread(&q));
  if (q != MPI_THREAD_MULTIPLE) tfail("MPI_Query_thread gave %d, MPI_Init_thread provided %d", q, provided);
  CK(MPI_Is_thread_main(&m));
  if (!m) tfail("MPI_Is_thread_main is false in the thread that called MPI_Init_thread");
}

typedef struct {
  int t;
  void (*fn)(int);
} thr_arg;
static void *thr_start(void *p) {
  thr_arg *a = (thr_arg *)p;
  my_t = a->t;
  SETCASE("thread start");
  int m = 1, q = -1;
  CK(MPI_Is_thread_main(&m));
  if (m) tfail("MPI_Is_thread_main is true in a thread the program started");
  CK(MPI_Query_thread(&q));
  if (q != MPI_THREAD_MULTIPLE) tfail("MPI_Query_thread gave %d in a thread", q);
  a->fn(a->t);
  return NULL;
}
static void run_threads(void (*fn)(int)) {
  pthread_t *th = (pthread_t *)tu_malloc(sizeof(pthread_t) * nthreads);
  thr_arg *args = (thr_arg *)tu_malloc(sizeof(thr_arg) * nthreads);
  for (int t = 0; t < nthreads; ++t) {
    args[t].t = t, args[t].fn = fn;
    if (pthread_create(&th[t], NULL, thr_start, &args[t])) tfail("pthread_create failed");
  }
  for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
  free(th), free(args);
}

#endif
