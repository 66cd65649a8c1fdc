#!/usr/bin/env bash
# papers/connolly2021-stochastic-rounding/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/connolly2021-stochastic-rounding).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

"$CARRIER_BIN" sweep "$HERE/sr-vs-rn.toml" -o "$OUT/sr-vs-rn" --jobs "$JOBS"
"$CARRIER_BIN" sweep "$HERE/matvec.toml" -o "$OUT/matvec" --jobs "$JOBS"
MAX_TERMS=1048576
# The harmonic series with RN and 5 SR seeds: fp16 (the paper's format) and bf16 (the SR survey's).
for dtype in fp16 bf16; do
  "$CARRIER_BIN" study stagnation --series harmonic --dtype "$dtype" --round rne \
    --max-terms "$MAX_TERMS" -o "$OUT/harmonic-$dtype-rne.csv"
  for seed in 1 2 3 4 5; do
    "$CARRIER_BIN" study stagnation --series harmonic --dtype "$dtype" --round sr --seed "$seed" \
      --max-terms "$MAX_TERMS" -o "$OUT/harmonic-$dtype-sr-$seed.csv"
  done
done

# The authors' matrix-vector experiment as test_matvec.m runs it, emulated in numpy (issue 33;
# a few minutes: 4.4 million sequential column updates of 11 x 100 rows).
paper_python "$HERE/authors_matvec.py" "$OUT/authors_matvec.csv"

paper_python "$HERE/make_figures.py" --out "$OUT" --carrier "$CARRIER_BIN"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
