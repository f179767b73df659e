/*
 * threads_p2p.c -- point-to-point communication from several threads of every
 * rank at once (MPI_THREAD_MULTIPLE), checked byte for byte.
 *
 * Written against the standard MPI C API and POSIX threads only (the same
 * source builds and passes with Open MPI's and MPICH's mpicc).
 *
 *   threads_p2p [threads=4] [k=60] [rounds=8]
 *
 * Every message's bytes are a hash of (part, sender rank, sender thread,
 * receiver rank, sequence number), its size (0 B to 25 KB, so both sides of
 * the usual eager limits) too; every receive area is bracketed by guard bytes
 * that must keep their sentinel, as must the bytes of a receive buffer beyond
 * the message; send buffers must be unchanged after completion.
 *
 *  0. MPI_Init_thread(MPI_THREAD_MULTIPLE) must provide MPI_THREAD_MULTIPLE
 *     (otherwise the program fails at once, saying so); MPI_Query_thread
 *     returns it; MPI_Is_thread_main is true in the main thread only.
 *  1. Storm: every thread of every rank sends k messages to every rank
 *     (itself included) on one communicator shared by all threads, with
 *     MPI_Isend or MPI_Issend, tag = sender thread * k + sequence number.
 *     Every thread receives its share (ranks * k messages) with
 *     MPI_ANY_SOURCE and MPI_ANY_TAG (MPI_Recv, MPI_Irecv + MPI_Wait,
 *     MPI_Irecv + an MPI_Test loop).  Checked: status source and tag, the
 *     count, every byte, each message received exactly once over all threads,
 *     and non-overtaking where the standard promises it: the messages of one
 *     sending thread to one rank are sent in sequence order, so the messages
 *     of one (source, sending thread) that ONE receiving thread gets, one
 *     receive after the other, must come in increasing sequence order (the
 *     order in which different receiving threads see them is not defined).
 *  2. Matched probes: the same storm received only through MPI_Mprobe +
 *     MPI_Mrecv, MPI_Improbe (polled) + MPI_Imrecv, MPI_Improbe + MPI_Mrecv,
 *     with MPI_ANY_SOURCE and MPI_ANY_TAG, into a buffer of exactly the
 *     probed size, in every thread at once: a matched message must go to one
 *     thread only (each exactly once), with the same order rule.
 *  3. Probes: each thread receives the messages sent with its own tag (one
 *     sending thread per tag and source, so their order is defined) with
 *     MPI_Probe or an MPI_Iprobe loop on MPI_ANY_SOURCE and that tag, then
 *     MPI_Recv of the probed source and size, while the other threads probe
 *     and receive their tags: sizes, order and bytes checked.
 *  4. A thread blocked in MPI_Recv, and one in MPI_Wait on an MPI_Irecv, is
 *     completed by a message that ANOTHER thread sends later: of the same
 *     rank (MPI_Send, MPI_Ssend to itself) and of another rank; small and
 *     100 KB messages.
 *  5. Requests started by one thread (MPI_Irecv from every rank, MPI_Isend to
 *     every rank) are completed by another thread with MPI_Wait (in reverse
 *     order), an MPI_Test loop, MPI_Waitall, MPI_Waitany, MPI_Testany and
 *     MPI_Waitsome, the roles swapping every round.
 *  6. A generalized request (MPI_Grequest_start) is completed by one thread
 *     (MPI_Grequest_complete, after a pause) while another thread blocks in
 *     MPI_Wait on it (or polls it with MPI_Test, or waits for it with an
 *     MPI_Irecv in MPI_Waitall): the status comes from query_fn, query_fn
 *     and free_fn are each called once, and the request is MPI_REQUEST_NULL
 *     afterwards.
 *
 * On a wrong result the rank, thread, case and what differs are printed and
 * the program calls MPI_Abort(MPI_COMM_WORLD, 1).  No timing is asserted: the
 * pauses only make it likely that a thread is blocked when another acts.
 */
#include "threadutil.h"


/* ---- messages ---------------------------------------------------------------- */

#define MAXLEN 25000
static int K = 60;           /* messages per (sending thread, destination) in parts 1-3 */
static long rounds = 8;      /* rounds of parts 4-6 */
static pthread_barrier_t tbar; /* all threads of this rank */
static MPI_Comm comm_a, comm_b, comm_c, comm_d, comm_e;

static uint64_t mhash(int part, int src, int st, int dst, int seq) {
  uint64_t h = tu_mix(((uint64_t)(uint32_t)part << 52) ^ ((uint64_t)(uint32_t)src << 38) ^
                      ((uint64_t)(uint32_t)st << 26) ^ ((uint64_t)(uint32_t)dst << 13));
  return tu_mix(h ^ (uint64_t)(uint32_t)seq);
}
static size_t msize(int part, int src, int st, int dst, int seq) {
  uint64_t h = mhash(part, src, st, dst, seq) >> 7;
  if (seq % 17 == 3) return 20000 + h % 5000;
  return h % 200;
}
static uint64_t mkey(int part, int src, int st, int dst, int seq) {
  return tu_mix(mhash(part, src, st, dst, seq) + 0x51ed27);
}

/* Makes g's image expect this message (the receive area itself is untouched). */
static void expect(gb *g, int part, int src, int st, int dst, int seq) {
  tu_fill_sentinel(g->img, g->len + 2 * TU_GUARD);
  size_t n = msize(part, src, st, dst, seq);
  if (n > g->len) tfail("internal: message of %zu bytes for a %zu-byte area", n, g->len);
  tu_pattern(g->ip, mkey(part, src, st, dst, seq), 0, n);
}
static void reset(gb *g) {
  tu_fill_sentinel(g->all, g->len + 2 * TU_GUARD);
  memcpy(g->img, g->all, g->len + 2 * TU_GUARD);
}

/* The messages of one thread: every destination, k each, in one arena. */
typedef struct {
  int nmsg;
  unsigned char *arena;
  size_t total;
  uint64_t hash;
  MPI_Request *req;
} sendset;

static void send_storm(sendset *ss, int part, int t, MPI_Comm c) {
  int n = tu_size, me = tu_rank;
  ss->nmsg = n * K;
  ss->total = 0;
  for (int seq = 0; seq < K; ++seq)
    for (int d = 0; d < n; ++d) ss->total += msize(part, me, t, d, seq);
  ss->arena = (unsigned char *)tu_malloc(ss->total);
  ss->req = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * ss->nmsg);
  size_t off = 0;
  int i = 0;
  for (int seq = 0; seq < K; ++seq)
    for (int j = 0; j < n; ++j) {
      int d = (me + j + t) % n;
      size_t len = msize(part, me, t, d, seq);
      tu_pattern(ss->arena + off, mkey(part, me, t, d, seq), 0, len);
      off += len;
    }
  ss->hash = tu_hash_bytes(ss->arena, ss->total);
  off = 0;
  for (int seq = 0; seq < K; ++seq)
    for (int j = 0; j < n; ++j) {
      int d = (me + j + t) % n;
      size_t len = msize(part, me, t, d, seq);
      if ((seq + d + t) % 3 == 0)
        CK(MPI_Issend(ss->arena + off, (int)len, MPI_BYTE, d, t * K + seq, c, &ss->req[i++]));
      else
        CK(MPI_Isend(ss->arena + off, (int)len, MPI_BYTE, d, t * K + seq, c, &ss->req[i++]));
      off += len;
    }
}
static void finish_sends(sendset *ss) {
  int rc = MPI_Waitall(ss->nmsg, ss->req, MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) tcheck(rc, "MPI_Waitall(sends)", __LINE__);
  for (int i = 0; i < ss->nmsg; ++i)
    if (ss->req[i] != MPI_REQUEST_NULL) tfail("MPI_Waitall left send request %d not MPI_REQUEST_NULL", i);
  if (tu_hash_bytes(ss->arena, ss->total) != ss->hash) tfail("a send buffer was modified");
  free(ss->arena), free(ss->req);
}

/* Bookkeeping of a storm: seen[(src * T + st) * K + seq] over all threads,
 * last[src * T + st] per receiving thread. */
static atomic_uchar *seen;

/* Checks a received storm message: status, count, bytes, order, once. */
static void got_storm(int part, const MPI_Status *s, gb *g, int *last, long i) {
  int n = tu_size, src = s->MPI_SOURCE, tag = s->MPI_TAG, cnt = -1;
  if (src < 0 || src >= n) tfail("receive %ld: status MPI_SOURCE = %d", i, src);
  if (tag < 0 || tag >= nthreads * K) tfail("receive %ld: status MPI_TAG = %d (from rank %d)", i, tag, src);
  int st = tag / K, seq = tag % K;
  CK(MPI_Get_count(s, MPI_BYTE, &cnt));
  size_t want = msize(part, src, st, tu_rank, seq);
  if ((size_t)cnt != want)
    tfail("receive %ld: message seq %d of rank %d thread %d: count %d, expected %zu", i, seq, src, st, cnt, want);
  expect(g, part, src, st, tu_rank, seq);
  char what[120];
  snprintf(what, sizeof what, "receive %ld: message seq %d of rank %d thread %d (%zu bytes)", i, seq, src, st, want);
  gcheck(g, what);
  int *l = &last[src * nthreads + st];
  if (seq <= *l)
    tfail("receive %ld: message seq %d of rank %d thread %d came after seq %d to this same thread: the messages "
          "of one sender thread were overtaken",
          i, seq, src, st, *l);
  *l = seq;
  if (atomic_exchange(&seen[((size_t)src * nthreads + st) * K + seq], 1))
    tfail("receive %ld: message seq %d of rank %d thread %d was received twice", i, seq, src, st);
}

static void check_all_seen(const char *what) {
  long miss = 0, first = -1;
  for (long i = 0; i < (long)tu_size * nthreads * K; ++i)
    if (!atomic_load(&seen[i])) miss++, first = first < 0 ? i : first;
  if (miss)
    tfail("%s: %ld messages never received (first: rank %ld thread %ld seq %ld)", what, miss,
          first / K / nthreads, first / K % nthreads, first % K);
}

/* ---- part 1: storm with wildcard receives ------------------------------------- */

static void part1_thread(int t) {
  MPI_Comm c = comm_a;
  int n = tu_size, odd = tu_rank % 2;
  int *last = (int *)tu_malloc(sizeof(int) * n * nthreads);
  for (int i = 0; i < n * nthreads; ++i) last[i] = -1;
  gb g;
  gb_new(&g, MAXLEN);
  sendset ss;
  SETCASE("1 storm: sending");
  if (odd) nap_us(100L * (nthreads - t));
  send_storm(&ss, 1, t, c);
  for (long i = 0; i < (long)n * K; ++i) {
    SETCASE("1 storm: receive %ld of %ld with MPI_ANY_SOURCE, MPI_ANY_TAG, method %ld", i, (long)n * K, (i + t) % 3);
    MPI_Status s;
    MPI_Request q;
    reset(&g);
    switch ((i + t) % 3) {
      case 0: CK(MPI_Recv(g.p, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &s)); break;
      case 1:
        CK(MPI_Irecv(g.p, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &q));
        CK(MPI_Wait(&q, &s));
        break;
      case 2: {
        CK(MPI_Irecv(g.p, MAXLEN, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, c, &q));
        int done = 0;
        long spins = 0;
        while (!done) {
          CK(MPI_Test(&q, &done, &s));
          if (++spins % 32 == 0) sched_yield();
        }
        break;
      }
    }
    got_storm(1, &s, &g, last, i);
    if (odd && i % 50 == t) sched_yield();
  }
  SETCASE("1 storm: completing the sends");
  finish_sends(&ss);
  gb_free(&g);
  free(last);
}

/* ---- part 2: matched probes ---------------------------------------------------- */

static void part2_thread(int t) {
  MPI_Comm c = comm_b;
  int n = tu_size;
  int *last = (int *)tu_malloc(sizeof(int) * n * nthreads);
  for (int i = 0; i < n * nthreads; ++i) last[i] = -1;
  sendset ss;
  SETCASE("2 matched probes: sending");
  send_storm(&ss, 2, t, c);
  for (long i = 0; i < (long)n * K; ++i) {
    int how = (int)((i + 2 * t) % 3);
    SETCASE("2 matched probes: message %ld of %ld, method %d", i, (long)n * K, how);
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status ps, s;
    int flag = 0, cnt = -1;
    if (how == 0) {
      CK(MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &m, &ps));
    } else {
      long spins = 0;
      while (!flag) {
        CK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, c, &flag, &m, &ps));
        if (!flag && ++spins % 16 == 0) sched_yield();
      }
    }
    if (m == MPI_MESSAGE_NULL) tfail("the matched probe returned MPI_MESSAGE_NULL");
    CK(MPI_Get_count(&ps, MPI_BYTE, &cnt));
    if (cnt < 0 || cnt > MAXLEN) tfail("probed count %d", cnt);
    gb g;
    gb_new(&g, (size_t)cnt);
    if (how == 1) {
      MPI_Request q;
      CK(MPI_Imrecv(g.p, cnt, MPI_BYTE, &m, &q));
      CK(MPI_Wait(&q, &s));
    } else {
      CK(MPI_Mrecv(g.p, cnt, MPI_BYTE, &m, &s));
    }
    if (m != MPI_MESSAGE_NULL) tfail("MPI_Mrecv/MPI_Imrecv did not set the message handle to MPI_MESSAGE_NULL");
    if (s.MPI_SOURCE != ps.MPI_SOURCE || s.MPI_TAG != ps.MPI_TAG)
      tfail("probe status (source %d, tag %d) but receive status (source %d, tag %d)", ps.MPI_SOURCE, ps.MPI_TAG,
            s.MPI_SOURCE, s.MPI_TAG);
    got_storm(2, &s, &g, last, i);
    gb_free(&g);
  }
  SETCASE("2 matched probes: completing the sends");
  finish_sends(&ss);
  free(last);
}

/* ---- part 3: probes on per-thread tags ----------------------------------------- */

static void part3_thread(int t) {
  MPI_Comm c = comm_c;
  int n = tu_size, me = tu_rank;
  /* send: k messages to every rank with tag t */
  size_t total = 0;
  for (int seq = 0; seq < K; ++seq)
    for (int d = 0; d < n; ++d) total += msize(3, me, t, d, seq);
  unsigned char *arena = (unsigned char *)tu_malloc(total);
  MPI_Request *req = (MPI_Request *)tu_malloc(sizeof(MPI_Request) * n * K);
  size_t off = 0;
  int nr = 0;
  SETCASE("3 probes: sending");
  for (int seq = 0; seq < K; ++seq)
    for (int j = 0; j < n; ++j) {
      int d = (me + n - j) % n;
      size_t len = msize(3, me, t, d, seq);
      tu_pattern(arena + off, mkey(3, me, t, d, seq), 0, len);
      CK(MPI_Isend(arena + off, (int)len, MPI_BYTE, d, t, c, &req[nr++]));
      off += len;
    }
  int *next = (int *)tu_malloc(sizeof(int) * n);
  for (int p = 0; p < n; ++p) next[p] = 0;
  for (long i = 0; i < (long)n * K; ++i) {
    int useiprobe = (int)((i + t) % 2);
    SETCASE("3 probes: message %ld of %ld with %s(MPI_ANY_SOURCE, tag %d)", i, (long)n * K,
            useiprobe ? "MPI_Iprobe" : "MPI_Probe", t);
    MPI_Status ps, s;
    int flag = 0, cnt = -1;
    if (!useiprobe) {
      CK(MPI_Probe(MPI_ANY_SOURCE, t, c, &ps));
    } else {
      long spins = 0;
      while (!flag) {
        CK(MPI_Iprobe(MPI_ANY_SOURCE, t, c, &flag, &ps));
        if (!flag && ++spins % 16 == 0) sched_yield();
      }
    }
    int src = ps.MPI_SOURCE;
    if (src < 0 || src >= n || ps.MPI_TAG != t)
      tfail("probe status: source %d tag %d (probed tag %d)", src, ps.MPI_TAG, t);
    if (next[src] >= K) tfail("more than %d messages from rank %d", K, src);
    CK(MPI_Get_count(&ps, MPI_BYTE, &cnt));
    size_t want = msize(3, src, t, me, next[src]);
    if ((size_t)cnt != want)
      tfail("probed message from rank %d: count %d, expected %zu (message seq %d of that rank)", src, cnt, want,
            next[src]);
    gb g;
    gb_new(&g, (size_t)cnt);
    expect(&g, 3, src, t, me, next[src]);
    CK(MPI_Recv(g.p, cnt, MPI_BYTE, src, t, c, &s));
    if (s.MPI_SOURCE != src || s.MPI_TAG != t) tfail("receive status source %d tag %d", s.MPI_SOURCE, s.MPI_TAG);
    char what[100];
    snprintf(what, sizeof what, "message seq %d from rank %d (%d bytes)", next[src], src, cnt);
    gcheck(&g, what);
    gb_free(&g);
    next[src]++;
  }
  SETCASE("3 probes: completing the sends");
  CK(MPI_Waitall(nr, req, MPI_STATUSES_IGNORE));
  off = 0;
  for (int seq = 0; seq < K; ++seq)
    for (int j = 0; j < n; ++j) {
      int d = (me + n - j) % n;
      size_t len = msize(3, me, t, d, seq);
      unsigned char *e = (unsigned char *)tu_malloc(len + 1);
      tu_pattern(e, mkey(3, me, t, d, seq), 0, len);
      if (memcmp(e, arena + off, len)) tfail("a send buffer was modified");
      free(e);
      off += len;
    }
  free(arena), free(req), free(next);
}

/* ---- part 4: a blocked receive completed by another thread --------------------- */

static void part4_thread(int t) {
  MPI_Comm c = comm_d;
  int n = tu_size, me = tu_rank, npairs = nthreads / 2, k = t / 2;
  if (t >= 2 * npairs) { /* the odd thread out only keeps the barriers */
    for (long r = 0; r < rounds; ++r)
      for (int step = 0; step < 4; ++step) pthread_barrier_wait(&tbar);
    return;
  }
  int recver = t % 2 == 0;
  for (long r = 0; r < rounds; ++r)
    for (int step = 0; step < 4; ++step) {
      /* step 0: self, MPI_Recv / MPI_Send; 1: self, MPI_Irecv + MPI_Wait / MPI_Ssend;
       * 2: from the rank before, MPI_Recv / MPI_Send; 3: from the rank before, MPI_Irecv + MPI_Wait / MPI_Ssend */
      int other = step >= 2, peer_from = other ? (me + n - 1) % n : me, peer_to = other ? (me + 1) % n : me;
      int tag = (int)(((r * 4 + step) * npairs + k) % 30000);
      int seq = (int)(r * 4 + step);
      size_t len = (r + step) % 3 == 2 ? 100000 + k : 1 + (r * 7 + step) % 90;
      SETCASE("4 round %ld step %d (%s, %s) %zu bytes, %s", r, step, other ? "other rank" : "self",
              step % 2 ? "MPI_Irecv + MPI_Wait / MPI_Ssend" : "MPI_Recv / MPI_Send", len,
              recver ? "receiving thread" : "sending thread");
      if (recver) {
        gb g;
        gb_new(&g, len + 16);
        tu_pattern(g.ip, mkey(4, peer_from, k, me, seq), 0, len);
        MPI_Status s;
        int cnt = -1;
        pthread_barrier_wait(&tbar); /* the sender pauses after this before it sends */
        if (step % 2 == 0) {
          CK(MPI_Recv(g.p, (int)len + 16, MPI_BYTE, peer_from, tag, c, &s));
        } else {
          MPI_Request q;
          CK(MPI_Irecv(g.p, (int)len + 16, MPI_BYTE, peer_from, tag, c, &q));
          CK(MPI_Wait(&q, &s));
        }
        CK(MPI_Get_count(&s, MPI_BYTE, &cnt));
        if ((size_t)cnt != len || s.MPI_SOURCE != peer_from || s.MPI_TAG != tag)
          tfail("status: count %d source %d tag %d, expected %zu, %d, %d", cnt, s.MPI_SOURCE, s.MPI_TAG, len,
                peer_from, tag);
        gcheck(&g, "receive buffer");
        gb_free(&g);
      } else {
        unsigned char *b = (unsigned char *)tu_malloc(len);
        tu_pattern(b, mkey(4, me, k, peer_to, seq), 0, len);
        pthread_barrier_wait(&tbar);
        nap_us(2000);
        if (step % 2 == 0)
          CK(MPI_Send(b, (int)len, MPI_BYTE, peer_to, tag, c));
        else
          CK(MPI_Ssend(b, (int)len, MPI_BYTE, peer_to, tag, c));
        free(b);
      }
    }
}

/* ---- part 5: requests started by one thread, completed by another -------------- */

#define MAXPAIRS 32
typedef struct {
  MPI_Request req[2 * 64];
  gb rb[64];
  unsigned char *sb[64];
  size_t slen[64];
  long round;
} handoff;
static handoff ho[MAXPAIRS];

/* bytes from src to dst in round r of pair k: up to 3000, or 40 KB more */
static size_t p5len(int src, int dst, int k, long r) {
  size_t l = 1 + mhash(5, src, k, dst, (int)r) % 3000;
  return (r + src + dst) % 4 == 1 ? l + 40000 : l;
}

static void part5_thread(int t) {
  MPI_Comm c = comm_e;
  int n = tu_size, me = tu_rank, npairs = nthreads / 2, k = t / 2;
  for (long r = 0; r < rounds * 2; ++r) {
    int active = t < 2 * npairs;
    int starter = active && (t % 2) == (int)(r % 2);
    handoff *h = &ho[k];
    int tag = (int)((r * npairs + k) % 30000);
    if (starter) {
      SETCASE("5 round %ld: starting the requests", r);
      h->round = r;
      for (int p = 0; p < n; ++p) {
        size_t rl = p5len(p, me, k, r);
        gb_new(&h->rb[p], rl);
        tu_pattern(h->rb[p].ip, mkey(5, p, k, me, (int)r), 0, rl);
        CK(MPI_Irecv(h->rb[p].p, (int)rl, MPI_BYTE, p, tag, c, &h->req[p]));
      }
      for (int j = 0; j < n; ++j) {
        int p = (me + j) % n;
        size_t sl = p5len(me, p, k, r);
        h->sb[p] = (unsigned char *)tu_malloc(sl);
        h->slen[p] = sl;
        tu_pattern(h->sb[p], mkey(5, me, k, p, (int)r), 0, sl);
        CK(MPI_Isend(h->sb[p], (int)sl, MPI_BYTE, p, tag, c, &h->req[n + p]));
      }
    }
    pthread_barrier_wait(&tbar); /* hand the requests over */
    if (active && !starter) {
      int how = (int)((r / 2 + k) % 6), nq = 2 * n;
      static const char *const hn[6] = {"MPI_Wait (reverse order)", "MPI_Test loop", "MPI_Waitall", "MPI_Waitany",
                                        "MPI_Testany", "MPI_Waitsome"};
      SETCASE("5 round %ld: completing another thread's requests with %s", r, hn[how]);
      MPI_Request *q = h->req;
      MPI_Status *st = (MPI_Status *)tu_malloc(sizeof(MPI_Status) * nq);
      int left = nq, idx = -1, flag = 0, outc = 0;
      int *outi = (int *)tu_malloc(sizeof(int) * nq);
      long spins = 0;
      switch (how) {
        case 0:
          for (int i = nq - 1; i >= 0; --i) CK(MPI_Wait(&q[i], &st[i]));
          break;
        case 1:
          while (left) {
            left = 0;
            for (int i = 0; i < nq; ++i)
              if (q[i] != MPI_REQUEST_NULL) {
                CK(MPI_Test(&q[i], &flag, &st[i]));
                left += !flag;
              }
            if (left && ++spins % 8 == 0) sched_yield();
          }
          break;
        case 2: {
          int rc = MPI_Waitall(nq, q, st);
          if (rc != MPI_SUCCESS) tcheck(rc, "MPI_Waitall", __LINE__);
          break;
        }
        case 3:
          for (int j = 0; j < nq; ++j) {
            MPI_Status s1;
            CK(MPI_Waitany(nq, q, &idx, &s1));
            if (idx < 0 || idx >= nq) tfail("MPI_Waitany index %d", idx);
            st[idx] = s1;
          }
          CK(MPI_Waitany(nq, q, &idx, MPI_STATUS_IGNORE));
          if (idx != MPI_UNDEFINED) tfail("MPI_Waitany with no active request gave index %d", idx);
          break;
        case 4:
          while (left) {
            MPI_Status s1;
            CK(MPI_Testany(nq, q, &idx, &flag, &s1));
            if (flag && idx != MPI_UNDEFINED) st[idx] = s1, --left;
            else if (++spins % 8 == 0) sched_yield();
          }
          break;
        case 5:
          while (left) {
            MPI_Status *s1 = (MPI_Status *)tu_malloc(sizeof(MPI_Status) * nq);
            int rc = MPI_Waitsome(nq, q, &outc, outi, s1);
            if (rc != MPI_SUCCESS) tcheck(rc, "MPI_Waitsome", __LINE__);
            if (outc < 1 || outc > left) tfail("MPI_Waitsome outcount %d with %d active", outc, left);
            for (int j = 0; j < outc; ++j) st[outi[j]] = s1[j];
            left -= outc;
            free(s1);
          }
          break;
      }
      for (int i = 0; i < nq; ++i)
        if (q[i] != MPI_REQUEST_NULL) tfail("request %d not MPI_REQUEST_NULL after completion", i);
      for (int p = 0; p < n; ++p) {
        int cnt = -1;
        CK(MPI_Get_count(&st[p], MPI_BYTE, &cnt));
        if (st[p].MPI_SOURCE != p || st[p].MPI_TAG != tag || (size_t)cnt != h->rb[p].len)
          tfail("receive from rank %d: status source %d tag %d count %d, expected %d %d %zu", p, st[p].MPI_SOURCE,
                st[p].MPI_TAG, cnt, p, tag, h->rb[p].len);
        char what[64];
        snprintf(what, sizeof what, "receive from rank %d", p);
        gcheck(&h->rb[p], what);
        gb_free(&h->rb[p]);
        unsigned char *e = (unsigned char *)tu_malloc(h->slen[p]);
        tu_pattern(e, mkey(5, me, k, p, (int)r), 0, h->slen[p]);
        if (memcmp(e, h->sb[p], h->slen[p])) tfail("the send buffer to rank %d was modified", p);
        free(e), free(h->sb[p]);
      }
      free(st), free(outi);
    }
    pthread_barrier_wait(&tbar);
  }
}

/* ---- part 6: generalized requests ----------------------------------------------- */

typedef struct {
  atomic_int queried, freed, cancelled;
  int src, tag, count;
} gstate;
static int g_query(void *extra, MPI_Status *s) {
  gstate *g = (gstate *)extra;
  atomic_fetch_add(&g->queried, 1);
  s->MPI_SOURCE = g->src;
  s->MPI_TAG = g->tag;
  s->MPI_ERROR = MPI_SUCCESS;
  MPI_Status_set_elements(s, MPI_BYTE, g->count);
  MPI_Status_set_cancelled(s, 0);
  return MPI_SUCCESS;
}
static int g_free(void *extra) {
  atomic_fetch_add(&((gstate *)extra)->freed, 1);
  return MPI_SUCCESS;
}
static int g_cancel(void *extra, int complete) {
  (void)complete;
  atomic_fetch_add(&((gstate *)extra)->cancelled, 1);
  return MPI_SUCCESS;
}
static MPI_Request greq[MAXPAIRS];
static gstate gst[MAXPAIRS];

static void part6_thread(int t) {
  int npairs = nthreads / 2, k = t / 2, me = tu_rank;
  int active = t < 2 * npairs, completer = active && t % 2 == 0;
  for (long r = 0; r < rounds * 2; ++r) {
    int how = (int)((r + k) % 3);
    gstate *g = &gst[k];
    if (completer) {
      SETCASE("6 round %ld: MPI_Grequest_start", r);
      atomic_store(&g->queried, 0), atomic_store(&g->freed, 0), atomic_store(&g->cancelled, 0);
      g->src = 1000 + k, g->tag = (int)(r * 10 + k), g->count = (int)(r * 3 + 1);
      CK(MPI_Grequest_start(g_query, g_free, g_cancel, g, &greq[k]));
    }
    pthread_barrier_wait(&tbar);
    if (completer) {
      nap_us(3000);
      SETCASE("6 round %ld: MPI_Grequest_complete while another thread waits", r);
      CK(MPI_Grequest_complete(greq[k]));
      if (how == 2) { /* the waiter also waits for a message from this thread */
        int v = (int)(r * 77 + k);
        CK(MPI_Send(&v, 1, MPI_INT, me, 20000 + k, comm_d));
      }
    } else if (active) {
      static const char *const hn[3] = {"MPI_Wait", "MPI_Test loop", "MPI_Waitall with an MPI_Irecv"};
      SETCASE("6 round %ld: %s on a generalized request another thread completes", r, hn[how]);
      MPI_Status s;
      MPI_Request q = greq[k];
      if (how == 0) {
        CK(MPI_Wait(&q, &s));
      } else if (how == 1) {
        int flag = 0;
        long spins = 0;
        while (!flag) {
          CK(MPI_Test(&q, &flag, &s));
          if (!flag && ++spins % 8 == 0) sched_yield();
        }
      } else {
        int v = -1;
        MPI_Request qq[2];
        MPI_Status ss[2];
        CK(MPI_Irecv(&v, 1, MPI_INT, me, 20000 + k, comm_d, &qq[1]));
        qq[0] = q;
        int rc = MPI_Waitall(2, qq, ss);
        if (rc != MPI_SUCCESS) tcheck(rc, "MPI_Waitall", __LINE__);
        if (v != (int)(r * 77 + k)) tfail("the message received in MPI_Waitall holds %d", v);
        if (qq[0] != MPI_REQUEST_NULL || qq[1] != MPI_REQUEST_NULL) tfail("MPI_Waitall left a request active");
        s = ss[0];
        q = qq[0];
      }
      if (q != MPI_REQUEST_NULL) tfail("the generalized request is not MPI_REQUEST_NULL after completion");
      int cnt = -1, canc = -1;
      CK(MPI_Get_count(&s, MPI_BYTE, &cnt));
      CK(MPI_Test_cancelled(&s, &canc));
      if (s.MPI_SOURCE != g->src || s.MPI_TAG != g->tag || cnt != g->count || canc)
        tfail("status source %d tag %d count %d cancelled %d; query_fn set %d %d %d 0", s.MPI_SOURCE, s.MPI_TAG, cnt,
              canc, g->src, g->tag, g->count);
      if (atomic_load(&g->queried) != 1 || atomic_load(&g->freed) != 1 || atomic_load(&g->cancelled) != 0)
        tfail("query_fn called %d times, free_fn %d times, cancel_fn %d times (expected 1, 1, 0)",
              atomic_load(&g->queried), atomic_load(&g->freed), atomic_load(&g->cancelled));
      atomic_fetch_add(&nchecks, 1);
    }
    pthread_barrier_wait(&tbar);
  }
}

/* ---- main ------------------------------------------------------------------------ */

int main(int argc, char **argv) {
  thr_init(&argc, &argv, "threads_p2p");
  nthreads = (int)tu_arg_long(argc, argv, "threads", 4);
  K = (int)tu_arg_long(argc, argv, "k", 60);
  rounds = tu_arg_long(argc, argv, "rounds", 8);
  if (nthreads < 1 || nthreads > 64) tfail("threads=%d: 1 to 64", nthreads);
  if (K < 1) tfail("k=%d", K);
  int *ub = NULL, flag = 0;
  CK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
  if (!flag || *ub < 30000 || *ub < nthreads * K) tfail("MPI_TAG_UB %d too small for threads * k", flag ? *ub : -1);
  if (tu_size > 64) tfail("at most 64 ranks");
  MPI_Comm *cs[5] = {&comm_a, &comm_b, &comm_c, &comm_d, &comm_e};
  for (int i = 0; i < 5; ++i) {
    CK(MPI_Comm_dup(MPI_COMM_WORLD, cs[i]));
    CK(MPI_Comm_set_errhandler(*cs[i], MPI_ERRORS_RETURN));
  }
  pthread_barrier_init(&tbar, NULL, (unsigned)nthreads);
  size_t nseen = (size_t)tu_size * nthreads * K;
  seen = (atomic_uchar *)tu_malloc(nseen);
  double tp[7];
  int verbose = tu_arg_flag(argc, argv, "verbose");
  static void (*const parts[6])(int) = {part1_thread, part2_thread, part3_thread,
                                        part4_thread, part5_thread, part6_thread};
  for (int p = 0; p < 6; ++p) {
    for (size_t i = 0; i < nseen; ++i) atomic_store(&seen[i], 0);
    double t0 = MPI_Wtime();
    run_threads(parts[p]);
    SETCASE("after part %d", p + 1);
    if (p == 0) check_all_seen("1 storm");
    if (p == 1) check_all_seen("2 matched probes");
    CK(MPI_Barrier(MPI_COMM_WORLD));
    tp[p] = MPI_Wtime() - t0;
    if (verbose && tu_rank == 0) printf("threads_p2p: part %d %.2fs\n", p + 1, tp[p]), fflush(stdout);
  }
  /* nothing may be left unreceived on the communicators */
  for (int i = 0; i < 5; ++i) {
    int f = 1;
    SETCASE("MPI_Iprobe for left-over messages");
    CK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, *cs[i], &f, MPI_STATUS_IGNORE));
    if (f) tfail("a message was left over on communicator %d", i);
    CK(MPI_Comm_free(cs[i]));
  }
  pthread_barrier_destroy(&tbar);
  free(seen);
  tu_ncases = atomic_load(&nchecks);
  char extra[200];
  snprintf(extra, sizeof extra, "threads=%d k=%d rounds=%ld (parts %.1f %.1f %.1f %.1f %.1f %.1f s)", nthreads, K,
           rounds, tp[0], tp[1], tp[2], tp[3], tp[4], tp[5]);
  return tu_finish(extra);
}
