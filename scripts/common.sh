# scripts/common.sh: shared by run-main.sh and run-tests.sh (sourced, not run).
# Installs the Debian packages carrier needs (root) or prints the exact sudo line (non-root),
# then configures and builds into ${CARRIER_BUILD_DIR:-build}.
set -euo pipefail

CARRIER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRIER_BUILD_DIR="${CARRIER_BUILD_DIR:-$CARRIER_ROOT/build}"

# Everything carrier builds against, by Debian package name (TOOLCHAIN.md): the main job's
# part (CARRIER_MAIN_PACKAGES: the replay-only `carrier` and its figures) and the rest, which
# README command (b) needs for the kernels, the tests and the Python module.
CARRIER_MAIN_BUILD_PACKAGES=(cmake g++ ninja-build pkg-config libmpfr-dev libgmp-dev
                             libtomlplusplus-dev nlohmann-json3-dev libcli11-dev)
CARRIER_MAIN_PLOT_PACKAGES=(python3-matplotlib python3-numpy)
CARRIER_MAIN_PACKAGES=("${CARRIER_MAIN_BUILD_PACKAGES[@]}" "${CARRIER_MAIN_PLOT_PACKAGES[@]}")
CARRIER_PACKAGES=("${CARRIER_MAIN_PACKAGES[@]}" libboost-dev catch2 libhwy-dev python3-scipy
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
  CARRIER_APT_UPDATED=1
  # shellcheck disable=SC2086
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# carrier_install_deps_background PACKAGE...: as carrier_install_deps, but apt runs in the
# background (its output in $CARRIER_BUILD_DIR/apt-background.log) so that it overlaps the
# compile; call it after any foreground install (one apt at a time) and carrier_wait_deps
# before using the packages. Not root: the same sudo line and exit 2 as carrier_install_deps.
carrier_install_deps_background() {
  local missing
  missing="$(carrier_missing_packages "$@")"
  [ -z "$missing" ] && return 0
  [ "$(id -u)" -ne 0 ] && carrier_install_deps "$@"
  mkdir -p "$CARRIER_BUILD_DIR"
  CARRIER_APT_LOG="$CARRIER_BUILD_DIR/apt-background.log"
  echo "carrier: installing Debian packages while it builds: $missing" >&2
  (
    export DEBIAN_FRONTEND=noninteractive
    [ -n "${CARRIER_APT_UPDATED:-}" ] || apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
  ) >"$CARRIER_APT_LOG" 2>&1 &
  CARRIER_APT_PID=$!
  # A failed build must not leave apt running behind the user's next command (dpkg's lock).
  trap 'carrier_wait_deps >/dev/null 2>&1 || true' EXIT
}

# carrier_wait_deps: waits for carrier_install_deps_background; its log and exit 2 on failure.
carrier_wait_deps() {
  [ -n "${CARRIER_APT_PID:-}" ] || return 0
  local pid="$CARRIER_APT_PID"
  CARRIER_APT_PID=
  if ! wait "$pid"; then
    echo "carrier: installing Debian packages failed; the end of $CARRIER_APT_LOG:" >&2
    tail -n 15 "$CARRIER_APT_LOG" >&2
    exit 2
  fi
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
