# scripts/paper-common.sh: sourced by every papers/*/reproduce.sh after it sets HERE (its own
# folder), and by scripts/reproduce-all.sh (with HERE unset: then only the functions and the
# build are wanted). Arguments: the reproduce script's own ([OUT_DIR]). Sets
#   ROOT         the repository root
#   OUT          OUT_DIR, default out/papers/<folder name>, emptied and created
#   CARRIER_BIN  $CARRIER_BIN if set; else the Debian packages are installed with
#                scripts/common.sh's carrier_install_deps (the function README commands (a) and
#                (b) use) and paper_build_carrier builds the carrier target
#   JOBS         $JOBS if set, else the number of cores
# and defines paper_python SCRIPT ARGS... (Debian's /usr/bin/python3 with the analysis package
# importable and a private matplotlib config folder) and paper_summary (papers/README.md's
# table, regenerated from every CLAIMS.md).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PAPER_BUILD_DIR="${CARRIER_BUILD_DIR:-}"  # before common.sh gives it a default

# paper_build_carrier: build only the `carrier` target. The build step always runs, so a stale
# binary is rebuilt (ninja does nothing when it is current). A build folder that is already
# configured (README commands (a)/(b) made build/) is reused with its own settings; otherwise
# the papers get their own folder, build-papers/, configured with the tests off
# (-DCARRIER_BUILD_TESTS=OFF: no Catch2 needed, no test binaries built) and CUDA off (no paper
# runs a GPU kernel; nvcc would add minutes), so they never switch a test build's tests off.
paper_build_carrier() {
  local dir="$PAPER_BUILD_DIR"
  if [ -z "$dir" ]; then
    if [ -f "$ROOT/build/CMakeCache.txt" ]; then dir="$ROOT/build"; else dir="$ROOT/build-papers"; fi
  fi
  local args=(-S "$ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release)
  [ -f "$dir/CMakeCache.txt" ] || args+=(-DCARRIER_BUILD_TESTS=OFF -DCARRIER_WITH_CUDA=OFF)
  cmake "${args[@]}" >/dev/null
  cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)" --target carrier >&2
  CARRIER_BIN="$dir/bin/carrier"
}

if [ -z "${CARRIER_BIN:-}" ]; then
  # shellcheck source=common.sh
  source "$ROOT/scripts/common.sh"
  carrier_install_deps
  paper_build_carrier
fi
export CARRIER_BIN
JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"

paper_python() {
  MPLCONFIGDIR="${MPLCONFIGDIR:-$(mktemp -d)}" PYTHONPATH="$ROOT" /usr/bin/python3 "$@"
}

paper_summary() {
  paper_python -m analysis.claims summary "$ROOT/papers" >/dev/null
}

if [ -n "${HERE:-}" ]; then
  OUT="${1:-$ROOT/out/papers/$(basename "$HERE")}"
  rm -rf "$OUT" && mkdir -p "$OUT"
fi
