#!/usr/bin/env bash
# CI's sanitizer pass, run by .ci/run after README command (b): one clang-14 build folder
# (build-san) with AddressSanitizer + UndefinedBehaviorSanitizer, asserts on, at -O0 with line
# tables, every library also carrying libFuzzer's coverage instrumentation (CARRIER_FUZZ). In it:
#   1. the fast tests (ctest -L fast, but for the long sweeps listed in .ci/sanitize-skip.txt),
#      the same tests command (b) ran unsanitized;
#   2. every libFuzzer target of tests/fuzz for CARRIER_FUZZ_SECONDS each (default 40; CI: 5) from its
#      seed corpus and dictionary. New inputs go to a scratch corpus, never into the
#      repository; a crash, a sanitizer report or a failed property fails the step and leaves
#      the input under build-san/artifacts/ (add it to tests/fuzz/corpus/<target>/ with the fix).
# One build serves both, so the libraries compile once for the two passes. Highway's SIMD
# kernels are in it; OpenMP and CUDA are not (clang-14 without libomp; nvcc does not take the
# sanitizer flags): their tests run unsanitized in command (b).
# The build is a unity build (CMake joins each target's sources, 8 to a translation unit, so
# shared headers are parsed once per 8 files: 40% less CPU on the test and experiments units
# measured) linked by lld (Debian: lld; clang-14 finds /usr/bin/ld.lld): 4 s instead of 18 s
# for bin/carrier. Both only shorten the build, two thirds of this step; what is compiled, and
# what runs, is the same.
# Needs clang-14, libclang-rt-14-dev and lld, installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/common.sh
carrier_install_deps clang-14 libclang-rt-14-dev lld

seconds="${CARRIER_FUZZ_SECONDS:-40}"
build="${CARRIER_SANITIZE_BUILD_DIR:-$PWD/build-san}"
jobs="$(nproc 2>/dev/null || echo 2)"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

t0=$SECONDS
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O0 -gline-tables-only" \
  -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
  -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8 \
  -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
  -DCARRIER_FUZZ=ON -DCARRIER_SANITIZE=address,undefined -DCARRIER_BUILD_TESTS=ON \
  -DCARRIER_WITH_HWY=AUTO -DCARRIER_WITH_OPENMP=OFF -DCARRIER_WITH_CUDA=OFF \
  -DCARRIER_WITH_PYTHON=OFF >/dev/null
cmake --build "$build" -j "$jobs"
echo "sanitize: build ${build} in $((SECONDS - t0)) s"

# The fast tests named in .ci/sanitize-skip.txt (long arithmetic sweeps and whole CLI tables,
# with their measured times there) run unsanitized in command (b) only. Each name becomes an
# escaped alternative of ctest -E anchored at the name's end (no groups: CTest's regex allows
# only nine, and a pattern it cannot compile silently matches nothing, hence the count check).
heavy=''
while IFS= read -r name; do
  case "$name" in '' | '#'*) continue ;; esac
  name=$(printf '%s' "$name" | sed 's/[][\\.*^$(){}?+|/]/\\&/g')
  heavy+="${heavy:+|}${name}\$"
done <.ci/sanitize-skip.txt
[ -n "$heavy" ] || { echo "sanitize: .ci/sanitize-skip.txt names no test" >&2; exit 1; }
listed=$(grep -c '^[^#]' .ci/sanitize-skip.txt)
skipped=$(cd "$build" && ctest -N -L fast -R "$heavy" | grep -c 'Test *#' || true)
if [ "$skipped" -ne "$listed" ]; then
  echo "sanitize: .ci/sanitize-skip.txt lists $listed tests but its pattern matches $skipped:" \
    "a name there is not a fast test's (renamed?)" >&2
  exit 1
fi
echo "sanitize: $skipped fast tests left to command (b) (.ci/sanitize-skip.txt)"
# Random-trial counts (tests/support/test_support.hpp Trials) at a quarter: the sanitizers look
# for memory errors and undefined behaviour on every path a test drives, which a quarter of the
# random cases still drive; the full counts run unsanitized in command (b).
t0=$SECONDS
(cd "$build" &&
  CARRIER_TEST_MULTIPLIER="${CARRIER_TEST_MULTIPLIER:-0.25}" \
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
