#!/usr/bin/env bash
# papers/fp8-accumulation/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and CLAIMS.md of
# this folder from an empty OUT_DIR (default out/papers/fp8-accumulation).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

"$CARRIER_BIN" sweep "$HERE/error-vs-k.toml" -o "$OUT/error-vs-k" --jobs "$JOBS" --quiet >/dev/null
"$CARRIER_BIN" sweep "$HERE/promote-interval.toml" -o "$OUT/promote-interval" --jobs "$JOBS" \
  --quiet >/dev/null
"$CARRIER_BIN" sweep "$HERE/sage-pv.toml" -o "$OUT/sage-pv" --jobs "$JOBS" --quiet >/dev/null

paper_python "$HERE/make_figures.py" --out "$OUT" --carrier "$CARRIER_BIN"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
