#!/usr/bin/env bats
# ckpt-run batch mode: blocking partitions on disk, the job event log, recovery after kill -9 (issue 8).

load helper
load batch-helper

EVENTS=run.out # run_job's events (first.out, second.out for the runs of kill_recover)

# The output of an uninterrupted batch run, in ref.txt.
reference() {
	run_job p.json
	status_is 0
	output_of > ref.txt
	counts run > ref-counts.txt
	rm -rf log parts out
}

@test "batch: region by region, partitions on disk, output of a pipelined run" {
	jq '.vertices[2] = {"id": "sum", "operator": "filter", "parallelism": 2, "params": {"modulo": 3}}' \
		"$DATA/batch/batch.json" > p.json
	run_job p.json
	status_is 0
	[ "$(ls parts | tr '\n' ' ')" = "map.0 map.1 map.2 src.0 src.1 src.2 sum.0 sum.1 " ]
	# a consumer starts only after every producer it reads from finished
	run jq -sc '[.[] | select(.event == "task_state") | "\(.vertex):\(.subtask):\(.state)"]
		| (index("map:0:RUNNING") > index("src:0:FINISHED")) and
		  (index("sum:0:RUNNING") > ([index("map:0:FINISHED"), index("map:1:FINISHED"), index("map:2:FINISHED")] | max))' run.out
	output_is true
	output_of > batch.txt
	[ "$(wc -l < batch.txt)" -gt 100 ]
	pipelined_run
	diff batch.txt <(output_of)
}

@test "batch: the job event log: initialized, finished with partitions and snapshots, cut per vertex" {
	batch_pipeline
	run_job p.json
	status_is 0
	[ "$(ls log | tr '\n' ' ')" = "events.0 events.1 events.2 events.3 " ]
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertex_initialized\") | .payload"'
	output_is '{"vertex":"src","parallelism":3,"inputs":[]}
{"vertex":"map","parallelism":3,"inputs":[{"vertex":"src","distribution":"pointwise","partition":"blocking"}]}
{"vertex":"sum","parallelism":2,"inputs":[{"vertex":"map","distribution":"all_to_all","partition":"blocking"}]}
{"vertex":"sink","parallelism":2,"inputs":[{"vertex":"sum","distribution":"pointwise","partition":"blocking"}]}'
	run sh -c 'ckpt-replay -e log.0 2>/dev/null; ckpt-replay -e log | jq -c "select(.type == \"vertex_finished\" and .payload.vertex == \"map\" and .payload.subtask == 1) | .payload | [.partitions, .attempt, .metrics.records_in, .snapshots.shuffle.incremental]"'
	output_is '[["map:1"],1,600,true]'
	# the last finished event of the source carries its split coordinator's state
	run sh -c 'ckpt-replay log | jq -c .coordinators'
	output_is '{"src":{"state":"finished_splits=0-2","subtask_reset":""}}'
	# a fresh run does not write over the log of another
	run_job p.json
	status_is 2
	[ "$(cat err.txt)" = "ckpt-run: log: the job event log is not empty (recover with --recover, or remove it)" ]
}

@test "batch: kill -9 before, during and after each stage, then -R: the plan's subtasks run again, same output" {
	batch_pipeline
	reference
	# 1: the first subtask started; 5: sources partly done; 8, 14: at the end of a stage; 12, 17: in the middle of one;
	# 19: the last subtask running; 20: every subtask finished, the job not yet
	for k in 1 5 8 12 14 17 19 20; do
		kill_recover "$k"
	done
}

@test "batch: recovery after recovery, and -R of a finished job runs nothing" {
	batch_pipeline
	reference
	kill_recover 6
	rm -rf out/.inprogress*
	EVENTS=third.out run_job --recover log p.json
	status_is 0
	[ -z "$(started third)" ]
	diff ref.txt <(output_of)
	# job_finished counts the whole job: what the kept subtasks did comes from the log
	run counts third
	output_is '[1800,1800,0]'
	diff ref-counts.txt <(counts second)
}

@test "batch: a log write torn by the kill is cut off on recovery" {
	batch_pipeline
	reference
	tear() {
		local last
		last=$(ls log | sort -t. -k2 -n | tail -1)
		truncate -s -5 "log/$last"
	}
	kill_recover 11 tear
	jq -e '.log.torn_bytes > 0' plan.json
	jq -se 'map(select(.event == "recovered"))[0].plan.log.torn_bytes > 0' second.out
	kill_recover 6 tear
	jq -e '.log.torn_bytes > 0' plan.json
}

@test "batch: a partition file deleted before recovery: its producer and what depends on it run again" {
	# and src:1, whose partition map:1 reads: all its consumers had finished, so it was OPTIONAL,
	# a partition Flink's recovery does not keep track of (ckpt-replay's plan, as Flink's recoverPartitions)
	batch_pipeline
	reference
	map1_lost 13
}

@test "batch: a damaged partition file counts as lost" {
	batch_pipeline
	reference
	rm -rf log parts out
	run_job -K 13 p.json
	status_is 137
	printf 'X' | dd of=parts/map.1 bs=1 seek=100 conv=notrunc 2>/dev/null
	EVENTS=second.out run_job --recover log p.json
	status_is 0
	run jq -sc 'map(select(.event == "recovered"))[0].plan.lost_partitions' second.out
	output_is '["map:1"]'
	map1_region_reran
	diff ref.txt <(output_of)
}

@test "batch: a partition file whose consumers all finished is not needed again" {
	batch_pipeline
	reference
	rmparts() { rm parts/map.1 parts/src.0; }
	# 18 events: every subtask but a sink finished (the last event is a sink finishing)
	kill_recover 18 rmparts
	run jq -c '.lost_partitions' plan.json
	output_is '[]'
	started second > again.txt
	[ -z "$(grep -v '^sink:[01]$' again.txt)" ]
	[ -n "$(started second)" ]
}

@test "batch: a log corrupted in the middle: recovery refuses with the place named" {
	batch_pipeline
	run_job -K 16 p.json
	status_is 137
	printf 'X' | dd of=log/events.1 bs=1 seek=20 conv=notrunc 2>/dev/null
	run_job --recover log p.json
	status_is 1
	grep -q '^ckpt-run: log/events.1: offset 0: checksum mismatch' err.txt || { cat err.txt; false; }
	[ "$(wc -l < err.txt)" -eq 1 ]
	[ ! -s run.out ]
}

@test "batch: a failure in batch mode restarts its region only, logged as vertices_reset" {
	batch_pipeline '.failover = {"strategy": "region", "failures": [{"vertex": "map", "subtask": 2, "after_records": 100}]}'
	reference
	run_job p.json
	status_is 0
	run jq -c 'select(.event == "restart") | .restart' run.out
	output_is '[{"vertex":"map","subtasks":"2"},{"vertex":"sum","subtasks":"0-1"},{"vertex":"sink","subtasks":"0-1"}]'
	# only vertices already initialized are reset in the log (sum and sink are not yet): the log replays
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertices_reset\") | .payload"'
	output_is '{"subtasks":[{"vertex":"map","subtask":2}]}'
	run sh -c 'ckpt-replay log | jq -c "[.vertices[] | .finished]"'
	output_is '["0-2","0-2","0-1","0-1"]'
	diff ref.txt <(output_of)
}

@test "batch: a source whose coordinator cannot snapshot in batch mode: Flink's rules" {
	batch_pipeline '.vertices[0].params.batch_snapshot = false'
	reference
	GRAPH=$DATA/batch/graph.json
	# unfinished: every subtask of the source runs again, finished ones too
	kill_recover 5
	run jq -c '.vertices[0]' plan.json
	output_is '{"vertex":"src","parallelism":3,"finished":"","reset":"0-2"}'
	# finished: kept, and no coordinator state is logged for it
	kill_recover 12
	run jq -c '[.vertices[0].reset, .coordinators]' plan.json
	output_is '["",{}]'
}

@test "batch: bad settings" {
	# src -> map -> sum all pipelined, sum -> sink blocking, and map -> sink pipelined: sink waits for its own region
	batch_pipeline '.edges[0].partition = "pipelined" | .edges[1].partition = "pipelined"
		| .edges += [{"source": "map", "target": "sink", "partitioner": "rebalance", "partition": "pipelined"}]'
	run_job p.json
	status_is 2
	grep -q '^ckpt-run: p.json:[0-9]*:[0-9]*: edge 2: a blocking edge inside a pipelined region (its ends are joined by pipelined edges)$' err.txt || { cat err.txt; false; }
	batch_pipeline '.checkpointing = {"interval_ms": 100}'
	run_job p.json
	status_is 2
	grep -q 'batch mode (blocking edges) runs without checkpoints' err.txt
	batch_pipeline '.batch.logs = "x"'
	run_job p.json
	status_is 2
	grep -q 'unknown' err.txt
	batch_pipeline
	run_job --recover nolog p.json
	status_is 2
	grep -q '^ckpt-run: nolog' err.txt
	run_job --stop-after-checkpoints 1 p.json
	status_is 1
	[ "$(cat err.txt)" = "ckpt-run: batch mode takes no snapshot options (--restore, --savepoint, --stop-after-ms, --stop-after-checkpoints, --drain)" ]
	jq '.edges[].partition = "pipelined" | del(.batch)' p.json > s.json
	run_job -L log s.json
	status_is 2
	[ "$(cat err.txt)" = "ckpt-run: -L, --recover and -B need a pipeline in batch mode (blocking edges)" ]
}

@test "batch: the example killed with kill -9 in the middle of a stage, then -R" {
	# the map slowed too (0.4 s a subtask), so that the kill lands in its stage, not after the job
	jq '.batch.log = "log" | .batch.partitions = "parts" | .vertices[3].params.path = "out"
		| .vertices[1].params.delay_us = 100' "$ROOT/examples/batch.pipeline.json" > p.json
	jq '.vertices[0,1].params.delay_us = 0' p.json > fast.json
	run timeout 60 ckpt-run fast.json
	status_is 0
	output_of > ref.txt
	rm -rf log parts out
	ckpt-run p.json > first.out &
	pid=$! # ckpt-run itself, not a timeout around it: it is the one killed
	# killed once a map subtask is running: sources are done, map is at work
	timeout 30 sh -c 'until grep -q "\"map\",\"subtask\":[0-9],\"state\":\"RUNNING\"" first.out; do sleep 0.01; done'
	kill -9 "$pid"
	wait "$pid" || true
	! grep -q job_finished first.out
	avail
	ckpt-replay --available avail.json -g "$DATA/batch/graph-snap.json" log > plan.json
	EVENTS=second.out run_job --recover log p.json
	status_is 0
	diff <(planned) <(started second)
	! grep -q '"src"' <(started second)
	diff ref.txt <(output_of)
}

# mixed: src -forward, pipelined-> map -hash, blocking-> sum -forward, pipelined-> sink; its job graph in g.json
mixed() {
	batch_pipeline ".edges[0].partition = \"pipelined\" | .edges[2].partition = \"pipelined\" | ${1:-.}"
	jq '.edges[0].partition = "pipelined" | .edges[2].partition = "pipelined"' "$DATA/batch/graph-snap.json" > g.json
}

@test "batch: blocking and pipelined edges mixed: pipelined regions, one after another" {
	mixed
	run_job p.json
	status_is 0
	# only producers over a blocking edge write partitions
	[ "$(ls parts | tr '\n' ' ')" = "map.0 map.1 map.2 " ]
	# region {src:i, map:i} runs together; {sum:j, sink:j} after every map finished
	run jq -sc '[.[] | select(.event == "task_state") | "\(.vertex):\(.subtask):\(.state)"]
		| (index("map:2:RUNNING") < index("src:0:FINISHED")) and
		  (index("sum:0:RUNNING") > ([index("map:0:FINISHED"), index("map:1:FINISHED"), index("map:2:FINISHED")] | max)) and
		  (index("sink:1:RUNNING") < index("sum:1:FINISHED"))' run.out
	output_is true
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertex_initialized\") | .payload.inputs"'
	output_is '[]
[{"vertex":"src","distribution":"pointwise","partition":"pipelined"}]
[{"vertex":"map","distribution":"all_to_all","partition":"blocking"}]
[{"vertex":"sum","distribution":"pointwise","partition":"pipelined"}]'
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertex_finished\" and .payload.subtask == 1) | [.payload.vertex, .payload.partitions]"'
	output_is '["src",null]
["map",["map:1"]]
["sum",null]
["sink",null]'
	# the same records as the all-blocking run
	output_of > mixed.txt
	rm -rf log parts out
	jq '.edges[].partition = "blocking"' p.json > b.json
	run_job b.json
	status_is 0
	diff mixed.txt <(output_of)
	# and as the pipelined run, as far as it is deterministic: as many records, the same final sum per key
	# (the running sums depend on the order in which the map subtasks' records meet)
	pipelined_run
	[ "$(wc -l < mixed.txt)" -eq 1800 ]
	[ "$(output_of | wc -l)" -eq 1800 ]
	finals() { awk '$2 > m[$1] { m[$1] = $2 } END { for (k in m) print k, m[k] }' | sort; }
	diff <(finals < mixed.txt) <(output_of | finals)
	[ "$(finals < mixed.txt | wc -l)" -eq 20 ]
}

@test "batch: an all-to-all pipelined edge inside a region: the records of a pipelined run" {
	batch_pipeline '.vertices[1] = {"id": "map", "operator": "filter", "parallelism": 2, "params": {"modulo": 3}}
		| .edges[0] = {"source": "src", "target": "map", "partitioner": "rebalance", "partition": "pipelined"}
		| .vertices[2] = {"id": "sum", "operator": "filter", "parallelism": 2, "params": {"modulo": 5}}
		| .edges[2].partition = "pipelined"'
	# (a keyed sum behind it would see its records in a different order in every run)
	run_job p.json
	status_is 0
	[ "$(ls parts | tr '\n' ' ')" = "map.0 map.1 " ]
	output_of > mixed.txt
	[ "$(wc -l < mixed.txt)" -eq 1027 ]
	pipelined_run
	diff mixed.txt <(output_of)
}

@test "batch: mixed edges: a failure restarts the failed subtask's pipelined region and what it feeds" {
	mixed '.failover = {"strategy": "region", "failures": [{"vertex": "map", "subtask": 1, "after_records": 100}]}'
	reference
	run_job p.json
	status_is 0
	run jq -c 'select(.event == "restart") | .restart' run.out
	output_is '[{"vertex":"src","subtasks":"1"},{"vertex":"map","subtasks":"1"},{"vertex":"sum","subtasks":"0-1"},{"vertex":"sink","subtasks":"0-1"}]'
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertices_reset\") | .payload"'
	output_is '{"subtasks":[{"vertex":"src","subtask":1},{"vertex":"map","subtask":1}]}'
	diff ref.txt <(output_of)
	# approximate failover restarts whole pipelined regions as well (they share their queues)
	mixed '.failover = {"strategy": "approximate", "failures": [{"vertex": "map", "subtask": 1, "after_records": 100}]}'
	rm -rf log parts out
	run_job p.json
	status_is 0
	run jq -c 'select(.event == "restart") | .restart' run.out
	output_is '[{"vertex":"src","subtasks":"1"},{"vertex":"map","subtasks":"1"},{"vertex":"sum","subtasks":"0-1"},{"vertex":"sink","subtasks":"0-1"}]'
	diff ref.txt <(output_of)
}

@test "batch: mixed edges killed with kill -9 at every point, then -R: the plan's subtasks run again, same output" {
	mixed
	reference
	for k in 1 5 8 11 14 17 19 20; do
		GRAPH=g.json kill_recover "$k"
	done
	# a finished source whose pipelined consumer had not finished runs again with it (its output was not kept)
	rm -rf log parts out
	EVENTS=first.out run_job -K 8 p.json
	avail
	ckpt-replay --available avail.json -g g.json log > plan.json
	run jq -c '[.vertices[] | select(.vertex == "src") | .reset]' plan.json
	output_is '["0-2"]'
}

@test "batch: mixed edges: a partition deleted before recovery re-runs its producer's region" {
	mixed
	reference
	GRAPH=g.json map1_lost 14
}

@test "batch: mixed edges the regions cannot run" {
	batch_pipeline '.edges[2].partition = "pipelined" | .edges += [{"source": "map", "target": "sink", "partitioner": "rebalance", "partition": "pipelined"}]'
	run_job p.json
	status_is 2
	grep -q '^ckpt-run: p.json:[0-9]*:[0-9]*: edge 1: a blocking edge inside a pipelined region (its ends are joined by pipelined edges)$' err.txt || { cat err.txt; false; }
	# Flink's cycle of regions (SchedulingPipelinedRegionComputeUtilTest): {v1, v3, v4} and {v2} wait for each other
	bad 2 "ckpt-run: $DATA/batch/region-cycle.json:5:12: edge 0: pipelined regions wait for each other's blocking partitions" ckpt-run "$DATA/batch/region-cycle.json"
	batch_pipeline '.edges[0].partition = "pipelined_approximate"'
	run_job p.json
	status_is 2
	grep -q '^ckpt-run: p.json:[0-9]*:[0-9]*: edge 0: batch mode takes blocking, pipelined or pipelined_bounded edges$' err.txt || { cat err.txt; false; }
}

@test "batch: vertex ids unsafe in file names are percent-encoded in partition names" {
	batch_pipeline '.vertices[0].id = "a/b" | .vertices[1].id = ".." | .vertices[2].id = "s%um:1"
		| .edges[0].source = "a/b" | .edges[0].target = ".." | .edges[1].source = ".." | .edges[1].target = "s%um:1"
		| .edges[2].source = "s%um:1"'
	reference
	[ "$(wc -l < ref.txt)" -eq 1800 ]
	run_job p.json
	status_is 0
	[ "$(ls parts | tr '\n' ' ')" = "%2E%2E.0 %2E%2E.1 %2E%2E.2 a%2Fb.0 a%2Fb.1 a%2Fb.2 s%25um%3A1.0 s%25um%3A1.1 " ]
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertex_finished\" and .payload.subtask == 1) | .payload.partitions"'
	output_is '["a/b:1"]
["..:1"]
["s%um:1:1"]
null'
	# recovery finds them: the one deleted is the one lost
	rm -rf log parts out
	EVENTS=first.out run_job -K 13 p.json
	status_is 137
	rm 'parts/%2E%2E.1'
	EVENTS=second.out run_job --recover log p.json
	status_is 0
	run jq -sc 'map(select(.event == "recovered"))[0].plan.lost_partitions' second.out
	output_is '["..:1"]'
	diff ref.txt <(output_of)
	# an id whose encoded name would not fit a file name
	long=$(printf 'x%.0s' $(seq 201))
	batch_pipeline ".vertices[1].id = \"$long\" | .edges[0].target = \"$long\" | .edges[1].source = \"$long\""
	rm -rf log parts out
	run_job p.json
	status_is 2
	[ "$(cat err.txt)" = "ckpt-run: vertex id \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\" is too long for a partition file name" ]
}

@test "batch: a partition vanishing while the job runs reruns its producer (and what depends on it), logged as vertices_reset" {
	batch_pipeline
	reference
	# sum:1's partition vanishes before sink:1 reads it: sink:1 fails, as on Flink's PartitionNotFoundException
	batch_pipeline '.failover = {"failures": [{"vertex": "sum", "subtask": 1, "lose_partition": true}]}'
	run_job p.json
	status_is 0
	run jq -c 'select(.event == "failure" or .event == "restart") | del(.event)' run.out
	output_is '{"task":{"vertex":"sink","subtask":1},"reason":"partition sum:1 not found"}
{"strategy":"region","restart":[{"vertex":"sum","subtasks":"1"},{"vertex":"sink","subtasks":"1"}],"attempt":1,"checkpoint":null}'
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertices_reset\") | .payload"'
	output_is '{"subtasks":[{"vertex":"sum","subtask":1},{"vertex":"sink","subtask":1}]}'
	run sh -c 'ckpt-replay -e log | jq -c "select(.type == \"vertex_finished\" and .payload.vertex == \"sum\" and .payload.subtask == 1) | .payload.attempt"'
	output_is '1
2'
	diff ref.txt <(output_of)
	diff ref-counts.txt <(counts run | sed 's/,1]$/,0]/')
	# map:1's, read by both sum subtasks: whichever reads it first fails; the restart set is the same
	batch_pipeline '.failover = {"failures": [{"vertex": "map", "subtask": 1, "lose_partition": true}]}'
	rm -rf log parts out
	run_job p.json
	status_is 0
	run jq -c 'select(.event == "failure") | .reason' run.out
	output_is '"partition map:1 not found"'
	run jq -c 'select(.event == "restart") | .restart' run.out
	output_is '[{"vertex":"map","subtasks":"1"},{"vertex":"sum","subtasks":"0-1"},{"vertex":"sink","subtasks":"0-1"}]'
	diff ref.txt <(output_of)
	# it counts as a restart
	batch_pipeline '.failover = {"restart_limit": 0, "failures": [{"vertex": "sum", "subtask": 1, "lose_partition": true}]}'
	rm -rf log parts out
	run_job p.json
	status_is 1
	[ "$(cat err.txt)" = "ckpt-run: the job failed: restart limit 0 reached (partition sum:1 not found)" ]
	# only for a vertex that writes a blocking partition
	batch_pipeline '.failover = {"failures": [{"vertex": "sink", "lose_partition": true}]}'
	run_job p.json
	status_is 2
	grep -q '^ckpt-run: p.json:[0-9]*:[0-9]*: failure 0: vertex "sink" writes no blocking partition (lose_partition is for batch mode)$' err.txt || { cat err.txt; false; }
}

# auto: sum and sink of parallelism "auto" (sink at most 4), 10000 input bytes per subtask
auto() {
	batch_pipeline '.vertices[2].parallelism = "auto" | .vertices[3].parallelism = "auto" | .vertices[3].max_parallelism = 4
		| .edges[2].partitioner = "rebalance" | .batch.auto_parallelism = {"bytes_per_task": 10000}'
}

# The parallelism each vertex_initialized of the log records, "vertex=N" a line.
initialized() {
	ckpt-replay -e log | jq -r 'select(.type == "vertex_initialized") | .payload | "\(.vertex)=\(.parallelism)"'
}

@test "batch: parallelism \"auto\" decided from the bytes the producers wrote, recorded in vertex_initialized" {
	batch_pipeline '.edges[2].partitioner = "rebalance"'
	reference
	auto
	run_job p.json
	status_is 0
	# 1800 records of 24 bytes into sum and into sink: 43200 bytes, 5 subtasks of 10000; sink bounded by 4
	run initialized
	output_is 'src=3
map=3
sum=5
sink=4'
	[ "$(ls parts | tr '\n' ' ')" = "map.0 map.1 map.2 src.0 src.1 src.2 sum.0 sum.1 sum.2 sum.3 sum.4 " ]
	[ "$(ls out | tr '\n' ' ')" = "part-0-0 part-1-0 part-2-0 part-3-0 " ]
	diff ref.txt <(output_of)
	run counts run
	output_is '[1800,1800,0]'
	# the bounds: min_parallelism, and the max_parallelism setting
	for s in '{"bytes_per_task": 1000000};1;1' '{"bytes_per_task": 1000000, "min_parallelism": 2};2;2' \
		 '{"bytes_per_task": 1, "max_parallelism": 3};3;3' '{"bytes_per_task": 1};128;4'; do
		IFS=';' read -r cfg psum psink <<< "$s"
		auto
		jq ".batch.auto_parallelism = $cfg" p.json > q.json
		rm -rf log parts out
		run_job q.json
		status_is 0
		[ "$(initialized | tail -2 | tr '\n' ' ')" = "sum=$psum sink=$psink " ] || { initialized; false; }
		diff ref.txt <(output_of)
	done
}

@test "batch: recovery keeps the auto parallelism the log recorded, and decides the others anew" {
	auto
	reference
	# killed after the first sum subtask finished: sum was initialized with 5, sink not yet
	EVENTS=first.out run_job -K 18 p.json
	status_is 137
	# a pipeline whose sum cannot have the 5 subtasks the log recorded is another job
	jq '.vertices[2].max_parallelism = 4' p.json > q.json
	EVENTS=wrong.out run_job --recover log q.json
	status_is 2
	[ "$(cat err.txt)" = 'ckpt-run: log: the log does not belong to this pipeline (vertex "sum")' ]
	# with 20000 bytes per subtask now, sum would be 3
	jq '.batch.auto_parallelism.bytes_per_task = 20000' p.json > q.json
	EVENTS=second.out run_job --recover log q.json
	status_is 0
	run jq -sc 'map(select(.event == "recovered"))[0].plan.vertices | map([.vertex, .parallelism])' second.out
	output_is '[["src",3],["map",3],["sum",5]]'
	run initialized
	output_is 'src=3
map=3
sum=5
sink=3'
	[ "$(started second | grep -c '^sum:')" -eq 4 ]
	[ "$(started second | grep '^sink:' | tr '\n' ' ')" = "sink:0 sink:1 sink:2 " ]
	diff ref.txt <(output_of)
	run counts second
	output_is '[1800,1800,0]'
}

# refused_as FILTER PATTERN: p.json changed by the jq filter FILTER (to q.json) is refused: exit 2, and
# err.txt has a line grep PATTERN finds.
refused_as() {
	jq "$1" p.json > q.json
	run_job q.json
	status_is 2 || return
	grep -q "$2" err.txt || { cat err.txt; false; }
}

@test "batch: parallelism \"auto\" where it cannot be" {
	batch_pipeline '.vertices[2].parallelism = "auto"'
	run_job p.json
	status_is 2
	grep -q '^ckpt-run: p.json:[0-9]*:[0-9]*: edge 2: a vertex of parallelism "auto" ("sum") takes blocking edges with the hash, rebalance or broadcast partitioner only$' err.txt || { cat err.txt; false; }
	batch_pipeline '.vertices[0].parallelism = "auto" | .edges[0].partitioner = "rebalance"'
	run_job p.json
	status_is 2
	grep -q '^ckpt-run: p.json:[0-9]*:[0-9]*: vertex "src": a source.s parallelism cannot be "auto" (it is decided from the input)$' err.txt || { cat err.txt; false; }
	auto
	refused_as '.batch.auto_parallelism = {"min_parallelism": 9, "max_parallelism": 8}' \
		'^ckpt-run: q.json:[0-9]*:[0-9]*: batch: auto_parallelism: min_parallelism 9 is above max_parallelism 8$'
	jq '.batch.auto_parallelism = {"bytes_per_task": 0}' p.json > q.json
	run_job q.json
	status_is 2
	refused_as '.vertices[2].parallelism = "many"' \
		'^ckpt-run: q.json:[0-9]*:[0-9]*: vertex "sum"'
	# a pipelined run has no parallelism to decide
	refused_as '.edges[].partition = "pipelined" | del(.batch)' \
		'edge 1: a vertex of parallelism "auto" ("sum") takes blocking edges'
}

@test "batch: mixed edges: after recovery, a restart touching a source that could not snapshot restarts it whole, with its regions" {
	mixed '.vertices[0].params.batch_snapshot = false'
	reference
	# killed when src and map, one region per subtask, all finished; sum not started
	EVENTS=first.out run_job -K 12 p.json
	status_is 137
	cp -r log log.first && ls -l parts >parts.first
	# then map:1's partition vanishes: map:1 and its region src:1 run again, so all of src (unrecovered), so all of map
	jq '.failover = {"failures": [{"vertex": "map", "subtask": 1, "lose_partition": true}]}' p.json > q.json
	EVENTS=second.out run_job --recover log q.json
	status_is 0
	run jq -sc 'map(select(.event == "recovered"))[0].plan.vertices | map(.finished)' second.out
	# (once, under load in CI, both were "": what the first run left is printed if it happens again)
	[ "$output" = '["0-2","0-2"]' ] || {
		echo "recovered finished: $output"; echo "first run:"; cat first.out; echo "its log:"; ckpt-replay -e log.first
		echo "its partitions:"; cat parts.first; echo "second run:"; head -5 second.out; cat err.txt; false
	}
	run jq -c 'select(.event == "restart") | .restart' second.out
	output_is '[{"vertex":"src","subtasks":"0-2"},{"vertex":"map","subtasks":"0-2"},{"vertex":"sum","subtasks":"0-1"},{"vertex":"sink","subtasks":"0-1"}]'
	diff ref.txt <(output_of)
}

@test "batch: parallelism \"auto\" behind a broadcast edge: its bytes counted once, the records of a fixed parallelism" {
	jq '.vertices[2].parallelism = 6 | del(.batch)' "$DATA/batch/broadcast-auto.json" > fixed.json
	run_job fixed.json
	status_is 0
	output_of > ref.txt
	rm -rf out job-events partitions
	# (20 rules + 1000 records) x 24 bytes over 5000 a subtask: 5
	run_job "$DATA/batch/broadcast-auto.json"
	status_is 0
	run sh -c 'ckpt-replay -e job-events | jq -r "select(.type == \"vertex_initialized\") | .payload | \"\(.vertex)=\(.parallelism)\""'
	output_is 'rules=1
src=2
bs=5
sink=2'
	diff ref.txt <(output_of)
}
