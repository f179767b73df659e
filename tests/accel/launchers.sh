#!/usr/bin/env bash
# How shmcoll-accel hands the library to each kind of launcher, checked with
# stand-in launchers that print the command line they get and the
# LD_PRELOAD they themselves run with:
#   Open MPI's mpirun:  -x LD_PRELOAD=<lib>, not in mpirun's own environment
#   MPICH's mpiexec:    -genv LD_PRELOAD <lib>, not in mpiexec's own environment
#   Slurm's srun:       --export=ALL,LD_PRELOAD=<lib>, not in srun's own environment;
#                       with an --export of the line's own, exported instead
#   anything else:      exported
# and a program that links no MPI runs unchanged.
#
#   tests/accel/launchers.sh <shmcoll-accel>
#
# Needs a host's mpicc to build a program that links its MPI; exits 77
# (CTest: skipped) when neither is installed.
set -euo pipefail
accel=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

host="" cc=""
for h in openmpi mpich; do
  if command -v "mpicc.$h" >/dev/null; then
    host=$h cc=mpicc.$h
    break
  fi
done
if [ -z "$host" ]; then
  echo "launchers: neither mpicc.openmpi nor mpicc.mpich is installed: skipped"
  exit 77
fi
printf '#include <mpi.h>\nint main(void) { int f = 0; MPI_Initialized(&f); return f; }\n' >"$tmp/app.c"
"$cc" -o "$tmp/app" "$tmp/app.c"
printf 'int main(void) { return 0; }\n' >"$tmp/plain.c"
cc -o "$tmp/plain" "$tmp/plain.c"

# The libraries only have to exist: the stand-ins run nothing.
mkdir -p "$tmp/lib" "$tmp/bin"
touch "$tmp/lib/libshmcoll_accel_openmpi.so" "$tmp/lib/libshmcoll_accel_mpich.so"
lib=$(readlink -f "$tmp/lib/libshmcoll_accel_$host.so")
for name in orterun mpiexec.hydra srun mylauncher; do
  printf '#!/usr/bin/env bash\necho "self-preload=${LD_PRELOAD:-}"\necho "args=$*"\n' >"$tmp/bin/$name"
  chmod +x "$tmp/bin/$name"
done

fails=0
check() {  # <what> <launcher> <expected args> <expected self-preload> [launcher args...]
  local what=$1 launcher=$2 want_args=$3 want_self=$4
  shift 4
  local out
  out=$(env -u LD_PRELOAD SHMCOLL_ACCEL_LIBDIR="$tmp/lib" "$accel" "$tmp/bin/$launcher" "$@" 2>"$tmp/err") || {
    echo "FAIL $what: shmcoll-accel failed: $(cat "$tmp/err")"
    fails=$((fails + 1))
    return
  }
  local got_args got_self
  got_args=$(sed -n 's/^args=//p' <<<"$out")
  got_self=$(sed -n 's/^self-preload=//p' <<<"$out")
  if [ "$got_args" != "$want_args" ] || [ "$got_self" != "$want_self" ]; then
    echo "FAIL $what:"
    echo "  args:         got '$got_args'"
    echo "                want '$want_args'"
    echo "  self-preload: got '$got_self', want '$want_self'"
    fails=$((fails + 1))
  else
    echo "ok   $what"
  fi
}

check "Open MPI's mpirun" orterun "-x LD_PRELOAD=$lib -n 2 $tmp/app a b" "" -n 2 "$tmp/app" a b
check "MPICH's mpiexec" mpiexec.hydra "-genv LD_PRELOAD $lib -n 2 $tmp/app" "" -n 2 "$tmp/app"
check "srun" srun "--export=ALL,LD_PRELOAD=$lib -n 2 $tmp/app" "" -n 2 "$tmp/app"
check "srun with its own --export" srun "--export=ALL,FOO=1 -n 2 $tmp/app" "$lib" --export=ALL,FOO=1 -n 2 "$tmp/app"
check "srun with --export VALUE" srun "--export NONE -n 2 $tmp/app" "$lib" --export NONE -n 2 "$tmp/app"
check "another launcher" mylauncher "-n 2 $tmp/app" "$lib" -n 2 "$tmp/app"
check "a program without MPI" srun "-n 2 $tmp/plain" "" -n 2 "$tmp/plain"
if ! grep -q "no program linking" "$tmp/err"; then
  echo "FAIL a program without MPI: no note on stderr"
  fails=$((fails + 1))
fi
[ $fails = 0 ] && echo "launchers: all passed ($host program)"
exit $((fails > 0))
