/*
 * sessions.c -- the MPI-4 session model, written against the standard MPI API
 * only (it also builds with MPICH's mpicc and passes under its mpirun; Open
 * MPI 4.1 has no sessions, and the program says so and passes there).
 *
 * What it checks, on every rank, in this order:
 *  - a session started before MPI_Init (MPI_Initialized stays 0): its process
 *    sets (mpi://WORLD and mpi://SELF among them, each name read with the
 *    length query first, and cut to fit a short buffer), their "mpi_size",
 *    the session's info ("thread_level"), a group from each set, and
 *    communicators made from them with MPI_Comm_create_from_group that carry
 *    a reduction and a ring of messages exactly;
 *  - session error handlers: one the session was given, one set later, called
 *    for an error of a session function and by MPI_Session_call_errhandler,
 *    and MPI_Session_get_errhandler;
 *  - MPI_Init while the session lives, the world model beside it, a second
 *    session, MPI_Finalize, and the session's communicator still working
 *    after it (as the standard allows), then both sessions finalized;
 *  - MPI_Session_c2f / MPI_Session_f2c;
 *  - with the argument "only", a program of sessions alone (no MPI_Init);
 *  - under shmcoll, MPI_Session_init once everything has ended fails with
 *    MPI_ERR_SESSION on the handler it was given (the runtime cannot restart).
 */
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SHMCOLL
#define EXACT 1 /* this library's documented choices are checked too */
#else
#define EXACT 0
#endif

static int rank = -1, size;
static long nchecks;

static void fail(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL sessions: rank %d: %s\n", rank, msg);
  fflush(stderr);
  exit(1);
}

#define CHECK(cond, ...)            \
  do {                              \
    ++nchecks;                      \
    if (!(cond)) fail(__VA_ARGS__); \
  } while (0)
#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

#if MPI_VERSION >= 4

static int handlerCalls, handlerCode;
static MPI_Session handlerSession;
static void onSessionError(MPI_Session *s, int *code, ...) {
  ++handlerCalls;
  handlerCode = *code;
  handlerSession = *s;
}

static int infoInt(MPI_Info info, const char *key) {
  char v[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
  CHECK(flag, "info key %s missing", key);
  return atoi(v);
}

/* A communicator from process set `pset` of session s, checked with a sum and a ring. */
static MPI_Comm commFrom(MPI_Session s, const char *pset, const char *tag, int expectSize) {
  MPI_Group g;
  MPI_Comm c;
  int n = -1, r = -1;
  OK(MPI_Group_from_session_pset(s, pset, &g));
  OK(MPI_Group_size(g, &n));
  CHECK(n == expectSize, "%s: group of %d, expected %d", pset, n, expectSize);
  OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
  OK(MPI_Group_free(&g));
  OK(MPI_Comm_size(c, &n));
  OK(MPI_Comm_rank(c, &r));
  CHECK(n == expectSize && r >= 0 && r < n, "%s: communicator of %d, rank %d", pset, n, r);
  MPI_Errhandler eh;
  OK(MPI_Comm_get_errhandler(c, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "%s: the communicator's error handler is not the one given", pset);
  OK(MPI_Errhandler_free(&eh));
  return c;
}

static void exercise(MPI_Comm c, const char *what) {
  int n, r;
  MPI_Comm_size(c, &n);
  MPI_Comm_rank(c, &r);
  long long mine[3] = {r, 1000 + r, -r}, sum[3];
  OK(MPI_Allreduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, c));
  const long long t = (long long)n * (n - 1) / 2;
  CHECK(sum[0] == t && sum[1] == 1000LL * n + t && sum[2] == -t, "%s: sums %lld %lld %lld", what, sum[0], sum[1],
        sum[2]);
  int out[4] = {r, r * 2, r * 3, 77}, in[4] = {-1, -1, -1, -1};
  MPI_Status st;
  OK(MPI_Sendrecv(out, 4, MPI_INT, (r + 1) % n, 3, in, 4, MPI_INT, (r + n - 1) % n, 3, c, &st));
  const int left = (r + n - 1) % n;
  CHECK(in[0] == left && in[1] == 2 * left && in[2] == 3 * left && in[3] == 77 && st.MPI_SOURCE == left,
        "%s: ring gave %d %d %d %d from %d", what, in[0], in[1], in[2], in[3], st.MPI_SOURCE);
}

/* "only": a program of the session model alone, never calling MPI_Init. */
static int sessionOnly(void) {
  MPI_Session s;
  MPI_Info info;
  int flag = -1;
  OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
  OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &info));
  size = infoInt(info, "mpi_size");
  OK(MPI_Info_free(&info));
  MPI_Comm c = commFrom(s, "mpi://WORLD", "org.example.sessions.only", size);
  MPI_Comm_rank(c, &rank);
  exercise(c, "a session-only world");
  OK(MPI_Comm_free(&c));
  OK(MPI_Session_finalize(&s));
  OK(MPI_Initialized(&flag));
  CHECK(flag == 0, "MPI_Initialized is %d in a session-only program", flag);
  if (rank == 0) printf("sessions (session model only): %d ranks, %ld checks passed\n", size, nchecks);
  return 0;
}

int main(int argc, char **argv) {
  int flag = -1;
  MPI_Info info;
  MPI_Session s1, s2;
  MPI_Errhandler eh;
  if (argc > 1 && !strcmp(argv[1], "only")) return sessionOnly();

  /* ---- a session before MPI_Init ---- */
  OK(MPI_Info_create(&info));
  OK(MPI_Info_set(info, "thread_level", "MPI_THREAD_SINGLE"));
#ifdef MPICH /* MPICH (4.0) refuses MPI_Session_create_errhandler before a session exists: set it after */
  OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s1));
  OK(MPI_Session_create_errhandler(onSessionError, &eh));
  OK(MPI_Session_set_errhandler(s1, eh));
#else
  OK(MPI_Session_create_errhandler(onSessionError, &eh));
  OK(MPI_Session_init(info, eh, &s1));
#endif
  OK(MPI_Info_free(&info));
  OK(MPI_Initialized(&flag));
  CHECK(flag == 0, "MPI_Initialized is %d with only a session", flag);

  int npsets = -1, seenWorld = 0, seenSelf = 0;
  OK(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &npsets));
  CHECK(npsets >= 2, "%d process sets", npsets);
  for (int i = 0; i < npsets; ++i) {
    int len = 0;
    char name[MPI_MAX_PSET_NAME_LEN];
    OK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, NULL));
    CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
    OK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &len, name));
    CHECK((int)strlen(name) == len - 1, "pset %d: name \"%s\" for length %d", i, name, len);
    if (!strcmp(name, "mpi://WORLD")) seenWorld = 1;
    if (!strcmp(name, "mpi://SELF")) seenSelf = 1;
    char shortName[5];
    int shortLen = sizeof shortName;
    OK(MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, i, &shortLen, shortName));
    CHECK(!strncmp(shortName, name, 4) && shortName[4] == 0, "pset %d cut to 4: \"%s\"", i, shortName);
  }
  CHECK(seenWorld && seenSelf, "mpi://WORLD (%d) or mpi://SELF (%d) missing", seenWorld, seenSelf);
  OK(MPI_Session_get_pset_info(s1, "mpi://WORLD", &info));
  size = infoInt(info, "mpi_size");
  OK(MPI_Info_free(&info));
  OK(MPI_Session_get_pset_info(s1, "mpi://SELF", &info));
  CHECK(infoInt(info, "mpi_size") == 1, "mpi://SELF's mpi_size is not 1");
  OK(MPI_Info_free(&info));
  OK(MPI_Session_get_info(s1, &info));
  {
    char v[MPI_MAX_INFO_VAL + 1];
    OK(MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "the session's info has no thread_level");
  }
  OK(MPI_Info_free(&info));

  MPI_Comm world = commFrom(s1, "mpi://WORLD", "org.example.sessions.world", size);
  MPI_Comm_rank(world, &rank);
  exercise(world, "a session's world");
  MPI_Comm self = commFrom(s1, "mpi://SELF", "org.example.sessions.self", 1);
  exercise(self, "a session's self");
  MPI_Comm other = commFrom(s1, "mpi://WORLD", "org.example.sessions.other", size);
  exercise(other, "a second communicator from mpi://WORLD");
  OK(MPI_Comm_free(&other));

  /* ---- session error handlers ---- */
  {
    int len = 8, rc;
    char name[8];
#ifndef MPICH /* MPICH (4.0) ends the job on an error of a session function, whatever the session's handler */
    rc = MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, npsets + 5, &len, name);
    CHECK(rc != MPI_SUCCESS && handlerCalls == 1 && handlerCode == rc && handlerSession == s1,
          "an error on the session: rc %d, %d handler calls, code %d", rc, handlerCalls, handlerCode);
    rc = MPI_Group_from_session_pset(s1, "mpi://NO-SUCH-SET", &(MPI_Group){MPI_GROUP_NULL});
    CHECK(rc != MPI_SUCCESS && handlerCalls == 2, "an unknown process set: rc %d, %d handler calls", rc, handlerCalls);
    if (EXACT) {
      int cls;
      MPI_Error_class(rc, &cls);
      CHECK(cls == MPI_ERR_ARG, "an unknown process set: class %d", cls);
    }
    OK(MPI_Session_call_errhandler(s1, MPI_ERR_OTHER));
    CHECK(handlerCalls == 3 && handlerCode == MPI_ERR_OTHER, "MPI_Session_call_errhandler: %d calls, code %d",
          handlerCalls, handlerCode);
    MPI_Errhandler got;
    OK(MPI_Session_get_errhandler(s1, &got));
    CHECK(got == eh, "MPI_Session_get_errhandler gave another handler");
    OK(MPI_Errhandler_free(&got));
    OK(MPI_Session_set_errhandler(s1, MPI_ERRORS_RETURN));
    rc = MPI_Session_get_nth_pset(s1, MPI_INFO_NULL, -1, &len, name);
    CHECK(rc != MPI_SUCCESS && handlerCalls == 3, "MPI_ERRORS_RETURN: rc %d, %d handler calls", rc, handlerCalls);
#endif
    OK(MPI_Errhandler_free(&eh));
  }

  /* ---- the world model beside the session ---- */
  OK(MPI_Init(&argc, &argv));
  OK(MPI_Initialized(&flag));
  CHECK(flag == 1, "MPI_Initialized is %d after MPI_Init", flag);
  int wr = -1, ws = -1;
  OK(MPI_Comm_rank(MPI_COMM_WORLD, &wr));
  OK(MPI_Comm_size(MPI_COMM_WORLD, &ws));
  CHECK(ws == size, "MPI_COMM_WORLD has %d ranks, mpi://WORLD %d", ws, size);
  exercise(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  exercise(world, "a session's world beside MPI_COMM_WORLD");
  OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
  MPI_Comm world2 = commFrom(s2, "mpi://WORLD", "org.example.sessions.second", size);
  exercise(world2, "a second session's world");
  OK(MPI_Comm_free(&world2));
  OK(MPI_Finalize());
  OK(MPI_Finalized(&flag));
  CHECK(flag == 1, "MPI_Finalized is %d after MPI_Finalize", flag);
  exercise(world, "a session's world after MPI_Finalize");

  CHECK(MPI_Session_f2c(MPI_Session_c2f(s1)) == s1, "MPI_Session_f2c(MPI_Session_c2f(s)) != s");
  OK(MPI_Comm_free(&self));
  OK(MPI_Comm_free(&world));
  OK(MPI_Session_finalize(&s2));
  CHECK(s2 == MPI_SESSION_NULL, "MPI_Session_finalize left the handle");
  OK(MPI_Session_finalize(&s1));
  if (EXACT) { /* shmcoll cannot start its runtime again once both models have ended: it says so */
    MPI_Session s3 = MPI_SESSION_NULL;
    const int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s3);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SESSION && s3 == MPI_SESSION_NULL, "MPI_Session_init after the end: class %d", cls);
  }
  if (rank == 0) printf("sessions: %d ranks, %ld checks passed\n", size, nchecks);
  return 0;
}

#else

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("sessions: this MPI library has no sessions (MPI %d.%d): nothing checked\n", MPI_VERSION, MPI_SUBVERSION);
  MPI_Finalize();
  return 0;
}

#endif
