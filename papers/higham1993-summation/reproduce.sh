#!/usr/bin/env bash
# papers/higham1993-summation/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/higham1993-summation).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

"$CARRIER_BIN" sweep "$HERE/error-vs-n.toml" -o "$OUT/error-vs-n" --jobs "$JOBS"
"$CARRIER_BIN" sweep "$HERE/orderings.toml" -o "$OUT/orderings" --jobs "$JOBS"
for series in harmonic ones; do
  for dtype in fp16 bf16; do
    "$CARRIER_BIN" study stagnation --series "$series" --dtype "$dtype" --round rne \
      -o "$OUT/stagnation-$series-$dtype.csv"
  done
done

paper_python "$HERE/make_figures.py" --out "$OUT" --carrier "$CARRIER_BIN"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
