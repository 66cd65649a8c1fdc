#!/usr/bin/env bash
# README command (a): install what is missing, build, run the main job (`carrier demo`).
# Extra arguments go to the demo, e.g. `bash scripts/run-main.sh --n 2^20`.
source "$(dirname "$0")/common.sh"
carrier_install_deps
carrier_build carrier
"$CARRIER_BUILD_DIR/bin/carrier" demo "$@"
