#!/usr/bin/env bats
# ckpt-run: the engine: data path, aligned checkpoints, finishing (FLIP-147), failover, savepoints, restore.

load helper

@test "run: usage" {
	run ckpt-run -h
	status_is 0
	match_golden "$DATA/usage/ckpt-run.expected"
	run ckpt-run
	status_is 2
	bad 2 "ckpt-run: --stop-after-ms must be a non-negative integer: x (see ckpt-run -h)" ckpt-run --stop-after-ms x p.json
}

@test "run: a bounded job runs to its end and counts its records" {
	pipeline windows '.vertices[1] = {"id": "map", "operator": "map", "parallelism": 2} | .vertices[2] = {"id": "sink", "operator": "discard_sink", "parallelism": 2} | .edges = [{"source": "src", "target": "map", "partitioner": "rebalance"}, {"source": "map", "target": "sink", "partitioner": "forward"}] | del(.checkpointing)'
	run_job p.json
	status_is 0
	[ "$(events job_finished | jq -r '[.state, .records, .source_records] | @tsv')" = "FINISHED	8000	8000" ]
	# every subtask went INITIALIZING, RUNNING, FINISHED
	[ "$(events task_state | jq -r .state | sort | uniq -c | awk '{print $1, $2}' | tr '\n' ' ')" = "6 FINISHED 6 INITIALIZING 6 RUNNING " ]
}

@test "run: without checkpoints the file sink commits at the end of input" {
	pipeline windows 'del(.checkpointing)'
	run_job p.json
	status_is 0
	[ "$(committed | wc -l)" -eq 640 ]
	[ "$(ls out)" = "$(printf 'part-0-0\npart-1-0')" ]
}

@test "run: checkpoints are archives ckpt-inspect reads; retain keeps the newest" {
	# unbounded, stopped after 3 checkpoints (-n): their number does not depend on the machine's speed
	pipeline windows '.vertices[0].params.records = 0 | .vertices[0].params.delay_us = 100'
	run_job --stop-after-checkpoints 3 --savepoint sp.tar p.json
	status_is 0
	events checkpoint_completed | jq -c 'select(.kind == "checkpoint")' > cps.txt
	[ "$(wc -l < cps.txt)" -eq 3 ]
	# the newest two (retain 2) are kept, the oldest deleted; the savepoint went to -o
	[ "$(ls ck | sort)" = "$(tail -2 cps.txt | jq -r .path | sed 's,^ck/,,' | sort)" ]
	[ -f sp.tar ]
	last=$(tail -1 cps.txt)
	path=$(echo "$last" | jq -r .path)
	[ "$(echo "$last" | jq -r 'keys_unsorted | join(",")')" = "event,id,kind,duration_ms,alignment_ms,persisted_bytes,state_bytes,path" ]
	[ -f "$path" ]
	run ckpt-inspect -c "$path"
	status_is 0
	run ckpt-inspect "$path"
	status_is 0
	[ "$(echo "$output" | jq .checkpoint_id)" = "$(echo "$last" | jq .id)" ]
	[ "$(echo "$output" | jq -c '[.operators[] | .id]')" = '["src","win","sink"]' ]
	# each triggered checkpoint names its trigger set: the sources
	[ "$(events checkpoint_triggered | head -1 | jq -c .trigger)" = '[{"vertex":"src","subtasks":"0-1"}]' ]
}

@test "run: keyed state and list state in the archive, by key group" {
	# unbounded: only the stop ends the job, the savepoint cannot race with its end (both splits stay)
	pipeline windows '.vertices[0].params.records = 0 | .vertices[0].params.delay_us = 100'
	run_job --stop-after-checkpoints 2 p.json
	status_is 0
	sp=$(events savepoint | jq -r .path)
	run ckpt-inspect "$sp"
	status_is 0
	[ "$(echo "$output" | jq -c '.operators[1].key_groups')" = '{"0":"0-63","1":"64-127"}' ]
	[ "$(echo "$output" | jq -c '.operators[0].states[0] | [.name, .mode, .entries]')" = '["offsets","list",2]' ]
	[ "$(echo "$output" | jq -c '.operators[2].states[0] | [.name, .mode]')" = '["pending","list"]' ]
}

# Exactly-once: the committed output under failures equals the failure-free run's.
exactly_once() {
	local base=$1 strategy=$2 failures=$3 expect=$4
	pipeline "$base"
	run_job p.json
	status_is 0
	committed > ref.txt
	[ "$(wc -l < ref.txt)" -eq "$expect" ]
	rm -rf out ck
	pipeline "$base" ".failover.strategy = \"$strategy\" | .failover.failures = $failures"
	run_job p.json
	status_is 0
	[ "$(events failure | wc -l)" -ge 1 ]
	[ "$(events restart | head -1 | jq -r .strategy)" = "$strategy" ]
	committed > got.txt
	cmp ref.txt got.txt
}

@test "run: exactly once, window and 2PC sink, one failure, full failover" {
	exactly_once windows full '[{"vertex": "win", "subtask": 1, "after_records": 1500}]' 640
}

@test "run: exactly once, window and 2PC sink, failures in every vertex, region failover" {
	exactly_once windows region '[{"vertex": "win", "subtask": 1, "after_records": 1500}, {"vertex": "sink", "subtask": 0, "after_records": 50}, {"vertex": "src", "subtask": 1, "after_records": 1000}]' 640
}

@test "run: exactly once, keyed running sums, many seeded failures" {
	exactly_once sum region '[{"vertex": "sum", "subtask": 0, "after_records": 1000}]' 6000
	rm -rf out ck
	pipeline sum '.failover.random = {"seed": 3, "count": 5, "max_records": 800}'
	run_job p.json
	status_is 0
	[ "$(events restart | wc -l)" -ge 3 ]
	committed > many.txt
	cmp ref.txt many.txt
}

@test "run: a restart before the first checkpoint starts over and stays exactly once" {
	pipeline sum '.checkpointing.interval_ms = 100000'
	run_job p.json
	committed > ref.txt
	rm -rf out ck
	pipeline sum '.checkpointing.interval_ms = 100000 | .failover.failures = [{"vertex": "sink", "subtask": 1, "after_records": 10}]'
	run_job p.json
	status_is 0
	[ "$(events restart | jq -c .checkpoint)" = "null" ]
	committed > got.txt
	cmp ref.txt got.txt
}

@test "run: approximate failover restarts only downstream and reports what it lost" {
	pipeline windows '.vertices[1] = {"id": "map", "operator": "map", "parallelism": 2} | .vertices[2] = {"id": "sink", "operator": "discard_sink", "parallelism": 2} | .edges = [{"source": "src", "target": "map", "partitioner": "rebalance"}, {"source": "map", "target": "sink", "partitioner": "forward"}] | .failover = {"strategy": "approximate", "failures": [{"vertex": "map", "subtask": 1, "after_records": 1000}]}'
	run_job p.json
	status_is 0
	[ "$(events restart | jq -c '[.strategy, .restart]')" = '["approximate",[{"vertex":"map","subtasks":"1"},{"vertex":"sink","subtasks":"1"}]]' ]
	events restart | jq -e 'has("lost_records")'
	events job_finished | jq -e 'has("lost_records")'
}

@test "run: region failover restarts only the failed region" {
	run_job --dir ck "$ROOT/examples/regions.pipeline.json"
	status_is 0
	[ "$(events restart | jq -c .restart)" = '[{"vertex":"a_src","subtasks":"0-1"},{"vertex":"a_sum","subtasks":"0-1"},{"vertex":"a_sink","subtasks":"0"}]' ]
	# b_src ran once: one attempt only
	[ "$(events task_state | jq -r 'select(.vertex == "b_src") | .attempt' | sort -u)" = 1 ]
}

@test "run: the restart limit fails the job" {
	pipeline sum '.failover = {"restart_limit": 1, "failures": [{"vertex": "sum", "subtask": 0, "after_records": 100}, {"vertex": "sum", "subtask": 0, "after_records": 100}]}'
	run_job p.json
	status_is 1
	[ "$(cat err.txt)" = "ckpt-run: the job failed: restart limit 1 reached (injected failure)" ]
	[ "$(events job_finished | jq -r .state)" = FAILED ]
}

@test "run: finishing: checkpoints go on after a source finished, with the new roots" {
	pipeline finishing
	run_job p.json
	status_is 0
	# after "short" finished, checkpoints trigger only "long"
	after=$(jq -c 'select(.event == "task_state" and .vertex == "short" and .state == "FINISHED"), select(.event == "checkpoint_triggered")' events.ndjson |
		sed -n '/FINISHED/,$p' | sed 1d | head -1)
	[ "$(echo "$after" | jq -c .trigger)" = '[{"vertex":"long","subtasks":"0-1"}]' ]
	# a checkpoint of that time records "short" as fully finished, "long" as running
	found=
	for path in $(events checkpoint_completed | jq -r .path); do
		s=$(ckpt-inspect "$path" | jq -c '[.operators[] | select(.id == "short" or .id == "long") | [.fully_finished, .finished_subtasks]]')
		[ "$s" = '[[true,"0"],[false,""]]' ] && found=$path
	done
	[ -n "$found" ]
	# the final checkpoint committed the sink's last transaction: every record is there
	[ "$(committed | wc -l)" -eq 6300 ]
}

@test "run: finishing: the sink waits for a checkpoint after finish() (FLIP-147)" {
	pipeline finishing '.checkpointing.interval_ms = 100000'
	run_job p.json
	status_is 0
	# with a long interval, the checkpoint after the end of data is triggered at once
	[ "$(events checkpoint_completed | wc -l)" -ge 1 ]
	[ "$(committed | wc -l)" -eq 6300 ]
	# tasks finished only after that checkpoint completed
	first=$(jq -c 'select(.event == "checkpoint_completed" or (.event == "task_state" and .state == "FINISHED"))' events.ndjson | head -1 | jq -r .event)
	[ "$first" = checkpoint_completed ]
}

@test "run: finishing: after a failover the final checkpoint is again taken at once" {
	# With a long interval, the checkpoint after the end of data (1) is the first; a directory in the
	# way of its archive fails it (IO_EXCEPTION, no failure tolerated): the job fails over, starts
	# again from nothing and ends its data again. Its final checkpoint (2) must again be triggered at
	# once, not 100 s later: then the deadline's stop-with-savepoint (kind savepoint) would be id 2.
	pipeline finishing '.checkpointing.interval_ms = 100000'
	mkdir -p ck/chk-1.tar
	DEADLINE=20 run_job p.json
	status_is 0
	[ "$(jq -c 'select(.event | IN("checkpoint_triggered", "checkpoint_aborted", "checkpoint_completed", "restart")) | [.event, .id // .attempt, .kind // .reason]' events.ndjson | tr '\n' ' ')" = '["checkpoint_triggered",1,"checkpoint"] ["checkpoint_aborted",1,"IO_EXCEPTION"] ["restart",1,null] ["checkpoint_triggered",2,"checkpoint"] ["checkpoint_completed",2,"checkpoint"] ' ]
	[ "$(events failure | jq -r .reason)" = "Exceeded checkpoint tolerable failure threshold." ]
	# every subtask of the second attempt finished after checkpoint 2 completed
	jq -r 'select(.event == "restart" or (.event == "task_state" and .state == "FINISHED") or .event == "checkpoint_triggered" or .event == "checkpoint_completed") | .event' events.ndjson |
		sed -n '/restart/,$p' | uniq -c | awk '{print $1, $2}' > order.txt
	[ "$(tr '\n' ' ' < order.txt)" = "1 restart 1 checkpoint_triggered 1 checkpoint_completed 6 task_state " ]
	[ "$(events job_finished | jq -r '[.state, .restarts, .checkpoints] | @tsv')" = "FINISHED	1	1" ]
	[ "$(committed | wc -l)" -eq 6300 ]
}

@test "run: finishing: no other checkpoint after one that was every task's final one" {
	# The source's 200 records go out in one call, held there by back-pressure (one 64-byte buffer a
	# channel) from a map of 4 ms a record: the first checkpoint, due after min_pause_ms, reaches the
	# source after its end, and every subtask acknowledges it after the end of its input. It is every
	# subtask's final checkpoint: they close when it completes, and no final checkpoint is triggered
	# after it (min_pause_ms keeps a periodic one away while they close).
	pipeline finishing '.vertices = [{"id": "src", "operator": "source", "parallelism": 1, "params": {"records": 200, "keys": 4}}, {"id": "map", "operator": "map", "parallelism": 1, "params": {"delay_us": 4000}}, {"id": "sink", "operator": "file_sink", "parallelism": 1, "params": {"path": "out"}}] | .edges = [{"source": "src", "target": "map", "partitioner": "forward"}, {"source": "map", "target": "sink", "partitioner": "forward"}] | .network = {"buffer_bytes": 64, "buffers_per_channel": 1, "floating_buffers": 0, "max_buffers_per_channel": 1} | .checkpointing.min_pause_ms = 500'
	run_job p.json
	status_is 0
	[ "$(jq -c 'select(.event | startswith("checkpoint")) | [.event, .id]' events.ndjson | tr '\n' ' ')" = '["checkpoint_triggered",1] ["checkpoint_completed",1] ' ]
	[ "$(events job_finished | jq -r '[.state, .records, .checkpoints] | @tsv')" = "FINISHED	200	1" ]
	[ "$(committed | wc -l)" -eq 200 ]
}

@test "run: finishing: a completion between the look at the mail and the look at closing is still committed" {
	# CKPT_TEST_CLOSE_RACE=1 (test-only, lib/engine/task.c): every ended task waits, after its look at the
	# mail and before its look at closing, until its final checkpoint was marked completed. A task that
	# closed on the completion alone, before its operator was notified of it, left each sink's last
	# transaction pending: a finished job without its last windows. The window operator's finish() emits
	# them just before EndOfData: every sink's final transaction holds records.
	pipeline windows
	CKPT_TEST_CLOSE_RACE=1 run_job p.json
	status_is 0
	[ ! -s err.txt ]
	[ "$(events job_finished | jq -r '[.state, .records] | @tsv')" = "FINISHED	640" ]
	[ "$(ls -A out | grep -c '^\.pending')" -eq 0 ]
	[ "$(committed | wc -l)" -eq 640 ]
}

@test "run: without checkpoints after tasks finish, the last transaction is never committed" {
	pipeline finishing '.checkpointing.after_tasks_finish = false'
	run_job p.json
	status_is 0
	[ "$(cat out/part-* | wc -l)" -lt 6300 ]
	# no checkpoint is triggered once a task finished
	jq -c 'select(.event == "task_state" and .state == "FINISHED"), select(.event == "checkpoint_triggered")' events.ndjson |
		sed -n '/FINISHED/,$p' > after.txt
	! grep -q checkpoint_triggered after.txt
}

@test "run: savepoint without drain, then restore: the output of an uninterrupted run" {
	pipeline windows '.vertices[0].params.delay_us = 50'
	run_job p.json
	committed > ref.txt
	rm -rf out ck
	slow_sources p.json slow.json
	run_job --stop-after-checkpoints 2 slow.json
	status_is 0
	sp=$(events savepoint | jq -r .path)
	[ "$(events savepoint | jq -c '[.drain]')" = '[false]' ]
	[ "$(committed | wc -l)" -lt 640 ]
	# without drain the windows stay in the savepoint
	[ "$(ckpt-inspect "$sp" | jq '.operators[1].entries')" -gt 0 ]
	run_job --restore "$sp" p.json
	status_is 0
	[ "$(events checkpoint_triggered | head -1 | jq .id)" -gt "$(basename "$sp" .tar | sed 's/.*-//')" ]
	committed > got.txt
	cmp ref.txt got.txt
}

@test "run: savepoint with drain fires every window (MAX_WATERMARK) and leaves none" {
	pipeline unbounded
	run_job --drain --stop-after-checkpoints 2 --savepoint sp.tar p.json
	status_is 0
	[ "$(events savepoint | jq -c '[.path, .drain]')" = '["sp.tar",true]' ]
	[ "$(ckpt-inspect sp.tar | jq '.operators[1].entries')" -eq 0 ]
	[ "$(events job_finished | jq -r .state)" = FINISHED ]
	# the last windows fired: the largest committed timestamp is the end of the last window
	[ "$(committed | awk '{print $3}' | sort -n | tail -1)" -ge 49 ]
}

@test "run: SIGTERM stops with a savepoint" {
	pipeline unbounded
	start_job p.json
	await checkpoint_completed
	signal_job TERM
	job_ended 0 FINISHED
	[ "$(events savepoint | jq -r .drain)" = false ]
	[ -f "$(events savepoint | jq -r .path)" ]
}

# A stop-with-savepoint whose trigger finds subtask src:1 closing (the failures[] hook "closing").
declined_stop_pipeline() {
	pipeline sum '.vertices[0].parallelism = 2 | .vertices[0].params.delay_us = 50 | .vertices[2] = {"id": "sink", "operator": "discard_sink", "parallelism": 2} | .checkpointing.interval_ms = 5 | .failover.failures = [{"vertex": "src", "subtask": 1, "closing": true}]'"${1:+ | $1}"
}

@test "run: a declined stop-with-savepoint fails the request, not the job; no savepoint is exit 1" {
	# sources of 1.2 s: the stop is asked after 2 checkpoints, long before they end (the job runs to its end)
	declined_stop_pipeline '.vertices[0].params.delay_us = 200'
	run_job --stop-after-checkpoints 2 --savepoint sp.tar p.json
	status_is 1
	[ "$(cat err.txt)" = "ckpt-run: the job finished without a savepoint: stop-with-savepoint 3 failed (CHECKPOINT_DECLINED_TASK_CLOSING)" ]
	[ "$(events checkpoint_triggered | jq -c 'select(.id == 3) | .kind')" = '"savepoint"' ]
	[ "$(events checkpoint_aborted | jq -r 'select(.id == 3) | .reason')" = CHECKPOINT_DECLINED_TASK_CLOSING ]
	# as Flink: no failover, the job runs on to its end with periodic checkpoints, every record once
	[ "$(events failure | wc -l)" -eq 0 ]
	[ "$(events restart | wc -l)" -eq 0 ]
	[ "$(events checkpoint_completed | jq 'select(.id > 3) | .id' | wc -l)" -ge 1 ]
	[ "$(events job_finished | jq -r '[.state, .records, .restarts] | @tsv')" = "FINISHED	12000	0" ]
	[ "$(events savepoint | wc -l)" -eq 0 ]
	[ ! -e sp.tar ]
}

@test "run: after a declined stop-with-savepoint the job runs on; SIGTERM asks again" {
	declined_stop_pipeline '.vertices[0].params.records = 0'
	# --foreground: timeout passes on every SIGTERM (else it ignores those after the first)
	timeout --foreground 60 ckpt-run --savepoint sp.tar p.json > events.ndjson 2> err.txt &
	pid=$!
	await checkpoint_completed
	kill -TERM "$pid"
	await checkpoint_aborted
	[ "$(events checkpoint_aborted | head -1 | jq -r .reason)" = CHECKPOINT_DECLINED_TASK_CLOSING ]
	[ "$(events checkpoint_aborted | head -1 | jq .id)" = "$(events checkpoint_triggered | jq 'select(.kind == "savepoint") | .id' | head -1)" ]
	# still running: checkpoints go on
	n=$(events checkpoint_completed | wc -l)
	for i in $(seq 1 200); do
		[ "$(events checkpoint_completed | wc -l)" -gt "$n" ] && break
		sleep 0.05
	done
	[ "$(events checkpoint_completed | wc -l)" -gt "$n" ]
	signal_job TERM
	[ "$st" -eq 0 ]
	[ ! -s err.txt ]
	[ "$(events savepoint | jq -r .path)" = sp.tar ]
	[ "$(events restart | wc -l)" -eq 0 ]
	ckpt-inspect -c sp.tar
}

@test "run: a stop-with-savepoint the plan declines is a checkpoint_declined event, tried again after a state change" {
	# The savepoint after checkpoint 1 (-n 1) fails to write (a directory in the way of savepoint-2.tar)
	# once the sources stopped: the job fails over, and the stop is tried again while the restarted
	# subtasks are not running yet. The plan declines it (NOT_ALL_REQUIRED_TASKS_RUNNING) until they all
	# run: each attempt is an event, and an attempt comes only after a change of some task's state.
	pipeline unbounded '.checkpointing.tolerable_failures = 1'
	mkdir -p ck/savepoint-2.tar
	run_job --stop-after-checkpoints 1 p.json
	status_is 0
	[ "$(jq -c 'select(.event | IN("checkpoint_triggered", "checkpoint_aborted", "failure", "restart", "savepoint")) | [.event, .id // .attempt, .kind // .reason]' events.ndjson | tr '\n' ' ')" = '["checkpoint_triggered",1,"checkpoint"] ["checkpoint_triggered",2,"savepoint"] ["checkpoint_aborted",2,"IO_EXCEPTION"] ["failure",null,"Stop-with-savepoint failed"] ["restart",1,null] ["checkpoint_triggered",3,"savepoint"] ["savepoint",3,null] ' ]
	# the first attempt after the restart finds every subtask created, the first source first
	[ "$(jq -c 'select(.event != "task_state")' events.ndjson | sed -n '/"event":"restart"/{n;p}')" = '{"event":"checkpoint_declined","kind":"savepoint","reason":"NOT_ALL_REQUIRED_TASKS_RUNNING","message":"Checkpoint triggering task src (1/2) is not being executed at the moment. Aborting checkpoint."}' ]
	[ "$(events checkpoint_declined | jq -r '[.kind, .reason] | @tsv' | sort -u)" = "savepoint	NOT_ALL_REQUIRED_TASKS_RUNNING" ]
	[ -z "$(events checkpoint_declined | jq -r .message | grep -v -x 'Checkpoint triggering task [a-z]* ([0-9]/[0-9]) is not being executed at the moment\. Aborting checkpoint\.')" ]
	# declined attempts all come between the restart and savepoint 3, each after a restart or a task_state
	jq -r .event events.ndjson | sed -n '/^restart$/,/^checkpoint_triggered$/p' > between.txt
	[ "$(grep -c checkpoint_declined between.txt)" -eq "$(events checkpoint_declined | wc -l)" ]
	jq -r .event events.ndjson | awk '/checkpoint_declined/ && prev != "task_state" && prev != "restart" { bad = 1 } { prev = $0 } END { exit bad }'
	[ "$(events checkpoint_declined | wc -l)" -le "$(grep -c task_state between.txt)" ]
	[ -f ck/savepoint-3.tar ]
}

@test "run: a stop-with-savepoint declined until timeout_ms is one checkpoint_declined event while nothing changes" {
	# "short" finishes at once, "long" runs on (unbounded); without checkpoints after tasks finish the
	# plan declines every trigger once "short" finished. The stop asked for then is declined, and with
	# no task changing state after it, tried no more until timeout_ms fails the job.
	pipeline finishing '.vertices[1].params.records = 0 | .checkpointing.after_tasks_finish = false | .checkpointing.timeout_ms = 300'
	start_job p.json
	# every subtask of long, map and sink running, short finished: no state changes from then on
	for i in $(seq 1 400); do
		[ "$(jq -r 'select(.event == "task_state") | "\(.vertex) \(.subtask) \(.state)"' events.ndjson | grep -c -x -e 'short 0 FINISHED' -e '[a-z]* [01] RUNNING')" -eq 7 ] && break
		sleep 0.05
	done
	signal_job TERM
	job_ended 1 FAILED "ckpt-run: stop-with-savepoint failed: Some tasks of the job have already finished and checkpointing with finished tasks is not enabled."
	[ "$(events checkpoint_declined)" = '{"event":"checkpoint_declined","kind":"savepoint","reason":"NOT_ALL_REQUIRED_TASKS_RUNNING","message":"Some tasks of the job have already finished and checkpointing with finished tasks is not enabled."}' ]
	[ "$(jq -r .event events.ndjson | tail -2 | tr '\n' ' ')" = "checkpoint_declined job_finished " ]
	[ "$(events checkpoint_triggered | jq -r 'select(.kind == "savepoint")' | wc -l)" -eq 0 ]
}

@test "run: a job that finishes before -s stops it has no savepoint: exit 1" {
	pipeline sum '.vertices[0].params.records = 10 | .vertices[0].params.delay_us = 0'
	run_job --stop-after-ms 60000 --savepoint sp.tar p.json
	status_is 1
	[ "$(cat err.txt)" = "ckpt-run: the job finished without a savepoint: it ended before the stop-with-savepoint was triggered" ]
	[ "$(events job_finished | jq -r .state)" = FINISHED ]
	[ ! -e sp.tar ]
}

@test "run: restore from an archive rescaled by ckpt-merge" {
	restore_matches windows . '.vertices[].parallelism = 3' -P 3
}

@test "run: restore at another parallelism redistributes the state as Flink does" {
	restore_matches windows . '.vertices[1].parallelism = 3 | .vertices[2].parallelism = 3'
}

@test "run: state no operator takes is refused unless -a" {
	# unbounded: only the stop ends the job, the savepoint cannot race with its end
	pipeline windows '.vertices[0].params.records = 0'
	run_job --stop-after-checkpoints 1 --savepoint sp.tar p.json
	status_is 0
	pipeline windows '.vertices[1].id = "win2" | .edges[0].target = "win2" | .edges[1].source = "win2"'
	run_job --restore sp.tar p.json
	status_is 1
	[ "$(cat err.txt)" = 'ckpt-run: sp.tar: Failed to rollback to checkpoint/savepoint sp.tar. Cannot map checkpoint/savepoint state for operator win to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.' ]
	run_job --allow-non-restored-state --restore sp.tar p.json
	status_is 0
	run_job --restore nonexistent.tar p.json
	status_is 2
}

@test "run: max_concurrent 1 never has two checkpoints pending" {
	pipeline windows '.checkpointing.interval_ms = 1'
	run_job p.json
	status_is 0
	jq -r 'select(.event | startswith("checkpoint_")) | .event' events.ndjson |
		awk '/triggered/ {p++; if (p > 1) exit 1} /completed|aborted/ {p--}'
}

# coordinator_sleeps ARGS...: ckpt-run ARGS (to events.ndjson) under strace, which without -f follows
# the main thread alone: the coordinator's (the tasks are threads of their own).  Its sleeps that ran
# out (a futex wait with a timeout: ETIMEDOUT) are a count, whatever the machine's speed: at most one
# per 100 ms when each sleep lasts until a real deadline, about one per millisecond for a coordinator
# that spins on a deadline already past.  Fewer than one per 20 ms of the job, which lasts 1 s or more.
# LeakSanitizer does not work under ptrace (the sanitized build): off for this run alone.
coordinator_sleeps() {
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 run sh -c 'timeout -k 5 60 strace -o calls.txt -e trace=futex ckpt-run "$@" > events.ndjson 2> err.txt' sh "$@"
	status_is 0
	n=$(grep -c ETIMEDOUT calls.txt)
	ms=$(events job_finished | jq .duration_ms)
	echo "ckpt-run $*: $n sleeps ran out in $ms ms"
	[ "$ms" -ge 1000 ]
	[ $((n * 20)) -le "$ms" ]
}

@test "run: the coordinator sleeps until its next deadline while a checkpoint or a stop is pending, or a pause" {
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# a map of 50 ms a record behind 20 records queued (buffers of 2 records): the checkpoint, and
	# with -s the stop's savepoint, waits about 1 s for its barrier, long past the next interval
	pipeline windows '.vertices = [{"id": "src", "operator": "source", "parallelism": 1, "params": {"records": 20}}, {"id": "map", "operator": "map", "parallelism": 1, "params": {"delay_us": 50000}}, {"id": "sink", "operator": "discard_sink", "parallelism": 1}] | .edges = [{"source": "src", "target": "map", "partitioner": "forward"}, {"source": "map", "target": "sink", "partitioner": "forward"}] | .checkpointing.interval_ms = 100 | .network.buffer_bytes = 64'
	coordinator_sleeps p.json
	[ "$(events checkpoint_completed | wc -l)" -ge 1 ]
	coordinator_sleeps --stop-after-ms 50 p.json
	[ "$(events savepoint | wc -l)" -eq 1 ]
	# min_pause_ms holds each checkpoint back 500 ms after the start or the last one, long past the interval
	pipeline unbounded '.vertices[0].params.delay_us = 1000 | .checkpointing.interval_ms = 10 | .checkpointing.min_pause_ms = 500'
	coordinator_sleeps --stop-after-checkpoints 2 p.json
	[ "$(events savepoint | wc -l)" -eq 1 ]
}

@test "run: an expired checkpoint is aborted; tolerable failures keep the job running" {
	pipeline sum '.vertices[1] = {"id": "sum", "operator": "map", "parallelism": 2, "params": {"delay_us": 300}} | .checkpointing.timeout_ms = 1 | .checkpointing.tolerable_failures = 1000 | .vertices[0].params.records = 1000'
	run_job p.json
	status_is 0
	[ "$(events checkpoint_aborted | head -1 | jq -r .reason)" = CHECKPOINT_EXPIRED ]
	[ "$(events failure | wc -l)" -eq 0 ]
}

@test "run: checkpoint failures beyond the tolerable number fail the job over" {
	pipeline sum '.vertices[1] = {"id": "sum", "operator": "map", "parallelism": 2, "params": {"delay_us": 300}} | .checkpointing.timeout_ms = 1 | .failover.restart_limit = 1 | .vertices[0].params.records = 1000'
	run_job p.json
	status_is 1
	[ "$(events failure | head -1 | jq -r .reason)" = "Exceeded checkpoint tolerable failure threshold." ]
	[ "$(events restart | head -1 | jq -r .strategy)" = full ]
}

@test "run: back-pressure with small buffers loses nothing" {
	run_job --dir ck "$ROOT/examples/backpressure.pipeline.json"
	status_is 0
	[ "$(events job_finished | jq .records)" -eq 6000 ]
	[ "$(events checkpoint_completed | wc -l)" -ge 1 ]
}

@test "run: broadcast state is in every subtask's snapshot" {
	jq '.checkpointing.retain = 100' "$ROOT/examples/broadcast.pipeline.json" > p.json
	run_job --dir ck p.json
	status_is 0
	path=$(events checkpoint_completed | head -1 | jq -r .path)
	[ "$(ckpt-inspect "$path" | jq -c '.operators[] | select(.id == "enrich") | .states[0] | [.name, .mode]')" = '["rules","broadcast"]' ]
}

@test "run: SIGINT cancels the job" {
	pipeline unbounded
	start_job p.json
	await '"state":"RUNNING"'
	signal_job INT
	job_ended 1 CANCELED "ckpt-run: the job was cancelled"
	[ "$(events savepoint | wc -l)" -eq 0 ]
}

@test "run: the pipeline from standard input, events indented with -p" {
	pipeline windows 'del(.checkpointing) | .vertices[0].params.records = 100'
	run sh -c 'timeout 60 ckpt-run -p - < p.json'
	status_is 0
	[ "${lines[0]}" = "{" ]
	echo "$output" | jq -s -e 'map(select(.event == "job_finished")) | length == 1'
}
