#!/usr/bin/env bats
# The FileSink's state as Flink writes it (issue 41), read by ckpt-inspect.  FileSinkJob.java's job
# (`filesink-savepoint DIR`, each test run): a legacy source (parallelism 2) writes 30 lines from
# subtask 0 and 37 from subtask 1 into a row-format FileSink (parallelism 2) whose buckets are
# "sub<subtask>-even" and "-odd", so every bucket is one subtask's and every part file's size differs.
# Two runs, each with a canonical HashMap savepoint (and the first a checkpoint after it):
#
#   inprogress  DefaultRollingPolicy: the part files stay in progress, in the writer's state
#               ("writer_raw_states": FileWriterBucketStateSerializer 3, the part file's
#               OutputStreamBasedPartFileWriter in-progress recoverable, the local file system's)
#   pending     OnCheckpointRollingPolicy: the savepoint closes them, each a committable pending in
#               the committer's state (FileSinkCommittableSerializer 2); a savepoint commits nothing
#
# The sidecar (DIR/sidecar.json) lists the files under the sink's directory right after each
# savepoint: the hidden ".part-ID-0.inprogress.UUID" files, their buckets and sizes.  Each typed
# value is compared with it: bucket id and path, the hidden (temp) file, its target ("part-ID-0"
# beside it), the offset (in progress) or size (pending): the file's bytes on disk.

load helper
bats_require_minimum_version 1.5.0

# jq, on the sidecar's run: its files as ckpt should type them, sorted.
JQ_SIDE='.files | map({subtask: (.bucket | ltrimstr("sub") | split("-")[0] | tonumber), bucket_id: .bucket,
	bucket_path: ("file:" + (.path | sub("/[^/]*$"; ""))), temp_file: .path,
	target_file: (.path | sub("/\\.(?<n>[^/]*)\\.inprogress\\.[^/]*$"; "/\(.n)")), offset: .size})
	| map(.target_path = "file:" + .target_file) | sort'

# jq -s, on ckpt-inspect -R's rows: the writer's buckets with their in-progress files, sorted.
JQ_WRITER='map(select(.state == "writer_raw_states")) | map(.value as $v | {subtask, bucket_id: $v.bucket_id,
	bucket_path: $v.bucket_path, temp_file: $v.in_progress.recoverable.temp_file,
	target_file: $v.in_progress.recoverable.target_file, offset: $v.in_progress.recoverable.offset,
	target_path: $v.in_progress.target_path}) | sort'

# jq -s, on ckpt-inspect -R's rows: the committer's pending files (the subtask the committable's
# summary names), sorted; size and offset both the file's bytes.
JQ_PENDING='map(select(.state == "streaming_committer_raw_states")) | [.[] | .subtask as $row
	| .value.checkpoints[].subtasks[] | .subtask as $s | .requests[] | select(.pending_file != null)
	| .pending_file as $f | {subtask: $s, row: $row, bucket_id, bucket_path: ("file:" + ($f.recoverable.target_file
	| sub("/[^/]*$"; ""))), temp_file: $f.recoverable.temp_file, target_file: $f.recoverable.target_file,
	offset: $f.recoverable.offset, size: $f.size, target_path: $f.target_path}]
	| map(select(.row == .subtask and .size == .offset) | del(.row, .size)) | sort'

# jq -s: the sink's elements that stay bytes, or are not the FileSink's (none expected).
JQ_UNTYPED='[.[] | select(.state | test("^(writer_raw_states|streaming_committer_raw_states)$"))
	| select(any(.value | .. | objects; has("bytes")) or (.value.state != "committables" and .value.connector != "file_sink"))]
	+ [.[] | select(.state == "streaming_committer_raw_states") | .value.checkpoints[].subtasks[].requests[]
	| select(.connector != "file_sink")]'

setup_file() {
	local v
	W=$BATS_FILE_TMPDIR
	for v in $(flink_versions); do
		flink_java "$v" filesink-savepoint "$W/$v" >"$W/$v.log" 2>&1 || echo "status $?" >>"$W/$v.log"
	done
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	[ -n "$(flink_versions)" ] || skip "no Flink artifacts (run t/flink/run.sh)"
}

# side V: the sidecar of line V, or the job's log and status 1.
side() {
	[ -f "$W/$1/sidecar.json" ] || { echo "$1: no sidecar"; cat "$W/$1.log"; return 1; }
	echo "$W/$1/sidecar.json"
}

# same WHAT EXPECTED ACTUAL: the two JSON documents equal, else the diff and status 1.
same() {
	[ "$(jq 'length' <<<"$2")" -gt 0 ] || { echo "$1: nothing expected"; return 1; }
	diff -u <(jq . <<<"$2") <(jq . <<<"$3") || { echo "$1: ckpt's typed state differs from what Flink left on disk"; return 1; }
}

@test "filesink: the in-progress savepoint and the checkpoint after it: -R types every writer_raw_states element as the FileSink's, per subtask the bucket, its path and the in-progress file Flink left on disk (hidden temp file, its target, its offset the file's size)" {
	local v s snap rows
	for v in $(flink_versions); do
		s=$(side "$v")
		for snap in savepoint checkpoint; do
			rows=$(ckpt-inspect -R "$(jq -r ".inprogress.$snap" "$s")")
			[ "$(jq -s -c "$JQ_UNTYPED" <<<"$rows")" = "[]" ] || { echo "$v $snap: untyped: $(jq -s -c "$JQ_UNTYPED" <<<"$rows")"; return 1; }
			same "$v $snap" "$(jq -c ".inprogress | $JQ_SIDE" "$s")" "$(jq -s -c "$JQ_WRITER" <<<"$rows")"
			[ "$(jq -s '[.[] | select(.state == "writer_raw_states")] | length' <<<"$rows")" -eq 4 ]
		done
	done
}

@test "filesink: the pending savepoint: -R types the committer's committables, per subtask each pending file Flink left on disk (hidden temp file, its target, its size); the writer's buckets hold no in-progress file" {
	local v s rows
	for v in $(flink_versions); do
		s=$(side "$v")
		rows=$(ckpt-inspect -R "$(jq -r .pending.savepoint "$s")")
		[ "$(jq -s -c "$JQ_UNTYPED" <<<"$rows")" = "[]" ] || { echo "$v: untyped: $(jq -s -c "$JQ_UNTYPED" <<<"$rows")"; return 1; }
		same "$v pending" "$(jq -c ".pending | $JQ_SIDE" "$s")" "$(jq -s -c "$JQ_PENDING" <<<"$rows")"
		same "$v pending writer" "$(jq -c '.pending | '"$JQ_SIDE"' | map({subtask, bucket_id, bucket_path, temp_file: null,
			target_file: null, offset: null, target_path: null})' "$s")" "$(jq -s -c "$JQ_WRITER" <<<"$rows")"
	done
}

@test "filesink: -a holds the same typed writer state as -R, every element the FileSink's, no bytes left; -c checks each snapshot ok" {
	local v s snap dir
	for v in $(flink_versions); do
		s=$(side "$v")
		for snap in inprogress.savepoint inprogress.checkpoint pending.savepoint; do
			dir=$(jq -r ".$snap" "$s")
			diff -u <(ckpt-inspect -R "$dir" | jq -s -c '[.[] | select(.state == "writer_raw_states") | [.subtask, .value]] | sort') \
				<(ckpt-inspect -a "$dir" | jq -c '[.operators[] | .subtasks | to_entries[] | .key as $i
					| .value.operator_state.writer_raw_states.entries[]? | [$i, .]] | sort') ||
				{ echo "$v $snap: -a and -R differ"; return 1; }
			[ "$(ckpt-inspect -a "$dir" | jq '[.operators[].subtasks[].operator_state.writer_raw_states.entries[]?
				| select(.connector != "file_sink" or any(.. | objects; has("bytes")))] | length')" -eq 0 ]
			run -0 ckpt-inspect -c "$dir"
			[ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[true,[]]' ]
		done
	done
}

@test "filesink: one byte changed in a savepoint (a part file's offset) is read as such: the typed offset no longer equals the file's size" {
	local v s sp at
	for v in $(flink_versions); do
		s=$(side "$v")
		sp=$(jq -r .inprogress.savepoint "$s")
		cp -r "$sp" "$v-sp"
		# the first local recoverable (magic 0x1E744B57 little-endian), its offset's low byte after it
		at=$(grep -obUaP '\x57\x4b\x74\x1e' "$v-sp/_metadata" | head -1 | cut -d: -f1)
		[ -n "$at" ]
		printf '\377' | dd of="$v-sp/_metadata" bs=1 seek=$((at + 4)) conv=notrunc status=none
		run -1 same "$v" "$(jq -c ".inprogress | $JQ_SIDE" "$s")" "$(ckpt-inspect -R "$v-sp" | jq -s -c "$JQ_WRITER")"
		[ "$(grep -c '^[-+] *"offset": ' <<<"$output")" -eq 2 ]
		[ "${lines[-1]}" = "$v: ckpt's typed state differs from what Flink left on disk" ]
	done
}
