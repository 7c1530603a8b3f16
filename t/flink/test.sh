#!/bin/sh
# make flink-test: run t/flink/*.bats and close with one summary line
# ("flink: N passed, M failed, K skipped"), as t/run does for the C suite.
cd "$(dirname "$0")" || exit 2
out=$(mktemp)
bats --tap . 2>&1 | tee "$out"
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -1)
skip=$(grep -c '^ok .* # skip' "$out")
pass=$(($(grep -c '^ok ' "$out") - skip))
fail=$(grep -c '^not ok ' "$out")
rm -f "$out"
echo "flink: $pass passed, $fail failed, $skip skipped"
[ -n "$plan" ] && [ "$fail" -eq 0 ] && [ $((pass + skip)) -eq "$plan" ] && [ "$pass" -gt 0 ]
