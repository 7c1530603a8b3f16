#!/usr/bin/env bats
# A changelog checkpoint whose materialized part is RocksDB's files (an incremental snapshot,
# ckpt-flink(5), CHANGELOG STATE): the keyed state of that part read through RocksDB, as Flink's
# ChangelogKeyedStateBackend restores it.  The part is a real one: the files of the RocksDB handle of
# a fixture's keyed operator (41e91aae..., subtask 1: a value state and two timer states in key
# group 1 of 4), wrapped in a changelog handle with no changes after it (t/flink/changelogrocks.bats
# has Flink's own, with changes).  Damage to those files is named, exit 2.

load helper
load flinkstate-helper

FX_OP=41e91aae0bee218c44306cf7d21940ad
FX() {
	echo "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.17-rocksdb-checkpoint"
}

# clr_dir: cl/_metadata, one operator (0102..0f10, parallelism 1, max parallelism 4) whose subtask 0
# holds a changelog handle of key group 1: materialized, the fixture's RocksDB handle (its files
# copied into cl/, CURRENT kept inline in the _metadata), no changes after it.
clr_dir() {
	local h f n local_name path size
	rm -rf cl
	mkdir cl
	h=$(ckpt-inspect -a "$(FX)" | jq -c --arg op "$FX_OP" '.operators[] | select(.id == $op) | .subtasks[1].handles[]
		| select(.scope == "managed_keyed")')
	for f in $(jq -r '.meta.path, .private[].path' <<<"$h"); do cp "$(FX)/$f" cl/; done
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 1; b_i32 4
	b_u8 0; b_i32 1; b_i32 0
	b_i32 0; b_i32 0
	b_u8 14; b_i32 1; b_i32 1; b_i64 100; b_i32 1
	b_u8 11; b_i64 1; b_utf backend; b_i32 1; b_i32 1; b_i64 0
	b_delegate rel "$(jq -r .meta.path <<<"$h")" "$(jq -r .meta.size <<<"$h")"
	b_i32 0
	n=$(jq '.private | length' <<<"$h")
	b_i32 "$n"
	while read -r local_name path size; do
		b_utf "$local_name"
		if [ "$local_name" = CURRENT ]; then
			b_delegate inline "cl/$path" "$size"
			rm "cl/$path"
		else
			b_delegate rel "$path" "$size"
		fi
	done < <(jq -r '.private[] | "\(.local_name) \(.path) \(.size)"' <<<"$h")
	b_utf h
	b_i32 0
	b_i64 1; b_i64 9; b_utf h3
	b_u8 0; b_i32 0; b_i32 0
	b_write cl/_metadata
}

# The keyed rows of the fixture's subtask 1 (and of cl): state, key group, key, namespace, value;
# processing-time timers hold the wall clock, kept as they are (the same bytes in both).
rows() {
	jq -c 'select(has("key_group")) | [.state, .kind, .key_group, .key, .namespace, .value]' | sort
}

@test "changelogrocks: -R and -a of a changelog whose materialized part is RocksDB's files give that part's entries" {
	needs_fixtures
	clr_dir
	ckpt-inspect -R -u 41e91aae0bee218c44306cf7d21940ad "$(FX)" | jq -c 'select(.subtask == 1)' | rows >want
	[ "$(wc -l <want)" -eq 3 ]
	run --separate-stderr sh -c 'ckpt-inspect -R cl | jq -c "select(has(\"key_group\")) | [.state, .kind, .key_group, .key, .namespace, .value]" | sort'
	status_is 0
	match_golden want
	run --separate-stderr ckpt-inspect -a cl
	status_is 0
	run sh -c 'ckpt-inspect -a cl | jq -c "[.operators[0].subtasks[0].keyed_state.entries[] | [.state, .key_group, .key, .namespace]]"'
	output_is '[["_timer_state/processing_timer",1,[3],3],["_timer_state/event_timer",1,[3],3],["state-name",1,[3],3]]'
	run sh -c 'ckpt-inspect cl | jq -c "[.operators[0].flink_state.states[] | [.name, .entries, .kind]]"'
	output_is '[["_timer_state/processing_timer",1,"timers"],["_timer_state/event_timer",1,"timers"],["state-name",1,"value"]]'
	run ckpt-inspect -c cl
	status_is 0
	[ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[true,[]]' ]
}

@test "changelogrocks: ckpt-merge --canonical of it is a canonical savepoint with the same rows" {
	needs_fixtures
	clr_dir
	ckpt-inspect -R cl | jq -c 'del(.subtask)' | sort >in.rows
	[ "$(wc -l <in.rows)" -eq 3 ]
	run ckpt-merge --canonical -o out/ cl
	status_is 0
	run sh -c 'ckpt-inspect -R out | jq -c "del(.subtask)" | sort'
	output_is "$(cat in.rows)"
	run sh -c 'ckpt-inspect -a out | jq -c "[.operators[].subtasks[].handles[] | select(.scope == \"managed_keyed\") | .kind]"'
	output_is '["savepoint_key_groups"]'
}

@test "changelogrocks: a cut or missing RocksDB file of the materialized part: one line, exit 2; nothing written" {
	needs_fixtures
	local sst
	clr_dir
	sst=$(ckpt-inspect -a cl | jq -r '.operators[0].subtasks[0].handles[] | select(.kind == "changelog") | .materialized[0].private[]
		| select(.local_name == "000016.sst") | .path')
	head -c 500 "cl/$sst" >cut && mv cut "cl/$sst"
	bad 2 "ckpt-inspect: cl/$sst: short: 500 bytes, the _metadata records 983" ckpt-inspect -R cl
	bad 2 "ckpt-merge: cl/$sst: short: 500 bytes, the _metadata records 983" ckpt-merge --canonical -o out/ cl
	[ ! -e out ]
	rm "cl/$sst"
	run --separate-stderr ckpt-inspect -R cl
	status_is 2
	[ -z "$output" ] && [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr == "ckpt-inspect: cl/$sst: cannot open the RocksDB file 000016.sst: No such file or directory" ]]
}

@test "changelogrocks: flipped bytes in an SST or the meta data file of the materialized part: one line, exit 2" {
	needs_fixtures
	local f at
	for f in sst meta; do
		clr_dir
		if [ $f = sst ]; then
			f=$(ckpt-inspect -a cl | jq -r '.operators[0].subtasks[0].handles[] | select(.kind == "changelog")
				| .materialized[0].private[] | select(.local_name == "000016.sst") | .path')
			at=100
		else
			f=$(ckpt-inspect -a cl | jq -r '.operators[0].subtasks[0].handles[] | select(.kind == "changelog") | .materialized[0].meta.path')
			at=20
		fi
		printf '\377\377\377\377' | dd of="cl/$f" bs=1 seek=$at conv=notrunc 2>/dev/null
		run --separate-stderr ckpt-inspect -R cl
		status_is 2
		[ -z "$output" ] && [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || { echo "$f: $stderr"; return 1; }
		[[ $stderr == "ckpt-inspect: "* ]]
		run --separate-stderr ckpt-merge --canonical -o out/ cl
		status_is 2
		[ ! -e out ] && [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	done
}

@test "changelogrocks: the _metadata cut anywhere in the changelog handle's RocksDB part: one line, exit 2" {
	needs_fixtures
	local n size
	clr_dir
	run ckpt-inspect -R cl/_metadata
	status_is 0
	size=$(wc -c <cl/_metadata)
	for ((n = 40; n < size; n += 37)); do
		head -c "$n" cl/_metadata >cut.meta
		run --separate-stderr ckpt-inspect -R cut.meta
		[ "$status" -eq 2 ] && [ -z "$output" ] && [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] ||
			{ echo "cut at $n: status $status: $stderr"; return 1; }
	done
}
