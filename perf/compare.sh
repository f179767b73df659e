#!/usr/bin/env bash
# perf/compare.sh -- shmcoll against Open MPI and MPICH, side by side, on this node.
#
# Builds the one benchmark (perf/bench/shmcoll_bench.c and neighbor.c) against
# the three implementations, runs them interleaved (shmcoll openmpi mpich
# openmpi+shmcoll mpich+shmcoll shmcoll ...) several times at each rank count,
# and prints the medians, the ratio shmcoll / best-of-the-others for every (op,
# size, ranks), the ratio of each host with shmcoll's accelerator preloaded
# ("Open MPI + shmcoll", "MPICH + shmcoll": the host's own benchmark binary run
# again with LD_PRELOAD=libshmcoll_accel_<host>.so) to the same host alone,
# and each collective's large-message bandwidth as a share of the memcpy
# bound measured in the same runs; where the exchange floor (op=lines) of
# one implementation's runs moved by more than 2x (a VM whose vCPUs the host
# moves between sibling threads and separate cores), the same ratios within
# the runs of each floor (perf/bench/summarize.py).  Results go to perf/results/<time>/
# (raw.csv, medians.csv, summary.csv, summary.txt, log.txt, latency_N*.png,
# latency_N*_cold.png for cold buffers);
# perf/results/latest points at the newest.
#
# Usage: perf/compare.sh [options] [-- extra shmcoll-bench options]
#   --quick            few sizes, short budgets: ranks "2 3 4 8", 3 runs, both methods
#   --ranks "2 8 32"   rank counts (default "2 3 4 8 32"; "2 3 4 8" with --quick)
#   --methods LIST     subset of "b2b sync" (default both): b2b, calls back to back;
#                      sync, a barrier before every call and only the calls timed
#                      (shmcoll-bench --sync, the common benchmark suites' method);
#                      sync results go to <out>/sync/
#   --reps N           runs per implementation and rank count (default 3)
#   --impls LIST       subset of "shmcoll openmpi mpich openmpi+shmcoll mpich+shmcoll"
#                      (default all five; a host+shmcoll whose accelerator library
#                      is not found is left out with a message)
#   --accel DIR        where the accelerator libraries are: DIR/lib/libshmcoll_accel_<host>.so
#                      (default: PREFIX with --shmcoll install, <build dir>/accel with
#                      --shmcoll build)
#   --neighbor         also run the neighbourhood collectives (MPI_Neighbor_alltoall
#                      and MPI_Neighbor_allgather on a 2-D periodic grid, on a
#                      random graph and on a 1-D periodic ring: ops cart_alltoall
#                      graph_alltoall cart_allgather graph_allgather ring_alltoall
#                      ring_allgather); added to the default ops, or to the --op
#                      list given after --
#   --rma              also run the one-sided ops (shmcoll-bench --op rma: put, get,
#                      acc, fop and cas under fence, lock and lockall, and put_copy and
#                      get_copy, the bound of put and get, perf/bench/rma.c);
#                      added like --neighbor; the 2-rank sanity run then includes them
#   --ops LIST         the benchmark's --op LIST (e.g. rma,yield or put_lockall,get_lockall
#                      for the one-sided ops alone), the same as `-- --op LIST`
#   --baseline DIR     also measure the shmcoll install tree DIR (another build,
#                      e.g. an earlier commit) as "shmcoll-base", interleaved with
#                      the others; the summary then gives shmcoll / shmcoll-base
#   --shmcoll install  (default) use the install tree: PREFIX/bin/shmrun, and the
#                      benchmark compiled with PREFIX/bin/shmcc, or with cc -I/-L
#                      against PREFIX when there is no shmcc yet; PREFIX is
#                      <repo>/install (--prefix DIR), configured, built and
#                      installed from this checkout if PREFIX/bin/shmrun is missing
#                      or with --rebuild
#   --shmcoll build    use the build tree <repo>/build-bench (targets shmcoll-bench
#                      and shmrun, built here with make -j2)
#   --build-dir DIR    the build tree for --shmcoll build instead of <repo>/build-bench
#   --prefix DIR       install tree for --shmcoll install
#   --rebuild          rebuild and reinstall shmcoll before running
#   --timeout SECONDS  per run (default 1800; 600 with --quick)
#   --out DIR          results directory (default perf/results/<date-time>)
#   --no-install       never apt-get install missing MPI packages
#   --no-tune          do not run shmcoll-tune --quick first when the install
#                      tree has no decision table (PREFIX/share/shmcoll/tuning.txt);
#                      shmcoll then runs on its built-in thresholds
#
# Extra shmcoll-bench options after -- apply to every implementation, e.g.
# `-- --cold=both` (cache-cold buffers too) or `-- --alloc-mem` (buffers from
# MPI_Alloc_mem; shmcoll then gets SHMCOLL_ALLOC_MEM large enough for them
# unless it is set).
#
# Open MPI runs as `mpirun.openmpi [--allow-run-as-root] --oversubscribe -n N`
# with `--bind-to none` when N exceeds the cores; MPICH as `mpiexec.mpich -n N`;
# shmcoll as `shmrun -n N`.  Uses at most 2 parallel compile jobs.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SRC=("$REPO/perf/bench/shmcoll_bench.c" "$REPO/perf/bench/neighbor.c" "$REPO/perf/bench/rma.c")
RANKS="" REPS="" IMPLS="shmcoll openmpi mpich openmpi+shmcoll mpich+shmcoll" ACCEL="" QUICK=0 SHM_FROM=install PREFIX=$REPO/install
REBUILD=0 TIMEOUT="" OUT="" APT=1 TUNE=1 BASELINE="" NEIGHBOR=0 RMA=0
EXTRA=() OPS_ARG=() BUILD_DIR=$REPO/build-bench
while (($#)); do
  case $1 in
    --quick) QUICK=1 ;;
    --ranks) RANKS=$2; shift ;;
    --methods) METHODS=$2; shift ;;
    --reps) REPS=$2; shift ;;
    --impls) IMPLS=$2; shift ;;
    --accel) ACCEL=$(realpath -m "$2"); shift ;;
    --neighbor) NEIGHBOR=1 ;;
    --rma) RMA=1 ;;
    --ops) OPS_ARG=(--op "$2"); shift ;;
    --shmcoll) SHM_FROM=$2; shift ;;
    --prefix) PREFIX=$(realpath -m "$2"); shift ;;
    --build-dir) BUILD_DIR=$(realpath -m "$2"); shift ;;
    --baseline) BASELINE=$(realpath -m "$2"); shift ;;
    --rebuild) REBUILD=1 ;;
    --timeout) TIMEOUT=$2; shift ;;
    --out) OUT=$(realpath -m "$2"); shift ;;
    --no-install) APT=0 ;;
    --no-tune) TUNE=0 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; EXTRA=("$@"); break ;;
    *) echo "compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if ((QUICK)); then
  RANKS=${RANKS:-"2 3 4 8"} REPS=${REPS:-3} TIMEOUT=${TIMEOUT:-600}
  BENCH_ARGS=(--quick)
else
  RANKS=${RANKS:-"2 3 4 8 32"} REPS=${REPS:-3} TIMEOUT=${TIMEOUT:-1800}
  BENCH_ARGS=()
fi
METHODS=${METHODS:-"b2b sync"}
for m in $METHODS; do
  [[ $m == b2b || $m == sync ]] || { echo "compare.sh: unknown method '$m' (b2b or sync)" >&2; exit 2; }
done
# The raw rows of each method, and where its summary goes.
raw_of() { [[ $1 == sync ]] && echo "$OUT/sync/raw.csv" || echo "$OUT/raw.csv"; }
dir_of() { [[ $1 == sync ]] && echo "$OUT/sync" || echo "$OUT"; }
BENCH_ARGS+=("${OPS_ARG[@]}" "${EXTRA[@]}")
SANITY_OPS=alltoall,allgather
# --op lists accumulate in the benchmark; without one it runs the default set
given_op=$((${#OPS_ARG[@]} > 0))
for a in "${EXTRA[@]}"; do [[ $a == --op || $a == --ops || $a == --op=* || $a == --ops=* ]] && given_op=1; done
if ((NEIGHBOR)); then
  if ((given_op)); then BENCH_ARGS+=(--op neighbor); else BENCH_ARGS+=(--op "all,neighbor"); given_op=1; fi
  SANITY_OPS+=,neighbor
fi
if ((RMA)); then
  if ((given_op)); then BENCH_ARGS+=(--op rma); else BENCH_ARGS+=(--op "all,rma"); fi
  SANITY_OPS+=,rma
fi
# One-sided ops asked for by name: the sanity run tries them too.
for a in "${OPS_ARG[@]}" "${EXTRA[@]}"; do
  [[ $a =~ (^|[,=])(rma|put|get|acc|fop|cas)(_|,|$) ]] && [[ $SANITY_OPS != *,rma* ]] && SANITY_OPS+=,rma
done
CORES=$(nproc)
OUT=${OUT:-$REPO/perf/results/$(date +%Y%m%d-%H%M%S)}
BIN=$OUT/bin
mkdir -p "$BIN" "$OUT/sync"
LOG=$OUT/log.txt
: >"$LOG"
say() { echo "compare.sh: $*" | tee -a "$LOG" >&2; }

# ---- tools -------------------------------------------------------------------
need_pkgs=()
for t in mpicc.openmpi:openmpi-bin mpicc.openmpi:libopenmpi-dev mpicc.mpich:mpich mpicc.mpich:libmpich-dev \
         mpiexec.mpich:mpich mpirun.openmpi:openmpi-bin python3:python3 gnuplot:gnuplot-nox; do
  command -v "${t%%:*}" >/dev/null 2>&1 || need_pkgs+=("${t#*:}")
done
if ((${#need_pkgs[@]})); then
  mapfile -t need_pkgs < <(printf '%s\n' "${need_pkgs[@]}" | sort -u)
  if ((APT)) && [[ $(id -u) == 0 ]]; then
    say "installing ${need_pkgs[*]}"
    apt-get update >>"$LOG" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y openmpi-bin libopenmpi-dev mpich libmpich-dev \
      "${need_pkgs[@]}" >>"$LOG" 2>&1 || say "apt-get install failed (see $LOG)"
  else
    say "missing: ${need_pkgs[*]} (run as root, or apt-get install them)"
  fi
fi
command -v python3 >/dev/null || { say "python3 is required for the summary"; exit 1; }

# ---- build ---------------------------------------------------------------------
CFLAGS=${BENCH_CFLAGS:-"-O3 -DNDEBUG -std=c11"}
declare -A BENCH LAUNCH
AS_ROOT=()
[[ $(id -u) == 0 ]] && AS_ROOT=(--allow-run-as-root)

for impl in $IMPLS; do
  case $impl in
    openmpi)
      if command -v mpicc.openmpi >/dev/null && mpicc.openmpi $CFLAGS "${SRC[@]}" -o "$BIN/bench-openmpi" >>"$LOG" 2>&1
      then BENCH[openmpi]=$BIN/bench-openmpi; else say "cannot build against Open MPI; leaving it out"; fi ;;
    mpich)
      if command -v mpicc.mpich >/dev/null && mpicc.mpich $CFLAGS "${SRC[@]}" -o "$BIN/bench-mpich" >>"$LOG" 2>&1
      then BENCH[mpich]=$BIN/bench-mpich; else say "cannot build against MPICH; leaving it out"; fi ;;
    shmcoll)
      if [[ $SHM_FROM == build ]]; then
        B=$BUILD_DIR
        if { [[ -f $B/CMakeCache.txt ]] || cmake -S "$REPO" -B "$B" >>"$LOG" 2>&1; } &&
           make -C "$B" -j2 shmcoll-bench shmrun >>"$LOG" 2>&1; then
          BENCH[shmcoll]=$B/perf/bench/shmcoll-bench LAUNCH[shmcoll]=$B/launcher/shmrun
        else say "cannot build shmcoll in $B (see $LOG); leaving it out"; fi
      else
        if ((REBUILD)) || [[ ! -x $PREFIX/bin/shmrun ]]; then
          say "building and installing shmcoll into $PREFIX"
          B=$REPO/build-compare
          if ! { cmake -S "$REPO" -B "$B" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$PREFIX" \
                   -DSHMCOLL_BUILD_TESTS=OFF >>"$LOG" 2>&1 &&
                 cmake --build "$B" -j2 >>"$LOG" 2>&1 && cmake --install "$B" >>"$LOG" 2>&1; }; then
            say "shmcoll build/install failed (see $LOG)"
          fi
        fi
        if [[ -x $PREFIX/bin/shmcc ]]; then
          "$PREFIX/bin/shmcc" $CFLAGS "${SRC[@]}" -o "$BIN/bench-shmcoll" >>"$LOG" 2>&1 || rm -f "$BIN/bench-shmcoll"
        elif [[ -f $PREFIX/include/mpi.h ]]; then
          cc $CFLAGS -I"$PREFIX/include" "${SRC[@]}" -o "$BIN/bench-shmcoll" -L"$PREFIX/lib" \
            -Wl,-rpath,"$PREFIX/lib" -lshmcoll >>"$LOG" 2>&1 || rm -f "$BIN/bench-shmcoll"
        fi
        if [[ -x $BIN/bench-shmcoll && -x $PREFIX/bin/shmrun ]]; then
          BENCH[shmcoll]=$BIN/bench-shmcoll LAUNCH[shmcoll]=$PREFIX/bin/shmrun
        else say "no usable shmcoll install in $PREFIX; leaving it out"; fi
      fi ;;
    openmpi+shmcoll|mpich+shmcoll) ;;  # below, once the host's benchmark is built
    *) say "unknown implementation $impl"; exit 2 ;;
  esac
done
# A host with the accelerator: the host's own benchmark binary, the library preloaded.
if [[ -z $ACCEL ]]; then
  if [[ $SHM_FROM == build ]]; then ACCEL=$BUILD_DIR/accel; else ACCEL=$PREFIX; fi
fi
for impl in $IMPLS; do
  [[ $impl == *+shmcoll ]] || continue
  host=${impl%+shmcoll}
  if [[ $SHM_FROM == build && ! -f $ACCEL/lib/libshmcoll_accel_$host.so && -f $BUILD_DIR/CMakeCache.txt ]]; then
    make -C "$BUILD_DIR" -j2 "shmcoll_accel_$host" >>"$LOG" 2>&1 || true
  fi
  if [[ -z ${BENCH[$host]:-} ]]; then
    say "$impl needs $host's benchmark; leaving it out"
  elif [[ ! -f $ACCEL/lib/libshmcoll_accel_$host.so ]]; then
    say "no $ACCEL/lib/libshmcoll_accel_$host.so (--accel DIR); leaving $impl out"
  else
    BENCH[$impl]=${BENCH[$host]} LAUNCH[$impl]=$ACCEL/lib/libshmcoll_accel_$host.so
  fi
done
if [[ -n $BASELINE ]]; then
  if [[ -x $BASELINE/bin/shmrun && -f $BASELINE/include/mpi.h ]] &&
     cc $CFLAGS -DBENCH_IMPL_NAME='"shmcoll-base"' -I"$BASELINE/include" "${SRC[@]}" -o "$BIN/bench-shmcoll-base" \
        -L"$BASELINE/lib" -Wl,-rpath,"$BASELINE/lib" -lshmcoll >>"$LOG" 2>&1; then
    BENCH[shmcoll-base]=$BIN/bench-shmcoll-base LAUNCH[shmcoll-base]=$BASELINE/bin/shmrun
    IMPLS="$IMPLS shmcoll-base"
  else say "no usable shmcoll install in $BASELINE (--baseline); leaving it out"; fi
fi

launch() { # impl nranks -> the command line prefix
  local impl=$1 n=$2
  case $impl in
    openmpi) local bind=(); ((n > CORES)) && bind=(--bind-to none)
             echo mpirun.openmpi "${AS_ROOT[@]}" --oversubscribe "${bind[@]}" -n "$n" ;;
    mpich) echo mpiexec.mpich -n "$n" ;;
    openmpi+shmcoll) local bind=(); ((n > CORES)) && bind=(--bind-to none)
             echo mpirun.openmpi "${AS_ROOT[@]}" --oversubscribe "${bind[@]}" -x "LD_PRELOAD=${LAUNCH[$impl]}" -n "$n" ;;
    mpich+shmcoll) echo mpiexec.mpich -genv LD_PRELOAD "${LAUNCH[$impl]}" -n "$n" ;;
    shmcoll) if ((ALLOC_MEM)) && [[ -z ${SHMCOLL_ALLOC_MEM:-} ]]; then
               # MPI_Alloc_mem memory comes from the segment only as far as each
               # rank's heap reaches: room for the largest alltoall at 1 MiB blocks.
               echo env SHMCOLL_ALLOC_MEM=$((4 * n + 8))m "${LAUNCH[shmcoll]}" -n "$n"
             else
               echo "${LAUNCH[shmcoll]}" -n "$n"
             fi ;;
    shmcoll-base) echo "${LAUNCH[shmcoll-base]}" -n "$n" ;;
  esac
}
ALLOC_MEM=0
for a in "${EXTRA[@]}"; do [[ $a == --alloc-mem ]] && ALLOC_MEM=1; done

# A short sanity run leaves out an implementation that cannot run yet.
ACTIVE=()
for impl in $IMPLS; do
  [[ -n ${BENCH[$impl]:-} ]] || continue
  if timeout 120 $(launch "$impl" 2) "${BENCH[$impl]}" --op "$SANITY_OPS" --sizes 8,4K --iters 3 \
       --warmup 1 >>"$LOG" 2>&1; then
    ACTIVE+=("$impl")
  else
    say "$impl failed a 2-rank sanity run (see $LOG); leaving it out"
  fi
done
((${#ACTIVE[@]})) || { say "no implementation to run"; exit 1; }
say "implementations: ${ACTIVE[*]}; ranks: $RANKS; methods: $METHODS; runs: $REPS; results: $OUT"

# shmcoll as a user runs it: with the decision table shmcoll-tune writes for
# this node (README), measured now if the install tree has none.
if [[ " ${ACTIVE[*]} " == *" shmcoll "* && $SHM_FROM == install ]]; then
  TABLE=$PREFIX/share/shmcoll/tuning.txt
  if [[ -n ${SHMCOLL_TUNING:-} ]]; then
    say "shmcoll decision table: SHMCOLL_TUNING=$SHMCOLL_TUNING"
  elif [[ -f $TABLE ]]; then
    say "shmcoll decision table: $TABLE"
  elif ((TUNE)) && [[ -x $PREFIX/bin/shmcoll-tune ]]; then
    say "no decision table in $PREFIX: running shmcoll-tune --quick first"
    if "$PREFIX/bin/shmcoll-tune" --quick --bin "$PREFIX/bin" --out "$TABLE" >>"$LOG" 2>&1; then
      say "shmcoll decision table: $TABLE (just measured)"
    else
      say "shmcoll-tune failed (see $LOG); shmcoll runs on its built-in thresholds"
    fi
  else
    say "no decision table: shmcoll runs on its built-in thresholds"
  fi
  [[ -f $TABLE ]] && cp "$TABLE" "$OUT/tuning.txt"
fi

# ---- runs, interleaved -------------------------------------------------------------
FAILED=0
for n in $RANKS; do
  for ((rep = 1; rep <= REPS; rep++)); do
    for method in $METHODS; do
    for impl in "${ACTIVE[@]}"; do
      margs=()
      [[ $method == sync ]] && margs=(--sync)
      # (a host with the accelerator runs the host's binary, which names the host: its rows are renamed)
      csv=$(raw_of "$method")
      [[ $impl == *+shmcoll ]] && csv=$OUT/accel-run.csv && rm -f "$csv"
      cmd=($(launch "$impl" "$n") "${BENCH[$impl]}" "${BENCH_ARGS[@]}" "${margs[@]}" --csv "$csv" --tag "run$rep")
      say "N=$n run $rep/$REPS $method $impl: ${cmd[*]}"
      t0=$SECONDS
      rc=0
      timeout "$TIMEOUT" "${cmd[@]}" >>"$LOG" 2>&1 || rc=$?
      if [[ $impl == *+shmcoll && -f $csv ]]; then
        awk -F, -v OFS=, -v to="$impl" '$1 != "impl" { $1 = to } { print }' "$csv" >>"$(raw_of "$method")"
        rm -f "$csv"
      fi
      if ((rc)); then
        say "  FAILED (exit $rc$( ((rc == 124)) && echo ", timed out")); its rows may be partial"
        FAILED=$((FAILED + 1))
      fi
      say "  $((SECONDS - t0)) s"
    done
    done
  done
done

# STREAM-style bandwidth of the node once, at 2 ranks, for the record.
first=${ACTIVE[0]}
timeout 600 $(launch "$first" 2) "${BENCH[$first]}" --membw --quick --op memcpy --sizes 1M \
  --csv "$OUT/membw.csv" --tag membw >>"$LOG" 2>&1 || say "membw run failed"

# ---- summary and plots ---------------------------------------------------------------
: >"$OUT/summary.txt"
for method in $METHODS; do
  dir=$(dir_of "$method")
  [[ -s $(raw_of "$method") ]] || { say "no rows for method $method"; continue; }
  {
    echo
    if [[ $method == sync ]]; then
      echo "######## method: a barrier before every call, only the calls timed ($dir) ########"
    else
      echo "######## method: calls back to back ($dir) ########"
    fi
    python3 "$REPO/perf/bench/summarize.py" "$(raw_of "$method")" "$dir"
  } | tee -a "$OUT/summary.txt"
done
if [[ -f $OUT/membw.csv ]]; then
  echo; echo "== node memory bandwidth, 2 ranks at once (GB/s, STREAM counting; $first's run) =="
  awk -F, 'NR>1 && $3 ~ /^stream_/ {printf "%-14s %10d B/array  %8.2f GB/s per rank  %8.2f GB/s aggregate\n", $3, $5, $11/1000, $12/1000}' \
    "$OUT/membw.csv"
fi | tee -a "$OUT/summary.txt"
if command -v gnuplot >/dev/null; then
  # Per method (back to back in <out>, sync in <out>/sync), one plot per rank
  # count and buffer kind measured (hot: latency_N<n>.png, cold:
  # latency_N<n>_cold.png) of the all-to-all and all-gather collectives, one
  # of the rooted and reducing ones (..._rooted.png) and one of the
  # neighbourhood collectives when they ran (--neighbor: ..._neighbor.png),
  # of put and get (..._rma.png) and of accumulate (..._rma_acc.png) when the
  # one-sided ops ran; each with the panels of the operations that ran.
  present() { # medians ranks cold "ops" -> those of ops with rows
    awk -F, -v n="$2" -v c="$3" -v want="$4" '
      BEGIN { k = split(want, w, " ") }
      NR > 1 && $2 == n && $4 == c { seen[$1] = 1 }
      END { s = ""; for (i = 1; i <= k; i++) if (w[i] in seen) s = s (s == "" ? "" : " ") w[i]; print s }' "$1"
  }
  declare -A PANELS=(
    [main]="alltoall alltoallv alltoallv_skew alltoallw allgather allgatherv"
    [_rooted]="bcast reduce allreduce gather scatter reduce_scatter_block"
    [_neighbor]="cart_alltoall graph_alltoall cart_allgather graph_allgather ring_alltoall ring_allgather"
    [_rma]="put_fence put_lock put_lockall get_fence get_lock get_lockall"
    [_rma_acc]="acc_fence acc_lock acc_lockall")
  for method in $METHODS; do
    dir=$(dir_of "$method") med=$(dir_of "$method")/medians.csv
    [[ -f $med ]] || continue
    for n in $RANKS; do
      for c in 0 1; do
        for kind in main _rooted _neighbor _rma _rma_acc; do
          ops=$(present "$med" "$n" "$c" "${PANELS[$kind]}")
          [[ -n $ops ]] || continue
          [[ $kind == main ]] && kind=
          if ((c)); then png=$dir/latency_N${n}_cold$kind.png; else png=$dir/latency_N$n$kind.png; fi
          gnuplot -c "$REPO/perf/plot.gp" "$med" "$png" "$n" "$c" "$ops" >>"$LOG" 2>&1 &&
            echo "plot: $png" || say "plot $png failed (see $LOG)"
        done
      done
    done
  done
else
  say "gnuplot not found: no plots"
fi
ln -sfn "$OUT" "$REPO/perf/results/latest" 2>/dev/null || true
say "done: $OUT ($FAILED failed runs)"
