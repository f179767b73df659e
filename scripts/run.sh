#!/usr/bin/env bash
# The main job: from a fresh machine to a benchmark sweep of the collectives.
#
#   scripts/run.sh [-n N] [-- BENCH_ARG...]
#
# Installs the packages (scripts/install-deps.sh), builds shmcoll (Release, into
# build/, without the tests; incremental on later runs), installs it into
# install/, and runs
#
#   install/bin/shmrun -n N install/bin/shmcoll-bench --quick
#
# -n N         ranks (default: the number of cores, at least 2)
# BENCH_ARG    replace --quick; see install/bin/shmcoll-bench --help
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"
cores=$(nproc)
np=$((cores > 2 ? cores : 2))
bench_args=(--quick)
while (($#)); do
  case $1 in
    -n | -np | --np) np=$2; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    --) shift; bench_args=("$@"); break ;;
    *) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

scripts/install-deps.sh
scripts/build.sh --build-dir "$repo/build" --prefix "$repo/install" -DSHMCOLL_BUILD_TESTS=OFF

bench=$repo/install/bin/shmcoll-bench
if [[ ! -x $bench ]]; then
  echo "run.sh: $bench was not built or installed; the benchmark (perf/bench/) is not in this tree yet" >&2
  exit 1
fi
echo "== run.sh: install/bin/shmrun -n $np install/bin/shmcoll-bench ${bench_args[*]}"
exec "$repo/install/bin/shmrun" -n "$np" "$bench" ${bench_args[@]+"${bench_args[@]}"}
