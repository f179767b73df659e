#!/usr/bin/env python3
"""perf/bench/summarize.py on made-up runs (no benchmark runs): two
implementations, three runs each at 2 ranks, whose exchange floors (op=lines)
put shmcoll's runs 1 and 3 and Open MPI's run 2 on the slow placement.  The
plain medians then compare shmcoll's slow runs with Open MPI's fast ones
(ratio 2.0); the placement table must give 0.5 within each placement.  At 4
ranks a library whose floor is always far above the other's (MPICH spinning)
must not be taken for a placement.

usage: summarize_placements.py <repo>/perf/bench/summarize.py"""
import csv
import os
import subprocess
import sys
import tempfile

HEAD = ["impl", "version", "op", "ranks", "bytes", "recv_bytes", "iters", "avg_us", "min_us", "max_us", "bw_MBps",
        "agg_MBps", "cold", "tag"]


def row(impl, op, ranks, size, us, tag):
    return [impl, "x", op, ranks, size, size, 100, us, us, us, 1.0, 2.0, 0, tag]


def main():
    script = sys.argv[1]
    rows = []
    # 2 ranks: near runs have a floor of 0.05 and a 4 KiB allgather of 1 (shmcoll) or 2 (openmpi);
    # far runs 0.20 and 4 (shmcoll) or 8 (openmpi).
    for impl, far_runs, near_t, far_t in (("shmcoll", {"run1", "run3"}, 1.0, 4.0),
                                          ("openmpi", {"run2"}, 2.0, 8.0)):
        for tag in ("run1", "run2", "run3"):
            far = tag in far_runs
            rows.append(row(impl, "lines", 2, 0, 0.20 if far else 0.05, tag))
            rows.append(row(impl, "allgather", 2, 4096, far_t if far else near_t, tag))
    # 4 ranks: mpich's floor 1000-3000 (its own), the others 3-4: no placement table.
    for impl, floors in (("shmcoll", (3.0, 3.5, 4.0)), ("openmpi", (3.2, 3.6, 3.9)), ("mpich", (1000, 3000, 1200))):
        for k, fl in enumerate(floors):
            rows.append(row(impl, "lines", 4, 0, fl, f"run{k + 1}"))
            rows.append(row(impl, "allgather", 4, 4096, 10.0, f"run{k + 1}"))
    with tempfile.TemporaryDirectory() as d:
        raw = os.path.join(d, "raw.csv")
        with open(raw, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(HEAD)
            w.writerows(rows)
        out = subprocess.run([sys.executable, script, raw, os.path.join(d, "out")], capture_output=True, text=True,
                             check=True).stdout
    failures = []
    lines = out.splitlines()
    heads = [i for i, l in enumerate(lines) if "the exchange floor moved between runs" in l]
    if len(heads) != 1 or not lines[heads[0]].startswith("== 2 ranks"):
        failures.append(f"want one placement table, at 2 ranks; got {[lines[i] for i in heads]}")
    else:
        table = lines[heads[0]:]
        got = [l for l in table if l.startswith("allgather") and "4K" in l]
        want_low, want_high = "1.00 / 2.00 = 0.50", "4.00 / 8.00 = 0.50"
        if not got or want_low not in got[0] or want_high not in got[0]:
            failures.append(f"want '{want_low}' (low floor) and '{want_high}' (high floor) in {got}")
        if got and got[0].split()[-1] != "2":
            failures.append(f"want 2 shmcoll runs on the high floor: {got[0]}")
    plain = [l for l in lines if l.startswith("allgather") and " 4K" in l]
    if not plain or "2.00" not in plain[0]:
        failures.append(f"the plain medians should compare 4.00 with 2.00 (ratio 2.00): {plain[:1]}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        print(out)
        return 1
    print("ok: placement table at 2 ranks only, 0.50 within each placement where the plain medians give 2.00")
    return 0


if __name__ == "__main__":
    sys.exit(main())
