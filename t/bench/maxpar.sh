#!/bin/sh
# ckpt-merge --max-parallelism N (issue 40 section 2) on the canonical savepoint of about 1 GiB that
# t/flink's BenchState writes (t/bench/flinkstate.sh: Flink 2.3.0, max parallelism 128, two keyed
# operators, many small keys), next to ckpt-inspect -R of the same input, in one run: time and peak
# memory (RSS) of each, and the rewrite checked (ckpt-inspect -c; the key count of -R).
#
#   CKPT_BENCH_STATE_MB=N      a savepoint of about N MiB instead of 1024 (a quick run: 32)
#   CKPT_BENCH_SAVEPOINT=DIR   where the savepoint is written, and kept for the next run
#                              (default: a temporary directory under build/bench/, removed)
#   CKPT_BENCH_MAXPAR=N        the new max parallelism (default 256: a two-byte key-group prefix)
#   CKPT_BENCH_RUNS=N          runs of each, the best counted (default 3)
#   CKPT_BENCH_JAVA_HEAP=SIZE  -Xmx of the JVM that writes the savepoint (default 8g)
#
# Targets (issue 40): within 2x the time of -R, under 256 MB whatever the size.
set -e
BENCH=maxpar
. "$(dirname "$0")/java.sh"
N=${CKPT_BENCH_MAXPAR:-256}
bench_savepoint
timed RW "ckpt-inspect -R > /dev/null:" "$BIN/ckpt-inspect" -R "$SP"
timed MP "ckpt-merge --max-parallelism $N:" sh -c 'rm -rf "$1"; exec "$0" --max-parallelism "$2" -o "$1/" "$3"' "$BIN/ckpt-merge" "$W/out" "$N" "$SP"
echo "$MP_E $RW_E $MP_M $MP_C $RW_C" | awk '{
	printf "ckpt-merge --max-parallelism: %.2fx the time of -R (target: within 2x), %.2fx its CPU; peak %.1f MB (target: under 256 MB)\n",
		$1 / ($2 > 0 ? $2 : 0.01), $4 / ($5 > 0 ? $5 : 0.01), $3 / 1024 }'
"$BIN/ckpt-inspect" -c "$W/out" | sed 's/^/  ckpt-inspect -c of the rewrite: /'
echo "  rows: $("$BIN/ckpt-inspect" -R "$SP" | wc -l) in the input, $("$BIN/ckpt-inspect" -R "$W/out" | wc -l) in the rewrite"
