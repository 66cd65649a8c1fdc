#!/usr/bin/env bash
# CI step for issue 17, run from the repo root after README command (b) built into build/:
# installs Slurm (slurm-wlm + munge, for the single-node Slurm test), then runs the Python
# module's pytest suite and the Slurm sweep test through CTest. The Slurm test starts its own
# controller and node daemon on localhost in a temporary folder and stops them when done.
set -euo pipefail
if [ "$(id -u)" -eq 0 ]; then
  missing=()
  for p in slurm-wlm munge; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
# The Slurm test is registered at configure time; reconfigure so it sees the install.
cmake -S . -B build >/dev/null
cmake --build build --target carrier carrier_python
cd build
ctest --output-on-failure -R '^(python: |slurm: )'
