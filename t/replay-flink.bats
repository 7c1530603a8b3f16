#!/usr/bin/env bats
# ckpt-replay on Flink's own job event log (FileSystemJobEventStore, ckpt-events(5) FLINK'S LOG):
# logs written by t/flinklog.py, a test-only writer of Flink's format, from NDJSON events.

load helper
bats_require_minimum_version 1.5.0

D=$DATA/replay-flink
SRC=bc764cd8ddf7a0cff126f51c16239658
MAP=0a448493b4782967b150582570326227

# flinklog DIR [RECORDS-PER-SEGMENT] < events.ndjson: Flink's log of the events
flinklog() {
	python3 "$T/flinklog.py" "$@"
}

init() {
	printf '{"type":"vertex_initialized","payload":{"vertex":"%s","parallelism":%s}}\n' "$1" "$2"
}

@test "replay flink: -e prints Flink's records as ckpt's NDJSON events" {
	flinklog L 4 < "$D/log.ndjson"
	run --separate-stderr ckpt-replay -e L
	status_is 0
	[ -z "$stderr" ]
	match_golden "$D/events.expected"
}

@test "replay flink: the plan names vertices by JobVertexID, and by name where -g gives one" {
	flinklog L 4 < "$D/log.ndjson"
	run ckpt-replay -p L
	status_is 0
	match_golden "$D/plan.expected"
	run ckpt-replay -p -g "$D/graph.json" L
	status_is 0
	match_golden "$D/plan-named.expected"
}

@test "replay flink: -e | -w converts to ckpt's format; both give the same plan" {
	flinklog L 4 < "$D/log.ndjson"
	ckpt-replay -e L | ckpt-replay -w ours
	run ckpt-replay -e ours
	status_is 0
	match_golden "$D/events.expected"
	diff <(ckpt-replay L | jq -c 'del(.log.segments)') <(ckpt-replay ours | jq -c 'del(.log.segments)')
}

@test "replay flink: a record cut at any length is a torn tail; the records before it are read" {
	local cut st got err want first n
	{ init $SRC 2; init $MAP 3; } | flinklog L
	cp L/events.0 whole
	first=$(( $(od -A n -t u1 -j 4 -N 4 whole | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}') + 8 ))
	n=$(size whole)
	for ((cut = 0; cut <= n; cut++)); do
		head -c $cut whole > L/events.0
		st=0
		got=$(ckpt-replay -e L 2>stderr.txt) || st=$?
		err=$(cat stderr.txt)
		[ "$st" -eq 0 ] || { echo "cut at $cut: status $st: $err"; return 1; }
		if [ $cut -eq 0 ] || [ $cut -eq $first ] || [ $cut -eq $n ]; then
			want=
		elif [ $cut -lt $first ]; then
			want="ckpt-replay: L/events.0: offset 0: torn record of $cut bytes ignored"
		else
			want="ckpt-replay: L/events.0: offset $first: torn record of $((cut - first)) bytes ignored"
		fi
		[ "$err" = "$want" ] || { echo "cut at $cut: stderr: $err, want: $want"; return 1; }
		[ "$(printf '%s' "$got" | grep -c .)" -eq $(( (cut >= first) + (cut == n) )) ] ||
			{ echo "cut at $cut: $got"; return 1; }
	done
}

@test "replay flink: a torn tail in a segment that is not the last: Flink goes on with the next one" {
	{ init $SRC 2; init $MAP 3; } | flinklog L 1
	head -c 100 L/events.0 > t && mv t L/events.0
	run --separate-stderr ckpt-replay -e L
	status_is 0
	[ "$stderr" = "ckpt-replay: L/events.0: offset 0: torn record of 100 bytes ignored" ]
	output_is "$(init $MAP 3)"
	# ckpt's own format: that is corruption
	{ init a 2; init b 3; } | ckpt-replay -w ours
	{ init c 2; } | ckpt-replay -w ours
	head -c 60 ours/events.0 > t && mv t ours/events.0
	bad 1 "ckpt-replay: ours/events.0: offset 46: record header cut short (14 bytes left in a segment that is not the last)" ckpt-replay ours
}

@test "replay flink: -R copies Flink's log in Flink's format without its torn tails" {
	flinklog L 4 < "$D/log.ndjson"
	head -c 3000 L/events.0 > t && mv t L/events.0
	run --separate-stderr ckpt-replay --repair copy L
	status_is 0
	[ "$(size copy/events.0)" -lt 3000 ]
	cmp copy/events.0 <(head -c "$(size copy/events.0)" L/events.0)
	run ckpt-replay -e copy
	status_is 0
	[ "$output" = "$(ckpt-replay -e L 2>/dev/null)" ]
	cmp copy/events.1 L/events.1
	[ "$(od -A n -t x1 -N 4 copy/events.0 | tr -d ' ')" = 00000003 ]
}

@test "replay flink: -w refuses to append ckpt's records to a Flink log" {
	flinklog L < "$D/log.ndjson"
	bad 1 "ckpt-replay: L: a Flink job event log: ckpt writes ckpt-events(5) logs only" \
		ckpt-replay -w L < /dev/null
}

@test "replay flink: corruption: segment, offset and what was expected, exit 1" {
	# the Java stream's magic, in the second record (the first one's tells the format)
	{ init $SRC 2; init $MAP 3; } | flinklog L
	off=$(( $(od -A n -t u1 -j 4 -N 4 L/events.0 | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}') + 8 ))
	flip L/events.0 $((off + 8))
	bad 1 "ckpt-replay: L/events.0: offset $off: payload byte 0: not a Java serialization stream (0xaded0005, want 0xaced0005)" ckpt-replay L
	# a type id Flink has no serializer for
	init $SRC 2 | flinklog L
	{ printf '\0\0\0\7'; tail -c +5 L/events.0; } > t && mv t L/events.0
	bad 1 "ckpt-replay: L/events.0: offset 0: unknown record type 7" ckpt-replay L
	# a negative length: Flink's allocation fails
	{ printf '\0\0\0\3\377\377\377\377'; tail -c +9 L/events.0; } > t && mv t L/events.0
	bad 1 "ckpt-replay: L/events.0: offset 0: record length -1 is negative" ckpt-replay L
	# the second record: its offset; a type whose class is not the event's
	{ init $SRC 2; init $MAP 3; } | flinklog L
	off=$(( $(od -A n -t u1 -j 4 -N 4 L/events.0 | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}') + 8 ))
	flip L/events.0 $((off + 3))
	bad 1 "ckpt-replay: L/events.0: offset $off: payload byte 4: unknown class org.apache.flink.runtime.jobmaster.event.ExecutionJobVertexInitializedEvent for the event (expected org.apache.flink.runtime.jobmaster.event.ExecutionVertexResetEvent)" ckpt-replay L
}

@test "replay flink: a metric of 19 digits is refused as ckpt's format refuses it" {
	{ init $SRC 2
	  printf '{"type":"vertex_finished","payload":{"vertex":"%s","subtask":0,"attempt":0,"metrics":{"records_in":%s,"records_out":0,"bytes_in":0,"bytes_out":0,"idle_ms":0,"back_pressured_ms":0,"busy_ms":1.0}}}\n' $SRC 1000000000000000000; } | flinklog L
	off=$(( $(od -A n -t u1 -j 4 -N 4 L/events.0 | awk '{print $1*16777216 + $2*65536 + $3*256 + $4}') + 8 ))
	bad 1 "ckpt-replay: L/events.0: offset $off: payload byte 0: not JSON: too big integer" ckpt-replay L
}

@test "replay flink: an unknown class inside a payload is named, never guessed" {
	sed "s/\"shuffle\":{\"incremental\":false,\"state\":\"\"}/\"shuffle\":{\"incremental\":true,\"state\":\"x\"}/" "$D/log.ndjson" | flinklog L
	run --separate-stderr ckpt-replay L
	status_is 1
	[ -z "$output" ]
	[[ $stderr == "ckpt-replay: L/events.0: offset "*": payload byte "*": unknown class org.example.TestShuffleMasterSnapshot for the shuffle master snapshot (expected org.apache.flink.runtime.shuffle.EmptyShuffleMasterSnapshot)" ]]
}

@test "replay flink: bytes after the last stream of a payload are corruption" {
	init $SRC 2 | flinklog L
	n=$(size L/events.0)
	python3 -c '
import struct, sys
b = open("L/events.0", "rb").read()
t, n = struct.unpack(">ii", b[:8])
open("L/events.0", "wb").write(struct.pack(">ii", t, n + 1) + b[8:] + b"\x70")'
	bad 1 "ckpt-replay: L/events.0: offset 0: payload byte $((n - 8)): end of the Java serialization stream expected (1 bytes left)" ckpt-replay L
}

@test "replay flink: every byte flipped: a plan, a torn tail or one line of corruption, never a crash" {
	local at st got err n
	init $SRC 2 | flinklog L
	cp L/events.0 whole
	n=$(size whole)
	for ((at = 0; at < n; at++)); do
		cp whole L/events.0
		flip L/events.0 $at
		st=0
		got=$(ckpt-replay L 2>stderr.txt) || st=$?
		err=$(cat stderr.txt)
		case $st in
		0) [ -n "$got" ] || { echo "byte $at: no plan"; return 1; } ;;
		1) [[ $err == "ckpt-replay: L/events.0: offset 0: "* ]] && [ "$(wc -l < stderr.txt)" -eq 1 ] &&
			[ -z "$got" ] || { echo "byte $at: $err"; return 1; } ;;
		*) echo "byte $at: status $st: $err"; return 1 ;;
		esac
	done
}
