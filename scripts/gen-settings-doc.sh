#!/usr/bin/env bash
# Rewrites the README's table of environment variables from the settings
# table (src/common/settings.def), as `shmrun --settings-markdown` prints it.
# The table sits between two marker lines in the README:
#   <!-- settings:begin ... -->
#   <!-- settings:end -->
# Run it after changing a setting's declaration, with a freshly built shmrun.
#
#   scripts/gen-settings-doc.sh [--shmrun PATH] [--check] [README]
#
#   --shmrun PATH  the shmrun to ask (default: <repo>/build/launcher/shmrun,
#                  else <repo>/install/bin/shmrun)
#   --check        change nothing; exit 1 with a diff when the README's table
#                  differs from the generated one (the test tools.settings_doc)
#   README         the file to rewrite (default: <repo>/README.md)
set -euo pipefail

repo=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
shmrun="" check=0 readme=$repo/README.md
while (($#)); do
  case $1 in
    --shmrun) shmrun=$2; shift ;;
    --shmrun=*) shmrun=${1#*=} ;;
    --check) check=1 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) echo "gen-settings-doc.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) readme=$1 ;;
  esac
  shift
done
if [[ -z $shmrun ]]; then
  for cand in "$repo/build/launcher/shmrun" "$repo/install/bin/shmrun"; do
    if [[ -x $cand ]]; then shmrun=$cand; break; fi
  done
fi
[[ -n $shmrun && -x $shmrun ]] || { echo "gen-settings-doc.sh: no shmrun (build first, or --shmrun PATH)" >&2; exit 2; }

begins=$(grep -c '^<!-- settings:begin' "$readme" || true)
ends=$(grep -c '^<!-- settings:end' "$readme" || true)
if [[ $begins != 1 || $ends != 1 ]]; then
  echo "gen-settings-doc.sh: $readme needs one '<!-- settings:begin' and one '<!-- settings:end' line" >&2
  exit 2
fi

table=$(mktemp) new=$(mktemp)
trap 'rm -f "$table" "$new"' EXIT
"$shmrun" --settings-markdown >"$table"
awk -v table="$table" '
  /^<!-- settings:end/ { inside = 0 }
  !inside { print }
  /^<!-- settings:begin/ { inside = 1; while ((getline line < table) > 0) print line }
' "$readme" >"$new"

if ((check)); then
  if ! diff -u "$readme" "$new"; then
    echo "gen-settings-doc.sh: the README's settings table is not what src/common/settings.def says;" \
      "run scripts/gen-settings-doc.sh" >&2
    exit 1
  fi
  echo "gen-settings-doc.sh: $readme is up to date"
elif cmp -s "$readme" "$new"; then
  echo "gen-settings-doc.sh: $readme is up to date"
else
  cat "$new" >"$readme"
  echo "gen-settings-doc.sh: rewrote the settings table in $readme"
fi
