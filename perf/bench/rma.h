/*
 * shmcoll-bench's one-sided mode (rma.c): MPI_Put, MPI_Get, MPI_Accumulate,
 * MPI_Fetch_and_op and MPI_Compare_and_swap on a window from
 * MPI_Win_allocate, each under three synchronizations:
 *   fence    every call followed by MPI_Win_fence (collective);
 *   lock     MPI_Win_lock, the call, MPI_Win_unlock per call (exclusive for
 *            put, shared for the others);
 *   lockall  one MPI_Win_lock_all around the loop, MPI_Win_flush per call;
 *   copy     put and get only, no MPI call: the same loop with memcpy between
 *            this rank's own window and its buffers, the same bytes and the
 *            same memory touched; the bound its put or get is measured
 *            against (a get alternates two halves, so it touches four times
 *            its size per rank, where op=memcpy at half its size touches two).
 * Every rank targets the next rank (a ring: rank r writes to and reads from
 * r + 1 mod N, and rank r + 1 mod N is targeted by r alone), so the final
 * contents of every window are known exactly and are checked after every
 * loop, the measured one included.
 *
 * Op names: <kind>_<sync> with kind put, get, acc, fop, cas and sync fence,
 * lock, lockall, and put_copy and get_copy; groups: rma (all seventeen), and
 * put, get, acc, fop, cas (one kind: its syncs).  None is in the default.
 */
#ifndef SHMCOLL_BENCH_RMA_H
#define SHMCOLL_BENCH_RMA_H

#include <stddef.h>

enum { RMA_PUT, RMA_GET, RMA_ACC, RMA_FOP, RMA_CAS, RMA_NKIND };
enum { RMA_FENCE, RMA_LOCK, RMA_LOCKALL, RMA_COPY, RMA_NSYNC };
#define RMA_NOPS (RMA_NKIND * RMA_NSYNC) /* op = kind * RMA_NSYNC + sync */

/* "put_fence" ... */
const char *rma_name(int op);
/* Adds the ops a --op token names to *mask; 0 if it names none.  Masks hold
 * only ops that exist (no acc_copy, fop_copy, cas_copy). */
int rma_parse(const char *token, unsigned *mask);
/* fetch_and_op and compare_and_swap move one element: run once, as bytes 8. */
int rma_single(int op);
/* Measures one op at block size s (bytes per call) and reports it; collective
 * over MPI_COMM_WORLD.  Returns the number of validation failures (0 or 1). */
int rma_bench(int op, size_t s);

/* ---- from shmcoll_bench.c ------------------------------------------------- */
/* The slowest rank's value (collective). */
double bench_all_max(double mine);
/* The timed-loop count from the warm-up: `measure(ctx, count)` runs count
 * calls and returns the slowest rank's time per call (collective); runs the
 * sizing call and the warm-up as shmcoll-bench does for every op. */
long bench_plan(double (*measure)(void *ctx, long count), void *ctx);
/* Gathers every rank's time per call and prints the row (stdout, CSV). */
void bench_report(const char *op, size_t bytes, double recv_max, double recv_total, long iters, double mine);
/* --sync: a barrier before every call, only the calls timed. */
int bench_sync(void);
/* --mem-limit: buffer bytes per rank. */
size_t bench_mem_limit(void);

#endif
