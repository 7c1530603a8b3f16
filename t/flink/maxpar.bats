#!/usr/bin/env bats
# ckpt-merge --max-parallelism N (issue 40 section 2), verified by Flink: the state job's canonical
# savepoints (HashMap and RocksDB, max parallelism 32) rewritten at a smaller (8) and a larger (200,
# a two-byte key-group prefix) max parallelism, restored by the harness's entry point
# (`ckpt.flink.Main restore ... --max-parallelism N`, Restore.java: the job built with that max
# parallelism) on the backend that wrote them, at the parallelisms of restores/NAME-to-3.json.
#
#   restores  Flink accepts each rewrite, and every operator reports what it reported restoring the
#             unedited savepoint at 32 (the keyed operator's keys, counts and sums, whichever subtask
#             now holds them; Main checks each key lies in its subtask's key-group range).
#   groups    the key group Flink computes for each restored key (KeyGroupRangeAssignment at N) is
#             the one ckpt-inspect -R prints for it in the rewrite.
#   rows      ckpt-inspect -R of the rewrite prints the rows of the input but for key_group and subtask.
#   refusal   the unedited savepoint restored at max parallelism 8 is refused by Flink (the oracle
#             that the restores above are not accepted whatever the max parallelism).

load helper
bats_require_minimum_version 1.5.0

# jq, after JQ_REPORTS: the key-group ranges and each key's key group left out, the keys of an
# operator gathered over its subtasks (a key moves to the subtask of its new key group).
JQ_MOVED='map(del(.key_groups) | (if .keys then .keys |= map_values(del(.key_group)) else . end))
	| group_by(.uid) | map(if .[0].keys then {uid: .[0].uid, keys: (map(.keys) | add)} else .[] end)'

setup_file() {
	local v b sp n be
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --max-parallelism || return 0
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		mkdir -p "$W/$v"
		set -- "$W/$v/plain.json" "$b/savepoint-hashmap-canonical" \
			"$W/$v/unedited-8.json" "$b/savepoint-hashmap-canonical" --max-parallelism 8
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			be=$(jq -r .backend "$b/sidecars/$sp.json")
			for n in 8 200; do
				ckpt-merge --max-parallelism $n -o "$W/$v/$sp-$n/" "$b/$sp" >/dev/null 2>"$W/$v/$sp-$n.ckpt" &&
					set -- "$@" "$W/$v/$sp-$n.json" "$W/$v/$sp-$n" --max-parallelism $n --backend "$be"
				echo "status $?" >>"$W/$v/$sp-$n.ckpt"
			done
		done
		restore_all "$v" "$@"
	done
	wait
}

setup() {
	restore_setup --max-parallelism
}

# rewritten V SP N: ckpt-merge wrote it and Flink accepted its restore.
rewritten() {
	restored "$1 $2 $3" "$W/$1/$2-$3.json" "$W/$1/$2-$3.ckpt"
}

@test "maxpar: Flink restores each rewrite at its new max parallelism, every operator restoring what it did at 32" {
	local v sp n
	for v in $(flink_versions); do
		restored "$v plain" "$W/$v/plain.json"
		[ "$(jq "$JQ_REPORTS | $JQ_MOVED | map(select(.keys)) | length" "$W/$v/plain.json")" -gt 0 ] || return 1
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			for n in 8 200; do
				rewritten "$v" "$sp" "$n"
				[ "$(jq -r '.metadata.operators[0].max_parallelism' "$W/$v/$sp-$n.json")" = "$n" ]
				same_reports "$v $sp $n" "$W/$v/$sp-$n.json" "$W/$v/plain.json" "$JQ_MOVED"
			done
		done
	done
}

@test "maxpar: the key group Flink computes for each restored key is the one ckpt-inspect -R prints" {
	local v sp n id
	for v in $(flink_versions); do
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			for n in 8 200; do
				rewritten "$v" "$sp" "$n"
				# the operator by its id: Flink 1.x writes no uids into the _metadata
				id=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$W/$v/$sp-$n.json")
				jq -S '[.reports[] | select(.uid == "keyed") | .keys] | add | map_values(.key_group)' \
					"$W/$v/$sp-$n.json" >flink.json
				ckpt-inspect -R "$W/$v/$sp-$n" | jq -s -S --arg id "$id" 'map(select(.operator == $id and .state == "count")
					| {key: (.key | tostring), value: .key_group}) | from_entries' >ckpt.json
				[ "$(jq length flink.json)" -gt 0 ]
				diff -u flink.json ckpt.json || { echo "$v $sp $n: key groups differ"; return 1; }
			done
		done
	done
}

@test "maxpar: ckpt-inspect -R of each rewrite prints the input's rows but for key_group and subtask" {
	local v sp n
	for v in $(flink_versions); do
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			ckpt-inspect -R "$FLINK_OUT/$v/$sp" | jq -c 'del(.key_group, .subtask)' | sort >in.rows
			[ -s in.rows ]
			for n in 8 200; do
				rewritten "$v" "$sp" "$n"
				ckpt-inspect -R "$W/$v/$sp-$n" | jq -c 'del(.key_group, .subtask)' | sort >out.rows
				diff -u in.rows out.rows || { echo "$v $sp $n: rows differ"; return 1; }
			done
		done
	done
}

@test "maxpar: Flink refuses the unedited savepoint at max parallelism 8" {
	local v
	for v in $(flink_versions); do
		[ "$(jq -r .accepted "$W/$v/unedited-8.json")" = false ]
		jq -r .message "$W/$v/unedited-8.json" | grep -q 'Max parallelism mismatch between checkpoint/savepoint state and new program'
	done
}

@test "maxpar: at their own max parallelism (32) every key of the harness's savepoints, the SQL job's RowData keys too, stays in the key group Flink wrote it in" {
	local v sp
	for v in $(flink_versions); do
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-canonical sql/sql-hashmap-canonical; do
			[ -f "$FLINK_OUT/$v/$sp/_metadata" ] || continue
			rm -rf out
			ckpt-merge --max-parallelism 32 -o out/ "$FLINK_OUT/$v/$sp"
			ckpt-inspect -R "$FLINK_OUT/$v/$sp" | jq -c 'del(.subtask)' | sort >in.rows
			[ -s in.rows ]
			ckpt-inspect -R out | jq -c 'del(.subtask)' | sort | diff -u in.rows - || { echo "$v $sp: rows differ"; return 1; }
		done
	done
}
