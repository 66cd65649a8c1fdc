#!/usr/bin/env bash
# papers/chan-golub-leveque1983/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/chan-golub-leveque1983).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

paper_python "$HERE/run_variance.py" --carrier "$CARRIER_BIN" --out "$OUT"

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
