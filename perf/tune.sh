#!/usr/bin/env bash
# shmcoll-tune -- measure this node and write the decision table that the
# runtime loads (format and precedence: src/common/tuning.h; installed as
# <prefix>/bin/shmcoll-tune).
#
# Each threshold is chosen from measurements of the two choices it switches
# between, run interleaved (A B A B ...) several times under shmrun with
# shmcoll-bench, comparing medians:
#   cma_min      per collective and rank count: the mailbox stream (two
#                copies; SHMCOLL_PULL=off) against single-copy pulls
#                (SHMCOLL_CMA_MIN=1); the smallest size from which the pulls
#                win at every larger size measured, else "off".
#   cma_solo_min, cma_solo_max
#                for alltoallv and alltoallw, per rank count from 3: the
#                skewed alltoallv (one long block) streamed against its long
#                block pulled (SHMCOLL_CMA_SOLO_MIN=1); the band of sizes in
#                a row where the pulls win with the largest summed relative
#                gain, from its smallest size to the next size measured
#                ("off": no upper end), in bytes of that block; "off" when
#                the pulls never win by 5% in all.  Measured also at 16 x the
#                cores (--skew-ranks), where the stream's handoffs between two
#                ranks wait on many more, for rules from that count up.
#   reduce_small per reduction and rank count: one exchange of whole inputs
#                against reduce-scatter + gather; the largest input, times the
#                other ranks, up to which the two-round form did not win at
#                that or any smaller size measured, where winning means being
#                faster in every round (the runs are interleaved).  The
#                one exchange keeps a size unless the evidence is that
#                plain: with more ranks than cores a wrong second round costs
#                a whole scheduling round (MPI_Reduce of 4 KiB at 8 ranks on
#                2 cores: 4 us one exchange, 29 us two rounds), and on an
#                Intel Xeon VM the median of two runs, one of them slow, had
#                chosen it where four more runs had the one exchange faster
#                in each.
#   p2p_cma_min  MPI_Sendrecv: rendezvous data streamed through cells against
#                one single-copy pull, as cma_min.
#   slot_bytes   per rank count: the mailbox slot size (SHMCOLL_SLOT_BYTES,
#                64 KiB to 1 MiB), scored by the geometric mean of streamed
#                (SHMCOLL_PULL=off) alltoall, allgather and skewed
#                alltoallv latencies from 64 KiB to 1 MiB: the smallest size
#                within 5% of the best (a larger slot costs memory, and with
#                many more ranks than measured, longer waits per handoff).
#   wait_spins, wait_yields
#                for rank counts above the core count only: a few spin/yield
#                budgets before a waiting rank sleeps, scored by the geometric
#                mean of the latencies of alltoall, allgather, allreduce and
#                the skewed alltoallv (whose ranks wait long for one pair)
#                up to 64 KiB.
# The table records each rule's evidence (the medians) in comments.
# cma_min, cma_solo_min/max and p2p_cma_min are about private buffers, so
# they are measured with SHMCOLL_SHARED_MALLOC=0 (the benchmark's buffers
# would otherwise be in the shared malloc heap, which is pulled with a plain
# copy at any size, whatever these thresholds say).
#
# Usage: shmcoll-tune [options]
#   --ranks "2 8"    rank counts to tune for (default: the core count, and
#                    4 x the core count for oversubscribed runs)
#   --quick          fewer sizes and a shorter budget per size (a minute or two
#                    on 2 cores)
#   --reps N         interleaved runs per choice (default 3; 2 with --quick)
#   --out FILE       where to write (default <prefix>/share/shmcoll/tuning.txt,
#                    the file the library loads; - for standard output)
#   --bin DIR        where shmrun and shmcoll-bench are (default: this script's
#                    directory when installed, else <repo>/install/bin)
#   --keep DIR       keep the raw CSV there (tune-raw.csv)
#   --from-raw FILE  measure nothing: write the table from a raw CSV that
#                    --keep kept
#   --cores N        the core count the rules assume (default: nproc)
#   --skew-ranks "N" rank counts at which only the skewed alltoallv is measured
#                    (default: 16 x the cores when --ranks is not given; "" for none)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
RANKS="" QUICK=0 REPS="" OUT="" BIN="" KEEP="" FROMRAW="" CORES="" SKEWRANKS=default
while (($#)); do
  case $1 in
    --ranks) RANKS=$2; shift ;;
    --quick) QUICK=1 ;;
    --reps) REPS=$2; shift ;;
    --out) OUT=$2; shift ;;
    --bin) BIN=$2; shift ;;
    --keep) KEEP=$2; shift ;;
    --from-raw) FROMRAW=$2; shift ;;
    --cores) CORES=$2; shift ;;
    --skew-ranks) SKEWRANKS=$2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "shmcoll-tune: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

if [[ -z $BIN ]]; then
  if [[ -x $HERE/shmrun && -x $HERE/shmcoll-bench ]]; then BIN=$HERE
  else BIN=$(cd "$HERE/.." && pwd)/install/bin; fi
fi
if [[ -z $FROMRAW ]]; then
  for t in shmrun shmcoll-bench; do
    [[ -x $BIN/$t ]] || { echo "shmcoll-tune: $BIN/$t not found (build and install first, or --bin DIR)" >&2; exit 1; }
  done
elif [[ ! -r $FROMRAW ]]; then
  echo "shmcoll-tune: cannot read $FROMRAW" >&2; exit 2
fi
[[ -n $OUT ]] || OUT=$(cd "$BIN/.." && pwd)/share/shmcoll/tuning.txt

[[ -n $CORES ]] || CORES=$(nproc)
[[ $CORES =~ ^[1-9][0-9]*$ ]] || { echo "shmcoll-tune: bad core count '$CORES'" >&2; exit 2; }
if [[ $SKEWRANKS == default ]]; then
  if [[ -n $RANKS ]]; then SKEWRANKS=""; else SKEWRANKS=$((16 * CORES)); fi
fi
[[ -n $RANKS ]] || RANKS="$CORES $((4 * CORES))"
for n in $RANKS $SKEWRANKS; do [[ $n =~ ^[1-9][0-9]*$ && $n -ge 2 ]] || { echo "shmcoll-tune: bad rank count '$n' (at least 2)" >&2; exit 2; }; done
if ((QUICK)); then
  REPS=${REPS:-2} TIME=0.02
  BIG="4096,16384,65536,262144,1048576" SMALL="8,256,4096,65536" RED="256,2048,16384,131072"
else
  REPS=${REPS:-3} TIME=0.1
  BIG="2048,4096,8192,16384,32768,65536,131072,262144,524288,1048576,4194304"
  SMALL="8,256,4096,65536" RED="64,256,1024,4096,16384,65536,262144"
fi
COLLS=alltoall,alltoallv,alltoallw,allgather,allgatherv,bcast

WORK=$(mktemp -d /tmp/shmcoll-tune.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
RAW=$WORK/raw.csv

# run <variant> <ranks> <env...> -- <bench args...>: one benchmark run, its
# rows tagged with the variant.
run() {
  local variant=$1 n=$2; shift 2
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  echo "  N=$n $variant: ${envs[*]:-} $*" >&2
  env ${envs[@]+"${envs[@]}"} "$BIN/shmrun" -n "$n" "$BIN/shmcoll-bench" --time "$TIME" --no-check \
    --csv "$WORK/run.csv" --tag "$variant" "$@" >/dev/null
  if [[ -s $RAW ]]; then tail -n +2 "$WORK/run.csv" >>"$RAW"; else cat "$WORK/run.csv" >"$RAW"; fi
  rm -f "$WORK/run.csv"
}

# skew <ranks> <sizes>: the skewed alltoallv streamed, and with its long block
# pulled (cma_solo_min, cma_solo_max).
skew() {
  run sstream "$1" SHMCOLL_SHARED_MALLOC=0 SHMCOLL_PULL=off -- --op alltoallv_skew --sizes "$2"
  run spull "$1" SHMCOLL_SHARED_MALLOC=0 SHMCOLL_CMA_MIN=1g SHMCOLL_CMA_SOLO_MIN=1 -- --op alltoallv_skew --sizes "$2"
}

# The tunables must not come from the environment or an old table while
# measuring: every setting with a decision-table key, as shmrun's settings
# table lists them (src/common/settings.def), and the ones the runs set.
TUNED=""
if [[ -z $FROMRAW ]]; then
  TUNED=$("$BIN/shmrun" --help-settings | awk '/^SHMCOLL_/ { v = $1 } /decision-table key/ { print v }')
  [[ $TUNED == *SHMCOLL_CMA_MIN* ]] || { echo "shmcoll-tune: $BIN/shmrun --help-settings lists no tunables" >&2; exit 1; }
fi
# (word splitting wanted: one name per word)
# shellcheck disable=SC2086
unset $TUNED SHMCOLL_SHARED_MALLOC SHMCOLL_SHARED_MALLOC_MIN SHMCOLL_ALGORITHM SHMCOLL_PULL SHMCOLL_CMA
for v in $(env | sed -n 's/^\(SHMCOLL_ALGORITHM_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
export SHMCOLL_TUNING=none

WAITS="50:2 0:1 0:4 0:8 0:16 50:16"
SLOTS="65536 131072 262144 524288 1048576"
if [[ -n $FROMRAW ]]; then
  RAW=$FROMRAW REPS=0
  RANKS=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "ranks") c = i; next } c { print $c }' "$RAW" | sort -nu | xargs)
else
  echo "shmcoll-tune: ranks $RANKS, $REPS interleaved runs per choice" >&2
fi
for ((rep = 1; rep <= REPS; rep++)); do
  echo "round $rep of $REPS" >&2
  for n in $RANKS; do
    run stream "$n" SHMCOLL_SHARED_MALLOC=0 SHMCOLL_PULL=off -- --op "$COLLS" --sizes "$BIG"
    run pull "$n" SHMCOLL_SHARED_MALLOC=0 SHMCOLL_CMA_MIN=1 -- --op "$COLLS" --sizes "$BIG"
    ((n < 3)) || skew "$n" "$BIG"
    for sl in $SLOTS; do
      run "slot$sl" "$n" SHMCOLL_SLOT_BYTES="$sl" SHMCOLL_PULL=off -- \
        --op alltoall,allgather$( ((n >= 3)) && echo ,alltoallv_skew) --sizes 65536,262144,1048576
    done
    run onex "$n" SHMCOLL_REDUCE_SMALL=1g -- --op reduce,allreduce --sizes "$RED"
    run twox "$n" SHMCOLL_REDUCE_SMALL=0 -- --op reduce,allreduce --sizes "$RED"
    if ((n > CORES)); then
      for w in $WAITS; do
        run "wait$w" "$n" SHMCOLL_WAIT_SPINS="${w%%:*}" SHMCOLL_WAIT_YIELDS="${w##*:}" -- \
          --op alltoall,allgather,allreduce,alltoallv_skew --sizes "$SMALL"
      done
    fi
  done
  for n in $SKEWRANKS; do
    ((n < 3)) || skew "$n" 16384,65536,262144,1048576
  done
  n0=${RANKS%% *}
  run p2pstream "$n0" SHMCOLL_SHARED_MALLOC=0 SHMCOLL_P2P_CMA_MIN=1g -- --op sendrecv --sizes "$BIG"
  run p2ppull "$n0" SHMCOLL_SHARED_MALLOC=0 SHMCOLL_P2P_CMA_MIN=1 -- --op sendrecv --sizes "$BIG"
done
[[ -z $KEEP || -n $FROMRAW ]] || { mkdir -p "$KEEP" && cp "$RAW" "$KEEP/tune-raw.csv"; }

# Medians per (tag, op, ranks, bytes) of avg_us, then the rules.
TABLE=$WORK/tuning.txt
{
  echo "# shmcoll decision table, written by shmcoll-tune $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $CORES cores online,"\
       "$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l) NUMA node(s)"
  if [[ -n $FROMRAW ]]; then echo "# command: shmcoll-tune --from-raw $FROMRAW --cores $CORES (ranks $RANKS)"
  else echo "# command: shmcoll-tune --ranks \"$RANKS\" --skew-ranks \"$SKEWRANKS\" --reps $REPS$( ((QUICK)) && echo ' --quick')"; fi
  echo "# format: <key> <op or *> <from ranks> <value>  (src/common/tuning.h)"
  awk -F, -v cores="$CORES" -v waits="$WAITS" -v slots="$SLOTS" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
    {
      k = $col["tag"] SUBSEP $col["op"] SUBSEP $col["ranks"] SUBSEP $col["bytes"]
      cnt[k]++; val[k, cnt[k]] = $col["avg_us"] + 0
      ops[$col["op"]] = 1; ranks[$col["ranks"]] = 1; sizes[$col["op"], $col["bytes"]] = 1
    }
    function median(k,   n, i, j, t, a) {
      n = cnt[k]; if (!n) return -1
      for (i = 1; i <= n; i++) a[i] = val[k, i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    # sizes measured for op, ascending, into list[1..]; returns the count
    function sizelist(op,   n, s, i, j, t, k) {
      n = 0
      for (k in sizes) { split(k, s, SUBSEP); if (s[1] == op) list[++n] = s[2] + 0 }
      for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
      return n
    }
    # smallest size from which tag b beats tag a at every larger size: "off" when never
    # (sizes where either tag has no measurement are skipped)
    function crossover(a, b, op, n,   m, i, from, ev, ma, mb, chain) {
      m = sizelist(op); from = "off"; ev = ""; chain = 1
      for (i = m; i >= 1; i--) {
        ma = median(a SUBSEP op SUBSEP n SUBSEP list[i]); mb = median(b SUBSEP op SUBSEP n SUBSEP list[i])
        if (ma < 0 || mb < 0) continue
        ev = sprintf(" %s %.3g/%.3g", list[i], ma, mb) ev
        if (mb < ma && chain) from = list[i]
        else chain = 0
      }
      evidence = ev
      return from
    }
    # 1 when tag b was faster than tag a at size s in every round (round j
    # of a ran next to round j of b); by medians if the rounds do not pair up
    function beatsEvery(a, b, op, n, s,   ka, kb, j) {
      ka = a SUBSEP op SUBSEP n SUBSEP s; kb = b SUBSEP op SUBSEP n SUBSEP s
      if (!cnt[ka] || cnt[ka] != cnt[kb]) return median(kb) < median(ka)
      for (j = 1; j <= cnt[ka]; j++) if (val[kb, j] >= val[ka, j]) return 0
      return 1
    }
    # the geometric mean of the medians of every case of `tag` at n ranks,
    # -1 when there is none; gcases gets their number
    function gmean(tag, n,   k, p, s, c) {
      s = 0; c = 0
      for (k in cnt) {
        split(k, p, SUBSEP)
        if (p[1] != tag || p[3] != n) continue
        s += log(median(k)); c++
      }
      gcases = c
      return c ? exp(s / c) : -1
    }
    # the run of sizes in a row where tag b beats tag a with the largest
    # summed relative gain: into bandlo (its first size) and bandhi (the next
    # size measured, "off" past the last); both "off" when that gain is
    # under 5%
    function band(a, b, op, n,   m, i, ma, mb, ev, lo, s, best, bl, bh) {
      m = sizelist(op); ev = ""; lo = 0; s = 0; best = 0
      for (i = 1; i <= m; i++) {
        ma = median(a SUBSEP op SUBSEP n SUBSEP list[i]); mb = median(b SUBSEP op SUBSEP n SUBSEP list[i])
        if (ma < 0 || mb < 0) continue
        ev = ev sprintf(" %s %.3g/%.3g", list[i], ma, mb)
        if (mb >= ma) { lo = 0; continue }
        if (!lo) { lo = i; s = 0 }
        s += (ma - mb) / ma
        if (s > best) { best = s; bl = lo; bh = i }
      }
      evidence = ev
      bandlo = bandhi = "off"
      if (best < 0.05) return
      bandlo = list[bl]
      if (bh < m) bandhi = list[bh + 1]
    }
    END {
      nr = 0; for (n in ranks) rl[++nr] = n + 0
      for (i = 2; i <= nr; i++) for (j = i; j > 1 && rl[j - 1] > rl[j]; j--) { t = rl[j]; rl[j] = rl[j - 1]; rl[j - 1] = t }
      split("alltoall alltoallv alltoallw allgather allgatherv bcast", colls, " ")
      for (r = 1; r <= nr; r++) {
        n = rl[r]
        # Rules from the smallest count measured cover the counts below it
        # too: from 2, or from cores + 1 when it is already oversubscribed
        # (the counts up to the cores then keep the built-in defaults).
        from = n
        if (r == 1) from = n > cores ? cores + 1 : 2
        else if (n > cores && rl[r - 1] <= cores) from = cores + 1
        printf "\n# %d ranks%s: rules for %d ranks and up\n", n, (n > cores ? " (more than the cores)" : ""), from
        for (c = 1; c <= 6; c++) {
          op = colls[c]
          if (!((op) in ops)) continue
          v = crossover("stream", "pull", op, n)
          if (evidence == "") continue
          printf "# %s: bytes stream/pull us:%s\n", op, evidence
          printf "cma_min %s %d %s\n", op, from, v
        }
        # The skewed alltoallv: rank 0 sends rank n-1 one block of n x size
        # bytes, its only block longer than a slot.
        if (n >= 3 && ("alltoallv_skew" in ops)) {
          band("sstream", "spull", "alltoallv_skew", n)
          if (evidence != "") {
            printf "# alltoallv_skew (the long block is %d x bytes): bytes stream/pull us:%s\n", n, evidence
            if (bandlo != "off") bandlo = bandlo * n
            if (bandhi != "off") bandhi = bandhi * n
            for (c = 1; c <= 2; c++) {
              op = c == 1 ? "alltoallv" : "alltoallw"
              printf "cma_solo_min %s %d %s\ncma_solo_max %s %d %s\n", op, from, bandlo, op, from, bandhi
            }
          }
        }
        for (c = 1; c <= 2; c++) {
          op = c == 1 ? "reduce" : "allreduce"
          if (!((op) in ops)) continue
          m = sizelist(op); best = 0; ok = 1; ev = ""
          for (i = 1; i <= m; i++) {
            a = median("onex" SUBSEP op SUBSEP n SUBSEP list[i]); b = median("twox" SUBSEP op SUBSEP n SUBSEP list[i])
            if (a < 0 || b < 0) continue
            ev = ev sprintf(" %s %.3g/%.3g", list[i], a, b)
            if (ok && !beatsEvery("onex", "twox", op, n, list[i])) best = list[i] * (n - 1); else ok = 0
          }
          if (ev == "") continue
          printf "# %s: bytes one-exchange/two us:%s\n", op, ev
          printf "reduce_small %s %d %d\n", op, from, best
        }
        ns = split(slots, sll, " "); bests = -1
        for (w = 1; w <= ns; w++) {
          gm[w] = gmean("slot" sll[w], n)
          if (gm[w] < 0) continue
          printf "# slot %s bytes: geometric mean %.3g us over %d cases\n", sll[w], gm[w], gcases
          if (bests < 0 || gm[w] < bests) bests = gm[w]
        }
        for (w = 1; w <= ns && bests >= 0; w++)
          if (gm[w] >= 0 && gm[w] <= 1.05 * bests) { printf "slot_bytes * %d %s\n", from, sll[w]; break }
        if (n > cores) {
          nw = split(waits, wl, " "); bestw = ""; bests = 0
          for (w = 1; w <= nw; w++) {
            g = gmean("wait" wl[w], n)
            if (g < 0) continue
            printf "# wait %s (spins:yields): geometric mean %.3g us over %d cases\n", wl[w], g, gcases
            if (bestw == "" || g < bests) { bestw = wl[w]; bests = g }
          }
          if (bestw != "") {
            split(bestw, bw, ":")
            printf "wait_spins * %d %s\nwait_yields * %d %s\n", from, bw[1], from, bw[2]
          }
        }
        if ("sendrecv" in ops) {
          v = crossover("p2pstream", "p2ppull", "sendrecv", n)
          if (evidence != "") {
            printf "# sendrecv: bytes stream/pull us:%s\n", evidence
            printf "p2p_cma_min * %d %s\n", from, v
          }
        }
      }
    }' "$RAW"
} >"$TABLE"

if [[ $OUT == - ]]; then
  cat "$TABLE"
else
  mkdir -p "$(dirname "$OUT")"
  cp "$TABLE" "$OUT"
  echo "shmcoll-tune: wrote $OUT ($(grep -cv '^\(#\|$\)' "$OUT") rules); SHMCOLL_VERBOSE=1 shows it loaded" >&2
fi
