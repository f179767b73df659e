#!/usr/bin/env bash
# perf/accel_dtype.sh -- collectives over derived datatypes (perf/bench/dtype_coll.c)
# with a host MPI alone and with the accelerator, its derived types packed by
# the host (SHMCOLL_ACCEL_DECODE=0) and decoded into the engine's description
# (the default), on one node.
#
# Builds the benchmark with the host's mpicc and runs the three, alternated
# (A B C A B C ...), REPS times each; prints every run's time per call (the
# slowest rank's mean, us) per point and the medians with their ratios to the
# host alone.  Raw rows go to OUT/raw.csv.
#
#   perf/accel_dtype.sh [--host openmpi|mpich] [--np 2] [--reps 3] [--ops alltoall,allgather,bcast]
#                       [--types double,vec1,vec8,struct] [--sizes 4096,65536,1048576] [--time 0.3]
#                       [--out DIR] [--build DIR]   (the build tree with accel/lib; default <repo>/build)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
host=openmpi np=2 reps=3 ops=alltoall,allgather,bcast types=double,vec1,vec8,struct sizes=4096,65536,1048576
budget=0.3 out="" build=$repo/build
while [ $# -gt 0 ]; do
  case $1 in
    --host) host=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --ops) ops=$2; shift 2 ;;
    --types) types=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --time) budget=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "accel_dtype.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
lib=$build/accel/lib/libshmcoll_accel_$host.so
[ -f "$lib" ] || { echo "accel_dtype.sh: $lib not built (make shmcoll_accel_$host in $build)" >&2; exit 1; }
out=${out:-$repo/perf/results/accel-dtype-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
bench=$out/dtype_coll-$host
"mpicc.$host" -O3 -DNDEBUG -std=c11 "$repo/perf/bench/dtype_coll.c" -o "$bench"

run() {  # run <label> [decode: 0|1]; no second argument: the host alone
  local label=$1
  local args=(--label "$label" --ops "$ops" --types "$types" --sizes "$sizes" --time "$budget")
  case $host in
    openmpi)
      local env=(-x OMPI_MCA_btl=self,vader -x OMPI_MCA_mpi_yield_when_idle=1)
      [ $# -gt 1 ] && env+=(-x "LD_PRELOAD=$lib" -x "SHMCOLL_ACCEL_DECODE=$2")
      mpirun.openmpi --allow-run-as-root --oversubscribe --bind-to none "${env[@]}" -np "$np" "$bench" "${args[@]}"
      ;;
    mpich)
      local env=()
      [ $# -gt 1 ] && env+=(-genv LD_PRELOAD "$lib" -genv SHMCOLL_ACCEL_DECODE "$2")
      mpiexec.mpich "${env[@]}" -n "$np" "$bench" "${args[@]}"
      ;;
    *) echo "accel_dtype.sh: unknown host $host" >&2; exit 2 ;;
  esac
}

: >"$out/raw.csv"
for ((i = 0; i < reps; ++i)); do
  run host >>"$out/raw.csv"
  run host-packed 0 >>"$out/raw.csv"
  run decoded 1 >>"$out/raw.csv"
done

python3 - "$out/raw.csv" "$host" "$np" <<'EOF'
import sys, statistics
from collections import defaultdict
rows = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    label, op, ty, size, ranks, us = line.strip().split(",")
    key = (op, ty, int(size))
    if key not in order:
        order.append(key)
    rows[key + (label,)].append(float(us))
host, np = sys.argv[2], sys.argv[3]
print(f"{host}, N = {np}: us per call (slowest rank), every run; medians; ratio to the host alone")
print(f"{'op':10} {'type':7} {'bytes':>8}  {'host alone':24} {'+accel, host packs':24} {'+accel, decoded':24} {'ratios':>12}")
fmt = lambda v: "/".join(f"{x:.1f}" for x in v)
for key in order:
    h, p, d = (rows[key + (l,)] for l in ("host", "host-packed", "decoded"))
    mh, mp, md = (statistics.median(v) for v in (h, p, d))
    print(f"{key[0]:10} {key[1]:7} {key[2]:>8}  {fmt(h):24} {fmt(p):24} {fmt(d):24} {mp / mh:5.2f} {md / mh:5.2f}")
EOF
