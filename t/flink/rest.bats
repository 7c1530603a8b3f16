#!/usr/bin/env bats
# ckpt-plan against real Flink REST responses: the harness captured GET /jobs/:jobid, each
# /jobs/:jobid/vertices/:vid, /jobs/:jobid/checkpoints and the latest checkpoint's details (with
# its per-vertex subtask details) from the MiniCluster's REST endpoint, once with every subtask
# running and once while subtask 0 of src-finishing was FINISHED.

load helper

# Each capture as "VERSION DIR".
captures() {
	local v
	for v in $(flink_versions); do
		jq -r --arg v "$v" --arg o "$FLINK_OUT/$v" '.rest[] | "\($v) \($o)/\(.path)"' "$FLINK_OUT/$v/index.json"
	done
}

# jq on the job graph Flink generated for the job (jobgraph.json: vertices, their parallelism and
# max parallelism; edges with Flink's DistributionPattern and ResultPartitionType), slurped with the
# REST vertex documents (which subtasks are FINISHED): the graph ckpt-plan -G must read from REST.
JQ_REST_GRAPH='def r: sort | reduce .[] as $x ([]; if length > 0 and .[-1][1] == $x - 1
	then .[-1][1] = $x else . + [[$x, $x]] end) | map(if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end) | join(",");
.[0] as $g | (.[1:] | map({key: .id, value: ([.subtasks[] | select(.status == "FINISHED") | .subtask] | r)}) | from_entries) as $fin
| {vertices: ($g.vertices | map({id, name, parallelism, max_parallelism}
	+ (if ($fin[.id] // "") != "" then {finished: $fin[.id]} else {} end)) | sort_by(.id)),
   edges: ($g.edges | sort_by(.source, .target))}'

# jq: vertices keyed by id, edges by "SOURCE->TARGET" (#N when a pair has several), so that a
# difference names them.
JQ_KEYED='{vertices: (.vertices | map({key: .id, value: del(.id)}) | from_entries),
	edges: (.edges | group_by([.source, .target]) | map(to_entries[] | {key: ("\(.value.source)->\(.value.target)"
		+ (if .key > 0 then "#\(.key)" else "" end)), value: (.value | del(.source, .target))}) | from_entries)}'

@test "flink rest: ckpt-plan -G gives the job's real graph: vertices, parallelism, finished, edges" {
	local v d bad=0 n=0
	while read -r v d; do
		n=$((n + 1))
		jq -s "$JQ_REST_GRAPH" "$d/jobgraph.json" "$d"/vertex-*.json | jq "$JQ_KEYED" | jq -r "$JQ_LEAVES" | sort >flink.txt
		ckpt-plan -G "$d/job.json" "$d"/vertex-*.json | jq "$JQ_KEYED" | jq -r "$JQ_LEAVES" | sort >ckpt.txt
		[ -s flink.txt ] && [ -s ckpt.txt ] || { echo "$v/${d##*/}: nothing to compare"; bad=1; continue; }
		join -j1 -t'|' -a1 -a2 -e '(none)' -o 0,1.2,2.2 <(sed 's/ = /|/' ckpt.txt) <(sed 's/ = /|/' flink.txt) |
			awk -F'|' -v a="$v/${d##*/}" '$2 != $3 { print a ": " $1 ": ckpt " $2 ", flink " $3; bad = 1 } END { exit bad }' ||
			bad=1
	done < <(captures)
	[ "$n" -ge 4 ] || { echo "expected 2 captures for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

# What Flink's REST shows of a checkpoint taken while subtask 0 of src-finishing is FINISHED: per
# vertex num_subtasks and num_acknowledged_subtasks, and per subtask a status.  Flink counts a
# finished subtask as acknowledged: status "completed", with zero sizes and zero sync, async and
# start delay.  So what can be compared: (1) every subtask is either one ckpt's plan waits for or
# one it calls finished, and Flink acknowledged exactly that many; (2) on src-finishing, whose
# running subtasks always hold state, the subtasks Flink shows with zero checkpointed size are
# those ckpt calls finished.  What cannot: which subtasks Flink triggered (the REST API does not
# say), nor tell a finished subtask from a stateless one elsewhere.
@test "flink rest: the plan while src-finishing 0 is FINISHED agrees with the checkpoint Flink took then" {
	local v d bad=0 n=0 vid
	while read -r v d; do
		[ "${d##*/}" = partly-finished ] || continue
		n=$((n + 1))
		[ -f "$d/checkpoint-details.json" ] || { echo "$v: no checkpoint details captured"; bad=1; continue; }
		ckpt-plan "$d/job.json" "$d"/vertex-*.json >plan.json
		# (1) per vertex: waited-for plus finished subtasks, against Flink's acknowledged count
		jq -r 'def count: if . == null or . == "" then 0 else split(",") | map(split("-") | map(tonumber)
			| if length == 1 then 1 else .[1] - .[0] + 1 end) | add end;
			([.wait_for[] | {key: .vertex, value: (.subtasks | count)}] | from_entries) as $w
			| ([.finished[] | {key: .vertex, value: (.subtasks | count)}] | from_entries) as $f
			| ($w + $f | keys[]) as $k | "\($k) \(($w[$k] // 0) + ($f[$k] // 0))"' plan.json | sort >ckpt.txt
		jq -r '.tasks | to_entries[] | "\(.key) \(.value.num_acknowledged_subtasks)"' "$d/checkpoint-details.json" | sort >flink.txt
		diff ckpt.txt flink.txt >/dev/null || { echo "$v: waited-for + finished (ckpt) vs acknowledged (flink):"; diff ckpt.txt flink.txt; bad=1; }
		[ "$(jq -r '.status' "$d/checkpoint-details.json")" = COMPLETED ] || { echo "$v: checkpoint not completed"; bad=1; }
		# (2) src-finishing: Flink's zero-size subtasks are ckpt's finished ones
		vid=$(jq -r '.vertices[] | select(.name | endswith("src-finishing")) | .id' "$d/job.json")
		got=$(jq -r --arg v "$vid" '[.finished[] | select(.vertex == $v) | .subtasks] | join(",")' plan.json)
		want=$(jq -r '[.subtasks[] | select(.checkpointed_size == 0) | .index] | map(tostring) | join(",")' "$d/checkpoint-subtasks-$vid.json")
		[ -n "$want" ] && [ "$got" = "$want" ] || { echo "$v: src-finishing finished: ckpt '$got', flink (zero-size) '$want'"; bad=1; }
	done < <(captures)
	[ "$n" -eq 2 ] || { echo "expected a partly-finished capture for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}
