#!/usr/bin/env bats
# ckpt-plan: the checkpoint plan of FLIP-147 (Flink's calculator, checker and coordinator scenarios).

load helper
load plan-helper

P=$DATA/plan

# Each scenario's plan matches its golden file with every algorithm, from a file and from stdin.
check_scenario() {
	local name=$1 want_status=$2
	for algo in fast reference both; do
		run ckpt-plan -p -A $algo "$P/$name.json"
		status_is "$want_status"
		match_golden "$P/$name.expected"
	done
	run sh -c 'ckpt-plan -p < "$1"' sh "$P/$name.json"
	status_is "$want_status"
	match_golden "$P/$name.expected"
}

@test "C1 all running: every source subtask is triggered" {
	check_scenario c1-all-running 0
}

@test "C2 all-to-all edge, some sources finished: nothing downstream is triggered" {
	check_scenario c2-all-to-all-sources-finished 0
}

@test "C3 one-to-one edge, some sources finished: their consumers are triggered" {
	check_scenario c3-one-to-one-sources-finished 0
}

@test "C4 one-to-one edge, some sources and targets finished" {
	check_scenario c4-one-to-one-sources-and-targets-finished 0
}

@test "C5 multiple inputs, one fully finished upstream" {
	check_scenario c5-multiple-inputs 0
}

@test "C6 multiple levels" {
	check_scenario c6-multiple-levels 0
}

@test "P1 a FINISHED subtask with a RUNNING predecessor is planned as given, with warnings" {
	check_scenario p1-finish-status-not-fully-reported 0
}

@test "K3 some subtasks finished: the finished ones are listed, the rest triggered" {
	check_scenario k3-some-finished 0
}

@test "K2 fully finished sources: planned, and declined under -N" {
	check_scenario k2-sources-finished 0
	run ckpt-plan -p -N "$P/k2-sources-finished.json"
	status_is 1
	match_golden "$P/k2-sources-finished.N.expected"
}

@test "-N with nothing finished plans as usual" {
	run ckpt-plan -p -N "$P/c1-all-running.json"
	status_is 0
	match_golden "$P/c1-all-running.expected"
}

@test "D1 union state in a partly finished vertex declines the checkpoint" {
	check_scenario d1-union-state-partly-finished 1
}

@test "E2 a source not yet running, E3 a canceled source: declined" {
	check_scenario e2-source-not-running 1
	check_scenario e3-source-canceled 1
}

@test "E1 every state but RUNNING and FINISHED declines, source or not, named as Flink names tasks" {
	# A and B, each a source or not (C feeds the non-sources): 32 graphs in one stream
	for edges in '' '{"source":"A","target":"B"}' '{"source":"B","target":"A"}' \
		'{"source":"C","target":"A"},{"source":"C","target":"B"}'; do
		for st in CREATED SCHEDULED DEPLOYING INITIALIZING CANCELING CANCELED FAILED RECONCILING; do
			echo '{"vertices":[{"id":"A","parallelism":2},{"id":"B","name":"Map","parallelism":2,"tasks":["'$st'","RUNNING"]},{"id":"C","parallelism":1}],"edges":['$edges']}'
		done
	done > graphs.json
	run ckpt-plan graphs.json
	status_is 1
	[ "${#lines[@]}" -eq 32 ]
	for line in "${lines[@]}"; do
		[ "$line" = '{"trigger":[],"wait_for":[],"commit_to":[],"finished":[],"fully_finished":[],"warnings":[],"decline":{"reason":"NOT_ALL_REQUIRED_TASKS_RUNNING","message":"Checkpoint triggering task Map (1/2) is not being executed at the moment. Aborting checkpoint."}}' ]
	done
}

@test "E1 FINISHED is not a decline (checkpoints after tasks finish), except under -N" {
	g='{"vertices":[{"id":"A","parallelism":2},{"id":"B","parallelism":2,"tasks":["FINISHED","RUNNING"]}]}'
	run sh -c 'echo "$1" | ckpt-plan' sh "$g"
	status_is 0
	output_is '{"trigger":[{"vertex":"A","subtasks":"0-1"},{"vertex":"B","subtasks":"1"}],"wait_for":[{"vertex":"A","subtasks":"0-1"},{"vertex":"B","subtasks":"1"}],"commit_to":[{"vertex":"A","subtasks":"0-1"},{"vertex":"B","subtasks":"1"}],"finished":[{"vertex":"B","subtasks":"0"}],"fully_finished":[],"warnings":[],"decline":null}'
	run sh -c 'echo "$1" | ckpt-plan -N | jq -r .decline.message' sh "$g"
	output_is 'Some tasks of the job have already finished and checkpointing with finished tasks is not enabled.'
}

@test "the first decline in Flink's order wins: -N before states before union state" {
	g='{"vertices":[{"id":"A","parallelism":2,"tasks":["FINISHED","CANCELED"],"operators":[{"state":[{"name":"s","mode":"union"}]}]}]}'
	run sh -c 'echo "$1" | ckpt-plan -N | jq -r .decline.message' sh "$g"
	output_is 'Some tasks of the job have already finished and checkpointing with finished tasks is not enabled.'
	run sh -c 'echo "$1" | ckpt-plan | jq -r .decline.message' sh "$g"
	output_is 'Checkpoint triggering task A (2/2) is not being executed at the moment. Aborting checkpoint.'
}

@test "union state in a fully finished or fully running vertex is fine" {
	for fin in '"0-1"' '""'; do
		run sh -c 'echo "{\"vertices\":[{\"id\":\"A\",\"parallelism\":2,\"finished\":$1,\"operators\":[{\"state\":[{\"name\":\"s\",\"mode\":\"union\"}]}]}]}" | ckpt-plan | jq -c .decline' sh "$fin"
		output_is null
	done
}

@test "pointwise 21->19 and 19->21: who is triggered when upstream subtasks finish" {
	run sh -c 'echo "{\"vertices\":[{\"id\":\"up\",\"parallelism\":21,\"finished\":\"9,19\"},{\"id\":\"down\",\"parallelism\":19}],\"edges\":[{\"source\":\"up\",\"target\":\"down\",\"distribution\":\"pointwise\"}]}" | ckpt-plan -A both | jq -c .trigger'
	output_is '[{"vertex":"up","subtasks":"0-8,10-18,20"}]'
	run sh -c 'echo "{\"vertices\":[{\"id\":\"up\",\"parallelism\":21,\"finished\":\"9-10,19-20\"},{\"id\":\"down\",\"parallelism\":19}],\"edges\":[{\"source\":\"up\",\"target\":\"down\",\"distribution\":\"pointwise\"}]}" | ckpt-plan -A both | jq -c .trigger'
	output_is '[{"vertex":"up","subtasks":"0-8,11-18"},{"vertex":"down","subtasks":"9,18"}]'
	run sh -c 'echo "{\"vertices\":[{\"id\":\"up\",\"parallelism\":19,\"finished\":\"0,9\"},{\"id\":\"down\",\"parallelism\":21}],\"edges\":[{\"source\":\"up\",\"target\":\"down\",\"distribution\":\"pointwise\"}]}" | ckpt-plan -A both | jq -c .trigger'
	output_is '[{"vertex":"up","subtasks":"1-8,10-18"},{"vertex":"down","subtasks":"0-1,10-11"}]'
}

@test "-A both agrees on 600 random graphs, and fast and reference print the same" {
	random_graphs 300 1 > a.json
	random_graphs 300 2 > b.json
	run ckpt-plan -A both a.json b.json
	[ "$status" -le 1 ]
	[ "${#lines[@]}" -eq 600 ]
	ckpt-plan -A fast a.json b.json > fast.out || true
	ckpt-plan -A reference a.json b.json > reference.out || true
	cmp fast.out reference.out
	# the generator covers every outcome
	grep -q '"decline":null' fast.out
	grep -q NOT_ALL_REQUIRED_TASKS_RUNNING fast.out
	grep -q '"fully_finished":\["' fast.out
	grep -q 'RUNNING predecessor' fast.out
}

@test "a stream of graphs gives one plan per graph; exit 1 when any is declined" {
	run sh -c 'cat "$1" "$2" "$1" | ckpt-plan | jq -c .decline.reason' sh "$P/c1-all-running.json" "$P/e2-source-not-running.json"
	output_is 'null
"NOT_ALL_REQUIRED_TASKS_RUNNING"
null'
	run sh -c 'cat "$1" "$2" "$1" | ckpt-plan > /dev/null' sh "$P/c1-all-running.json" "$P/e2-source-not-running.json"
	status_is 1
	run ckpt-plan "$P/c1-all-running.json" "$P/c2-all-to-all-sources-finished.json"
	status_is 0
	[ "${#lines[@]}" -eq 2 ]
}

@test "-D draws the plan as Graphviz DOT" {
	run ckpt-plan -D "$P/c4-one-to-one-sources-and-targets-finished.json"
	status_is 0
	match_golden "$P/c4-one-to-one-sources-and-targets-finished.dot.expected"
}

@test "-D with -f draws the restarting and failed subtasks; wide vertices become one box" {
	run ckpt-plan -D -f V1:1 -s approximate "$P/c4-one-to-one-sources-and-targets-finished.json"
	status_is 0
	match_golden "$P/c4-one-to-one-sources-and-targets-finished.failover.dot.expected"
	run sh -c 'echo "{\"vertices\":[{\"id\":\"src\",\"name\":\"Source\",\"parallelism\":100,\"finished\":\"0-49\"},{\"id\":\"map\",\"parallelism\":3}],\"edges\":[{\"source\":\"src\",\"target\":\"map\",\"partition\":\"blocking\"}]}" | ckpt-plan -D'
	status_is 0
	match_golden "$P/wide.dot.expected"
}

@test "-D of a declined plan exits 1 and says why" {
	run ckpt-plan -D "$P/e3-source-canceled.json"
	status_is 1
	[[ "${lines[1]}" == *'label="checkpoint declined: NOT_ALL_REQUIRED_TASKS_RUNNING\nCheckpoint triggering task Source (1/1) is not being executed at the moment. Aborting checkpoint."];' ]]
	[[ "$output" == *'v0_0 [label="0\nCANCELED", fillcolor="#f6c6c6"];'* ]]
}

@test "ckpt-plan -D | dot -Tsvg makes a picture" {
	command -v dot > /dev/null || skip "graphviz is not installed"
	ckpt-plan -D -f V2:3 "$P/c6-multiple-levels.json" | dot -Tsvg > plan.svg
	grep -q '<svg' plan.svg
	grep -q 'checkpoint plan: 18 triggered, 58 waited for, 22 finished' plan.svg
	grep -q 'failover: 80 subtasks restart' plan.svg
}

@test "-h, -V and usage errors" {
	run ckpt-plan -h
	status_is 0
	[[ "${lines[0]}" == 'usage: ckpt-plan [-p] [-N] [-A fast|reference|both] [file ...]' ]]
	run ckpt-plan -V
	status_is 0
	[[ "$output" =~ ^ckpt-plan\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	bad 2 'ckpt-plan: -A quick: expected fast, reference or both (see ckpt-plan -h)' ckpt-plan -A quick "$P/c1-all-running.json"
	run ckpt-plan -x
	status_is 2
	bad 2 'ckpt-plan: -A applies to checkpoint plans only (see ckpt-plan -h)' ckpt-plan -G -A both "$P/c1-all-running.json"
	bad 2 'ckpt-plan: -s needs -f or --regions (see ckpt-plan -h)' ckpt-plan -s full "$P/c1-all-running.json"
}

@test "a missing file is an error naming it; later files are not read" {
	bad 2 'ckpt-plan: nonexistent.json: cannot open: No such file or directory' ckpt-plan nonexistent.json "$P/c1-all-running.json"
}

@test "the EXAMPLES of ckpt-plan(1) and ckpt-graph(5) run" {
	ln -s "$ROOT/examples" examples
	n=0
	while IFS= read -r cmd; do
		case $cmd in *"| dot "*) command -v dot > /dev/null || continue ;; esac
		run sh -c "$cmd"
		if [ "$status" -ne 0 ]; then
			echo "failed ($status): $cmd"
			printf '%s\n' "$output"
			return 1
		fi
		n=$((n + 1))
	done < <(grep -h '^\$ ' "$ROOT/man/ckpt-plan.1" "$ROOT/man/ckpt-graph.5" | sed 's/^\$ //')
	[ "$n" -ge 10 ]
	grep -q '<svg' plan.svg || ! command -v dot > /dev/null
	ckpt-plan job-graph.json > /dev/null
}

@test "-D escapes names for DOT and marks a failed subtask of a wide vertex" {
	cat > g.json <<'G'
{"vertices":[{"id":"a\"b","name":"x\\y \"q\"\nz","parallelism":2},{"id":"c{}","parallelism":40,"finished":"1-3"}],
 "edges":[{"source":"a\"b","target":"c{}","distribution":"pointwise","partition":"hybrid_selective"}]}
G
	run ckpt-plan -D -f 'c{}:5' g.json
	status_is 0
	[ "${lines[5]}" = '		label="x\\y \"q\"\nz (a\"b)\nparallelism 2";' ]
	[ "${lines[10]}" = '	v1 [label="c{}\nparallelism 40\nwait for: 0,4-39 (37)\nfinished: 1-3 (3)\nrestart: 0-19 (20)\nfailed: 5 (1)", fillcolor="#bcd9f5", color="#d62728", penwidth=3];' ]
	if command -v dot > /dev/null; then
		ckpt-plan -D -f 'c{}:5' g.json | dot -Tsvg > g.svg
	fi
}
