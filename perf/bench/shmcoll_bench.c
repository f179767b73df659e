/*
 * shmcoll-bench -- an OSU-style benchmark of the all-to-all and all-gather
 * collectives, of the rooted and reducing collectives (MPI_Bcast, MPI_Reduce,
 * MPI_Allreduce, MPI_Gather, MPI_Scatter, MPI_Reduce_scatter_block) and
 * MPI_Barrier, of the
 * neighbourhood alltoall and allgather (neighbor.c), of one-sided
 * communication (rma.c: put, get, accumulate, fetch-and-op and
 * compare-and-swap under fence, lock and lock_all; hot buffers only, --cold
 * does not apply), and of the memory-copy bandwidth that bounds them.
 *
 * Written against the standard MPI C API only: Init/Finalize, Comm_rank/size,
 * Barrier, Wtime, Alltoall(v,w), Allgather(v), Bcast, Reduce, Allreduce,
 * Gather, Scatter, Reduce_scatter_block, Sendrecv, MPI_Abort, and for the neighbourhood collectives Dims_create,
 * Cart_create, Cart_shift, Dist_graph_create_adjacent, Neighbor_alltoall,
 * Neighbor_allgather and Comm_free.  The per-rank times are combined with
 * MPI_Allgather.  The same
 * source builds against shmcoll, Open MPI and MPICH; the implementation's
 * name is taken from mpi.h at compile time.
 *
 * Bcast, reduce, gather and scatter use root 0; gather and scatter move
 * `bytes` per rank.  Reduce and allreduce add `bytes / 8` MPI_DOUBLEs with
 * MPI_SUM, reduce_scatter_block `bytes / 8` per rank (sizes under 8 bytes are
 * skipped); the values are small integers, so the sums are exact and checked
 * exactly.  Barrier is reported once, as bytes 0.
 *
 * Method, per (operation, block size, cache mode):
 *   1. one validation call on region 0 of the buffer arena, whose result is
 *      checked byte for byte (sampled above 64 KiB per block);
 *   2. one timed call, whose slowest rank's time sizes the warm-up;
 *   3. the warm-up loop, whose slowest rank's time per call sizes the timed
 *      loop to the per-size time budget (bounded by --min-iters/--max-iters);
 *   4. barrier, then the timed loop of back-to-back calls; each rank's mean
 *      time per call is gathered and reported as avg/min/max across ranks.
 *      With --sync, a barrier before every call instead, and only the calls
 *      timed (the method of the common MPI benchmark suites: ranks arrive
 *      together, so no call overlaps the previous one).
 * All ranks derive the same counts from gathered values, so they always
 * agree on how many calls to make.
 *
 * Bandwidth is payload bytes delivered: bw_MBps is the receive volume of the
 * busiest receiver (its whole receive buffer, own block included) divided by
 * the average time; agg_MBps is the sum over ranks of bytes received divided
 * by the same time.  MB = 1e6 bytes.
 *
 * The memcpy bound: op=memcpy is every rank copying, concurrently, as many
 * bytes as it receives in alltoall/allgather at that block size (N x block);
 * op=memcpy1 is rank 0 alone doing the same copy while the others wait.
 *
 * The scheduling floor: op=yield is every rank calling sched_yield() back to
 * back, started together.  With more ranks than cores its time per call is
 * one round in which every rank sharing a core gets the core once (a context
 * switch each); any collective in which every rank must run at least once a
 * call costs at least that much.  With a core per rank it is the bare
 * system call.  Reported once, as bytes 0.
 *
 * The exchange floor: op=lines is every rank storing its call count on a
 * cache line of its own (in a window from MPI_Win_allocate_shared) and
 * waiting until it sees every other rank's line reach the same count,
 * spinning -- or yielding, when ranks outnumber the online cores.  At 2 ranks
 * on 2 cores it is one cache-line transfer each way, the least any call in
 * which each rank hears from the other can take; with more ranks than cores
 * it is the same exchange at the speed of the scheduler.  The same code runs
 * against every library.  Reported once, as bytes 0.
 *
 * Cold mode (--cold): every call uses the next region of a per-rank pool
 * several times larger than the last-level cache, so buffers are not
 * cache-hot; the whole pool is touched once before any timing.
 *
 * --membw: STREAM-style copy, triad and memcpy on per-rank arrays from L1 to
 * DRAM sizes, all ranks at once, reported in GB/s counting bytes read plus
 * bytes written (STREAM's convention; note the difference from the payload
 * convention above), followed by memcpy/memcpy1 at the collective sizes.
 */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "neighbor.h"
#include "rma.h"

/* ---- implementation, detected at compile time ---------------------------- */
#define STR_(x) #x
#define STR(x) STR_(x)
#if defined(BENCH_IMPL_NAME) /* a name of the builder's choice (perf/compare.sh --baseline) */
#define IMPL_NAME BENCH_IMPL_NAME
#if defined(SHMCOLL)
#define IMPL_VERSION STR(SHMCOLL_VERSION_MAJOR) "." STR(SHMCOLL_VERSION_MINOR) "." STR(SHMCOLL_VERSION_PATCH)
#else
#define IMPL_VERSION STR(MPI_VERSION) "." STR(MPI_SUBVERSION)
#endif
#elif defined(SHMCOLL)
#define IMPL_NAME "shmcoll"
#define IMPL_VERSION STR(SHMCOLL_VERSION_MAJOR) "." STR(SHMCOLL_VERSION_MINOR) "." STR(SHMCOLL_VERSION_PATCH)
#elif defined(OMPI_MAJOR_VERSION)
#define IMPL_NAME "openmpi"
#define IMPL_VERSION STR(OMPI_MAJOR_VERSION) "." STR(OMPI_MINOR_VERSION) "." STR(OMPI_RELEASE_VERSION)
#elif defined(MPICH_VERSION)
#define IMPL_NAME "mpich"
#define IMPL_VERSION MPICH_VERSION
#else
#define IMPL_NAME "mpi"
#define IMPL_VERSION STR(MPI_VERSION) "." STR(MPI_SUBVERSION)
#endif

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define PAGE ((size_t)4096)

/* ---- operations ----------------------------------------------------------- */
enum {
  OP_ALLTOALL,
  OP_ALLTOALLV,      /* uniform counts */
  OP_ALLTOALLV_SKEW, /* one pair carries most bytes, most pairs nothing */
  OP_ALLTOALLW,
  OP_ALLGATHER,
  OP_ALLGATHERV,
  OP_BCAST,          /* root 0 */
  OP_REDUCE,         /* MPI_DOUBLE, MPI_SUM, root 0 */
  OP_ALLREDUCE,      /* MPI_DOUBLE, MPI_SUM */
  OP_GATHER,         /* root 0 */
  OP_SCATTER,        /* root 0 */
  OP_REDUCE_SCATTER_BLOCK, /* MPI_DOUBLE, MPI_SUM, block = bytes per rank */
  OP_BARRIER,        /* no buffers: once, as bytes 0 */
  OP_SENDRECV,       /* point-to-point: MPI_Sendrecv around a ring (to rank+1, from rank-1) */
  OP_CART_ALLTOALL,  /* MPI_Neighbor_alltoall, 2-D periodic grid (neighbor.h) */
  OP_GRAPH_ALLTOALL, /* MPI_Neighbor_alltoall, random graph of degree min(4, N-1) */
  OP_CART_ALLGATHER, /* MPI_Neighbor_allgather, the same two topologies */
  OP_GRAPH_ALLGATHER,
  OP_RING_ALLTOALL,  /* MPI_Neighbor_alltoall and _allgather on a 1-D periodic ring (2 neighbours) */
  OP_RING_ALLGATHER,
  OP_MEMCPY,  /* all ranks copy their receive volume concurrently */
  OP_MEMCPY1, /* rank 0 alone copies it */
  OP_YIELD,   /* every rank calls sched_yield() back to back: the scheduling floor */
  OP_LINES,   /* every rank stores a count on its own line and waits for everyone's: the exchange floor */
  OP_COUNT
};
static const char *const kOpNames[OP_COUNT] = {"alltoall", "alltoallv", "alltoallv_skew", "alltoallw",
                                               "allgather", "allgatherv", "bcast", "reduce", "allreduce", "gather",
                                               "scatter", "reduce_scatter_block", "barrier", "sendrecv",
                                               "cart_alltoall", "graph_alltoall", "cart_allgather", "graph_allgather",
                                               "ring_alltoall", "ring_allgather",
                                               "memcpy", "memcpy1", "yield", "lines"};
#define OPS_COLL ((1u << OP_SENDRECV) - 1)
#define OPS_NB_ALLTOALL ((1u << OP_CART_ALLTOALL) | (1u << OP_GRAPH_ALLTOALL) | (1u << OP_RING_ALLTOALL))
#define OPS_NB_ALLGATHER ((1u << OP_CART_ALLGATHER) | (1u << OP_GRAPH_ALLGATHER) | (1u << OP_RING_ALLGATHER))
#define OPS_NEIGHBOR (OPS_NB_ALLTOALL | OPS_NB_ALLGATHER)
#define OPS_DEFAULT (OPS_COLL | (1u << OP_MEMCPY) | (1u << OP_MEMCPY1) | (1u << OP_YIELD) | (1u << OP_LINES))

static int is_copy_op(int op) { return op == OP_MEMCPY || op == OP_MEMCPY1; }
/* Not a collective: started together at a common time, never validated. */
static int is_local_op(int op) { return is_copy_op(op) || op == OP_YIELD; }
static int is_gather_op(int op) { return op == OP_ALLGATHER || op == OP_ALLGATHERV; }
/* One buffer of `bytes` per rank, not one block per peer. */
static int is_single_op(int op) { return op == OP_BCAST || op == OP_REDUCE || op == OP_ALLREDUCE; }
static int is_reduce_op(int op) { return op == OP_REDUCE || op == OP_ALLREDUCE || op == OP_REDUCE_SCATTER_BLOCK; }
/* Rooted, one block per rank at the root: the layouts need no per-peer counts. */
static int is_rooted_op(int op) { return op == OP_GATHER || op == OP_SCATTER; }
/* Run once, as bytes 0: no buffers. */
static int is_sizeless_op(int op) { return op == OP_YIELD || op == OP_BARRIER || op == OP_LINES; }
static int is_neighbor_op(int op) { return (OPS_NEIGHBOR >> op) & 1u; }
static int nb_topo(int op) {
  if (op == OP_CART_ALLTOALL || op == OP_CART_ALLGATHER) return NB_CART;
  return op == OP_RING_ALLTOALL || op == OP_RING_ALLGATHER ? NB_RING : NB_GRAPH;
}
static int nb_gather(int op) { return (OPS_NB_ALLGATHER >> op) & 1u; }

/* ---- options ----------------------------------------------------------------- */
typedef struct {
  unsigned ops;
  unsigned rma_ops; /* one-sided ops (rma.h), bit = kind * RMA_NSYNC + sync */
  size_t min_size, max_size;
  size_t sizes[64];
  int nsizes; /* 0: powers of two from min_size to max_size */
  int quick;
  int cold[2], ncold;
  long iters, warmup; /* <0: automatic */
  double budget;      /* seconds of timed calls per size */
  long min_iters, max_iters;
  const char *csv, *tag;
  int membw, check;
  int sync; /* --sync: a barrier before every call, only the calls timed */
  int alloc_mem; /* --alloc-mem: buffers from MPI_Alloc_mem */
  int own_buffers; /* --own-buffers: each size's hot buffers from their own malloc */
  size_t mem_limit; /* bytes per rank; 0: half the node's memory shared by the ranks */
  size_t cold_pool; /* bytes per rank; 0: automatic */
} Opts;

static Opts g_opt;
static int g_rank, g_nranks;
static double *g_times; /* g_nranks doubles, for gathers */

static void die(const char *fmt, const char *arg) {
  if (g_rank == 0) {
    fprintf(stderr, "shmcoll-bench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
  }
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

/* "4096", "4K", "16M", "1G" (binary multiples). */
static size_t parse_size(const char *s) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) die("bad size '%s'", s);
  switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
  }
  if (*end == 'i' && end[1] == 'B') end += 2;
  else if (*end == 'B') end++;
  if (*end) die("bad size '%s'", s);
  return (size_t)v;
}

static long parse_long(const char *s) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (errno || end == s || *end) die("bad number '%s'", s);
  return v;
}

static unsigned parse_ops(const char *list, unsigned *rma_ops) {
  unsigned ops = 0;
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!strcmp(t, "all")) { ops |= OPS_DEFAULT; continue; }
    if (!strcmp(t, "coll")) { ops |= OPS_COLL; continue; }
    if (!strcmp(t, "neighbor")) { ops |= OPS_NEIGHBOR; continue; }
    if (!strcmp(t, "neighbor_alltoall")) { ops |= OPS_NB_ALLTOALL; continue; }
    if (!strcmp(t, "neighbor_allgather")) { ops |= OPS_NB_ALLGATHER; continue; }
    if (rma_parse(t, rma_ops)) continue;
    int found = 0;
    for (int i = 0; i < OP_COUNT; i++)
      if (!strcmp(t, kOpNames[i])) { ops |= 1u << i; found = 1; }
    if (!found) die("unknown operation '%s' (see --help)", t);
  }
  return ops;
}

static void usage(void) {
  if (g_rank) return;
  printf(
      "usage: shmcoll-bench [options]\n"
      "  --op LIST         comma-separated: alltoall alltoallv alltoallv_skew alltoallw allgather\n"
      "                    allgatherv bcast reduce allreduce gather scatter reduce_scatter_block\n"
      "                    barrier sendrecv cart_alltoall graph_alltoall cart_allgather\n"
      "                    graph_allgather ring_alltoall ring_allgather memcpy memcpy1 yield\n"
      "                    lines, or coll (the thirteen\n"
      "                    collectives) (default, and all: the collectives, memcpy,\n"
      "                    memcpy1, yield and lines); sendrecv is MPI_Sendrecv around a ring\n"
      "                    (point-to-point); yield is sched_yield() on every rank at once, the\n"
      "                    scheduling floor when ranks outnumber cores; lines is every rank\n"
      "                    storing a count on its own cache line of a shared window and\n"
      "                    waiting for every other rank's (spinning, or yielding when ranks\n"
      "                    outnumber cores), the exchange floor; cart_*, graph_* and\n"
      "                    ring_* are MPI_Neighbor_alltoall/allgather on a 2-D periodic grid, on\n"
      "                    a random graph of degree min(4, N-1) and on a 1-D periodic ring (2\n"
      "                    neighbours; at N = 2 the other rank twice), selected by name or as neighbor,\n"
      "                    neighbor_alltoall or neighbor_allgather (not in the default);\n"
      "                    one-sided (rma.c, not in the default): put_fence put_lock put_lockall,\n"
      "                    get_*, acc_* (MPI_Accumulate, MPI_SUM of doubles), fop_*\n"
      "                    (MPI_Fetch_and_op) and cas_* (MPI_Compare_and_swap) with the same three\n"
      "                    synchronizations (fence; lock/unlock per call; lock_all + flush), each\n"
      "                    rank targeting the next on a window from MPI_Win_allocate, the data\n"
      "                    checked after every loop; by name, by kind (put, get, acc, fop, cas:\n"
      "                    the three synchronizations) or all fifteen as rma\n"
      "  --min-size SIZE   smallest block in bytes, e.g. 1, 4K (default 1)\n"
      "  --max-size SIZE   largest block, e.g. 16M (default 16M; 1M with --quick)\n"
      "  --sizes LIST      explicit comma-separated block sizes instead of powers of two\n"
      "  --quick           a few sizes (1, 256, 4K, 64K, 1M), short budget: finishes in seconds\n"
      "  --cold[=on|off|both]  fresh buffer region per call from a pool >> LLC (default off)\n"
      "  --iters N         timed calls per size (default: from --time)\n"
      "  --warmup N        warm-up calls per size (default: ~10%% of the budget, 1..1000)\n"
      "  --time SECONDS    time budget of the timed loop per size (default 0.25; 0.03 --quick)\n"
      "  --min-iters N     (default 5; 3 with --quick)  --max-iters N (default 100000)\n"
      "  --csv FILE        append CSV rows (header written if the file is empty)\n"
      "  --tag STRING      value of the CSV 'tag' column (e.g. a repetition id)\n"
      "  --no-check        skip the one validated call per size\n"
      "  --sync            a barrier before every call, only the calls timed (default: back to back)\n"
      "  --thread-multiple start with MPI_Init_thread(MPI_THREAD_MULTIPLE) (default: MPI_Init); the\n"
      "                    calls still come from one thread: what the thread level costs\n"
      "  --alloc-mem       take the buffers from MPI_Alloc_mem instead of the heap (shmcoll: from\n"
      "                    the shared segment when they fit SHMCOLL_ALLOC_MEM, e.g. 64m)\n"
      "  --own-buffers     hot buffers of each size from a malloc of their own (send and receive\n"
      "                    apart, each as large as the size needs), as a program that allocates per\n"
      "                    message has them: below glibc's 128 KiB mmap threshold that is its private\n"
      "                    heap (shmcoll: not its shared heap). Default: one arena for every size\n"
      "  --mem-limit SIZE  buffer memory per rank; larger sizes are skipped\n"
      "                    (default: half the node's memory divided by the rank count)\n"
      "  --cold-pool SIZE  per-rank pool for --cold (default max(4 x LLC, 128M), within mem-limit)\n"
      "  --membw           memory-bandwidth mode: STREAM copy/triad/memcpy 16K..256M per rank,\n"
      "                    then memcpy and memcpy1 at the collective sizes\n");
}

static void parse_args(int argc, char **argv) {
  Opts *o = &g_opt;
  memset(o, 0, sizeof *o);
  o->ops = 0;
  o->min_size = 1;
  o->max_size = 0;
  o->cold[0] = 0;
  o->ncold = 1;
  o->iters = o->warmup = -1;
  o->budget = -1;
  o->min_iters = -1;
  o->max_iters = 100000;
  o->tag = "";
  o->check = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *eq = strchr(a, '=');
    char key[64];
    size_t klen = eq ? (size_t)(eq - a) : strlen(a);
    if (klen >= sizeof key) die("bad option '%s'", a);
    memcpy(key, a, klen);
    key[klen] = 0;
    const char *val = eq ? eq + 1 : NULL;
#define NEXT() (val ? val : (i + 1 < argc ? argv[++i] : (die("option '%s' needs a value", key), "")))
    if (!strcmp(key, "--help") || !strcmp(key, "-h")) {
      usage();
      MPI_Finalize();
      exit(0);
    } else if (!strcmp(key, "--op") || !strcmp(key, "--ops")) {
      o->ops |= parse_ops(NEXT(), &o->rma_ops);
    } else if (!strcmp(key, "--min-size")) {
      o->min_size = parse_size(NEXT());
    } else if (!strcmp(key, "--max-size")) {
      o->max_size = parse_size(NEXT());
    } else if (!strcmp(key, "--sizes")) {
      char buf[1024];
      snprintf(buf, sizeof buf, "%s", NEXT());
      for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (o->nsizes == 64) die("too many sizes in '%s'", buf);
        o->sizes[o->nsizes++] = parse_size(t);
      }
    } else if (!strcmp(key, "--quick")) {
      o->quick = 1;
    } else if (!strcmp(key, "--cold")) {
      const char *m = val ? val : "on";
      if (!strcmp(m, "on") || !strcmp(m, "1")) { o->cold[0] = 1; o->ncold = 1; }
      else if (!strcmp(m, "off") || !strcmp(m, "0")) { o->cold[0] = 0; o->ncold = 1; }
      else if (!strcmp(m, "both")) { o->cold[0] = 0; o->cold[1] = 1; o->ncold = 2; }
      else die("--cold takes on, off or both, not '%s'", m);
    } else if (!strcmp(key, "--iters")) {
      o->iters = parse_long(NEXT());
      if (o->iters < 1) die("--iters must be at least 1 (%s)", a);
    } else if (!strcmp(key, "--warmup")) {
      o->warmup = parse_long(NEXT());
      if (o->warmup < 0) die("--warmup must be >= 0 (%s)", a);
    } else if (!strcmp(key, "--time")) {
      o->budget = atof(NEXT());
      if (!(o->budget > 0)) die("--time must be positive (%s)", a);
    } else if (!strcmp(key, "--min-iters")) {
      o->min_iters = parse_long(NEXT());
    } else if (!strcmp(key, "--max-iters")) {
      o->max_iters = parse_long(NEXT());
    } else if (!strcmp(key, "--csv")) {
      o->csv = NEXT();
    } else if (!strcmp(key, "--tag")) {
      o->tag = NEXT();
    } else if (!strcmp(key, "--no-check")) {
      o->check = 0;
    } else if (!strcmp(key, "--sync")) {
      o->sync = 1;
    } else if (!strcmp(key, "--thread-multiple")) {
      /* (read before MPI_Init_thread, in main) */
    } else if (!strcmp(key, "--mem-limit")) {
      o->mem_limit = parse_size(NEXT());
    } else if (!strcmp(key, "--cold-pool")) {
      o->cold_pool = parse_size(NEXT());
    } else if (!strcmp(key, "--membw")) {
      o->membw = 1;
    } else if (!strcmp(key, "--alloc-mem")) {
      o->alloc_mem = 1;
    } else if (!strcmp(key, "--own-buffers")) {
      o->own_buffers = 1;
    } else {
      if (g_rank == 0) usage();
      die("unknown option '%s'", a);
    }
#undef NEXT
  }
  if (!o->ops && !o->rma_ops) o->ops = o->membw ? (1u << OP_MEMCPY) | (1u << OP_MEMCPY1) : OPS_DEFAULT;
  if (o->budget < 0) o->budget = o->quick ? 0.03 : 0.25;
  if (o->min_iters < 0) o->min_iters = o->quick ? 3 : 5;
  if (o->min_iters < 1) o->min_iters = 1;
  if (o->max_iters < o->min_iters) o->max_iters = o->min_iters;
  if (!o->max_size) o->max_size = o->quick ? MiB : 16 * MiB;
  if (o->min_size < 1) o->min_size = 1;
  if (o->min_size > o->max_size) die("--min-size is larger than --max-size%s", "");
  if (!o->nsizes) {
    if (o->quick) {
      static const size_t q[] = {1, 256, 4 * KiB, 64 * KiB, MiB};
      for (size_t k = 0; k < sizeof q / sizeof q[0]; k++)
        if (q[k] >= o->min_size && q[k] <= o->max_size) o->sizes[o->nsizes++] = q[k];
    } else {
      for (size_t s = 1; s <= o->max_size && o->nsizes < 64; s <<= 1)
        if (s >= o->min_size) o->sizes[o->nsizes++] = s;
    }
  }
  if (!o->nsizes) die("no block sizes to run%s", "");
  if (!o->mem_limit) {
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    size_t phys = (pages > 0 && psz > 0) ? (size_t)pages * (size_t)psz : (size_t)8 << 30;
    o->mem_limit = phys / 2 / (size_t)g_nranks;
  }
}

/* ---- machine facts -------------------------------------------------------- */
/* Last-level cache from sysfs (sysconf's figure is unreliable under some
 * hypervisors); 32 MiB when unknown. */
static size_t llc_bytes(void) {
  size_t best = 0;
  for (int idx = 0; idx < 8; idx++) {
    char path[128], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
    FILE *f = fopen(path, "r");
    if (!f) break;
    if (fgets(buf, sizeof buf, f)) {
      char *end;
      size_t v = strtoull(buf, &end, 10);
      if (*end == 'K') v <<= 10;
      else if (*end == 'M') v <<= 20;
      if (v > best) best = v;
    }
    fclose(f);
  }
  return best ? best : 32 * MiB;
}

/* ---- gathering per-rank values --------------------------------------------- */
static void gather(double mine) {
  MPI_Allgather(&mine, 1, MPI_DOUBLE, g_times, 1, MPI_DOUBLE, MPI_COMM_WORLD);
}
static double all_max(double mine) {
  gather(mine);
  double m = g_times[0];
  for (int i = 1; i < g_nranks; i++)
    if (g_times[i] > m) m = g_times[i];
  return m;
}

/* ---- buffer layouts ---------------------------------------------------------- */
static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
static size_t region_part(size_t bytes) { return bytes ? align_up(bytes, PAGE) : PAGE; }

/* Bytes that `src` sends to `dst` for an all-to-all with block size s. */
static size_t pair_bytes(int op, int src, int dst, int n, size_t s) {
  if (op == OP_SENDRECV) return dst == (src + 1) % n ? s : 0;
  if (op != OP_ALLTOALLV_SKEW) return s;
  /* Skewed: rank 0 sends rank n-1 as much as a uniform exchange would bring
   * any one rank (n x s); besides that a ring of small messages (s/16 to the
   * next rank), and every other pair exchanges nothing. */
  size_t b = 0;
  if (src == 0 && dst == n - 1) b += (size_t)n * s;
  if (dst == (src + 1) % n) b += s / 16;
  return b;
}

typedef struct {
  int op;
  size_t s;                  /* nominal block size */
  size_t send_bytes, recv_bytes; /* this rank's */
  size_t foot_max;           /* max over ranks of the page-aligned send + recv parts */
  size_t recv_max;           /* largest receive volume of any rank */
  double recv_total;         /* sum over ranks of the receive volumes */
  int fits_int;              /* every count and displacement fits an int */
  int *scounts, *sdispls, *rcounts, *rdispls;
  MPI_Datatype *types;
} Layout;

static void rank_volumes(int op, int r, int n, size_t s, size_t *send, size_t *recv) {
  if (op == OP_GATHER) {
    *send = s;
    *recv = r == 0 ? (size_t)n * s : 0;
  } else if (op == OP_SCATTER) {
    *send = r == 0 ? (size_t)n * s : 0;
    *recv = s;
  } else if (op == OP_REDUCE_SCATTER_BLOCK) {
    *send = (size_t)n * s;
    *recv = s;
  } else if (is_single_op(op)) {
    /* what lands in this rank's buffer: bcast and reduce deliver to one side only */
    int gets = op == OP_ALLREDUCE || (op == OP_BCAST && r != 0) || (op == OP_REDUCE && r == 0) || n == 1;
    *send = s;
    *recv = gets ? s : 0;
  } else if (is_gather_op(op)) {
    *send = s;
    *recv = (size_t)n * s;
  } else if (is_copy_op(op)) {
    *send = *recv = (size_t)n * s;
  } else if (is_sizeless_op(op)) {
    *send = *recv = 0;
  } else if (is_neighbor_op(op)) {
    nb_volumes(nb_topo(op), nb_gather(op), s, send, recv);
  } else {
    size_t sb = 0, rb = 0;
    for (int p = 0; p < n; p++) {
      sb += pair_bytes(op, r, p, n, s);
      rb += pair_bytes(op, p, r, n, s);
    }
    *send = sb;
    *recv = rb;
  }
}

static void layout_init(Layout *L, int op, size_t s) {
  int n = g_nranks, me = g_rank;
  L->op = op;
  L->s = s;
  L->foot_max = 0;
  L->recv_max = 0;
  L->recv_total = 0;
  L->fits_int = s <= (size_t)INT_MAX;
  for (int r = 0; r < n; r++) {
    size_t sb, rb;
    rank_volumes(op, r, n, s, &sb, &rb);
    size_t foot = region_part(sb) + region_part(rb);
    if (foot > L->foot_max) L->foot_max = foot;
    if (rb > L->recv_max) L->recv_max = rb;
    L->recv_total += (double)rb;
    if (sb > (size_t)INT_MAX || rb > (size_t)INT_MAX) L->fits_int = 0;
    if (r == me) {
      L->send_bytes = sb;
      L->recv_bytes = rb;
    }
  }
  if (op == OP_MEMCPY1) L->recv_total = (double)L->recv_max; /* one rank copies */
  if (!L->fits_int || is_single_op(op) || is_neighbor_op(op) || is_rooted_op(op) || is_reduce_op(op) ||
      is_sizeless_op(op))
    return;
  size_t so = 0, ro = 0;
  for (int p = 0; p < n; p++) {
    size_t sc = is_gather_op(op) ? s : pair_bytes(op, me, p, n, s);
    size_t rc = is_gather_op(op) ? s : pair_bytes(op, p, me, n, s);
    L->scounts[p] = (int)sc;
    L->sdispls[p] = (int)so;
    L->rcounts[p] = (int)rc;
    L->rdispls[p] = (int)ro;
    L->types[p] = MPI_BYTE;
    so += is_gather_op(op) ? 0 : sc;
    ro += rc;
  }
}

/* ---- the arena: one region hot, many regions rotated when cold ----------- */
static char *g_arena;
static size_t g_arena_bytes;
static size_t g_cold_ctr;
/* --own-buffers: the hot buffers of the size being measured (else null) */
static char *g_own_s, *g_own_r;

static void *xalloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 2 * MiB, bytes ? bytes : PAGE)) {
    fprintf(stderr, "shmcoll-bench: rank %d: cannot allocate %zu bytes\n", g_rank, bytes);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  return p;
}

/* ---- validation (pattern() and next_off() are in neighbor.h) ------------------- */

/* Reductions: rank r contributes (r + 1) * v(i) at double i, so the sum is
 * n (n + 1) / 2 * v(i), exact in double precision. */
static double red_value(size_t i) { return (double)(i % 1021) + 1.0; }
static size_t red_count(const Layout *L) { return L->s / sizeof(double); }
static int red_gets(const Layout *L) { return L->op != OP_REDUCE || g_rank == 0; }
/* The doubles this rank sends: reduce_scatter_block sends one block per rank. */
static size_t red_send_count(const Layout *L) {
  return L->op == OP_REDUCE_SCATTER_BLOCK ? (size_t)g_nranks * red_count(L) : red_count(L);
}
/* The index, in the senders' vectors, of element i of this rank's result. */
static size_t red_index(const Layout *L, size_t i) {
  return L->op == OP_REDUCE_SCATTER_BLOCK ? (size_t)g_rank * red_count(L) + i : i;
}

static void fill_send(const Layout *L, char *sb) {
  int n = g_nranks, me = g_rank;
  if (L->op == OP_BCAST || is_sizeless_op(L->op)) return; /* bcast: the root's data is put by poison_recv */
  if (L->op == OP_SCATTER) {
    if (me != 0) return;
    for (int p = 0; p < n; p++)
      for (size_t o = 0; o < L->s; o = next_off(o, L->s)) sb[(size_t)p * L->s + o] = (char)pattern(0, p, o);
    return;
  }
  if (is_neighbor_op(L->op)) {
    nb_fill(nb_topo(L->op), nb_gather(L->op), L->s, sb);
    return;
  }
  if (is_reduce_op(L->op)) {
    double *d = (double *)sb;
    for (size_t i = 0; i < red_send_count(L); i++) d[i] = (me + 1) * red_value(i);
    return;
  }
  if (is_gather_op(L->op) || L->op == OP_GATHER) {
    for (size_t o = 0; o < L->s; o = next_off(o, L->s)) sb[o] = (char)pattern(me, 0, o);
    return;
  }
  for (int p = 0; p < n; p++)
    for (size_t o = 0; o < (size_t)L->scounts[p]; o = next_off(o, (size_t)L->scounts[p]))
      sb[(size_t)L->sdispls[p] + o] = (char)pattern(me, p, o);
}

/* Writes the complement of the expected byte at every checked offset, so a
 * byte the collective fails to deliver cannot pass by chance. */
static void poison_recv(const Layout *L, char *rb) {
  if (is_neighbor_op(L->op)) {
    nb_poison(nb_topo(L->op), nb_gather(L->op), L->s, rb);
    return;
  }
  if (L->op == OP_BCAST) {
    for (size_t o = 0; o < L->s; o = next_off(o, L->s))
      rb[o] = (char)(g_rank == 0 ? pattern(0, 0, o) : ~pattern(0, 0, o));
    return;
  }
  if (is_reduce_op(L->op)) {
    double *d = (double *)rb;
    for (size_t i = 0; i < red_count(L); i++) d[i] = -1.0;
    return;
  }
  if (is_sizeless_op(L->op)) return;
  if (L->op == OP_SCATTER) {
    for (size_t o = 0; o < L->s; o = next_off(o, L->s)) rb[o] = (char)~pattern(0, g_rank, o);
    return;
  }
  if (L->op == OP_GATHER) {
    if (g_rank != 0) return;
    for (int p = 0; p < g_nranks; p++)
      for (size_t o = 0; o < L->s; o = next_off(o, L->s)) rb[(size_t)p * L->s + o] = (char)~pattern(p, 0, o);
    return;
  }
  for (int p = 0; p < g_nranks; p++) {
    size_t len = (size_t)L->rcounts[p];
    char *blk = rb + L->rdispls[p];
    for (size_t o = 0; o < len; o = next_off(o, len))
      blk[o] = (char)~pattern(p, is_gather_op(L->op) ? 0 : g_rank, o);
  }
}

/* Returns the number of wrong bytes at the checked offsets. */
static long check_recv(const Layout *L, const char *rb) {
  long bad = 0;
  if (is_neighbor_op(L->op)) return nb_check(nb_topo(L->op), nb_gather(L->op), L->s, kOpNames[L->op], rb);
  if (L->op == OP_BCAST) {
    for (size_t o = 0; o < L->s; o = next_off(o, L->s)) {
      unsigned char want = pattern(0, 0, o);
      if ((unsigned char)rb[o] != want && bad++ < 3)
        fprintf(stderr, "shmcoll-bench: bcast %zu B: rank %d got 0x%02x, want 0x%02x at offset %zu\n", L->s, g_rank,
                (unsigned char)rb[o], want, o);
    }
    return bad;
  }
  if (is_reduce_op(L->op)) {
    if (!red_gets(L)) return 0;
    const double *d = (const double *)rb;
    const double ranks = (double)g_nranks * (g_nranks + 1) / 2;
    for (size_t i = 0; i < red_count(L); i++) {
      double want = ranks * red_value(red_index(L, i));
      if (d[i] != want && bad++ < 3)
        fprintf(stderr, "shmcoll-bench: %s %zu B: rank %d got %g, want %g at element %zu\n", kOpNames[L->op], L->s,
                g_rank, d[i], want, i);
    }
    return bad;
  }
  if (is_sizeless_op(L->op)) return 0;
  if (is_rooted_op(L->op)) {
    if (L->op == OP_GATHER && g_rank != 0) return 0;
    int blocks = L->op == OP_GATHER ? g_nranks : 1;
    for (int p = 0; p < blocks; p++)
      for (size_t o = 0; o < L->s; o = next_off(o, L->s)) {
        unsigned char want = L->op == OP_GATHER ? pattern(p, 0, o) : pattern(0, g_rank, o);
        unsigned char got = (unsigned char)rb[(size_t)p * L->s + o];
        if (got != want && bad++ < 3)
          fprintf(stderr, "shmcoll-bench: %s %zu B: rank %d got 0x%02x, want 0x%02x in block %d offset %zu\n",
                  kOpNames[L->op], L->s, g_rank, got, want, p, o);
      }
    return bad;
  }
  for (int p = 0; p < g_nranks; p++) {
    size_t len = (size_t)L->rcounts[p];
    const char *blk = rb + L->rdispls[p];
    for (size_t o = 0; o < len; o = next_off(o, len)) {
      unsigned char want = pattern(p, is_gather_op(L->op) ? 0 : g_rank, o);
      if ((unsigned char)blk[o] == want) continue;
      if (bad++ < 3)
        fprintf(stderr, "shmcoll-bench: %s %zu B: rank %d got 0x%02x, want 0x%02x, from rank %d offset %zu\n",
                kOpNames[L->op], L->s, g_rank, (unsigned char)blk[o], want, p, o);
    }
  }
  return bad;
}

/* ---- running one call ------------------------------------------------------------ */
/* op=lines: each rank's line in a shared window (lines_init), the calls so far. */
static MPI_Win g_lines_win = MPI_WIN_NULL;
static volatile uint64_t **g_lines;
static uint64_t g_lines_count;
static int g_lines_yield;

static void lines_init(void) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nn, me;
  MPI_Comm_size(node, &nn);
  MPI_Comm_rank(node, &me);
  if (nn != g_nranks || me != g_rank) die("op=lines needs every rank on one node%s", "");
  char *mine = NULL;
  /* 128 bytes each: the 64-byte-aligned line inside is this rank's alone */
  if (MPI_Win_allocate_shared(128, 1, MPI_INFO_NULL, node, &mine, &g_lines_win) != MPI_SUCCESS)
    die("MPI_Win_allocate_shared failed%s", "");
  memset(mine, 0, 128);
  g_lines = malloc(sizeof *g_lines * (size_t)g_nranks);
  for (int p = 0; p < g_nranks; p++) {
    MPI_Aint size;
    int unit;
    char *base;
    MPI_Win_shared_query(g_lines_win, p, &size, &unit, &base);
    g_lines[p] = (volatile uint64_t *)(((uintptr_t)base + 63) & ~(uintptr_t)63);
  }
  MPI_Win_lock_all(MPI_MODE_NOCHECK, g_lines_win);
  MPI_Win_sync(g_lines_win);
  MPI_Barrier(node);
  MPI_Comm_free(&node);
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  g_lines_yield = cores > 0 && g_nranks > cores;
}

static void lines_free(void) {
  if (g_lines_win == MPI_WIN_NULL) return;
  MPI_Win_unlock_all(g_lines_win);
  MPI_Win_free(&g_lines_win);
  free((void *)g_lines);
}

static void lines_exchange(void) {
  const uint64_t c = ++g_lines_count;
  __atomic_store_n(g_lines[g_rank], c, __ATOMIC_RELEASE);
  for (int p = 0; p < g_nranks; p++) {
    if (p == g_rank) continue;
    while (__atomic_load_n(g_lines[p], __ATOMIC_ACQUIRE) < c) {
      if (g_lines_yield)
        sched_yield();
      else
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#else
        ;
#endif
    }
  }
}

static inline void run_op(const Layout *L, char *sb, char *rb) {
  MPI_Comm w = MPI_COMM_WORLD;
  int s = (int)L->s;
  switch (L->op) {
    case OP_ALLTOALL:
      MPI_Alltoall(sb, s, MPI_BYTE, rb, s, MPI_BYTE, w);
      break;
    case OP_ALLTOALLV:
    case OP_ALLTOALLV_SKEW:
      MPI_Alltoallv(sb, L->scounts, L->sdispls, MPI_BYTE, rb, L->rcounts, L->rdispls, MPI_BYTE, w);
      break;
    case OP_ALLTOALLW:
      MPI_Alltoallw(sb, L->scounts, L->sdispls, L->types, rb, L->rcounts, L->rdispls, L->types, w);
      break;
    case OP_ALLGATHER:
      MPI_Allgather(sb, s, MPI_BYTE, rb, s, MPI_BYTE, w);
      break;
    case OP_ALLGATHERV:
      MPI_Allgatherv(sb, s, MPI_BYTE, rb, L->rcounts, L->rdispls, MPI_BYTE, w);
      break;
    case OP_BCAST:
      MPI_Bcast(rb, s, MPI_BYTE, 0, w);
      break;
    case OP_REDUCE:
      MPI_Reduce(sb, rb, (int)red_count(L), MPI_DOUBLE, MPI_SUM, 0, w);
      break;
    case OP_ALLREDUCE:
      MPI_Allreduce(sb, rb, (int)red_count(L), MPI_DOUBLE, MPI_SUM, w);
      break;
    case OP_GATHER:
      MPI_Gather(sb, s, MPI_BYTE, rb, s, MPI_BYTE, 0, w);
      break;
    case OP_SCATTER:
      MPI_Scatter(sb, s, MPI_BYTE, rb, s, MPI_BYTE, 0, w);
      break;
    case OP_REDUCE_SCATTER_BLOCK:
      MPI_Reduce_scatter_block(sb, rb, (int)red_count(L), MPI_DOUBLE, MPI_SUM, w);
      break;
    case OP_BARRIER:
      MPI_Barrier(w);
      break;
    case OP_SENDRECV: {
      int next = (g_rank + 1) % g_nranks, prev = (g_rank + g_nranks - 1) % g_nranks;
      MPI_Sendrecv(sb + L->sdispls[next], s, MPI_BYTE, next, 0, rb + L->rdispls[prev], s, MPI_BYTE, prev, 0, w,
                   MPI_STATUS_IGNORE);
      break;
    }
    case OP_CART_ALLTOALL:
    case OP_GRAPH_ALLTOALL:
    case OP_CART_ALLGATHER:
    case OP_GRAPH_ALLGATHER:
    case OP_RING_ALLTOALL:
    case OP_RING_ALLGATHER:
      nb_run(nb_topo(L->op), nb_gather(L->op), s, sb, rb);
      break;
    case OP_MEMCPY:
      memcpy(rb, sb, L->recv_bytes);
      break;
    case OP_MEMCPY1:
      if (g_rank == 0) memcpy(rb, sb, L->recv_bytes);
      break;
    case OP_YIELD:
      sched_yield();
      break;
    case OP_LINES:
      lines_exchange();
      break;
  }
  __asm__ __volatile__("" ::: "memory"); /* the copies are not dead stores */
}

typedef struct {
  size_t stride, nregions, send_part;
} Regions;

static inline void region(const Regions *R, int cold, char **sb, char **rb) {
  if (g_own_s) { /* (set for hot buffers only) */
    *sb = g_own_s;
    *rb = g_own_r;
    return;
  }
  size_t k = cold ? (g_cold_ctr++ % R->nregions) : 0;
  *sb = g_arena + k * R->stride;
  *rb = *sb + R->send_part;
}

/* The node's monotonic clock: one clock for all ranks on one node, which
 * MPI_Wtime does not promise. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
  double per_call; /* this rank's own time per call */
  double span;     /* copy ops: first start to last end over all ranks, per call */
} Timing;

/* A start time on the node clock that every rank reaches asleep, so the copy
 * loops start together even where a library's barrier releases ranks
 * milliseconds apart (a spinning library with more ranks than cores). */
static double common_start(void) {
  double entry = now();
  double latest = all_max(entry);
  double slowest = all_max(now() - entry); /* the longest gather any rank saw */
  double start = latest + 3 * slowest + 1e-3;
  struct timespec ts = {.tv_sec = (time_t)start, .tv_nsec = (long)((start - (double)(time_t)start) * 1e9)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
  }
  return start;
}

/* Runs `count` calls and returns the times.  The collectives synchronise, so
 * they start after a barrier and each rank's own time is the measure.  The
 * copy operations do not: they start together at a common time, and their
 * measure is the span until the last rank has finished, which is what bounds
 * a collective when ranks outnumber cores (one rank's loop can otherwise run
 * while the others wait their turn). */
static Timing timed_loop(const Layout *L, const Regions *R, int cold, long count) {
  char *sb, *rb;
  double start = 0;
  if (is_local_op(L->op)) start = common_start();
  else MPI_Barrier(MPI_COMM_WORLD);
  if (g_opt.sync && !is_local_op(L->op)) {
    double sum = 0;
    for (long i = 0; i < count; i++) {
      region(R, cold, &sb, &rb);
      MPI_Barrier(MPI_COMM_WORLD);
      double c0 = now();
      run_op(L, sb, rb);
      sum += now() - c0;
    }
    return (Timing){.per_call = sum / (double)count, .span = 0};
  }
  double t0 = now();
  for (long i = 0; i < count; i++) {
    region(R, cold, &sb, &rb);
    run_op(L, sb, rb);
  }
  double t1 = now();
  Timing t = {.per_call = (t1 - t0) / (double)count, .span = 0};
  if (L->op == OP_MEMCPY) t.span = (all_max(t1) - start) / (double)count;
  return t;
}

/* What sizes the warm-up and timed loops: the slowest rank's time per call;
 * for the concurrent copy, times the ranks per core, as that many ranks take
 * turns on a core (the span of a short loop is mostly start-up noise). */
static double estimate(const Layout *L, Timing t) {
  double est = all_max(t.per_call);
  if (L->op == OP_MEMCPY) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus > 0 && g_nranks > cpus) est *= (double)g_nranks / (double)cpus;
  }
  return est;
}

static FILE *g_csv;
static int g_failures;

static void csv_row(const char *op, size_t bytes, double recv_bytes, long iters, double avg, double mn, double mx,
                    double bw, double agg, int cold) {
  if (!g_csv) return;
  fprintf(g_csv, "%s,%s,%s,%d,%zu,%.0f,%ld,%.3f,%.3f,%.3f,%.1f,%.1f,%d,%s\n", IMPL_NAME, IMPL_VERSION, op, g_nranks,
          bytes, recv_bytes, iters, avg * 1e6, mn * 1e6, mx * 1e6, bw / 1e6, agg / 1e6, cold, g_opt.tag);
  fflush(g_csv);
}

static void report(const char *name, size_t s, double recv_max, double recv_total, long iters, double avg, double mn,
                   double mx, int cold) {
  double bw = avg > 0 ? recv_max / avg : 0, agg = avg > 0 ? recv_total / avg : 0;
  if (g_rank) return;
  printf("%-20s %10zu %8ld %11.2f %11.2f %11.2f %12.1f %12.1f %5s\n", name, s, iters, avg * 1e6, mn * 1e6, mx * 1e6,
         bw / 1e6, agg / 1e6, cold ? "cold" : "hot");
  fflush(stdout);
  csv_row(name, s, recv_max, iters, avg, mn, mx, bw, agg, cold);
}

/* ---- the interface of rma.c (rma.h) ------------------------------------------------ */
double bench_all_max(double mine) { return all_max(mine); }
int bench_sync(void) { return g_opt.sync; }
size_t bench_mem_limit(void) { return g_opt.mem_limit; }

void bench_report(const char *op, size_t bytes, double recv_max, double recv_total, long iters, double mine) {
  gather(mine);
  double mn = g_times[0], mx = g_times[0], sum = 0;
  for (int r = 0; r < g_nranks; r++) {
    if (g_times[r] < mn) mn = g_times[r];
    if (g_times[r] > mx) mx = g_times[r];
    sum += g_times[r];
  }
  report(op, bytes, recv_max, recv_total, iters, sum / g_nranks, mn, mx, 0);
}

/* Steps 2 and 3 of the method: one timed call sizes the warm-up, whose slowest
 * rank's time per call sizes the timed loop. */
long bench_plan(double (*measure)(void *ctx, long count), void *ctx) {
  double est = measure(ctx, 1);
  long warm = g_opt.warmup, iters = g_opt.iters;
  const double tiny = 1e-9;
  if (warm < 0) {
    double w = 0.1 * g_opt.budget / (est > tiny ? est : tiny);
    warm = est >= g_opt.budget ? 0 : w < 1 ? 1 : w > 1000 ? 1000 : (long)w;
  }
  if (warm > 0) est = measure(ctx, warm);
  if (iters < 0) {
    double it = g_opt.budget / (est > tiny ? est : tiny);
    iters = it < g_opt.min_iters ? g_opt.min_iters : it > g_opt.max_iters ? g_opt.max_iters : (long)it;
    /* a call slower than the whole budget (an oversubscribed library that
     * spins): keep the run bounded at about four budgets */
    if (est * (double)iters > 4 * g_opt.budget && iters > 1) {
      long cap = (long)(4 * g_opt.budget / est);
      iters = cap < 1 ? 1 : cap;
    }
  }
  return iters;
}

typedef struct {
  const Layout *L;
  const Regions *R;
  int cold;
} Measured;

static double measure_op(void *ctx, long count) {
  const Measured *m = ctx;
  return estimate(m->L, timed_loop(m->L, m->R, m->cold, count));
}

static void bench_one(int op, size_t s, int cold) {
  int n = g_nranks;
  Layout L = {0};
  L.scounts = malloc(sizeof(int) * 4 * (size_t)n);
  L.sdispls = L.scounts + n;
  L.rcounts = L.scounts + 2 * n;
  L.rdispls = L.scounts + 3 * n;
  L.types = malloc(sizeof(MPI_Datatype) * (size_t)n);
  layout_init(&L, op, s);

  const char *why = NULL;
  if (!L.fits_int) why = "counts overflow int";
  else if (is_reduce_op(op) && s < sizeof(double)) why = "smaller than one MPI_DOUBLE";
  else if (L.foot_max > g_arena_bytes || L.foot_max > g_opt.mem_limit) why = "over --mem-limit";
  if (why) {
    if (g_rank == 0) {
      if (L.foot_max > g_opt.mem_limit)
        printf("%-20s %10zu  skipped: %s (needs %.0f MiB per rank)\n", kOpNames[op], s, why,
               (double)L.foot_max / MiB);
      else
        printf("%-20s %10zu  skipped: %s\n", kOpNames[op], s, why);
    }
    goto out;
  }

  Regions R = {.stride = L.foot_max, .send_part = region_part(L.send_bytes)};
  R.nregions = cold ? g_arena_bytes / R.stride : 1;
  if (R.nregions < 1) R.nregions = 1;
  if (g_opt.own_buffers && !cold) { /* plain malloc, as a program would; touched before any timing */
    /* (each as large as the larger volume: a bcast root sends from its receive buffer) */
    size_t own = L.send_bytes > L.recv_bytes ? L.send_bytes : L.recv_bytes;
    if (!own) own = 1;
    g_own_s = malloc(own);
    g_own_r = malloc(own);
    if (!g_own_s || !g_own_r) die("cannot allocate the buffers of %s", kOpNames[op]);
    memset(g_own_s, 0, own);
    memset(g_own_r, 0, own);
  }

  /* 1. one validated call on region 0 */
  if (g_opt.check && !is_local_op(op)) {
    char *sb = g_arena, *rb = g_arena + R.send_part;
    if (g_own_s) sb = g_own_s, rb = g_own_r;
    fill_send(&L, sb);
    poison_recv(&L, rb);
    run_op(&L, sb, rb);
    if (all_max((double)check_recv(&L, rb)) > 0) {
      g_failures++;
      if (g_rank == 0) printf("%-20s %10zu  VALIDATION FAILED (wrong bytes received)\n", kOpNames[op], s);
    }
  }

  /* 2. and 3. one timed call sizes the warm-up, the warm-up the timed loop */
  Measured m = {&L, &R, cold};
  long iters = bench_plan(measure_op, &m);
  /* 4. the measurement */
  Timing t = timed_loop(&L, &R, cold, iters);
  double mine = t.per_call;
  gather(mine);
  double mn = g_times[0], mx = g_times[0], sum = 0;
  for (int r = 0; r < n; r++) {
    if (g_times[r] < mn) mn = g_times[r];
    if (g_times[r] > mx) mx = g_times[r];
    sum += g_times[r];
  }
  double avg = sum / n;
  if (op == OP_MEMCPY) avg = t.span;
  if (op == OP_MEMCPY1) avg = mn = mx = g_times[0];
  report(kOpNames[op], s, (double)L.recv_max, L.recv_total, iters, avg, mn, mx, cold);
out:
  free(g_own_s);
  free(g_own_r);
  g_own_s = g_own_r = NULL;
  free(L.scounts);
  free(L.types);
}

/* ---- memory-bandwidth mode -------------------------------------------------------- */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_LIBCALL __attribute__((noinline, optimize("no-tree-loop-distribute-patterns")))
#else
#define NO_LIBCALL __attribute__((noinline))
#endif
NO_LIBCALL static void k_copy(double *restrict c, const double *restrict a, size_t n) {
  for (size_t i = 0; i < n; i++) c[i] = a[i];
}
NO_LIBCALL static void k_triad(double *restrict a, const double *restrict b, const double *restrict c, double q,
                               size_t n) {
  for (size_t i = 0; i < n; i++) a[i] = b[i] + q * c[i];
}

enum { K_COPY, K_TRIAD, K_MEMCPY, K_COUNT };
static const char *const kKernelNames[K_COUNT] = {"stream_copy", "stream_triad", "stream_memcpy"};
static const int kKernelTraffic[K_COUNT] = {2, 3, 2}; /* arrays read + written per call */

static void run_kernel(int k, double *a, double *b, double *c, size_t n, long reps) {
  for (long i = 0; i < reps; i++) {
    switch (k) {
      case K_COPY: k_copy(c, a, n); break;
      case K_TRIAD: k_triad(a, b, c, 3.0, n); break;
      case K_MEMCPY: memcpy(c, a, n * sizeof(double)); break;
    }
    __asm__ __volatile__("" ::: "memory");
  }
}

static void membw(void) {
  const size_t lo = 16 * KiB, hi = 256 * MiB;
  size_t sizes[16];
  int ns = 0;
  if (g_opt.quick) {
    static const size_t q[] = {16 * KiB, 256 * KiB, 4 * MiB, 64 * MiB};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) sizes[ns++] = q[i];
  } else {
    for (size_t s = lo; s <= hi; s <<= 2) sizes[ns++] = s;
  }
  size_t top = 0;
  for (int i = 0; i < ns; i++)
    if (3 * sizes[i] <= g_opt.mem_limit && sizes[i] > top) top = sizes[i];
  double *a = xalloc(top), *b = xalloc(top), *c = xalloc(top);
  for (size_t i = 0; i < top / sizeof(double); i++) a[i] = 1.0, b[i] = 2.0, c[i] = 0.5;
  const int reps = g_opt.quick ? 4 : 8;
  const double rep_time = g_opt.quick ? 0.002 : 0.01;
  if (g_rank == 0) {
    printf("# membw: %d ranks at once, per-rank arrays; GB/s counts bytes read + written (STREAM convention)\n",
           g_nranks);
    printf("# %-14s %12s %8s %10s %10s %10s %12s\n", "kernel", "bytes/array", "calls", "GB/s/rank", "min", "max",
           "aggregate");
  }
  for (int si = 0; si < ns; si++) {
    size_t bytes = sizes[si], n = bytes / sizeof(double);
    if (bytes > top) {
      if (g_rank == 0) printf("  %-14s %12zu  skipped: over --mem-limit\n", "*", bytes);
      continue;
    }
    for (int k = 0; k < K_COUNT; k++) {
      /* calls per repetition so that one repetition lasts about rep_time */
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      run_kernel(k, a, b, c, n, 1);
      double est = all_max(MPI_Wtime() - t0);
      double want = rep_time / (est > 1e-9 ? est : 1e-9);
      long inner = want < 1 ? 1 : want > 1e6 ? 1000000 : (long)want;
      double best = 1e30, best_agg = 0;
      for (int r = 0; r < reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        run_kernel(k, a, b, c, n, inner);
        double t = (MPI_Wtime() - t0) / (double)inner;
        if (t < best) best = t;
        double slowest = all_max(t); /* all ranks moved their bytes within this */
        double agg = (double)g_nranks * kKernelTraffic[k] * (double)bytes / slowest;
        if (agg > best_agg) best_agg = agg;
      }
      gather(best);
      double sum = 0, mn = 1e30, mx = 0;
      for (int r = 0; r < g_nranks; r++) {
        double bw = kKernelTraffic[k] * (double)bytes / g_times[r];
        sum += bw;
        if (bw < mn) mn = bw;
        if (bw > mx) mx = bw;
      }
      double avg_bw = sum / g_nranks;
      if (g_rank == 0) {
        printf("  %-14s %12zu %8ld %10.2f %10.2f %10.2f %12.2f\n", kKernelNames[k], bytes, inner * reps,
               avg_bw / 1e9, mn / 1e9, mx / 1e9, best_agg / 1e9);
        fflush(stdout);
        double tavg = kKernelTraffic[k] * (double)bytes / avg_bw;
        csv_row(kKernelNames[k], bytes, (double)kKernelTraffic[k] * (double)bytes, inner * reps, tavg,
                kKernelTraffic[k] * (double)bytes / mx, kKernelTraffic[k] * (double)bytes / mn, avg_bw, best_agg, 0);
      }
    }
  }
  free(a);
  free(b);
  free(c);
}

/* ---- main ------------------------------------------------------------------------- */
int main(int argc, char **argv) {
  int want = MPI_THREAD_SINGLE, provided = MPI_THREAD_SINGLE;
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "--thread-multiple")) want = MPI_THREAD_MULTIPLE;
  if (want == MPI_THREAD_SINGLE) {
    MPI_Init(&argc, &argv);
  } else {
    MPI_Init_thread(&argc, &argv, want, &provided);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  if (want != MPI_THREAD_SINGLE && provided < want) die("MPI_Init_thread did not provide MPI_THREAD_MULTIPLE%s", "");
  MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
  g_times = calloc((size_t)g_nranks, sizeof(double));
  parse_args(argc, argv);
  if (g_opt.ops & OPS_NEIGHBOR) nb_setup(); /* the topologies, before any layout needs their degrees */

  if (g_rank == 0 && g_opt.csv) {
    g_csv = fopen(g_opt.csv, "a");
    if (!g_csv) die("cannot open CSV file '%s'", g_opt.csv);
    fseek(g_csv, 0, SEEK_END);
    if (ftell(g_csv) == 0)
      fprintf(g_csv, "impl,version,op,ranks,bytes,recv_bytes,iters,avg_us,min_us,max_us,bw_MBps,agg_MBps,cold,tag\n");
  }

  /* The arena: the largest footprint of any (op, size) that fits, and when
   * cold a pool several times the LLC, within the per-rank memory limit. */
  size_t need = PAGE;
  for (int op = 0; op < OP_COUNT; op++) {
    if (!(g_opt.ops & (1u << op))) continue;
    for (int i = 0; i < g_opt.nsizes; i++) {
      Layout L = {0};
      int *tmp = malloc(sizeof(int) * 4 * (size_t)g_nranks);
      L.scounts = tmp, L.sdispls = tmp + g_nranks, L.rcounts = tmp + 2 * g_nranks, L.rdispls = tmp + 3 * g_nranks;
      L.types = malloc(sizeof(MPI_Datatype) * (size_t)g_nranks);
      layout_init(&L, op, g_opt.sizes[i]);
      if (L.fits_int && L.foot_max <= g_opt.mem_limit && L.foot_max > need) need = L.foot_max;
      free(tmp);
      free(L.types);
    }
  }
  int any_cold = g_opt.cold[0] || (g_opt.ncold > 1 && g_opt.cold[1]);
  size_t llc = llc_bytes();
  if (any_cold) {
    size_t pool = g_opt.cold_pool ? g_opt.cold_pool : (4 * llc > 128 * MiB ? 4 * llc : 128 * MiB);
    if (pool > g_opt.mem_limit) pool = g_opt.mem_limit;
    if (pool > need) need = pool;
  }
  g_arena_bytes = need;

  if (g_rank == 0) {
    printf("# shmcoll-bench: impl=%s %s, ranks=%d, budget=%.3f s/size, LLC=%zu MiB, mem-limit=%zu MiB/rank\n",
           IMPL_NAME, IMPL_VERSION, g_nranks, g_opt.budget, llc / MiB, g_opt.mem_limit / MiB);
    if (any_cold) printf("#   cold pool %zu MiB per rank\n", g_arena_bytes / MiB);
    printf("#   method: %s\n", g_opt.sync ? "a barrier before every call, only the calls timed (--sync)" : "back to back");
    int level = MPI_THREAD_SINGLE;
    MPI_Query_thread(&level);
    printf("#   thread level: %s\n", level == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "below MPI_THREAD_MULTIPLE");
    fflush(stdout);
  }
  if (g_opt.ops & OPS_NEIGHBOR) nb_print();
  if (g_opt.ops & (1u << OP_LINES)) lines_init();

  if (g_opt.membw) membw();

  if (g_opt.alloc_mem) {
    if (MPI_Alloc_mem((MPI_Aint)g_arena_bytes, MPI_INFO_NULL, &g_arena) != MPI_SUCCESS)
      die("MPI_Alloc_mem of the buffers failed%s", "");
    if (g_rank == 0) printf("#   buffers from MPI_Alloc_mem (%zu MiB per rank)\n", g_arena_bytes / MiB);
  } else {
    g_arena = xalloc(g_arena_bytes);
  }
  memset(g_arena, 0, g_arena_bytes); /* first touch now, not in a timed loop */
  MPI_Barrier(MPI_COMM_WORLD);

  if (g_rank == 0) {
    printf("# bw: payload bytes of the busiest receiver / avg time; agg: all ranks' received bytes / avg time\n");
    printf("# %-18s %10s %8s %11s %11s %11s %12s %12s %5s\n", "op", "bytes", "iters", "avg_us", "min_us", "max_us",
           "MB/s/rank", "MB/s agg", "cache");
    fflush(stdout);
  }
  for (int op = 0; op < OP_COUNT; op++) {
    if (!(g_opt.ops & (1u << op))) continue;
    if (is_sizeless_op(op)) { /* no buffers, no sizes: once */
      bench_one(op, 0, 0);
      continue;
    }
    for (int c = 0; c < g_opt.ncold; c++)
      for (int i = 0; i < g_opt.nsizes; i++) bench_one(op, g_opt.sizes[i], g_opt.cold[c]);
  }
  for (int op = 0; op < RMA_NOPS; op++) { /* one-sided (rma.c): hot buffers only */
    if (!(g_opt.rma_ops & (1u << op))) continue;
    if (rma_single(op)) {
      g_failures += rma_bench(op, 8);
      continue;
    }
    for (int i = 0; i < g_opt.nsizes; i++) g_failures += rma_bench(op, g_opt.sizes[i]);
  }

  if (g_csv) fclose(g_csv);
  if (g_opt.alloc_mem)
    MPI_Free_mem(g_arena);
  else
    free(g_arena);
  free(g_times);
  if (g_opt.ops & OPS_NEIGHBOR) nb_free();
  lines_free();
  MPI_Finalize();
  if (g_failures && g_rank == 0) fprintf(stderr, "shmcoll-bench: %d validation failure(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
