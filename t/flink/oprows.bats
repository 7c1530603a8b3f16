#!/usr/bin/env bats
# ckpt-merge --rows on operator state (issue 40 section 3), verified by Flink: the state job's
# savepoints (the HashMap canonical one, and the RocksDB native one: operator state is written
# alike in every form) with the rows of map-list's list state "buffer" (an element deleted on
# subtask 1, one moved from subtask 2 to subtask 0, one added on subtask 2), src-union's union
# state "union-offsets" (an element changed) and broadcast's broadcast state "rules" (r2 deleted, r1
# changed, r9 added, on every subtask) edited, restored by the harness's entry point (`ckpt.flink.Main
# restore`, Restore.java) at the job's own parallelisms (--to 2) on the backend that wrote them.
#
#   restores  Flink accepts each edited savepoint; each subtask of map-list restores exactly the
#             rows of its subtask, in their order; each subtask of src-union the union of the rows;
#             each subtask of broadcast the rows' map; every other operator what it restored from
#             the unedited savepoint.
#   oracle    the unedited savepoint's restore differs from the rows (the check can fail).
#   refusal   a row of a subtask that finished (checkpoint-hashmap-finished's src-finishing 0)
#             names its line, exit 2, nothing written.

load helper
bats_require_minimum_version 1.5.0

SPS="savepoint-hashmap-canonical savepoint-rocksdb-native"

# the edit of the rows of the three operators' operator state (-R, on stdin)
EDIT='select(.value != "m1:1" and .user_key != "r2")
	| if .value == "m2:3" then .subtask = 0 else . end
	| if .value == "u0:meta" then .value = "u0:edited" else . end
	| if .user_key == "r1" then .value = 11 else . end'

# jq, a restore: what map-list, src-union and broadcast restored, by "UID/SUBTASK" (lists in the
# order restored, the union's sorted: each subtask gets every handle's, in an order of its own).
JQ_OPS='[.reports[] | select(.uid == "map-list" or .uid == "src-union" or .uid == "broadcast")
	| {key: "\(.uid)/\(.subtask)", value: (if .list then .list.buffer elif .union then (.union["union-offsets"] | sort) else .broadcast.rules end)}]
	| from_entries'
# jq, slurping the rows: the same as they say it (src-union and broadcast at parallelism 2).
JQ_ROWS_OPS='(map(select(.state == "buffer")) | group_by(.subtask)
		| map({key: "map-list/\(.[0].subtask)", value: map(.value)}))
	+ (map(select(.state == "union-offsets") | .value) | sort as $u | [0, 1] | map({key: "src-union/\(.)", value: $u}))
	+ (map(select(.state == "rules")) | group_by(.subtask)
		| map({key: "broadcast/\(.[0].subtask)", value: (map({(.user_key): .value}) | add)}))
	| from_entries'

setup_file() {
	local v b sp be
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --rows || return 0
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		mkdir -p "$W/$v"
		set --
		for sp in $SPS; do
			be=$(jq -r .backend "$b/sidecars/$sp.json")
			set -- "$@" "$W/$v/plain-$sp.json" "$b/$sp" --backend "$be" --to 2
			{
				ckpt-inspect -R -u map-list -u src-union -u broadcast "$b/$sp" | grep -v '"key_group"' | jq -c "$EDIT"
				id=$(ckpt-inspect -R -u map-list "$b/$sp" | jq -r .operator | head -1)
				printf '{"operator":"%s","state":"buffer","subtask":2,"value":"m2:new"}\n' "$id"
				id=$(ckpt-inspect -R -u broadcast "$b/$sp" | jq -r .operator | head -1)
				printf '{"operator":"%s","state":"rules","subtask":%s,"user_key":"r9","value":9}\n' "$id" 0 "$id" 1
			} >"$W/$v/$sp.rows"
			ckpt-merge --rows "$W/$v/$sp.rows" -o "$W/$v/$sp/" "$b/$sp" >/dev/null 2>"$W/$v/$sp.ckpt" &&
				set -- "$@" "$W/$v/$sp.json" "$W/$v/$sp" --backend "$be" --to 2
			echo "status $?" >>"$W/$v/$sp.ckpt"
		done
		restore_all "$v" "$@"
	done
	wait
}

setup() {
	restore_setup --rows
}

# same_ops NAME OUT ROWS: what map-list, src-union and broadcast restored (restore OUT) is what the
# rows ROWS say; else the difference, status 1.
same_ops() {
	jq -s -S "$JQ_ROWS_OPS" "$3" >rows-ops.json
	[ "$(jq length rows-ops.json)" -eq 7 ] || { echo "$1: not 7 subtasks in the rows ${3##*/}"; return 1; }
	jq -S "$JQ_OPS" "$2" >restored-ops.json
	diff -u rows-ops.json restored-ops.json >ops.diff ||
		{ echo "$1: Flink restored other operator state than the rows ${3##*/}:"; head -40 ops.diff; return 1; }
}

@test "oprows: Flink restores each edited savepoint, its operator state exactly the rows given" {
	local v sp
	for v in $(flink_versions); do
		for sp in $SPS; do
			restored "$v plain $sp" "$W/$v/plain-$sp.json"
			restored "$v $sp" "$W/$v/$sp.json" "$W/$v/$sp.ckpt"
			same_ops "$v $sp" "$W/$v/$sp.json" "$W/$v/$sp.rows"
			[ "$(jq -c '.["map-list/0"], .["broadcast/1"].r9' rows-ops.json)" = '["m0:0","m0:1","m2:3"]
9' ]
			same_reports "$v $sp (another operator)" "$W/$v/$sp.json" "$W/$v/plain-$sp.json" \
				'map(select(.uid != "map-list" and .uid != "src-union" and .uid != "broadcast"))'
			ckpt-inspect -c "$W/$v/$sp" | jq -e .ok >/dev/null
		done
	done
}

@test "oprows: the unedited savepoint's operator state is not the rows given (the oracle)" {
	local v sp
	for v in $(flink_versions); do
		for sp in $SPS; do
			run same_ops "$v plain" "$W/$v/plain-$sp.json" "$W/$v/$sp.rows"
			[ "$status" -eq 1 ] && [[ $output == "$v plain: Flink restored other operator state than the rows $sp.rows:"* ]] ||
				{ echo "$v $sp: the unedited savepoint passed: $output"; return 1; }
		done
	done
}

@test "oprows: a row of a finished subtask, which holds no operator state, is refused naming its line" {
	local v c id
	for v in $(flink_versions); do
		c=$FLINK_OUT/$v/$(jq -r '.artifacts[] | select(.name == "checkpoint-hashmap-finished") | .path' "$FLINK_OUT/$v/index.json")
		id=$(ckpt-inspect -R -u src-finishing "$c" | jq -r .operator | head -1)
		echo '{"operator":"'$id'","state":"positions","subtask":0,"value":"f0:1"}' >r
		run --separate-stderr ckpt-merge --rows r -o out/ "$c"
		[ "$status" -eq 2 ] && [ -z "$output" ] && [ "$stderr" = "ckpt-merge: r:1: operator $id subtask 0 holds no operator state positions to write into (finished, or the state was never registered there)" ] ||
			{ echo "$v: status $status: $stderr"; return 1; }
		[ "$(ls -A | grep -c '^out')" -eq 0 ]
	done
}
