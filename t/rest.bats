#!/usr/bin/env bats
# ckpt-plan on Flink REST responses: GET /jobs/:jobid followed by GET /jobs/:jobid/vertices/:vertexid.

load helper

R=$DATA/rest
SRC=bc764cd8ddf7a0cff126f51c16239658
CNT=0a448493b4782967b150582570326227
SINK=ea632d67b7d595e5b851708ae9ad79d6

@test "rest: a job document and a vertex document become a graph (-g), in one stream or two files" {
	want='{"vertices":[{"id":"'$SRC'","name":"ClickEvent Source","parallelism":2,"max_parallelism":128,"finished":"0"},{"id":"'$CNT'","name":"ClickEvent Counter","parallelism":2,"max_parallelism":128},{"id":"'$SINK'","name":"ClickEventStatistics Sink","parallelism":2,"max_parallelism":128}],"edges":[{"source":"'$SRC'","target":"'$CNT'","distribution":"all_to_all","partition":"pipelined_bounded","partitioner":"hash"},{"source":"'$CNT'","target":"'$SINK'","distribution":"pointwise","partition":"pipelined_bounded","partitioner":"forward"}]}'
	run sh -c 'cat "$1" "$2" | ckpt-plan -G' sh "$R/job.json" "$R/vertex-source.json"
	status_is 0
	output_is "$want"
	run ckpt-plan -G "$R/job.json" "$R/vertex-source.json"
	status_is 0
	output_is "$want"
	run sh -c 'cat "$2" | ckpt-plan -G "$1" -' sh "$R/job.json" "$R/vertex-source.json"
	status_is 0
	output_is "$want"
}

@test "rest: the plan of a job read from REST, and the normal form piped on plans the same" {
	run ckpt-plan "$R/job.json" "$R/vertex-source.json"
	status_is 0
	output_is '{"trigger":[{"vertex":"'$SRC'","subtasks":"1"}],"wait_for":[{"vertex":"'$SRC'","subtasks":"1"},{"vertex":"'$CNT'","subtasks":"0-1"},{"vertex":"'$SINK'","subtasks":"0-1"}],"commit_to":[{"vertex":"'$SRC'","subtasks":"1"},{"vertex":"'$CNT'","subtasks":"0-1"},{"vertex":"'$SINK'","subtasks":"0-1"}],"finished":[{"vertex":"'$SRC'","subtasks":"0"}],"fully_finished":[],"warnings":[],"decline":null}'
	direct=$output
	run sh -c 'ckpt-plan -G "$1" "$2" | ckpt-plan' sh "$R/job.json" "$R/vertex-source.json"
	output_is "$direct"
}

@test "rest: failover on REST input, vertices named by id or by name" {
	run ckpt-plan -f "ClickEvent Counter:1" "$R/job.json" "$R/vertex-source.json"
	status_is 0
	output_is '{"strategy":"region","failed":{"vertex":"'$CNT'","subtask":1},"restart":[{"vertex":"'$SRC'","subtasks":"0-1"},{"vertex":"'$CNT'","subtasks":"0-1"},{"vertex":"'$SINK'","subtasks":"0-1"}],"regions":1}'
	run ckpt-plan -f "$CNT:1" "$R/job.json" "$R/vertex-source.json"
	status_is 0
}

@test "rest: counts decide when all of a vertex's subtasks are in one state" {
	run sh -c 'jq ".vertices[0].tasks = {\"RUNNING\": 0, \"FINISHED\": 2}" "$1" | ckpt-plan | jq -c ".fully_finished, .trigger"' sh "$R/job.json"
	output_is '["'$SRC'"]
[{"vertex":"'$CNT'","subtasks":"0-1"}]'
}

# job_refused FILTER GLOB [OPTION]: ckpt-plan [OPTION] of the job document changed by the jq filter FILTER
# (on stdin) and its source's vertex document exits 2, saying "ckpt-plan: <stdin>:1:COLUMN: " and
# what GLOB matches.  vertex_refused FILTER GLOB: the same with the vertex document changed.
job_refused() {
	run sh -c 'jq -c "$1" "$2" | ckpt-plan $4 - "$3"' sh "$1" "$R/job.json" "$R/vertex-source.json" "${3-}"
	status_is 2 || return
	# shellcheck disable=SC2053 # GLOB is a pattern
	[[ $output == "ckpt-plan: <stdin>:1:"*": "$2 ]] || { echo "got: $output"; return 1; }
}
vertex_refused() {
	run sh -c 'jq -c "$1" "$3" | ckpt-plan "$2" -' sh "$1" "$R/job.json" "$R/vertex-source.json"
	status_is 2 || return
	# shellcheck disable=SC2053
	[[ $output == "ckpt-plan: <stdin>:1:"*": "$2 ]] || { echo "got: $output"; return 1; }
}

@test "rest: counts that cannot say which subtask is in which state are refused" {
	run ckpt-plan "$R/job.json"
	status_is 2
	output_is "ckpt-plan: $R/job.json:22:16: vertex \"$SRC\": subtasks in 2 different states and no vertex document (GET /jobs/:jobid/vertices/$SRC) says which is which"
}

@test "rest: counts that do not add up to the parallelism are refused" {
	job_refused '.vertices[1].tasks = {"RUNNING": 3}' "vertex \"$CNT\": tasks counts 3 subtasks for parallelism 2"
}

@test "rest: ship_strategy FORWARD and RESCALE are pointwise, the rest all-to-all; exchange is the partition" {
	run sh -c 'ckpt-plan -G "$1" | jq -r ".edges[] | .distribution + \" \" + .partition"' sh "$R/job-strategies.json"
	status_is 0
	output_is 'pointwise pipelined
pointwise pipelined_bounded
all_to_all blocking
all_to_all blocking
all_to_all hybrid_full
all_to_all hybrid_selective
all_to_all pipelined_approximate
all_to_all pipelined
all_to_all pipelined
pointwise pipelined_bounded
all_to_all pipelined
all_to_all blocking
pointwise blocking
pointwise hybrid_full'
}

@test "rest: the documentation's example with placeholder ids is refused clearly" {
	needs_fixtures
	run ckpt-plan -G "$FIXTURES/flink-rest/jobs-jobid-docs-operations-playground.json"
	status_is 2
	output_is "ckpt-plan: $FIXTURES/flink-rest/jobs-jobid-docs-operations-playground.json:24:13: vertex 0: id \"<vertex-id>\" is a placeholder, not a JobVertexID; edges cannot be resolved"
}

# Each of Flink's other endpoints is named, with the one ckpt-plan reads (real responses where the
# fixtures have them, else the keys Flink's REST API documents for them).
@test "rest: a response of another endpoint is named, and the one ckpt-plan reads" {
	needs_fixtures
	want=', not a job: expected a job graph ({"vertices": [...], "edges": [...]}) or Flink'"'"'s GET /jobs/:jobid'
	bad 2 "ckpt-plan: $FIXTURES/flink-rest/checkpoints-flink-oss-prod.json:1:1: Flink's GET /jobs/:jobid/checkpoints (checkpoint statistics)$want" \
		ckpt-plan "$FIXTURES/flink-rest/checkpoints-flink-oss-prod.json"
	while IFS='|' read -r doc name; do
		bad 2 "ckpt-plan: <stdin>:1:1: Flink's $name$want" sh -c 'printf "%s\n" "$1" | ckpt-plan' sh "$doc"
	done <<'EOF'
{"jobs":[{"jid":"a1","name":"n","state":"RUNNING","start-time":1,"tasks":{}}]}|GET /jobs/overview
{"jobs":[{"id":"a1","status":"RUNNING"}]}|GET /jobs (the job list)
{"jobs":[]}|GET /jobs or GET /jobs/overview
{"plan":{"jid":"a1","name":"n","nodes":[]}}|GET /jobs/:jobid/plan (the plan alone, without each vertex's subtasks)
{"taskmanagers":1,"slots-total":4,"slots-available":0,"jobs-running":1,"flink-version":"1.20.0"}|GET /overview (the cluster overview)
{"taskmanagers":[{"id":"tm1","path":"akka://x","dataPort":1,"slotsNumber":1}]}|GET /taskmanagers
{"id":"v","name":"n","now":1,"taskmanagers":[]}|GET /jobs/:jobid/vertices/:vertexid/taskmanagers
{"mode":"exactly_once","interval":1000,"timeout":600000}|GET /jobs/:jobid/checkpoints/config
{"@class":"completed","id":3,"status":"COMPLETED","is_savepoint":false,"tasks":{}}|GET /jobs/:jobid/checkpoints/details/:checkpointid
{"root-exception":null,"timestamp":null,"all-exceptions":[],"truncated":false}|GET /jobs/:jobid/exceptions
{"jid":"a1","name":"n","execution-config":{}}|GET /jobs/:jobid/config
{"jid":"a1","name":"n","vertices":[]}|GET /jobs/:jobid without its "plan", which holds the edges
{"status":"ok","backpressure-level":"ok","end-timestamp":1,"subtasks":[]}|GET /jobs/:jobid/vertices/:vertexid/backpressure
{"request-id":"7f1c"}|answer to a trigger (POST /jobs/:jobid/savepoints, /stop, /rescaling)
{"status":{"id":"COMPLETED"},"operation":{"location":"file:/sp"}}|status of an asynchronous operation (GET /jobs/:jobid/savepoints/:triggerid)
EOF
	bad 2 "ckpt-plan: <stdin>:1:1: Flink's REST error response \"Job 7f1c not found\"$want" sh -c 'echo "{\"errors\":[\"Job 7f1c not found\"]}" | ckpt-plan'
}

@test "rest: a vertex document without its job document is refused" {
	needs_fixtures
	bad 2 "ckpt-plan: $FIXTURES/flink-rest/jobs-jobid-vertices-vertexid-docs-legacy.json:1:1: a vertex document (GET /jobs/:jobid/vertices/:vertexid) must follow its job document (GET /jobs/:jobid)" ckpt-plan "$FIXTURES/flink-rest/jobs-jobid-vertices-vertexid-docs-legacy.json"
}

@test "rest: a vertex document of another job is refused" {
	needs_fixtures
	run ckpt-plan "$R/job.json" "$FIXTURES/flink-rest/jobs-jobid-vertices-vertexid-docs-legacy.json"
	status_is 2
	output_is "ckpt-plan: $FIXTURES/flink-rest/jobs-jobid-vertices-vertexid-docs-legacy.json:2:9: vertex \"dceafe2df1f57a1206fcb907cb38ad97\" is not in the job document before it"
}

@test "rest: bad vertex documents: subtask count, unknown status, repeated index, second document" {
	run sh -c 'jq -c "del(.subtasks[1])" "$2" | ckpt-plan "$1" -' sh "$R/job.json" "$R/vertex-source.json"
	status_is 2
	output_is "ckpt-plan: <stdin>:1:137: vertex \"$SRC\": 1 subtasks for parallelism 2"
	vertex_refused '.subtasks[1].status = "SLEEPING"' "vertex \"$SRC\": subtask 1: unknown state"
	vertex_refused '.subtasks[1].subtask = 0' "vertex \"$SRC\": subtask 1: bad or repeated \"subtask\" index"
	run ckpt-plan "$R/job.json" "$R/vertex-source.json" "$R/vertex-source.json"
	status_is 2
	output_is "ckpt-plan: $R/vertex-source.json:2:9: second vertex document for \"$SRC\""
}

@test "rest: bad plans: an input from an unknown vertex, an unknown exchange, a cycle" {
	job_refused '.plan.nodes[0].inputs[0].id = "ffffffffffffffffffffffffffffffff"' 'plan input: unknown vertex "ffffffffffffffffffffffffffffffff"' -G
	job_refused '.plan.nodes[0].inputs[0].exchange = "teleport"' 'plan input: unknown exchange "teleport"' -G
	job_refused '.plan.nodes[2].inputs = [{"num":0,"id":"'$SINK'","ship_strategy":"HASH"}]' 'cycle through vertices "'\* -G
}

@test "rest: two jobs and a graph document in one stream give three results" {
	run sh -c 'cat "$1" "$2" "$1" "$2" "$3" | ckpt-plan | jq -c .trigger[0].subtasks' sh "$R/job.json" "$R/vertex-source.json" "$DATA/plan/c1-all-running.json"
	status_is 0
	output_is '"1"
"1"
"0-2"'
}
