#!/usr/bin/env bats
# The batch job with job recovery (FLIP-383) that the harness ran: Flink's real job event log
# (events.N of FileSystemJobEventStore), cut by a JobMaster failure mid-run, and what Flink's own
# recovery ran again.  ckpt-replay reads every record, decodes what Flink's own reader reads
# (FileSystemJobEventStore.readEvent: the sidecar's "events"), and its plan for the log at the
# failure restarts the subtasks Flink's recovery ran again and keeps the ones it kept.

load helper
bats_require_minimum_version 1.5.0

@test "flink batch: the sidecar lists the event files, those cut at the failure, and the attempts" {
	local v s n=0
	for v in $(flink_versions); do
		s=$FLINK_OUT/$v/$(jq -r '.batch // "none"' "$FLINK_OUT/$v/index.json")
		[ -f "$s" ] || { echo "$v: no batch sidecar"; return 1; }
		n=$((n + 1))
		# event files exist as listed, the log was not empty when the JobMaster lost leadership
		run jq -r '.event_files[] | "\(.path) \(.size)"' "$s"
		[ -n "$output" ] || { echo "$v: no event file listed"; return 1; }
		while read -r p size; do
			[ "$(stat -c %s "$FLINK_OUT/$v/$p")" -eq "$size" ] || { echo "$v: $p: size differs from the sidecar"; return 1; }
		done <<<"$output"
		run jq -e '[.event_files_at_failure[].size] | add > 0' "$s"
		[ "$status" -eq 0 ] || { echo "$v: the log held nothing at the failure"; return 1; }
		# the copy at the failure is the log Flink's recovery read: the segments its store read, by
		# Flink's own log (FileSystemJobEventStore: "Start reading job event file ..."), are those
		# copied, and the new JobMaster wrote only after them, never into them
		jq -e 'has("event_store_log")' "$s" >/dev/null ||
			{ echo "$v: the sidecar has no event_store_log (an older harness: make flink-fixtures)"; return 1; }
		run jq -c '[.event_store_log[] | select(.[0] == "read") | .[1]]' "$s"
		want=$(jq -c '[.event_files_at_failure[].path | sub(".*/"; "")]' "$s")
		[ "$output" = "$want" ] || { echo "$v: Flink's recovery read $output, the copy at the failure has $want"; return 1; }
		run jq -c '[.event_store_log | (map(.[0]) | rindex("read")) as $r | .[$r + 1:][] | .[1]]' "$s"
		want=$(jq -c '[.event_files[].path | sub(".*/"; "")] - [.event_files_at_failure[].path | sub(".*/"; "")]' "$s")
		[ "$output" = "$want" ] && [ "$want" != "[]" ] ||
			{ echo "$v: the new JobMaster wrote $output, the segments after the failure are $want"; return 1; }
		for p in $(jq -r '.event_files_at_failure[].path' "$s"); do
			cmp -s "$FLINK_OUT/$v/$p" "$FLINK_OUT/$v/batch/events-before-end/${p##*/}" ||
				{ echo "$v: $p changed after the failure"; return 1; }
		done
		# Flink's recovery ran again exactly the Map subtasks that were not FINISHED at the failure
		run jq -c '[.states_at_failure.Map | to_entries[] | select(.value != "FINISHED") | .key]' "$s"
		want=$output
		run jq -c '[.attempts[] | select(.after_failure and .vertex == "Map") | .subtask] | sort' "$s"
		[ "$output" = "$want" ] && [ "$want" != "[]" ] || { echo "$v: re-ran Map $output, not FINISHED at the failure $want"; return 1; }
	done
	[ "$n" -eq 2 ]
}

# jq: ckpt-replay -e's events in the shape of the sidecar's "events" (Batch.eventJson; the
# number of a vertex's inputs ckpt does not keep: Flink names them by data set, not by vertex)
JQ_EVENTS='.type as $t | .payload | if $t == "vertex_initialized" then {type: $t, vertex, parallelism}
	elif $t == "vertices_reset" then {type: $t, subtasks}
	else {type: $t, vertex, subtask, attempt, snapshots: (.snapshots != null),
		coordinators: ((.snapshots.coordinators // {}) | map_values(.base64)),
		shuffle: (if .snapshots then {class: "org.apache.flink.runtime.shuffle.EmptyShuffleMasterSnapshot",
			incremental: .snapshots.shuffle.incremental} else null end),
		records_in: .metrics.records_in, records_out: .metrics.records_out,
		bytes_in: .metrics.bytes_in, bytes_out: .metrics.bytes_out} end'

# the log Flink's recovery read: the copy at the failure, taken after the old JobMaster's event
# store had stopped (closing its last segment) and before the new one started
recovered_log() {
	echo "$FLINK_OUT/$1/batch/events-at-failure"
}

@test "flink batch: every record of Flink's log decodes, and equals what Flink's own reader reads" {
	local v s n=0
	for v in $(flink_versions); do
		s=$FLINK_OUT/$v/$(jq -r '.batch // "none"' "$FLINK_OUT/$v/index.json")
		[ -f "$s" ] || { echo "$v: no batch sidecar"; return 1; }
		jq -e 'has("events") and has("events_recovered")' "$s" >/dev/null ||
			{ echo "$v: the sidecar has no events (an older harness: make flink-fixtures)"; return 1; }
		for d in events-at-failure events-before-end; do
			run --separate-stderr ckpt-replay -e "$FLINK_OUT/$v/batch/$d"
			[ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$v/$d: status $status: $stderr"; return 1; }
		done
		want=$(jq -c '.events[] | del(.inputs)' "$s")
		got=$(ckpt-replay -e "$FLINK_OUT/$v/batch/events-before-end" | jq -c "$JQ_EVENTS")
		[ "$got" = "$want" ] || { echo "$v: events differ"; diff <(echo "$want") <(echo "$got"); return 1; }
		[ "$(jq '.events | length' "$s")" -gt 8 ] || { echo "$v: too few events"; return 1; }
		want=$(jq -c '.events_recovered[] | del(.inputs)' "$s")
		got=$(ckpt-replay -e "$(recovered_log "$v")" | jq -c "$JQ_EVENTS")
		[ "$got" = "$want" ] || { echo "$v: events at recovery differ"; diff <(echo "$want") <(echo "$got"); return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 2 ]
}

@test "flink batch: ckpt-replay restarts the subtasks Flink's recovery ran again, keeps the finished ones" {
	local v s n=0
	for v in $(flink_versions); do
		s=$FLINK_OUT/$v/$(jq -r '.batch // "none"' "$FLINK_OUT/$v/index.json")
		# the graph: the sidecar's vertices (topological order), every edge blocking as the job set them
		jq '{vertices: [.vertices[] | {id, name, parallelism}],
			edges: [.vertices as $v | range(1; $v | length) | {source: $v[. - 1].id, target: $v[.].id, partition: "blocking"}]}' \
			"$s" > "$v.graph.json"
		run ckpt-replay -g "$v.graph.json" "$(recovered_log "$v")"
		[ "$status" -eq 0 ] || { echo "$v: $output"; return 1; }
		got=$(jq -c '[.vertices[] | {name, reset, finished}] | sort_by(.name)' <<<"$output")
		want=$(jq -c "$JQ_RANGES"'
			[.vertices[] as $x | [.attempts[] | select(.after_failure and .vertex == $x.name) | .subtask] as $r
			 | {name: $x.name, reset: ($r | unique | ranges),
				finished: ([range($x.parallelism)] - $r | ranges)}] | sort_by(.name)' "$s")
		[ "$got" = "$want" ] || { echo "$v: ckpt-replay: $got"; echo "$v: flink:       $want"; return 1; }
		# the source's coordinator (its split enumerator) comes back with what Flink logged last
		run jq -r --arg src "$(jq -r '.vertices[0].id' "$s")" '.coordinators[$src].state.base64' <<<"$output"
		[ "$output" = "$(jq -r --arg src "$(jq -r '.vertices[0].id' "$s")" \
			'[.events_recovered[] | select(.snapshots) | .coordinators[$src] // empty] | last' "$s")" ]
		n=$((n + 1))
	done
	[ "$n" -eq 2 ]
}
