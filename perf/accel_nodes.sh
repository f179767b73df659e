#!/usr/bin/env bash
# perf/accel_nodes.sh -- the accelerator's hierarchical path against its host
# alone, on pretend nodes (SHMCOLL_FAKE_NODES) on this machine.
#
# Builds perf/bench/shmcoll_bench.c with the host's mpicc and runs it under
# the host's launcher, alternating "host alone" and "host + accelerator with
# SHMCOLL_FAKE_NODES=k" (A B A B ...), REPS times each, and prints every run's
# time per call (the slowest rank's mean over its timed loop, shmcoll-bench's max_us) and the
# medians with their ratio.  Buffers come from plain malloc.  Raw rows go to
# OUT/raw.csv.
#
#   perf/accel_nodes.sh [--host openmpi|mpich] [--np 8] [--nodes 2] [--reps 7]
#                       [--ops alltoall,allgather] [--sizes 65536] [--out DIR]
#                       [--build DIR]   (the build tree with accel/lib; default <repo>/build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
host=openmpi np=8 nodes=2 reps=7 ops=alltoall,allgather sizes=65536 out="" build=$repo/build
while [ $# -gt 0 ]; do
  case $1 in
    --host) host=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "accel_nodes.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
lib=$build/accel/lib/libshmcoll_accel_$host.so
[ -f "$lib" ] || { echo "accel_nodes.sh: $lib not built (make shmcoll_accel_$host in $build)" >&2; exit 1; }
out=${out:-$repo/perf/results/accel-nodes-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
bench=$out/bench-$host
"mpicc.$host" -O3 -DNDEBUG -std=c11 "$repo/perf/bench/shmcoll_bench.c" "$repo/perf/bench/neighbor.c" \
  "$repo/perf/bench/rma.c" -o "$bench"

run() {  # run <label> [accelerator]
  local label=$1 csv=$out/raw.csv
  case $host in
    openmpi)
      local pre=()
      [ $# -gt 1 ] && pre=(-x LD_PRELOAD="$lib" -x SHMCOLL_FAKE_NODES="$nodes")
      OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl=self,vader mpirun.openmpi --allow-run-as-root --oversubscribe \
        --bind-to none -np "$np" "${pre[@]}" "$bench" --op "$ops" --sizes "$sizes" --csv "$csv" --tag "$label" \
        </dev/null >/dev/null
      ;;
    mpich)
      local pre=()
      [ $# -gt 1 ] && pre=(-genv LD_PRELOAD "$lib" -genv SHMCOLL_FAKE_NODES "$nodes")
      mpiexec.mpich -n "$np" "${pre[@]}" "$bench" --op "$ops" --sizes "$sizes" --csv "$csv" --tag "$label" \
        </dev/null >/dev/null
      ;;
  esac
}
for ((r = 1; r <= reps; ++r)); do
  run host
  run accel yes
done
echo "# $(uname -n): $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# $host, $np ranks, SHMCOLL_FAKE_NODES=$nodes for the accelerator, $reps interleaved runs each"
python3 - "$out/raw.csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
key = lambda r: (r['op'], int(r['bytes']))
res = {}
for r in rows:
    res.setdefault(key(r), {}).setdefault(r['tag'], []).append(float(r['max_us']))
print(f"{'op':<12}{'bytes':>9}  {'host us':>10}  {'accel us':>10}  {'accel/host':>10}  runs (host | accel)")
for k in sorted(res):
    h, a = res[k].get('host', []), res[k].get('accel', [])
    if not h or not a: continue
    mh, ma = statistics.median(h), statistics.median(a)
    print(f"{k[0]:<12}{k[1]:>9}  {mh:>10.1f}  {ma:>10.1f}  {ma / mh:>10.2f}  "
          f"{' '.join(f'{x:.0f}' for x in h)} | {' '.join(f'{x:.0f}' for x in a)}")
EOF
