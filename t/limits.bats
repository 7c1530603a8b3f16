#!/usr/bin/env bats
# Limits: counts, lengths, parallelism and nesting from the input are checked before
# anything is allocated from them; each claim is refused with the place named (exit 2).

load helper
load hardening-helper

graph1() { # a one-vertex graph with the given members
	printf '{"vertices":[{"id":"a",%s}]}\n' "$1"
}

@test "limits: graph parallelism 2^31 is refused before the tasks are allocated" {
	graph1 '"parallelism":2147483648' > g.json
	run_lowmem ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:38: vertex "a": parallelism 2147483648 out of range (1 to 16777216)'
}

@test "limits: graph parallelism just above the limit, 2^32 and 2^63-1" {
	for p in 16777217 4294967296 9223372036854775807; do
		graph1 "\"parallelism\":$p" > g.json
		run ckpt-plan -g g.json
		status_is 2
		output_is "ckpt-plan: g.json:1:38: vertex \"a\": parallelism $p out of range (1 to 16777216)"
	done
}

@test "limits: graph parallelism beyond 64 bits is a JSON error" {
	graph1 '"parallelism":18446744073709551616' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is "ckpt-plan: g.json:1:58: too big integer near '18446744073709551616'"
}

@test "limits: the largest parallelism loads" {
	graph1 '"parallelism":16777216,"finished":"16777215"' > g.json
	run ckpt-plan -g g.json
	status_is 0
	output_is '{"vertices":[{"id":"a","parallelism":16777216,"finished":"16777215"}],"edges":[]}'
}

@test "limits: max_parallelism above Flink's 32768" {
	graph1 '"parallelism":1,"max_parallelism":32769' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:58: vertex "a": max_parallelism 32769 out of range (1 to 32768)'
}

@test "limits: a graph of more than 2^26 subtasks in all" {
	printf '{"vertices":[' > g.json
	for i in 0 1 2 3 4; do
		[ $i = 0 ] || printf ',' >> g.json
		printf '{"id":"v%d","parallelism":16777216}' $i >> g.json
	done
	printf ']}\n' >> g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:154: vertex "v4": more than 67108864 subtasks in the graph'
}

@test "limits: a subtask index of 11 digits in a range list" {
	graph1 '"parallelism":4,"finished":"99999999999"' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:51: vertex "a": finished: bad range list "99999999999"'
	graph1 '"parallelism":4,"finished":"0-4294967296"' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:51: vertex "a": finished: range list "0-4294967296": subtask 4294967296 out of range (parallelism 4)'
	graph1 '"parallelism":4,"finished":[4294967296]' > g.json
	run ckpt-plan -g g.json
	status_is 2
	output_is 'ckpt-plan: g.json:1:51: vertex "a": finished: subtask 4294967296 out of range (parallelism 4)'
}

@test "limits: JSON nested 100000 deep stops at the parser's depth" {
	awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["; for (i = 0; i < 100000; i++) printf "]"; print "" }' > deep.json
	run ckpt-plan deep.json
	status_is 2
	output_is "ckpt-plan: deep.json:1:2050: maximum parsing depth reached near '['"
}
