#!/bin/sh
# What typing Flink SQL's RowData state costs (issue 27: typing rows at most 2x reading the same
# entries raw): on a canonical savepoint of about 256 MiB of a real Flink SQL job, the time and CPU
# of `ckpt-inspect -R` (rows) and `-a` (the typed document) next to reading the same entries raw,
# measured in this run, on one thread (CKPT_THREADS=1) so the figures compare like with like:
#   the summary (`ckpt-inspect SP`: every state file read, every entry's lengths stepped over and
#   counted, nothing decoded or printed: the read alone), and
#   `--raw -a` (every entry's bytes printed in base64, each beside its typed form),
# and `cat` of the files (the limit).  The ratios printed are -R and -a over the summary.
#
# The savepoint: the harness's SQL job (t/flink/src/main/java/ckpt/flink/SqlJob.java, Flink 2.3.0:
# a GROUP BY aggregate, two deduplications, a regular join, a tumbling window and a Top-2 over
# "orders" and "customers"), with many rows (ckpt.sql.rows), one key in 8 rows (ckpt.sql.keys) and
# notes of 200 characters (ckpt.sql.note): most of its bytes are the join's left records.  Written
# once into the directory given (argument or CKPT_BENCH_SQL_SAVEPOINT; default a temporary one
# under build/bench/, removed) and kept for the next run:
#
#   t/bench/sqlstate.sh /work/bench/sql256
#
#   CKPT_BENCH_SQL_MB=N        a savepoint of about N MiB instead of 256 (a quick run: 16)
#   CKPT_BENCH_RUNS=N          runs of each command, the best counted (default 3)
#   CKPT_BENCH_JAVA_HEAP=SIZE  -Xmx of the JVM writing the savepoint (default 4g: a heap backend)
#
# Needs the harness's JDK 17 and Maven (sh .ci/deps; the Maven cache filled by make
# flink-fixtures) and /usr/bin/time (sh .ci/deps bench).
set -e
BENCH=sqlstate HEAP=4g . "$(dirname "$0")/java.sh"
MB=${CKPT_BENCH_SQL_MB:-256}
SP=${1:-${CKPT_BENCH_SQL_SAVEPOINT:-$W/savepoint}}
case $SP in /*) ;; *) SP=$ROOT/$SP ;; esac

# about 381 bytes of state a row (measured: 20,000 rows, 2,500 keys, 200-character notes: 7.6 MB)
ROWS=$((MB * 1024 * 1024 / 381))
if [ ! -f "$SP/_metadata" ]; then
	rm -rf "$SP"
	mkdir -p "$(dirname "$SP")"
	echo "writing the savepoint ($ROWS rows, $((ROWS / 8)) keys) with Flink's SQL job ..."
	java -Xmx"$HEAP" -XX:+UseParallelGC --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
		-Dckpt.only=sql -Dckpt.sql.out="$SP" -Dckpt.sql.rows="$ROWS" -Dckpt.sql.keys=$((ROWS / 8)) -Dckpt.sql.note=200 \
		-Dckpt.sql.timeout=1800 -cp "$JCP" ckpt.flink.Main "$W/flink-out" >"$W/write.log" 2>&1 ||
		{ tail -20 "$W/write.log"; exit 1; }
fi
BYTES=$(du -cb "$SP"/* | tail -1 | cut -f1)
cat "$SP"/* >/dev/null # into the page cache
echo "savepoint: $BYTES bytes ($SP)"

set -- $(best sh -c 'cat "$1"/*' sh "$SP"); CAT_E=$1
show "cat of the files:" "$1" "$2" "$3"
set -- $(best env CKPT_THREADS=1 "$BIN/ckpt-inspect" "$SP"); SUM_E=$1 SUM_C=$2
show "ckpt-inspect (summary, raw):" "$1" "$2" "$3"
set -- $(best env CKPT_THREADS=1 "$BIN/ckpt-inspect" --raw -a "$SP"); RAW_E=$1 RAW_C=$2
show "ckpt-inspect --raw -a:" "$1" "$2" "$3"
set -- $(best env CKPT_THREADS=1 "$BIN/ckpt-inspect" -a "$SP"); A_E=$1 A_C=$2
show "ckpt-inspect -a:" "$1" "$2" "$3"
set -- $(best env CKPT_THREADS=1 "$BIN/ckpt-inspect" -R "$SP"); R_E=$1 R_C=$2
show "ckpt-inspect -R:" "$1" "$2" "$3"
ratio() { # label, elapsed, cpu
	echo "$2 $3 $SUM_E $SUM_C $RAW_E $RAW_C $CAT_E" | awk -v l="$1" '{
	printf "%s: %.1fx the summary'\''s time (%.1fx its CPU; target: within 2x), %.1fx --raw -a'\''s, %.1fx cat'\''s\n",
		l, $1 / ($3 > 0 ? $3 : 0.01), $2 / ($4 > 0 ? $4 : 0.01), $1 / ($5 > 0 ? $5 : 0.01), $1 / ($7 > 0 ? $7 : 0.01) }'
}
ratio "ckpt-inspect -R" "$R_E" "$R_C"
ratio "ckpt-inspect -a" "$A_E" "$A_C"
