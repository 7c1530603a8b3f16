#!/usr/bin/env bats
# ckpt-inspect --latest and -l against the checkpoint directories Flink itself kept: the harness
# job's JOBID/ (chk-N, shared/, taskowned/) and what Flink's REST endpoint said of its checkpoints
# (GET /jobs/:jobid/checkpoints: latest.completed is the checkpoint a restart restores from, the
# head of its CompletedCheckpointStore).

bats_require_minimum_version 1.5.0
load helper

# Per version, the capture whose latest completed checkpoint is the highest: "VERSION ID PATH".
latest_completed() {
	local v
	for v in $(flink_versions); do
		jq -rs --arg v "$v" 'map(.latest.completed // empty) | max_by(.id) // empty
			| "\($v) \(.id) \(.external_path | sub("^file:"; ""))"' "$FLINK_OUT/$v"/rest/*/checkpoints.json
	done
}

@test "flink list: --latest on the job's checkpoint directory names the checkpoint Flink reports as its latest completed" {
	local v id path n=0
	while read -r v id path; do
		n=$((n + 1))
		job=${path%/*}
		run --separate-stderr ckpt-inspect --latest "$job"
		[ "$status" -eq 0 ] || { echo "$v: exit $status: $stderr"; return 1; }
		[ "$output" = "$path" ] || { echo "$v: --latest $output, Flink's latest completed $path"; return 1; }
		# every chk-N Flink kept is complete, its id its name's, and one Flink completed
		ckpt-inspect -l "$job" > list.ndjson
		history=$(jq -c '[.history[] | select(.status == "COMPLETED") | .id]' "$FLINK_OUT/$v"/rest/*/checkpoints.json |
			jq -sc 'add | unique')
		jq -e --argjson h "$history" 'select(.complete and .kind == "checkpoint"
			and .checkpoint_id == (.path | sub(".*/chk-"; "") | tonumber)
			and (.checkpoint_id as $i | $h | index($i))) | true' list.ndjson > /dev/null ||
			{ echo "$v:"; cat list.ndjson; return 1; }
		[ "$(jq -s 'map(select(.complete | not)) | length' list.ndjson)" -eq 0 ]
		[ "$(jq -s 'map(.checkpoint_id) | max' list.ndjson)" -eq "$id" ]
	done < <(latest_completed)
	[ "$n" -gt 0 ] || skip "no harness artifacts with a REST capture under $FLINK_OUT"
}

@test "flink list: the latest checkpoint cut, or its shared file deleted: --latest takes the one before" {
	local v id path n=0
	while read -r v id path; do
		n=$((n + 1))
		# a copy of the job's directory (its checkpoints hold their state inline)
		job=${path%/*}
		rm -rf copy && mkdir copy && cp -r "$job" copy/
		cp=copy/${job##*/}
		[ "$(ckpt-inspect -l "$cp" | jq -s 'map(.files) | add')" -eq 0 ]
		size=$(stat -c %s "$cp/chk-$id/_metadata")
		truncate -s $((size / 2)) "$cp/chk-$id/_metadata"
		prev=$(ckpt-inspect -l "$cp" | jq -r --argjson id "$id" 'select(.checkpoint_id < $id) | .path' | tail -1)
		[ -n "$prev" ]
		run ckpt-inspect --latest "$cp"
		[ "$output" = "$prev" ] || { echo "$v: --latest $output, want $prev"; return 1; }
		run sh -c 'ckpt-inspect -l "$1" | jq -r "select(.path | endswith(\"/chk-$2\")) | .reason"' sh "$cp" "$id"
		[[ "$output" == "$cp/chk-$id/_metadata: offset "* ]] || { echo "$v: $output"; return 1; }
	done < <(latest_completed)
	[ "$n" -gt 0 ] || skip "no harness artifacts with a REST capture under $FLINK_OUT"
	# RocksDB's incremental checkpoints name their SST files in shared/ by absolute path: a copy
	# read through --root, its newest checkpoint's shared file deleted
	n=0
	for v in $(flink_versions); do
		for job in "$FLINK_OUT/$v"/checkpoints/rocksdb/*/; do
			job=${job%/}
			[ -d "$job/shared" ] || continue
			n=$((n + 1))
			rm -rf copy && mkdir copy && cp -r "$job" copy/
			cp=$PWD/copy/${job##*/}
			r=(-r "file:$job=$cp")
			last=$(ckpt-inspect "${r[@]}" --latest "$cp")
			[ "$last" = "$(ckpt-inspect --latest "$job" | sed "s|^$job|$cp|")" ]
			f=$(ckpt-inspect -m "$last" | jq -r '.flink.files[0].path' | sed "s|^file:$job|$cp|")
			[ -f "$f" ]
			rm "$f"
			run ckpt-inspect "${r[@]}" --latest "$cp"
			[ "$output" != "$last" ] && [ -n "$output" ] || { echo "$v: --latest $output after $f was deleted"; return 1; }
			run sh -c 'ckpt-inspect "$@" | jq -r "select(.complete | not) | .reason"' sh "${r[@]}" -l "$cp"
			[ "$output" = "$f: missing (No such file or directory)" ] || { echo "$v: $output"; return 1; }
		done
	done
	[ "$n" -gt 0 ]
}
