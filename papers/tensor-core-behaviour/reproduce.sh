#!/usr/bin/env bash
# papers/tensor-core-behaviour/reproduce.sh [OUT_DIR]: regenerate data/*.csv and CLAIMS.md of this
# folder from an empty OUT_DIR (default out/papers/tensor-core-behaviour).
# carrier: $CARRIER_BIN if set, else packages installed and carrier built (scripts/paper-common.sh).
#
# The Khattak-Mikaitis comparison reads the authors' GPU validation data (not committed here:
# README.md, "Data"): $KM_DATA, a folder holding model_validation/GPU/FORMAT/*.txt of
# github.com/north-numerical-computing/MATLAB-tensor-core (commit b12b5a7); else
# /work/shared/data/khattak-mikaitis; else the files are read from a git copy of that
# repository at $KM_GIT (default: this machine's fetched mirror) at commit b12b5a7.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../../scripts/paper-common.sh
source "$HERE/../../scripts/paper-common.sh" "$@"

KM_COMMIT=b12b5a700957655375a1b0c1d0c26e76065da015
KM_GIT="${KM_GIT:-/work/.mirror/north-numerical-computing+MATLAB-tensor-core/repo}"
if [ -n "${KM_DATA:-}" ]; then
  KM_DIR="$KM_DATA"
elif [ -d /work/shared/data/khattak-mikaitis/model_validation ]; then
  KM_DIR=/work/shared/data/khattak-mikaitis
elif git --git-dir="$KM_GIT" cat-file -e "$KM_COMMIT^{commit}" 2>/dev/null; then
  KM_DIR="$OUT/km"
  for f in $(git --git-dir="$KM_GIT" ls-tree -r --name-only "$KM_COMMIT" model_validation |
             grep '\.txt$'); do
    mkdir -p "$KM_DIR/$(dirname "$f")"
    git --git-dir="$KM_GIT" show "$KM_COMMIT:$f" >"$KM_DIR/$f"
  done
else
  echo "tensor-core-behaviour: the Khattak-Mikaitis validation data is missing: set KM_DATA to a" \
       "folder with model_validation/ of north-numerical-computing/MATLAB-tensor-core @ b12b5a7" >&2
  exit 2
fi

paper_python "$HERE/make_figures.py" --out "$OUT" --carrier "$CARRIER_BIN" --km-dir "$KM_DIR" \
  --jobs "$JOBS" >"$OUT/make_figures.log"

# papers/README.md: the summary table over every CLAIMS.md.
paper_summary
