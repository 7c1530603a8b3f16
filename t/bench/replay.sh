#!/bin/sh
# Benchmark of the job event log: write (ckpt-replay -w) and replay a log of
# 1,000,000 records; print replay time, write rate and peak memory.  Memory
# must follow the number of subtasks, not of records: the same job is also
# replayed from a log ten times shorter, and the two peaks are printed.
set -e
. "$(dirname "$0")/setup.sh"
N=${N:-1000000}

# A job of 4 vertices x 25,000 subtasks (100,000 subtasks; 10,000 for the
# memory comparison).  The records:
# the 4 vertex_initialized, then rounds over the subtasks in which each
# finishes, and one in 10 of them is reset and finishes again; one finish in
# 100 carries coordinator and shuffle snapshots.
gen() {
	awk -v n="$1" -v P="${2:-25000}" 'BEGIN {
		split("src map join sink", V, " ");
		print "{\"type\":\"vertex_initialized\",\"payload\":{\"vertex\":\"src\",\"parallelism\":" P "}}";
		print "{\"type\":\"vertex_initialized\",\"payload\":{\"vertex\":\"map\",\"parallelism\":" P ",\"inputs\":[{\"vertex\":\"src\",\"distribution\":\"pointwise\"}]}}";
		print "{\"type\":\"vertex_initialized\",\"payload\":{\"vertex\":\"join\",\"parallelism\":" P ",\"inputs\":[\"map\"]}}";
		print "{\"type\":\"vertex_initialized\",\"payload\":{\"vertex\":\"sink\",\"parallelism\":" P ",\"inputs\":[{\"vertex\":\"join\",\"distribution\":\"pointwise\"}]}}";
		for (k = 4; k < n; k++) {
			v = V[1 + int(k / 7) % 4]; s = (k * 7919) % P; a = int(k / 100000);
			if (k % 10 == 0)
				print "{\"type\":\"vertices_reset\",\"payload\":{\"subtasks\":[{\"vertex\":\"" v "\",\"subtask\":" s "}]}}";
			else if (k % 100 == 1)
				print "{\"type\":\"vertex_finished\",\"payload\":{\"vertex\":\"" v "\",\"subtask\":" s ",\"attempt\":" a ",\"metrics\":{\"records_out\":" k "},\"snapshots\":{\"coordinators\":{\"" v "-enumerator\":\"assigned:" k "\"},\"shuffle\":{\"incremental\":true,\"state\":\"p" k "\"}}}}";
			else
				print "{\"type\":\"vertex_finished\",\"payload\":{\"vertex\":\"" v "\",\"subtask\":" s ",\"attempt\":" a ",\"metrics\":{\"records_out\":" k ",\"bytes_out\":" 64 * k "}}}";
		}
	}'
}

# Wall-clock time suffers when other work shares the machine; CPU time
# (user + system) is printed next to it and is what the targets are meant for.
measure() { # prints "wall cpu peak_kib"
	/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@"
	awk '{printf "%.3f %.3f %d", $1, $2 + $3, $4}' "$W/time"
}

gen "$N" > "$W/events.ndjson"
gen $((N / 10)) > "$W/small.ndjson"
gen "$N" 2500 > "$W/narrow.ndjson"
set -- $(measure sh -c "\"$BIN/ckpt-replay\" -w \"$W/log\" < \"$W/events.ndjson\"")
w_wall=$1 w_cpu=$2 w_mem=$3
set -- $(measure sh -c "\"$BIN/ckpt-replay\" \"$W/log\" > \"$W/plan.json\"")
r_wall=$1 r_cpu=$2 r_mem=$3
"$BIN/ckpt-replay" -w "$W/small" < "$W/small.ndjson"
set -- $(measure sh -c "\"$BIN/ckpt-replay\" \"$W/small\" > /dev/null")
s_mem=$3
"$BIN/ckpt-replay" -w "$W/narrow" < "$W/narrow.ndjson"
set -- $(measure sh -c "\"$BIN/ckpt-replay\" \"$W/narrow\" > /dev/null")
n_mem=$3
bytes=$(wc -c < "$W/log/events.0")
echo "records:      $N ($bytes bytes), job of 100000 subtasks, load $(cut -d' ' -f1 /proc/loadavg)"
echo "write (-w):   $(echo "$N $w_wall $w_cpu" | awk '{printf "%.0f events/s wall (%.3f s), %.0f events/s cpu (%.3f s)", $1 / $2, $2, $1 / $3, $3}'), fsync included; target >= 500000/s"
echo "replay:       ${r_wall} s wall, ${r_cpu} s cpu; target < 2 s"
echo "peak memory:  replay ${r_mem} KiB ($N records, 100000 subtasks), ${s_mem} KiB ($((N / 10)) records, 100000 subtasks),"
echo "              ${n_mem} KiB ($N records, 10000 subtasks); -w ${w_mem} KiB"
