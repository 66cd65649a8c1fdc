#!/usr/bin/env bash
# CI step for orders from outside (issue 15): install PyTorch's CPU build from Debian
# (python3-torch, about 220 packages: an optional dependency the README commands do not pull
# in), then run the probe tests including the slow ones, so torch.sum's and numpy.sum's
# recovered trees are replayed to the libraries' bits at every length of the issue.
# Run from the repository root after README command (b) has built into build/.
set -euo pipefail
cd "$(dirname "$0")/../.."

if ! /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-torch
fi
/usr/bin/python3 -c 'import torch; print("torch", torch.__version__)'

cmake --build build -j "$(nproc)" --target carrier orders_cli_tests core_tests
build/tests/experiments/orders_cli_tests '[orders]'
build/tests/core/core_tests '[orders]'
