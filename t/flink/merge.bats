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
