#!/usr/bin/env bash
# papers/milakov2018-online-softmax/reproduce.sh [OUT_DIR]: regenerate the CSVs, figures and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/milakov2018-online-softmax).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
# data/passes.csv (counted accesses) is deterministic; OUT/timing.csv holds the timings and is
# never compared or committed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

# Accesses counted on 1000 values; every variant timed side by side at five sizes, 9 repeats.
"$CARRIER_BIN" study softmax-passes --count-n 1000 --n 1e3,1e4,1e5,1e6,1e7 --repeats 9 \
  -o "$OUT/passes.csv" --timing "$OUT/timing.csv"

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
