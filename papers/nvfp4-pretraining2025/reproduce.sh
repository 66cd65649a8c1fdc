#!/usr/bin/env bash
# papers/nvfp4-pretraining2025/reproduce.sh [OUT_DIR]: regenerate every CSV, figure and CLAIMS.md
# of this folder from an empty OUT_DIR (default out/papers/nvfp4-pretraining2025).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

# Appendix B.4's worked example: one 32-element block with amax 3 + delta (delta = 2^-10), the
# rest k/16 for k = 1..31 (all exact binary fractions, all smaller than the amax).
{
  echo "3.0009765625"
  awk 'BEGIN { for (k = 1; k <= 31; k++) printf "%.17g\n", k / 16 }'
} >"$OUT/example.txt"
"$CARRIER_BIN" quantize --input "$OUT/example.txt" --dtype mxfp4:rceil >"$OUT/example-rceil.csv"
"$CARRIER_BIN" quantize --input "$OUT/example.txt" --dtype mxfp4 >"$OUT/example-floor.csv"

# 2^16 values of N(0,1), seed 1, in three formats.
while read -r stem dtype; do
  "$CARRIER_BIN" quantize --gen normal --n 65536 --seed 1 --dtype "$dtype" >"$OUT/$stem.csv"
done <<'LIST'
normal-mxfp4-rceil mxfp4:rceil
normal-mxfp4-floor mxfp4
normal-nvfp4 nvfp4
LIST

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
