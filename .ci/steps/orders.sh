#!/usr/bin/env bash
# CI step for orders from outside (issue 15): with PyTorch's CPU build from Debian (python3-torch,
# about 220 packages: an optional dependency the README commands do not pull in; .ci/run
# installs it in the background earlier, this installs it when missing), torch.sum's recovered
# tree is replayed to torch's bits at every length of the issue, and torch.matmul's dot is probed. Command (b) ran every other
# orders test (numpy's included) and reported this one Skipped without torch; here a skip is a
# failure. Run from the repository root after README command (b) has built into build/.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
carrier_install_deps python3-torch
/usr/bin/python3 -c 'import torch; print("torch", torch.__version__)'
source .ci/required-test.sh
ci_required_test "torch\.sum's recovered tree" "torch.sum's probe test did not run although torch imports"
# The dot probe on torch.matmul (fp32: OpenBLAS's sdot through torch; bf16: torch's own CPU
# kernel), Skipped in command (b) for the same reason.
ci_required_test "probe dot:torch\.matmul" "the torch.matmul dot-probe tests did not run although torch imports"
