#!/usr/bin/env bats
# ckpt-run: unaligned checkpoints (FLIP-76): in-flight data persisted and restored, the aligned timeout.

load helper
load unaligned-helper

export DEADLINE=120 # run_job's deadline: these pipelines run under back-pressure

@test "unaligned: exactly once under many failures, in-flight data restored" {
	exactly_once_under_failures . 3
}

@test "unaligned: exactly once under many failures with the aligned timeout" {
	exactly_once_under_failures '.checkpointing.aligned_timeout_ms = 1' 5
}

@test "unaligned: under back-pressure every checkpoint persists in-flight data" {
	ua_pipeline
	run_job p.json
	status_is 0
	# all but the checkpoints after the sources ended caught data in flight
	[ "$(events checkpoint_completed | jq -s '[.[] | select(.persisted_bytes > 0)] | length')" -ge 3 ]
	[ "$(events checkpoint_completed | jq -s '[.[] | .alignment_ms] | max')" -le 5 ]
}

@test "unaligned: a long aligned timeout keeps checkpoints aligned: nothing persisted" {
	ua_pipeline '.checkpointing.aligned_timeout_ms = 100000'
	run_job p.json
	status_is 0
	[ "$(events checkpoint_completed | wc -l)" -ge 3 ]
	[ "$(events checkpoint_completed | jq -s '[.[] | .persisted_bytes] | add')" -eq 0 ]
}

@test "unaligned: the aligned timeout switches to unaligned when its timer fires, with no barrier coming" {
	# slow takes 5 ms a record and has up to 100 records queued on each input: aligned, a checkpoint
	# waits hundreds of milliseconds for the barriers behind them; the 20 ms timer switches it
	cat > p.json <<'EOF'
{"vertices": [
  {"id": "src", "operator": "source", "parallelism": 2, "params": {"records": 150, "keys": 50}},
  {"id": "slow", "operator": "map", "parallelism": 2, "params": {"delay_us": 5000}},
  {"id": "sink", "operator": "discard_sink", "parallelism": 2}],
 "edges": [{"source": "src", "target": "slow", "partitioner": "rebalance"},
           {"source": "slow", "target": "sink", "partitioner": "rebalance"}],
 "checkpointing": {"interval_ms": 50, "dir": "ck", "mode": "unaligned", "aligned_timeout_ms": 20},
 "network": {"buffer_bytes": 256}}
EOF
	run_job p.json
	status_is 0
	[ "$(events job_finished | jq .records)" -eq 300 ]
	[ "$(events checkpoint_completed | jq -s '[.[] | select(.persisted_bytes > 0)] | length')" -ge 5 ]
	# the median alignment of the switched checkpoints: about the timeout, not the queue's 300 ms and more
	[ "$(events checkpoint_completed | jq -s '[.[] | select(.persisted_bytes > 0) | .alignment_ms] | sort | .[length / 2 | floor]')" -le 100 ]
}

@test "unaligned: channel state in the archive, shown by ckpt-inspect" {
	ua_pipeline
	run_job p.json
	status_is 0
	path=$(events checkpoint_completed | jq -s -r '[.[] | select(.persisted_bytes > 0)][0].path')
	bytes=$(events checkpoint_completed | jq -s -r '[.[] | select(.persisted_bytes > 0)][0].persisted_bytes')
	run ckpt-inspect -c "$path"
	status_is 0
	run ckpt-inspect "$path"
	status_is 0
	[ "$(echo "$output" | jq '[.operators[].in_flight_bytes] | add')" -eq "$bytes" ]
	run ckpt-inspect -a "$path"
	status_is 0
	# input state is addressed by gate and channel, output state by partition and subpartition
	echo "$output" | jq -e '[.operators[].subtasks[].channel_state // empty | .output[]?] | length > 0'
	echo "$output" | jq -e '[.operators[].subtasks[].channel_state // empty | .output[]? | keys == ["data","partition","subpartition"]] | all'
	echo "$output" | jq -e '[.operators[].subtasks[].channel_state // empty | .input[]? | keys == ["channel","data","gate"]] | all'
	# the sources have no input channels; what they emitted but nobody read is their output state
	echo "$output" | jq -e '[.operators[] | select(.id == "src") | .subtasks[].channel_state // empty | .input[]?] | length == 0'
}

@test "unaligned: restore of an unaligned checkpoint at the same parallelism replays its in-flight data" {
	ua_pipeline '.vertices[0].params.records = 60000'
	run_job p.json
	status_is 0
	per_key > ref.txt
	rm -rf out ck
	# cancelled once three checkpoints caught data in flight: their sink transactions stay pending
	ckpt-run p.json > events.ndjson 2> err.txt &
	pid=$!
	while [ "$(jq -c 'select(.event == "checkpoint_completed" and .persisted_bytes > 0)' events.ndjson | wc -l)" -lt 3 ]; do
		kill -0 $pid
		sleep 0.05
	done
	kill -INT $pid
	wait $pid || true
	last=$(events checkpoint_completed | tail -1)
	[ "$(echo "$last" | jq .persisted_bytes)" -gt 0 ]
	run_job --restore "$(echo "$last" | jq -r .path)" p.json
	status_is 0
	per_key > got.txt
	cmp ref.txt got.txt
}

@test "unaligned: ckpt-merge refuses to rescale a checkpoint holding in-flight data" {
	ua_pipeline
	run_job p.json
	status_is 0
	path=$(events checkpoint_completed | jq -s -r '[.[] | select(.persisted_bytes > 0)][0].path')
	run ckpt-merge -P 3 "$path"
	status_is 1
	[[ "$output" =~ ^"ckpt-merge: $path: operator "[a-z]+" holds in-flight data of an unaligned checkpoint and cannot be rescaled from 2 to 3: take a savepoint and rescale from that"$ ]]
	# at the same parallelism it stays with its subtask
	run ckpt-merge -P 2 "$path"
	status_is 0
	[ "$(echo "$output" | jq '[.operators[].subtasks[].channel_state // empty | (.input[]?, .output[]?)] | length')" -gt 0 ]
}

@test "unaligned: tasks finish: checkpoints after tasks finish still work, every record committed" {
	jq '.checkpointing.mode = "unaligned"' "$DATA/run/finishing.json" > p.json
	run_job p.json
	status_is 0
	[ "$(events job_finished | jq -r .state)" = FINISHED ]
	[ "$(events checkpoint_triggered | jq -c .trigger | grep -c '^\[{"vertex":"long"')" -ge 1 ]
	[ "$(cat out/part-* | wc -l)" -eq 6300 ]
}

@test "unaligned: savepoints stay aligned" {
	ua_pipeline '.vertices[0].params.records = 0'
	run_job --stop-after-checkpoints 3 p.json
	status_is 0
	[ "$(events savepoint | wc -l)" -eq 1 ]
	id=$(events savepoint | jq .id)
	[ "$(events checkpoint_completed | jq "select(.id == $id) | .persisted_bytes")" -eq 0 ]
}

@test "unaligned: approximate failover is refused with Flink's message" {
	ua_pipeline '.failover.strategy = "approximate"'
	run ckpt-run p.json
	status_is 2
	[ "$output" = "ckpt-run: p.json:1:536: Approximate Local Recovery and Unaligned Checkpoint can not be used together yet" ]
}
