#!/usr/bin/env bats
# ckpt-inspect --shards N and -R --shard (issue 42) on what Flink wrote: for each line's savepoints
# (HashMap and RocksDB, canonical and native) and the newest checkpoint of each checkpointed job
# (HashMap, RocksDB incremental, Snappy, unaligned), the union of the rows of N shards is -R's, byte for byte, for N = 1, 2, 7
# and 64, read by I/N and by the descriptor --shards prints (t/shards-helper.bash).

bats_require_minimum_version 1.5.0
load helper
load ../shards-helper

# last_checkpoints VERSION: the newest complete checkpoint of each of the line's checkpointed jobs
# (HashMap, RocksDB incremental, Snappy, unaligned, restored, changelog with a materialized part),
# relative to its artifacts.  Not the changelog job's without materialization: its -R refuses the
# state no key serializer is recorded for (t/flink/state.bats), so there is no -R to equal.
last_checkpoints() {
	local d
	for d in "$FLINK_OUT/$1"/checkpoints/*/*/; do
		case $d in */checkpoints/changelog/*) continue ;; esac
		d=$(cd "$FLINK_OUT/$1" && ls -d "${d#"$FLINK_OUT/$1/"}"chk-*/_metadata 2>/dev/null | sort -V | tail -n 1)
		[ -z "$d" ] || echo "${d%/_metadata}"
	done
}

@test "shards: the union of the shards' rows is -R's on every line's savepoints and checkpoints (N = 1, 2, 7, 64)" {
	local v snap n=0
	if [ -z "$(flink_versions)" ]; then
		[ "${CI-}" != true ] || { echo "no harness artifacts; CI=true requires them"; return 1; }
		skip "no harness artifacts (make flink-fixtures)"
	fi
	for v in $(flink_versions); do
		for snap in savepoint-hashmap-canonical savepoint-hashmap-native savepoint-rocksdb-canonical \
			savepoint-rocksdb-native $(last_checkpoints "$v"); do
			union_is_rows "$FLINK_OUT/$v/$snap" 1 2 7 64 || { echo "in $v/$snap"; return 1; }
			n=$((n + 1))
		done
	done
	[ "$n" -ge 10 ] || { echo "only $n snapshots"; return 1; }
}

@test "shards: RocksDB handles split inside by key-group range (several states and timers, several table files a handle): each key group in one part, each part's rows its own, their union -R's" {
	local v snap n cut
	[ -n "$(flink_versions)" ] || skip "no harness artifacts (make flink-fixtures)"
	for v in $(flink_versions); do
		for snap in savepoint-rocksdb-native $(last_checkpoints "$v" | grep /rocksdb/); do
			snap=$FLINK_OUT/$v/$snap
			# the plan splits every handle: none whole, the largest shard within 1.25 times the mean
			ckpt-inspect --shards 4 "$snap" >plan
			[ "$(jq -s '[.[].parts[] | select(.whole)] | length' plan)" -eq 0 ]
			jq -s -e '(map(.bytes) | add / length) as $m | map(.bytes) | max <= 1.25 * $m' plan
			for n in 2 7 64; do
				cut=$(parts_exact "$snap" "$n") || { echo "$cut"; return 1; }
				# handles cut into parts with rows on both sides of a boundary
				[ "$cut" -ge 2 ] || { echo "$v/$snap: $n shards cut $cut subtasks"; return 1; }
			done
		done
	done
}
