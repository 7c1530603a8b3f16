#!/bin/sh
# ckpt-merge --rows (issue 40 section 3) on the canonical savepoint of about 1 GiB that t/flink's
# BenchState writes (t/bench/flinkstate.sh: Flink 2.3.0, max parallelism 128, two keyed operators,
# many small keys): its rows (ckpt-inspect -R) written back whole, the round trip of every row
# through the encoders, next to ckpt-inspect -R of the same savepoint as the reference, in one run:
# rows a second, time and peak memory (RSS) of each, and the result checked (-R of it equals the rows
# given, byte for byte; ckpt-inspect -c).
#
#   CKPT_BENCH_STATE_MB=N      a savepoint of about N MiB instead of 1024 (a quick run: 32)
#   CKPT_BENCH_SAVEPOINT=DIR   where the savepoint is written, and kept for the next run
#                              (default: a temporary directory under build/bench/, removed)
#   CKPT_BENCH_RUNS=N          runs of each, the best counted (default 3)
#   CKPT_BENCH_JAVA_HEAP=SIZE  -Xmx of the JVM that writes the savepoint (default 8g)
set -e
BENCH=rows
. "$(dirname "$0")/java.sh"
bench_savepoint
"$BIN/ckpt-inspect" -R "$SP" >"$W/rows"
ROWS=$(wc -l <"$W/rows")
echo "  rows: $ROWS"
timed R "ckpt-inspect -R > /dev/null:" "$BIN/ckpt-inspect" -R "$SP"
timed M "ckpt-merge --rows (all rows):" sh -c 'rm -rf "$1"; exec "$0" --rows "$2" -o "$1/" "$3"' "$BIN/ckpt-merge" "$W/out" "$W/rows" "$SP"
echo "$ROWS $M_E $M_C $R_E $R_C $M_M" | awk '{
	printf "ckpt-merge --rows: %.0f rows/s elapsed, %.0f rows/s of CPU; -R: %.0f rows/s, %.0f of CPU; %.2fx the CPU of -R; peak %.1f MB\n",
		$1 / ($2 > 0 ? $2 : 0.01), $1 / ($3 > 0 ? $3 : 0.01), $1 / ($4 > 0 ? $4 : 0.01), $1 / ($5 > 0 ? $5 : 0.01),
		$3 / ($5 > 0 ? $5 : 0.01), $6 / 1024 }'
"$BIN/ckpt-inspect" -c "$W/out" | sed 's/^/  ckpt-inspect -c of the result: /'
if "$BIN/ckpt-inspect" -R "$W/out" | cmp -s - "$W/rows"; then
	echo "  -R of the result equals the rows given, byte for byte"
else
	echo "  -R of the result differs from the rows given"
	exit 1
fi
