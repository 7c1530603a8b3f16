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
#   CKPT_BENCH_JAVA_HEAP=SIZE    -Xmx of the JVM that writes the checkpoint (default 4g)
#
# Targets (issue 40): within 2x the time of -R, under 256 MB whatever the size.
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
