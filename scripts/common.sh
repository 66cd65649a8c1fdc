# scripts/common.sh: shared by run-main.sh and run-tests.sh (sourced, not run).
# Installs the Debian packages carrier needs (root) or prints the exact sudo line (non-root),
# then configures and builds into ${CARRIER_BUILD_DIR:-build}.
set -euo pipefail

CARRIER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRIER_BUILD_DIR="${CARRIER_BUILD_DIR:-$CARRIER_ROOT/build}"

# Everything carrier builds against, by Debian package name (TOOLCHAIN.md): the main job's
# part (CARRIER_MAIN_PACKAGES: the replay-only `carrier` and its figures) and the rest, which
# README command (b) needs for the kernels, the tests and the Python module.
CARRIER_MAIN_PACKAGES=(cmake g++ ninja-build pkg-config libboost-dev libmpfr-dev libgmp-dev
                       libtomlplusplus-dev nlohmann-json3-dev libcli11-dev python3-matplotlib
                       python3-numpy)
CARRIER_PACKAGES=("${CARRIER_MAIN_PACKAGES[@]}" catch2 libhwy-dev python3-scipy
                  python3-dev pybind11-dev python3-pandas python3-pytest)

# carrier_missing_packages [PACKAGE...]: those not installed (default: CARRIER_PACKAGES).
carrier_missing_packages() {
  local missing=() p wanted=("$@")
  [ $# -eq 0 ] && wanted=("${CARRIER_PACKAGES[@]}")
  for p in "${wanted[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  echo "${missing[@]:-}"
}

# carrier_install_deps [PACKAGE...]: installs the missing ones (default: CARRIER_PACKAGES).
carrier_install_deps() {
  local missing
  missing="$(carrier_missing_packages "$@")"
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "carrier: missing Debian packages: $missing" >&2
    echo "carrier: run this once, then rerun this command:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
    exit 2
  fi
  echo "carrier: installing Debian packages: $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# carrier_nvcc: the nvcc CMake would use (PATH, then /usr/local/cuda/bin), or nothing.
carrier_nvcc() {
  command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true
}

# carrier_build [TARGET...] [-- CMAKE_ARG...]: configure (Release, Ninja, plus CMAKE_ARGs) and
# build the given targets (all when none are given).
carrier_build() {
  local jobs targets=() cmake_args=()
  jobs="$(nproc 2>/dev/null || echo 2)"
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do targets+=(--target "$1"); shift; done
  [ "${1:-}" = "--" ] && shift && cmake_args=("$@")
  cmake -S "$CARRIER_ROOT" -B "$CARRIER_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${cmake_args[@]+"${cmake_args[@]}"} >/dev/null
  cmake --build "$CARRIER_BUILD_DIR" -j "$jobs" "${targets[@]}"
}
