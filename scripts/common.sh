# scripts/common.sh: shared by run-main.sh and run-tests.sh (sourced, not run).
# Installs the Debian packages carrier needs (root) or prints the exact sudo line (non-root),
# then configures and builds into ${CARRIER_BUILD_DIR:-build}.
set -euo pipefail

CARRIER_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CARRIER_BUILD_DIR="${CARRIER_BUILD_DIR:-$CARRIER_ROOT/build}"

# Everything carrier builds against, by Debian package name (TOOLCHAIN.md).
CARRIER_PACKAGES=(cmake g++ ninja-build pkg-config catch2 libboost-dev libmpfr-dev libgmp-dev
                  libhwy-dev libtomlplusplus-dev python3-matplotlib python3-numpy python3-scipy
                  clang-14 libclang-rt-14-dev)

carrier_missing_packages() {
  local missing=() p
  for p in "${CARRIER_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  echo "${missing[@]:-}"
}

carrier_install_deps() {
  local missing
  missing="$(carrier_missing_packages)"
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

# carrier_build [TARGET...]: configure (Release, Ninja) and build the given targets (all when
# none are given).
carrier_build() {
  local jobs targets=()
  jobs="$(nproc 2>/dev/null || echo 2)"
  for t in "$@"; do targets+=(--target "$t"); done
  cmake -S "$CARRIER_ROOT" -B "$CARRIER_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$CARRIER_BUILD_DIR" -j "$jobs" "${targets[@]}"
}
