#!/usr/bin/env bash
# An accelerator library exports exactly the functions its version script
# lists (the MPI functions it takes over, the malloc and wait families of the
# shared heap), nothing else.
#   tests/accel/exports.sh <libshmcoll_accel_host.so> <accel.map>
set -euo pipefail
lib=$1 map=$2
want=$(sed -n '/global:/,/local:/p' "$map" | grep -v -E 'global:|local:' | grep -oE '[A-Za-z_][A-Za-z0-9_]*;' |
  tr -d ';' | sort)
got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sort)
if [ "$want" != "$got" ]; then
  echo "exports of $lib differ from $map:"
  diff <(echo "$want") <(echo "$got") || true
  exit 1
fi
echo "exports: $(echo "$got" | wc -l) functions, as listed: $(echo $got)"
