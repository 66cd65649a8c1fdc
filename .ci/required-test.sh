# .ci/required-test.sh (sourced by .ci/steps/*.sh): ci_required_test REGEX WHY runs the CTest
# tests of build/ matching REGEX and fails when any of them reports Skipped or none matches:
# the step installed what the test needs, so a skip would hide that it never ran (WHY says so).
ci_required_test() {
  local regex="$1" why="$2" log
  log=$(mktemp)
  if ! (cd build && ctest --output-on-failure -R "$regex" 2>&1) | tee "$log"; then
    rm -f "$log"
    return 1
  fi
  if grep -q 'Skipped\|No tests were found' "$log"; then
    echo "ci: $why" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}
