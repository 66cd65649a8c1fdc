#!/usr/bin/env bash
# scripts/reproduce-all.sh [OUT_ROOT]: run every papers/*/reproduce.sh, each into
# OUT_ROOT/NAME (default out/papers/NAME), installing the packages and building carrier once
# first (scripts/paper-common.sh) unless $CARRIER_BIN is set. Keeps going when a paper fails,
# then prints one table: folder, reproduced / not reproduced / not found / sanity (read back
# from its CLAIMS.md), wall seconds, and exit status; exits 1 if any paper failed.
set -euo pipefail
# shellcheck source=paper-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/paper-common.sh"
OUT_ROOT="${1:-$ROOT/out/papers}"
status=0
rows=()
for script in "$ROOT"/papers/*/reproduce.sh; do
  name="$(basename "$(dirname "$script")")"
  echo "== $name" >&2
  start=$(date +%s)
  if bash "$script" "$OUT_ROOT/$name"; then result=ok; else result=FAILED; status=1; fi
  secs=$(( $(date +%s) - start ))
  counts="$(paper_python -m analysis.claims counts "$ROOT/papers/$name/CLAIMS.md" 2>/dev/null |
            sed 's/^[^ ]* //')" || counts="(no CLAIMS.md counts)"
  rows+=("$name|$counts|$secs|$result")
  echo "== $name: $result in $secs s" >&2
done
paper_summary
printf '\n%-36s %10s %14s %9s %7s %8s  %s\n' folder reproduced "not reproduced" "not found" \
  sanity "wall s" status
for r in "${rows[@]}"; do
  IFS='|' read -r name counts secs result <<< "$r"
  rep=$(sed -n 's/.*reproduced=\([0-9]*\) not_reproduced.*/\1/p' <<< "$counts")
  notrep=$(sed -n 's/.*not_reproduced=\([0-9]*\).*/\1/p' <<< "$counts")
  nf=$(sed -n 's/.*not_found=\([0-9]*\).*/\1/p' <<< "$counts")
  san=$(sed -n 's/.*sanity=\([0-9]*\).*/\1/p' <<< "$counts")
  printf '%-36s %10s %14s %9s %7s %8s  %s\n' "$name" "${rep:--}" "${notrep:--}" "${nf:--}" \
    "${san:--}" "$secs" "$result"
done
exit "$status"
