#!/usr/bin/env bats
# ckpt-events(5): segments and records, written by ckpt-replay -w, read by -e, copied by -R;
# torn tails, corruption, gaps.

load helper
load replay-helper

# the log of Flink's FileSystemJobEventStoreTest, e0..e4
events5() {
	init a 4
	fin a 0 '{"coordinators":{"op":"s0"},"shuffle":null}'
	reset a:0
	fin a 0 '{"coordinators":{"op":"s1"},"shuffle":{"incremental":false,"state":"p"}}'
	fin a 1
}

@test "eventlog: -w then -e round trip, byte for byte" {
	events5 > in.ndjson
	ckpt-replay -w L < in.ndjson
	run ckpt-replay -e L
	status_is 0
	output_is "$(cat in.ndjson)"
}

@test "eventlog: -w writes the framing of ckpt-events(5): big-endian length, type, XXH3-64, payload" {
	init a 4 | ckpt-replay -w L
	run sh -c 'od -A n -t x1 -N 16 L/events.0 | tr -d " \n"'
	# XXH3-64 of the payload (xxhsum -H3) is b0435a395aa5cb90
	output_is "0000001e00000003b0435a395aa5cb90"
	[ "$(size L/events.0)" -eq 46 ]
	[ "$(tail -c 30 L/events.0)" = '{"vertex":"a","parallelism":4}' ]
}

@test "eventlog: -w accepts type ids and white space, and stores the payload compact" {
	printf '{ "payload" : { "vertex" : "a" , "parallelism" : 4 } , "type" : 3 }\n\n{"type":2,"payload":{"subtasks":[]}}\n' |
		ckpt-replay -w L
	run ckpt-replay -e L
	status_is 0
	output_is '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":4}}
{"type":"vertices_reset","payload":{"subtasks":[]}}'
}

@test "eventlog: each -w is a new segment; segments are read in order (FileSystemJobEventStoreTest 1)" {
	events5 | ckpt-replay -w L
	{ init a 4; fin a 0 '{"coordinators":{"op":"s2"},"shuffle":null}'; } | ckpt-replay -w L
	[ -f L/events.0 ] && [ -f L/events.1 ] && [ ! -e L/events.2 ]
	run sh -c 'ckpt-replay -e L | jq -c .payload.snapshots.coordinators.op'
	output_is 'null
"s0"
null
"s1"
null
null
"s2"'
	run sh -c 'ckpt-replay L | jq -c "[.coordinators.op.state, .log]"'
	output_is '["s2",{"segments":2,"records":7,"torn_bytes":0,"dropped_tail_events":1}]'
}

@test "eventlog: -w with no events writes no segment" {
	mkdir L
	run ckpt-replay -w L < /dev/null
	status_is 0
	[ -z "$(ls -A L)" ]
}

@test "eventlog: -w creates the log directory, not its parents" {
	init a 1 | ckpt-replay -w L
	[ -f L/events.0 ]
	bad 2 'ckpt-replay: no/such/L: cannot create directory: No such file or directory' ckpt-replay -w no/such/L < /dev/null
}

@test "eventlog: -w with a bad line writes nothing and names the line and column" {
	init a 1 | ckpt-replay -w L
	printf '%s\n' "$(init a 2)" '{"type":"vertex_finshed","payload":{}}' > bad.ndjson
	bad 2 'ckpt-replay: <stdin>:2:9: unknown event type "vertex_finshed"' ckpt-replay -w L < bad.ndjson
	[ "$(ls L)" = events.0 ]
	bad 2 'ckpt-replay: <stdin>:1:45: vertex_finished: "subtask" must be an integer from 0 to 16777215' sh -c 'echo "{\"type\":1,\"payload\":{\"vertex\":\"a\",\"subtask\":-1,\"attempt\":0}}" | ckpt-replay -w L'
	bad 2 "ckpt-replay: <stdin>:1:47: not JSON: ',' or '}' expected near end of text" sh -c 'echo "{\"type\":1,\"payload\":{\"vertex\":\"a\",\"subtask\":0" | ckpt-replay -w L'
	bad 2 'ckpt-replay: <stdin>:1:34: vertices_reset: each subtask needs "vertex" and "subtask"' sh -c 'echo "{\"type\":2,\"payload\":{\"subtasks\":[{\"vertex\":\"a\"}]}}" | ckpt-replay -w L'
	bad 2 'ckpt-replay: <stdin>:1:51: vertex_initialized: unknown key "x"' sh -c 'echo "{\"type\":3,\"payload\":{\"vertex\":\"a\",\"parallelism\":1,\"x\":2}}" | ckpt-replay -w L'
	bad 2 'ckpt-replay: <stdin>:1:1: event: missing "payload"' sh -c 'echo "{\"type\":3}" | ckpt-replay -w L'
	[ "$(ls -A L)" = events.0 ]
}

@test "eventlog: a torn tail cut at every byte offset of the last record is ignored and counted" {
	events5 | ckpt-replay -w L
	{ init b 2; fin b 1; } | ckpt-replay -w L
	# the plan of the log without its last record
	{ events5 | ckpt-replay -w E; init b 2 | ckpt-replay -w E; }
	expected=$(ckpt-replay E)
	[ "${expected%\"torn_bytes\":0,*}" != "$expected" ]
	whole=$(size E/events.1)
	last=$(( $(size L/events.1) - whole ))
	[ "$last" -gt 16 ]
	mkdir T
	cp L/events.0 T/
	for cut in $(seq 1 $((last - 1))); do
		head -c $((whole + cut)) L/events.1 > T/events.1
		run ckpt-replay T
		status_is 0
		output_is "${expected/\"torn_bytes\":0,/\"torn_bytes\":$cut,}"
	done
}

@test "eventlog: -e reports a torn tail on stderr" {
	events5 | ckpt-replay -w L
	head -c 160 L/events.0 > T && mv T L/events.0
	run sh -c 'ckpt-replay -e L 2>err | wc -l; cat err'
	status_is 0
	output_is '2
ckpt-replay: L/events.0: offset 156: torn record of 4 bytes ignored'
}

@test "eventlog: -R writes a copy without the torn tail that replays with nothing torn" {
	events5 | ckpt-replay -w L
	{ init b 2; fin b 1 "$(snap op s)"; } | ckpt-replay -w L
	cp -r L before
	printf '\000\000\000\100\000\000\000\001tornpart' >> L/events.1
	run sh -c 'ckpt-replay L | jq -c .log'
	output_is '{"segments":2,"records":7,"torn_bytes":16,"dropped_tail_events":0}'
	run ckpt-replay --repair OUT L
	status_is 0
	output_is ''
	cmp before/events.0 OUT/events.0
	cmp before/events.1 OUT/events.1
	[ "$(ls OUT)" = "$(printf 'events.0\nevents.1')" ]
	run sh -c 'ckpt-replay OUT | jq -c .log'
	output_is '{"segments":2,"records":7,"torn_bytes":0,"dropped_tail_events":0}'
	# the copy takes new segments again
	init c 1 | ckpt-replay -w OUT
	[ -f OUT/events.2 ]
}

@test "eventlog: -R refuses an existing OUT, and writes nothing from a corrupt log" {
	events5 | ckpt-replay -w L
	mkdir OUT
	bad 2 'ckpt-replay: OUT: already exists' ckpt-replay --repair OUT L
	rmdir OUT
	flip L/events.0 60
	run ckpt-replay --repair OUT L
	status_is 1
	[ ! -e OUT ]
	[ -z "$(ls -A . | grep OUT)" ]
}

@test "eventlog: -w refuses to write after a torn tail (cut it with -R) or into a gap" {
	events5 | ckpt-replay -w L
	printf '\000\000' >> L/events.0
	bad 1 'ckpt-replay: L/events.0: offset 406: the log ends in a torn record (2 bytes); cut it off first (ckpt-replay --repair)' ckpt-replay -w L < /dev/null
	mkdir G
	init a 1 | ckpt-replay -w G
	init a 1 | ckpt-replay -w G
	mv G/events.1 G/events.2
	bad 1 'ckpt-replay: G: events.1 is missing but 1 later segment exist; refusing to write into the gap' ckpt-replay -w G < /dev/null
}

@test "eventlog: a flipped bit in the middle is corruption: exit 1, segment and offset named" {
	events5 | ckpt-replay -w L
	{ init b 2; fin b 1; } | ckpt-replay -w L
	flip L/events.0 120
	bad 1 'ckpt-replay: L/events.0: offset 46: checksum mismatch (record says 0ea5c7d74922d6a2, payload has afce0d4c9d0de127)' ckpt-replay L
	run ckpt-replay -e L
	status_is 1
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = 'ckpt-replay: L/events.0: offset 46: checksum mismatch (record says 0ea5c7d74922d6a2, payload has afce0d4c9d0de127)' ]
}

@test "eventlog: a flipped bit in a length field in the middle is corruption too" {
	events5 | ckpt-replay -w L
	{ init b 2; fin b 1; } | ckpt-replay -w L
	flip L/events.0 48
	bad 1 'ckpt-replay: L/events.0: offset 46: record runs past the end of the segment (360 bytes left in a segment that is not the last)' ckpt-replay L
	flip L/events.0 48
	flip L/events.0 53
	bad 1 'ckpt-replay: L/events.0: offset 46: unknown record type 0' ckpt-replay L
}

@test "eventlog: a record claiming 4 GB: corruption in the middle, a torn write at the end, never allocated" {
	init a 2 > in.ndjson
	ckpt-replay -w L < in.ndjson
	perl -e 'print pack("NNH16", 0xfffffff0, 1, "0" x 16), "{}"' >> L/events.0
	run sh -c 'ckpt-replay L | jq -c .log'
	output_is '{"segments":1,"records":1,"torn_bytes":18,"dropped_tail_events":0}'
	ckpt-replay -w W < in.ndjson
	mkdir M
	cp L/events.0 M/events.0
	cp W/events.0 M/events.1
	bad 1 'ckpt-replay: M/events.0: offset 46: record runs past the end of the segment (18 bytes left in a segment that is not the last)' ckpt-replay M
}

@test "eventlog: a truncated record in a segment that is not the last is corruption (Flink would skip it)" {
	events5 | ckpt-replay -w L
	# FileSystemJobEventStoreTest 4: a header promising 5000 bytes, then a whole record
	{ perl -e 'print pack("NNH16", 5000, 1, "0" x 16)'; cat L/events.0; } > bogus
	cat bogus >> L/events.0
	init z 1 | ckpt-replay -w Z
	cp Z/events.0 L/events.1
	bad 1 'ckpt-replay: L/events.0: offset 406: record runs past the end of the segment (422 bytes left in a segment that is not the last)' ckpt-replay L
}

@test "eventlog: a gap in segment numbers ends the log; the later segments are ignored with a warning" {
	events5 | ckpt-replay -w L
	init b 1 | ckpt-replay -w L
	init c 1 | ckpt-replay -w L
	mv L/events.1 L/events.7
	run sh -c 'ckpt-replay L 2>err | jq -c "[.vertices[].vertex, .log.segments]"; cat err'
	output_is '["a",1]
ckpt-replay: L: events.1 is missing: 2 later segments ignored'
	touch L/events.01 L/events.x L/other
	run sh -c 'ckpt-replay L 2>&1 >/dev/null'
	output_is 'ckpt-replay: L: events.1 is missing: 2 later segments ignored'
}

@test "eventlog: an empty directory is an empty log, a missing one an error" {
	mkdir L
	run ckpt-replay -e L
	status_is 0
	output_is ''
	bad 2 'ckpt-replay: nope: cannot open: No such file or directory' ckpt-replay nope
	bad 2 'ckpt-replay: nope: cannot open: No such file or directory' ckpt-replay -e nope
}

@test "eventlog: an unknown record type is corruption" {
	mkdir L
	{ rec 3 '{"vertex":"a","parallelism":2}' cb02b17315b2b49d; rec 99999 '{"vertex":"a","parallelism":2}' cb02b17315b2b49d; } > L/events.0
	run ckpt-replay -e L
	status_is 1
	output_is '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":2}}
ckpt-replay: L/events.0: offset 46: unknown record type 99999'
}

@test "eventlog: a payload that is not JSON, not an object, not UTF-8 is corruption" {
	mkdir L M N
	{ rec 3 '{"vertex":"a","parallelism":2}' cb02b17315b2b49d; rec 1 '{"vertex":"a",' 0fa7023198c3e9a0; } > L/events.0
	bad 1 'ckpt-replay: L/events.0: offset 46: payload byte 14: not JSON: string expected near end of text' ckpt-replay L
	rec 1 '[1]' 7e22e688c546b965 > M/events.0
	bad 1 'ckpt-replay: M/events.0: offset 0: payload byte 0: the payload must be a JSON object' ckpt-replay M
	printf '{"vertex":"a\377","subtask":0,"attempt":0}' > p
	{ perl -e 'print pack("NNH16", $ARGV[0], 1, "5317851c771bd1fb")' "$(size p)"; cat p; } > N/events.0
	bad 1 'ckpt-replay: N/events.0: offset 0: payload byte 12: not JSON: invalid UTF-8 in string' ckpt-replay N
}

@test "eventlog: a failed write is reported, stops the writer and leaves no segment" {
	init a 1 | ckpt-replay -w L
	awk 'BEGIN { for (i = 0; i < 40000; i++) print "{\"type\":3,\"payload\":{\"vertex\":\"v" i "\",\"parallelism\":1}}" }' > big.ndjson
	bad 2 'ckpt-replay: L/events.1: write error: File too large' bash -c 'trap "" XFSZ; ulimit -f 200; ckpt-replay -w L < big.ndjson'
	[ "$(ls -A L)" = events.0 ]
	run ckpt-replay -e L
	output_is '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":1}}'
}

@test "eventlog: -R of a whole log is a byte-for-byte copy, of an empty one an empty directory" {
	events5 | ckpt-replay -w L
	init b 1 | ckpt-replay -w L
	run ckpt-replay --repair OUT L
	status_is 0
	cmp L/events.0 OUT/events.0
	cmp L/events.1 OUT/events.1
	mkdir E
	run ckpt-replay --repair EOUT E
	status_is 0
	[ -d EOUT ] && [ -z "$(ls -A EOUT)" ]
	[ -z "$(ls -d *.tmp.* 2>/dev/null)" ]
}
