#!/usr/bin/env bash
# README command (b): install what is missing, build everything, run the whole test suite
# (fast, slow and gpu labels; gpu tests report Skipped where there is no GPU). Extra arguments
# go to ctest, e.g. `bash scripts/run-tests.sh -L fast`.
#
# It configures the full build whatever an earlier command (a) chose: every dependency found is
# used, the tests and the Python module are built, and wherever nvcc is (PATH or
# /usr/local/cuda/bin) the CUDA kernels are compiled too (-DCARRIER_WITH_CUDA=ON), GPU or not.
source "$(dirname "$0")/common.sh"
carrier_install_deps
cuda=AUTO
[ -n "$(carrier_nvcc)" ] && cuda=ON
carrier_build -- -DCARRIER_WITH_HWY=AUTO -DCARRIER_WITH_OPENMP=AUTO -DCARRIER_WITH_CUDA=$cuda \
  -DCARRIER_WITH_PYTHON=AUTO -DCARRIER_BUILD_TESTS=ON -DCARRIER_MAIN_JOB_ONLY=OFF
cd "$CARRIER_BUILD_DIR"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
