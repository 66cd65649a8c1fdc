#!/usr/bin/env bash
# CI step (issue 17), run from the repo root after README command (b) built into build/:
# `carrier sweep --slurm` on a real single-node Slurm (slurm-wlm + munge, installed here when
# missing; .ci/run installs them in the background earlier). The test starts its own controller
# and node daemon on localhost in a temporary folder and stops them when done; command (b) ran
# it too and reported it Skipped where Slurm was absent, so here a skip is a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
carrier_install_deps slurm-wlm munge
source .ci/required-test.sh
ci_required_test '^slurm: ' "the Slurm test did not run although slurm-wlm and munge are installed"
