#!/usr/bin/env bats
# ckpt-merge against real Flink: the harness restored Flink's own savepoints and checkpoints at
# other parallelisms (max parallelism unchanged) and every operator reported, from its
# initializeState, the list and union elements, broadcast entries and key groups it received.
# `ckpt-merge -P ID=N _metadata` must assign the same, operator by operator, subtask by subtask.

load helper
bats_require_minimum_version 1.5.0

# compare_assignment NAME RESTORE_SIDECAR ARTIFACT_SIDECAR ASSIGNMENT: ckpt-merge's assignment equals
# what Flink's restore reported, leaf by leaf; each difference printed as "NAME: field: ckpt X, flink Y".
compare_assignment() {
	jq -n --slurpfile R "$2" --slurpfile S "$3" "$JQ_RESTORED" >flink.json
	[ "$(jq 'length' flink.json)" -gt 0 ] || { echo "$1: the restore reported nothing"; return 1; }
	jq --slurpfile R "$2" --slurpfile S "$3" "$JQ_ASSIGNED" "$4" >ckpt.json
	[ "$(jq length ckpt.json)" -gt 0 ] || { echo "$1: no assignment to compare"; return 1; }
	join -j1 -t'|' -a1 -a2 -e '(none)' -o 0,1.2,2.2 \
		<(jq -r "$JQ_LEAVES" ckpt.json | sed 's/ = /|/' | sort -t'|' -k1,1) \
		<(jq -r "$JQ_LEAVES" flink.json | sed 's/ = /|/' | sort -t'|' -k1,1) |
		awk -F'|' -v a="$1" '$2 != $3 { print a ": " $1 ": ckpt " $2 ", flink " $3; bad = 1 } END { exit bad }'
}

@test "flink: every restore reported, and ckpt-merge -P assigns what Flink's restore delivered" {
	local v r bad=0 n=0 side art dir
	for v in $(flink_versions); do
		for r in $(jq -r '.restores[].sidecar' "$FLINK_OUT/$v/index.json"); do
			side=$FLINK_OUT/$v/$r
			art=$(jq -r .artifact "$side")
			dir=$FLINK_OUT/$v/$(jq -r .path "$side")
			n=$((n + 1))
			jq -n --slurpfile R "$side" --slurpfile S "$FLINK_OUT/$v/sidecars/$art.json" "$JQ_RESTORED" >flink.json
			[ "$(jq 'length' flink.json)" -gt 0 ] || { echo "$v/$r: the restore reported nothing"; bad=1; continue; }
			set -- $(jq -r '.job.operators[] | "-P \(.id)=\(.parallelism)"' "$side")
			if ! ckpt-merge "$@" "$dir" >assignment.json 2>err.txt; then
				echo "$v/$r: ckpt-merge $*: $(cat err.txt)"
				bad=1
				continue
			fi
			compare_assignment "$v/${r##*/}" "$side" "$FLINK_OUT/$v/sidecars/$art.json" assignment.json || bad=1
		done
	done
	[ "$n" -ge 6 ] || { echo "expected the restores of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

# The restores Flink refused: ckpt-merge -g on the job graph Flink generated for the new job must
# refuse them (exit 1) with Flink's message after ckpt's "ckpt-merge: FILE: " (CONTRACT).  The
# savepoint is named differently (Flink: the path it was given; ckpt: its command line), so that
# part of each message becomes SAVEPOINT before comparing.
check_refusal() {
	local v f bad=0 n=0 dir uri want got
	for v in $(flink_versions); do
		f=$FLINK_OUT/$v/refusals/$1.json
		[ -f "$f" ] || { echo "$v: no refusal $1"; bad=1; continue; }
		n=$((n + 1))
		jq .graph "$f" >graph.json
		dir=$FLINK_OUT/$v/$(jq -r .path "$f")
		uri=$(jq -r .savepoint_uri "$f")
		uri=${uri#file:}
		uri=${uri#//}
		want=$(jq -r .message "$f" | awk -v u="${uri%/}" '{ gsub("(file:(//)?)?" u "/?", "SAVEPOINT") } 1')
		run --separate-stderr ckpt-merge -g graph.json "$dir"
		got=$(printf '%s\n' "$stderr" | awk -v u="$dir" '{ gsub(u, "SAVEPOINT") } 1')
		if [ "$status" -ne 1 ] || [ -n "$output" ] || [ "$got" != "ckpt-merge: SAVEPOINT: $want" ]; then
			printf '%s: status %s\n  ckpt:  %s\n  flink: ckpt-merge: SAVEPOINT: %s\n' "$v/refusals/$1" "$status" "$got" "$want"
			bad=1
		fi
	done
	[ "$n" -eq 2 ] || { echo "expected refusal $1 for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

@test "flink: ckpt-merge -g refuses state of a uid the new job lacks, in Flink's words" {
	check_refusal missing-uid
}

@test "flink: ckpt-merge -g refuses a changed max parallelism, in Flink's words" {
	# Flink (2.3.0 and 1.20.5, Checkpoints.loadAndValidateCheckpoint) formats the CheckpointMetadata
	# object into this message, whose toString is "Checkpoint Metadata"; so does ckpt-merge.
	check_refusal max-parallelism
}

# Flink restores an unaligned checkpoint at other parallelisms, in-flight data included (rescaling
# unaligned checkpoints, FLIP-76's later part, Flink 1.13 on); the harness did so at the
# parallelisms of the other restores and recorded whether Flink accepted it.  ckpt-merge needs the
# edges' partitioners to rescale in-flight data: -P alone refuses, naming -g; -g with the job graph
# Flink generated for the restore (its partitioners included) assigns it.
@test "flink: ckpt-merge -g rescales an unaligned checkpoint with in-flight data, as Flink's restore did" {
	local v s dir n=0
	for v in $(flink_versions); do
		s=$FLINK_OUT/$v/$(jq -r '.in_flight_restore // "none"' "$FLINK_OUT/$v/index.json")
		[ -f "$s" ] || { echo "$v: no in-flight restore recorded"; return 1; }
		[ "$(jq -r .accepted "$s")" = true ] || { echo "$v: Flink refused: $(jq -r .message "$s")"; return 1; }
		[ "$(jq '.reports | length' "$FLINK_OUT/$v/$(jq -r .restore "$s")")" -gt 0 ] || { echo "$v: the restore reported nothing"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 2 ]
	for v in $(flink_versions); do
		s=$FLINK_OUT/$v/$(jq -r .in_flight_restore "$FLINK_OUT/$v/index.json")
		r=$FLINK_OUT/$v/$(jq -r .restore "$s")
		dir=$FLINK_OUT/$v/$(jq -r .path "$s")
		set -- $(jq -r '.job.operators[] | "-P \(.id)=\(.parallelism)"' "$r")
		run --separate-stderr ckpt-merge "$@" "$dir"
		[ "$status" -eq 1 ] && [[ "$stderr" == *"holds in-flight data of an unaligned checkpoint: rescaling it from "*" needs the job graph's partitioners (-g)" ]] ||
			{ echo "$v: ckpt-merge -P without -g: status $status: $stderr"; return 1; }
		jq .graph "$r" >graph.json
		[ "$(jq '[.edges[] | select(.partitioner)] | length' graph.json)" -gt 0 ] || { echo "$v: the graph names no partitioner"; return 1; }
		run --separate-stderr ckpt-merge -g graph.json "$dir"
		[ "$status" -eq 0 ] || { echo "$v: ckpt-merge -g: $stderr"; return 1; }
		# in-flight data was rescaled: some new subtask reads an old one's channel handles elsewhere
		[ "$(printf '%s\n' "$output" | jq '[.. | objects | select(.in_place == false)] | length')" -gt 0 ] ||
			{ echo "$v: no channel handle moved"; return 1; }
		# the key groups each keyed subtask got
		jq -r '.reports[] | select(.uid == "keyed") | "\(.subtask) \(.key_groups | if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end)"' "$r" | sort >flink.txt
		kid=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$r")
		printf '%s\n' "$output" | jq -r --arg k "$kid" '.operators[] | select(.id == $k) | .subtasks[] | "\(.index) \(.key_groups)"' | sort >ckpt.txt
		diff ckpt.txt flink.txt
	done
}

# Union list state partly finished (FLIP-147).  Flink never completes such a checkpoint: once
# subtask 0 of src-union returns while subtask 1 runs, every checkpoint is aborted
# (DefaultCheckpointPlan.checkNoPartlyOperatorsFinishedVertexUsedUnionListState, both lines), so
# the subtask never gets its final checkpoint and stays RUNNING.  The refusal is at checkpoint time.
@test "flink: Flink aborts the checkpoints of a vertex with union list state partly finished" {
	local v f n=0
	for v in $(flink_versions); do
		f=$FLINK_OUT/$v/refusals/union-partly-finished.json
		[ -f "$f" ] || { echo "$v: no refusals/union-partly-finished.json"; return 1; }
		jq -r .checkpoint_message "$f" | grep -Eq '^The vertex Source: src-union -> rules-filter \(id = [0-9a-f]{32}\) has used UnionListState, but part of its tasks has called operators'"'"' finish method\.$' ||
			{ echo "$v: checkpoint_message: $(jq -r .checkpoint_message "$f")"; return 1; }
		[ "$(jq -c .src_union_subtasks "$f")" = '["RUNNING","RUNNING"]' ] ||
			{ echo "$v: src_union_subtasks: $(jq -c .src_union_subtasks "$f")"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 2 ]
}

# The same state as Flink would write it (checkpoint-union-partly-finished: checkpoint-hashmap-
# finished with subtask 0 of the src-union vertex FINISHED, by Flink's own serializer), restored by
# Flink at the same parallelism: Flink's restore (StateAssignmentOperation, VertexFinishedStateChecker)
# has no union check and accepts it; each new src-union subtask gets the running subtask's elements.
# ckpt-merge models the restore of the system that wrote the snapshot, and so accepts it too.
@test "flink: ckpt-merge -g on union list state partly finished does what Flink's restore does" {
	local v f side dir n=0
	for v in $(flink_versions); do
		f=$FLINK_OUT/$v/refusals/union-partly-finished.json
		[ "$(jq -r .restore_accepted "$f")" = true ] || { echo "$v: Flink refused: $(jq -r .restore_message "$f")"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 2 ]
	for v in $(flink_versions); do
		f=$FLINK_OUT/$v/refusals/union-partly-finished.json
		side=$FLINK_OUT/$v/$(jq -r .restore "$f")
		dir=$FLINK_OUT/$v/$(jq -r .path "$side")
		jq .graph "$side" >graph.json
		run --separate-stderr ckpt-merge -g graph.json "$dir"
		[ "$status" -eq 0 ] || { echo "$v: ckpt-merge -g: $stderr"; return 1; }
		printf '%s\n' "$output" >assignment.json
		compare_assignment "$v/${side##*/}" "$side" "$FLINK_OUT/$v/sidecars/checkpoint-union-partly-finished.json" assignment.json
	done
}

# The uid the new job lacks (missing-uid above), restored with allowNonRestoredState
# (execution.savepoint.ignore-unclaimed-state): Flink drops the broadcast operator's state and
# runs; ckpt-merge -g -n accepts, and assigns the rest as Flink's restore delivered it.
@test "flink: ckpt-merge -g -n accepts state of a uid the new job lacks, as Flink's allowNonRestoredState" {
	local v side dir n=0
	for v in $(flink_versions); do
		side=$FLINK_OUT/$v/$(jq -r '.accepted[] | select(.name == "missing-uid-allowed") | .sidecar' "$FLINK_OUT/$v/index.json")
		[ -f "$side" ] || { echo "$v: no accepted restore missing-uid-allowed"; return 1; }
		[ "$(jq -r .allow_non_restored_state "$side")" = true ]
		[ "$(jq '[.reports[] | select(.uid == "broadcast")] | length' "$side")" -eq 0 ] ||
			{ echo "$v: the new broadcast operator got state"; return 1; }
		dir=$FLINK_OUT/$v/$(jq -r .path "$side")
		jq .graph "$side" >graph.json
		run --separate-stderr ckpt-merge -g graph.json -n "$dir"
		[ "$status" -eq 0 ] || { echo "$v: ckpt-merge -g -n: status $status: $stderr"; return 1; }
		[ -z "$stderr" ] || { echo "$v: stderr: $stderr"; return 1; }
		printf '%s\n' "$output" >assignment.json
		# without -n the same is refused (missing-uid above)
		run --separate-stderr ckpt-merge -g graph.json "$dir"
		[ "$status" -eq 1 ] || { echo "$v: without -n: status $status"; return 1; }
		compare_assignment "$v/${side##*/}" "$side" "$FLINK_OUT/$v/sidecars/savepoint-hashmap-canonical.json" assignment.json
		n=$((n + 1))
	done
	[ "$n" -eq 2 ]
}

# exit2 MESSAGE ARGS...: ckpt-merge ARGS exits 2 with MESSAGE alone on stderr, nothing on stdout
exit2() {
	local want=$1
	shift
	run --separate-stderr ckpt-merge "$@"
	[ "$status" -eq 2 ] && [ "$stderr" = "$want" ] && [ -z "$output" ] ||
		{ echo "expected status 2: $want"; echo "got status $status: $stderr"; return 1; }
}

# Bad input (issue 32): input channel state of a gate or channel the graph of -g does not have is
# named, exit 2.  The keyed operator of the unaligned checkpoint holds input in-flight data on both
# lines (the harness keeps the first checkpoint that does: Main.unaligned); Flink 2's are merged
# handles (one file for several channels), each channel of them checked.
@test "flink: ckpt-merge -g names input channel state of a gate or channel the graph lacks (exit 2), refuses it chained behind a new head" {
	local v side dir k kn sub n=0
	for v in $(flink_versions); do
		side=$FLINK_OUT/$v/assign/checkpoint-unaligned-to-2.json
		dir=$FLINK_OUT/$v/$(jq -r .path "$side")
		k=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$side")
		# messages name the operator by its uid where the _metadata has it (Flink 2), else its id
		kn=$(ckpt-inspect "$dir" | jq -r --arg k "$k" '.operators[] | select(.id == $k) | .uid // .id')
		ckpt-inspect -a "$dir" 2>/dev/null | jq -c --arg k "$k" '.operators[] | select(.id == $k) | [.subtasks[] | .index as $i
			| .handles[]? | select(.scope == "input_channel")
			| if .kind == "merged_channels" then .channels[] | [$i, "merged", .gate, .channel] else [$i, .kind, .gate, .channel] end]' >in.json
		[ "$(jq 'length > 0 and all(.[1] == "channel" or .[1] == "merged")' in.json)" = true ] ||
			{ echo "$v: the keyed operator of $dir holds no input channel state (the harness keeps a checkpoint that does)"; return 1; }
		n=$((n + 1))
		# its gate's edge moved to another vertex: the keyed vertex has no input gate
		jq --arg k "$k" '.graph | .edges |= map(if .target == $k then .target = "ffbb303c356ee15e3ec72d55fe9d8b05" else . end)' "$side" >nogate.json
		sub=$(jq '.[0][0]' in.json)
		exit2 "ckpt-merge: $dir: operator $kn: subtask $sub: input channel state of gate 0, but vertex $k of the graph has 0 input gates" \
			-g nogate.json "$dir"
		# its edge pointwise from 3 to 2 subtasks: subtask 0 reads 1 channel, subtask 1 reads 2
		jq --arg k "$k" '.graph | .edges |= map(if .target == $k then .distribution = "pointwise" else . end)' "$side" >pw.json
		# keyed chained behind ambig, the vertex's head now: keyed's input in-flight data goes to no
		# one; the vertex redistributes its inputs (map-tag, across its gate, holds output channel
		# state), so Flink refuses the data (checkForUnsupportedToplogyChanges)
		jq --arg k "$k" --arg a "$(jq -r '.job.operators[] | select(.uid == "ambig") | .id' "$side")" '.graph
			| .vertices |= map(select(.id != $a) | if .id == $k then .operators += [{"id": $a}] else . end)
			| .edges |= map(if .target == $a then .target = $k else . end)' "$side" >chained.json
		if ckpt-inspect -a "$dir" 2>/dev/null | jq -e --arg m "$(jq -r '.job.operators[] | select(.uid == "map-tag") | .id' "$side")" \
			'[.operators[] | select(.id == $m) | .subtasks[].handles[]? | select(.scope == "output_channel")] | length > 0' >/dev/null; then
			run --separate-stderr ckpt-merge -g chained.json "$dir"
			[ "$status" -eq 1 ] && [ "$stderr" = "ckpt-merge: $dir: Cannot recover from unaligned checkpoint when topology changes, such that data exchanges with persisted data are now chained. The following operators contain channel state: [$k]" ] ||
				{ echo "chained keyed: status $status: $stderr"; return 1; }
		fi
		sub= c= w=
		read -r sub c w < <(jq -r '[.[] | . + [if .[0] == 0 then 1 else 2 end] | select(.[3] >= .[4])][0] // empty | "\(.[0]) \(.[3]) \(.[4])"' in.json) || true
		[ -n "$sub" ] || continue
		exit2 "ckpt-merge: $dir: operator $kn: subtask $sub: input channel state of gate 0 channel $c, but that gate has $w channels in the graph" \
			-g pw.json "$dir"
	done
	[ "$n" -gt 0 ] || skip "no Flink artifacts"
}
