#!/usr/bin/env bash
# scripts/reproduce-all.sh [OUT_ROOT]: run every papers/*/reproduce.sh, each into
# OUT_ROOT/NAME (default out/papers/NAME), building carrier once first unless $CARRIER_BIN is
# set. Stops at the first paper that fails and names it; prints each paper's wall time.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT_ROOT="${1:-$ROOT/out/papers}"
if [ -z "${CARRIER_BIN:-}" ]; then
  # shellcheck source=common.sh
  source "$ROOT/scripts/common.sh"
  carrier_install_deps
  carrier_build carrier
  export CARRIER_BIN="$CARRIER_BUILD_DIR/bin/carrier"
fi
status=0
for script in "$ROOT"/papers/*/reproduce.sh; do
  name="$(basename "$(dirname "$script")")"
  echo "== $name" >&2
  start=$(date +%s)
  if ! bash "$script" "$OUT_ROOT/$name"; then
    echo "reproduce-all: $name failed ($script)" >&2
    status=1
    break
  fi
  echo "== $name done in $(( $(date +%s) - start )) s" >&2
done
exit "$status"
