#!/usr/bin/env bats
# ckpt-merge: state redistributed as Flink does on restore (scenarios of Flink's own tests),
# FLIP-147 finished state, job-graph restores, refusals, archives.

load helper
load merge-helper

M=$DATA/merge

# Run ckpt-merge -p with the arguments and compare with the golden file t/data/merge/$1.
merge_golden() {
	local g=$1
	shift
	run ckpt-merge -p "$@"
	status_is 0
	match_golden "$M/$g.expected"
}

# refused LINE ARGS...: ckpt-merge ARGS refuses (exit 1) with exactly LINE on stderr, nothing on stdout.
refused() {
	local msg=$1
	shift
	bad 1 "$msg" ckpt-merge "$@"
}

# Build a state document from operator objects (JSON, one per argument).
state_of() {
	local ops
	ops=$(IFS=,; echo "$*")
	printf '{"format": "ckpt-state", "version": 1, "checkpoint_id": 1, "kind": "savepoint", "operators": [%s]}\n' "$ops"
}

RUNNING1='{"id": "op1", "parallelism": 2, "max_parallelism": 2, "subtasks": [{"index": 0, "finished": false, "operator_state": {"l": {"mode": "list", "entries": ["a"]}}}]}'
PARTIAL1='{"id": "op1", "parallelism": 2, "max_parallelism": 2, "subtasks": [{"index": 0, "finished": true}, {"index": 1, "finished": false, "operator_state": {"l": {"mode": "list", "entries": ["b"]}}}]}'
RUNNING2='{"id": "op2", "parallelism": 2, "max_parallelism": 2, "subtasks": [{"index": 1, "finished": false, "operator_state": {"m": {"mode": "list", "entries": ["c"]}}}]}'
PARTIAL2='{"id": "op2", "parallelism": 2, "max_parallelism": 2, "subtasks": [{"index": 0, "finished": true}]}'
FULL1='{"id": "op1", "parallelism": 2, "max_parallelism": 2, "fully_finished": true, "subtasks": []}'
FULL2='{"id": "op2", "parallelism": 2, "max_parallelism": 2, "fully_finished": true, "subtasks": []}'

# ------------------------------------------------ StateAssignmentOperationTest

@test "S1 split distribute 2 to 3: contiguous runs, names in bytewise order" {
	merge_golden s1-split.P3 -P 3 "$M/s1-split.json"
}

@test "S1 split distribute 2 to 1: everything on one subtask" {
	merge_golden s1-split.P1 -P 1 "$M/s1-split.json"
}

@test "S1 split distribute 2 to 2: list state stays where it is" {
	run ckpt-merge -P 2 "$M/s1-split.json"
	status_is 0
	[ "$output" = "$(ckpt-merge "$M/s1-split.json")" ]
}

@test "S2 union 2 to 3, 2 to 1, 2 to 2: every subtask gets every entry" {
	merge_golden s2-union.P3 -P 3 "$M/s2-union.json"
	merge_golden s2-union.P1 -P 1 "$M/s2-union.json"
	merge_golden s2-union.P2 -P 2 "$M/s2-union.json"
}

@test "S3 broadcast 2 to 3 and 2 to 1: copy t mod n" {
	merge_golden s3-broadcast.P3 -P 3 "$M/s3-broadcast.json"
	merge_golden s3-broadcast.P1 -P 1 "$M/s3-broadcast.json"
}

@test "S3 broadcast 2 to 2: unchanged" {
	run ckpt-merge -P 2 "$M/s3-broadcast.json"
	status_is 0
	[ "$output" = "$(ckpt-merge "$M/s3-broadcast.json")" ]
}

@test "S4 broadcast with a missing subtask: every new subtask gets the one copy" {
	merge_golden s4-broadcast-null.P3 -P 3 "$M/s4-broadcast-null.json"
	merge_golden s4-broadcast-null.P2 -P 2 "$M/s4-broadcast-null.json"
}

@test "S5 broadcast with an empty subtask: same as a missing one" {
	merge_golden s4-broadcast-null.P3 -P 3 "$M/s5-broadcast-empty.json"
	merge_golden s4-broadcast-null.P2 -P 2 "$M/s5-broadcast-empty.json"
}

@test "S6 combined union, list and broadcast 2 to 3, 2 to 1, 2 to 2" {
	merge_golden s6-combined.P3 -P 3 "$M/s6-combined.json"
	merge_golden s6-combined.P1 -P 1 "$M/s6-combined.json"
	merge_golden s6-combined.P2 -P 2 "$M/s6-combined.json"
}

@test "F1 a finished subtask holds nothing: 3 to 3, 3 to 2, 3 to 4" {
	merge_golden f1-finished.P3 -P 3 "$M/f1-finished.json"
	merge_golden f1-finished.P2 -P 2 "$M/f1-finished.json"
	merge_golden f1-finished.P4 -P 4 "$M/f1-finished.json"
}

@test "M the start carries over from one list name to the next: 2 to 3, 2 to 4" {
	merge_golden m-carry.P3 -P 3 "$M/m-carry.json"
	merge_golden m-carry.P4 -P 4 "$M/m-carry.json"
	run list_totals <(ckpt-merge -P 3 "$M/m-carry.json")
	output_is "[3,3,2]"
}

@test "empty lists: a name whose run is empty is not registered" {
	merge_golden empty-first.P3 -P 3 "$M/empty-first.json"
	merge_golden empty-last.P3 -P 3 "$M/empty-last.json"
}

@test "testStateWithFullyFinishedOperators: fully finished stays so at any parallelism" {
	merge_golden finished-ops.P2 -P 2 "$M/finished-ops.json"
	run ckpt-merge -P 500 "$M/finished-ops.json"
	status_is 1
	run ckpt-merge -P op1=2 -P op0=256 "$M/finished-ops.json"
	status_is 0
	[ "$(jq -c '[.operators[] | [.id, .parallelism, .fully_finished, (.subtasks | length)]]' <<<"$output")" = '[["op0",256,true,0],["op1",2,false,2]]' ]
	bad 1 "ckpt-merge: $M/finished-ops.json: The state for task v0 can not be restored. The maximum parallelism (256) of the restored state is lower than the configured parallelism (257). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism." ckpt-merge -P op1=2 -P op0=257 "$M/finished-ops.json"
}

# ------------------------------------------------------------- keyed state

@test "keyed state 2 to 3 at max parallelism 128: entries follow their key groups" {
	merge_golden keyed.P3 -P 3 "$M/keyed.json"
}

@test "keyed state 2 to 4 and back to 2 is the identity" {
	ckpt-merge -P 4 "$M/keyed.json" > four.json
	run keyed_misplaced four.json
	output_is "[]"
	run ckpt-merge -P 2 four.json
	status_is 0
	[ "$output" = "$(ckpt-merge "$M/keyed.json")" ]
}

@test "CheckpointCoordinatorRestoringTest: scale out 2 to 13 and in 13 to 2 at max parallelism 13" {
	jq '.operators[0].id = "v2" | .operators[0].uid = "u2" | .operators[0].vertex = "v2" | .operators[0].max_parallelism = 13
	    | .operators[0].subtasks |= map(.keyed_state.key_groups = (if .index == 0 then "0-6" else "7-12" end)
	    | .keyed_state.entries = [range(if .index == 0 then 0 else 7 end; if .index == 0 then 7 else 13 end)
	      | {state: "v", key_group: ., key: "k\(.)", value: "\(.)"}]
	    | .operator_state = {"state-0": {mode: "list", entries: ["\(.index)-0-0", "\(.index)-0-1", "\(.index)-0-2", "\(.index)-0-3", "\(.index)-0-4", "\(.index)-0-5", "\(.index)-0-6", "\(.index)-0-7"]},
	                         "state-1": {mode: "list", entries: ["\(.index)-1-0", "\(.index)-1-1", "\(.index)-1-2", "\(.index)-1-3", "\(.index)-1-4", "\(.index)-1-5", "\(.index)-1-6", "\(.index)-1-7"]}})' \
		"$M/keyed.json" > v2.json
	jq --slurpfile v2 v2.json '.operators[0] |= (.id = "v1" | .uid = "u1" | .vertex = "v1" | .parallelism = 3 | .max_parallelism = 42
	    | .subtasks = [range(3) | {index: ., finished: false, keyed_state: {key_groups: ["0-13", "14-27", "28-41"][.], entries: []}}])
	    | .operators += $v2[0].operators' "$M/keyed.json" > old.json
	ckpt-merge -P v2=13 old.json > out.json
	[ "$(jq -c '.operators[0]' out.json)" = "$(ckpt-merge old.json | jq -c '.operators[0]')" ]
	jq '.operators |= [.[1]]' old.json > a.json
	jq '.operators |= [.[1]]' out.json > b.json
	[ "$(list_multiset a.json)" = "$(list_multiset b.json)" ]
	[ "$(keyed_multiset a.json)" = "$(keyed_multiset b.json)" ]
	run keyed_misplaced b.json
	output_is "[]"
	run jq -c '[.operators[0].subtasks[].keyed_state.key_groups]' b.json
	output_is '["0","1","2","3","4","5","6","7","8","9","10","11","12"]'
	ckpt-merge -P 2 b.json > c.json
	[ "$(list_multiset a.json)" = "$(list_multiset c.json)" ]
	[ "$(jq -c '.operators[0].subtasks[].keyed_state' c.json)" = "$(jq -c '.operators[0].subtasks[].keyed_state' a.json)" ]
}

# -------------------------------------------------------------- invariants

@test "invariants over generated snapshots: elements kept, totals within one, unions everywhere, keys in range" {
	for c in "1 1 4" "2 3 1" "3 4 7" "4 7 3" "5 5 5" "6 2 16" "7 9 4" "8 6 11"; do
		set -- $c
		gen_state "$1" "$2" 16 $(($1 % 5 + 3)) > in.json
		ckpt-merge -P "$3" in.json > out.json
		run invariants in.json out.json
		output_is ok
	done
}

@test "invariants: a broken redistribution is caught" {
	gen_state 3 4 16 6 > in.json
	ckpt-merge -P 3 in.json > out.json
	jq '.operators[0].subtasks[0].operator_state.s0.entries |= .[1:]' out.json > lost.json
	jq '.operators[0].subtasks[0].keyed_state.entries[0].key_group = 15' out.json > moved.json
	jq '.operators[0].subtasks[2].operator_state.s3.entries |= .[1:]' out.json > union.json
	run invariants in.json lost.json
	[[ "$output" == *"list elements differ"* ]]
	run invariants in.json moved.json
	output_is "keyed entries differ; keyed entries outside the range of [0]"
	run invariants in.json union.json
	output_is "union entries missing"
}

@test "invariants: broadcast copy t mod n of the holders" {
	gen_state 9 5 16 3 > in.json
	ckpt-merge -P 7 in.json > out.json
	run jq -c '[.operators[0].subtasks[].operator_state.s2.entries]' out.json
	output_is '[["b0","b1"],["b0","b1"],["b0","b1"],["b0","b1"],["b0","b1"],["b0","b1"],["b0","b1"]]'
	run jq -c '[.operators[0].subtasks[] | .operator_state | keys]' out.json
	status_is 0
}

@test "the output is deterministic" {
	gen_state 11 6 32 6 > in.json
	a=$(ckpt-merge -P 4 in.json)
	b=$(ckpt-merge -P 4 in.json)
	[ "$a" = "$b" ]
}

# --------------------------------------------------------------- refusals

@test "refused: a partly finished operator with union state (Flink's message)" {
	refused "ckpt-merge: $M/partial-union.json: The vertex Source (id = src) has used UnionListState, but part of its tasks are FINISHED." -P 3 "$M/partial-union.json"
	refused "ckpt-merge: $M/partial-union.json: The vertex Source (id = src) has used UnionListState, but part of its tasks are FINISHED." -P 2 -o out.tar "$M/partial-union.json"
	[ ! -e out.tar ]
	[ -z "$(ls)" ]
}

@test "refused: parallelism above max parallelism (Flink's message)" {
	refused "ckpt-merge: $M/keyed.json: The state for task count can not be restored. The maximum parallelism (128) of the restored state is lower than the configured parallelism (129). Please reduce the parallelism of the task to be lower or equal to the maximum parallelism." -P 129 "$M/keyed.json"
	run ckpt-merge -P 128 "$M/keyed.json"
	status_is 0
}

@test "refused: rescaling in-flight data; at unchanged parallelism it stays with its subtask" {
	refused "ckpt-merge: $M/channel.json: operator map holds in-flight data of an unaligned checkpoint and cannot be rescaled from 2 to 3: take a savepoint and rescale from that" -P 3 -o x.zip "$M/channel.json"
	[ ! -e x.zip ]
	run ckpt-merge -P 2 "$M/channel.json"
	status_is 0
	[ "$output" = "$(ckpt-merge "$M/channel.json")" ]
	# a state document of a Flink snapshot: its in-flight data is rescaled from a _metadata only
	jq '. + {"flink": {}}' "$M/channel.json" >flink.json
	refused "ckpt-merge: flink.json: operator map holds in-flight data of an unaligned checkpoint as entries: ckpt-merge rescales a Flink snapshot's in-flight data from its _metadata only" -P 3 flink.json
}

# ------------------------------------------------------------ job graphs

@test "graph: operators matched by uid take the vertex's id and parallelism" {
	merge_golden keyed.graph-uid -g "$M/graph-uid.json" "$M/keyed.json"
}

@test "graph: state without an operator is refused, or dropped with -n" {
	refused "ckpt-merge: $M/keyed.json: Failed to rollback to checkpoint/savepoint $M/keyed.json. Cannot map checkpoint/savepoint state for operator count to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI." -g "$M/graph-a2a.json" "$M/keyed.json"
	run ckpt-merge -n -g "$M/graph-a2a.json" "$M/keyed.json"
	status_is 0
	[ "$(jq -c .operators <<<"$output")" = "[]" ]
}

@test "graph: an operator without state needs no operator in the graph" {
	state_of "$RUNNING1" '{"id": "gone", "parallelism": 1, "max_parallelism": 4, "subtasks": []}' > s.json
	run ckpt-merge -g "$M/graph-a2a.json" s.json
	status_is 0
	[ "$(jq -c '[.operators[].id]' <<<"$output")" = '["op1"]' ]
}

@test "graph: a changed max parallelism is refused" {
	jq '.vertices[0].max_parallelism = 4' "$M/graph-a2a.json" > g.json
	state_of "$RUNNING1" > s.json
	refused "ckpt-merge: s.json: Failed to rollback to checkpoint/savepoint Checkpoint Metadata. Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator op1 with max parallelism 2 to new program with max parallelism 4. This indicates that the program has been changed in a non-compatible way after the checkpoint/savepoint." -g g.json s.json
}

# refused_on GRAPH LINE OP...: ckpt-merge -g t/data/merge/GRAPH.json of the state document of the
# operators OP (JSON objects), in s.json, refuses it (exit 1) with "ckpt-merge: s.json: LINE".
# allowed_on GRAPH OP...: it merges them (exit 0, the document in $output).
refused_on() {
	local g=$1 msg=$2
	shift 2
	state_of "$@" > s.json
	refused "ckpt-merge: s.json: $msg" -g "$M/$g.json" s.json
}
allowed_on() {
	local g=$1
	shift
	state_of "$@" > s.json
	run ckpt-merge -g "$M/$g.json" s.json
	status_is 0
}

@test "R1/R2 mixed finished operators in one vertex, state under the uid or the id" {
	msg="Can not restore vertex v1(v1) which contain mixed operator finished state: [ALL_RUNNING, FULLY_FINISHED]"
	refused_on graph-chain "$msg" '{"id": "x", "uid": "first", "parallelism": 2, "max_parallelism": 2, "fully_finished": true, "subtasks": []}' "$RUNNING2"
	refused_on graph-chain "$msg" "$FULL1" "$RUNNING2"
}

@test "R3/R4 a fully finished vertex after one not fully finished" {
	msg="Illegal JobGraph modification. Cannot run a program with fully finished vertices predeceased with the ones not fully finished. Task vertex vert2(v2) has a predecessor not fully finished"
	refused_on graph-a2a "$msg" "$RUNNING1" "$FULL2"
	refused_on graph-a2a "$msg" "$PARTIAL1" "$FULL2"
}

@test "R5/R6/R7 a partially finished vertex after a running or partial one over all_to_all" {
	msg="Illegal JobGraph modification. Cannot run a program with partially finished vertices predeceased with running or partially finished ones and connected via the ALL_TO_ALL edges. Task vertex vert2(v2) has a"
	refused_on graph-a2a "$msg all running predecessor" "$RUNNING1" "$PARTIAL2"
	refused_on graph-a2a "$msg partially finished predecessor" "$PARTIAL1" "$PARTIAL2"
	refused_on graph-both "$msg partially finished predecessor" "$PARTIAL1" "$PARTIAL2"
}

@test "R8 a partially finished vertex after an all running one over pointwise" {
	refused_on graph-pw "Illegal JobGraph modification. Cannot run a program with partially finished vertices predeceased with all running ones. Task vertex vert2(v2) has a all running predecessor" "$RUNNING1" "$PARTIAL2"
}

@test "allowed: partial after partial over pointwise, fully finished first, anything into all running" {
	allowed_on graph-pw "$PARTIAL1" "$PARTIAL2"
	allowed_on graph-a2a "$FULL1" "$PARTIAL2"
	allowed_on graph-a2a "$FULL1" "$FULL2"
	allowed_on graph-a2a "$PARTIAL1" "$RUNNING2"
	[ "$(jq -c '[.operators[] | [.id, .vertex, .parallelism, [.subtasks[] | .finished]]]' <<<"$output")" = '[["op1","v1",2,[false]],["op2","v2",2,[false]]]' ]
}

# ----------------------------------------------------------- usage errors

@test "usage errors exit 2" {
	for args in "-P 0" "-P x" "-P 3x" "-P =3" "-P op=" "-P 16777217" "-g $M/graph-a2a.json -P 3" "-n -P 2" "-Z"; do
		run ckpt-merge $args "$M/keyed.json"
		status_is 2
		[ "${#lines[@]}" -eq 1 ]
		[[ "${lines[0]}" == "ckpt-merge: "*" (see ckpt-merge -h)" ]]
	done
	run ckpt-merge -P 2 "$M/keyed.json" "$M/keyed.json"
	status_is 2
	run ckpt-merge -P 2 -o out.rar "$M/keyed.json"
	status_is 2
	[ ! -e out.rar ]
}

@test "an operator named by -P must exist" {
	bad 2 "ckpt-merge: $M/keyed.json: -P nosuch=3: no operator with that id or uid" ckpt-merge -P nosuch=3 "$M/keyed.json"
}

@test "-P by uid rescales the operator's whole vertex" {
	run ckpt-merge -P count-1=3 "$M/keyed.json"
	status_is 0
	[ "$output" = "$(ckpt-merge -P 3 "$M/keyed.json")" ]
	jq '.operators += [.operators[0] | .id = "chained" | .uid = null]' "$M/keyed.json" > two.json
	run ckpt-merge -P chained=4 two.json
	status_is 0
	[ "$(jq -c '[.operators[].parallelism]' <<<"$output")" = "[4,4]" ]
	bad 2 "ckpt-merge: two.json: -P count=3 and -P chained=4: operators of vertex count share one parallelism" ckpt-merge -P chained=4 -P count=3 two.json
}

# --------------------------------------------------- archives and input

@test "round trips through every archive form" {
	want=$(ckpt-merge -P 3 "$M/s6-combined.json")
	for out in x.tar x.tar.gz x.zip x.dir/; do
		ckpt-merge -o "$out" "$M/s6-combined.json"
		run ckpt-merge -P 3 "$out"
		status_is 0
		[ "$output" = "$want" ]
		ckpt-merge -P 3 -o "r-$out" "$M/s6-combined.json"
		run ckpt-merge "r-$out"
		status_is 0
		[ "$output" = "$want" ]
		run ckpt-merge -P 2 -o "back-$out" "r-$out"
		status_is 0
		[ "$(ckpt-merge "back-$out")" = "$(ckpt-merge -P 2 <<<"$want")" ]
	done
}

@test "standard input and files give the same output" {
	a=$(ckpt-merge -P 3 "$M/m-carry.json")
	b=$(ckpt-merge -P 3 < "$M/m-carry.json")
	c=$(ckpt-merge -P 3 - < "$M/m-carry.json")
	[ "$a" = "$b" ]
	[ "$a" = "$c" ]
}

@test "bad input exits 2 without output" {
	printf '{"format": "ckpt-state"' > bad.json
	run ckpt-merge -P 2 -o out.tar bad.json
	status_is 2
	[ ! -e out.tar ]
	run ckpt-merge -P 2 no-such-file
	status_is 2
}

# ----------------------------------------------------------- Flink _metadata

@test "_metadata: the assignment per new subtask names handles, offsets and key groups" {
	needs_fixtures
	f=$FIXTURES/flink-savepoints/v4-flink1.20-complexkeyed-savepoint/_metadata
	run ckpt-merge -P 2 "$f"
	status_is 0
	run jq -c '.operators[1] | [.old_parallelism, .parallelism, [.subtasks[] | [.index, .key_groups, [.from[] | [.subtask, .key_groups, [.handles[].key_groups]]]]]]' <<<"$output"
	output_is '[4,2,[[0,"0-63",[[0,"0-31",["0-31"]],[1,"32-63",["32-63"]]]],[1,"64-127",[[2,"64-95",["64-95"]],[3,"96-127",["96-127"]]]]]]'
}

@test "_metadata: union offsets go to every new subtask" {
	needs_fixtures
	f=$FIXTURES/flink-savepoints/v4-flink1.20-broadcast-rocksdb-savepoint-native/_metadata
	merge_golden broadcast-native.P3 -P 3 "$f"
}

# Flink's unaligned checkpoints at other parallelisms: the channel state handles follow each edge's
# SubtaskStateMapper (hash: RANGE into the rescaled vertex, ARBITRARY out of it) and every subtask
# whose side of an exchange with in-flight data was rescaled gets a rescaling descriptor.  The
# graphs name the fixtures' operator ids (StatefulJobSnapshotMigrationITCase's and the Scala
# broadcast job's topologies: sources, keyed steps, broadcast input).
UNALIGNED_V4=flink-savepoints/v4-flink1.17-udf-rocksdb-checkpoint-unaligned/_metadata
UNALIGNED_V3=flink-savepoints/v3-flink1.15-scala-broadcast-rocksdb-checkpoint-unaligned/_metadata

@test "_metadata unaligned: in-flight data rescaled 4 to 2 and 4 to 3 through hash edges, with descriptors" {
	needs_fixtures
	merge_golden unaligned-v4.graph -g "$M/unaligned-v4.graph.json" "$FIXTURES/$UNALIGNED_V4"
	# flatmap1 4 to 2: old 0,2 (ARBITRARY) of the output, gate 0 read from old 0-1 and 2-3 (RANGE)
	run jq -c '[.operators[] | select(.vertex == "flatmap1") | .subtasks[] | [.index, [.from[] | select(.channel_state) | .subtask], .input_rescaling, .output_rescaling]]' <<<"$output"
	output_is '[[0,[0,2],[{"gate":0,"old_subtasks":[0,1],"ambiguous":[],"type":"RESCALING"}],[{"partition":0,"old_subtasks":[0,2],"ambiguous":[],"type":"RESCALING"}]],[1,[1,3],[{"gate":0,"old_subtasks":[2,3],"ambiguous":[],"type":"RESCALING"}],[{"partition":0,"old_subtasks":[1,3],"ambiguous":[],"type":"RESCALING"}]]]'
}

@test "_metadata unaligned: 4 to 3 over RANGE has ambiguous old subtasks; a broadcast gate without data is no obstacle" {
	needs_fixtures
	merge_golden unaligned-v3.graph -g "$M/unaligned-v3.graph.json" "$FIXTURES/$UNALIGNED_V3"
	run jq -c '[.operators[0].subtasks[0].output_rescaling, [.operators[2].subtasks[] | .input_rescaling[0] | [.old_subtasks, .ambiguous]]]' <<<"$output"
	output_is '[[{"partition":0,"old_subtasks":[0],"ambiguous":[],"type":"RESCALING"}],[[[0,1],[1,2]],[[1,2],[1,2]],[[2,3],[1,2]]]]'
}

@test "_metadata unaligned: refused without -g, across a forward edge (Flink's words), without a partitioner" {
	needs_fixtures
	f=$FIXTURES/$UNALIGNED_V4
	refused "ckpt-merge: $f: operator 1f2b5df5a66154aca61fcb26193792be holds in-flight data of an unaligned checkpoint: rescaling it from 1 to 2 needs the job graph's partitioners (-g)" -P 2 "$f"
	jq '.edges[1].partitioner = "forward"' "$M/unaligned-v4.graph.json" >fwd.json
	refused "ckpt-merge: $f: Cannot rescale the given pointwise partitioner. Did you change the partitioner to forward or rescale? It may also help to add an explicit shuffle()." -g fwd.json "$f"
	jq '.edges[1].partitioner = "broadcast"' "$M/unaligned-v4.graph.json" >bc.json
	refused "ckpt-merge: $f: Cannot rescale the given pointwise partitioner. Did you change the partitioner to forward or rescale? It may also help to add an explicit shuffle()." -g bc.json "$f"
	jq 'del(.edges[1].partitioner)' "$M/unaligned-v4.graph.json" >none.json
	refused "ckpt-merge: $f: edge flatmap1 -> timely1 holds in-flight data of an unaligned checkpoint, which its partitioner rescales, but the graph does not name the partitioner (ckpt-graph(5))" -g none.json "$f"
	# at unchanged parallelism nothing is rescaled and no partitioner is needed
	jq 'del(.edges[].partitioner) | .vertices[].parallelism |= (if . == 1 then 1 else 4 end)' "$M/unaligned-v4.graph.json" >same.json
	run ckpt-merge -g same.json "$f"
	status_is 0
	[ "$(jq '[.. | .input_rescaling?, .output_rescaling? | select(. != null)] | length' <<<"$output")" -eq 0 ]
}

@test "_metadata unaligned: channel state of a gate, partition or subpartition the graph lacks is bad input" {
	needs_fixtures
	f=$FIXTURES/$UNALIGNED_V4
	jq 'del(.edges[0])' "$M/unaligned-v4.graph.json" >nogate.json
	bad 2 "ckpt-merge: $f: operator 1f2b5df5a66154aca61fcb26193792be: subtask 0: output channel state of partition 0, but vertex src1 of the graph has 0 result partitions" ckpt-merge -g nogate.json "$f"
	jq '.edges[1].distribution = "pointwise" | .vertices[1].parallelism = 4' "$M/unaligned-v4.graph.json" >pw.json
	bad 2 "ckpt-merge: $f: operator d5c8b168c6cbfe8c507a10f88b325243: subtask 0: output channel state of partition 0 subpartition 1, but that partition has 1 subpartitions in the graph" ckpt-merge -g pw.json "$f"
}

# Flink's restore hands a vertex's output in-flight data to its last operator alone, its input
# in-flight data to its head alone (TaskStateAssignment).  An operator chained into a vertex since
# the checkpoint loses its own: dropped when the vertex does not redistribute that side (its last
# operator and its consumers hold none), else refused when it holds data
# (checkForUnsupportedToplogyChanges).
@test "_metadata unaligned: output in-flight data of an operator now chained before the vertex's last is dropped with a warning, or refused as Flink refuses it" {
	needs_fixtures
	f=$FIXTURES/$UNALIGNED_V4
	# flatmap1 chained as the head of timely1, which has no result partition: its data dropped
	jq '.vertices |= map(select(.id != "flatmap1") | if .id == "timely1" then .operators += [{"id": "d5c8b168c6cbfe8c507a10f88b325243"}] else . end) | .edges[0].target = "timely1" | del(.edges[1])' \
		"$M/unaligned-v4.graph.json" >chained.json
	run --separate-stderr ckpt-merge -g chained.json "$f"
	status_is 0
	[ "$stderr" = "ckpt-merge: $f: operator d5c8b168c6cbfe8c507a10f88b325243: 64 bytes of output in-flight data dropped: it is chained into vertex timely1, whose last operator alone restores output in-flight data, as Flink's restore drops it" ] ||
		{ echo "stderr: $stderr"; return 1; }
	run jq -c '[.operators[] | select(.id == "d5c8b168c6cbfe8c507a10f88b325243") | .subtasks[].from[].handles[]? | select(.scope | test("channel"))] | length' <<<"$output"
	output_is 0
	# src1 chained as the head of flatmap1, whose last operator holds output in-flight data too
	jq '.vertices |= map(select(.id != "src1") | if .id == "flatmap1" then .operators += [{"id": "1f2b5df5a66154aca61fcb26193792be"}] else . end) | del(.edges[0])' \
		"$M/unaligned-v4.graph.json" >chained2.json
	refused "ckpt-merge: $f: Cannot recover from unaligned checkpoint when topology changes, such that data exchanges with persisted data are now chained. The following operators contain channel state: [1f2b5df5a66154aca61fcb26193792be]" -g chained2.json "$f"
}

@test "_metadata: cannot be written as an archive" {
	needs_fixtures
	f=$FIXTURES/flink-savepoints/v4-flink1.20-broadcast-rocksdb-savepoint-native/_metadata
	run ckpt-merge -P 3 -o out.tar "$f"
	status_is 2
	[ ! -e out.tar ]
}

@test "from an archive read by several forward readers: the same result as from the document" {
	gen_state 21 9 64 6 > in.json
	want=$(ckpt-merge -P 4 in.json)
	for out in in.tar in.tar.gz in.zip in.dir/; do
		ckpt-merge -o "$out" in.json
		run ckpt-merge -P 4 "$out"
		status_is 0
		[ "$output" = "$want" ]
		ckpt-merge -P 4 -o "four-$out" "$out"
		[ "$(ckpt-merge -P 9 "four-$out")" = "$(ckpt-merge -P 9 <<<"$want")" ]
	done
	run ckpt-merge -P 4 < in.tar
	status_is 0
	[ "$output" = "$want" ]
}

@test "the EXAMPLES of ckpt-merge(1) run as shown" {
	tmp=$PWD
	cd "$ROOT"
	run sh -c "ckpt-merge -P 3 examples/merge-state.json | jq -c '.operators[1].subtasks[] | [.index, .keyed_state.key_groups]'"
	output_is '[0,"0-42"]
[1,"43-85"]
[2,"86-127"]'
	ckpt-merge -P count=4 -o "$tmp/count4.tar" examples/merge-state.json
	run sh -c "ckpt-merge -P 2 '$tmp/count4.tar' | jq -c '.operators[1].parallelism'"
	output_is 2
	run sh -c "ckpt-merge -g examples/merge-job.json examples/merge-state.json | jq -c '[.operators[] | [.id, .parallelism]]'"
	output_is '[["source-v2",3],["count-v2",4]]'
}

@test "the EXAMPLES of ckpt-merge(1): the real Flink savepoint" {
	needs_fixtures
	ln -s "$FIXTURES/flink-savepoints/v4-flink1.20-complexkeyed-savepoint" savepoint-complexkeyed
	run sh -c "ckpt-merge -P 2 savepoint-complexkeyed/_metadata | jq -c '.operators[1].subtasks[1] | [.key_groups, [.from[] | [.subtask, .handles[0].size, .handles[0].key_groups]]]'"
	output_is '["64-127",[[2,2496,"64-95"],[3,2536,"96-127"]]]'
}

@test "graph: state stored under the id Flink derives from a uid matches that uid" {
	id=8409efe6adc6d20787611f16017c808f
	[ "$(ckpt-inspect -u my-uid "$M/keyed.json" 2>/dev/null | jq -r '.uids[0].id')" = "$id" ]
	jq --arg id "$id" '.operators[0].id = $id | .operators[0].uid = null' "$M/keyed.json" > s.json
	printf '{"vertices": [{"id": "v", "parallelism": 3, "operators": [{"id": "gen", "uid": "my-uid"}]}], "edges": []}\n' > g.json
	run ckpt-merge -g g.json s.json
	status_is 0
	[ "$(jq -c '.operators[] | [.id, .uid, .vertex, .parallelism, [.subtasks[].keyed_state.key_groups]]' <<<"$output")" = '["gen","my-uid","v",3,["0-42","43-85","86-127"]]' ]
}

@test "bad graphs and an output over the input exit 2 without output" {
	bad 2 "ckpt-merge: nosuch.json: cannot open: No such file or directory" ckpt-merge -g nosuch.json "$M/keyed.json"
	printf '{"vertices": [{"id": "a", "parallelism": 0}], "edges": []}\n' > g.json
	run ckpt-merge -g g.json -o out.tar "$M/keyed.json"
	status_is 2
	output_is "ckpt-merge: g.json:1:42: vertex \"a\": parallelism 0 out of range (1 to 16777216)"
	[ ! -e out.tar ]
	ckpt-merge -o k.tar "$M/keyed.json"
	cksum k.tar > before
	run ckpt-merge -P 3 -o k.tar k.tar
	status_is 2
	cksum k.tar | cmp - before
}

@test "a state with two modes in one operator is bad input" {
	jq '.operators[0].subtasks[1].operator_state = {"t-1": {"mode": "union", "entries": ["x"]}}' "$M/s1-split.json" > s.json
	run ckpt-merge -P 3 s.json
	status_is 2
	[[ "$output" == "ckpt-merge: s.json:"*'"t-1"'*union* ]]
}

@test "topology change (CheckpointCoordinatorRestoringTest): new chains, op4 dropped with -n, op3 at 20, 8 and 10" {
	gen_state 5 10 64 3 | jq '.operators[0] as $o | .operators = [
		($o | .id = "op1" | .vertex = "a" | .subtasks |= map(del(.keyed_state))),
		($o | .id = "op2" | .vertex = "a" | .subtasks |= map(del(.keyed_state) | .operator_state |= with_entries(.key |= "x" + .))),
		($o | .id = "op3" | .vertex = "b" | .subtasks |= map(.operator_state |= with_entries(select(.value.mode == "list")))),
		($o | .id = "op4" | .vertex = "b" | .subtasks |= map(del(.keyed_state)))]' > old.json
	run ckpt-merge -g "$M/topology-graph.json" old.json
	status_is 1
	[[ "$output" == *"Cannot map checkpoint/savepoint state for operator op4 to the new program"* ]]
	for p in 20 8 10; do
		jq --argjson p "$p" '.vertices[1].parallelism = $p' "$M/topology-graph.json" > g.json
		ckpt-merge -n -g g.json old.json > new.json
		run jq -c '[.operators[] | [.id, .vertex, .parallelism]]' new.json
		output_is "[[\"op1\",\"A\",10],[\"op2\",\"A\",10],[\"op3\",\"B\",$p]]"
		[ "$(jq -c '.operators[0:2] | map(.subtasks)' new.json)" = "$(ckpt-merge old.json | jq -c '.operators[0:2] | map(.subtasks)')" ]
		jq '.operators |= [.[2]]' old.json > a.json
		jq '.operators |= [.[2]]' new.json > b.json
		run invariants a.json b.json
		output_is ok
		case $p in
		20) want='["0-3","4-6","7-9"]' ;;
		8) want='["0-7","8-15","16-23"]' ;;
		10) want='["0-6","7-12","13-19"]' ;;
		esac
		run jq -c '[.operators[2].subtasks[0:3][].keyed_state.key_groups]' new.json
		output_is "$want"
	done
}

# ------------------------------------- writes of a Flink snapshot: whole, or refused with nothing written

ART_SP=flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint

# nothing_left: the test's directory holds only what the test put there (no output, no temporary).
nothing_left() {
	run ls -A
	[ "$output" = "$(printf '%s\n' "$@")" ] || { echo "left behind: $output"; return 1; }
}

@test "Flink snapshot: -o FILE (pack, -P, -g) refuses before writing, naming -o DIR/" {
	needs_fixtures
	[ -d "$FIXTURES/flink-artifacts" ] || needs_fixtures
	ln -s "$FIXTURES/$ART_SP" sp
	bad 2 'ckpt-merge: sp: a Flink snapshot is written as a Flink savepoint with its state files: give -o DIR/ and the snapshot'\''s directory or _metadata' ckpt-merge -o x.tar sp
	bad 2 'ckpt-merge: sp/_metadata: a Flink snapshot is written as a Flink savepoint with its state files: give -o DIR/ and the snapshot'\''s directory or _metadata' ckpt-merge -o x.zip sp/_metadata
	bad 2 'ckpt-merge: <stdin>: a Flink snapshot is written as a Flink savepoint with its state files: give -o DIR/ and the snapshot'\''s directory or _metadata' sh -c 'ckpt-merge -o x/ < sp/_metadata'
	bad 2 'ckpt-merge: sp: a Flink snapshot is rescaled by Flink on restore: without -o ckpt-merge prints the assignment, -o DIR/ without -P writes the savepoint' ckpt-merge -P 2 -o x.tar sp
	printf '{"vertices": [{"id": "v", "parallelism": 2, "max_parallelism": 4}], "edges": []}\n' >g.json
	bad 2 'ckpt-merge: sp: a Flink snapshot is rescaled by Flink on restore: without -o ckpt-merge prints the assignment, -o DIR/ without -P writes the savepoint' ckpt-merge -g g.json -n -o x.tar sp
	nothing_left g.json sp
}

@test "Flink snapshot: its state document (ckpt-inspect -a, --raw) is refused by a write; a typed one names --raw" {
	needs_fixtures
	[ -d "$FIXTURES/flink-artifacts" ] || needs_fixtures
	ckpt-inspect -a --raw "$FIXTURES/$ART_SP" >raw.json
	ckpt-inspect -a "$FIXTURES/$ART_SP" >typed.json
	local line='ckpt-merge: <stdin>: a Flink snapshot'\''s entries without its state files (ckpt-inspect -a): write the snapshot itself, ckpt-merge -o DIR/ SNAPSHOT'
	bad 2 "$line" sh -c 'ckpt-merge -o x.tar < raw.json'
	bad 2 "$line" sh -c 'ckpt-merge -P 2 -o x.tar < raw.json'
	bad 2 "$line" sh -c 'ckpt-merge -o x/ < raw.json'
	bad 2 'ckpt-merge: raw.json: a Flink snapshot'\''s entries without its state files (ckpt-inspect -a): write the snapshot itself, ckpt-merge -o DIR/ SNAPSHOT' ckpt-merge -P 2 -o x.tar raw.json
	bad 2 'ckpt-merge: <stdin>:1:2900: operator "d5c8b168c6cbfe8c507a10f88b325243": subtask 1: keyed entry 0: a typed entry (it has "namespace"): state documents are read as bytes, as ckpt-inspect -a --raw prints them' sh -c 'ckpt-merge -P 2 -o x.tar < typed.json'
	nothing_left raw.json typed.json
	# without -o nothing is written: the raw document is read back and printed
	run sh -c 'ckpt-merge -P 2 < raw.json | jq -c "[.operators[] | select(.id == \"d5c8b168c6cbfe8c507a10f88b325243\") | .subtasks[].keyed_state.entries | length] | [length, add]"'
	status_is 0
	output_is '[2,4]'
	# -R of those entries says why it cannot type them, not "-m"
	bad 2 'ckpt-inspect: a Flink snapshot'\''s entries without its state files, whose serializers type them: give -R the Flink snapshot itself' ckpt-inspect -R raw.json
}

# write_case FORM PATH: run one write PATH of ckpt-merge on FORM into out.tar or out/; prints the output's
# name, or nothing when ckpt-merge refused; the refusal's stderr in m.err, its status in m.rc.
write_case() {
	local f=$1 o=out.tar rc=0
	case $2 in
	pack-tar) ckpt-merge -o out.tar "$f" ;;
	pack-dir) o=out; ckpt-merge -o out/ "$f" ;;
	P2-tar) ckpt-merge -P 2 -o out.tar "$f" ;;
	P2-dir) o=out; ckpt-merge -P 2 -o out/ "$f" ;;
	raw-tar) ckpt-merge -o out.tar <raw.json ;;
	raw-P2-tar) ckpt-merge -P 2 -o out.tar <raw.json ;;
	raw-dir) o=out; ckpt-merge -o out/ <raw.json ;;
	typed-P2-tar) ckpt-merge -P 2 -o out.tar <typed.json ;;
	esac >/dev/null 2>m.err || rc=$?
	echo "$rc" >m.rc
	[ "$rc" -ne 0 ] || echo "$o"
}

@test "Flink snapshot: every write path of every form in the fixtures carries all its state or refuses, nothing written" {
	needs_fixtures
	[ -d "$FIXTURES/flink-artifacts" ] || needs_fixtures
	local d f o n=0 lossy=0 path irc orc
	for d in "$FIXTURES"/flink-artifacts/*/ "$FIXTURES"/flink-savepoints/*/ "$FIXTURES"/flink-sql-restore/*/; do
		[ -f "$d/_metadata" ] || continue
		f=${d%/}
		n=$((n + 1))
		irc=0
		ckpt-inspect -R "$f" >in.R 2>in.err || irc=$?
		sed "s#$f/*#SRC/#g" in.err >in.norm
		ckpt-inspect -a --raw "$f" >raw.json 2>/dev/null || :
		ckpt-inspect -a "$f" >typed.json 2>/dev/null || :
		for path in pack-tar pack-dir P2-tar P2-dir raw-tar raw-P2-tar raw-dir typed-P2-tar; do
			o=$(write_case "$f" "$path")
			if [ -z "$o" ]; then
				# refused: 1 or 2, one line, and nothing left
				if [ "$(cat m.rc)" -gt 2 ] || [ "$(wc -l <m.err)" -ne 1 ] || [ -n "$(ls -A | grep -v '^\(in\|raw\|typed\|m\)\.')" ]; then
					echo "${f#$FIXTURES/} $path: status $(cat m.rc), $(ls -A | tr '\n' ' '): $(head -3 m.err)"
					lossy=$((lossy + 1))
				fi
				continue
			fi
			orc=0
			ckpt-inspect -R "$o" >out.R 2>out.err || orc=$?
			if [ "$orc" -ne "$irc" ] || ! cmp -s in.R out.R || ! sed "s#$o/*#SRC/#g" out.err | cmp -s - in.norm; then
				echo "${f#$FIXTURES/} $path: lossy: -R of the output differs from -R of the input"
				lossy=$((lossy + 1))
			fi
			rm -rf "$o" out.R out.err
		done
	done
	[ "$n" -ge 130 ] || { echo "expected 130 Flink snapshots in the fixtures, found $n"; return 1; }
	[ "$lossy" -eq 0 ]
}
