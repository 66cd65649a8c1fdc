#!/usr/bin/env bash
# scripts/bench-generator.sh OLD_CARRIER NEW_CARRIER [N] [REPEATS]: the input generator change
# (carrier-gen/1 -> carrier-gen/2) side by side in one run. For each of the trial section's
# cases (sum bf16 pairwise, lse fp32 blocked:64, dot fp32 seq) on --gen normal --n N (default
# 2^24), `carrier eval --threads 1` end to end under each binary, interleaved, REPEATS times
# (default 3): the median wall seconds and the ratio old / new. The generator's own ns/element
# (carrier-gen/2 against carrier-gen/1's formula in one process) is the first rows of
# `NEW_CARRIER replay-bench`'s trial section. Build OLD_CARRIER from the commit before the
# change (e.g. a git worktree of it); nothing is written but temporary files.
set -euo pipefail
old="${1:?usage: bench-generator.sh OLD_CARRIER NEW_CARRIER [N] [REPEATS]}"
new="${2:?usage: bench-generator.sh OLD_CARRIER NEW_CARRIER [N] [REPEATS]}"
n="${3:-16777216}"
reps="${4:-3}"
for b in "$old" "$new"; do
  [ -x "$b" ] || { echo "bench-generator: $b is not an executable" >&2; exit 2; }
done
wall() {  # BIN ARGS...: wall seconds of one eval
  local t0 t1
  t0=$(date +%s.%N)
  "$@" --format json > /dev/null
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
printf '%-30s %12s %12s %8s\n' "eval --threads 1, n = $n" "old s" "new s" "old/new"
for c in "sum bf16 pairwise" "lse fp32 blocked:64" "dot fp32 seq"; do
  read -r op dtype schedule <<< "$c"
  args=(eval --op "$op" --dtype "$dtype" --schedule "$schedule" --gen normal --n "$n" --threads 1)
  to=() tn=()
  for ((r = 0; r < reps; ++r)); do
    to+=("$(wall "$old" "${args[@]}")")
    tn+=("$(wall "$new" "${args[@]}")")
  done
  mo=$(median "${to[@]}")
  mn=$(median "${tn[@]}")
  printf '%-30s %12.3f %12.3f %8.2f\n' "$c" "$mo" "$mn" "$(echo "$mo / $mn" | bc -l)"
done
