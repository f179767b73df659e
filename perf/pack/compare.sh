#!/usr/bin/env bash
# perf/pack/compare.sh -- MPI_Pack / MPI_Unpack throughput: shmcoll vs Open MPI vs MPICH.
#
# Builds perf/pack/pack_compare.c (standard MPI only) three ways, -O2:
#   shmcoll  with <repo>/install/bin/shmcc   (run scripts/test.sh or scripts/run.sh first)
#   openmpi  with mpicc.openmpi
#   mpich    with mpicc.mpich
# runs each binary directly as a single-process MPI singleton, interleaved
# (shmcoll openmpi mpich) x 3, and prints the median GB/s per (case, op), the
# ratio best-of-the-other-two / shmcoll (<= 1 means shmcoll is at least as fast)
# and shmcoll's share of memcpy.  Everything goes to perf/results/pack-<time>/:
#   raw.csv      run,impl,case,op,payload_bytes,seconds,GBps,share_of_memcpy
#   summary.txt  the printed table
#   bin/         the three binaries, build-*.log, run logs
# Takes about 2.5 minutes (each run ~17 s; 9 runs).  On a busy machine more
# rounds steady the medians: PACK_REPS=7 runs (shmcoll openmpi mpich) x 7.
#
# Usage: [PACK_REPS=n] perf/pack/compare.sh
set -euo pipefail

self=$(readlink -f -- "${BASH_SOURCE[0]}")
root=$(cd -- "$(dirname -- "$self")/../.." && pwd -P)
src=$root/perf/pack/pack_compare.c
shmcc=$root/install/bin/shmcc
reps=${PACK_REPS:-3}
impls=(shmcoll openmpi mpich)

if [[ ! -x $shmcc ]]; then
  echo "compare.sh: $shmcc not found; build and install shmcoll first:" >&2
  echo "  (cd $root && scripts/test.sh)   or   (cd $root && scripts/run.sh)" >&2
  exit 1
fi
for cc in mpicc.openmpi mpicc.mpich; do
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "compare.sh: $cc not found (install the openmpi / mpich development packages)" >&2
    exit 1
  fi
done

if ! [[ $reps =~ ^[1-9][0-9]*$ ]]; then
  echo "compare.sh: PACK_REPS must be a positive integer, not '$reps'" >&2
  exit 2
fi

out=$root/perf/results/pack-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out/bin"
echo "results: $out"

declare -A compiler=([shmcoll]=$shmcc [openmpi]=mpicc.openmpi [mpich]=mpicc.mpich)
for impl in "${impls[@]}"; do
  if ! "${compiler[$impl]}" -std=c11 -O2 -Wall "$src" -o "$out/bin/pack_compare_$impl" \
    >"$out/bin/build-$impl.log" 2>&1; then
    echo "compare.sh: building for $impl failed:" >&2
    cat "$out/bin/build-$impl.log" >&2
    exit 1
  fi
done
echo "built: ${impls[*]}"

raw=$out/raw.csv
echo "run,impl,case,op,payload_bytes,seconds,GBps,share_of_memcpy" >"$raw"
for ((r = 1; r <= reps; r++)); do
  for impl in "${impls[@]}"; do
    log=$out/bin/run-$impl-$r.log
    printf 'run %d/%d %-8s ... ' "$r" "$reps" "$impl"
    env=()
    # Open MPI refuses to start as root unless told it may; harmless otherwise.
    [[ $impl == openmpi ]] && env=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
    start=$SECONDS
    if ! env "${env[@]}" "$out/bin/pack_compare_$impl" >"$log.csv" 2>"$log"; then
      echo "FAILED" >&2
      cat "$log" >&2
      exit 1
    fi
    lines=$(grep -c "^$impl," "$log.csv" || true)
    if [[ $lines -eq 0 ]]; then
      echo "compare.sh: $impl printed no results" >&2
      cat "$log" "$log.csv" >&2
      exit 1
    fi
    sed "s/^/$r,/" "$log.csv" >>"$raw"
    echo "$lines lines, $((SECONDS - start)) s"
  done
done

# Medians over the runs, then one row per (case, op) for pack and unpack.
awk -F, -v reps="$reps" '
  function median(s,   a, n, i, k, t) {
    n = split(s, a, " ")
    for (i = 2; i <= n; i++) {           # insertion sort (mawk has no asort)
      t = a[i] + 0; k = i - 1
      while (k >= 1 && a[k] + 0 > t) { a[k + 1] = a[k]; k-- }
      a[k + 1] = t
    }
    if (n % 2) return a[(n + 1) / 2] + 0
    return (a[n / 2] + a[n / 2 + 1]) / 2
  }
  NR == 1 { next }
  {
    key = $3 SUBSEP $4
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    gb[$2, key] = gb[$2, key] " " $7
    if ($2 == "shmcoll") sh[key] = sh[key] " " $8
  }
  END {
    printf "MPI_Pack / MPI_Unpack throughput, median of %d runs, GB/s = payload bytes / s / 1e9\n", reps
    printf "other/shm = best of (openmpi, mpich) GB/s / shmcoll GB/s: <= 1 means shmcoll is at least as fast\n"
    printf "shm%%memcpy = shmcoll GB/s as a share of memcpy GB/s for the same payload bytes (1.00 = memcpy speed)\n\n"
    printf "%-11s %-7s %10s %10s %10s %10s %11s\n", "case", "op", "shmcoll", "openmpi", "mpich", "other/shm", "shm%memcpy"
    for (i = 1; i <= nk; i++) {
      key = order[i]; split(key, p, SUBSEP)
      if (p[2] == "memcpy") continue
      s = median(gb["shmcoll", key]); o = median(gb["openmpi", key]); m = median(gb["mpich", key])
      best = (o > m) ? o : m
      printf "%-11s %-7s %10.2f %10.2f %10.2f %10.2f %11.2f\n", p[1], p[2], s, o, m, best / s, median(sh[key])
    }
  }' "$raw" | tee "$out/summary.txt"
echo
echo "raw CSV: $raw"
