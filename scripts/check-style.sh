#!/usr/bin/env bash
# scripts/check-style.sh [--fix] [BUILD_DIR]: the repository's hygiene gate, run by .ci/run.
#   1. clang-format (the root .clang-format, Google style, 100 columns): every tracked C++ file
#      must already be formatted; --fix rewrites them instead of failing.
#   2. scripts/check_layers.py: no include circle among core/ files, experiments/registry
#      includes nothing from verbs/ or run/, AVX-512 intrinsics only in *_x86 files (and kernels/).
#   3. clang-tidy with the root .clang-tidy (a small set of bug-finding checks, warnings as
#      errors) over every C++ translation unit of BUILD_DIR's compile_commands.json (default
#      build/) that lives in this repository: tests and third-party code excluded.
# Exit 1 on a formatting or tidy finding, naming each file; 0 when clean.
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
if [ "${1:-}" = "--fix" ]; then fix=1; shift; fi
build="${1:-build}"

fmt=$(command -v clang-format-14 || command -v clang-format || true)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$fmt" ] || [ -z "$tidy" ]; then
  echo "check-style: needs clang-format and clang-tidy (Debian: clang-format clang-tidy" \
    "libomp-14-dev)" >&2
  exit 2
fi
# The OpenMP units (kernels/omp, the bench verb) include omp.h, which clang-tidy finds only in
# clang's own resource folder, filled by libomp-dev (a fresh-machine CI run failed without it).
if ! compgen -G "/usr/lib/llvm-*/lib/clang/*/include/omp.h" >/dev/null; then
  echo "check-style: clang-tidy needs clang's omp.h for the OpenMP units (Debian: libomp-14-dev)" >&2
  exit 2
fi

mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cc' '*.cu' '*.cuh')
bad=()
for f in "${files[@]}"; do
  if [ "$fix" = 1 ]; then
    "$fmt" -i "$f"
  elif ! "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-style: ${#bad[@]} file(s) not clang-format clean (fix: bash scripts/check-style.sh --fix):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-style: clang-format clean (${#files[@]} files)"

# The layering rules (no include circle in core/, the registry below verbs/ and run/, AVX-512
# only in *_x86 files and kernels/).
/usr/bin/python3 scripts/check_layers.py || {
  echo "check-style: a layering rule is broken (scripts/check_layers.py)" >&2
  exit 1
}

[ -f "$build/compile_commands.json" ] || {
  echo "check-style: $build/compile_commands.json missing: configure first" >&2
  exit 2
}
# The repository's own translation units (C++ only: clang-tidy cannot parse nvcc's flags), as
# the build compiles them: a unity build (command (b) builds one: CMAKE_UNITY_BUILD) lists its
# generated unity_N_cxx.cxx files, each including up to 8 sources of one target, and clang-tidy
# checks each as the compiler sees it (its findings name the sources and headers, all inside
# HeaderFilterRegex). That parses the shared headers once per 8 sources: this step took 153 s
# over 26 unity files against 345 s over their 94 sources one by one. A unity file is checked where every source it includes is the
# repository's own outside tests/ (tests' targets are left out, as tests are). One file per unit
# (CARRIER_UNITY=OFF) is checked file by file.
mapfile -t units < <(/usr/bin/python3 - "$build" <<'PY'
import json, os, re, sys
root = os.getcwd()
def own(path):
    rel = os.path.relpath(path, root)
    return not (rel.startswith(("tests/", "build", "..")))
for e in json.load(open(os.path.join(sys.argv[1], "compile_commands.json"))):
    f = os.path.realpath(os.path.join(e["directory"], e["file"]))
    if re.search(r"/Unity/unity_[0-9]+_cxx\.cxx$", f):
        with open(f) as u:
            sources = re.findall(r'^#include "([^"]+)"', u.read(), re.M)
        sources = [os.path.realpath(os.path.join(e["directory"], s)) for s in sources]
        if sources and all(own(s) and s.endswith((".cpp", ".cc")) for s in sources):
            print(f)
    elif own(f) and f.endswith((".cpp", ".cc")):
        print(os.path.relpath(f, root))
PY
)
log=$(mktemp)
# GCC's libquadmath header (precision/float128.hpp includes it through Boost's float128) lives in
# GCC's own include folder, which clang does not search: clang-tidy gets that one header, from
# a folder holding nothing else, so clang's own builtin headers are not shadowed. (GCC's omp.h
# cannot be lent the same way: clang rejects its attributes; clang's own comes with libomp-dev.)
shim=$(mktemp -d)
extra=()
quadmath=$(g++ -print-file-name=include/quadmath.h 2>/dev/null || true)
if [ -f "$quadmath" ]; then
  ln -s "$quadmath" "$shim/quadmath.h"
  extra=(--extra-arg=-isystem"$shim")
fi
# The root .clang-tidy is named outright: a unity file lives in the build folder, which may be
# outside the repository, where clang-tidy's own search would not find the file.
status=0
printf '%s\n' "${units[@]}" | sort -u |
  xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --config-file="$PWD/.clang-tidy" --quiet \
  ${extra[@]+"${extra[@]}"} \
  >"$log" 2>&1 || status=$?
rm -rf "$shim"
if [ "$status" -ne 0 ] || grep -q 'error:\|warning:' "$log"; then
  grep -E 'error:|warning:' "$log" | sort -u >&2 || cat "$log" >&2
  echo "check-style: clang-tidy findings above (checks: .clang-tidy)" >&2
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "check-style: clang-tidy clean (${#units[@]} translation units)"
