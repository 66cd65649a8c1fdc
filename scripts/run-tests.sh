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
# Command (a) may have configured this folder first for its small build (-O1, CARRIER_MAIN_JOB_ONLY):
# those choices are reset here, so the full build compiles with CMake's Release flags at -O3.
# It is a unity build (CMake joins each target's sources, 8 to a translation unit, so shared
# headers and templates are parsed and instantiated once per 8 files): 1525 CPU-seconds instead
# of 1951 on the 2-core machine, 12.3 instead of 17 minutes of wall time. The sources are the
# same and so is every result; CARRIER_UNITY=OFF builds one file per unit instead (quicker to
# rebuild after editing one file).
unity="${CARRIER_UNITY:-ON}"
carrier_build -- -DCARRIER_WITH_HWY=AUTO -DCARRIER_WITH_OPENMP=AUTO -DCARRIER_WITH_CUDA=$cuda \
  -DCARRIER_WITH_PYTHON=AUTO -DCARRIER_BUILD_TESTS=ON -DCARRIER_MAIN_JOB_ONLY=OFF \
  -DCMAKE_UNITY_BUILD="$unity" -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O3 -DNDEBUG"
cd "$CARRIER_BUILD_DIR"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
