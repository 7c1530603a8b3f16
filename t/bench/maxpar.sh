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
#   CKPT_BENCH_JAVA_HEAP=SIZE  -Xmx of the JVMs that write the savepoint and rewrite it (default 8g)
#   CKPT_BENCH_SPA=no          the State Processor API's rewrite not run
#   CKPT_BENCH_SPA_LIMIT=S     the rewrite stopped after S seconds, its figures then lower bounds
#
# CKPT_BENCH_SAVEPOINT may also be canonical.sh's CKPT_BENCH_SPA_OUT: Flink's own canonical
# savepoint of the RocksDB checkpoint's state.  The reference: the State Processor API doing the
# same rewrite, once (t/flink's SpaRewrite: read with SavepointReader and the heap backend, written
# with SavepointWriter at max parallelism N, the JVM start included).  Targets (issue 40): within
# 2x the time of -R, at least 10x faster than the State Processor API, under 256 MB whatever the size.
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
if [ "${CKPT_BENCH_SPA-}" = no ]; then
	echo "State Processor API (java):       not run (CKPT_BENCH_SPA=no)"
else
	spa_rewrite "$SP" "$W/spa" "$N" || true
	spa_against "ckpt-merge --max-parallelism" "$MP_E" "$MP_C"
	[ -z "${SPAW_E-}" ] || [ -n "${SPAW_STOPPED-}" ] || echo "  rows: $("$BIN/ckpt-inspect" -R "$W/spa" | wc -l) in the State Processor API's rewrite"
fi
echo "(load average $(cut -d' ' -f1-3 /proc/loadavg) at the end: on a shared machine CPU seconds are the honest figure)"
