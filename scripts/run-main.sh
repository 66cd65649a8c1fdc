#!/usr/bin/env bash
# README command (a): install what is missing, build `carrier`, run the default study
# (experiments/configs/default.toml, embedded in the binary as `carrier sweep --default`) into
# $CARRIER_BUILD_DIR/main-job/ (trials.csv, manifest.json, config.toml; replaced on every
# run), print its summary table, and render its figures as PNG with /usr/bin/python3 and
# matplotlib (scripts/plot_default.py) into main-job/figures/.
# Extra arguments go to the sweep, e.g. `bash scripts/run-main.sh --jobs 1`.
source "$(dirname "$0")/common.sh"
carrier_install_deps
carrier_build carrier
out="$CARRIER_BUILD_DIR/main-job"
rm -rf "$out"
"$CARRIER_BUILD_DIR/bin/carrier" sweep --default -o "$out" "$@"
echo
echo "figures:"
/usr/bin/python3 "$CARRIER_ROOT/scripts/plot_default.py" "$out"
echo "data: $out/trials.csv, $out/manifest.json"
