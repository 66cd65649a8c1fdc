#!/usr/bin/env bash
# CI's sanitizer pass, run by .ci/run after README command (b): one clang-14 build folder
# (build-san) with AddressSanitizer + UndefinedBehaviorSanitizer, asserts on, at -O0 with line
# tables, every library also carrying libFuzzer's coverage instrumentation (CARRIER_FUZZ). In it:
#   1. the fast tests (ctest -L fast, but for seven long arithmetic sweeps named below), the
#      same tests command (b) ran unsanitized;
#   2. every libFuzzer target of tests/fuzz for CARRIER_FUZZ_SECONDS each (default 40; CI: 10) from its
#      seed corpus and dictionary. New inputs go to a scratch corpus, never into the
#      repository; a crash, a sanitizer report or a failed property fails the step and leaves
#      the input under build-san/artifacts/ (add it to tests/fuzz/corpus/<target>/ with the fix).
# One build serves both, so the libraries compile once for the two passes. Highway's SIMD
# kernels are in it; OpenMP and CUDA are not (clang-14 without libomp; nvcc does not take the
# sanitizer flags): their tests run unsanitized in command (b).
# Needs clang-14 and libclang-rt-14-dev, installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
carrier_install_deps clang-14 libclang-rt-14-dev

seconds="${CARRIER_FUZZ_SECONDS:-40}"
build="${CARRIER_SANITIZE_BUILD_DIR:-$PWD/build-san}"
jobs="$(nproc 2>/dev/null || echo 2)"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

t0=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -gline-tables-only" \
  -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
  -DCARRIER_FUZZ=ON -DCARRIER_SANITIZE=address,undefined -DCARRIER_BUILD_TESTS=ON \
  -DCARRIER_WITH_HWY=AUTO -DCARRIER_WITH_OPENMP=OFF -DCARRIER_WITH_CUDA=OFF \
  -DCARRIER_WITH_PYTHON=OFF >/dev/null
cmake --build "$build" -j "$jobs"
echo "sanitize: build ${build} in $((SECONDS - t0)) s"

# Seven fast tests are arithmetic-equality sweeps that take 50-330 s each at -O0 under the
# sanitizers (about 1000 of the pass's 1400 test-seconds, measured here): FPRev's planted-tree
# recovery, FastReplay == Replay over emulated formats x modes and over MPFR, the references
# split across threads, engine fast == oracle over the replay matrix, GatheredAdd over every
# layout, and the CUDA lane-by-lane simulation. They run unsanitized in command (b); the code
# they sweep (FastReplay, the emulated adds, BuildTree, the probe, the references) runs here
# under the sanitizers in the smaller tests of the same executables.
heavy='FPRev recovers planted trees exactly|FastReplay == Replay: emulated formats in every'
heavy+='|FastReplay == Replay: Mpfr 64 and 256|references split across PassThreads equal the'
heavy+='|engine fast equals engine oracle over the replay matrix|GatheredAdd<FastEmulated> =='
heavy+='|cuda trees are valid and equal the lane-by-lane'
# The analysis suites are Python on Debian's interpreter (plots, figure checks): no code of this
# build runs in them, so a second pass here only repeats command (b)'s.
heavy+='|^analysis_plots$|^analysis_figures$'
t0=$SECONDS
(cd "$build" &&
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --output-on-failure -j "$jobs" -L fast -E "$heavy")
echo "sanitize: fast tests under ASan + UBSan in $((SECONDS - t0)) s"

t0=$SECONDS
# -timeout=120: this build is -O0 with ASan, UBSan and coverage, far slower than the -O2 fuzz
# build the corpus was grown with; a unit past 120 s here would take seconds optimised (the
# first fresh-clone run timed out at 10 s on canonical:7777772 over n <= 100: 22 s here, 0.1 s
# at -O3; the largest L, 2^24, takes about twice that).
# -seed: the same mutations every run (CARRIER_FUZZ_SEED=0 draws a new seed), so that a
# landing is not refused for an input a different draw happened to find; longer runs with
# fresh seeds are how new inputs are found (tests/fuzz/README.md).
mkdir -p "$build/artifacts" "$build/scratch"
status=0
for exe in "$build"/tests/fuzz/fuzz_*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  name="$(basename "$exe")"
  scratch="$build/scratch/$name"
  rm -rf "$scratch" && mkdir -p "$scratch"
  dict=()
  [ -f "tests/fuzz/dict/$name.dict" ] && dict=(-dict="tests/fuzz/dict/$name.dict")
  echo "== $name: ${seconds}s from tests/fuzz/corpus/$name ${dict[*]:-}"
  if ! UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$exe" -max_total_time="$seconds" \
      -seed="${CARRIER_FUZZ_SEED:-1}" -timeout=120 -rss_limit_mb=2048 -print_final_stats=1 \
      "${dict[@]}" \
      -artifact_prefix="$build/artifacts/$name-" "$scratch" "tests/fuzz/corpus/$name" \
      2>"$build/$name.log"; then
    echo "ci: $name failed; its log: $build/$name.log, its input: $build/artifacts/" >&2
    tail -n 40 "$build/$name.log" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/$name.log" || true
done
echo "sanitize: fuzzers in $((SECONDS - t0)) s"
exit "$status"
