#!/usr/bin/env bash
# papers/secretly-associative/reproduce.sh [OUT_DIR]: regenerate every CSV, laws table, figure
# and CLAIMS.md of this folder from an empty OUT_DIR (default out/papers/secretly-associative).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

# The laws of the three carriers (exit 0 = every declaration matches what was measured).
for op in lse welford attention; do
  "$CARRIER_BIN" laws "$op" --dtype fp32 --seed 1 > "$OUT/laws-$op.txt"
done
# Error against merge order: log-sum-exp and Welford, then FlashAttention rows.
"$CARRIER_BIN" sweep "$HERE/orders.toml" -o "$OUT/orders" --jobs "$JOBS" > "$OUT/orders.log" 2>&1
"$CARRIER_BIN" sweep "$HERE/orders-attention.toml" -o "$OUT/orders-attention" --jobs "$JOBS" \
  > "$OUT/orders-attention.log" 2>&1

paper_python "$HERE/make_figures.py" --out "$OUT"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
