#!/usr/bin/env bash
# Configures, builds and installs shmcoll.
#
#   scripts/build.sh [--build-dir DIR] [--prefix DIR] [--fresh] [--no-install] [--target T]... [CMAKE_ARG...]
#
#   --build-dir DIR  build tree (default: <repo>/build)
#   --prefix DIR     install prefix (default: <repo>/install)
#   --fresh          delete the build tree first
#   --no-install     build only
#   --target T       build only target T (and what it needs; repeatable; implies --no-install)
#   CMAKE_ARG        passed to the configure step, after the defaults, so it wins:
#                    -DCMAKE_BUILD_TYPE=Debug, -DSHMCOLL_SANITIZE=address, ...
#
# Release by default.  Parallelism: $SHMCOLL_JOBS, else nproc.  The packages it
# needs are installed by scripts/install-deps.sh.
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
build=$repo/build
prefix=$repo/install
fresh=0
install=1
cmake_args=()
targets=()
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift ;;
    --build-dir=*) build=${1#*=} ;;
    --prefix) prefix=$2; shift ;;
    --prefix=*) prefix=${1#*=} ;;
    --fresh) fresh=1 ;;
    --no-install) install=0 ;;
    --target) targets+=(--target "$2"); install=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) cmake_args+=("$1") ;;
  esac
  shift
done
jobs=${SHMCOLL_JOBS:-$(nproc)}
build=$(realpath -m -- "$build")
prefix=$(realpath -m -- "$prefix")

if ((fresh)); then rm -rf -- "$build"; fi
cmake -S "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  ${cmake_args[@]+"${cmake_args[@]}"}
cmake --build "$build" -j "$jobs" ${targets[@]+"${targets[@]}"}
if ((install)); then cmake --install "$build"; fi
