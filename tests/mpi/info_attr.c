/*
 * info_attr.c -- attribute caching, info objects, communicator hints and
 * names across ranks, written against the standard MPI API only (it also
 * builds with Open MPI's and MPICH's mpicc and passes under their mpirun).
 *
 * What it checks, on every rank:
 *  - the predefined attributes of MPI_COMM_WORLD (same on every rank, in the
 *    ranges the standard sets) and that they cannot be set or deleted;
 *  - per-rank attribute values travel through MPI_Comm_dup via the copy
 *    callback (the standard's reference-counting example), each rank's own,
 *    the duplicate works for a collective, and MPI_Comm_free runs the delete
 *    callback with the duplicate's handle;
 *  - a copy callback failing on every rank fails MPI_Comm_dup everywhere, and
 *    the job goes on;
 *  - datatype attributes through MPI_Type_dup and MPI_Type_free;
 *  - communicator names are local to each rank and not inherited;
 *  - info objects: order, replacement, deletion, limits, errors, and that
 *    nothing changes when a call fails;
 *  - MPI_Finalize deletes the attributes of MPI_COMM_SELF first, newest first,
 *    while MPI is still usable (checked after MPI_Finalize returns: the exit
 *    status says).
 * Behaviour the standard leaves to the implementation (error classes of
 * some keyval errors, whether unknown hints are kept, how a replaced
 * attribute is ordered, MPI_INFO_ENV's contents, a copy callback failing on
 * one rank only) is checked exactly under shmcoll and only loosely elsewhere.
 */
#include <limits.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef SHMCOLL
#define EXACT 1 /* this library's documented choices are checked too */
#else
#define EXACT 0
#endif

static int rank, size;
static long nchecks;

static void fail(const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "FAIL info_attr: rank %d: %s\n", rank, msg);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

#define CHECK(cond, ...)            \
  do {                              \
    ++nchecks;                      \
    if (!(cond)) fail(__VA_ARGS__); \
  } while (0)

static void ok(int rc, const char *what) {
  if (rc != MPI_SUCCESS) {
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(rc, s, &len);
    fail("%s returned %d (%s)", what, rc, s);
  }
}
#define OK(call) ok((call), #call)

/* The call must fail; with `portable` (or under shmcoll) with class `cls`. */
static void expect_error(int rc, int cls, int portable, const char *what) {
  ++nchecks;
  if (rc == MPI_SUCCESS) fail("%s succeeded, expected an error", what);
  int got = -1;
  MPI_Error_class(rc, &got);
  if ((portable || EXACT) && got != cls) fail("%s: error class %d, expected %d", what, got, cls);
}
#define EXPECT_ERROR(call, cls, portable) expect_error((call), (cls), (portable), #call)

/* Every rank's int, gathered. */
static void gather_int(int v, int *all) { OK(MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD)); }

/* ---- predefined attributes ------------------------------------------------ */

static int get_int_attr(MPI_Comm c, int key, int *value) {
  int *p = NULL, flag = 0;
  OK(MPI_Comm_get_attr(c, key, &p, &flag));
  if (flag) {
    CHECK(p != NULL, "attribute %#x: flag set but NULL pointer", key);
    *value = *p;
  }
  return flag;
}

static void test_predefined(void) {
  int *everyone = (int *)malloc(sizeof(int) * size);
  int v = 0;

  CHECK(get_int_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v), "MPI_TAG_UB is not set on MPI_COMM_WORLD");
  CHECK(v >= 32767, "MPI_TAG_UB = %d < 32767", v);
  if (EXACT) CHECK(v == INT_MAX, "MPI_TAG_UB = %d, expected INT_MAX", v);
  gather_int(v, everyone);
  for (int r = 0; r < size; ++r) CHECK(everyone[r] == v, "MPI_TAG_UB differs: %d on rank %d, %d here", everyone[r], r, v);

  CHECK(get_int_attr(MPI_COMM_WORLD, MPI_HOST, &v), "MPI_HOST is not set");
  CHECK(v == MPI_PROC_NULL || (v >= 0 && v < size), "MPI_HOST = %d", v);
  if (EXACT) CHECK(v == MPI_PROC_NULL, "MPI_HOST = %d, expected MPI_PROC_NULL", v);
  gather_int(v, everyone);
  for (int r = 0; r < size; ++r) CHECK(everyone[r] == v, "MPI_HOST differs between ranks");

  CHECK(get_int_attr(MPI_COMM_WORLD, MPI_IO, &v), "MPI_IO is not set");
  CHECK(v == MPI_ANY_SOURCE || v == MPI_PROC_NULL || (v >= 0 && v < size), "MPI_IO = %d", v);
  if (EXACT) CHECK(v == MPI_ANY_SOURCE, "MPI_IO = %d, expected MPI_ANY_SOURCE", v);

  if (get_int_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v)) {
    CHECK(v == 0 || v == 1, "MPI_WTIME_IS_GLOBAL = %d", v);
    gather_int(v, everyone);
    for (int r = 0; r < size; ++r) CHECK(everyone[r] == v, "MPI_WTIME_IS_GLOBAL differs between ranks");
    if (EXACT) CHECK(v == 1, "MPI_WTIME_IS_GLOBAL = %d, expected 1", v);
  } else {
    CHECK(!EXACT, "MPI_WTIME_IS_GLOBAL is not set");
  }
  if (get_int_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v)) {
    CHECK(v >= 1, "MPI_UNIVERSE_SIZE = %d", v);
    if (EXACT) CHECK(v == size, "MPI_UNIVERSE_SIZE = %d, expected %d", v, size);
  } else {
    CHECK(!EXACT, "MPI_UNIVERSE_SIZE is not set");
  }
  if (get_int_attr(MPI_COMM_WORLD, MPI_APPNUM, &v)) CHECK(v == 0, "MPI_APPNUM = %d", v);

  /* read-only */
  int dummy = 5, tag_ub = 0;
  get_int_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub);
  EXPECT_ERROR(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &dummy), MPI_ERR_KEYVAL, 0);
  EXPECT_ERROR(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL, 0);
  get_int_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v);
  CHECK(v == tag_ub, "MPI_TAG_UB changed to %d after a refused update", v);

  /* answered on other communicators too, here */
  if (EXACT) {
    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    CHECK(get_int_attr(d, MPI_TAG_UB, &v) && v == INT_MAX, "MPI_TAG_UB on a duplicate");
    CHECK(get_int_attr(MPI_COMM_SELF, MPI_UNIVERSE_SIZE, &v) && v == size, "MPI_UNIVERSE_SIZE on MPI_COMM_SELF");
    OK(MPI_Comm_free(&d));
  }
  free(everyone);
}

/* ---- attributes through dup and free ----------------------------------------- */

#define MAGIC 0x5ca1ab1e
typedef struct {
  int magic, owner, refs;
} shared_t;
static int extra_tag; /* its address is the keyval's extra_state */
static int ncopy, ndelete;
static MPI_Comm last_copy_from, last_delete_on;

static int shared_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
  shared_t *s = (shared_t *)in;
  if (extra != &extra_tag || s->magic != MAGIC || s->owner != rank) return MPI_ERR_INTERN;
  ++s->refs;
  *(void **)out = s;
  *flag = 1;
  ++ncopy;
  last_copy_from = oldcomm;
  return MPI_SUCCESS;
}

static int shared_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  shared_t *s = (shared_t *)value;
  if (extra != &extra_tag || s->magic != MAGIC || s->owner != rank) return MPI_ERR_INTERN;
  --s->refs;
  ++ndelete;
  last_delete_on = comm;
  return MPI_SUCCESS;
}

static int failing_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag) {
  int *fail_here = (int *)extra;
  if (*fail_here) return MPI_ERR_OTHER;
  *(void **)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static void test_comm_attributes(void) {
  int kv = MPI_KEYVAL_INVALID;
  OK(MPI_Comm_create_keyval(shared_copy, shared_delete, &kv, &extra_tag));
  CHECK(kv != MPI_KEYVAL_INVALID, "MPI_Comm_create_keyval returned MPI_KEYVAL_INVALID");
  shared_t s = {MAGIC, rank, 1};

  MPI_Comm base, d;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
  OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
  OK(MPI_Comm_set_attr(base, kv, &s));
  ncopy = ndelete = 0;
  OK(MPI_Comm_dup(base, &d));
  CHECK(ncopy == 1 && last_copy_from == base, "copy callback: %d calls", ncopy);
  CHECK(s.refs == 2, "refs = %d after dup", s.refs);
  shared_t *got = NULL;
  int flag = 0;
  OK(MPI_Comm_get_attr(d, kv, &got, &flag));
  CHECK(flag && got == &s, "the duplicate does not carry this rank's attribute");

  /* The duplicate works, and every rank saw its own value. */
  int *owners = (int *)malloc(sizeof(int) * size);
  OK(MPI_Allgather(&got->owner, 1, MPI_INT, owners, 1, MPI_INT, d));
  for (int r = 0; r < size; ++r) CHECK(owners[r] == r, "rank %d's attribute says owner %d", r, owners[r]);
  free(owners);

  /* A second level: the copy of a copy, then frees in any order. */
  MPI_Comm dd;
  OK(MPI_Comm_dup(d, &dd));
  CHECK(s.refs == 3 && last_copy_from == d, "refs = %d after the second dup", s.refs);
  MPI_Comm dh = d;
  OK(MPI_Comm_free(&d));
  CHECK(d == MPI_COMM_NULL, "MPI_Comm_free did not set MPI_COMM_NULL");
  CHECK(ndelete == 1 && last_delete_on == dh && s.refs == 2, "delete callback on free: %d calls, refs %d", ndelete,
        s.refs);
  OK(MPI_Comm_delete_attr(dd, kv));
  CHECK(ndelete == 2 && s.refs == 1, "MPI_Comm_delete_attr: %d calls, refs %d", ndelete, s.refs);
  OK(MPI_Comm_get_attr(dd, kv, &got, &flag));
  CHECK(!flag, "attribute still there after MPI_Comm_delete_attr");
  OK(MPI_Comm_free(&dd));
  CHECK(ndelete == 2, "delete callback ran for a deleted attribute");

  /* Freeing the keyval while in use: the attribute still works and is deleted with its communicator. */
  int kept = kv;
  OK(MPI_Comm_free_keyval(&kv));
  CHECK(kv == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not reset the handle");
  OK(MPI_Comm_get_attr(base, kept, &got, &flag));
  CHECK(flag && got == &s, "attribute lost when its keyval was freed");
  OK(MPI_Comm_free(&base));
  CHECK(ndelete == 3 && s.refs == 0, "last delete: %d calls, refs %d", ndelete, s.refs);

  /* A copy callback failing on every rank fails the dup on every rank. */
  int fail_here = 1, kf;
  OK(MPI_Comm_create_keyval(failing_copy, MPI_COMM_NULL_DELETE_FN, &kf, &fail_here));
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &base));
  OK(MPI_Comm_set_errhandler(base, MPI_ERRORS_RETURN));
  OK(MPI_Comm_set_attr(base, kf, &s));
  d = MPI_COMM_NULL;
  EXPECT_ERROR(MPI_Comm_dup(base, &d), MPI_ERR_OTHER, 0);
  if (EXACT) CHECK(d == MPI_COMM_NULL, "newcomm is not MPI_COMM_NULL after a failed dup");
  /* ... on one rank only: here every rank fails (the others did not keep a half-made communicator). */
  if (EXACT && size > 1) {
    fail_here = rank == size - 1;
    d = 0;
    int rc = MPI_Comm_dup(base, &d);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_OTHER && d == MPI_COMM_NULL,
          "dup with a copy callback failing on rank %d only: rc %d class %d", size - 1, rc, cls);
  }
  fail_here = 0;
  OK(MPI_Comm_dup(base, &d)); /* and the library goes on */
  OK(MPI_Barrier(d));
  OK(MPI_Comm_get_attr(d, kf, &got, &flag));
  CHECK(flag && got == &s, "attribute not copied once the callback succeeds");
  OK(MPI_Comm_free(&d));
  OK(MPI_Comm_free(&base));
  OK(MPI_Comm_free_keyval(&kf));

  /* Keyval misuse. */
  void *v = &s;
  flag = -1;
  EXPECT_ERROR(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag), MPI_ERR_KEYVAL, 1);
  CHECK(v == &s && flag == -1, "a failed MPI_Comm_get_attr wrote its outputs");
  int tkv;
  OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkv, NULL));
  EXPECT_ERROR(MPI_Comm_set_attr(MPI_COMM_WORLD, tkv, &s), MPI_ERR_KEYVAL, 0);
  OK(MPI_Type_free_keyval(&tkv));
}

/* ---- datatype attributes ----------------------------------------------------- */

static int type_deletes;
static int count_type_delete(MPI_Datatype t, int keyval, void *value, void *extra) {
  ++type_deletes;
  return MPI_SUCCESS;
}

static void test_type_attributes(void) {
  int kv;
  OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_type_delete, &kv, NULL));
  MPI_Datatype t, d;
  OK(MPI_Type_vector(2, 1, 3, MPI_INT, &t));
  OK(MPI_Type_set_attr(t, kv, &rank));
  OK(MPI_Type_dup(t, &d));
  int *got = NULL, flag = 0;
  OK(MPI_Type_get_attr(d, kv, &got, &flag));
  CHECK(flag && got == &rank, "MPI_Type_dup did not copy the attribute");
  /* (Open MPI and MPICH delete a type's attributes only once no other type
     refers to it, so the duplicate goes first.) */
  type_deletes = 0;
  OK(MPI_Type_delete_attr(d, kv));
  CHECK(type_deletes == 1, "MPI_Type_delete_attr: %d delete callbacks", type_deletes);
  OK(MPI_Type_free(&d));
  CHECK(type_deletes == 1, "delete callback ran for a deleted attribute");
  OK(MPI_Type_free(&t));
  CHECK(type_deletes == 2, "MPI_Type_free: %d delete callbacks", type_deletes);
  OK(MPI_Type_free_keyval(&kv));
}

/* ---- names --------------------------------------------------------------------- */

static void test_names(void) {
  char name[MPI_MAX_OBJECT_NAME], want[MPI_MAX_OBJECT_NAME];
  int len = -1;
  OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(!strcmp(name, "MPI_COMM_WORLD") && len == 14, "MPI_COMM_WORLD is named '%s'", name);
  MPI_Comm d, dd;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  OK(MPI_Comm_get_name(d, name, &len));
  CHECK(len == 0 && name[0] == 0, "a new communicator is named '%s'", name);
  snprintf(want, sizeof want, "rank %d's view", rank); /* names are local: each rank its own */
  OK(MPI_Comm_set_name(d, want));
  OK(MPI_Barrier(d));
  OK(MPI_Comm_get_name(d, name, &len));
  CHECK(!strcmp(name, want) && len == (int)strlen(want), "name '%s', expected '%s'", name, want);
  OK(MPI_Comm_dup(d, &dd));
  OK(MPI_Comm_get_name(dd, name, &len));
  CHECK(len == 0, "a duplicate inherited the name '%s'", name);
  OK(MPI_Comm_free(&dd));
  OK(MPI_Comm_free(&d));
}

/* ---- info objects and hints ---------------------------------------------------------- */

static void expect_info(MPI_Info info, int n, const char *const *keys, const char *const *values, const char *what) {
  int nkeys = -1;
  OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == n, "%s: %d keys, expected %d", what, nkeys, n);
  for (int i = 0; i < n; ++i) {
    char key[MPI_MAX_INFO_KEY + 1], value[64];
    int flag = 0;
    OK(MPI_Info_get_nthkey(info, i, key));
    CHECK(!strcmp(key, keys[i]), "%s: key %d is '%s', expected '%s'", what, i, key, keys[i]);
    OK(MPI_Info_get(info, key, (int)sizeof value - 1, value, &flag));
    CHECK(flag && !strcmp(value, values[i]), "%s: %s = '%s', expected '%s'", what, key, value, values[i]);
  }
}

static void test_info(void) {
  MPI_Info info, dup;
  OK(MPI_Info_create(&info));
  char mine[32];
  snprintf(mine, sizeof mine, "%d", rank * 7);
  OK(MPI_Info_set(info, "alpha", "1"));
  OK(MPI_Info_set(info, "beta", mine));
  OK(MPI_Info_set(info, "gamma", "3"));
  OK(MPI_Info_set(info, "alpha", "one")); /* replaced where it is */
  {
    const char *k[] = {"alpha", "beta", "gamma"}, *v[] = {"one", mine, "3"};
    expect_info(info, 3, k, v, "after set");
  }
  OK(MPI_Info_dup(info, &dup));
  OK(MPI_Info_delete(info, "beta"));
  {
    const char *k[] = {"alpha", "gamma"}, *v[] = {"one", "3"};
    expect_info(info, 2, k, v, "after delete");
    const char *k2[] = {"alpha", "beta", "gamma"}, *v2[] = {"one", mine, "3"};
    expect_info(dup, 3, k2, v2, "the dup");
  }

  /* truncation by MPI_Info_get: valuelen characters and a null, nothing more
     (MPICH 4.0 cuts the value too but reports an error, so only here) */
  char buf[16];
  int flag = 0, len = -1;
  if (EXACT) {
    memset(buf, '#', sizeof buf);
    OK(MPI_Info_get(info, "alpha", 2, buf, &flag));
    CHECK(flag && !memcmp(buf, "on\0#", 4), "MPI_Info_get with valuelen 2 wrote '%.4s'", buf);
  }
  OK(MPI_Info_get_valuelen(info, "alpha", &len, &flag));
  CHECK(flag && len == 3, "valuelen %d", len);
  OK(MPI_Info_get_valuelen(info, "beta", &len, &flag));
  CHECK(!flag && len == 3, "a deleted key is still there");
#if MPI_VERSION >= 4
  int buflen = 0;
  memset(buf, '#', sizeof buf);
  OK(MPI_Info_get_string(info, "alpha", &buflen, buf, &flag)); /* only the size */
  CHECK(flag && buflen == 4 && buf[0] == '#', "MPI_Info_get_string asks for %d bytes", buflen);
  buflen = 3;
  OK(MPI_Info_get_string(info, "alpha", &buflen, buf, &flag));
  CHECK(flag && buflen == 4 && !memcmp(buf, "on\0#", 4), "MPI_Info_get_string into 3 bytes: '%.4s'", buf);
#endif

  /* errors change nothing */
  static char big[MPI_MAX_INFO_VAL + 2];
  memset(big, 'k', MPI_MAX_INFO_KEY + 1);
  big[MPI_MAX_INFO_KEY + 1] = 0;
  EXPECT_ERROR(MPI_Info_set(info, big, "x"), MPI_ERR_INFO_KEY, 1);
  big[MPI_MAX_INFO_KEY - 1] = 0; /* the longest key every library takes */
  OK(MPI_Info_set(dup, big, "longest key"));
  memset(big, 'v', MPI_MAX_INFO_VAL + 1);
  big[MPI_MAX_INFO_VAL + 1] = 0;
  EXPECT_ERROR(MPI_Info_set(info, "alpha", big), MPI_ERR_INFO_VALUE, 1);
  EXPECT_ERROR(MPI_Info_set(info, "", "x"), MPI_ERR_INFO_KEY, 1);
  EXPECT_ERROR(MPI_Info_delete(info, "nokey"), MPI_ERR_INFO_NOKEY, 1);
  char key[MPI_MAX_INFO_KEY + 1] = "untouched";
  EXPECT_ERROR(MPI_Info_get_nthkey(info, 2, key), MPI_ERR_ARG, 0);
  CHECK(!strcmp(key, "untouched"), "a failed MPI_Info_get_nthkey wrote '%s'", key);
  {
    const char *k[] = {"alpha", "gamma"}, *v[] = {"one", "3"};
    expect_info(info, 2, k, v, "after the failed calls");
  }
  OK(MPI_Info_free(&dup));
  CHECK(dup == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");

  /* MPI_INFO_ENV */
  int nkeys = -1;
  OK(MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys));
  CHECK(nkeys >= 0, "MPI_INFO_ENV has %d keys", nkeys);
  if (EXACT) {
    char value[MPI_MAX_INFO_VAL], want[64];
    OK(MPI_Info_get(MPI_INFO_ENV, "maxprocs", MPI_MAX_INFO_VAL - 1, value, &flag));
    snprintf(want, sizeof want, "%d", size);
    CHECK(flag && !strcmp(value, want), "MPI_INFO_ENV maxprocs = '%s', expected %s", value, want);
    char cwd[MPI_MAX_INFO_VAL];
    OK(MPI_Info_get(MPI_INFO_ENV, "wdir", MPI_MAX_INFO_VAL - 1, value, &flag));
    CHECK(flag && getcwd(cwd, sizeof cwd) && !strcmp(value, cwd), "MPI_INFO_ENV wdir = '%s'", value);
  }

  /* communicator hints */
  MPI_Comm d, e;
  OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
  OK(MPI_Comm_set_info(d, info));
  MPI_Info used;
  OK(MPI_Comm_get_info(d, &used));
  OK(MPI_Info_get_nkeys(used, &nkeys));
  if (EXACT) {
    const char *k[] = {"alpha", "gamma"}, *v[] = {"one", "3"};
    expect_info(used, 2, k, v, "MPI_Comm_get_info");
  }
  OK(MPI_Info_free(&used));
  MPI_Info hint;
  OK(MPI_Info_create(&hint));
  OK(MPI_Info_set(hint, "mpi_assert_no_any_tag", "true"));
  OK(MPI_Comm_dup_with_info(d, hint, &e)); /* the info's hints instead of d's */
  OK(MPI_Barrier(e));
  OK(MPI_Comm_get_info(e, &used));
  if (EXACT) {
    const char *k[] = {"mpi_assert_no_any_tag"}, *v[] = {"true"};
    expect_info(used, 1, k, v, "MPI_Comm_dup_with_info");
  }
  OK(MPI_Info_free(&used));
  OK(MPI_Comm_free(&e));
  /* MPI_Comm_split_type keeps its info argument as the new communicator's hints. */
  OK(MPI_Comm_split_type(d, MPI_COMM_TYPE_SHARED, 0, hint, &e));
  OK(MPI_Comm_get_info(e, &used));
  if (EXACT) {
    const char *k[] = {"mpi_assert_no_any_tag"}, *v[] = {"true"};
    expect_info(used, 1, k, v, "MPI_Comm_split_type");
  }
  OK(MPI_Info_free(&used));
  OK(MPI_Comm_free(&e));
  OK(MPI_Info_free(&hint));
  if (EXACT) { /* MPI_INFO_NULL: no hints */
    OK(MPI_Comm_dup_with_info(d, MPI_INFO_NULL, &e));
    OK(MPI_Comm_get_info(e, &used));
    expect_info(used, 0, NULL, NULL, "MPI_Comm_dup_with_info(MPI_INFO_NULL)");
    OK(MPI_Info_free(&used));
    OK(MPI_Comm_free(&e));
  }
  OK(MPI_Comm_free(&d));
  OK(MPI_Info_free(&info));
}

/* ---- MPI_Finalize and MPI_COMM_SELF ----------------------------------------------------- */

#define NLOG 16
static int finalize_log[NLOG], nlog, finalized_in_callback = -1, mpi_usable_in_callback = 1;

static int record_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
  if (nlog < NLOG) finalize_log[nlog++] = (int)(long)value;
  int flag = -1, r = -1;
  MPI_Finalized(&flag);
  if (finalized_in_callback != 1) finalized_in_callback = flag;
  if (MPI_Comm_rank(MPI_COMM_WORLD, &r) != MPI_SUCCESS || r != rank) mpi_usable_in_callback = 0;
  return MPI_SUCCESS;
}

static int k_self[3], k_world;

static void set_finalize_attributes(void) {
  for (int i = 0; i < 3; ++i) OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &k_self[i], NULL));
  OK(MPI_Comm_set_attr(MPI_COMM_SELF, k_self[1], (void *)1L));
  OK(MPI_Comm_set_attr(MPI_COMM_SELF, k_self[0], (void *)2L));
  OK(MPI_Comm_set_attr(MPI_COMM_SELF, k_self[2], (void *)3L));
  if (EXACT) { /* here a replaced value counts as set anew (its old value is deleted at once) */
    OK(MPI_Comm_set_attr(MPI_COMM_SELF, k_self[0], (void *)4L));
    CHECK(nlog == 1 && finalize_log[0] == 2, "replacing did not delete the old value");
    nlog = 0;
    OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &k_world, NULL));
    OK(MPI_Comm_set_attr(MPI_COMM_WORLD, k_world, (void *)5L));
  }
  /* freed keyvals: their attributes still get deleted */
  for (int i = 0; i < 3; ++i) OK(MPI_Comm_free_keyval(&k_self[i]));
  if (EXACT) OK(MPI_Comm_free_keyval(&k_world));
}

/* After MPI_Finalize: 0 when the log is right. */
static int check_finalize_log(void) {
  static const int want_exact[] = {4, 3, 1, 5}, want_portable[] = {3, 2, 1};
  const int *want = EXACT ? want_exact : want_portable;
  const int n = EXACT ? 4 : 3;
  int bad = nlog != n || finalized_in_callback != 0 || !mpi_usable_in_callback;
  for (int i = 0; i < n && i < nlog; ++i) bad |= finalize_log[i] != want[i];
  if (bad) {
    fprintf(stderr, "FAIL info_attr: rank %d: MPI_Finalize deleted %d attributes:", rank, nlog);
    for (int i = 0; i < nlog; ++i) fprintf(stderr, " %d", finalize_log[i]);
    fprintf(stderr, " (expected");
    for (int i = 0; i < n; ++i) fprintf(stderr, " %d", want[i]);
    fprintf(stderr, "); MPI_Finalized in the callbacks: %d; MPI usable: %d\n", finalized_in_callback,
            mpi_usable_in_callback);
  }
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

  test_predefined();
  test_comm_attributes();
  test_type_attributes();
  test_names();
  test_info();
  set_finalize_attributes();

  long total = 0;
  OK(MPI_Reduce(&nchecks, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD));
  nlog = 0;
  OK(MPI_Finalize());
  int bad = check_finalize_log();
  if (!bad && rank == 0) printf("info_attr: PASS ranks=%d checks(sum over ranks)=%ld\n", size, total);
  return bad;
}
