#!/usr/bin/env bash
# CI step (issue 18, tests/fuzz/README.md): builds the libFuzzer targets with clang-14, ASan and
# UBSan in build-fuzz (its own folder: every library there carries coverage instrumentation)
# and runs each from its seed corpus for CARRIER_FUZZ_SECONDS (default 40; eight targets, about
# four minutes). New inputs go to a scratch corpus, never into the repository; a crash, a
# sanitizer report or a failed property fails the step and leaves the input under
# build-fuzz/artifacts/ (add it to tests/fuzz/corpus/<target>/ with the fix).
# Needs the Debian packages clang-14 and libclang-rt-14-dev, installed here when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/common.sh
carrier_install_deps clang-14 libclang-rt-14-dev

seconds="${CARRIER_FUZZ_SECONDS:-40}"
build="${CARRIER_FUZZ_BUILD_DIR:-$PWD/build-fuzz}"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
  -DCARRIER_FUZZ=ON -DCARRIER_SANITIZE=address,undefined -DCARRIER_BUILD_TESTS=OFF \
  -DCARRIER_WITH_HWY=OFF -DCARRIER_WITH_OPENMP=OFF -DCARRIER_WITH_CUDA=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target fuzz_all

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
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="$build/artifacts/$name-" "$scratch" "tests/fuzz/corpus/$name" \
      2>"$build/$name.log"; then
    echo "ci: $name failed; its log: $build/$name.log, its input: $build/artifacts/" >&2
    tail -n 40 "$build/$name.log" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/$name.log" || true
done
exit "$status"
