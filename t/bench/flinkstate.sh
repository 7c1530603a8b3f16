#!/bin/sh
# Throughput of `ckpt-inspect -a > /dev/null` (typed entries), `-R` (rows) and `--raw -a` (the
# raw document, every entry's bytes in base64 beside its typed form), the time and bytes read
# of `-k KEY`, and `-d` on one thread and on all, on a canonical savepoint of about 1 GiB written
# by real Flink, next to the State Processor API reading the same savepoint (the whole `java`
# process, JVM start included, and the read alone as timed inside the JVM), next to `cat` of its
# files (the limit) and to coreutils' `base64` of them (what the raw bytes of --raw cost alone),
# all measured in this run; and the peak memory (RSS) of each.
#
# The savepoint: t/flink's BenchState (run only here, never by make flink-fixtures) writes it with
# the State Processor API's SavepointWriter, Flink 2.3.0, in the canonical format: two keyed
# operators, "by-string" (String keys) and "by-long" (Long keys), each key with a ValueState<Long>
# "count" and a ListState<Long> "events" of 6 elements: many keys, small values.  (It bootstraps
# the state in RocksDB: a heap backend holding 1 GiB of small entries stalls in garbage collection;
# the canonical format is the same whichever backend wrote it.)  BenchState reads it back with
# SavepointReader, a HashMapStateBackend (the fastest reader) and a KeyedStateReaderFunction
# that touches every value.
#
#   CKPT_BENCH_STATE_MB=N      a savepoint of about N MiB instead of 1024 (a quick run: 32)
#   CKPT_BENCH_SAVEPOINT=DIR   where the savepoint is written, and kept for the next run
#                              (default: a temporary directory under build/bench/, removed)
#   CKPT_BENCH_RUNS=N          runs of ckpt-inspect and cat, the best counted (default 3)
#   CKPT_BENCH_JAVA_HEAP=SIZE  -Xmx of both JVMs (default 8g: the reader's heap backend holds
#                              all the state)
#
# Needs the harness's JDK 17 and Maven (sh .ci/deps; the Maven cache filled by make
# flink-fixtures) and /usr/bin/time (sh .ci/deps bench).  Targets (issue 25): ckpt-inspect -a
# and -R within 3 times of cat and at least 20 times faster than the State Processor API (JVM
# start included), under 64 MB.
set -e
BENCH=flinkstate
. "$(dirname "$0")/java.sh"
bench_savepoint
timed CK "ckpt-inspect -a > /dev/null:" "$BIN/ckpt-inspect" -a "$SP"
timed RW "ckpt-inspect -R > /dev/null:" "$BIN/ckpt-inspect" -R "$SP"
timed RAW "ckpt-inspect --raw -a:" "$BIN/ckpt-inspect" --raw -a "$SP"
timed CAT "cat of the files:" sh -c 'cat "$1"/* ' sh "$SP"
# -d: the savepoint against itself (every entry read on both sides, none differs) and against a copy
# edited by ckpt-merge (by-long's uid changed, its files hard-linked: that operator's entries all
# removed, another's all added), on one thread (CKPT_THREADS=1) and on every processor (issue 25
# item 5), next to cat of the files of both sides.  -d exits 1 when they differ.
"$BIN/ckpt-merge" --uid by-long=by-long-2 --link -o "$W/edited/" "$SP"
timed CAT2 "cat of the files, twice:" sh -c 'cat "$1"/* "$1"/*' sh "$SP"
for other in "$SP" "$W/edited"; do
	for th in 1 ""; do
		set -- $(best env CKPT_THREADS="$th" sh -c '"$0" -d "$1" "$2"; [ $? -le 1 ]' "$BIN/ckpt-inspect" "$other" "$SP")
		l="ckpt-inspect -d $([ "$other" = "$SP" ] && echo itself || echo edited) (${th:-$(nproc)} threads):"
		show "$l" "$1" "$2" "$3"
		echo "$1 $CAT2_E" | awk -v l="$l" '{printf "  %s %.1fx the time of cat of both sides\n", l, $1 / ($2 > 0 ? $2 : 0.01)}'
	done
done
# -k: one key of each operator (named with -u: the other is keyed by another type), its key
# group's bytes alone, as -v counts them (targets, issue 25: under 1 % of the bytes, under 50 ms)
for uk in 'by-string "key-000000000007"' 'by-long 0'; do
	u=${uk%% *} k=${uk#* }
	set -- $(best "$BIN/ckpt-inspect" -R -u "$u" -k "$k" "$SP")
	READ=$("$BIN/ckpt-inspect" -v -R -u "$u" -k "$k" "$SP" 2>&1 >/dev/null | sed -n 's/.*: \([0-9]*\) bytes of state files read\( from .*\)\{0,1\}$/\1/p')
	echo "$1 $READ $BYTES" | awk -v l="ckpt-inspect -R -u $u -k $k:" '{printf "%-44s %7.1f ms, %d of %d bytes read (%.3f %%; targets: 50 ms, 1 %%)\n",
		l, $1 * 1000, $2, $3, 100 * $2 / $3}'
	"$BIN/ckpt-inspect" -R -u "$u" -k "$k" "$SP" | head -2 | sed 's/^/  /'
done
# what only the raw half of the document costs: the bytes read, in base64 (coreutils)
timed B64 "base64 of the files:" sh -c 'for f in "$1"/*; do base64 -w0 "$f"; done' sh "$SP"
# the State Processor API once (it takes long): the whole process, and the read it times itself
bench_read "$SP" || { tail -20 "$W/read.log"; exit 1; }
verdict() { # label, elapsed, cpu, rss KB
	echo "$2 $SPA_E $SPA_IN $CAT_E $4 $3 $SPA_C" | awk -v l="$1" '{
	printf "%s: %.1fx faster than the State Processor API with JVM start (target 20x), %.1fx without;", l, $2 / $1, $3 / $1
	printf " %.1fx less CPU\n", $7 / ($6 > 0 ? $6 : 0.01)
	printf "%s: %.1fx the time of cat (target: within 3x); peak %.1f MB (target: under 64 MB)\n", l, $1 / ($4 > 0 ? $4 : 0.01), $5 / 1024 }'
}
verdict "ckpt-inspect -a" "$CK_E" "$CK_C" "$CK_M"
verdict "ckpt-inspect -R" "$RW_E" "$RW_C" "$RW_M"
echo "$RAW_E $B64_E $CAT_E" | awk '{
	printf "ckpt-inspect --raw -a: %.1fx the time of cat; base64 of the files alone (the raw bytes it carries): %.1fx\n", $1 / ($3 > 0 ? $3 : 0.01), $2 / ($3 > 0 ? $3 : 0.01) }'
