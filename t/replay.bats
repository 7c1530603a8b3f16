#!/usr/bin/env bats
# ckpt-replay: the recovery plan (FLIP-383), with the scenarios of Flink's BatchJobRecoveryTest.

load helper
load replay-helper

GRAPH=$DATA/replay/graph.json

# the plan of a log built from the NDJSON on stdin
plan() {
	ckpt-replay -w L && ckpt-replay "$@" L
}

@test "replay: A.4 1, recover basic: finished sources stay finished, running middles restart" {
	{ flink_job
	  fin source 0 "$(snap enumerator unassigned:8 full s0)"
	  fin source 1; fin source 2; fin source 3
	  fin source 4 "$(snap enumerator unassigned:0 incremental s4)"; } | ckpt-replay -w L
	run ckpt-replay -p L
	status_is 0
	match_golden "$DATA/replay/a4-1-basic.expected"
	run ckpt-replay -p -g "$GRAPH" --available "$DATA/replay/all-sources.json" L
	status_is 0
	match_golden "$DATA/replay/a4-1-basic.expected"
}

@test "replay: A.4 2, middle's coordinator cannot snapshot, middle unfinished, source 0's partition lost" {
	jq '.vertices[1].batch_snapshot = false' "$GRAPH" > g.json
	{ flink_job
	  for i in 0 1 2 3 4; do fin source $i "$(snap enumerator "unassigned:$((8 - 2 * i))")"; done
	  fin middle 0 "$(snap enumerator unassigned:0)"; } | ckpt-replay -w L
	echo '["source:1", "source:2", "source:3", "source:4", "middle:0"]' > avail.json
	run ckpt-replay -p -g g.json --available avail.json L
	status_is 0
	match_golden "$DATA/replay/a4-2-middle-unsupported.expected"
	# the older revision: every partition reported, so only the middles restart
	run ckpt-replay -g g.json L
	status_is 0
	run jq -c .vertices <<< "$output"
	output_is '[{"vertex":"source","parallelism":5,"finished":"0-4","reset":""},{"vertex":"middle","parallelism":5,"finished":"","reset":"0-4"}]'
}

@test "replay: A.4 3, middle's coordinator cannot snapshot but middle fully finished: all stay finished" {
	jq '.vertices[1].batch_snapshot = false' "$GRAPH" > g.json
	{ flink_job
	  for i in 0 1 2 3 4; do fin source $i "$(snap enumerator x)"; done
	  for i in 0 1 2 3 4; do fin middle $i '{"coordinators":{},"shuffle":null}'; done; } | ckpt-replay -w L
	run sh -c 'ckpt-replay -g g.json L | jq -c .vertices'
	status_is 0
	output_is '[{"vertex":"source","parallelism":5,"finished":"0-4","reset":""},{"vertex":"middle","parallelism":5,"finished":"0-4","reset":""}]'
}

@test "replay: A.4 4, source's extra coordinator cannot snapshot: a later reset of one source restarts all" {
	jq '.vertices[0].batch_snapshot = false' "$GRAPH" > g.json
	{ flink_job
	  for i in 0 1 2 3 4; do fin source $i '{"coordinators":{},"shuffle":null}'; done; } | ckpt-replay -w L
	run sh -c 'ckpt-replay -g g.json L | jq -c .vertices[0]'
	output_is '{"vertex":"source","parallelism":5,"finished":"0-4","reset":""}'
	# middle 0 failed on source 0's partition after recovery: the restart was logged
	reset source:0 middle:0 | ckpt-replay -w L
	run sh -c 'ckpt-replay -g g.json L | jq -c .vertices[0]'
	output_is '{"vertex":"source","parallelism":5,"finished":"","reset":"0-4"}'
	# without -g nothing says the coordinator cannot snapshot: only source 0 restarts
	run sh -c 'ckpt-replay L | jq -c .vertices[0]'
	output_is '{"vertex":"source","parallelism":5,"finished":"1-4","reset":"0"}'
}

@test "replay: A.4 4, a lost partition of a source whose coordinator cannot snapshot restarts every source" {
	jq '.vertices[0].batch_snapshot = false' "$GRAPH" > g.json
	{ flink_job
	  for i in 0 1 2 3 4; do fin source $i '{"coordinators":{},"shuffle":null}'; done; } | ckpt-replay -w L
	echo '["source:1", "source:2", "source:3", "source:4"]' > avail.json
	run ckpt-replay -g g.json --available avail.json L
	status_is 0
	output_is '{"vertices":[{"vertex":"source","parallelism":5,"finished":"","reset":"0-4"},{"vertex":"middle","parallelism":5,"finished":"","reset":"0-4"}],"coordinators":{},"shuffle":[],"lost_partitions":["source:0"],"log":{"segments":1,"records":7,"torn_bytes":0,"dropped_tail_events":0}}'
}

@test "replay: A.4 5, lost partitions: only the producer of the missing one restarts" {
	{ flink_job
	  for i in 0 1 2 3 4; do fin source $i "$(snap enumerator "left:$((4 - i))")"; done; } | ckpt-replay -w L
	echo '["source:1", "source:2", "source:3", "source:4"]' > avail.json
	run ckpt-replay -p --available avail.json L
	status_is 0
	match_golden "$DATA/replay/a4-5-lost.expected"
	# the older variant: every source partition lost
	run sh -c 'echo "[]" > none.json; ckpt-replay --available none.json L | jq -c "[.vertices[0], .lost_partitions]"'
	output_is '[{"vertex":"source","parallelism":5,"finished":"","reset":"0-4"},["source:0","source:1","source:2","source:3","source:4"]]'
}

@test "replay: A.4 6, the parallelism decided at run time is recovered" {
	{ flink_job
	  init sink 2 '["middle"]'
	  for i in 0 1 2 3 4; do fin source $i "$(snap enumerator x)"; done
	  for i in 0 1 2 3 4; do fin middle $i "$(snap enumerator x)"; done
	  fin sink 0 "$(snap enumerator x)"; fin sink 1 "$(snap enumerator x)"; } | ckpt-replay -w L
	run ckpt-replay -p -g "$GRAPH" L
	status_is 0
	match_golden "$DATA/replay/a4-6-parallelism.expected"
	run sh -c 'ckpt-replay L | jq -c .vertices[2]'
	output_is '{"vertex":"sink","parallelism":2,"finished":"0-1","reset":""}'
}

@test "replay: A.4 7, the enumerator's last snapshot is restored and told which subtasks reset" {
	{ flink_job
	  fin source 0 "$(snap enumerator 'assigned:0,1;unassigned:2-9')"
	  fin source 1 "$(snap enumerator 'assigned:0-3;unassigned:4-9')"
	  fin source 2 "$(snap enumerator 'assigned:0-5;unassigned:6-9')"; } | ckpt-replay -w L
	echo '["source:1", "source:2"]' > avail.json
	run ckpt-replay --available avail.json L
	status_is 0
	run jq -c '[.coordinators, .lost_partitions]' <<< "$output"
	output_is '[{"enumerator":{"state":"assigned:0-5;unassigned:6-9","subtask_reset":"0,3-4"}},["source:0"]]'
}

@test "replay: a reset removes earlier finishes; a finish after it goes to the end of the map" {
	{ init a 3
	  fin a 0 "$(snap op s0)"; fin a 1 "$(snap op s1)"
	  reset a:0
	  fin a 0; } | ckpt-replay -w L
	run ckpt-replay L
	status_is 0
	output_is '{"vertices":[{"vertex":"a","parallelism":3,"finished":"1","reset":"0,2"}],"coordinators":{"op":{"state":"s1","subtask_reset":"0,2"}},"shuffle":[],"lost_partitions":[],"log":{"segments":1,"records":5,"torn_bytes":0,"dropped_tail_events":1}}'
}

@test "replay: a finish without a reset keeps its place in the map" {
	{ init a 3
	  fin a 0; fin a 1 "$(snap op s1)"
	  fin a 0; } | ckpt-replay -w L
	run sh -c 'ckpt-replay L | jq -c "[.vertices[0].finished, .log.dropped_tail_events]"'
	output_is '["0-1",0]'
}

@test "replay: finishes after the last one with snapshots are dropped" {
	{ init a 4
	  fin a 2 "$(snap op s2)"; fin a 0; fin a 1; } | ckpt-replay -w L
	run sh -c 'ckpt-replay L | jq -c "[.vertices[0], .log.dropped_tail_events]"'
	output_is '[{"vertex":"a","parallelism":4,"finished":"2","reset":"0-1,3"},2]'
}

@test "replay: no finish with snapshots: nothing is restored" {
	{ init a 2; fin a 0; fin a 1; } | ckpt-replay -w L
	run ckpt-replay L
	output_is '{"vertices":[{"vertex":"a","parallelism":2,"finished":"","reset":"0-1"}],"coordinators":{},"shuffle":[],"lost_partitions":[],"log":{"segments":1,"records":3,"torn_bytes":0,"dropped_tail_events":2}}'
}

@test "replay: coordinators: the last snapshot wins; shuffle: full replaces, incremental appends" {
	{ init a 6
	  fin a 0 "$(snap x x0 full p0)"
	  fin a 1 "$(snap y y1 incremental p1)"
	  fin a 2 "$(snap x x2 full p2)"
	  fin a 3 "$(snap y y3 incremental p3)"
	  fin a 4 '{"coordinators":{},"shuffle":{"incremental":true,"state":{"base64":"AAE="}}}'
	  fin a 5 '{"coordinators":{"x":{"base64":"/w=="}}}'; } | ckpt-replay -w L
	run sh -c 'ckpt-replay L | jq -c "[.coordinators, .shuffle]"'
	output_is '[{"x":{"state":{"base64":"/w=="},"subtask_reset":""},"y":{"state":"y3","subtask_reset":""}},[{"incremental":false,"state":"p2"},{"incremental":true,"state":"p3"},{"incremental":true,"state":{"base64":"AAE="}}]]'
	# a reset takes its event's snapshots away
	reset a:5 a:4 a:3 | ckpt-replay -w L
	run sh -c 'ckpt-replay L | jq -c "[.coordinators, .shuffle]"'
	output_is '[{"x":{"state":"x2","subtask_reset":"3-5"},"y":{"state":"y1","subtask_reset":"3-5"}},[{"incremental":false,"state":"p2"}]]'
}

@test "replay: -g maps a coordinator to its vertex by operator id" {
	{ flink_job; init sink 2 '["middle"]'
	  for i in 0 1 2 3 4; do fin source $i; fin middle $i; done
	  fin sink 0 "$(snap enumerator last)"; } | ckpt-replay -w L
	run sh -c 'ckpt-replay -g "$1" L | jq -c .coordinators' sh "$GRAPH"
	output_is '{"enumerator":{"state":"last","subtask_reset":""}}'
	run sh -c 'ckpt-replay L | jq -c .coordinators'
	output_is '{"enumerator":{"state":"last","subtask_reset":"1"}}'
}

@test "replay: lost partitions over blocking edges: untracked optional inputs of a restarted consumer restart too, and their consumers" {
	{ init a 2
	  init b 2 '["a"]'
	  init c 2 '[{"vertex":"b","distribution":"pointwise"}]'
	  fin a 0; fin a 1; fin b 0; fin b 1 "$(snap op s)"; } | ckpt-replay -w L
	echo '["a:0", "a:1", "b:0"]' > avail.json
	run ckpt-replay --available avail.json L
	status_is 0
	output_is '{"vertices":[{"vertex":"a","parallelism":2,"finished":"","reset":"0-1"},{"vertex":"b","parallelism":2,"finished":"","reset":"0-1"},{"vertex":"c","parallelism":2,"finished":"","reset":"0-1"}],"coordinators":{"op":{"state":"s","subtask_reset":"0-1"}},"shuffle":[],"lost_partitions":["b:1"],"log":{"segments":1,"records":7,"torn_bytes":0,"dropped_tail_events":0}}'
	# when every consumer of a partition finished it is optional: its loss resets nothing
	echo '["a:0", "b:0", "b:1"]' > avail.json
	run sh -c 'ckpt-replay --available avail.json L | jq -c "[.vertices[0,1].finished, .lost_partitions]"'
	output_is '["0-1","0-1",[]]'
}

@test "replay: a pointwise lost partition restarts only its producer and the consumers downstream" {
	{ init a 4
	  init b 2 '[{"vertex":"a","distribution":"pointwise"}]'
	  init c 2 '[{"vertex":"b","distribution":"pointwise"}]'
	  for i in 0 1 2 3; do fin a $i; done
	  fin b 0 "$(snap op s)"; } | ckpt-replay -w L
	echo '["a:0", "a:1", "a:3", "b:0"]' > avail.json
	run sh -c 'ckpt-replay --available avail.json L | jq -c "[.vertices[].finished, .lost_partitions]"'
	output_is '["0-1,3","0","",["a:2"]]'
}

# p -> x, p -> y, q -> y, all blocking, parallelism 1; p, q and x finished, y not
per_edge_log() {
	local d=${1:+,\"distribution\":\"$1\"}
	{ init p 1; init q 1
	  init x 1 "[{\"vertex\":\"p\"$d}]"
	  init y 1 "[{\"vertex\":\"p\"$d},{\"vertex\":\"q\"$d}]"
	  fin p 0 "$(snap cp s)"; fin q 0 "$(snap cq s)"; fin x 0 "$(snap cx s)"; } | ckpt-replay -w L
}

@test "replay: each partition is tracked on its own: a producer whose partition to a finished consumer is untracked keeps the one still needed" {
	# Flink: p's partition to x is OPTIONAL (x finished), the one to y RESERVE and reported, so tracked;
	# q's to y is missing, so q resets, and y with it, whose input from p is available: p and x stay finished
	per_edge_log
	echo '["p:0"]' > avail.json
	run ckpt-replay -p --available avail.json L
	status_is 0
	match_golden "$DATA/replay/per-partition.expected"
	# the same through pointwise edges, and through regions computed per subtask (a pipelined edge y -> z)
	rm -r L
	per_edge_log pointwise
	run ckpt-replay -p --available avail.json L
	status_is 0
	match_golden "$DATA/replay/per-partition.expected"
	jq -n '{vertices: [{id: "p", parallelism: 1}, {id: "q", parallelism: 1}, {id: "x", parallelism: 1},
				{id: "y", parallelism: 1}, {id: "z", parallelism: 1}],
		edges: [{source: "p", target: "x", partition: "blocking"}, {source: "p", target: "y", partition: "blocking"},
			{source: "q", target: "y", partition: "blocking"}, {source: "y", target: "z", partition: "pipelined"}]}' > g.json
	run ckpt-replay -p -g g.json --available avail.json L
	status_is 0
	match_golden "$DATA/replay/per-partition.expected"
	# p's partition to y not reported either: p resets, and x with it
	echo '[]' > avail.json
	run sh -c 'ckpt-replay --available avail.json L | jq -c "[.vertices[].finished, .lost_partitions]"'
	output_is '["","","","",["p:0","q:0"]]'
}

@test "replay: a hybrid_selective partition listed as available is not lost" {
	# b is not initialized, so a's partition is RESERVE; reported, it is not missing (its kind only
	# matters when a consumer restarts: it cannot be read again)
	{ init a 1; fin a 0 "$(snap op s)"; } | ckpt-replay -w L
	jq -n '{vertices: [{id: "a", parallelism: 1}, {id: "b", parallelism: 1}], edges: [{source: "a", target: "b", partition: "hybrid_selective"}]}' > g.json
	echo '["a:0"]' > avail.json
	run ckpt-replay -p -g g.json --available avail.json L
	status_is 0
	match_golden "$DATA/replay/hybrid-selective-listed.expected"
	run ckpt-replay -p -g g.json L
	status_is 0
	match_golden "$DATA/replay/hybrid-selective-listed.expected"
	# not reported, it is lost
	echo '[]' > avail.json
	run sh -c 'ckpt-replay -g g.json --available avail.json L | jq -c "[.vertices[].reset, .lost_partitions]"'
	output_is '["0",["a:0"]]'
}

@test "replay: a pipelined edge puts producer and consumer in one region" {
	{ init a 2
	  init b 2 '[{"vertex":"a","distribution":"pointwise","partition":"pipelined"}]'
	  fin a 0; fin a 1 "$(snap op s)"; fin b 1 "$(snap op t)"; } | ckpt-replay -w L
	run sh -c 'ckpt-replay L | jq -c "[.vertices[].finished, .lost_partitions]"'
	output_is '["1","1",[]]'
}

@test "replay: an empty log is an empty plan" {
	mkdir L
	run ckpt-replay L
	status_is 0
	output_is '{"vertices":[],"coordinators":{},"shuffle":[],"lost_partitions":[],"log":{"segments":0,"records":0,"torn_bytes":0,"dropped_tail_events":0}}'
}

@test "replay: a finish of a vertex never initialized is corruption" {
	{ init a 2; fin b 0; } | ckpt-replay -w L
	bad 1 'ckpt-replay: L/events.0: offset 46: vertex_finished: vertex "b" was not initialized' ckpt-replay L
}

@test "replay: a subtask beyond the parallelism, a second initialization that disagrees, an unknown input" {
	{ init a 2; fin a 2; } | ckpt-replay -w L
	bad 1 'ckpt-replay: L/events.0: offset 46: vertex_finished: subtask 2 of vertex "a" out of range (parallelism 2)' ckpt-replay L
	{ init a 2; init a 3; } | ckpt-replay -w M
	bad 1 'ckpt-replay: M/events.0: offset 46: vertex_initialized: vertex "a" initialized again with parallelism 3 (was 2)' ckpt-replay M
	{ init b 2 '["a"]'; } | ckpt-replay -w N
	bad 1 'ckpt-replay: N/events.0: offset 0: vertex_initialized: input "a" of vertex "b" is not initialized' ckpt-replay N
	{ init a 2; reset a:5; } | ckpt-replay -w O
	bad 1 'ckpt-replay: O/events.0: offset 46: vertices_reset: subtask 5 of vertex "a" out of range (parallelism 2)' ckpt-replay O
}

@test "replay: -a errors name the place" {
	{ init a 2; fin a 0 "$(snap op s)"; } | ckpt-replay -w L
	printf '["a:0",\n "x:1"]' > avail.json
	bad 2 'ckpt-replay: avail.json:2:2: partition "x:1": unknown vertex' ckpt-replay --available avail.json L
	echo '["a:2"]' > avail.json
	bad 2 'ckpt-replay: avail.json:1:2: partition "a:2": no such subtask (parallelism 2)' ckpt-replay --available avail.json L
	echo '{"a":0}' > avail.json
	bad 2 'ckpt-replay: avail.json:1:1: available partitions must be an array of "vertex:subtask"' ckpt-replay --available avail.json L
	bad 2 'ckpt-replay: nope.json: cannot open: No such file or directory' ckpt-replay --available nope.json L
}

@test "replay: -g must hold every vertex of the log" {
	{ init a 2; } | ckpt-replay -w L
	bad 2 'ckpt-replay: L: vertex "a" of the log is not in the job graph' ckpt-replay -g "$GRAPH" L
}

@test "replay: usage errors" {
	bad 2 "ckpt-replay: missing LOGDIR (see ckpt-replay -h)" ckpt-replay
	run ckpt-replay -e -w L
	status_is 2
	bad 2 "ckpt-replay: -g and --available apply to the recovery plan only (see ckpt-replay -h)" ckpt-replay -e -g g.json L
	run ckpt-replay a b
	status_is 2
	run ckpt-replay -h
	status_is 0
	[ "${lines[0]}" = "usage: ckpt-replay [-p] [-g GRAPH] [--available AVAILABLE] LOGDIR" ]
}
