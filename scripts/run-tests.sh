#!/usr/bin/env bash
# README command (b): install what is missing, build everything, run the whole test suite
# (fast, slow and gpu labels; gpu tests report Skipped where there is no GPU). Extra arguments
# go to ctest, e.g. `bash scripts/run-tests.sh -L fast`.
#
# It configures the full build whatever an earlier command (a) chose: every dependency found is
# used, the tests and the Python module are built, and wherever nvcc is on PATH (or
# CARRIER_CUDA=ON) the CUDA kernels are compiled too (-DCARRIER_WITH_CUDA=ON), GPU or not.
source "$(dirname "$0")/common.sh"
carrier_install_deps
# CUDA kernels: ON where nvcc is on PATH (a CUDA workstation's set-up) or CARRIER_CUDA=ON;
# otherwise AUTO (built only where a GPU driver is). /usr/local/cuda/bin alone does not switch
# it on: the merged CUDA sources of this round have not yet been compiled by nvcc (no GPU
# session), so a machine that merely carries a toolkit off PATH keeps its build CPU-only.
cuda="${CARRIER_CUDA:-AUTO}"
command -v nvcc >/dev/null 2>&1 && cuda=ON
carrier_build -- -DCARRIER_WITH_HWY=AUTO -DCARRIER_WITH_OPENMP=AUTO -DCARRIER_WITH_CUDA=$cuda \
  -DCARRIER_WITH_PYTHON=AUTO -DCARRIER_BUILD_TESTS=ON -DCARRIER_MAIN_JOB_ONLY=OFF
cd "$CARRIER_BUILD_DIR"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
