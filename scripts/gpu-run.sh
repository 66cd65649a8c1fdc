#!/usr/bin/env bash
# scripts/gpu-run.sh: build and run carrier's GPU tests and benchmarks on a machine with CUDA
# (nvcc, CMake, a GPU) but without Debian's other packages. One command, from the repository root:
#
#   bash scripts/gpu-run.sh [OUTPUT_DIR]          (default: gpu-results/)
#
# What it does: finds nvcc (PATH or /usr/local/cuda/bin); finds Catch2 v2, nlohmann-json and
# CLI11, or unpacks the carried .debs (`apt-get download catch2 nlohmann-json3-dev libcli11-dev`
# on a Debian machine into .debs/, git-ignored) into a prefix
# under /tmp with dpkg -x (never into /); configures build-gpu/ with MPFR, Highway and OpenMP off
# and CUDA on (sm_80 and sm_90; CUDA_ARCHS=... overrides); builds the GPU tests and
# carrier_gpu_bench; runs `ctest -L gpu` (the kernels against their CPU replay, bit for bit),
# the benchmark (Sum and log-sum-exp at n = 2^28 against a device-to-device copy and CUB, and the
# attention kernel), and, when Python can import torch, scripts/gpu_bench_attention.py (the
# attention kernel against PyTorch's scaled_dot_product_attention). Everything it prints is also
# written to OUTPUT_DIR (gpu.txt, ctest.txt, bench.txt, attention.txt). Without Catch2 it still
# builds and runs the benchmark, and says the tests were not built.
# With TC_CASES=DIR (written by `scripts/gpu_tensor_core.py cases --out DIR`) and torch, it also
# multiplies those cases through cuBLAS and saves the fp32 outputs as OUTPUT_DIR/tc.npz (and
# tc.txt), for `scripts/gpu_tensor_core.py compare` against the mma: profiles on any machine;
# carrier_mma_dump writes mma_tf32.bin and mma_bf16.bin (WMMA tiles with a random accumulator).
# Environment: BENCH_N (default 268435456 = 2^28), BENCH_REPEATS (20), JOBS (nproc),
# CUDA_ARCHS ("80;90"), PREBUILT=1 (build-gpu/ was built elsewhere at this same path: skip the
# configure and build steps), STEP_TIMEOUT (seconds per step, default 900).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/gpu-results}"
build="$root/build-gpu"
mkdir -p "$out"
cd "$root"

nvcc_path="$(command -v nvcc || true)"
[ -z "$nvcc_path" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc_path=/usr/local/cuda/bin/nvcc
if [ -z "$nvcc_path" ]; then
  echo "gpu-run: nvcc not found on PATH or in /usr/local/cuda/bin" >&2
  exit 2
fi
command -v cmake >/dev/null || { echo "gpu-run: cmake not found" >&2; exit 2; }
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# Catch2 v2: installed, or unpacked from carried .debs.
prefix_args=()
tests=ON
have_catch2() {
  [ -f /usr/include/catch2/catch.hpp ] || [ -f /usr/local/include/catch2/catch.hpp ]
}
# nlohmann-json and CLI11 (header-only) are required: from the carried .debs when not installed.
have_header() { [ -f "/usr/include/$1" ] || [ -f "/usr/local/include/$1" ]; }
# With PREBUILT=1 nothing is compiled here: no headers or packages are needed.
if [ "${PREBUILT:-0}" != 1 ]; then
  if ! have_header nlohmann/json.hpp || ! have_header CLI/CLI.hpp; then
    if ! ls "$root"/.debs/nlohmann-json3-dev_*.deb "$root"/.debs/libcli11-dev_*.deb >/dev/null 2>&1; then
      echo "gpu-run: nlohmann-json or CLI11 not installed and not in .debs/ (apt-get download" \
           "nlohmann-json3-dev libcli11-dev on a Debian machine, into .debs/)" >&2
      exit 2
    fi
  fi
  if ! have_catch2 || ! have_header nlohmann/json.hpp || ! have_header CLI/CLI.hpp; then
    debs=("$root"/.debs/*.deb)
    if [ -e "${debs[0]}" ] && command -v dpkg >/dev/null; then
      prefix="/tmp/carrier-prefix"
      mkdir -p "$prefix"
      for deb in "$root"/.debs/*.deb; do dpkg -x "$deb" "$prefix"; done
      prefix_args=(-DCMAKE_PREFIX_PATH="$prefix/usr")
      echo "gpu-run: packages from carried .debs, unpacked into $prefix"
    fi
    if ! have_catch2 && ! ls "$root"/.debs/catch2_*.deb >/dev/null 2>&1; then
      tests=OFF
      echo "gpu-run: Catch2 v2 not found and no .debs/catch2_*.deb to unpack: building the" \
           "benchmark only (GPU tests NOT built)"
    fi
  fi
fi

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (dirty)')"
  echo "nvcc: $("$nvcc_path" --version | tail -1)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
} | tee "$out/gpu.txt"

step_timeout="${STEP_TIMEOUT:-900}"
if [ "${PREBUILT:-0}" = 1 ]; then
  [ -x "$build/bin/carrier_gpu_bench" ] || { echo "gpu-run: PREBUILT=1 but $build/bin/carrier_gpu_bench is missing" >&2; exit 2; }
  tests=ON
  [ -x "$build/tests/cuda/gpu_kernel_tests" ] || tests=OFF
  echo "gpu-run: using the prebuilt $build (tests=$tests)" | tee -a "$out/gpu.txt"
else
cmake -S "$root" -B "$build" ${generator[@]+"${generator[@]}"} -DCMAKE_BUILD_TYPE=Release \
  -DCARRIER_WITH_MPFR=OFF -DCARRIER_WITH_HWY=OFF -DCARRIER_WITH_OPENMP=OFF \
  -DCARRIER_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc_path" \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHS:-80;90}" -DCARRIER_BUILD_TESTS="$tests" \
  ${prefix_args[@]+"${prefix_args[@]}"} >"$out/configure.txt"
targets=(carrier_gpu_bench carrier_mma_dump)
[ "$tests" = ON ] && targets+=(gpu_kernel_tests gpu_core_tests gpu_mma_tests cuda_api_tests nvcc_tests)
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target "${targets[@]}" >"$out/build.txt"
fi

status=0
# The tensor-core cases first: they take seconds.
if [ -n "${TC_CASES:-}" ]; then
  if python3 -c "import torch" 2>/dev/null; then
    timeout "$step_timeout" python3 "$root/scripts/gpu_tensor_core.py" run --cases "$TC_CASES" \
      --out "$out/tc.npz" 2>&1 | tee -a "$out/gpu.txt" || status=1
  else
    echo "gpu-run: python3 cannot import torch: tensor-core cases skipped" | tee -a "$out/gpu.txt"
  fi
fi
# mma.sync through WMMA with an accumulator (tf32, bf16): OUTPUT_DIR/mma_*.bin for
# scripts/gpu_tensor_core.py mma-export.
if [ -x "$build/bin/carrier_mma_dump" ]; then
  timeout "$step_timeout" "$build/bin/carrier_mma_dump" "$out" --tiles 128 2>&1 | tee -a "$out/gpu.txt" || status=1
fi
if [ "$tests" = ON ]; then
  (cd "$build" && ctest -L gpu --output-on-failure -V --timeout "$step_timeout") 2>&1 | tee "$out/ctest.txt" || status=1
  if [ -x "$build/tests/cuda/cuda_api_tests" ]; then
    (cd "$build" && ctest -R "cuda_api_tests|nvcc_tests" --output-on-failure) 2>&1 | tee -a "$out/ctest.txt" || status=1
  fi
fi
timeout "$step_timeout" "$build/bin/carrier_gpu_bench" --n "${BENCH_N:-268435456}" --repeats "${BENCH_REPEATS:-20}" \
  2>&1 | tee "$out/bench.txt" || status=1
if python3 -c "import torch" 2>/dev/null; then
  timeout "$step_timeout" python3 "$root/scripts/gpu_bench_attention.py" --bench "$build/bin/carrier_gpu_bench" \
    --repeats "${BENCH_REPEATS:-20}" 2>&1 | tee "$out/attention.txt" || status=1
else
  echo "gpu-run: python3 cannot import torch: attention vs PyTorch SDPA skipped" | tee "$out/attention.txt"
fi
echo "gpu-run: results in $out (status $status)"
exit "$status"
