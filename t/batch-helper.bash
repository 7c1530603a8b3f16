# Helpers of t/batch.bats: batch pipelines from t/data/batch, kills, recovery plans.

# batch_pipeline [JQ-FILTER]: t/data/batch/batch.json changed by the filter, to p.json.
batch_pipeline() {
	jq "${1:-.}" "$DATA/batch/batch.json" > p.json
}

# The sink's committed output, sorted.
output_of() {
	cat "${1:-out}"/part-* | sort
}

# pipelined_run: p.json streamed (every edge pipelined, no batch section) into a fresh out/, run to its end.
pipelined_run() {
	rm -rf out
	jq '.edges[].partition = "pipelined" | del(.batch)' p.json > s.json
	run timeout 60 ckpt-run s.json
	status_is 0
}

# map1_lost K: kill_recover K with map:1's partition deleted before the recovery: the plan names it
# lost, and the second run starts its region and what depends on it (map1_region_reran).
# A kill before every map finished (the scheduling decides which event is the Kth) is tried again,
# up to three times; a map the first run printed FINISHED must not run again.
map1_lost() {
	rmpart() { rm parts/map.1; }
	local try
	for try in 1 2 3; do
		kill_recover "$1" rmpart || return
		[ "$(maps_finished first)" != 3 ] || break
		echo "# try $try: killed after $1 events, before every map finished:" \
			$(jq -c '[.event, .vertex, .subtask, .state]' first.out)
	done
	run jq -c '.lost_partitions' plan.json
	output_is '["map:1"]' || return
	map1_region_reran
}
# map1_region_reran: the second run (second.out) started map:1, src:1 that feeds it, and sum and
# sink behind it.
map1_region_reran() {
	run started second
	output_is 'map:1
sink:0
sink:1
src:1
sum:0
sum:1'
}

# avail.json: the partitions that exist in parts/ as "vertex:subtask" ids (temporary files left out).
avail() {
	ls parts | sed -n 's/^\([a-z_]*\)\.\([0-9][0-9]*\)$/\1:\2/p' | jq -R . | jq -sc . > avail.json
}

# The subtasks the recovery plan (plan.json) runs again: reset ones, and all of a vertex the log never initialized.
planned() {
	jq -r --slurpfile p p.json '
	  def expand: if . == "" then [] else split(",") | map(split("-") | map(tonumber)
	      | if length == 1 then .[0] else range(.[0]; .[1] + 1) end) end;
	  . as $plan | $p[0].vertices[] | .id as $v | .parallelism as $n
	  | ([$plan.vertices[] | select(.vertex == $v)] | first // null) as $pv
	  | (if $pv == null then range(0; $n) else ($pv.reset | expand[]) end) | "\($v):\(.)"' plan.json | sort
}

# job_finished of a run (FILE.out): [records, source_records, restarts].
counts() {
	jq -c 'select(.event == "job_finished") | [.records, .source_records, .restarts]' "$1.out"
}

# How many map subtasks a run (FILE.out) printed FINISHED.
maps_finished() {
	jq -r 'select(.event == "task_state" and .vertex == "map" and .state == "FINISHED") | .subtask' "$1.out" | sort -u | wc -l
}

# The subtasks a run (FILE.out) started.
started() {
	jq -r 'select(.event == "task_state" and .state == "RUNNING") | "\(.vertex):\(.subtask)"' "$1.out" | sort
}

# kill_recover K [EXTRA]: a run killed (-9) after K events, EXTRA run on the remains, the plan
# ckpt-replay makes of them, then --recover: the output equals ref.txt and the subtasks run are the plan's.
kill_recover() {
	rm -rf log parts out
	EVENTS=first.out run_job -K "$1" p.json
	[ "$status" -eq 137 ] || { echo "not killed: $status"; cat err.txt; return 1; }
	${2:-true}
	avail
	ckpt-replay --available avail.json -g "${GRAPH:-$DATA/batch/graph-snap.json}" log > plan.json || return 1
	EVENTS=second.out run_job --recover log p.json
	status_is 0 || { cat err.txt; return 1; }
	diff <(planned) <(started second) || { echo "after $1 events: reran differs from the plan"; return 1; }
	diff ref.txt <(output_of) > /dev/null || { echo "after $1 events: output differs"; return 1; }
	[ ! -f ref-counts.txt ] || diff ref-counts.txt <(counts second) || { echo "after $1 events: job_finished counts differ"; return 1; }
}
