/*
 * intercomm.c -- intercommunicators: creation, merging, point-to-point across
 * the groups, derived communicators, and the errors of bad arguments.
 *
 * Written against the standard MPI C API only (the same source builds and
 * passes with Open MPI's and MPICH's mpicc).  Needs at least 2 ranks (with
 * one it says so and passes).  Errors are returned (MPI_ERRORS_RETURN) and
 * every call is checked; on the first wrong result the rank, the case and
 * what differs are printed and the program calls MPI_Abort.
 *
 *  1. MPI_Intercomm_create from the two parts of MPI_COMM_WORLD split at
 *     every uneven point (1 | n-1, n-1 | 1, the middle), and from an
 *     interleaved split whose second group is in reverse world order; each
 *     with the leaders at local rank 0, at the last local rank, and mixed,
 *     and with MPI_COMM_WORLD or a reversed duplicate of it as peer_comm.
 *     Checked: MPI_Comm_test_inter, MPI_Comm_size/rank (the local group),
 *     MPI_Comm_remote_size, MPI_Comm_group and MPI_Comm_remote_group member
 *     by member (translated to MPI_COMM_WORLD).
 *  2. Point-to-point across: every member sends every remote member a
 *     message (0 B .. 70000 B, eager and rendezvous) whose bytes name sender,
 *     receiver and case; each receives half of them from named sources and
 *     the rest with MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG) + MPI_Recv: the
 *     status names the remote rank, the tag and count are right, the bytes
 *     are, and the guard bytes after the message keep their sentinel.
 *     MPI_Sendrecv between equal local ranks; an intercommunicator's
 *     messages never match MPI_COMM_WORLD's with the same tag, nor a
 *     duplicate's.
 *  3. MPI_Intercomm_merge with high = 0/1, 1/0 and equal: the group that
 *     passed high = 0 comes first, each group in its local order (with equal
 *     values, one group then the other); an allgather on the result.
 *  4. MPI_Comm_dup (congruent; isolated traffic; attributes copied by their
 *     callbacks; the name is not inherited), MPI_Comm_compare (identical,
 *     congruent, similar for another intercommunicator whose remote group is
 *     reordered, unequal against an intracommunicator), names, MPI_Comm_free.
 *  5. Nested and concurrent: an intercommunicator made inside a duplicate of
 *     MPI_COMM_WORLD with it as peer; one made from the halves of a merged
 *     intercommunicator; two alive at once with interleaved traffic;
 *     MPI_Comm_split and MPI_Comm_create on an intercommunicator (each group
 *     split alike; MPI_COMM_NULL where the other side has nobody).
 *  6. Errors: local_leader out of range, remote_leader out of range and
 *     peer_comm = MPI_COMM_NULL at the leader (MPI_ERR_RANK / MPI_ERR_ARG /
 *     MPI_ERR_COMM), an intercommunicator as local_comm, MPI_Intercomm_merge
 *     and MPI_Comm_remote_size/group on an intracommunicator (MPI_ERR_COMM);
 *     the communicators still work afterwards.
 *
 * "intercomm [quick] [verbose]": quick runs the largest message sizes less
 * often; verbose prints the time of each part.
 */
#include "interutil.h"

static int quick;

/* ---- point-to-point across ----------------------------------------------------- */

static const int msg_sizes[] = {0, 1, 100, 4093, 5000, 70000};
#define NSIZES ((int)(sizeof msg_sizes / sizeof msg_sizes[0]))

static int msg_len(int from_world, int to_world, unsigned salt) {
  int k = (int)((unsigned)(from_world * 7 + to_world * 3) + salt) % NSIZES;
  if (quick && msg_sizes[k] > 5000 && (from_world + to_world + (int)salt) % 3) k = 3;
  return msg_sizes[k];
}

/* Every member sends every remote member one message; see the file comment. */
static void check_p2p(MPI_Comm ic, const int *remote, int m, const char *what, unsigned salt) {
  int lrank;
  TU_CALL(MPI_Comm_rank(ic, &lrank));
  unsigned char **sbuf = (unsigned char **)tu_malloc(sizeof(void *) * m);
  MPI_Request *reqs = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * m);
  for (int r = 0; r < m; ++r) {
    int len = msg_len(tu_rank, remote[r], salt);
    sbuf[r] = (unsigned char *)tu_malloc(len ? len : 1);
    tu_pattern(sbuf[r], tu_key(tu_rank, remote[r], salt), 0, (size_t)len);
    TU_CALL(MPI_Isend(sbuf[r], len, MPI_BYTE, r, 100 + lrank, ic, &reqs[r]));
  }
  const int maxlen = msg_sizes[NSIZES - 1];
  gb rb;
  gb_new(&rb, (size_t)maxlen);
  char *seen = (char *)calloc((size_t)m, 1);
  for (int k = 0; k < m; ++k) {
    /* Named sources in reverse order, with MPI_Probe first; then, for the
     * rest, MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG) and MPI_Probe(MPI_ANY_SOURCE,
     * MPI_ANY_TAG) + MPI_Recv from the probed source, in turn. */
    MPI_Status st;
    int src = -1, count = -1;
    const int named = k < m / 2, probe = named || k % 2;
    if (probe) {
      TU_CALL(MPI_Probe(named ? m / 2 - 1 - k : MPI_ANY_SOURCE, named ? 100 + m / 2 - 1 - k : MPI_ANY_TAG, ic, &st));
      src = st.MPI_SOURCE;
      EXPECT(src >= 0 && src < m && !seen[src] && (named ? src == m / 2 - 1 - k : src >= m / 2),
             "%s: MPI_Probe found source %d (remote size %d)", what, src, m);
      const int len = msg_len(remote[src], tu_rank, salt);
      TU_CALL(MPI_Get_count(&st, MPI_BYTE, &count));
      EXPECT(st.MPI_TAG == 100 + src && count == len, "%s: probe status source %d tag %d count %d, expected %d, %d",
             what, src, st.MPI_TAG, count, 100 + src, len);
    }
    tu_fill_sentinel(rb.all, rb.len + 2 * TU_GUARD);
    TU_CALL(MPI_Recv(rb.p, maxlen, MPI_BYTE, probe ? src : MPI_ANY_SOURCE, MPI_ANY_TAG, ic, &st));
    EXPECT(st.MPI_SOURCE >= m / 2 - (named ? m / 2 : 0) && st.MPI_SOURCE < m && !seen[st.MPI_SOURCE] &&
               (!probe || st.MPI_SOURCE == src),
           "%s: received from source %d (remote size %d, probed %d)", what, st.MPI_SOURCE, m, src);
    src = st.MPI_SOURCE;
    const int len = msg_len(remote[src], tu_rank, salt);
    TU_CALL(MPI_Get_count(&st, MPI_BYTE, &count));
    EXPECT(st.MPI_TAG == 100 + src && count == len, "%s: receive status source %d tag %d count %d, expected tag %d count %d",
           what, src, st.MPI_TAG, count, 100 + src, len);
    tu_fill_sentinel(rb.img, rb.len + 2 * TU_GUARD);
    tu_pattern(rb.ip, tu_key(remote[src], tu_rank, salt), 0, (size_t)len);
    gb_check(&rb, what, "message from the remote group");
    seen[src] = 1;
  }
  TU_CALL(MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE));
  for (int r = 0; r < m; ++r) {
    int len = msg_len(tu_rank, remote[r], salt);
    unsigned char *want = (unsigned char *)tu_malloc(len ? len : 1);
    tu_pattern(want, tu_key(tu_rank, remote[r], salt), 0, (size_t)len);
    EXPECT(!memcmp(want, sbuf[r], (size_t)len), "%s: send buffer to remote rank %d changed", what, r);
    free(want), free(sbuf[r]);
  }
  free(seen), free(sbuf), free(reqs);
  gb_free(&rb);

  /* MPI_Sendrecv between equal local ranks (those below both group sizes),
   * once every remote member has left its MPI_ANY_TAG loop above (an
   * intercommunicator barrier lets a group go once the other has entered). */
  TU_CALL(MPI_Barrier(ic));
  int n;
  TU_CALL(MPI_Comm_size(ic, &n));
  if (lrank < m && lrank < n) {
    long out[2] = {tu_rank, (long)salt}, in[2] = {-1, -1};
    MPI_Status st;
    TU_CALL(MPI_Sendrecv(out, 2, MPI_LONG, lrank, 7, in, 2, MPI_LONG, lrank, 7, ic, &st));
    EXPECT(in[0] == remote[lrank] && in[1] == (long)salt && st.MPI_SOURCE == lrank,
           "%s: MPI_Sendrecv got (%ld, %ld) from %d, expected (%d, %u) from %d", what, in[0], in[1], st.MPI_SOURCE,
           remote[lrank], salt, lrank);
  }
}

/* Messages with one tag on `a` and `b` (same pair of processes) never match
 * each other's receives: sent a then b, received b then a. */
static void check_isolation(MPI_Comm a, MPI_Comm b, int b_dest, const char *what) {
  int lrank, m;
  TU_CALL(MPI_Comm_rank(a, &lrank));
  TU_CALL(MPI_Comm_remote_size(a, &m));
  int n;
  TU_CALL(MPI_Comm_size(a, &n));
  if (lrank >= m || lrank >= n) return; /* pairs of equal local ranks */
  int va = 1000 + tu_rank, vb = 2000 + tu_rank, ga = -1, gb_ = -1;
  MPI_Request r[2];
  TU_CALL(MPI_Isend(&va, 1, MPI_INT, lrank, 3, a, &r[0]));
  TU_CALL(MPI_Isend(&vb, 1, MPI_INT, b_dest, 3, b, &r[1]));
  MPI_Status st;
  TU_CALL(MPI_Recv(&gb_, 1, MPI_INT, MPI_ANY_SOURCE, 3, b, &st));
  TU_CALL(MPI_Recv(&ga, 1, MPI_INT, lrank, 3, a, MPI_STATUS_IGNORE));
  TU_CALL(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  EXPECT(ga >= 1000 && ga < 2000 && gb_ >= 2000, "%s: got %d on the intercommunicator and %d on the other", what, ga,
         gb_);
}

/* ---- merge ------------------------------------------------------------------------ */

static void check_merge(MPI_Comm ic, const layout *L, int highA, int highB, const char *what) {
  MPI_Comm m;
  TU_CALL(MPI_Intercomm_merge(ic, L->mine == 0 ? highA : highB, &m));
  int flag = -1, size = -1;
  TU_CALL(MPI_Comm_test_inter(m, &flag));
  TU_CALL(MPI_Comm_size(m, &size));
  EXPECT(flag == 0 && size == tu_size, "%s: merged: test_inter %d size %d", what, flag, size);
  int *order = (int *)tu_malloc(sizeof(int) * tu_size);
  MPI_Group g;
  TU_CALL(MPI_Comm_group(m, &g));
  world_of(g, size, order);
  TU_CALL(MPI_Group_free(&g));
  /* Which group comes first: fixed by high when they differ, else either. */
  int first = highA != highB ? (highA ? 1 : 0) : (order[0] == L->world[0][0] ? 0 : 1);
  int k = 0;
  for (int gi = 0; gi < 2; ++gi) {
    const int grp = gi == 0 ? first : 1 - first;
    for (int i = 0; i < L->n[grp]; ++i, ++k)
      EXPECT(order[k] == L->world[grp][i], "%s: merged rank %d is world rank %d, expected %d (group %c local rank %d)",
             what, k, order[k], L->world[grp][i], 'A' + grp, i);
  }
  /* The merged communicator works: every rank's world rank, in its order. */
  int *got = (int *)tu_malloc(sizeof(int) * tu_size);
  TU_CALL(MPI_Allgather(&tu_rank, 1, MPI_INT, got, 1, MPI_INT, m));
  for (int i = 0; i < tu_size; ++i)
    EXPECT(got[i] == order[i], "%s: allgather on the merged communicator: rank %d gave %d, expected %d", what, i,
           got[i], order[i]);
  TU_CALL(MPI_Comm_free(&m));
  EXPECT(m == MPI_COMM_NULL, "%s: MPI_Comm_free left the handle set", what);
  free(order), free(got);
}

/* ---- part 1-3: every layout, every leader choice ----------------------------------- */

static void layouts(void) {
  const int n = tu_size;
  int *grp = (int *)tu_malloc(sizeof(int) * n), *key = (int *)tu_malloc(sizeof(int) * n);
  int *rev = (int *)tu_malloc(sizeof(int) * n); /* rank in the reversed dup of world rank w */
  for (int w = 0; w < n; ++w) rev[w] = n - 1 - w;
  MPI_Comm wrev;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - tu_rank, &wrev));
  int splits[5], ns = 0;
  const int cand[4] = {1, n - 1, n / 2, (n + 1) / 2};
  for (int i = 0; i < 4; ++i) {
    int dup = 0;
    for (int j = 0; j < ns; ++j) dup |= splits[j] == cand[i];
    if (!dup && cand[i] >= 1 && cand[i] <= n - 1) splits[ns++] = cand[i];
  }
  unsigned salt = 1;
  for (int li = 0; li <= ns; ++li) {
    layout L;
    char name[96];
    if (li < ns) {
      for (int w = 0; w < n; ++w) grp[w] = w < splits[li] ? 0 : 1, key[w] = w;
      snprintf(name, sizeof name, "split %d | %d", splits[li], n - splits[li]);
    } else {
      for (int w = 0; w < n; ++w) grp[w] = w % 2, key[w] = w % 2 ? n - w : w;
      snprintf(name, sizeof name, "even | odd (odd in reverse order)");
    }
    layout_make(&L, name, grp, key);
    const int lastA = L.n[0] - 1, lastB = L.n[1] - 1;
    const int leads[4][2] = {{0, 0}, {lastA, lastB}, {0, lastB}, {lastA, 0}};
    for (int c = 0; c < 4; ++c) {
      char what[200];
      const int usepeer = c % 2; /* odd cases name the remote leader in the reversed dup */
      snprintf(what, sizeof what, "%s, leaders A%d B%d, peer %s", L.name, leads[c][0], leads[c][1],
               usepeer ? "reversed dup of MPI_COMM_WORLD" : "MPI_COMM_WORLD");
      MPI_Comm ic = make_inter(&L, leads[c], usepeer ? wrev : MPI_COMM_WORLD, usepeer ? rev : NULL, 50 + c);
      check_layout(ic, &L, what);
      check_p2p(ic, L.world[1 - L.mine], L.n[1 - L.mine], what, salt++);
      if (c == 0) {
        check_isolation(ic, MPI_COMM_WORLD, L.world[1 - L.mine][L.lrank < L.n[1 - L.mine] ? L.lrank : 0], what);
        check_merge(ic, &L, 0, 1, what);
        check_merge(ic, &L, 1, 0, what);
        check_merge(ic, &L, 0, 0, what);
        check_merge(ic, &L, 1, 1, what);
      }
      TU_CALL(MPI_Comm_free(&ic));
      EXPECT(ic == MPI_COMM_NULL, "%s: MPI_Comm_free left the handle set", what);
    }
    layout_free(&L);
  }
  TU_CALL(MPI_Comm_free(&wrev));
  free(grp), free(key), free(rev);
}

/* ---- part 4: dup, compare, names, attributes --------------------------------------- */

static int copies; /* copy callback calls on this rank */
static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag) {
  (void)c, (void)kv, (void)extra;
  ++copies;
  *(void **)out = (char *)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

static void derived(void) {
  const int n = tu_size;
  int *grp = (int *)tu_malloc(sizeof(int) * n), *key = (int *)tu_malloc(sizeof(int) * n);
  for (int w = 0; w < n; ++w) grp[w] = w < (n + 1) / 2 ? 0 : 1, key[w] = w;
  layout L;
  layout_make(&L, "halves", grp, key);
  const int lead[2] = {0, 0};
  MPI_Comm ic = make_inter(&L, lead, MPI_COMM_WORLD, NULL, 11);
  const char *what = "MPI_Comm_dup of an intercommunicator";

  static char base[4];
  int kv_copy, kv_nocopy;
  TU_CALL(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &kv_copy, NULL));
  TU_CALL(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &kv_nocopy, NULL));
  TU_CALL(MPI_Comm_set_attr(ic, kv_copy, base));
  TU_CALL(MPI_Comm_set_attr(ic, kv_nocopy, base));
  char nm[MPI_MAX_OBJECT_NAME];
  int len = -1;
  snprintf(nm, sizeof nm, "intercomm seen by world rank %d", tu_rank);
  TU_CALL(MPI_Comm_set_name(ic, nm));

  MPI_Comm d;
  copies = 0;
  TU_CALL(MPI_Comm_dup(ic, &d));
  check_layout(d, &L, what);
  int res = -1;
  TU_CALL(MPI_Comm_compare(ic, d, &res));
  EXPECT(res == MPI_CONGRUENT, "%s: MPI_Comm_compare(ic, dup) = %d, expected MPI_CONGRUENT", what, res);
  TU_CALL(MPI_Comm_compare(ic, ic, &res));
  EXPECT(res == MPI_IDENT, "%s: MPI_Comm_compare(ic, ic) = %d, expected MPI_IDENT", what, res);
  TU_CALL(MPI_Comm_compare(ic, L.half, &res));
  EXPECT(res == MPI_UNEQUAL, "%s: compare with an intracommunicator = %d, expected MPI_UNEQUAL", what, res);
  void *v = NULL;
  int flag = 0;
  TU_CALL(MPI_Comm_get_attr(d, kv_copy, &v, &flag));
  EXPECT(flag && v == base + 1 && copies == 1, "%s: copied attribute: flag %d value %p (expected %p), %d copies", what,
         flag, v, (void *)(base + 1), copies);
  TU_CALL(MPI_Comm_get_attr(d, kv_nocopy, &v, &flag));
  EXPECT(!flag, "%s: an attribute with MPI_COMM_NULL_COPY_FN was copied", what);
  TU_CALL(MPI_Comm_get_name(d, nm, &len));
  EXPECT(len == 0, "%s: the duplicate inherited the name '%s'", what, nm);
  TU_CALL(MPI_Comm_get_name(ic, nm, &len));
  EXPECT(strstr(nm, "intercomm seen by") != NULL, "%s: the name reads '%s'", what, nm);
  check_p2p(d, L.world[1 - L.mine], L.n[1 - L.mine], what, 77);
  check_isolation(ic, d, L.lrank, "intercommunicator and its duplicate");
  TU_CALL(MPI_Comm_test_inter(d, &flag));
  EXPECT(flag == 1, "%s: test_inter %d", what, flag);

  /* Another intercommunicator of the same groups, made anew: congruent; one
   * whose remote group is in another order: similar. */
  MPI_Comm ic2, ic3, halfrev;
  const int lead2[2] = {L.n[0] - 1, L.n[1] - 1};
  ic2 = make_inter(&L, lead2, MPI_COMM_WORLD, NULL, 12);
  TU_CALL(MPI_Comm_compare(ic, ic2, &res));
  EXPECT(res == MPI_CONGRUENT, "a second intercommunicator of the same groups: compare = %d, expected CONGRUENT", res);
  TU_CALL(MPI_Comm_split(L.half, 0, L.mine == 1 ? -L.lrank : L.lrank, &halfrev)); /* group B reversed */
  {
    /* The leaders are local rank 0 of each new order: A's first, B's last. */
    const int rw = L.mine == 0 ? L.world[1][L.n[1] - 1] : L.world[0][0];
    TU_CALL(MPI_Intercomm_create(halfrev, 0, MPI_COMM_WORLD, rw, 13, &ic3));
  }
  TU_CALL(MPI_Comm_compare(ic, ic3, &res));
  EXPECT(res == MPI_SIMILAR || (L.n[1] == 1 && res == MPI_CONGRUENT),
         "an intercommunicator with group B reordered: compare = %d, expected MPI_SIMILAR", res);
  TU_CALL(MPI_Barrier(ic3));
  TU_CALL(MPI_Comm_free(&ic3));
  TU_CALL(MPI_Comm_free(&halfrev));
  TU_CALL(MPI_Comm_free(&ic2));
  TU_CALL(MPI_Comm_free(&d));
  EXPECT(d == MPI_COMM_NULL, "MPI_Comm_free of the duplicate left the handle set");
  TU_CALL(MPI_Comm_free_keyval(&kv_copy));
  TU_CALL(MPI_Comm_free_keyval(&kv_nocopy));
  TU_CALL(MPI_Comm_free(&ic));
  layout_free(&L);
  free(grp), free(key);
}

/* ---- part 5: nested and concurrent ------------------------------------------------- */

/* MPI_Comm_split on an intercommunicator: each group splits by color = local
 * rank % 2 with key = -local rank; the result joins the parts of one color. */
static void check_split(MPI_Comm ic, const layout *L) {
  MPI_Comm s;
  const int color = L->lrank % 2;
  /* Members of group 1 with local rank 3 pass MPI_UNDEFINED. */
  const int undefined = L->mine == 1 && L->lrank == 3;
  TU_CALL(MPI_Comm_split(ic, undefined ? MPI_UNDEFINED : color, -L->lrank, &s));
  int want[2][64], nw[2] = {0, 0};
  for (int g = 0; g < 2; ++g)
    for (int i = L->n[g] - 1; i >= 0; --i) /* key -lrank: descending local rank */
      if (i % 2 == color && !(g == 1 && i == 3)) want[g][nw[g]++] = L->world[g][i];
  if (undefined || nw[1 - L->mine] == 0) {
    EXPECT(s == MPI_COMM_NULL, "MPI_Comm_split of an intercommunicator gave a communicator where none was due");
    return;
  }
  EXPECT(s != MPI_COMM_NULL, "MPI_Comm_split of an intercommunicator gave MPI_COMM_NULL (color %d)", color);
  check_shape(s, want[L->mine], nw[L->mine], want[1 - L->mine], nw[1 - L->mine], "MPI_Comm_split of an intercomm");
  check_p2p(s, want[1 - L->mine], nw[1 - L->mine], "MPI_Comm_split of an intercomm", 91);
  TU_CALL(MPI_Comm_free(&s));
}

/* MPI_Comm_create on an intercommunicator: each group keeps all but its
 * local rank 0 (when it has more than one member), in reverse order.
 * Open MPI 4.1.4 orders the new remote group as the old one, not as the
 * other side's group argument (which orders that side's local group), so the
 * two sides disagree on who is which rank and a barrier on the result hangs;
 * for it the groups keep their order. */
static void check_create(MPI_Comm ic, const layout *L) {
#if defined(OPEN_MPI)
  const int reverse = 0;
#else
  const int reverse = 1;
#endif
  MPI_Group lg, sub;
  TU_CALL(MPI_Comm_group(ic, &lg));
  int ranks[64], k = 0, want[2][64], nw[2] = {0, 0};
  const int n = L->n[L->mine];
  for (int j = n > 1 ? 1 : 0; j < n; ++j) ranks[k++] = reverse ? n - j - (n > 1 ? 0 : 1) : j;
  TU_CALL(MPI_Group_incl(lg, k, ranks, &sub));
  for (int g = 0; g < 2; ++g)
    for (int j = L->n[g] > 1 ? 1 : 0; j < L->n[g]; ++j)
      want[g][nw[g]++] = L->world[g][reverse ? L->n[g] - j - (L->n[g] > 1 ? 0 : 1) : j];
  MPI_Comm c;
  TU_CALL(MPI_Comm_create(ic, sub, &c));
  if (n > 1 && L->lrank == 0) {
    EXPECT(c == MPI_COMM_NULL, "MPI_Comm_create of an intercommunicator gave a rank outside the group a communicator");
  } else {
    EXPECT(c != MPI_COMM_NULL, "MPI_Comm_create of an intercommunicator gave MPI_COMM_NULL");
    check_shape(c, want[L->mine], nw[L->mine], want[1 - L->mine], nw[1 - L->mine], "MPI_Comm_create of an intercomm");
    check_p2p(c, want[1 - L->mine], nw[1 - L->mine], "MPI_Comm_create of an intercomm", 93);
    TU_CALL(MPI_Comm_free(&c));
  }
  TU_CALL(MPI_Group_free(&sub));
  TU_CALL(MPI_Group_free(&lg));
}

static void nested(void) {
  const int n = tu_size;
  int *grp = (int *)tu_malloc(sizeof(int) * n), *key = (int *)tu_malloc(sizeof(int) * n);
  int *rank_in = (int *)tu_malloc(sizeof(int) * n);

  /* (a) inside a duplicate of MPI_COMM_WORLD in reverse order, with it as peer. */
  MPI_Comm dw;
  TU_CALL(MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - tu_rank, &dw));
  for (int w = 0; w < n; ++w) rank_in[w] = n - 1 - w;
  for (int w = 0; w < n; ++w) grp[w] = w < n - 1 ? 0 : 1, key[w] = -w; /* n-1 | 1, group A reversed */
  layout L;
  layout_make(&L, "n-1 | 1 inside a reversed duplicate", grp, key);
  const int lead[2] = {L.n[0] - 1, 0};
  MPI_Comm icA = make_inter(&L, lead, dw, rank_in, 21);
  check_layout(icA, &L, L.name);

  /* (b) two intercommunicators alive at once, used interleaved: icA and one
   * from an even | odd split. */
  for (int w = 0; w < n; ++w) grp[w] = w % 2, key[w] = w;
  layout E;
  layout_make(&E, "even | odd", grp, key);
  const int lead0[2] = {0, 0};
  MPI_Comm icB = make_inter(&E, lead0, MPI_COMM_WORLD, NULL, 22);
  {
    int ra, rb, ma, mb;
    TU_CALL(MPI_Comm_rank(icA, &ra));
    TU_CALL(MPI_Comm_rank(icB, &rb));
    TU_CALL(MPI_Comm_remote_size(icA, &ma));
    TU_CALL(MPI_Comm_remote_size(icB, &mb));
    /* Each member sends its world rank to remote rank (local rank % remote
     * size) on both; receivers take from icB first, then icA, with
     * MPI_ANY_SOURCE: one message per sender with that target. */
    int va = 1000 + tu_rank, vb = 2000 + tu_rank;
    MPI_Request rq[2];
    TU_CALL(MPI_Isend(&va, 1, MPI_INT, ra % ma, 9, icA, &rq[0]));
    TU_CALL(MPI_Isend(&vb, 1, MPI_INT, rb % mb, 9, icB, &rq[1]));
    int na, nb, *wa = L.world[1 - L.mine], *wb = E.world[1 - E.mine];
    TU_CALL(MPI_Comm_size(icA, &na));
    TU_CALL(MPI_Comm_size(icB, &nb));
    for (int s = 0; s < mb; ++s)
      if (s % nb == rb) {
        int got = -1;
        MPI_Status st;
        TU_CALL(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 9, icB, &st));
        EXPECT(got == 2000 + wb[st.MPI_SOURCE], "interleaved: on the even|odd intercomm got %d from remote rank %d",
               got, st.MPI_SOURCE);
      }
    TU_CALL(MPI_Barrier(icA));
    for (int s = 0; s < ma; ++s)
      if (s % na == ra) {
        int got = -1;
        MPI_Status st;
        TU_CALL(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 9, icA, &st));
        EXPECT(got == 1000 + wa[st.MPI_SOURCE], "interleaved: on the n-1|1 intercomm got %d from remote rank %d", got,
               st.MPI_SOURCE);
      }
    TU_CALL(MPI_Barrier(icB));
    TU_CALL(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
  }
  check_p2p(icB, E.world[1 - E.mine], E.n[1 - E.mine], "even|odd while n-1|1 is alive", 31);
  check_split(icB, &E);
  check_create(icB, &E);
  check_create(icA, &L);

  /* (c) from the halves of a merged intercommunicator, with it as peer. */
  MPI_Comm m, mh, icC;
  TU_CALL(MPI_Intercomm_merge(icB, E.mine, &m)); /* evens first, then odds */
  int mr, ms;
  TU_CALL(MPI_Comm_rank(m, &mr));
  TU_CALL(MPI_Comm_size(m, &ms));
  const int cut = ms / 2; /* merged ranks [0, cut) | [cut, ms) */
  TU_CALL(MPI_Comm_split(m, mr < cut, mr, &mh));
  TU_CALL(MPI_Intercomm_create(mh, 0, m, mr < cut ? cut : 0, 23, &icC));
  {
    int *order = (int *)tu_malloc(sizeof(int) * n);
    MPI_Group g;
    TU_CALL(MPI_Comm_group(m, &g));
    world_of(g, n, order);
    TU_CALL(MPI_Group_free(&g));
    const int lo = mr < cut;
    check_shape(icC, lo ? order : order + cut, lo ? cut : ms - cut, lo ? order + cut : order, lo ? ms - cut : cut,
                "an intercommunicator from the halves of a merged one");
    check_p2p(icC, lo ? order + cut : order, lo ? ms - cut : cut, "intercomm from a merged one", 41);
    free(order);
  }
  TU_CALL(MPI_Comm_free(&icC));
  TU_CALL(MPI_Comm_free(&mh));
  TU_CALL(MPI_Comm_free(&m));
  TU_CALL(MPI_Comm_free(&icB));
  TU_CALL(MPI_Comm_free(&icA));
  layout_free(&E);
  layout_free(&L);
  TU_CALL(MPI_Comm_free(&dw));
  free(grp), free(key), free(rank_in);
}

/* ---- part 6: errors ------------------------------------------------------------------ */

static void errors(void) {
  const int n = tu_size;
  int *grp = (int *)tu_malloc(sizeof(int) * n), *key = (int *)tu_malloc(sizeof(int) * n);
  for (int w = 0; w < n; ++w) grp[w] = w < 1 ? 0 : 1, key[w] = w;
  layout L;
  layout_make(&L, "1 | n-1", grp, key);
  MPI_Comm ic = MPI_COMM_NULL, bad = MPI_COMM_NULL;
  int rc;
  /* local_leader out of range on every member: nobody communicates. */
  rc = MPI_Intercomm_create(L.half, L.n[L.mine], MPI_COMM_WORLD, 0, 5, &bad);
  expect_class(rc, MPI_ERR_RANK, MPI_ERR_ARG, "MPI_Intercomm_create with local_leader = local size");
  rc = MPI_Intercomm_create(L.half, -1, MPI_COMM_WORLD, 0, 5, &bad);
  expect_class(rc, MPI_ERR_RANK, MPI_ERR_ARG, "MPI_Intercomm_create with local_leader = -1");
  /* remote_leader and peer_comm matter at the leader only; with
   * MPI_COMM_SELF as local_comm every rank is its own leader. */
  rc = MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_WORLD, n, 5, &bad);
  expect_class(rc, MPI_ERR_RANK, MPI_ERR_ARG, "MPI_Intercomm_create with remote_leader = size of peer_comm");
  rc = MPI_Intercomm_create(MPI_COMM_SELF, 0, MPI_COMM_NULL, 0, 5, &bad);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Intercomm_create with peer_comm = MPI_COMM_NULL");
  const int lead[2] = {0, 0};
  ic = make_inter(&L, lead, MPI_COMM_WORLD, NULL, 6);
  rc = MPI_Intercomm_create(ic, 0, MPI_COMM_WORLD, 0, 5, &bad);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Intercomm_create with an intercommunicator as local_comm");
#if !defined(MPICH_VERSION)
  /* MPICH 4.0.2 does not check this and fails an assertion in ch4i_comm.c
   * ("mapper->dir == MPIR_COMM_MAP_DIR__L2L || ..."), ending the job. */
  MPI_Comm m = MPI_COMM_NULL;
  rc = MPI_Intercomm_merge(L.half, 0, &m);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Intercomm_merge of an intracommunicator");
#endif
  int rs = -1;
  /* Neither reference library refuses an intracommunicator here: Open MPI
   * 4.1.4's MPI_Comm_remote_size returns MPI_SUCCESS and size 0 (its
   * MPI_Comm_remote_group does refuse it), MPICH 4.0.2 answers both with the
   * local group.  Checked for the others only. */
#if !defined(OPEN_MPI) && !defined(MPICH_VERSION)
  rc = MPI_Comm_remote_size(L.half, &rs);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Comm_remote_size of an intracommunicator");
#endif
#if !defined(MPICH_VERSION)
  MPI_Group g = MPI_GROUP_NULL;
  rc = MPI_Comm_remote_group(MPI_COMM_WORLD, &g);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Comm_remote_group of MPI_COMM_WORLD");
#endif
  int dest = L.n[1 - L.mine]; /* one past the remote group */
  rc = MPI_Send(&rs, 1, MPI_INT, dest, 0, ic);
  expect_class(rc, MPI_ERR_RANK, MPI_ERR_RANK, "MPI_Send to a rank past the remote group");
#ifdef SHMCOLL
  /* (Checked here only: the standard defines these on intracommunicators.) */
  rc = MPI_Comm_create_group(ic, MPI_GROUP_EMPTY, 0, &bad);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Comm_create_group on an intercommunicator");
  rc = MPI_Comm_split_type(ic, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &bad);
  expect_class(rc, MPI_ERR_COMM, MPI_ERR_COMM, "MPI_Comm_split_type on an intercommunicator");
#endif
  /* Everything still works. */
  check_p2p(ic, L.world[1 - L.mine], L.n[1 - L.mine], "after the errors", 5);
  TU_CALL(MPI_Barrier(ic));
  TU_CALL(MPI_Comm_free(&ic));
  layout_free(&L);
  free(grp), free(key);
}

int main(int argc, char **argv) {
  tu_init(&argc, &argv, "intercomm");
  quick = tu_arg_flag(argc, argv, "quick");
  if (tu_size < 2) {
    if (tu_rank == 0) printf("intercomm: PASS (needs 2 ranks for an intercommunicator; nothing to do with 1)\n");
    MPI_Finalize();
    return 0;
  }
  const int verbose = tu_arg_flag(argc, argv, "verbose");
  struct {
    const char *name;
    void (*fn)(void);
  } parts[] = {{"layouts", layouts}, {"derived", derived}, {"nested", nested}, {"errors", errors}};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
    double t0 = MPI_Wtime();
    parts[i].fn();
    if (verbose && tu_rank == 0) printf("intercomm: %s done in %.2f s\n", parts[i].name, MPI_Wtime() - t0);
  }
  double total = tu_sum_world((double)nchecks);
  TU_CALL(MPI_Barrier(MPI_COMM_WORLD));
  if (tu_rank == 0) printf("intercomm: PASS ranks=%d checks(sum over ranks)=%.0f\n", tu_size, total);
  MPI_Finalize();
  return 0;
}
