#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang and runs each for a
# fixed time, starting from its seed corpus (tests/fuzz/corpus/<name>/).
#
#   scripts/fuzz.sh [--time SECONDS] [--build DIR] [TARGET...]
#
#   --time SECONDS  per target (default 60)
#   --build DIR     build directory (default build-fuzz)
#   TARGET          fuzz_settings fuzz_tuning fuzz_shmrun_options fuzz_info
#                   (default: all)
#
# Installs clang and its runtime libraries (Debian: clang, libclang-rt-dev)
# with the build dependencies.  Exits non-zero when a target finds a crash, a
# sanitizer report or a broken property; the input that did it is left in
# DIR/artifacts/ and printed in base64.  New inputs that reach new code go to
# DIR/corpus/<name>/, never into the source tree.
set -euo pipefail
repo=$(cd "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
secs=60 build=$repo/build-fuzz targets=()
while (($#)); do
  case $1 in
    --time) secs=$2; shift ;;
    --build) build=$(realpath -m "$2"); shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
((${#targets[@]})) || targets=(fuzz_settings fuzz_tuning fuzz_shmrun_options fuzz_info)

"$repo/scripts/install-deps.sh" clang libclang-rt-dev
cmake -S "$repo" -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DSHMCOLL_FUZZ=ON \
  -DSHMCOLL_BUILD_TESTS=OFF -DSHMCOLL_BUILD_PERF=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

mkdir -p "$build/artifacts"
failed=()
for t in "${targets[@]}"; do
  corpus=$build/corpus/${t#fuzz_}
  mkdir -p "$corpus"
  seeds=$repo/tests/fuzz/corpus/${t#fuzz_}
  [[ -d $seeds ]] || seeds=
  echo "== fuzz.sh: $t for ${secs}s"
  log=$build/artifacts/$t.log
  # One worker: the machine's other core runs the next target's build or the tests.
  if "$build/tests/fuzz/$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$t-" "$corpus" ${seeds:+"$seeds"} >"$log" 2>&1; then
    grep -E '^(Done|stat::number_of_executed_units)' "$log" | tail -1 || true
  else
    failed+=("$t")
    grep -E 'ERROR|fuzz_[a-z_]+:|SUMMARY|Base64' "$log" | head -20
    echo "== fuzz.sh: $t FAILED (log: $log)"
  fi
done
if ((${#failed[@]})); then
  echo "== fuzz.sh: failed: ${failed[*]}"
  exit 1
fi
echo "== fuzz.sh: ${#targets[@]} targets, ${secs}s each: no finding"
