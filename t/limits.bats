#!/usr/bin/env bats
# Limits: counts, lengths, parallelism and nesting from the input are checked before
# anything is allocated from them; each claim is refused with the place named (exit 2).

load helper

graph1() { # a one-vertex graph with the given members
	printf '{"vertices":[{"id":"a",%s}]}\n' "$1"
}

@test "limits: graph parallelism 2^31 is refused before the tasks are allocated" {
	graph1 '"parallelism":2147483648' > g.json
	bad 2 'ckpt-plan: g.json:1:38: vertex "a": parallelism 2147483648 out of range (1 to 16777216)' lowmem ckpt-plan -G g.json
}

@test "limits: graph parallelism just above the limit, 2^32 and 2^63-1" {
	for p in 16777217 4294967296 9223372036854775807; do
		graph1 "\"parallelism\":$p" > g.json
		run ckpt-plan -G g.json
		status_is 2
		output_is "ckpt-plan: g.json:1:38: vertex \"a\": parallelism $p out of range (1 to 16777216)"
	done
}

@test "limits: graph parallelism beyond 64 bits is a JSON error" {
	graph1 '"parallelism":18446744073709551616' > g.json
	bad 2 "ckpt-plan: g.json:1:38: too big integer near '18446744073709551616'" ckpt-plan -G g.json
}

@test "limits: the largest parallelism loads" {
	graph1 '"parallelism":16777216,"finished":"16777215"' > g.json
	run ckpt-plan -G g.json
	status_is 0
	output_is '{"vertices":[{"id":"a","parallelism":16777216,"finished":"16777215"}],"edges":[]}'
}

@test "limits: max_parallelism above Flink's 32768" {
	graph1 '"parallelism":1,"max_parallelism":32769' > g.json
	bad 2 'ckpt-plan: g.json:1:58: vertex "a": max_parallelism 32769 out of range (1 to 32768)' ckpt-plan -G g.json
}

@test "limits: a graph of more than 2^26 subtasks in all" {
	printf '{"vertices":[' > g.json
	for i in 0 1 2 3 4; do
		[ $i = 0 ] || printf ',' >> g.json
		printf '{"id":"v%d","parallelism":16777216}' $i >> g.json
	done
	printf ']}\n' >> g.json
	bad 2 'ckpt-plan: g.json:1:154: vertex "v4": more than 67108864 subtasks in the graph' ckpt-plan -G g.json
}

@test "limits: a subtask index of 11 digits in a range list" {
	graph1 '"parallelism":4,"finished":"99999999999"' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: bad range list "99999999999"' ckpt-plan -G g.json
	graph1 '"parallelism":4,"finished":"0-4294967296"' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: range list "0-4294967296": subtask 4294967296 out of range (parallelism 4)' ckpt-plan -G g.json
	graph1 '"parallelism":4,"finished":[4294967296]' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: subtask 4294967296 out of range (parallelism 4)' ckpt-plan -G g.json
}

@test "limits: JSON nested 100000 deep stops at the parser's depth" {
	awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"; print "" }' > deep.json
	bad 2 "ckpt-plan: deep.json:1:2049: maximum parsing depth reached near '['" ckpt-plan deep.json
}

# ---- Flink _metadata: every count and length is weighed against the bytes left first

meta() { # perl pack arguments: the bytes of a _metadata file
	perl -e "print $1" > _metadata
}
# meta_bad PACK LINE: ckpt-inspect of the _metadata of those bytes, under lowmem, exits 2 with
# "ckpt-inspect: _metadata: LINE" alone.
meta_bad() {
	meta "$1"
	bad 2 "ckpt-inspect: _metadata: $2" lowmem ckpt-inspect _metadata
}

@test "limits: _metadata claiming 2^31-1 operators" {
	meta_bad 'pack("NNQ>NN", 0x4960672d, 3, 1, 0, 0x7fffffff)' \
		'offset 20: operator count 2147483647 is more than the remaining 0 bytes can hold'
}

@test "limits: _metadata claiming 2^31-1 master states, or one of 2 GiB" {
	meta_bad 'pack("NNQ>N", 0x4960672d, 3, 1, 0x7fffffff)' \
		'offset 16: master state count 2147483647 is more than the remaining 0 bytes can hold'
	meta_bad 'pack("NNQ>NNN", 0x4960672d, 3, 1, 1, 0xc96b1696, 0x7fffffff), "x" x 10' \
		'offset 24: master state length 2147483647 is more than the remaining 10 bytes can hold'
}

@test "limits: _metadata claiming a count of -2^31" {
	meta_bad 'pack("NNQ>N", 0x4960672d, 3, 1, 0x80000000)' \
		'offset 16: negative master state count -2147483648'
}

@test "limits: _metadata operator claiming 2^31-1 subtasks" {
	meta_bad 'pack("NNQ>NN", 0x4960672d, 3, 1, 0, 1), "\x01" x 16, pack("NN", 4, 128), "\x00", pack("N", 0x7fffffff)' \
		'offset 49: subtask count 2147483647 is more than the remaining 0 bytes can hold'
}

@test "limits: _metadata inline state of 2 GiB, and a 64 KiB name in 100 bytes" {
	meta_bad 'pack("NNQ>NN", 0x4960672d, 3, 1, 0, 1), "\x01" x 16, pack("NN", 4, 128), "\x01", pack("n", 1), "h", pack("N", 0x7fffffff), "x" x 64' \
		'offset 52: inline byte count 2147483647 is more than the remaining 64 bytes can hold'
	meta_bad 'pack("NNQ>NN", 0x4960672d, 5, 1, 0, 1), pack("n", 65535), "a" x 100' \
		'offset 26: truncated operator name'
}

# ---- the job event log: record lengths and claimed parallelism

@test "limits: a log record claiming 4 GiB, at the end of the log, is a torn tail" {
	mkdir L
	perl -e 'print pack("NNH16", 0xffffffff, 1, "0" x 16), "x" x 100' > L/events.0
	run_lowmem ckpt-replay L
	status_is 0
	output_is '{"vertices":[],"coordinators":{},"shuffle":[],"lost_partitions":[],"log":{"segments":1,"records":0,"torn_bytes":116,"dropped_tail_events":0}}'
}

@test "limits: a log record claiming 4 GiB before another segment is corruption" {
	mkdir L
	perl -e 'print pack("NNH16", 0xffffffff, 1, "0" x 16), "x" x 100' > L/events.0
	printf '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":2}}\n' > e.ndjson
	ckpt-replay -w M < e.ndjson
	cp M/events.0 L/events.1
	bad 1 'ckpt-replay: L/events.0: offset 0: record runs past the end of the segment (116 bytes left in a segment that is not the last)' lowmem ckpt-replay L
}

@test "limits: a log record of 64 MiB + 1 whose bytes are there is refused without reading them" {
	mkdir L
	perl -e 'print pack("NNH16", 0x04000001, 1, "0" x 16)' > L/events.0
	truncate -s $((16 + 0x04000001)) L/events.0 # sparse: no disk is spent
	bad 1 'ckpt-replay: L/events.0: offset 0: record length 67108865 is above the limit of 67108864' lowmem ckpt-replay L
}

@test "limits: events claiming parallelism 2^31 or subtask 2^32 are refused on writing" {
	printf '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":2147483648}}\n' > e.ndjson
	bad 2 'ckpt-replay: <stdin>:1:68: vertex_initialized: "parallelism" must be an integer from 1 to 16777216' lowmem ckpt-replay -w L < e.ndjson
	printf '{"type":"vertex_finished","payload":{"vertex":"a","subtask":4294967296,"attempt":0}}\n' > e.ndjson
	bad 2 'ckpt-replay: <stdin>:1:61: vertex_finished: "subtask" must be an integer from 0 to 16777215' lowmem ckpt-replay -w L < e.ndjson
}

@test "limits: event payloads nested deeper than 64, and 100000 deep" {
	awk 'BEGIN { printf "{\"type\":1,\"payload\":{\"vertex\":\"a\",\"subtask\":0,\"attempt\":0,\"metrics\":"
		for (i = 0; i < 100; i++) printf "["; for (i = 0; i < 100; i++) printf "]"; print "}}" }' > e.ndjson
	bad 2 'ckpt-replay: <stdin>:1:133: not JSON: nesting deeper than 64' ckpt-replay -w L < e.ndjson
	awk 'BEGIN { printf "{\"type\":1,\"payload\":{\"vertex\":\"a\",\"subtask\":0,\"attempt\":0,\"metrics\":"
		for (i = 0; i < 100000; i++) printf "{\"a\":"; printf "1"; for (i = 0; i < 100000; i++) printf "}"; print "}}" }' > e.ndjson
	bad 2 'ckpt-replay: <stdin>:1:389: not JSON: nesting deeper than 64' ckpt-replay -w L < e.ndjson
	[ ! -e L/events.0 ]
}

# ---- state documents: huge numbers

state1() { # a state document with one operator with the given members
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","operators":[{"id":"a",%s}]}\n' "$1"
}

@test "limits: state document with parallelism 2^31 and max parallelism 32769" {
	state1 '"parallelism":2147483648,"max_parallelism":128,"subtasks":[]' > s.json
	bad 2 'ckpt-inspect: s.json:1:110: operator "a": parallelism 2147483648 out of range (1 to 16777216)' lowmem ckpt-inspect s.json
	state1 '"parallelism":1,"max_parallelism":32769,"subtasks":[]' > s.json
	bad 2 'ckpt-inspect: s.json:1:130: operator "a": max_parallelism 32769 out of range (1 to 32768)' lowmem ckpt-inspect s.json
}

@test "limits: state document with a checkpoint id of 2^63 and of 2^63-1" {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":9223372036854775808,"kind":"savepoint","operators":[]}' > s.json
	bad 2 "ckpt-inspect: s.json:1:52: too big integer near '9223372036854775808'" ckpt-inspect s.json
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":9223372036854775807,"kind":"savepoint","operators":[]}' > s.json
	run ckpt-inspect -a s.json
	status_is 0
	output_is '{"format":"ckpt-state","version":1,"checkpoint_id":9223372036854775807,"kind":"savepoint","operators":[]}'
}

@test "limits: state document with subtask index, key group and gate of 2^32" {
	state1 '"parallelism":1,"max_parallelism":128,"subtasks":[{"index":4294967296}]' > s.json
	bad 2 'ckpt-inspect: s.json:1:155: operator "a": subtask 0: index 4294967296 out of range (0 to 0)' lowmem ckpt-inspect s.json
	state1 '"parallelism":1,"max_parallelism":128,"subtasks":[{"index":0,"keyed_state":{"key_groups":"0-127","entries":[{"state":"s","key_group":4294967296,"key":"k","value":"v"}]}}]' > s.json
	bad 2 'ckpt-inspect: s.json:1:229: operator "a": subtask 0: keyed entry 0: key_group 4294967296 out of range (0 to 4294967295)' lowmem ckpt-inspect s.json
	state1 '"parallelism":1,"max_parallelism":128,"subtasks":[{"index":0,"channel_state":{"input":[{"gate":4294967296,"channel":0,"data":""}]}}]' > s.json
	bad 2 'ckpt-inspect: s.json:1:191: operator "a": subtask 0: input 0: gate 4294967296 out of range (0 to 4294967295)' lowmem ckpt-inspect s.json
}

@test "limits: a log of a few hundred bytes claiming parallelism 2^24 in three vertices replays in small memory" {
	# a keeps the one subtask that finished, b restarts whole, c stands alone and keeps its last subtask
	{
		echo '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":16777216}}'
		echo '{"type":"vertex_initialized","payload":{"vertex":"b","parallelism":16777216,"inputs":[{"vertex":"a","distribution":"pointwise"}]}}'
		echo '{"type":"vertex_initialized","payload":{"vertex":"c","parallelism":16777216}}'
		echo '{"type":"vertex_finished","payload":{"vertex":"a","subtask":5,"attempt":2,"snapshots":{"coordinators":{"x":"s"}}}}'
		echo '{"type":"vertex_finished","payload":{"vertex":"c","subtask":16777215,"attempt":0,"snapshots":{"shuffle":{"incremental":false,"state":"p"}}}}'
	} > e.ndjson
	ckpt-replay -w L < e.ndjson
	[ "$(wc -c < L/events.0)" -lt 600 ]
	run_lowmem ckpt-replay L
	status_is 0
	output_is '{"vertices":[{"vertex":"a","parallelism":16777216,"finished":"5","reset":"0-4,6-16777215"},{"vertex":"b","parallelism":16777216,"finished":"","reset":"0-16777215"},{"vertex":"c","parallelism":16777216,"finished":"16777215","reset":"0-16777214"}],"coordinators":{"x":{"state":"s","subtask_reset":"0-4,6-16777215"}},"shuffle":[{"incremental":false,"state":"p"}],"lost_partitions":[],"log":{"segments":1,"records":5,"torn_bytes":0,"dropped_tail_events":0}}'
}
