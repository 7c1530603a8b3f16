#!/usr/bin/env bats
# The State Processor API as the oracle of state contents: for the canonical savepoints (hashmap
# and RocksDB) the harness read back with Flink's SavepointReader (readUnionState, readListState,
# readBroadcastState, readKeyedState with the job's descriptors and its timers) what the job put
# there, into the sidecar's "spa".  That must equal the job's own record ("contents"), put in the
# same shape: list and union elements of all subtasks together, sorted; the broadcast entries (one
# copy); every key's value, list, map and reducing state and its timers.

load helper

@test "flink: the State Processor API reads back from the canonical savepoints what the job put there" {
	local v a side bad=0 n=0
	for v in $(flink_versions); do
		for a in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			side=$FLINK_OUT/$v/sidecars/$a.json
			[ -f "$side" ] || { echo "$v/$a: no sidecar"; bad=1; continue; }
			n=$((n + 1))
			jq .spa "$side" >spa.json
			jq "$JQ_CONTENTS" "$side" >job.json
			# a sidecar that lists nothing fails: every stateful operator, each state non-empty
			for op in src-union src-finishing src-done map-list broadcast keyed; do
				[ "$(jq --arg o "$op" '.[$o] // {} | [.[] | length] | min // 0' spa.json)" -gt 0 ] ||
					{ echo "$v/$a: spa: nothing read of $op"; bad=1; }
				[ "$(jq --arg o "$op" '.[$o] // {} | [.[] | length] | min // 0' job.json)" -gt 0 ] ||
					{ echo "$v/$a: contents: nothing recorded of $op"; bad=1; }
			done
			join -j1 -t'|' -a1 -a2 -e '(none)' -o 0,1.2,2.2 \
				<(jq -r "$JQ_LEAVES" spa.json | sed 's/ = /|/' | sort -t'|' -k1,1) \
				<(jq -r "$JQ_LEAVES" job.json | sed 's/ = /|/' | sort -t'|' -k1,1) |
				awk -F'|' -v a="$v/$a" '$2 != $3 { print a ": spa." $1 ": spa " $2 ", job " $3; bad = 1 } END { exit bad }' ||
				bad=1
		done
	done
	[ "$n" -eq 4 ] || { echo "expected 2 canonical savepoints for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}
