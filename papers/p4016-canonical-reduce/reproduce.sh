#!/usr/bin/env bash
# papers/p4016-canonical-reduce/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and
# CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/p4016-canonical-reduce).
# carrier: $CARRIER_BIN if set, else built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

# 1. The golden values (Appendix K.0/K.3): N = 10^6 doubles of the paper's LCG, its seed
#    0x243F6A8885A308D3 = 2611923443488327891, init 0.0.
for L in 16 128; do
  "$CARRIER_BIN" eval --op sum --dtype fp64 --gen p4016 --n 1000000 \
    --seed 2611923443488327891 --schedule "canonical:$L" --format json > "$OUT/golden-$L.json"
done
# 2. The motivating example (section 1.2) in binary64: a left fold, the paper's tree
#    ((x0+x1)+(x2+x3))+(x4+x5) (= canonical:1 = blocked:2:pairwise over 6), canonical:16.
printf '1e16\n1\n1\n-1e16\n1\n1\n' > "$OUT/motivating.txt"
for s in seq canonical:1 blocked:2:pairwise canonical:16 reverse pairwise; do
  "$CARRIER_BIN" eval --op sum --dtype fp64 --input "$OUT/motivating.txt" --schedule "$s" \
    --format json > "$OUT/motivating-${s//:/_}.json"
done
# 3. Where iterative pairwise and recursive bisection differ (Appendix O.3), k = 1..1024, and
#    how both compare with carrier's pairwise (left half larger).
: > "$OUT/shapes.txt"
# One `carrier equiv --n 1..1024` per pair (a line "k same|different" per k; exit 1 when some
# k differs), joined into "k a b c" with "differ" for different.
for pair in "canonical:1 canonical:1:bisect" "canonical:1 pairwise" "canonical:1:bisect pairwise"; do
  # shellcheck disable=SC2086  # the pair is two schedules
  "$CARRIER_BIN" equiv $pair --n 1..1024 > "$OUT/shapes-${pair// /-}.txt" || [ $? -eq 1 ]
done
paste -d' ' "$OUT/shapes-canonical:1-canonical:1:bisect.txt" "$OUT/shapes-canonical:1-pairwise.txt" \
  "$OUT/shapes-canonical:1:bisect-pairwise.txt" |
  awk '{ d = "differ"; print $1, ($2 == "same" ? "same" : d), ($4 == "same" ? "same" : d),
         ($6 == "same" ? "same" : d) }' >> "$OUT/shapes.txt"
"$CARRIER_BIN" equiv canonical:1 canonical:1:bisect --n 5 > "$OUT/equiv-k5.txt" || true
# 4. Error over n and formats (error.toml).
"$CARRIER_BIN" sweep "$HERE/error.toml" -o "$OUT/error" --jobs "$JOBS"

paper_python "$HERE/make_figures.py" --out "$OUT"
