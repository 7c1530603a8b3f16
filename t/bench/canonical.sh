#!/bin/sh
# ckpt-merge --canonical (issue 40 section 1) on the RocksDB incremental checkpoint of about 1 GiB
# that t/flink's BenchState writes (as t/bench/rocksdb.sh: Flink 2.3.0, two keyed operators, each key
# a ValueState<Long> and a ListState<Long> of 6 elements), next to ckpt-inspect -R of the same input,
# in one run: MB/s (of the checkpoint's bytes) and peak memory (RSS) of each, and the conversion
# checked (ckpt-inspect -c; the row count of -R).
#
#   CKPT_BENCH_STATE_MB=N        about N MiB of state instead of 1024 (a quick run: 32)
#   CKPT_BENCH_CHECKPOINTS=DIR   the checkpoint directory, kept for the next run (default: a
#                                temporary directory under build/bench/, removed; rocksdb.sh's
#                                directory serves as well)
#   CKPT_BENCH_RUNS=N            runs of each, the best counted (default 3)
#   CKPT_BENCH_JAVA_HEAP=SIZE    -Xmx of the JVMs that write the checkpoint and rewrite it (default 4g)
#   CKPT_BENCH_SPA=no            the State Processor API's rewrite not run
#   CKPT_BENCH_SPA_LIMIT=S       the rewrite stopped after S seconds, its figures then lower bounds
#   CKPT_BENCH_SPA_OUT=DIR       where the State Processor API's rewrite (Flink's own canonical
#                                savepoint of the state) is written and kept: maxpar.sh and
#                                shards.sh take it as CKPT_BENCH_SAVEPOINT (default: removed)
#
# The reference: the State Processor API doing the same rewrite, once (t/flink's SpaRewrite: read
# with SavepointReader and RocksDB, written with SavepointWriter at max parallelism 128, the JVM
# start included).  Targets (issue 40): within 2x the time of -R, at least 10x faster than the
# State Processor API, under 256 MB whatever the size.
set -e
BENCH=canonical HEAP=4g . "$(dirname "$0")/java.sh"
bench_checkpoint
timed RW "ckpt-inspect -R > /dev/null:" "$BIN/ckpt-inspect" -R "$CK"
timed CV "ckpt-merge --canonical:" sh -c 'rm -rf "$1"; exec "$0" --canonical -o "$1/" "$2"' "$BIN/ckpt-merge" "$W/out" "$CK"
echo "$CV_E $RW_E $CV_M $CV_C $RW_C" | awk '{
	printf "ckpt-merge --canonical: %.2fx the time of -R (target: within 2x), %.2fx its CPU; peak %.1f MB (target: under 256 MB)\n",
		$1 / ($2 > 0 ? $2 : 0.01), $4 / ($5 > 0 ? $5 : 0.01), $3 / 1024 }'
echo "  canonical savepoint written: $(du -cb "$W/out"/* | tail -1 | cut -f1) bytes"
"$BIN/ckpt-inspect" -c "$W/out" | sed 's/^/  ckpt-inspect -c of the conversion: /'
echo "  rows: $("$BIN/ckpt-inspect" -R "$CK" | wc -l) in the checkpoint, $("$BIN/ckpt-inspect" -R "$W/out" | wc -l) in the conversion"
if [ "${CKPT_BENCH_SPA-}" = no ]; then
	echo "State Processor API (java):       not run (CKPT_BENCH_SPA=no)"
else
	SPAO=${CKPT_BENCH_SPA_OUT:-$W/spa}
	spa_rewrite "$CK" "$SPAO" 128 rocksdb || true
	spa_against "ckpt-merge --canonical" "$CV_E" "$CV_C"
	[ -z "${SPAW_E-}" ] || [ -n "${SPAW_STOPPED-}" ] || echo "  rows: $("$BIN/ckpt-inspect" -R "$SPAO" | wc -l) in the State Processor API's savepoint ($SPAO)"
fi
echo "(load average $(cut -d' ' -f1-3 /proc/loadavg) at the end: on a shared machine CPU seconds are the honest figure)"
