#!/bin/sh
# Benchmark of ckpt-replay on Flink's own job event log (FileSystemJobEventStore): a log of
# 100,000 ExecutionVertexFinishedEvents written by t/flinklog.py (the test writer of Flink's
# format, whose output Flink's own reader reads), replayed beside ckpt's format of the same
# events (ckpt-replay -e | ckpt-replay -w).  Target: within 2 times of ckpt's format; memory
# bounded as there: the same job from a log ten times shorter peaks alike.
#
# Measured (2-core machine shared with other work, load 3-5; eight runs): Flink's log, 141 MB,
# in 0.22-0.32 s CPU against 0.13-0.17 s for ckpt's, 22.5 MB: 1.5-2.2 times, 1.9 typical; peaks
# 11.3 MB and 3.9 MB (log ten times shorter) against 11.3 MB.  It was 1.44-1.60 s, 9.6-13.3 times
# (0.99 s, 10 times, on a quieter machine) while every record's class descriptors were parsed
# anew and the record went through a jansson tree, its text and ckpt's parser: now
# flink-javaser.c remembers the descriptors across streams and evlog-flink.c decodes straight
# into the event.
set -e
. "$(dirname "$0")/setup.sh"
N=${N:-100000}

# 4 vertices x 25,000 subtasks; vertex ids are JobVertexIDs.  The records: the 4
# vertex_initialized, then finishes over the subtasks, one in 100 carrying a coordinator
# snapshot and Flink's EmptyShuffleMasterSnapshot, as Flink writes at most every
# job-recovery.snapshot.min-pause.
gen() {
	awk -v n="$1" -v P=25000 'BEGIN {
		split("000000000000000000000000000000a1 000000000000000000000000000000b2 000000000000000000000000000000c3 000000000000000000000000000000d4", V, " ");
		for (i = 1; i <= 4; i++)
			print "{\"type\":\"vertex_initialized\",\"payload\":{\"vertex\":\"" V[i] "\",\"parallelism\":" P "}}";
		for (k = 0; k < n; k++) {
			v = V[1 + int(k / P) % 4]; s = (k * 7919) % P;
			m = "\"metrics\":{\"records_in\":" k ",\"records_out\":" k ",\"bytes_in\":" 8 * k ",\"bytes_out\":" 8 * k ",\"idle_ms\":1,\"back_pressured_ms\":0,\"busy_ms\":2.5}";
			if (k % 100 == 99)
				print "{\"type\":\"vertex_finished\",\"payload\":{\"vertex\":\"" v "\",\"subtask\":" s ",\"attempt\":0," m ",\"snapshots\":{\"coordinators\":{\"" v "\":{\"base64\":\"AAAAAQ==\"}},\"shuffle\":{\"incremental\":false,\"state\":\"\"}}}}";
			else
				print "{\"type\":\"vertex_finished\",\"payload\":{\"vertex\":\"" v "\",\"subtask\":" s ",\"attempt\":0," m "}}";
		}
	}'
}

measure() { # prints "wall cpu peak_kib"
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@"
	awk '{printf "%.3f %.3f %d", $1, $2 + $3, $4}' "$W/time"
}

gen "$N" > "$W/events.ndjson"
gen $((N / 10)) > "$W/small.ndjson"
python3 t/flinklog.py "$W/flink" < "$W/events.ndjson"
python3 t/flinklog.py "$W/flink-small" < "$W/small.ndjson"
"$BIN/ckpt-replay" -e "$W/flink" | "$BIN/ckpt-replay" -w "$W/ours"
set -- $(measure sh -c "\"$BIN/ckpt-replay\" \"$W/flink\" > \"$W/flink.json\"")
f_wall=$1 f_cpu=$2 f_mem=$3
set -- $(measure sh -c "\"$BIN/ckpt-replay\" \"$W/ours\" > \"$W/ours.json\"")
o_wall=$1 o_cpu=$2 o_mem=$3
set -- $(measure sh -c "\"$BIN/ckpt-replay\" \"$W/flink-small\" > /dev/null")
s_mem=$3
jq -c 'del(.log)' "$W/flink.json" > "$W/a"
jq -c 'del(.log)' "$W/ours.json" > "$W/b"
cmp -s "$W/a" "$W/b" || { echo "replay-flink: the two plans differ" >&2; exit 1; }
echo "records:      $N finished events + 4 ($(wc -c < "$W/flink/events.0") bytes in Flink's format, $(wc -c < "$W/ours/events.0") in ckpt's), load $(cut -d' ' -f1 /proc/loadavg)"
echo "replay:       Flink's ${f_wall} s wall, ${f_cpu} s cpu; ckpt's ${o_wall} s wall, ${o_cpu} s cpu;" \
	"$(echo "$f_cpu $o_cpu" | awk '{printf "%.2f", ($2 > 0) ? $1 / $2 : 0}') times (cpu); target <= 2"
echo "peak memory:  Flink's ${f_mem} KiB ($N records), ${s_mem} KiB ($((N / 10)) records); ckpt's ${o_mem} KiB"
