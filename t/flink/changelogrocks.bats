#!/usr/bin/env bats
# The changelog state backend over RocksDB with incremental checkpoints (Main.changelog:
# checkpoint-changelog-rocksdb): the materialized part is RocksDB's files, then the changes after
# it.  ckpt reads its state as Flink's ChangelogKeyedStateBackend restores it (RocksDB's entries,
# then the changes applied in order), and ckpt-merge --canonical converts it.
#
#   read      ckpt-inspect --raw -a and -R equal the job's own record of its state (the sidecar's
#             "contents"), -c finds nothing wrong, -k gives each key's rows alone.
#   restores  Flink restores the conversion on HashMap, RocksDB and (2.x) ForSt with heap timers,
#             every operator reporting what it reports restoring the checkpoint itself (Restore
#             --backend changelog-rocksdb), each key's count and sum those -R read.

load helper
bats_require_minimum_version 1.5.0

NAME=checkpoint-changelog-rocksdb

artifact_dir() {
	echo "$FLINK_OUT/$1/$(jq -r --arg n "$NAME" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$1/index.json")"
}

# backends VERSION: the backends the conversion is restored on (Restore --backend).
backends() {
	case $1 in
	1.*) echo hashmap rocksdb ;;
	*) echo hashmap rocksdb forst-heap ;;
	esac
}

setup_file() {
	local v dir
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --canonical || return 0
	for v in $(flink_versions); do
		mkdir -p "$W/$v"
		dir=$(artifact_dir "$v")
		[ -f "$dir/_metadata" ] || continue
		ckpt-merge --canonical -o "$W/$v/out/" "$dir" >/dev/null 2>"$W/$v/out.ckpt"
		echo "status $?" >>"$W/$v/out.ckpt"
		set -- "$W/$v/plain.json" "$dir" --backend changelog-rocksdb
		if [ -f "$W/$v/out/_metadata" ]; then
			for to in $(backends "$v"); do
				set -- "$@" "$W/$v/out-$to.json" "$W/$v/out" --backend "$to"
			done
		fi
		restore_all "$v" "$@"
	done
	wait
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	[ -n "$(flink_versions)" ] || skip "no harness artifacts (make flink-fixtures)"
}

# compare READER VERSION: READER (ckpt_state: --raw -a; ckpt_rows: -R) of the artifact, in the
# sidecar's shape, against the sidecar's contents; the differences printed, status 1 when any.
compare() {
	local side=$FLINK_OUT/$2/sidecars/$NAME.json
	"$1" "$(artifact_dir "$2")" st.json || { echo "$2: $1 failed ($?)"; return 1; }
	jq -s --slurpfile S "$side" "$JQ_STATE" st.json >ckpt.json
	jq .contents "$side" >flink.json
	[ "$(jq '.["keyed/0"].keys | length' flink.json)" -gt 0 ] || { echo "$2: the sidecar lists no keys"; return 1; }
	differ "$2/$NAME ($1)" ckpt.json flink.json
}

@test "changelog over RocksDB: every keyed handle is a changelog whose materialized part is RocksDB's files, some with changes after it" {
	local v n=0
	for v in $(flink_versions); do
		ckpt-inspect -a "$(artifact_dir "$v")" | jq -c '[.operators[].subtasks[].handles[]? | select(.kind == "changelog")
			| [(.materialized | map(.kind) | unique), ((.non_materialized | length) > 0)]] | unique' >kinds
		[ "$(jq -c 'map(.[0]) | unique' kinds)" = '[["incremental"]]' ] || { echo "$v: $(cat kinds)"; return 1; }
		[ "$(jq -c 'map(.[1]) | any' kinds)" = true ] || { echo "$v: no changes after the materialized part"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || { echo "expected the artifacts of 2 Flink lines, found $n"; return 1; }
}

@test "changelog over RocksDB: ckpt-inspect --raw -a and -R are what the job put in state; -c finds nothing wrong" {
	local v bad=0
	for v in $(flink_versions); do
		compare ckpt_state "$v" || bad=1
		compare ckpt_rows "$v" || bad=1
		run --separate-stderr ckpt-inspect -c "$(artifact_dir "$v")"
		if [ "$status" -ne 0 ] || [ -n "$stderr" ] || [ "$(jq -c '[.ok, .problems]' <<<"$output")" != '[true,[]]' ]; then
			echo "$v: -c: status $status: $stderr $output"
			bad=1
		fi
	done
	[ "$bad" -eq 0 ]
}

@test "changelog over RocksDB: the comparison fails on one value changed in the job's record" {
	local v=$(flink_versions | head -n 1) side
	side=$FLINK_OUT/$v/sidecars/$NAME.json
	ckpt_rows "$(artifact_dir "$v")" st.json
	jq -s --slurpfile S "$side" "$JQ_STATE" st.json >ckpt.json
	jq '.contents | .["keyed/0"].keys["4"].count += 1 | .["ambig/0"].keys.axx.visits.union += 1' "$side" >flink.json
	run differ x ckpt.json flink.json
	[ "$status" -eq 1 ]
	[ "${#lines[@]}" -eq 2 ]
}

@test "changelog over RocksDB: -k of every key the job wrote gives that key's rows alone" {
	local v op k dir n=0
	for v in $(flink_versions); do
		dir=$(artifact_dir "$v")
		for op in keyed ambig; do
			ckpt-inspect -R -u "$op" "$dir" >all.ndjson
			jq -c 'select(has("key_group")) | .key' all.ndjson | sort -u >keys
			[ -s keys ] || { echo "$v: $op: no keyed rows"; return 1; }
			while read -r k; do
				grep -F ",\"key\":$k,\"namespace\":" all.ndjson | sort >want
				ckpt-inspect -R -u "$op" -k "$k" "$dir" | sort | cmp -s - want || { echo "$v: $op: -k $k: not the key's rows"; return 1; }
				n=$((n + 1))
			done <keys
		done
	done
	[ "$n" -ge 20 ]
}

@test "changelog over RocksDB: Flink restores the --canonical conversion on HashMap, RocksDB and (2.x) ForSt, every operator restoring what the checkpoint restores" {
	local v to
	for v in $(flink_versions); do
		restored "$v $NAME (unconverted)" "$W/$v/plain.json"
		[ "$(jq '[.reports[] | select(.keys)] | length' "$W/$v/plain.json")" -gt 0 ]
		for to in $(backends "$v"); do
			restored "$v $NAME on $to" "$W/$v/out-$to.json" "$W/$v/out.ckpt"
			same_reports "$v $NAME on $to" "$W/$v/out-$to.json" "$W/$v/plain.json" 'map(del(.key_groups))'
		done
	done
}

@test "changelog over RocksDB: each key's count and sum Flink restored from the conversion are the values -R read from the checkpoint" {
	local v to id
	for v in $(flink_versions); do
		restored "$v $NAME on hashmap" "$W/$v/out-hashmap.json" "$W/$v/out.ckpt"
		id=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$W/$v/out-hashmap.json")
		ckpt-inspect -R "$(artifact_dir "$v")" | jq -c --arg id "$id" 'select(.operator == $id)' >keyed.rows
		for to in $(backends "$v"); do
			restored "$v $NAME on $to" "$W/$v/out-$to.json"
			same_keys "$v $NAME on $to" "$W/$v/out-$to.json" keyed.rows
		done
	done
}

@test "changelog over RocksDB: the conversion is a canonical savepoint holding the checkpoint's rows" {
	local v
	for v in $(flink_versions); do
		grep -qx 'status 0' "$W/$v/out.ckpt" || { echo "$v: ckpt-merge failed: $(cat "$W/$v/out.ckpt")"; return 1; }
		[ "$(ckpt-inspect -a "$W/$v/out" | jq -r '[.operators[].subtasks[]?.handles[]? | select(.scope == "managed_keyed")
			| .kind] | unique | join(",")')" = savepoint_key_groups ]
		[ "$(ckpt-inspect "$W/$v/out" | jq -r '.flink.properties.checkpoint_type.format_type // "none"')" = CANONICAL ]
		ckpt-inspect -R "$(artifact_dir "$v")" | jq -c 'del(.subtask)' | sort >in.rows
		[ "$(grep -c '"kind":"map"' in.rows)" -gt 0 ] && [ "$(grep -c '"kind":"list"' in.rows)" -gt 0 ] &&
			[ "$(grep -c '"kind":"timers"' in.rows)" -gt 0 ]
		ckpt-inspect -R "$W/$v/out" | jq -c 'del(.subtask)' | sort | diff -u in.rows - || { echo "$v: rows differ"; return 1; }
	done
}
