#!/usr/bin/env bash
# Builds a test program with a host MPI's mpicc (Open MPI or MPICH, from
# Debian) and runs it under that host's launcher through shmcoll-accel, with
# the accelerator preloaded and SHMCOLL_ACCEL_REPORT=1.  Passes when the
# program passes (the programs check their results byte for byte) and every
# rank's report line says what was expected:
#   taken     every rank took at least one call (T > 0); with
#             SHMCOLL_FAKE_NODES > 1, also at least one by the hierarchical
#             path ("shmcoll-accel: rank R: H of them across nodes", H > 0)
#   taken:MPI_X,MPI_Y
#             and every rank took at least one call of each function named
#             (SHMCOLL_ACCEL_REPORT=calls: a second line with the calls taken
#             per function)
#   declined  every rank took none and passed some (T = 0, P > 0)
#   killed    the program must fail (a rank kills itself): a nonzero exit,
#             no report expected; with SHMCOLL_ACCEL_EXPECT_MESSAGE=text, some
#             line of the job's output must contain the text (each + a space)
# With SHMCOLL_ACCEL_EXPECT_TYPES=decoded in the environment, every rank must
# also have met derived types and decoded every one into the engine's
# description (none packed by the host).  With SHMCOLL_ACCEL_EXPECT_DIRECT=1,
# every rank must have taken an alltoall whose blocks between nodes went
# direct ("shmcoll-accel: rank R: D alltoalls with their blocks between nodes
# direct", D > 0); with SHMCOLL_ACCEL_EXPECT_SINGLE=1, calls by single copy
# ("shmcoll-accel: rank R: C of them by single copy", C > 0), and with =0 none; with
# SHMCOLL_ACCEL_EXPECT_EAGER=1, eager bcasts or reduces ("E of them eager",
# E > 0), and with =0 none; with SHMCOLL_ACCEL_EXPECT_HEAP=1, some rank must
# have read single-copy blocks out of its senders' shared malloc heaps ("B
# blocks read out of the senders' shared heaps", B > 0; a bcast's root and a
# reduce's other ranks read nothing), and with =0 no rank.  With
# SHMCOLL_ACCEL_EXPECT_PUSHED=1, some rank must have sent single-copy blocks
# through the segment because process_vm_readv was judged slow ("P calls sent
# their single-copy blocks through the segment", P > 0), and with =0 no rank.
#
#   tests/accel/run.sh <openmpi|mpich> <accel-dir> <taken[:MPI_X,...]|declined|killed> <source.c> <build-dir> <nranks> [args...]
#
# <accel-dir> holds bin/shmcoll-accel and lib/libshmcoll_accel_<host>.so.
# Exits 77 (CTest: skipped) when the host's mpicc or launcher is not
# installed, or its accelerator was not built, or when
# SHMCOLL_ACCEL_NEEDS_CROWD=1 and the processes do not outnumber the CPUs.
set -euo pipefail
lib=$1 accel=$2 expect=$3 src=$4 out=$5 np=$6
shift 6
calls=""
if [[ $expect == *:* ]]; then
  calls=${expect#*:} expect=${expect%%:*}
fi
cc=mpicc.$lib
case $lib in
  openmpi) run=mpirun.openmpi ;;
  mpich) run=mpiexec.mpich ;;
  *)
    echo "accel: unknown host '$lib' (openmpi or mpich)" >&2
    exit 2
    ;;
esac
if ! command -v "$cc" >/dev/null || ! command -v "$run" >/dev/null; then
  echo "accel: $cc or $run is not installed: skipped"
  exit 77
fi
if [ ! -f "$accel/lib/libshmcoll_accel_$lib.so" ]; then
  echo "accel: $accel/lib/libshmcoll_accel_$lib.so was not built: skipped"
  exit 77
fi
if [ "${SHMCOLL_ACCEL_NEEDS_CROWD:-}" = 1 ] && [ "$np" -le "$(getconf _NPROCESSORS_ONLN)" ]; then
  echo "accel: $np processes do not outnumber this machine's $(getconf _NPROCESSORS_ONLN) CPUs: skipped"
  exit 77
fi
mkdir -p "$out"
prog=$out/$(basename "$src" .c)
# Several tests build the same program: build into a private name, then move.
tmp=$(mktemp "$prog.XXXXXX")
"$cc" -O1 -g -I"$(dirname "$0")/../mpi" -o "$tmp" "$src" -lm
mv -f "$tmp" "$prog"

log=$(mktemp "$out/stderr.XXXXXX")
# Open MPI's shared-memory files go to a directory of this run's own, removed at the end (deleting
# vader_segment.* in /dev/shm instead would pull them from under other jobs running at the time)
vader=$(mktemp -d /dev/shm/accel-run.XXXXXX)
trap 'rm -f "$log"; rm -rf "$vader"' EXIT
export SHMCOLL_ACCEL_REPORT=${calls:+calls} SHMCOLL_ACCEL_SHOW=1
[ -n "$SHMCOLL_ACCEL_REPORT" ] || SHMCOLL_ACCEL_REPORT=1
rc=0
case $lib in
  openmpi)
    # Root in CI; more ranks than cores; the shared-memory and self transports only.
    export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_mpi_yield_when_idle=1 OMPI_MCA_btl_vader_backing_directory=$vader
    "$accel/bin/shmcoll-accel" "$run" --allow-run-as-root --oversubscribe --bind-to none -np "$np" "$prog" "$@" \
      2> >(tee "$log" >&2) || rc=$?
    ;;
  mpich)
    "$accel/bin/shmcoll-accel" "$run" -n "$np" "$prog" "$@" 2> >(tee "$log" >&2) || rc=$?
    ;;
esac
wait  # (for tee)
leftover() { find /dev/shm -maxdepth 1 -name 'shmcoll-accel-*' -user "$(id -u)" | grep -q .; }
if [ "$expect" = killed ]; then
  if [ "$rc" -eq 0 ]; then
    echo "accel: $prog exited with 0, expected the job to be ended"
    exit 1
  fi
  if leftover; then
    echo "accel: a segment name was left in /dev/shm"
    exit 1
  fi
  # SHMCOLL_ACCEL_EXPECT_MESSAGE: a line of the job's output must contain it, each + a space (the reason it ended)
  want=${SHMCOLL_ACCEL_EXPECT_MESSAGE:-}
  want=${want//+/ }
  if [ -n "$want" ] && ! grep -qF -- "$want" "$log"; then
    echo "accel: the job ended without saying: $want"
    exit 1
  fi
  echo "accel: $lib $(basename "$prog") n=$np: the job ended (exit $rc), nothing left in /dev/shm"
  exit 0
fi
if [ "$rc" -ne 0 ]; then
  echo "accel: $prog exited with $rc"
  exit "$rc"
fi
# One report line per rank: "shmcoll-accel: rank R: T calls taken, P passed to the host MPI"
bad=0
for ((r = 0; r < np; ++r)); do
  line=$(grep -E "^shmcoll-accel: rank $r: [0-9]+ calls taken, [0-9]+ passed to the host MPI$" "$log" || true)
  if [ "$(printf '%s\n' "$line" | grep -c .)" -ne 1 ]; then
    echo "accel: rank $r printed no report line (or several)"
    bad=1
    continue
  fi
  read -r t p < <(echo "$line" | sed -E 's/.*: ([0-9]+) calls taken, ([0-9]+) passed.*/\1 \2/')
  case $expect in
    taken)
      [ "$t" -gt 0 ] || { echo "accel: rank $r took no call"; bad=1; }
      # With pretend nodes the tests run on several of them: some calls must have crossed nodes.
      if [ "${SHMCOLL_FAKE_NODES:-1}" -gt 1 ] &&
        ! grep -qE "^shmcoll-accel: rank $r: [1-9][0-9]* of them across nodes$" "$log"; then
        echo "accel: rank $r took no call across nodes (SHMCOLL_FAKE_NODES=$SHMCOLL_FAKE_NODES)"
        bad=1
      fi
      ;;
    declined) [ "$t" -eq 0 ] && [ "$p" -gt 0 ] || { echo "accel: rank $r: expected every call declined: $line"; bad=1; } ;;
  esac
  # SHMCOLL_ACCEL_EXPECT_TYPES=decoded: the rank met derived types and the engine decoded every one
  # ("shmcoll-accel: rank R: derived types: D decoded, H packed by the host", D > 0, H = 0)
  if [ "${SHMCOLL_ACCEL_EXPECT_TYPES:-}" = decoded ] &&
    ! grep -qE "^shmcoll-accel: rank $r: derived types: [1-9][0-9]* decoded, 0 packed by the host$" "$log"; then
    echo "accel: rank $r: expected every derived type decoded: $(grep -E "^shmcoll-accel: rank $r: derived" "$log" || echo none)"
    bad=1
  fi
  if [ "${SHMCOLL_ACCEL_EXPECT_DIRECT:-}" = 1 ] &&
    ! grep -qE "^shmcoll-accel: rank $r: [1-9][0-9]* alltoalls with their blocks between nodes direct$" "$log"; then
    echo "accel: rank $r: expected alltoalls with their blocks between nodes direct"
    bad=1
  fi
  if [ "${SHMCOLL_ACCEL_EXPECT_SINGLE:-}" = 1 ] &&
    ! grep -qE "^shmcoll-accel: rank $r: [1-9][0-9]* of them by single copy$" "$log"; then
    echo "accel: rank $r: expected calls by single copy"
    bad=1
  fi
  if [ "${SHMCOLL_ACCEL_EXPECT_SINGLE:-}" = 0 ] &&
    grep -qE "^shmcoll-accel: rank $r: [0-9]+ of them by single copy$" "$log"; then
    echo "accel: rank $r: expected no calls by single copy"
    bad=1
  fi
  if [ "${SHMCOLL_ACCEL_EXPECT_EAGER:-}" = 1 ] &&
    ! grep -qE "^shmcoll-accel: rank $r: [1-9][0-9]* of them eager$" "$log"; then
    echo "accel: rank $r: expected eager calls"
    bad=1
  fi
  if [ "${SHMCOLL_ACCEL_EXPECT_EAGER:-}" = 0 ] && grep -qE "^shmcoll-accel: rank $r: [0-9]+ of them eager$" "$log"; then
    echo "accel: rank $r: expected no eager calls"
    bad=1
  fi
  # "shmcoll-accel: rank R: taken: MPI_X=N MPI_Y=M ..."
  per=$(grep -E "^shmcoll-accel: rank $r: taken:" "$log" || true)
  for fn in ${calls//,/ }; do
    if ! [[ " ${per#*taken:} " =~ \ $fn=[1-9][0-9]*\  ]]; then
      echo "accel: rank $r took no call of $fn: ${per:-no per-function line}"
      bad=1
    fi
  done
done
# some_rank EXPECT PATTERN WHAT: with EXPECT=1 some rank's report must have a
# line matching PATTERN, with EXPECT=0 none may (WHAT names it for the message)
some_rank() {
  if [ "$1" = 1 ] && ! grep -qE "$2" "$log"; then
    echo "accel: expected $3"
    bad=1
  fi
  if [ "$1" = 0 ] && grep -qE "$2" "$log"; then
    echo "accel: expected none of: $3"
    bad=1
  fi
}
some_rank "${SHMCOLL_ACCEL_EXPECT_HEAP:-}" \
  "^shmcoll-accel: rank [0-9]+: [1-9][0-9]* blocks read out of the senders' shared heaps$" \
  "blocks read out of the senders' shared heaps"
some_rank "${SHMCOLL_ACCEL_EXPECT_PUSHED:-}" \
  "^shmcoll-accel: rank [0-9]+: [1-9][0-9]* calls sent their single-copy blocks through the segment " \
  "calls that sent single-copy blocks through the segment"
if leftover; then
  echo "accel: a segment name was left in /dev/shm"
  bad=1
fi
[ "$bad" -eq 0 ] && echo "accel: $lib $(basename "$prog") n=$np: results right, report as expected ($expect${calls:+: $calls})"
exit "$bad"
