#!/usr/bin/env bats
# ckpt-merge against real Flink: the harness restored Flink's own savepoints and checkpoints at
# other parallelisms (max parallelism unchanged) and every operator reported, from its
# initializeState, the list and union elements, broadcast entries and key groups it received.
# `ckpt-merge -P ID=N _metadata` must assign the same, operator by operator, subtask by subtask.

load helper

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

# The restores Flink refused (a uid the new job lacks, without --allowNonRestoredState; a changed
# max parallelism): ckpt-merge -g on the job graph Flink generated refuses them with Flink's words.
# The savepoint is named differently (Flink: the path it was given; ckpt: its command line), so
# that one part of each message is replaced by SAVEPOINT before comparing.
@test "flink: ckpt-merge -g refuses what Flink's restore refused, in Flink's words" {
	local v f bad=0 n=0 dir uri
	for v in $(flink_versions); do
		for f in $(jq -r '.refusals[]?.sidecar' "$FLINK_OUT/$v/index.json"); do
			n=$((n + 1))
			jq .graph "$FLINK_OUT/$v/$f" >graph.json
			dir=$FLINK_OUT/$v/$(jq -r .path "$FLINK_OUT/$v/$f")
			uri=$(jq -r .savepoint_uri "$FLINK_OUT/$v/$f")
			want=$(jq -r .message "$FLINK_OUT/$v/$f" | awk -v u="${uri%/}" '{ gsub(u "/?", "SAVEPOINT") } 1')
			run --separate-stderr ckpt-merge -g graph.json "$dir"
			got=$(printf '%s\n' "$stderr" | awk -v u="$dir" '{ gsub(u, "SAVEPOINT") } 1')
			if [ "$status" -ne 1 ] || [ "$got" != "ckpt-merge: $want" ]; then
				printf '%s: status %s\n  ckpt:  %s\n  flink: ckpt-merge: %s\n' "$v/${f##*/}" "$status" "$got" "$want"
				bad=1
			fi
		done
	done
	[ "$n" -ge 4 ] || { echo "expected 2 refusals for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}
