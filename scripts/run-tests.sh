#!/usr/bin/env bash
# README command (b): install what is missing, build, run the whole test suite (fast, slow and
# gpu labels; gpu tests report Skipped where there is no GPU). Extra arguments go to ctest,
# e.g. `bash scripts/run-tests.sh -L fast`.
source "$(dirname "$0")/common.sh"
carrier_install_deps
carrier_build
cd "$CARRIER_BUILD_DIR"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
