#!/usr/bin/env bash
# The test command: everything from a fresh machine to a verdict.
#
#   scripts/test.sh                          main pass
#   scripts/test.sh --sanitize address,undefined   sanitizer pass
#   scripts/test.sh --sanitize thread        thread sanitizer pass (the threaded tests)
#
# Main pass: installs the packages (scripts/install-deps.sh; also Open MPI and
# MPICH for the tests/crosslib runs), builds from scratch
# into build-test/ (Release), installs into install/, runs ctest, then the
# install test (tests/install/run.sh: a consumer built with shmcc/shmc++,
# pkg-config and find_package, run under shmrun).
#
# Sanitizer pass: builds from scratch into build-san-<kinds>/ with
# -DSHMCOLL_SANITIZE=<kinds> (RelWithDebInfo) and runs ctest; nothing is installed.
# With `thread` it builds the library, shmrun and the MPI_THREAD_MULTIPLE
# programs only (tests/mpi/threads_*.c) and runs their tests: the rest of the
# suite calls MPI from one thread, where ThreadSanitizer has nothing to see.
#
# Other options: --build-dir DIR; any -D... argument goes to CMake.
# Environment: SHMCOLL_TEST_TIMEOUT (seconds per test, default 300, 900 with a
# sanitizer), SHMCOLL_TEST_JOBS (ctest -j, default 2), SHMCOLL_JOBS (build -j).
#
# Exits non-zero on any failure; the last line printed is ctest's summary line.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$repo"
sanitize=
build=
cmake_args=()
while (($#)); do
  case $1 in
    --sanitize) sanitize=$2; shift ;;
    --sanitize=*) sanitize=${1#*=} ;;
    --build-dir) build=$2; shift ;;
    --build-dir=*) build=${1#*=} ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    -D*) cmake_args+=("$1") ;;
    *) echo "test.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n== test.sh: %s\n' "$*"; }
t0=$SECONDS

step "dependencies"
# Open MPI and MPICH: the tests/crosslib runs build some tests/mpi programs
# against them too (the main pass only).
if [[ -n $sanitize ]]; then
  scripts/install-deps.sh
else
  scripts/install-deps.sh openmpi-bin libopenmpi-dev mpich libmpich-dev
fi

if [[ -n $sanitize ]]; then
  kinds=${sanitize//,/;}
  build=${build:-$repo/build-san-${sanitize//[,;]/-}}
  timeout=${SHMCOLL_TEST_TIMEOUT:-900}
  # Stop at the first report, with a stack, so a finding fails its test.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
  targets=()
  if [[ $kinds == *thread* ]]; then
    for t in shmcoll shmrun threads_coll threads_p2p threads_soak; do targets+=(--target "$t"); done
  fi
  step "build ($kinds sanitizer) into ${build#"$repo"/}"
  scripts/build.sh --fresh --no-install --build-dir "$build" ${targets[@]+"${targets[@]}"} \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DSHMCOLL_SANITIZE=$kinds" -DSHMCOLL_BUILD_PERF=OFF \
    -DSHMCOLL_TEST_TIMEOUT="$timeout" ${cmake_args[@]+"${cmake_args[@]}"}
else
  build=${build:-$repo/build-test}
  timeout=${SHMCOLL_TEST_TIMEOUT:-300}
  step "build into ${build#"$repo"/} and install into install/"
  rm -rf -- "$repo/install"
  scripts/build.sh --fresh --build-dir "$build" --prefix "$repo/install" \
    -DSHMCOLL_TEST_TIMEOUT="$timeout" ${cmake_args[@]+"${cmake_args[@]}"}
fi
t_build=$((SECONDS - t0))

step "ctest"
log=$build/ctest-output.log
set +e
exclude=()
[[ -n $sanitize ]] && exclude=(-LE 'crosslib|accel')  # other libraries: nothing of ours to sanitize (and no accelerator is built)
[[ $sanitize == *thread* ]] && exclude+=(-R '^mpi\.threads_')  # (what it built)
ctest --test-dir "$build" --output-on-failure --no-tests=error ${exclude[@]+"${exclude[@]}"} \
  -j "${SHMCOLL_TEST_JOBS:-2}" --timeout "$timeout" 2>&1 | tee "$log"
ctest_rc=${PIPESTATUS[0]}
set -e
t_ctest=$((SECONDS - t0 - t_build))
summary=$(grep -E '^[0-9]+% tests passed' "$log" | tail -n 1 || true)

install_rc=0
if [[ -z $sanitize ]]; then
  step "install test"
  tests/install/run.sh --prefix "$repo/install" || install_rc=$?
fi
t_install=$((SECONDS - t0 - t_build - t_ctest))

step "summary"
if [[ -n $sanitize ]]; then
  echo "build ${t_build}s, ctest ${t_ctest}s (sanitizer: $sanitize)"
else
  echo "build ${t_build}s, ctest ${t_ctest}s, install test ${t_install}s"
  if ((install_rc == 0)); then echo "install test: passed"; else echo "install test: FAILED"; fi
fi
if ((ctest_rc != 0)); then
  echo "ctest: FAILED (exit $ctest_rc)"
fi
echo "${summary:-ctest: no summary line (exit $ctest_rc)}"
((ctest_rc == 0 && install_rc == 0))
