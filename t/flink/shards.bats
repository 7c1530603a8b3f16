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

# The harness's native RocksDB savepoint (Flink 2.3.0, t/flink): 16 key groups a subtask, several
# states and timers in column families, handles of several table files.
RKS=$FLINK_OUT/2.3.0/savepoint-rocksdb-native

needs_rks() {
	[ -f "$RKS/_metadata" ] && return 0
	[ "${CI-}" != true ] || { echo "no harness artifacts; CI=true requires them"; return 1; }
	skip "no harness artifacts (make flink-fixtures)"
}

@test "shards: RocksDB handles split inside by key-group range; -R --shard -u, --state, -k and --keep-going on their parts" {
	needs_rks
	local n i opt
	union_is_rows "$RKS" 1 2 7 64
	ckpt-inspect --shards 7 "$RKS" >plan
	[ "$(jq -s '[.[].parts[] | select(.whole)] | length' plan)" -eq 0 ]
	# a subtask's key groups in parts of several shards, each part's rows in its key groups alone
	[ "$(parts_exact "$RKS" 7)" -ge 2 ]
	for opt in "-u keyed" "--state multiples-of-3" "--state _timer_state/event_user-timers" "-u keyed -k 4"; do
		ckpt-inspect -R $opt "$RKS" | LC_ALL=C sort >all
		[ -s all ]
		for ((i = 0; i < 7; i++)); do ckpt-inspect -R --shard "$i/7" $opt "$RKS"; done | LC_ALL=C sort | cmp - all
	done
	# -k: the key's rows in the one shard that holds its key group
	[ "$(for ((i = 0; i < 7; i++)); do ckpt-inspect -R --shard "$i/7" -u keyed -k 4 "$RKS" | grep -c . || :; done | grep -vc '^0$')" -eq 1 ]
	# --keep-going: a data block of one subtask damaged (the first SST inline in the
	# _metadata: the first, its start from its footer's meta index handle); the plan is the same
	cp -r "$RKS" k && chmod -R u+w k
	python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
end = b.find(bytes.fromhex("f7cff485b741e288")) + 8
def varint(i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if not c & 0x80: return v, i
off, i = varint(end - 52)
size, i = varint(i)
print(end - 53 - (off + size + 5) + 10)' k/_metadata >at
	printf '\377' | dd of=k/_metadata bs=1 seek="$(cat at)" conv=notrunc status=none
	ckpt-inspect --shards 7 k | cmp - plan
	ckpt-inspect -R --keep-going k 2>skipped | LC_ALL=C sort >all
	# the subtask the damage is in (which SST comes first depends on the harness run)
	op=$(sed -n 's/^ckpt-inspect: k: operator \([0-9a-f]*\) (uid [^)]*) subtask \([0-9]*\) skipped: .*/\1/p' skipped)
	sub=$(sed -n 's/^ckpt-inspect: k: operator \([0-9a-f]*\) (uid [^)]*) subtask \([0-9]*\) skipped: .*/\2/p' skipped)
	[ -n "$op" ] && [ -n "$sub" ] || { cat skipped; return 1; }
	# a shard whose parts of that subtask read the damaged block leaves the subtask out (exit 1, named);
	# the others print their rows (exit 0): the union holds every row -R --keep-going prints
	: >union
	local bad=0 first=
	for i in 0 1 2 3 4 5 6; do
		run --separate-stderr ckpt-inspect -R --shard "$i/7" --keep-going k
		if [ "$status" -eq 1 ]; then
			bad=$((bad + 1))
			first=${first:-$i}
			jq -s -e --argjson i "$i" --arg op "$op" --argjson sub "$sub" '.[$i] | any(.parts[]; .operator == $op and .subtask == $sub)' plan >/dev/null
			[[ $stderr == "ckpt-inspect: k: operator $op (uid "*") subtask $sub skipped: k/_metadata: cannot read: rocksdb: Corruption: block checksum mismatch: "* ]] ||
				{ echo "$stderr"; return 1; }
		else
			[ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "shard $i: status $status: $stderr"; return 1; }
		fi
		printf '%s\n' "$output" | grep . >>union || :
	done
	[ "$bad" -ge 1 ]
	[ -z "$(LC_ALL=C sort union | LC_ALL=C comm -13 - all)" ]
	# without --keep-going that shard stops at the damage
	run --separate-stderr ckpt-inspect -R --shard "$first/7" k
	[ "$status" -eq 2 ]
}
