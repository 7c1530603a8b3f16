#!/usr/bin/env bats
# ckpt-merge --canonical (issue 40 section 1), verified by Flink: the state job's aligned HashMap
# checkpoint (heap snapshot files), RocksDB incremental checkpoint (RocksDB's own files) and changelog
# checkpoint with a materialized part (Restore --backend changelog restores it unconverted), each
# converted into a canonical savepoint and restored by the harness's entry point (`ckpt.flink.Main
# restore`, Restore.java) on the HashMap and the RocksDB backend and, on Flink 2.x, on ForSt, at the
# parallelisms of restores/NAME-to-3.json.
#
#   restores  Flink accepts each conversion on each backend, and every operator reports what it
#             reports restoring the checkpoint itself on the backend that wrote it.
#   rows      what the keyed operator restored (each key's count and sum) is what ckpt-inspect -R
#             read from the checkpoint.
#   forst     ForSt (2.3.0) restores a canonical savepoint only with its timers on the heap
#             (forst-heap: state.backend.forst.timer-service.factory HEAP, ForStHeapTimersFull-
#             RestoreOperation); with its default timers (ForStDB) it refuses every canonical
#             savepoint, Flink's own too, with one message (ForStSyncKeyedStateBackendBuilder).
#   form      each conversion is a canonical savepoint: KeyGroupsSavepointStateHandle keyed handles,
#             the properties of a CANONICAL SavepointType, the rows of the checkpoint.

load helper
bats_require_minimum_version 1.5.0

# The checkpoints converted: the harness's artifact name, the backend that wrote it.
SOURCES='checkpoint-hashmap-aligned:hashmap checkpoint-rocksdb-incremental-2:rocksdb checkpoint-changelog-materialized:changelog'

# backends VERSION: the backends each conversion is restored on (Restore --backend).
backends() {
	case $1 in
	1.*) echo hashmap rocksdb ;;
	*) echo hashmap rocksdb forst-heap ;;
	esac
}

# What ForSt 2.3.0 with its default timer service throws restoring any canonical savepoint.
FORST_REFUSAL='java.lang.UnsupportedOperationException: Not support restoring yet for ForStStateBackend'

setup_file() {
	local v b name be sp to
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --canonical || return 0
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
			for to in $(backends "$v"); do
				set -- "$@" "$W/$v/$name-$to.json" "$W/$v/$name" --backend "$to"
			done
			case $v in 1.*) ;; *) set -- "$@" "$W/$v/$name-forst.json" "$W/$v/$name" --backend forst ;; esac
		done
		# Flink's own canonical savepoint on ForSt with its default timers
		case $v in 1.*) ;; *) set -- "$@" "$W/$v/flink-canonical-forst.json" "$b/savepoint-hashmap-canonical" --backend forst ;; esac
		restore_all "$v" "$@"
	done
	wait
}

setup() {
	restore_setup --canonical
}

@test "canonical: Flink restores each conversion on HashMap, RocksDB and (2.x) ForSt, every operator restoring what the checkpoint restores" {
	local v sp name to
	for v in $(flink_versions); do
		for sp in $SOURCES; do
			name=${sp%:*}
			restored "$v $name (unconverted)" "$W/$v/$name-plain.json"
			[ "$(jq '[.reports[] | select(.keys)] | length' "$W/$v/$name-plain.json")" -gt 0 ]
			for to in $(backends "$v"); do
				restored "$v $name on $to" "$W/$v/$name-$to.json" "$W/$v/$name.ckpt"
				same_reports "$v $name on $to" "$W/$v/$name-$to.json" "$W/$v/$name-plain.json" 'map(del(.key_groups))'
			done
		done
	done
}

@test "canonical: each key's count and sum restored by Flink are the values ckpt-inspect -R read from the checkpoint" {
	local v sp name to id
	for v in $(flink_versions); do
		for sp in $SOURCES; do
			name=${sp%:*}
			restored "$v $name on hashmap" "$W/$v/$name-hashmap.json" "$W/$v/$name.ckpt"
			id=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$W/$v/$name-hashmap.json")
			ckpt-inspect -R "$FLINK_OUT/$v/$(cat "$W/$v/$name.path")" | jq -c --arg id "$id" 'select(.operator == $id)' >keyed.rows
			for to in $(backends "$v"); do
				restored "$v $name on $to" "$W/$v/$name-$to.json"
				same_keys "$v $name on $to" "$W/$v/$name-$to.json" keyed.rows
			done
		done
	done
}

@test "canonical: ForSt with its default timers refuses each conversion as it refuses Flink's own canonical savepoint, with Flink's message" {
	local v f n=0
	for v in $(flink_versions); do
		case $v in 1.*) continue ;; esac
		for f in flink-canonical $SOURCES; do
			f=$W/$v/${f%:*}-forst.json
			[ -f "$f" ] || { echo "$v ${f##*/}: no restore written ($(tail -3 "$W/$v/restore.log"))"; return 1; }
			[ "$(jq -r .accepted "$f")" = false ] || { echo "$v ${f##*/}: ForSt restored it"; return 1; }
			[ "$(jq -r .message "$f")" = "$FORST_REFUSAL" ] || { echo "$v ${f##*/}: $(jq -r .message "$f")"; return 1; }
		done
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || skip "no Flink 2.x line"
}

@test "canonical: each conversion is a canonical savepoint holding the checkpoint's rows" {
	local v sp name
	for v in $(flink_versions); do
		for sp in $SOURCES; do
			name=${sp%:*}
			grep -qx 'status 0' "$W/$v/$name.ckpt" || { echo "$v $name: ckpt-merge failed: $(cat "$W/$v/$name.ckpt")"; return 1; }
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

@test "canonical: the changelog checkpoint without a materialized part is refused naming ambig's state, whose key serializer it does not record; nothing written" {
	local v
	for v in $(flink_versions); do
		rm -f chk
		ln -s "$FLINK_OUT/$v/$(jq -r '.artifacts[] | select(.name == "checkpoint-changelog") | .path' "$FLINK_OUT/$v/index.json")" chk
		run --separate-stderr ckpt-merge --canonical -o out/ chk
		[ "$status" -eq 1 ] && [ -z "$output" ] || { echo "$v: status $status: $stderr"; return 1; }
		[ "$stderr" = "ckpt-merge: chk/_metadata: operator ffbb303c356ee15e3ec72d55fe9d8b05 subtask 0: state \"visits\" of a changelog cannot go into a savepoint's keyed header: the changelog records no key serializer (no materialized part, no timer state)" ] ||
			{ echo "$v: $stderr"; return 1; }
		[ "$(ls -A | grep -c '^out')" -eq 0 ]
	done
}
