#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing shmcoll need.
#
#   scripts/install-deps.sh [EXTRA_PACKAGE...]
#
# Idempotent: when every package is already installed it only asks dpkg and
# returns at once (no apt-get update).  Needs root, or sudo.
set -euo pipefail

# (python3: src/api/generate.py writes the MPI entry points at build time)
packages=(build-essential cmake pkg-config python3 libhwloc-dev hwloc libnuma-dev
          libboost-dev libgtest-dev libbenchmark-dev "$@")

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

if ((EUID == 0)); then
  as_root=()
elif command -v sudo >/dev/null; then
  # No terminal (CI): fail at once rather than wait for a password.
  if [[ -t 0 ]]; then as_root=(sudo); else as_root=(sudo -n); fi
else
  echo "install-deps: missing ${missing[*]}; run as root or install sudo" >&2
  exit 1
fi

echo "install-deps: installing ${missing[*]}"
apt=("${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout=300)
"${apt[@]}" update
"${apt[@]}" install -y --no-install-recommends "${missing[@]}"
