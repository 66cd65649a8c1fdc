#!/usr/bin/env bash
# README command (a): install what is missing, build `carrier`, run the default study
# (experiments/configs/default.toml, embedded in the binary as `carrier sweep --default`) into
# $CARRIER_BUILD_DIR/main-job/ (trials.csv, manifest.json, config.toml; replaced on every
# run), print its summary table, and render its figures as PNG with /usr/bin/python3 and
# matplotlib (scripts/plot_default.py) into main-job/figures/.
# Extra arguments go to the sweep, e.g. `bash scripts/run-main.sh --jobs 1`.
#
# The main job builds only what it runs, within two minutes on a bare 2-core machine: the
# default study is replay only, so on a build folder this script configures first it leaves out
# the SIMD/OpenMP/CUDA kernels, the verbs the study does not run, the compute types it does not
# use (fp64, mpfr, two-level; CARRIER_MAIN_JOB_ONLY), the tests and the Python module, and it
# compiles at -O1 as a unity build (the rows are bit-identical to a full -O3 build's: .ci/steps/
# main-job.sh compares them; -O1 costs the 4-second study about a second). It installs only
# CARRIER_MAIN_PACKAGES (no Boost), matplotlib in the background while compiling. A build folder
# that already exists keeps its configuration: after README command (b) this reuses that full
# build and compiles nothing.
source "$(dirname "$0")/common.sh"
carrier_install_deps "${CARRIER_MAIN_BUILD_PACKAGES[@]}"
carrier_install_deps_background "${CARRIER_MAIN_PLOT_PACKAGES[@]}"
if [ -f "$CARRIER_BUILD_DIR/CMakeCache.txt" ]; then
  carrier_build carrier
else
  carrier_build carrier -- -DCARRIER_WITH_HWY=OFF -DCARRIER_WITH_OPENMP=OFF \
    -DCARRIER_WITH_CUDA=OFF -DCARRIER_WITH_PYTHON=OFF -DCARRIER_BUILD_TESTS=OFF \
    -DCARRIER_MAIN_JOB_ONLY=ON -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
fi
out="$CARRIER_BUILD_DIR/main-job"
rm -rf "$out"
"$CARRIER_BUILD_DIR/bin/carrier" sweep --default -o "$out" "$@"
echo
echo "figures:"
carrier_wait_deps
/usr/bin/python3 "$CARRIER_ROOT/scripts/plot_default.py" "$out"
echo "data: $out/trials.csv, $out/manifest.json"
