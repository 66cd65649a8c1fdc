#!/usr/bin/env bash
# papers/golden2024-flash-stability/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/golden2024-flash-stability).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

# 168 trials; the emulated bf16/fp16 replays at n = 1024 and the certified golden outputs
# (one per input, shared by the three acc) dominate the time.
"$CARRIER_BIN" sweep "$HERE/flash.toml" -o "$OUT/flash" --jobs "$JOBS" > "$OUT/flash.log" 2>&1

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
