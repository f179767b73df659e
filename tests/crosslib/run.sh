#!/usr/bin/env bash
# Builds one of the tests/mpi programs against another MPI library (Open MPI
# or MPICH, from Debian) and runs it there, so the programs are shown to test
# the MPI standard and not shmcoll's own reading of it.
#
#   tests/crosslib/run.sh <openmpi|mpich> <source.c> <build-dir> <nranks> [args...]
#
# Exits 77 (CTest: skipped) when that library's mpicc or mpirun is not
# installed; scripts/test.sh installs both, so they run in CI.
set -euo pipefail
lib=$1 src=$2 out=$3 np=$4
shift 4
cc=mpicc.$lib run=mpirun.$lib
if ! command -v "$cc" >/dev/null || ! command -v "$run" >/dev/null; then
  echo "crosslib: $cc or $run is not installed: skipped"
  exit 77
fi
mkdir -p "$out"
prog=$out/$(basename "$src" .c)
# Several tests build the same program: build into a private name, then move.
tmp=$(mktemp "$prog.XXXXXX")
"$cc" -O1 -g -pthread -o "$tmp" "$src" -lm
mv -f "$tmp" "$prog"
case $lib in
  openmpi)
    # Root in CI; more ranks than cores; no single-copy (ptrace may be
    # forbidden in containers); the shared-memory and self transports only.
    export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_mpi_yield_when_idle=1
    # One-sided windows (osc/rdma over vader) need vader's single-copy
    # mechanism, without which MPI_Win_create fails: the rma_* programs use cma.
    case $(basename "$src") in rma_*) export OMPI_MCA_btl_vader_single_copy_mechanism=cma ;; esac
    # Open MPI leaves its segment behind when a run aborts: its segments go
    # to a directory of this run's own, removed at the end (removing every
    # vader_segment.* in /dev/shm would pull them from under other jobs).
    vader=$(mktemp -d /dev/shm/crosslib-run.XXXXXX)
    export OMPI_MCA_btl_vader_backing_directory=$vader
    rc=0
    "$run" --allow-run-as-root --oversubscribe -np "$np" "$prog" "$@" || rc=$?
    rm -rf "$vader"
    exit $rc
    ;;
  mpich)
    exec "$run" -np "$np" "$prog" "$@"
    ;;
  *)
    echo "crosslib: unknown library '$lib' (openmpi or mpich)" >&2
    exit 2
    ;;
esac
