#!/usr/bin/env bats
# ckpt-graph(5): the loader, its normal form (ckpt-plan -G) and its errors.

load helper

@test "graph: -g prints the normal form, from a file and from stdin alike" {
	run ckpt-plan -G "$DATA/graph/example.json"
	status_is 0
	output_is '{"vertices":[{"id":"src","name":"Source","parallelism":4,"max_parallelism":128,"finished":"1","operators":[{"id":"a","uid":"u","name":"n","state":[{"name":"offsets","mode":"union"}]}]},{"id":"map","parallelism":4,"finished":"0-1"}],"edges":[{"source":"src","target":"map","distribution":"pointwise","partition":"pipelined"}]}'
	file_out=$output
	run sh -c 'ckpt-plan -G < "$1"' sh "$DATA/graph/example.json"
	status_is 0
	output_is "$file_out"
}

@test "graph: a stream of documents gives one result per document" {
	run sh -c 'cat "$1" "$1" | ckpt-plan -G | wc -l' sh "$DATA/graph/example.json"
	output_is 2
}

@test "graph: the normal form reads back to itself" {
	ckpt-plan -G "$DATA/graph/example.json" > a.json
	run ckpt-plan -G a.json
	output_is "$(cat a.json)"
}

@test "graph: a cycle is named with its vertices" {
	printf '{"vertices":[{"id":"a","parallelism":1},\n {"id":"b","parallelism":2}],\n "edges":[{"source":"a","target":"b"},{"source":"b","target":"a"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: cycle through vertices "a" -> "b" -> "a"' ckpt-plan -G g.json
}

@test "graph: an edge to an unknown vertex names the edge and the place" {
	printf '{"vertices":[{"id":"a","parallelism":1},\n {"id":"b","parallelism":2}],\n "edges":[{"source":"a","target":"mapp"}]}' > g.json
	bad 2 'ckpt-plan: g.json:3:34: edge 0: unknown vertex "mapp"' ckpt-plan -G g.json
}

@test "graph: truncated JSON" {
	bad 2 "ckpt-plan: <stdin>:1:23: '}' expected near end of file" sh -c 'printf "{\"vertices\":[{\"id\":\"a\"" | ckpt-plan -G'
}

@test "graph: empty input" {
	bad 2 'ckpt-plan: <stdin>: no job graph in input' sh -c 'ckpt-plan -G < /dev/null'
}

@test "graph: parallelism 2^40 and 0 are out of range" {
	bad 2 'ckpt-plan: <stdin>:1:38: vertex "a": parallelism 1099511627776 out of range (1 to 16777216)' sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":1099511627776}]}" | ckpt-plan -G'
	bad 2 'ckpt-plan: <stdin>:1:38: vertex "a": parallelism 0 out of range (1 to 16777216)' sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":0}]}" | ckpt-plan -G'
}

@test "graph: duplicate vertex id" {
	bad 2 'ckpt-plan: <stdin>:1:47: vertex 1: duplicate vertex "a"' sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":1},{\"id\":\"a\",\"parallelism\":1}]}" | ckpt-plan -G'
}

@test "graph: unknown state word and wrong tasks length" {
	bad 2 'ckpt-plan: <stdin>:1:49: vertex "a": tasks[0]: unknown state "RUNING"' sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":2,\"tasks\":[\"RUNING\",\"RUNNING\"]}]}" | ckpt-plan -G'
	bad 2 'ckpt-plan: <stdin>:1:48: vertex "a": "tasks" has 1 entries for parallelism 3' sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":3,\"tasks\":[\"RUNNING\"]}]}" | ckpt-plan -G'
}

@test "graph: bad range lists" {
	for bad in '3-1' '0-4' 'x' '1,' '1--2' '-1'; do
		run sh -c "echo '{\"vertices\":[{\"id\":\"a\",\"parallelism\":4,\"finished\":\"$bad\"}]}' | ckpt-plan -G"
		status_is 2
		[[ "$output" == 'ckpt-plan: <stdin>:1:51: vertex "a": finished: '*"\"$bad\""* ]]
	done
}

@test "graph: a JSON array of subtasks is accepted as a range list" {
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":9,\"finished\":[0,1,2,5,7,8]}]}" | ckpt-plan -G'
	status_is 0
	output_is '{"vertices":[{"id":"a","parallelism":9,"finished":"0-2,5,7-8"}],"edges":[]}'
}

# bad_graph DOC LINE: ckpt-plan -G refuses the document DOC on stdin: exit 2, exactly LINE on stderr.
bad_graph() {
	bad 2 "$2" sh -c 'printf "%s" "$1" | ckpt-plan -G' sh "$1"
}

@test "graph: not JSON, not an object, no vertices" {
	bad_graph 'hello' "ckpt-plan: <stdin>:1:1: '[' or '{' expected near 'hello'"
	bad_graph '[1,2]' 'ckpt-plan: <stdin>:1:1: not a job graph (an array): expected {"vertices": [...], "edges": [...]} or Flink'"'"'s GET /jobs/:jobid'
	bad_graph '{"vertex":[]}' 'ckpt-plan: <stdin>:1:1: not a job graph: expected {"vertices": [...], "edges": [...]} or Flink'"'"'s GET /jobs/:jobid'
	bad_graph '{"edges":[]}' 'ckpt-plan: <stdin>:1:1: graph: "vertices" must be an array'
	bad_graph '{"vertices":{}}' 'ckpt-plan: <stdin>:1:13: graph: "vertices" must be an array'
}

@test "graph: bytes that are not UTF-8, and a duplicate key" {
	bad 2 'ckpt-plan: <stdin>:1:1: unable to decode byte 0xff' sh -c 'printf "\377\376" | ckpt-plan'
	bad_graph '{"vertices":[], "vertices":[]}' "ckpt-plan: <stdin>:1:17: duplicate object key near '\"vertices\"'"
}

@test "graph: an unknown key is named (a misspelling is not ignored)" {
	bad_graph '{"vertices":[{"id":"a","paralelism":1}]}' 'ckpt-plan: <stdin>:1:37: vertex 0: unknown key "paralelism"'
}

@test "graph: a vertex without id, a parallelism that is not an integer" {
	bad_graph '{"vertices":[{"parallelism":4}]}' 'ckpt-plan: <stdin>:1:14: vertex 0: missing "id"'
	bad_graph '{"vertices":[{"id":"a","parallelism":"2"}]}' 'ckpt-plan: <stdin>:1:38: vertex "a": "parallelism" must be an integer'
}

@test "graph: max_parallelism below parallelism or above 32768" {
	bad_graph '{"vertices":[{"id":"a","parallelism":4,"max_parallelism":2}]}' 'ckpt-plan: <stdin>:1:58: vertex "a": max_parallelism 2 is below parallelism 4'
	bad_graph '{"vertices":[{"id":"a","parallelism":4,"max_parallelism":40000}]}' 'ckpt-plan: <stdin>:1:58: vertex "a": max_parallelism 40000 out of range (1 to 32768)'
}

@test "graph: more subtasks than the limit are refused before anything is allocated for them" {
	bad_graph '{"vertices":[{"id":"a","parallelism":16777216},{"id":"b","parallelism":16777216},{"id":"c","parallelism":16777216},{"id":"d","parallelism":16777216},{"id":"e","parallelism":1}]}' 'ckpt-plan: <stdin>:1:150: vertex "e": more than 67108864 subtasks in the graph'
}

@test "graph: tasks and finished together, a state that is not a string" {
	bad_graph '{"vertices":[{"id":"a","parallelism":1,"tasks":["RUNNING"],"finished":"0"}]}' 'ckpt-plan: <stdin>:1:14: vertex "a": give "tasks" or "finished", not both'
	bad_graph '{"vertices":[{"id":"a","parallelism":1,"tasks":[4]}]}' 'ckpt-plan: <stdin>:1:49: vertex "a": tasks[0] must be a string'
}

@test "graph: an edge without target, an unknown distribution, an unknown partition type" {
	bad_graph '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a"}]}' 'ckpt-plan: <stdin>:1:51: edge 0: missing "target"'
	bad_graph '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a","target":"a","distribution":"forward"}]}' 'ckpt-plan: <stdin>:1:93: edge 0: distribution must be "all_to_all" or "pointwise"'
	bad_graph '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a","target":"a","partition":"blocking_persistent"}]}' 'ckpt-plan: <stdin>:1:90: edge 0: unknown partition type "blocking_persistent"'
}

@test "graph: an edge from a vertex to itself is a cycle" {
	bad_graph '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a","target":"a"}]}' 'ckpt-plan: <stdin>:1:14: cycle through vertices "a" -> "a"'
}

@test "graph: operator state without a mode, batch_snapshot not a boolean" {
	bad_graph '{"vertices":[{"id":"a","parallelism":1,"operators":[{"state":[{"name":"x"}]}]}]}' 'ckpt-plan: <stdin>:1:63: vertex "a": operator 0: state 0 needs "name" and "mode"'
	bad_graph '{"vertices":[{"id":"a","parallelism":1,"batch_snapshot":"no"}]}' 'ckpt-plan: <stdin>:1:57: vertex "a": "batch_snapshot" must be true or false'
}

@test "graph: a bad document after good ones stops the stream with exit 2, naming its line" {
	run sh -c 'printf "%s\n%s\n" "{\"vertices\":[{\"id\":\"a\",\"parallelism\":1}]}" "{\"vertices\":[{\"id\":\"a\",\"parallelism\":0}]}" | ckpt-plan -G'
	status_is 2
	[ "${lines[0]}" = '{"vertices":[{"id":"a","parallelism":1}],"edges":[]}' ]
	[ "${lines[1]}" = 'ckpt-plan: <stdin>:2:38: vertex "a": parallelism 0 out of range (1 to 16777216)' ]
	run sh -c 'printf "%s x" "{\"vertices\":[]}" | ckpt-plan -G'
	status_is 2
	[ "${lines[1]}" = "ckpt-plan: <stdin>:1:17: '[' or '{' expected near 'x'" ]
}

@test "graph: the same error from a file names the file" {
	printf '{"vertices":[{"id":"a","parallelism":1,"tasks":["RUNING"]}]}' > bad.json
	bad 2 'ckpt-plan: bad.json:1:49: vertex "a": tasks[0]: unknown state "RUNING"' ckpt-plan bad.json
}

@test "graph: unreadable input" {
	bad 2 'ckpt-plan: /: read error: Is a directory' ckpt-plan /
	bad 2 'ckpt-plan: missing.json: cannot open: No such file or directory' ckpt-plan missing.json
}

@test "graph: an empty file among others is an error" {
	: > empty.json
	run ckpt-plan -G "$DATA/graph/example.json" empty.json
	status_is 2
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = 'ckpt-plan: empty.json: no job graph in input' ]
}

@test "graph: absurd numbers of pointwise connections are refused, not worked on for hours" {
	awk 'BEGIN { printf "{\"vertices\":[{\"id\":\"a\",\"parallelism\":16777216},{\"id\":\"b\",\"parallelism\":16777216}],\"edges\":["
		for (i = 0; i < 257; i++) printf "%s{\"source\":\"a\",\"target\":\"b\",\"distribution\":\"pointwise\"}", i ? "," : ""
		print "]}" }' > huge.json
	bad 2 'ckpt-plan: huge.json:1:1: more than 4294967296 pointwise connections in the graph' ckpt-plan huge.json
	bad 2 'ckpt-plan: huge.json:1:1: more than 268435456 pointwise connections in the graph' ckpt-plan -f a:0 huge.json
}
