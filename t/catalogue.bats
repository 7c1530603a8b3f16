#!/usr/bin/env bats
# The catalogue of bad inputs: every kind of bad input each program may meet, with the one
# diagnostic line it prints and its exit status (nothing on stdout).  Programs' own tests
# cover their common errors; this is the one place that lists them all side by side.

load helper
load hardening-helper

# ---- ckpt-plan: files, JSON, job graphs

@test "catalogue: ckpt-plan: a file that does not exist" {
	bad 2 'ckpt-plan: nope.json: cannot open: No such file or directory' ckpt-plan nope.json
}

@test "catalogue: ckpt-plan: a directory given as a file" {
	mkdir d
	bad 2 'ckpt-plan: d: read error: Is a directory' ckpt-plan d
}

@test "catalogue: ckpt-plan: a dangling symbolic link" {
	ln -s missing.json link.json
	bad 2 'ckpt-plan: link.json: cannot open: No such file or directory' ckpt-plan link.json
}

@test "catalogue: ckpt-plan: only white space on stdin" {
	bad 2 'ckpt-plan: <stdin>: no job graph in input' sh -c 'printf "  \n\t\n" | ckpt-plan'
}

@test "catalogue: ckpt-plan: bytes that are not UTF-8" {
	printf '{"vertices":[{"id":"a\303\050","parallelism":1}]}' > g.json
	bad 2 "ckpt-plan: g.json:1:22: unable to decode byte 0xc3 near '\"a'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a NUL escaped in a string" {
	printf '{"vertices":[{"id":"a\\u0000","parallelism":1}]}' > g.json
	bad 2 "ckpt-plan: g.json:1:29: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000\"'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: single quotes instead of JSON's double quotes" {
	printf "{'vertices':[]}" > g.json
	bad 2 "ckpt-plan: g.json:1:3: string or '}' expected near '''" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a trailing comma" {
	printf '{"vertices":[],}' > g.json
	bad 2 "ckpt-plan: g.json:1:17: string or '}' expected near '}'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a comment" {
	printf '/* c */ {"vertices":[]}' > g.json
	bad 2 "ckpt-plan: g.json:1:2: '[' or '{' expected near '/'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a duplicate key" {
	printf '{"vertices":[{"id":"a","parallelism":1}],\n"edges":[{"source":"a","target":"b","source":"a"}]}' > g.json
	bad 2 "ckpt-plan: g.json:2:45: duplicate object key near '\"source\"'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an array where a graph object belongs" {
	bad 2 'ckpt-plan: <stdin>:1:1: a job graph must be an object' sh -c 'echo "[]" | ckpt-plan'
}

@test "catalogue: ckpt-plan: a vertex that is not an object" {
	printf '{"vertices":[1]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: vertex 0 must be an object' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a vertex without an id" {
	printf '{"vertices":[{"parallelism":1}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: vertex 0: missing "id"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a vertex id that is a number" {
	printf '{"vertices":[{"id":7,"parallelism":1}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:20: vertex 0: "id" must be a string' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a parallelism given as a string" {
	printf '{"vertices":[{"id":"a","parallelism":"4"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:38: vertex "a": "parallelism" must be an integer' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a fractional parallelism" {
	printf '{"vertices":[{"id":"a","parallelism":1.5}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:38: vertex "a": "parallelism" must be an integer' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: max_parallelism below parallelism" {
	printf '{"vertices":[{"id":"a","parallelism":4,"max_parallelism":2}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:58: vertex "a": max_parallelism 2 is below parallelism 4' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: tasks and finished together" {
	printf '{"vertices":[{"id":"a","parallelism":1,"tasks":["RUNNING"],"finished":"0"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: vertex "a": give "tasks" or "finished", not both' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: tasks as a string" {
	printf '{"vertices":[{"id":"a","parallelism":1,"tasks":"RUNNING"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:48: vertex "a": "tasks" must be an array' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: finished as a number" {
	printf '{"vertices":[{"id":"a","parallelism":4,"finished":4}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: expected a range list or an array of subtask indices' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a string in a finished array" {
	printf '{"vertices":[{"id":"a","parallelism":4,"finished":[1,"2"]}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: subtask list element 1 is not an integer' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: batch_snapshot not a boolean" {
	printf '{"vertices":[{"id":"a","parallelism":1,"batch_snapshot":"no"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:57: vertex "a": "batch_snapshot" must be true or false' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: operators not an array" {
	printf '{"vertices":[{"id":"a","parallelism":4,"operators":{}}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:52: vertex "a": "operators" must be an array' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an unknown key in an operator" {
	printf '{"vertices":[{"id":"a","parallelism":1,"operators":[{"id":"o","colour":"red"}]}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:72: vertex "a": operator 0: unknown key "colour"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a state declaration without a mode" {
	printf '{"vertices":[{"id":"a","parallelism":4,"operators":[{"id":"o","state":[{"name":"s"}]}]}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:72: vertex "a": operator 0: state 0 needs "name" and "mode"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an edge that is a string" {
	printf '{"vertices":[{"id":"a","parallelism":1}],"edges":["a->b"]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: edge 0 must be an object' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an edge without a target" {
	printf '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: edge 0: missing "target"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an edge from a vertex to itself" {
	printf '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a","target":"a"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: cycle through vertices "a" -> "a"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a distribution Flink has no name for" {
	printf '{"vertices":[{"id":"a","parallelism":1},{"id":"b","parallelism":1}],\n"edges":[{"source":"a","target":"b","distribution":"forward"}]}' > g.json
	bad 2 'ckpt-plan: g.json:2:52: edge 0: distribution must be "all_to_all" or "pointwise"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a partition type given as a number" {
	printf '{"vertices":[{"id":"a","parallelism":1},{"id":"b","parallelism":1}],\n"edges":[{"source":"a","target":"b","partition":7}]}' > g.json
	bad 2 'ckpt-plan: g.json:2:49: edge 0: unknown partition type (not a string)' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: garbage after a good graph in a stream" {
	printf '{"vertices":[]}\n{"vertices":[]}\nx' > g.json
	run ckpt-plan -g g.json
	status_is 2
	# each document's result is whole; the garbage is named and fails the run
	output_is "$(printf '%s\n' '{"vertices":[],"edges":[]}' '{"vertices":[],"edges":[]}' "ckpt-plan: g.json:3:2: '[' or '{' expected near 'x'")"
}
