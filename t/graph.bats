#!/usr/bin/env bats
# ckpt-graph(5): the loader, its normal form (ckpt-plan -g) and its errors.

load helper

@test "graph: -g prints the normal form, from a file and from stdin alike" {
	run ckpt-plan -g "$DATA/graph/example.json"
	status_is 0
	output_is '{"vertices":[{"id":"src","name":"Source","parallelism":4,"max_parallelism":128,"finished":"1","operators":[{"id":"a","uid":"u","name":"n","state":[{"name":"offsets","mode":"union"}]}]},{"id":"map","parallelism":4,"finished":"0-1"}],"edges":[{"source":"src","target":"map","distribution":"pointwise","partition":"pipelined"}]}'
	file_out=$output
	run sh -c 'ckpt-plan -g < "$1"' sh "$DATA/graph/example.json"
	status_is 0
	output_is "$file_out"
}

@test "graph: a stream of documents gives one result per document" {
	run sh -c 'cat "$1" "$1" | ckpt-plan -g | wc -l' sh "$DATA/graph/example.json"
	output_is 2
}

@test "graph: the normal form reads back to itself" {
	ckpt-plan -g "$DATA/graph/example.json" > a.json
	run ckpt-plan -g a.json
	output_is "$(cat a.json)"
}

@test "graph: a cycle is named with its vertices" {
	printf '{"vertices":[{"id":"a","parallelism":1},\n {"id":"b","parallelism":2}],\n "edges":[{"source":"a","target":"b"},{"source":"b","target":"a"}]}' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:14: cycle through vertices "a" -> "b" -> "a"'
}

@test "graph: an edge to an unknown vertex names the edge and the place" {
	printf '{"vertices":[{"id":"a","parallelism":1},\n {"id":"b","parallelism":2}],\n "edges":[{"source":"a","target":"mapp"}]}' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:3:34: edge 0: unknown vertex "mapp"'
}

@test "graph: truncated JSON" {
	run sh -c 'printf "{\"vertices\":[{\"id\":\"a\"" | ckpt-plan -g'
	status_is 2
	output_is "ckpt-plan: <stdin>:1:23: '}' expected near end of file"
}

@test "graph: empty input" {
	run sh -c 'ckpt-plan -g < /dev/null'
	status_is 2
	output_is 'ckpt-plan: <stdin>: no job graph in input'
}

@test "graph: parallelism 2^40 and 0 are out of range" {
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":1099511627776}]}" | ckpt-plan -g'
	status_is 2
	output_is 'ckpt-plan: <stdin>:1:38: vertex "a": parallelism 1099511627776 out of range (1 to 16777216)'
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":0}]}" | ckpt-plan -g'
	status_is 2
	output_is 'ckpt-plan: <stdin>:1:38: vertex "a": parallelism 0 out of range (1 to 16777216)'
}

@test "graph: duplicate vertex id" {
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":1},{\"id\":\"a\",\"parallelism\":1}]}" | ckpt-plan -g'
	status_is 2
	output_is 'ckpt-plan: <stdin>:1:47: vertex 1: duplicate vertex "a"'
}

@test "graph: unknown state word and wrong tasks length" {
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":2,\"tasks\":[\"RUNING\",\"RUNNING\"]}]}" | ckpt-plan -g'
	status_is 2
	output_is 'ckpt-plan: <stdin>:1:49: vertex "a": tasks[0]: unknown state "RUNING"'
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":3,\"tasks\":[\"RUNNING\"]}]}" | ckpt-plan -g'
	status_is 2
	output_is 'ckpt-plan: <stdin>:1:48: vertex "a": "tasks" has 1 entries for parallelism 3'
}

@test "graph: bad range lists" {
	for bad in '3-1' '0-4' 'x' '1,' '1--2' '-1'; do
		run sh -c "echo '{\"vertices\":[{\"id\":\"a\",\"parallelism\":4,\"finished\":\"$bad\"}]}' | ckpt-plan -g"
		status_is 2
		[[ "$output" == 'ckpt-plan: <stdin>:1:51: vertex "a": finished: '*"\"$bad\""* ]]
	done
}

@test "graph: a JSON array of subtasks is accepted as a range list" {
	run sh -c 'echo "{\"vertices\":[{\"id\":\"a\",\"parallelism\":9,\"finished\":[0,1,2,5,7,8]}]}" | ckpt-plan -g'
	status_is 0
	output_is '{"vertices":[{"id":"a","parallelism":9,"finished":"0-2,5,7-8"}],"edges":[]}'
}
