# scripts/paper-common.sh: sourced by every papers/*/reproduce.sh after it sets HERE (its own
# folder). Arguments: the reproduce script's own ([OUT_DIR]). Sets
#   ROOT         the repository root
#   OUT          OUT_DIR, default out/papers/<folder name>, emptied and created
#   CARRIER_BIN  $CARRIER_BIN if set, else $CARRIER_BUILD_DIR/bin/carrier, built when missing
#   JOBS         $JOBS if set, else the number of cores
# and defines paper_python SCRIPT ARGS... (Debian's /usr/bin/python3 with the analysis package
# importable and a private matplotlib config folder).
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$ROOT/out/papers/$(basename "$HERE")}"
if [ -z "${CARRIER_BIN:-}" ]; then
  # shellcheck source=common.sh
  source "$ROOT/scripts/common.sh"
  [ -x "$CARRIER_BUILD_DIR/bin/carrier" ] || carrier_build carrier
  CARRIER_BIN="$CARRIER_BUILD_DIR/bin/carrier"
fi
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
rm -rf "$OUT" && mkdir -p "$OUT"

paper_python() {
  MPLCONFIGDIR="${MPLCONFIGDIR:-$(mktemp -d)}" PYTHONPATH="$ROOT" /usr/bin/python3 "$@"
}
