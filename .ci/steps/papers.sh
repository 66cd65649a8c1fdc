#!/usr/bin/env bash
# CI step (papers): the claim rules hold on the committed CLAIMS.md files, and two cheap paper
# folders regenerate byte-identical data, figures and CLAIMS.md from the committed configs
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
  # The CLAIMS.md hardware line names this machine's CPU: the only line allowed to differ.
  if ! git diff --quiet -I '^Hardware: ' -- "papers/$name" papers/README.md; then
    echo "ci papers: $name did not regenerate its committed outputs byte for byte:" >&2
    git diff --stat -I '^Hardware: ' -- "papers/$name" papers/README.md >&2
    exit 1
  fi
done
echo "ci papers: ok"
