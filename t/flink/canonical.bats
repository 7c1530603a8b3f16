#!/usr/bin/env bats
# ckpt-merge --canonical (issue 40 section 1), verified by Flink: the state job's aligned HashMap
# checkpoint (heap snapshot files) and RocksDB incremental checkpoint (RocksDB's own files), each
# converted into a canonical savepoint and restored by the harness's entry point (`ckpt.flink.Main
# restore`, Restore.java) on the HashMap and the RocksDB backend, at the parallelisms of
# restores/NAME-to-3.json.  (ForSt is not restored here: Restore.java offers hashmap and rocksdb.)
#
#   restores  Flink accepts each conversion on either backend, and every operator reports what it
#             reports restoring the checkpoint itself on the backend that wrote it.
#   rows      what the keyed operator restored (each key's count, sum and timers' presence) is what
#             ckpt-inspect -R read from the checkpoint.
#   form      each conversion is a canonical savepoint: KeyGroupsSavepointStateHandle keyed handles,
#             the properties of a CANONICAL SavepointType, the rows of the checkpoint.

load helper
bats_require_minimum_version 1.5.0

# ckpt-merge --canonical exists: its help lists it.
ckpt_converts() {
	ckpt-merge -h 2>&1 | grep -q -- '--canonical'
}

# The checkpoints converted: the harness's artifact name, the backend that wrote it.
SOURCES='checkpoint-hashmap-aligned:hashmap checkpoint-rocksdb-incremental-2:rocksdb'

# jq: a restore's reports, lists sorted, key-group ranges left out, by uid and subtask.
JQ_REPORTS='[.reports[] | (if .list then .list |= map_values(sort) else . end)
	| (if .union then .union |= map_values(sort) else . end) | del(.key_groups)] | sort_by(.uid, .subtask)'

setup_file() {
	local v b name be sp to
	W=$BATS_FILE_TMPDIR
	ckpt_converts || return 0
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		mkdir -p "$W/$v"
		set --
		for sp in $SOURCES; do
			name=${sp%:*} be=${sp#*:}
			jq -r --arg n "$name" '.artifacts[] | select(.name == $n) | .path' "$b/index.json" >"$W/$v/$name.path"
			set -- "$@" "$W/$v/$name-plain.json" "$b/$(cat "$W/$v/$name.path")" --backend "$be"
			ckpt-merge --canonical -o "$W/$v/$name/" "$b/$(cat "$W/$v/$name.path")" >/dev/null 2>"$W/$v/$name.ckpt"
			echo "status $?" >>"$W/$v/$name.ckpt"
			[ -f "$W/$v/$name/_metadata" ] || continue
			for to in hashmap rocksdb; do
				set -- "$@" "$W/$v/$name-$to.json" "$W/$v/$name" --backend "$to"
			done
		done
		{ flink_java "$v" restore "$@" >"$W/$v/restore.log" 2>&1 || echo "status $?" >>"$W/$v/restore.log"; } &
	done
	wait
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	ckpt_converts || skip "ckpt-merge has no --canonical"
	[ -n "$(flink_versions)" ] || skip "no harness artifacts (make flink-fixtures)"
}

# accepted FILE WHAT: Flink restored it.
accepted() {
	[ -f "$1" ] || { echo "$2: no restore written ($(tail -3 "${1%/*}/restore.log"))"; return 1; }
	[ "$(jq -r .accepted "$1")" = true ] || { echo "$2: Flink refused: $(jq -r .message "$1")"; return 1; }
}

# converted V NAME: ckpt-merge wrote it.
converted() {
	grep -qx 'status 0' "$W/$1/$2.ckpt" || { echo "$1 $2: ckpt-merge failed: $(cat "$W/$1/$2.ckpt")"; return 1; }
}

@test "canonical: Flink restores each conversion on HashMap and RocksDB, every operator restoring what the checkpoint restores" {
	local v sp name to
	for v in $(flink_versions); do
		for sp in $SOURCES; do
			name=${sp%:*}
			converted "$v" "$name"
			accepted "$W/$v/$name-plain.json" "$v $name (unconverted)"
			[ "$(jq '[.reports[] | select(.keys)] | length' "$W/$v/$name-plain.json")" -gt 0 ]
			for to in hashmap rocksdb; do
				accepted "$W/$v/$name-$to.json" "$v $name on $to"
				diff -u <(jq -S "$JQ_REPORTS" "$W/$v/$name-plain.json") <(jq -S "$JQ_REPORTS" "$W/$v/$name-$to.json") ||
					{ echo "$v $name on $to: the reports differ from the checkpoint's own restore"; return 1; }
			done
		done
	done
}

@test "canonical: each key's count and sum restored by Flink are the values ckpt-inspect -R read from the checkpoint" {
	local v sp name to id
	for v in $(flink_versions); do
		for sp in $SOURCES; do
			name=${sp%:*}
			converted "$v" "$name"
			id=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$W/$v/$name-hashmap.json")
			ckpt-inspect -R "$FLINK_OUT/$v/$(cat "$W/$v/$name.path")" |
				jq -s -S --arg id "$id" 'map(select(.operator == $id and (.state == "count" or .state == "sum")))
					| group_by(.key | tostring) | map({key: (.[0].key | tostring),
					value: (map({key: .state, value: .value}) | from_entries)}) | from_entries' >ckpt.json
			[ "$(jq length ckpt.json)" -gt 0 ]
			for to in hashmap rocksdb; do
				accepted "$W/$v/$name-$to.json" "$v $name on $to"
				jq -S '[.reports[] | select(.uid == "keyed") | .keys] | add | map_values({count, sum})' \
					"$W/$v/$name-$to.json" >flink.json
				diff -u ckpt.json flink.json || { echo "$v $name on $to: restored values differ from the rows"; return 1; }
			done
		done
	done
}

@test "canonical: each conversion is a canonical savepoint holding the checkpoint's rows" {
	local v sp name
	for v in $(flink_versions); do
		for sp in $SOURCES; do
			name=${sp%:*}
			converted "$v" "$name"
			ckpt-inspect -a "$W/$v/$name" | jq -r '[.operators[].subtasks[]?.handles[]? | select(.scope == "managed_keyed")
				| .kind] | unique | join(",")' >kinds
			[ "$(cat kinds)" = savepoint_key_groups ]
			[ "$(ckpt-inspect "$W/$v/$name" | jq -r '.flink.properties.checkpoint_type.format_type // "none"')" = CANONICAL ]
			ckpt-inspect -R "$FLINK_OUT/$v/$(cat "$W/$v/$name.path")" | jq -c 'del(.subtask)' | sort >in.rows
			[ -s in.rows ]
			ckpt-inspect -R "$W/$v/$name" | jq -c 'del(.subtask)' | sort | diff -u in.rows - ||
				{ echo "$v $name: rows differ"; return 1; }
		done
	done
}

@test "canonical: the harness's unaligned checkpoint, with records in flight, is refused naming the operator, subtask and bytes; nothing written" {
	local v
	for v in $(flink_versions); do
		rm -f unaligned
		ln -s "$FLINK_OUT/$v/$(jq -r '.artifacts[] | select(.name == "checkpoint-unaligned") | .path' "$FLINK_OUT/$v/index.json")" unaligned
		run --separate-stderr ckpt-merge --canonical -o out/ unaligned
		[ "$status" -eq 1 ] && [ -z "$output" ] || { echo "$v: status $status: $stderr"; return 1; }
		[[ $stderr =~ ^ckpt-merge:\ unaligned/_metadata:\ operator\ [0-9a-f]{32}\ subtask\ [0-9]+:\ [1-9][0-9]*\ bytes\ of\ in-flight\ data\ \((input|output)_channel\ state\ of\ an\ unaligned\ checkpoint\):\ a\ savepoint\ holds\ none\;\ restore\ the\ checkpoint\ on\ Flink\ and\ take\ a\ savepoint$ ]] ||
			{ echo "$v: $stderr"; return 1; }
		[ "$(ls -A | grep -c '^out')" -eq 0 ]
	done
}

@test "canonical: the TTL job's snapshots (HashMap, RocksDB, ForSt and ForSt with State V2; savepoints and checkpoints) convert holding the same rows" {
	local v d n=0
	for v in $(flink_versions); do
		for d in "$FLINK_OUT/$v"/ttl/ttl-* "$FLINK_OUT/$v"/ttl/checkpoints/*/*/chk-*; do
			[ -f "$d/_metadata" ] || continue
			rm -rf out
			ckpt-merge --canonical -o out/ "$d" || { echo "$d: ckpt-merge failed"; return 1; }
			ckpt-inspect -R "$d" | jq -c 'del(.subtask)' | sort >in.rows
			ckpt-inspect -R out | jq -c 'del(.subtask)' | sort | diff -u in.rows - || { echo "$d: rows differ"; return 1; }
			n=$((n + 1))
		done
	done
	[ "$n" -gt 0 ]
}
