#!/usr/bin/env bash
# CI step (papers): the claim rules hold on the committed CLAIMS.md files, and two cheap paper
# folders regenerate byte-identical data and CLAIMS.md, and their figures up to anti-aliasing
# (below), from the committed configs
# (bhh2021: a few seconds; higham1993: about a minute). Run from the repository root after
# README command (b) has built into build/.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CARRIER_BIN="$PWD/build/bin/carrier"
[ -x "$CARRIER_BIN" ] || { echo "ci papers: $CARRIER_BIN missing (run README command (b))" >&2; exit 1; }
# Every CLAIMS.md carries the counts line the summary is built from.
PYTHONPATH="$PWD" /usr/bin/python3 -m analysis.claims counts papers/*/CLAIMS.md
for name in bhh2021-lse-softmax higham1993-summation; do
  echo "== papers/$name/reproduce.sh"
  bash "papers/$name/reproduce.sh" "build/ci-papers/$name"
  # A figure may differ from the committed one only in anti-aliasing: numpy and libm take
  # other SIMD paths on other CPUs (AVX-512 Intel vs AMD), which moves an edge pixel by one
  # level. Same size, at most 0.1% of the pixels off, by at most 2/255: restored, counted as
  # equal; anything more is a changed figure. Data and CLAIMS.md stay byte for byte.
  for png in $(git diff --name-only -- "papers/$name" | grep '\.png$' || true); do
    if git show "HEAD:$png" | /usr/bin/python3 -c '
import io, sys
import matplotlib.image as im
import numpy as np
a = im.imread(io.BytesIO(sys.stdin.buffer.read()), format="png")
b = im.imread(sys.argv[1])
ok = a.shape == b.shape
if ok:
    off = np.abs(a.astype(float) - b.astype(float)).max(axis=-1)
    ok = (off > 0).mean() <= 1e-3 and off.max() <= 2 / 255 + 1e-6
    print(f"ci papers: {sys.argv[1]}: {(off > 0).sum()} pixels differ by at most {off.max() * 255:.0f}/255")
sys.exit(0 if ok else 1)' "$png"; then
      git checkout -- "$png"
    fi
  done
  # The CLAIMS.md hardware line names this machine's CPU: the only line allowed to differ.
  if ! git diff --quiet -I '^Hardware: ' -- "papers/$name" papers/README.md; then
    echo "ci papers: $name did not regenerate its committed outputs byte for byte:" >&2
    git diff --stat -I '^Hardware: ' -- "papers/$name" papers/README.md >&2
    exit 1
  fi
done
echo "ci papers: ok"
