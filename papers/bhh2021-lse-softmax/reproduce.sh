#!/usr/bin/env bash
# papers/bhh2021-lse-softmax/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and CLAIMS.md
# of this folder from an empty OUT_DIR (default out/papers/bhh2021-lse-softmax).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

# The 2500 vectors, in fp16 and bf16, five algorithms each (one row per vector and algorithm).
"$CARRIER_BIN" study lse-mnist --input "$HERE/data/bhh2021_mnist_presoftmax.csv" \
  --dtype fp16,bf16 -o "$OUT/lse_mnist.csv"

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
