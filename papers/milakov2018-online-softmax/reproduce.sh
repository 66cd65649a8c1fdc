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
  --topk 5 -o "$OUT/passes.csv" --timing "$OUT/timing.csv"
# The authors' benchmark shapes (NVIDIA/online-softmax: batch 4000 and 10, V = 63 doubling up to
# what memory allows, at most 10^7, K = 5), here V = 63 * 4^k and cut to this machine: batch
# 4000 up to V = 4032 (16M values, 64 MB in and 64 MB out), batch 10 up to V = 4128768.
"$CARRIER_BIN" study softmax-passes --count-n 1000 --batch 4000 --n 63,252,1008,4032 \
  --repeats 5 --topk 5 -o "$OUT/passes-batch.csv" --timing "$OUT/timing-batch4000.csv"
"$CARRIER_BIN" study softmax-passes --count-n 1000 --batch 10 \
  --n 63,252,1008,4032,16128,64512,258048,1032192,4128768 --repeats 5 --topk 5 \
  -o "$OUT/passes-batch.csv" --timing "$OUT/timing-batch10.csv"

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
