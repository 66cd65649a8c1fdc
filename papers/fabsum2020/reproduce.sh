#!/usr/bin/env bash
# papers/fabsum2020/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/fabsum2020).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

"$CARRIER_BIN" sweep "$HERE/blocked.toml" -o "$OUT/blocked" --jobs "$JOBS"
# FABsum's two precisions (acc INNER>OUTER), in carrier itself.
"$CARRIER_BIN" sweep "$HERE/fabsum.toml" -o "$OUT/fabsum" --jobs "$JOBS"
# Error against n at b = 32: recursive, blocked and FABsum.
"$CARRIER_BIN" sweep "$HERE/error-vs-n.toml" -o "$OUT/error-vs-n" --jobs "$JOBS"
# The bound's minimiser b = sqrt(n), tested with 40 trials at b = 16, 256, 4096.
"$CARRIER_BIN" sweep "$HERE/minimiser.toml" -o "$OUT/minimiser" --jobs "$JOBS"
# Where the fp32 error is smallest on a grid of b, against (n^2/2)^(1/3) and sqrt(n) (issue 33).
"$CARRIER_BIN" sweep "$HERE/minimiser-grid.toml" -o "$OUT/minimiser-grid" --jobs "$JOBS"

paper_python "$HERE/make_figures.py" --out "$OUT" --carrier "$CARRIER_BIN"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
