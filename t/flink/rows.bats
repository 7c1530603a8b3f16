#!/usr/bin/env bats
# ckpt-merge --rows (issue 40 section 3), verified by Flink: the state job's canonical savepoints
# (HashMap and RocksDB) with rows of the keyed operator's states "count" (ValueState<Long>) and
# "sum" (ReducingState<Long>) deleted (key 4), changed (key 3) and added (key 42), restored by the
# harness's entry point (`ckpt.flink.Main restore`, Restore.java) on the backend that wrote them.
#
#   restores  Flink accepts each edited savepoint, and the keyed operator reports (from its
#             restored state: the keys of "count", each key's count and sum) exactly the rows
#             given; every other operator reports what it reported restoring the unedited one.
#   groups    the key group Flink computes for the added key is the one ckpt-inspect -R prints.
#   oracle    the unedited savepoint's reports differ from the edited rows (the check can fail).

load helper
bats_require_minimum_version 1.5.0

# ckpt-merge writes rows back: its help lists --rows.
ckpt_writes_rows() {
	ckpt-merge -h 2>&1 | grep -q -- '--rows'
}

# jq: a restore's reports but the keyed operator's, lists sorted, by operator and subtask.
JQ_OTHERS='[.reports[] | select(.uid != "keyed") | (if .list then .list |= map_values(sort) else . end)
	| (if .union then .union |= map_values(sort) else . end)] | sort_by(.uid, .subtask)'
# jq: the keyed operator's keys over its subtasks: {key: {count, sum}}.
JQ_KEYS='[.reports[] | select(.uid == "keyed") | .keys] | add | map_values({count, sum})'
# jq (slurped rows): the same from the rows given.
JQ_ROWS='map(select(.state == "count" or .state == "sum")) | group_by(.key)
	| map({key: (.[0].key | tostring), value: (map({(.state): .value}) | add)}) | from_entries'

# edit: the rows of "count" and "sum" of the savepoint on stdin, edited (key 4 deleted, key 3
# changed, key 42 added with a key group ckpt-merge does not read).
EDIT='select(.key != 4)
	| if .key == 3 then .value = (if .state == "count" then 100 else 999 end) else . end'

setup_file() {
	local v b sp be id
	W=$BATS_FILE_TMPDIR
	ckpt_writes_rows || return 0
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		mkdir -p "$W/$v"
		set -- "$W/$v/plain.json" "$b/savepoint-hashmap-canonical"
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			be=$(jq -r .backend "$b/sidecars/$sp.json")
			# the operator by the id Flink derives from its uid (Flink 1.x writes no uids)
			id=$(ckpt-inspect -R -u keyed --state count "$b/$sp" | jq -r .operator | head -1)
			{
				ckpt-inspect -R -u keyed --state count "$b/$sp"
				ckpt-inspect -R -u keyed --state sum "$b/$sp"
			} | jq -c "$EDIT" >"$W/$v/$sp.rows"
			printf '{"operator":"%s","state":"count","key_group":0,"key":42,"namespace":null,"value":7}\n' "$id" >>"$W/$v/$sp.rows"
			printf '{"operator":"%s","state":"sum","key_group":0,"key":42,"namespace":null,"value":4242}\n' "$id" >>"$W/$v/$sp.rows"
			ckpt-merge --rows "$W/$v/$sp.rows" -o "$W/$v/$sp/" "$b/$sp" >/dev/null 2>"$W/$v/$sp.ckpt" &&
				set -- "$@" "$W/$v/$sp.json" "$W/$v/$sp" --backend "$be"
			echo "status $?" >>"$W/$v/$sp.ckpt"
		done
		{ flink_java "$v" restore "$@" >"$W/$v/restore.log" 2>&1 || echo "status $?" >>"$W/$v/restore.log"; } &
	done
	wait
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	ckpt_writes_rows || skip "ckpt-merge has no --rows"
	[ -n "$(flink_versions)" ] || skip "no harness artifacts (make flink-fixtures)"
}

# edited V SP: ckpt-merge wrote it and Flink accepted its restore.
edited() {
	grep -qx 'status 0' "$W/$1/$2.ckpt" || { echo "$1 $2: ckpt-merge failed: $(cat "$W/$1/$2.ckpt")"; return 1; }
	[ -f "$W/$1/$2.json" ] || { echo "$1 $2: no restore written ($(tail -3 "$W/$1/restore.log"))"; return 1; }
	[ "$(jq -r .accepted "$W/$1/$2.json")" = true ] ||
		{ echo "$1 $2: Flink refused: $(jq -r .message "$W/$1/$2.json")"; return 1; }
}

@test "rows: Flink restores each edited savepoint, its keyed operator reading exactly the rows given" {
	local v sp
	for v in $(flink_versions); do
		[ "$(jq -r .accepted "$W/$v/plain.json")" = true ] || { echo "$v: the plain restore failed"; return 1; }
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			edited "$v" "$sp"
			jq -s -S "$JQ_ROWS" "$W/$v/$sp.rows" >given.json
			jq -S "$JQ_KEYS" "$W/$v/$sp.json" >flink.json
			[ "$(jq 'has("42") and has("3") and (has("4") | not)' given.json)" = true ]
			diff -u given.json flink.json || { echo "$v $sp: Flink read other keys or values"; return 1; }
			diff -u <(jq -S "$JQ_OTHERS" "$W/$v/plain.json") <(jq -S "$JQ_OTHERS" "$W/$v/$sp.json") ||
				{ echo "$v $sp: another operator's reports changed"; return 1; }
		done
	done
}

@test "rows: the key group Flink computes for the added key is the one ckpt-inspect -R prints" {
	local v sp
	for v in $(flink_versions); do
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			edited "$v" "$sp"
			run jq -r '[.reports[] | select(.uid == "keyed") | .keys["42"] // empty] | .[0].key_group' "$W/$v/$sp.json"
			[ -n "$output" ] && [ "$output" != null ]
			[ "$(ckpt-inspect -R -u keyed --state count -k 42 "$W/$v/$sp" | jq .key_group)" = "$output" ]
		done
	done
}

@test "rows: the unedited savepoint's keys are not the rows given (the oracle)" {
	local v
	for v in $(flink_versions); do
		jq -s -S "$JQ_ROWS" "$W/$v/savepoint-hashmap-canonical.rows" >given.json
		jq -S "$JQ_KEYS" "$W/$v/plain.json" >plain.json
		! diff -q given.json plain.json >/dev/null
	done
}
