#!/usr/bin/env python3
"""Summarise shmcoll-bench CSV rows from several implementations and runs.

usage: summarize.py RAW_CSV OUT_DIR [--impl-order shmcoll,openmpi,mpich,openmpi+shmcoll,mpich+shmcoll]

For every (ranks, op, block size, cache mode) it takes the median over runs
of each implementation's time per call of its slowest rank (max_us; avg_us
for the memory kernels and op=yield, whose rows give one figure for all
ranks) and the bandwidth at that time, prints them side by side with
the ratio shmcoll / best-of-the-others (below 1: shmcoll is faster), for a
host with shmcoll's accelerator preloaded ("openmpi+shmcoll", "mpich+shmcoll",
perf/compare.sh) the ratio to the same host alone (columns ompi+shm/ompi and
mpich+shm/mpich; the accelerated hosts are not among the "others"), and then
each collective's largest-message bandwidth as a share of the memcpy bound,
and the smallest blocks' latency against the scheduling floor (op=yield) and
the exchange floor (op=lines).

The memcpy bound at (ranks, size, cache mode) is the best of the medians of
op=memcpy measured by the implementations' runs in this same comparison: the
copy does not involve the library, and the best is the run least disturbed by
other ranks waiting in the library (a library that spins while waiting steals
cores from the copying ranks when ranks outnumber cores).

The rooted and reducing collectives and the barrier, then the
neighbourhood collectives (cart_*, graph_* and ring_*, shmcoll-bench --op
neighbor), then the one-sided ops (put_fence .. cas_lockall, --op rma), are
listed after the exchanges, without a memcpy bound: op=memcpy copies N
blocks per rank, these calls move one block per rank or neighbour.  Except
the ring at 2 ranks: there every rank receives 2 blocks, the memcpy volume;
and put and get, whose bound is their own loop done by memcpy within each
rank (put_copy, get_copy, rma.c), in the same runs.

The spread over runs: column `shm runs` gives the fastest and slowest of
shmcoll's runs at each point, and the summary ends with the points where
they differ by more than 2x.

Writes OUT_DIR/medians.csv (one row per ranks, op, bytes, cold, impl; read by
perf/plot.gp) and OUT_DIR/summary.csv (one row per ranks, op, bytes, cold).
Standard library only.
"""
import csv
import os
import statistics
import sys
from collections import defaultdict

NEIGHBOR_OPS = ["cart_alltoall", "graph_alltoall", "cart_allgather", "graph_allgather", "ring_alltoall",
                "ring_allgather"]
# The ring at 2 ranks: each rank receives 2 blocks, as op=memcpy copies.
RING_OPS = ("ring_alltoall", "ring_allgather")
EXCHANGE_OPS = ["alltoall", "alltoallv", "alltoallv_skew", "alltoallw", "allgather", "allgatherv"]
# Rooted and reducing collectives, and the barrier: no memcpy bound either
# (op=memcpy copies N blocks per rank; these move one block, or N at one rank).
OTHER_OPS = ["bcast", "reduce", "allreduce", "gather", "scatter", "reduce_scatter_block", "barrier"]
# One-sided (shmcoll-bench --op rma, rma.c): <kind>_<sync>.  Put and get have
# their own bound, <kind>_copy: the same loop by memcpy within each rank,
# touching the same bytes (a get alternates two halves of its target).
RMA_OPS = [f"{k}_{s}" for k in ("put", "get", "acc", "fop", "cas") for s in ("fence", "lock", "lockall", "copy")
           if s != "copy" or k in ("put", "get")]
RMA_BOUND = {f"{k}_{s}": f"{k}_copy" for k in ("put", "get") for s in ("fence", "lock", "lockall")}
COLL_OPS = EXCHANGE_OPS + OTHER_OPS + NEIGHBOR_OPS + RMA_OPS
# A point whose shmcoll runs differ by more than this factor is listed as unstable.
UNSTABLE = 2.0
# Runs at one rank count whose exchange floors differ by more than this
# factor are taken to have run on different placements (placements()).
PLACEMENT = 2.0


# Rows whose times are not per rank of a collective.
KERNEL_OPS = ("memcpy", "memcpy1", "yield")

def human(n):
    n = int(n)
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def fmt(v, width=10):
    if v is None:
        return "-".rjust(width)
    if v >= 1e5:
        return f"{v:{width}.0f}"
    return f"{v:{width}.2f}"


def placements(tagged, groups, others, accel):
    """Where the exchange floor (op=lines) of one implementation's runs at
    one rank count differs by more than PLACEMENT, the runs fell on different
    placements of the processes (on a VM whose vCPUs the host moves between
    sibling threads of one core and separate cores, every small figure moves
    with it; docs/PERFORMANCE.md, 2026-12-02): a median over runs then
    compares one library's lucky runs with another's unlucky ones.  Prints
    the runs' floors and, for each point, shmcoll / best other (and each
    host with the accelerator / the host alone) within the runs of the low
    floor and within those of the high floor, split at the geometric mean of
    the moving floors.  An implementation whose floor is always more than
    8 times the lowest (a library that spins while ranks outnumber cores has
    a floor of its own) does not trigger this (its runs then all fall above
    the split)."""
    floors = defaultdict(dict)  # ranks -> {(impl, tag): lines us}
    for (r, op, b, c, impl), vals in tagged.items():
        if op == "lines" and c == 0:
            for tag, us in vals:
                floors[r][(impl, tag)] = us
    for r in sorted(floors):
        runs = floors[r]
        least = min(runs.values())
        moved = []
        for impl in {i for i, _ in runs}:
            mine = [us for (i, _), us in runs.items() if i == impl]
            if least > 0 and min(mine) <= 8 * least and max(mine) / min(mine) > PLACEMENT:
                moved += mine
        if not moved:
            continue
        lo, hi = min(moved), max(moved)
        split = (lo * hi) ** 0.5
        print(f"\n== {r} ranks: the exchange floor moved between runs ({lo:.2f}-{hi:.2f} us), so the runs")
        print(f"   fell on different placements; ratios within the runs below and above {split:.2f} us ==")
        for impl in sorted({i for i, _ in runs}):
            cells = " ".join(f"{runs[(i, t)]:.2f}" for i, t in sorted(runs) if i == impl)
            print(f"   op=lines per run, {impl}: {cells}")
        # (what is compared: shmcoll with the best other, each host with the accelerator with the host)
        pairs = [("shmcoll", others, "shm/best")] + [(i, [h], t) for i, h, t in accel]
        pairs = [p for p in pairs if any(k[4] == p[0] and k[0] == r for k in tagged)]
        if not pairs:
            continue

        def within(impl, op, b, low):
            return [us for tag, us in tagged.get((r, op, b, 0, impl), [])
                    if (impl, tag) in runs and (runs[(impl, tag)] <= split) == low]

        head = f"{'op':<21}{'bytes':>7}"
        for _, _, title in pairs:
            head += f"{'low: ' + title:>22}{'runs':>6}{'high: ' + title:>22}{'runs':>6}"
        print(head)
        for gr, op, b, c in groups:
            if gr != r or c != 0:
                continue
            cells = ""
            for impl, against, _ in pairs:
                for low in (True, False):
                    mine = within(impl, op, b, low)
                    best = None
                    for i in against:
                        v = within(i, op, b, low)
                        if v and (best is None or statistics.median(v) < best):
                            best = statistics.median(v)
                    if mine and best:
                        m = statistics.median(mine)
                        cells += f"{f'{m:.2f} / {best:.2f} = {m / best:.2f}':>22}{len(mine):>6}"
                    else:
                        cells += f"{'-':>22}{'-':>6}"
            print(f"{op:<21}{human(b):>7}{cells}")


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    raw, out = sys.argv[1], sys.argv[2]
    order = ["shmcoll", "openmpi", "mpich", "openmpi+shmcoll", "mpich+shmcoll"]
    if "--impl-order" in sys.argv:
        order = sys.argv[sys.argv.index("--impl-order") + 1].split(",")

    samples = defaultdict(list)  # (ranks, op, bytes, cold, impl) -> [(us, bw)]
    tagged = defaultdict(list)  # the same -> [(run tag, us)], for the placements below
    with open(raw, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("impl") == "impl":  # a repeated header
                continue
            key = (int(row["ranks"]), row["op"], int(row["bytes"]), int(row["cold"]), row["impl"])
            avg, bw = float(row["avg_us"]), float(row["bw_MBps"])
            slowest = float(row.get("max_us") or 0)
            if row["op"] not in KERNEL_OPS and not row["op"].startswith("stream_") and slowest > avg > 0:
                avg, bw = slowest, bw * avg / slowest
            samples[key].append((avg, bw))
            tagged[key].append((row.get("tag", ""), avg))
    if not samples:
        print("summarize: no rows in", raw)
        return 1

    med = {}
    for key, vals in samples.items():
        med[key] = (statistics.median(v[0] for v in vals), statistics.median(v[1] for v in vals), len(vals))
    impls = [i for i in order if any(k[4] == i for k in med)] + sorted(
        {k[4] for k in med} - set(order))

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "medians.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["op", "ranks", "bytes", "cold", "impl", "avg_us", "bw_MBps", "runs"])
        for key in sorted(med):
            r, op, b, c, impl = key
            w.writerow([op, r, b, c, impl, f"{med[key][0]:.3f}", f"{med[key][1]:.1f}", med[key][2]])

    def bound(r, b, c, op="alltoall"):
        """memcpy bound (us, MB/s per rank) at ranks r, block b, cache mode c.

        The skewed alltoallv moves nearly all its bytes into one rank, so its
        bound is that one rank's copy (memcpy1) rather than every rank
        copying at once (memcpy)."""
        if op not in EXCHANGE_OPS and not (op in RING_OPS and r == 2) and op not in RMA_BOUND:
            return None  # no copy of the same volume is measured
        kind = "memcpy1" if op == "alltoallv_skew" else RMA_BOUND.get(op, "memcpy")
        best = None
        for impl in impls:
            m = med.get((r, kind, b, c, impl))
            if m and (best is None or m[0] < best[0]):
                best = m
        return best

    groups = sorted({(k[0], k[1], k[2], k[3]) for k in med if k[1] in COLL_OPS},
                    key=lambda g: (g[0], g[3], COLL_OPS.index(g[1]), g[2]))
    # (another build of shmcoll, perf/compare.sh --baseline, is not an "other", nor is a host with the accelerator)
    others = [i for i in impls if not i.startswith("shmcoll") and not i.endswith("+shmcoll")]
    # a host with the accelerator preloaded, against the same host alone: (impl, host, column title)
    titles = {"openmpi": "ompi+shm/ompi", "mpich": "mpich+shm/mpich"}
    hosts = [(i, i[: -len("+shmcoll")]) for i in impls if i.endswith("+shmcoll")]
    accel = [(i, h, titles.get(h, f"{i}/{h}")) for i, h in hosts if h in impls]
    width = max([11] + [len(i) + 2 for i in impls])
    base = "shmcoll-base" if "shmcoll-base" in impls else None
    summary_rows = []
    unstable = []
    last = None
    for r, op, b, c in groups:
        if (r, c) != last:
            last = (r, c)
            print(f"\n== {r} ranks, {'cold' if c else 'hot'} buffers: the slowest rank's time per call (us), median over runs ==")
            head = f"{'op':<21}{'bytes':>7}" + "".join(f"{i:>{width}}" for i in impls)
            head += f"{'memcpy':>10}{'shm/best':>10}{'shm runs':>16}" + (f"{'shm/base':>10}" if base else "")
            head += "".join(f"{t:>16}" for _, _, t in accel) + "  best other"
            print(head)
        vals = {i: med.get((r, op, b, c, i)) for i in impls}
        lat = {i: (v[0] if v else None) for i, v in vals.items()}
        bd = bound(r, b, c, op)
        best_other, best_impl = None, ""
        for i in others:
            if lat.get(i) is not None and (best_other is None or lat[i] < best_other):
                best_other, best_impl = lat[i], i
        ratio = lat["shmcoll"] / best_other if lat.get("shmcoll") and best_other else None
        line = f"{op:<21}{human(b):>7}" + "".join(fmt(lat[i], width) for i in impls)
        line += fmt(bd[0] if bd else None, 10) + (f"{ratio:10.2f}" if ratio else f"{'-':>10}")
        runs = [v[0] for v in samples.get((r, op, b, c, "shmcoll"), [])]
        line += f"{min(runs):>8.2f}-{max(runs):<7.2f}" if runs else f"{'-':>16}"
        if len(runs) > 1 and min(runs) > 0 and max(runs) / min(runs) > UNSTABLE:
            unstable.append((max(runs) / min(runs), r, op, b, c, min(runs), max(runs)))
        vsbase = lat["shmcoll"] / lat[base] if base and lat.get("shmcoll") and lat.get(base) else None
        if base:
            line += f"{vsbase:10.2f}" if vsbase else f"{'-':>10}"
        vshost = [lat[i] / lat[h] if lat.get(i) and lat.get(h) else None for i, h, _ in accel]
        line += "".join(f"{v:16.2f}" if v else f"{'-':>16}" for v in vshost)
        line += f"  {best_impl}"
        print(line)
        summary_rows.append([r, op, b, c] + [f"{lat[i]:.3f}" if lat[i] is not None else "" for i in impls] +
                            [f"{bd[0]:.3f}" if bd else "", f"{ratio:.3f}" if ratio else "", best_impl] +
                            ([f"{vsbase:.3f}" if vsbase else ""] if base else []) +
                            [f"{v:.3f}" if v else "" for v in vshost])

    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["ranks", "op", "bytes", "cold"] + [f"{i}_us" for i in impls] +
                   ["memcpy_us", "ratio_shmcoll_vs_best_other", "best_other"] +
                   (["ratio_shmcoll_vs_base"] if base else []) + [f"ratio_{i}_vs_{h}" for i, h, _ in accel])
        w.writerows(summary_rows)

    # Large-message bandwidth as a share of the memcpy bound: at each
    # (ranks, op, cache mode), the largest block size every implementation ran.
    print("\n== large messages: bandwidth per rank (MB/s, payload received) and share of the memcpy bound ==")
    print("   (bound: every rank copying its receive volume at once; for alltoallv_skew one rank alone;")
    print("    for put and get their loop by memcpy within each rank, put_copy and get_copy)")
    print(f"{'ranks':>5} {'cache':<5} {'op':<21}{'bytes':>7}{'memcpy':>10}" +
          "".join(f"{i:>17}" for i in impls))
    for r, c in sorted({(g[0], g[3]) for g in groups}):
        for op in COLL_OPS:
            sizes = [g[2] for g in groups if g[0] == r and g[3] == c and g[1] == op and
                     all((r, op, g[2], c, i) in med for i in impls)]
            if not sizes:
                continue
            b = max(sizes)
            bd = bound(r, b, c, op)
            if not bd:
                continue
            cells = ""
            for i in impls:
                bw = med[(r, op, b, c, i)][1]
                cells += f"{bw:>9.0f} ({100 * bw / bd[1]:3.0f}%)" if bd[1] > 0 else f"{bw:>17.0f}"
            print(f"{r:>5} {'cold' if c else 'hot':<5} {op:<21}{human(b):>7}{bd[1]:>10.0f}{cells}")

    # The floors (the best median of the op among the implementations' runs):
    # op=yield, one round of sched_yield() over all ranks -- with more ranks
    # than cores no call in which every rank must run can be faster; and
    # op=lines, every rank storing a count on its own cache line and waiting
    # for everyone's (spinning, or yielding when ranks outnumber cores) -- no
    # call in which every rank hears from every other can be faster.
    floor_kinds = (
        ("yield", "scheduling floor: one round of sched_yield() on every rank at once"),
        ("lines", "exchange floor: every rank's count on its own cache line, seen by every other"),
    )
    for kind, title in floor_kinds:
        floors = {}
        for (r, op, b, c, i), m in med.items():
            if op == kind and (r not in floors or m[0] < floors[r]):
                floors[r] = m[0]
        if not floors:
            continue
        print(f"\n== {title} (us), and the")
        print("   smallest blocks' median latency as a multiple of it ==")
        print(f"{'ranks':>5} {'floor':>8}  " + "  ".join(f"{i + ' (x)':>22}" for i in impls) + "  op, bytes")
        for r in sorted(floors):
            fl = floors[r]
            for op in COLL_OPS:
                sizes = sorted(g[2] for g in groups if g[0] == r and g[3] == 0 and g[1] == op)
                if not sizes:
                    continue
                b = sizes[0]
                cells = []
                for i in impls:
                    m = med.get((r, op, b, 0, i))
                    cells.append(f"{m[0]:>12.2f} ({m[0] / fl:5.1f}x)" if m and fl > 0 else f"{'-':>22}")
                print(f"{r:>5} {fl:>8.2f}  " + "  ".join(f"{c:>22}" for c in cells) + f"  {op}, {human(b)}")

    placements(tagged, groups, others, accel)

    npoints = sum(1 for g in groups if (g[0], g[1], g[2], g[3], "shmcoll") in samples)
    print(f"\n== spread over runs: shmcoll's slowest run more than {UNSTABLE:g}x its fastest at "
          f"{len(unstable)} of {npoints} points ==")
    for f, r, op, b, c, lo, hi in sorted(unstable, reverse=True)[:20]:
        print(f"{r:>5} {'cold' if c else 'hot':<5} {op:<21}{human(b):>7}  {lo:10.2f} - {hi:<10.2f} ({f:.1f}x)")

    runs = sorted({k[4] for k in samples})
    counts = defaultdict(set)
    for k, v in samples.items():
        counts[k[4]].add(len(v))
    print("\nruns per point: " + ", ".join(f"{i}: {'/'.join(map(str, sorted(counts[i])))}" for i in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
