#!/usr/bin/env bash
# shmcoll-tune's rules, from made-up measurements with known answers
# (shmcoll-tune --from-raw): each rule must come out exactly as expected.
# Usage: tune_rules.sh <path to perf/tune.sh>
set -euo pipefail
TUNE=$1
W=$(mktemp -d /tmp/shmcoll-tune-test.XXXXXX)
trap 'rm -rf "$W"' EXIT

# row <tag> <op> <ranks> <bytes> <us>...: one CSV row per value (the
# medians of three runs are the middle values given)
row() {
  local tag=$1 op=$2 n=$3 b=$4; shift 4
  for us in "$@"; do echo "$tag,$op,$n,$b,$us"; done
}
{
  echo "tag,op,ranks,bytes,avg_us"
  # alltoall at 2 ranks: the pulls win from 64 KiB on (a win at 4 KiB with a
  # loss after it does not count).
  row stream alltoall 2 4096 1.0 1.1 9.0;  row pull alltoall 2 4096 0.9 0.95 0.1
  row stream alltoall 2 16384 2.0 2.0 2.0; row pull alltoall 2 16384 3.0 3.0 3.0
  row stream alltoall 2 65536 8.0 8.0 8.0; row pull alltoall 2 65536 7.0 7.0 70.0
  row stream alltoall 2 262144 30 30 30;   row pull alltoall 2 262144 20 20 20
  # allgather at 2 ranks: the pulls lose at the largest size: off.
  row stream allgather 2 65536 8.0 8.0 8.0; row pull allgather 2 65536 7.0 7.0 7.0
  row stream allgather 2 262144 30 30 30;   row pull allgather 2 262144 31 31 31
  # 8 ranks: the skewed alltoallv's pulls win for 64-256 KiB (and by a little
  # at 4 KiB), so the band is 8 x 64 KiB up to 8 x 1 MiB.
  for s in "4096 10 9.8" "16384 12 30" "65536 120 80" "262144 260 200" "1048576 440 660"; do
    set -- $s
    row sstream alltoallv_skew 8 "$1" "$2" "$2" "$2"; row spull alltoallv_skew 8 "$1" "$3" "$3" "$3"
  done
  # 16 ranks: the pulls win from 256 KiB to the end: no upper end.
  for s in "65536 120 130" "262144 260 200" "1048576 440 400"; do
    set -- $s
    row sstream alltoallv_skew 16 "$1" "$2" "$2" "$2"; row spull alltoallv_skew 16 "$1" "$3" "$3" "$3"
  done
  # 32 ranks: a 2% win only: off.
  for s in "65536 100 98" "262144 260 270"; do
    set -- $s
    row sstream alltoallv_skew 32 "$1" "$2" "$2" "$2"; row spull alltoallv_skew 32 "$1" "$3" "$3" "$3"
  done
  # allreduce at 8 ranks: one exchange wins up to 1 KiB input (x 7 others).
  for s in "256 5 9" "1024 6 9" "4096 20 10" "16384 12 30"; do
    set -- $s
    row onex allreduce 8 "$1" "$2" "$2" "$2"; row twox allreduce 8 "$1" "$3" "$3" "$3"
  done
  # reduce at 8 ranks, two rounds each: at 16 KiB one run of the one
  # exchange lost its core (20 and 342 us: a mean of 181 against 50.5), but
  # the two rounds were not faster in both, nor at 128 KiB (91 against 99
  # in round 1): the one exchange keeps every size measured (128 KiB x 7).
  row onex reduce 8 2048 2 3;      row twox reduce 8 2048 31 67
  row onex reduce 8 16384 20 342;  row twox reduce 8 16384 43 58
  row onex reduce 8 131072 91 579; row twox reduce 8 131072 99 166
  # waits at 8 ranks (above 2 cores): 0:1 has the smallest geometric mean.
  row wait50:2 alltoall 8 8 10 10 10; row wait50:2 allgather 8 8 10 10 10
  row wait0:1 alltoall 8 8 5 5 5;     row wait0:1 allgather 8 8 12 12 12
  row wait200:4 alltoall 8 8 40 40 40; row wait200:4 allgather 8 8 3 3 3
  # slot sizes at 2 ranks: 1 MiB has the smallest geometric mean (22.2 us),
  # 256 KiB is within 5% of it (22.7) and 64 KiB is not (23.5, though it
  # wins one case of two), so 256 KiB.  They also give alltoall a 1 MiB size
  # that the stream/pull rows lack, which cma_min alltoall must skip.
  row slot65536 alltoall 2 65536 5 5 5;     row slot65536 alltoall 2 1048576 110 110 110
  row slot262144 alltoall 2 65536 6 6 6;    row slot262144 alltoall 2 1048576 86 86 86
  row slot1048576 alltoall 2 65536 5.5 5.5 5.5; row slot1048576 alltoall 2 1048576 90 90 90
  # sendrecv at 2 ranks: the pulls win from 16 KiB.
  for s in "4096 3 4" "16384 8 4" "65536 25 10"; do
    set -- $s
    row p2pstream sendrecv 2 "$1" "$2" "$2" "$2"; row p2ppull sendrecv 2 "$1" "$3" "$3" "$3"
  done
} >"$W/raw.csv"

bash "$TUNE" --from-raw "$W/raw.csv" --cores 2 --out "$W/table.txt"
grep -v '^#' "$W/table.txt" | grep . >"$W/rules.txt"
cat >"$W/expected.txt" <<'END'
cma_min alltoall 2 65536
cma_min allgather 2 off
p2p_cma_min * 2 16384
slot_bytes * 2 262144
cma_solo_min alltoallv 3 524288
cma_solo_max alltoallv 3 8388608
cma_solo_min alltoallw 3 524288
cma_solo_max alltoallw 3 8388608
reduce_small allreduce 3 7168
reduce_small reduce 3 917504
wait_spins * 3 0
wait_yields * 3 1
cma_solo_min alltoallv 16 4194304
cma_solo_max alltoallv 16 off
cma_solo_min alltoallw 16 4194304
cma_solo_max alltoallw 16 off
cma_solo_min alltoallv 32 off
cma_solo_max alltoallv 32 off
cma_solo_min alltoallw 32 off
cma_solo_max alltoallw 32 off
END
if ! diff <(sort "$W/expected.txt") <(sort "$W/rules.txt"); then
  echo "tune_rules: the rules differ from the expected ones (< expected, > written); the table:" >&2
  cat "$W/table.txt" >&2
  exit 1
fi
echo "tune_rules: $(wc -l <"$W/rules.txt") rules as expected"
