#!/usr/bin/env bats
# ckpt-inspect against real Flink: every checkpoint and savepoint the harness had Flink write
# (build/flink/VERSION/, `make flink-fixtures`) summarised by ckpt-inspect equals what Flink's own
# Checkpoints.loadCheckpointMetadata read from it (the artifact's sidecar), field by field.

load helper

# Compare one artifact; on a difference print "VERSION/ARTIFACT: field: ckpt ..., flink ...".
# checkpoint-changelog's "ambig" has no key serializer recorded (state.bats): -a goes on past it.
compare_artifact() {
	local v=$1 name=$2 dir side keep=
	dir=$FLINK_OUT/$v/$(jq -r --arg n "$name" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$v/index.json")
	side=$FLINK_OUT/$v/sidecars/$name.json
	[ "$name" != checkpoint-changelog ] || keep=--keep-going
	jq "$JQ_FLINK" "$side" | jq -r "$JQ_LEAVES" | sort >flink.txt
	{ ckpt-inspect "$dir" && { ckpt-inspect -a $keep "$dir" || [ -n "$keep" ]; }; } | jq -s "$JQ_CKPT" | jq -r "$JQ_LEAVES" | sort >ckpt.txt
	[ -s flink.txt ] || { echo "$v/$name: the sidecar lists nothing"; return 1; }
	[ -s ckpt.txt ] || { echo "$v/$name: ckpt-inspect gave nothing to compare"; return 1; }
	join -j1 -t'|' -a1 -a2 -e '(none)' -o 0,1.2,2.2 \
		<(sed 's/ = /|/' ckpt.txt | sort -t'|' -k1,1) <(sed 's/ = /|/' flink.txt | sort -t'|' -k1,1) |
		awk -F'|' -v a="$v/$name" '$2 != $3 { print a ": " $1 ": ckpt " $2 ", flink " $3; bad = 1 } END { exit bad }'
}

@test "flink: every line wrote its artifacts, sidecars that list something, and restores" {
	local v n
	n=0
	for v in $(flink_versions); do
		n=$((n + 1))
		run jq -r '[(.artifacts | length >= 10), (.restores | length >= 3)] | all' "$FLINK_OUT/$v/index.json"
		[ "$output" = true ] || { echo "$v: index lists too little"; return 1; }
		for s in $(jq -r '.artifacts[].sidecar' "$FLINK_OUT/$v/index.json"); do
			run jq -e '(.metadata.operators | length) > 0 and (.job.operators | length) > 0
				and (.kind == "checkpoint" and .contents == null or (.contents | length) > 0)' "$FLINK_OUT/$v/$s"
			[ "$status" -eq 0 ] || { echo "$v/$s: sidecar lists nothing"; return 1; }
		done
	done
	[ "$n" -eq 2 ] || { echo "expected the artifacts of 2 Flink lines under $FLINK_OUT, found $n"; return 1; }
}

@test "flink: ckpt-inspect's summary of every artifact equals Flink's sidecar" {
	local v a bad=0
	for v in $(flink_versions); do
		for a in $(jq -r '.artifacts[].name' "$FLINK_OUT/$v/index.json"); do
			compare_artifact "$v" "$a" || bad=1
		done
	done
	[ "$bad" -eq 0 ]
}

@test "flink: ckpt-inspect -u finds the operator of every uid the job set" {
	local v a dir uid id bad=0
	for v in $(flink_versions); do
		for a in $(jq -r '.artifacts[].name' "$FLINK_OUT/$v/index.json"); do
			dir=$FLINK_OUT/$v/$(jq -r --arg n "$a" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$v/index.json")
			while read -r uid id; do
				run ckpt-inspect -u "$uid" "$dir"
				got=$(printf '%s\n' "$output" | jq -r '[.uids[].operators[]] | join(",")' 2>/dev/null)
				if [ "$status" -ne 0 ] || [ "$got" != "$id" ]; then
					# an operator without state is not in the file: -u must then say so (exit 1)
					in_file=$(jq -r --arg id "$id" '[.metadata.operators[] | select(.id == $id)] | length' \
						"$FLINK_OUT/$v/sidecars/$a.json")
					[ "$in_file" -eq 0 ] && [ "$status" -eq 1 ] && continue
					echo "$v/$a: -u $uid: ckpt status $status operators '$got', flink $id"
					bad=1
				fi
			done < <(jq -r '.job.operators[] | select(.uid != null) | "\(.uid) \(.id)"' "$FLINK_OUT/$v/sidecars/$a.json")
		done
	done
	[ "$bad" -eq 0 ]
}
