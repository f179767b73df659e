#!/usr/bin/env bash
# Install test: uses an installed shmcoll the three ways users do, from outside the
# source tree, and runs what it built under shmrun.
#
#   tests/install/run.sh [--prefix DIR] [--np N] [--no-run]
#
#   --prefix DIR  the install tree (default: <repo>/install)
#   --np N        ranks per run (default 2)
#   --no-run      build and link only
#
# Checks: the tree's layout and the library's soname and exports; hello.c and
# hello.cc built with bin/shmcc and bin/shmc++, with pkg-config (shmcoll.pc) and
# with find_package(shmcoll) (this folder's CMakeLists.txt); the same after the
# install tree is copied elsewhere (wrappers and .pc find their new prefix); each
# program run as `shmrun -n N` without LD_LIBRARY_PATH, every rank reporting in.
# Exits non-zero if any check fails.
set -uo pipefail

here=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
prefix=$here/../../install
np=2
run=1
while (($#)); do
  case $1 in
    --prefix) prefix=$2; shift ;;
    --prefix=*) prefix=${1#*=} ;;
    --np) np=$2; shift ;;
    --np=*) np=${1#*=} ;;
    --no-run) run=0 ;;
    -h | --help) sed -n '2,/^set -uo/{/^set -uo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
prefix=$(realpath -e -- "$prefix") || { echo "install test: no install tree at $prefix" >&2; exit 1; }
unset LD_LIBRARY_PATH   # the programs must find libshmcoll by their rpath
work=$(realpath -e -- "$(mktemp -d "${TMPDIR:-/tmp}/shmcoll-install-test.XXXXXX")")
trap 'rm -rf -- "$work"' EXIT
cd "$work" || exit 1

passed=0
failed=0
# check NAME CMD...: runs CMD, output shown only when it fails.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    printf '  ok    %s\n' "$name"
  else
    failed=$((failed + 1))
    printf '  FAIL  %s\n' "$name"
    printf '%s\n' "$out" | tail -n 40 | sed 's/^/        /'
  fi
}

version_of() {  # the version mpi.h declares
  local h=$1/include/mpi.h
  printf '%s.%s.%s' "$(awk '/#define SHMCOLL_VERSION_MAJOR/{print $3}' "$h")" \
    "$(awk '/#define SHMCOLL_VERSION_MINOR/{print $3}' "$h")" "$(awk '/#define SHMCOLL_VERSION_PATCH/{print $3}' "$h")"
}

layout() {
  local p=$1 f v major
  for f in bin/shmrun bin/shmcc bin/shmc++ include/mpi.h lib/libshmcoll.so lib/pkgconfig/shmcoll.pc \
           lib/cmake/shmcoll/shmcollConfig.cmake lib/cmake/shmcoll/shmcollConfigVersion.cmake \
           lib/cmake/shmcoll/shmcollTargets.cmake; do
    [[ -e $p/$f ]] || { echo "missing $f"; return 1; }
  done
  for f in bin/shmrun bin/shmcc bin/shmc++; do [[ -x $p/$f ]] || { echo "$f is not executable"; return 1; }; done
  v=$(version_of "$p")
  major=${v%%.*}
  [[ -f $p/lib/libshmcoll.so.$v && ! -L $p/lib/libshmcoll.so.$v ]] || { echo "no lib/libshmcoll.so.$v"; return 1; }
  [[ $(readlink "$p/lib/libshmcoll.so.$major") == "libshmcoll.so.$v" ]] || { echo "lib/libshmcoll.so.$major is not a link to libshmcoll.so.$v"; return 1; }
  [[ $(readlink "$p/lib/libshmcoll.so") == "libshmcoll.so.$major" ]] || { echo "lib/libshmcoll.so is not a link to libshmcoll.so.$major"; return 1; }
  # (the whole output first: grep -q leaving a pipe early would fail it with SIGPIPE under pipefail)
  local dyn
  dyn=$(objdump -p "$p/lib/libshmcoll.so.$v") || { echo "objdump cannot read lib/libshmcoll.so.$v"; return 1; }
  grep -Eq "SONAME +libshmcoll\.so\.$major\$" <<<"$dyn" || { echo "soname is not libshmcoll.so.$major"; return 1; }
}

# The malloc family libshmcoll.so defines (src/interpose/malloc.cc), and the
# wait family it wraps so that a rank that reaps a child gets back the heap
# pages a fork froze (src/os/shared_heap_fork.cc).
malloc_family='malloc free calloc realloc reallocarray posix_memalign aligned_alloc memalign valloc pvalloc malloc_usable_size'
wait_family='wait waitpid wait3 wait4 waitid'

exports() {  # only the MPI API, its profiling aliases and the malloc family leave the library
  local syms bad f
  syms=$(nm -D --defined-only "$1/lib/libshmcoll.so" | awk '{print $3}') || return 1
  grep -q '^MPI_Init$' <<<"$syms" || { echo "MPI_Init is not exported"; return 1; }
  grep -q '^PMPI_Init$' <<<"$syms" || { echo "PMPI_Init is not exported"; return 1; }
  for f in $malloc_family; do
    grep -qx "$f" <<<"$syms" || { echo "$f is not exported"; return 1; }
  done
  bad=$(grep -Ev '^P?MPI_' <<<"$syms" | grep -vxF -f <(tr ' ' '\n' <<<"$malloc_family $wait_family"))
  [[ -z $bad ]] || { echo "exported besides MPI_*/PMPI_*, the malloc family and the wait family:"; echo "$bad" | head -n 20; return 1; }
}

programs_load() {  # every installed program finds its shared libraries (rpath), also when moved
  local f missing n=0
  for f in "$1"/bin/*; do
    [[ $(head -c 4 "$f" | od -An -c | tr -d ' ') == 177ELF ]] || continue
    n=$((n + 1))
    missing=$(ldd "$f" | grep 'not found') && { echo "bin/${f##*/}: $missing"; return 1; }
  done
  ((n > 0)) || { echo "no programs in $1/bin"; return 1; }
  echo "$n programs"
}

wrappers_show() {  # -show prints the command; compile-only commands get no link flags
  local p=$1 out
  out=$("$p/bin/shmcc" -show hello.c -o hello) || return 1
  echo "shmcc -show: $out"
  [[ $out == *" -I$p/include "* && $out == *"-L$p/lib"* && $out == *"-Wl,-rpath,$p/lib"* && $out == *" -lshmcoll" ]] || return 1
  out=$("$p/bin/shmc++" --showme -c hello.cc) || return 1
  echo "shmc++ --showme -c: $out"
  [[ $out == *" -I$p/include "* && $out != *-lshmcoll* ]] || return 1
  [[ $("$p/bin/shmcc" --showme:compile) == "-I$p/include" ]] || return 1
  [[ $(SHMCOLL_CC="echo my-cc" "$p/bin/shmcc" x.c) == "my-cc -I$p/include x.c "* ]] || return 1
  [[ $(SHMCOLL_CXX=true "$p/bin/shmc++" --showme:command) == true ]]
}

# Warnings are errors: users build with -Werror, so mpi.h must be clean.
strict_c=(-std=c11 -Wall -Wextra -Werror)
strict_cxx=(-std=c++17 -Wall -Wextra -Werror)

build_wrappers() {  # build_wrappers PREFIX TAG
  "$1/bin/shmcc" "${strict_c[@]}" "$here/hello.c" -o "$2_c" &&
    "$1/bin/shmc++" "${strict_cxx[@]}" "$here/hello.cc" -o "$2_cxx"
}

build_pkgconfig() {  # build_pkgconfig PREFIX TAG
  local cflags libs libdir
  export PKG_CONFIG_PATH=$1/lib/pkgconfig
  [[ $(pkg-config --modversion shmcoll) == "$(version_of "$1")" ]] || { echo "pkg-config --modversion is wrong"; return 1; }
  cflags=$(pkg-config --cflags shmcoll) && libs=$(pkg-config --libs shmcoll) &&
    libdir=$(pkg-config --variable=libdir shmcoll) || return 1
  [[ $(realpath "$libdir") == "$1/lib" ]] || { echo "pkg-config libdir $libdir is not $1/lib"; return 1; }
  # shellcheck disable=SC2086  # pkg-config output is a list of words
  cc "${strict_c[@]}" $cflags "$here/hello.c" -o "$2_c" $libs -Wl,-rpath,"$libdir" &&
    c++ "${strict_cxx[@]}" $cflags "$here/hello.cc" -o "$2_cxx" $libs -Wl,-rpath,"$libdir"
}

build_cmake() {  # build_cmake PREFIX TAG
  cmake -S "$here" -B "cmake-$2" -DCMAKE_PREFIX_PATH="$1" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" -DCMAKE_CXX_FLAGS="-Wall -Wextra -Werror" &&
    grep -q "shmcoll_DIR:PATH=$1/lib/cmake/shmcoll" "cmake-$2/CMakeCache.txt" &&
    cmake --build "cmake-$2" -j 2 && cp "cmake-$2/hello_c" "$2_c" && cp "cmake-$2/hello_cxx" "$2_cxx"
}

resolves_to() {  # resolves_to BINARY PREFIX: the loader picks PREFIX's libshmcoll
  local got
  got=$(ldd "$1" | awk '$1 == "libshmcoll.so.0" {print $3}')
  [[ -n $got && $(realpath "$got") == "$2"/lib/libshmcoll.so.* ]] || { echo "$1 loads libshmcoll from '$got', not $2/lib"; return 1; }
}

run_np() {  # run_np SHMRUN PROGRAM: every rank says hello with the right size
  local out rc r
  out=$(timeout -k 5 120 "$1" -n "$np" "./$2" 2>&1)
  rc=$?
  echo "$out"
  ((rc == 0)) || { echo "exit status $rc"; return 1; }
  for ((r = 0; r < np; r++)); do
    grep -q "^hello from rank $r of $np " <<<"$out" || { echo "no line from rank $r of $np"; return 1; }
  done
}

echo "install test: prefix $prefix"
check "layout, soname and symlinks" layout "$prefix"
check "exports only MPI_*/PMPI_*, the malloc family and the wait family" exports "$prefix"
check "installed programs find their libraries" programs_load "$prefix"
check "shmcc/shmc++ -show, --showme:*, SHMCOLL_CC/SHMCOLL_CXX" wrappers_show "$prefix"
check "build with shmcc and shmc++" build_wrappers "$prefix" wrap
check "build with pkg-config shmcoll" build_pkgconfig "$prefix" pc
check "build with find_package(shmcoll)" build_cmake "$prefix" cmake

# A moved tree: wrappers, .pc and CMake package must follow it.
moved=$work/moved/shmcoll
mkdir -p "$work/moved" && cp -a "$prefix" "$moved"
check "moved tree: shmcc -show uses the new prefix" wrappers_show "$moved"
check "moved tree: installed programs find their libraries" programs_load "$moved"
check "moved tree: build with shmcc/shmc++" build_wrappers "$moved" mvwrap
check "moved tree: build with pkg-config" build_pkgconfig "$moved" mvpc
check "moved tree: build with find_package" build_cmake "$moved" mvcmake
for t in wrap pc cmake; do
  check "${t}_c loads the installed library" resolves_to "${t}_c" "$prefix"
done
for t in mvwrap mvpc mvcmake; do
  check "${t}_cxx loads the moved library" resolves_to "${t}_cxx" "$moved"
done

if ((run)); then
  for t in wrap pc cmake; do
    for lang in c cxx; do
      check "shmrun -n $np ${t}_$lang" run_np "$prefix/bin/shmrun" "${t}_$lang"
    done
  done
  check "moved tree: shmrun -n $np mvwrap_c" run_np "$moved/bin/shmrun" mvwrap_c
fi

if ((failed)); then
  echo "install test: $failed of $((passed + failed)) checks FAILED"
  exit 1
fi
echo "install test: all $passed checks passed"
