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

# README command (a) as a newcomer gets it: a build folder of its own, configured by run-main.sh
# (CARRIER_MAIN_JOB_ONLY, unity build, -O1); its rows must equal those CI's command (a) wrote
# from the full -O3 build into build/main-job, timing columns aside.
cd ..
[ -s build/main-job/trials.csv ] || bash scripts/run-main.sh --quiet >/dev/null
rm -rf build-main
CARRIER_BUILD_DIR="$PWD/build-main" bash scripts/run-main.sh --quiet >/dev/null
/usr/bin/python3 - build/main-job/trials.csv build-main/main-job/trials.csv <<'PY'
import csv, sys
timing = {"seconds", "reference_seconds"}
def rows(path):
    with open(path, newline="") as f:
        return sorted(tuple(sorted((k, v) for k, v in r.items() if k not in timing))
                      for r in csv.DictReader(f))
full, main = rows(sys.argv[1]), rows(sys.argv[2])
diff = sum(a != b for a, b in zip(full, main)) + abs(len(full) - len(main))
print(f"main-job build: {len(main)} rows, full build: {len(full)} rows, {diff} differ")
sys.exit(1 if diff or not full else 0)
PY
