#!/bin/sh
# ckpt-inspect --shards N and -R --shard I/N (issue 42) on a state of about 1 GiB that t/flink's
# BenchState writes, in its two forms: the RocksDB incremental checkpoint of t/bench/rocksdb.sh
# (two operators at parallelism 2, four handles, each split by key-group range from its table
# files' index blocks) and the canonical savepoint of
# the same state that t/bench/canonical.sh converts it to (ckpt-merge --canonical; keyed state split
# by key-group range; or with CKPT_BENCH_SAVEPOINT the one of t/bench/flinkstate.sh), each in 2 and
# 16 shards, all measured in this run:
# - each shard's bytes (the plan's) and its -R time, elapsed and CPU, one after another (GNU
#   parallel -j1), then (2 shards) two at a time (-j2): 2 workers against 1 on this machine;
# - the largest shard against the mean, and `-R` of the whole state for the cost of sharding;
# - the union of each count's shards' rows checked against -R of the whole, both sorted (LC_ALL=C),
#   byte for byte (issue 42: no row lost or doubled), the result printed with the figures;
# - the projection for SIZE on WORKERS workers, one shard each: SIZE / WORKERS x (largest / mean)
#   / r + s, r the bytes a second of CPU of one worker (the shards' bytes over their CPU time), s
#   a shard's start (the CPU time of --shards N: every shard plans again); and the balance the plan
#   gives for WORKERS shards of this state (--shards WORKERS, not read);
# - -R -u by-string -k KEY (one key, issue 42) in each form, the mean of 20 runs (the best of 3 such
#   means: /usr/bin/time counts CPU in 10 ms), elapsed and CPU, the two set against each other,
#   next to `ckpt-inspect -h` (the process's start alone: loading its libraries).
#
#   CKPT_BENCH_STATE_MB=N        about N MiB of state instead of 1024 (a quick run: 32)
#   CKPT_BENCH_SAVEPOINT=DIR     flinkstate.sh's canonical savepoint, written there when absent, in
#                                place of the conversion (or canonical.sh's CKPT_BENCH_SPA_OUT: Flink's
#                                own canonical savepoint of the checkpoint's state)
#   CKPT_BENCH_CHECKPOINTS=DIR   the RocksDB checkpoint, kept for the next run (as rocksdb.sh)
#   CKPT_BENCH_SHARDS="2 16"     the shard counts read
#   CKPT_BENCH_PAIR=N            the count also read two at a time (default: the first)
#   CKPT_BENCH_PROJECT="10 100"  the projection's SIZE in TB (10^12 bytes) and WORKERS
#   CKPT_BENCH_JAVA_HEAP=SIZE    -Xmx of the JVMs that write the states (default 8g)
#   CKPT_BENCH_UNION=no          the union not checked (it sorts -R's rows twice a count: on 1 GiB
#                                of state, gigabytes of text under build/bench/)
#   CKPT_BENCH_UNION=digest      the union checked without sorting: the count of rows and an
#                                order-free digest of them (t/bench/lines-digest.c) on each side
#
# Needs GNU parallel, jq and /usr/bin/time (sh .ci/deps bench), and what flinkstate.sh and
# rocksdb.sh need to write the states.
set -e
BENCH=shards
. "$(dirname "$0")/java.sh"
set -- ${CKPT_BENCH_PROJECT:-10 100}
TB=$1 WORKERS=$2
SHARDS=${CKPT_BENCH_SHARDS:-2 16}
PAIR=${CKPT_BENCH_PAIR:-${SHARDS%% *}}
BEST_RUNS=1 # -R whole and the plans: once each

# per_run CMD...: elapsed and CPU seconds of one run of CMD, stdout to /dev/null: 20 runs timed
# together (the best of 3 such), divided by 20
per_run() {
	set -- $(BEST_RUNS=3 best sh -c 'for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "$@" >/dev/null; done' sh "$@")
	echo "$1 $2" | awk '{print $1 / 20, $2 / 20}'
}

# run_shards SNAP N J: the N shards of SNAP read by J workers (GNU parallel -jJ), each shard timed
# into $W/t.I ("elapsed user system"); prints the whole run's elapsed seconds.
run_shards() {
	t0=$(date +%s%N)
	seq 0 $(($2 - 1)) | parallel --will-cite -j"$3" /usr/bin/time -f "'%e %U %S'" -o "$W/t.{}" \
		"$BIN/ckpt-inspect" -R --shard "{}/$2" "$1" ">/dev/null"
	echo "$t0 $(date +%s%N)" | awk '{printf "%.2f", ($2 - $1) / 1e9}'
}

# union_check SNAP N: the rows of the N shards of SNAP (-R --shard I/N), sorted, against -R's
# sorted ($W/all, written once a snapshot), byte for byte: prints the result.
union_check() {
	if [ "${CKPT_BENCH_UNION-}" = digest ]; then
		[ -x "$W/digest" ] || cc -O2 -o "$W/digest" t/bench/lines-digest.c
		[ -s "$W/all" ] || "$BIN/ckpt-inspect" -R "$1" | "$W/digest" >"$W/all"
		for i in $(seq 0 $(($2 - 1))); do "$BIN/ckpt-inspect" -R --shard "$i/$2" "$1"; done | "$W/digest" >"$W/union"
		if cmp -s "$W/all" "$W/union"; then
			echo "  union of the $2 shards' rows = -R of the whole (order-free digest): yes, $(cut -d' ' -f1 "$W/all") rows"
		else
			echo "  union of the $2 shards' rows = -R of the whole (order-free digest): NO ($(cat "$W/union") against $(cat "$W/all"))"
			UNION_BAD=1
		fi
		rm -f "$W/union"
		return
	fi
	[ -s "$W/all" ] || "$BIN/ckpt-inspect" -R "$1" | LC_ALL=C sort -S 512M -T "$W" >"$W/all"
	for i in $(seq 0 $(($2 - 1))); do "$BIN/ckpt-inspect" -R --shard "$i/$2" "$1"; done |
		LC_ALL=C sort -S 512M -T "$W" >"$W/union"
	if cmp -s "$W/all" "$W/union"; then
		echo "  union of the $2 shards' rows = -R of the whole (sorted, byte for byte): yes, $(wc -l <"$W/all") rows"
	else
		echo "  union of the $2 shards' rows = -R of the whole (sorted, byte for byte): NO ($(wc -l <"$W/union") rows against $(wc -l <"$W/all"))"
		UNION_BAD=1
	fi
	rm -f "$W/union"
}

# bench SNAP LABEL: the shards of SNAP in each count, and the projection from the largest count
bench() {
	set -- $(best "$BIN/ckpt-inspect" -R "$1") "$1" "$2"
	show "$5: -R (whole):" "$1" "$2" "$3"
	WHOLE_C=$2 SNAP=$4 LABEL=$5
	set -- $(per_run "$BIN/ckpt-inspect" -R -u by-string -k "$KEY" "$SNAP")
	echo "$1 $2" | awk -v l="$LABEL: -R -u by-string -k $KEY:" '{printf "%s %.1f ms elapsed, %.1f ms of CPU (a run, of 20)\n", l, $1 * 1000, $2 * 1000}'
	"$BIN/ckpt-inspect" -R -u by-string -k "$KEY" "$SNAP" | wc -l | sed 's/^/  rows: /'
	eval "K_${LABEL}_E=$1 K_${LABEL}_C=$2"
	for n in $SHARDS; do
		set -- $(best "$BIN/ckpt-inspect" --shards "$n" "$SNAP")
		START=$2
		"$BIN/ckpt-inspect" --shards "$n" "$SNAP" 2>/dev/null | jq -r '.bytes' >"$W/bytes"
		J1=$(run_shards "$SNAP" "$n" 1)
		for i in $(seq 0 $((n - 1))); do
			echo "$i $(sed -n "$((i + 1))p" "$W/bytes") $(cat "$W/t.$i")"
		done >"$W/shards.$n"
		J2=
		[ "$n" = "$PAIR" ] && J2=$(run_shards "$SNAP" "$n" 2)
		echo "$LABEL, $n shards (plan: $START s of CPU):"
		awk '{printf "  shard %2d/%d: %11d bytes, %6.2f s elapsed, %6.2f s of CPU\n", $1, n, $2, $3, $4 + $5}' \
			n="$n" "$W/shards.$n"
		awk -v n="$n" -v j1="$J1" -v j2="$J2" -v whole="$WHOLE_C" -v s="$START" -v tb="$TB" -v w="$WORKERS" '
			{ b += $2; c += $4 + $5; e += $3; if ($2 > max) max = $2 }
			END {
				mean = b / n; r = b / (c > 0 ? c : 0.01)
				printf "  largest %.0f bytes, %.2fx the mean; the shards %.2f s of CPU against %.2f s for -R whole\n",
					max, max / mean, c, whole
				if (j2 != "")
					printf "  GNU parallel -j1 %.2f s, -j2 %.2f s elapsed: 2 workers %.2fx the speed of 1\n", j1, j2, j1 / (j2 > 0 ? j2 : 0.01)
				printf "  r = %.1f MB/s of CPU a worker (%.1f MB/s elapsed, shards one at a time)\n", r / 1e6, b / (e > 0 ? e : 0.01) / 1e6
				t = tb * 1e12 / w * (max / mean) / r + s
				printf "  projection: %g TB on %d workers, a shard each: %.0f GB x %.2f / %.1f MB/s + %.2f s = %.1f min\n",
					tb, w, tb * 1e3 / w, max / mean, r / 1e6, s, t / 60 }' "$W/shards.$n"
		[ "${CKPT_BENCH_UNION-}" = no ] || union_check "$SNAP" "$n"
	done
	rm -f "$W/all"
	"$BIN/ckpt-inspect" --shards "$WORKERS" "$SNAP" 2>/dev/null | jq -r '.bytes' |
		awk -v w="$WORKERS" '{ b += $1; if ($1 > max) max = $1; if ($1 > 0) full++ }
			END { printf "  --shards %d (plan only): %d shards hold state, the largest %.2fx the mean\n", w, full, max / (b / w) }'
}

KEY='"key-000000000042"'
set -- $(per_run "$BIN/ckpt-inspect" -h)
echo "$1 $2" | awk '{printf "ckpt-inspect -h (the process start alone): %.1f ms elapsed, %.1f ms of CPU (a run, of 20)\n", $1 * 1000, $2 * 1000}'
bench_checkpoint
bench "$CK" RocksDB
if [ -n "${CKPT_BENCH_SAVEPOINT-}" ]; then
	bench_savepoint
else # the same state in the canonical format, as canonical.sh converts it
	SP=$W/canonical
	"$BIN/ckpt-merge" --canonical -o "$SP/" "$CK"
	BYTES=$(du -cb "$SP"/* | tail -1 | cut -f1)
	echo "savepoint: $BYTES bytes (ckpt-merge --canonical of the checkpoint)"
fi
bench "$SP" canonical
echo "$K_RocksDB_E $K_canonical_E $K_RocksDB_C $K_canonical_C" | awk -v k="$KEY" '{
	printf "-R -k %s: RocksDB %.2fx the time of canonical, %.2fx its CPU\n", k, $1 / ($2 > 0 ? $2 : 0.001), $3 / ($4 > 0 ? $4 : 0.001) }'
echo "(on a shared 2-core machine: load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; CPU seconds are the honest figure)"
[ -z "${UNION_BAD-}" ] || { echo "the union of the shards' rows differs from -R's (see above)"; exit 1; }
