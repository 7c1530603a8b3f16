#!/usr/bin/env bats
# ckpt-merge's edits of real Flink savepoints (issue 17), verified by Flink: Flink restores what
# `ckpt-merge ... -o OUTDIR/ SAVEPOINT` wrote.  The restores run through the harness's own entry point
# (`ckpt.flink.Main restore`, Restore.java), all of a Flink line in one JVM and one MiniCluster
# (setup_file), always without allowNonRestoredState; each writes what Flink's
# Checkpoints.loadCheckpointMetadata read ("metadata", the sidecars' shape) and what every operator
# restored ("reports", as restores/NAME-to-3.json hold them) or Flink's refusal ("message").
#
#   re-uid    --uid broadcast=broadcast-v2: restores into the job whose broadcast operator carries
#             uid broadcast-v2, every operator reporting what the plain restore of the unedited
#             savepoint reported; the unedited savepoint is refused by that job (Flink's "Cannot map
#             checkpoint/savepoint state for operator ...").
#   drop      --drop broadcast: restores into the job without the broadcast operator, and into the
#             job that keeps it, which then restores nothing; the unedited one is refused by the first.
#   relocate  the harness's retained checkpoint moved from relocate-old/ (gone) to relocated/, its
#             _metadata naming absolute paths under the old place: --relocate OLD=NEW restores.
#   carried   the RocksDB incremental checkpoint, whose _metadata names its shared files by absolute
#             paths, written unedited: every file it names is carried into the savepoint, which
#             names nothing outside itself, and restores what the checkpoint itself restores.
#   metadata  Flink reads every _metadata ckpt-merge wrote, equal to the input's but for the edit.
#
# The same assertions run on the State Processor API's own rewrites (the harness's edited/spa-reuid
# and edited/spa-drop, SavepointWriter.changeOperatorIdentifier / removeOperator), which must pass
# them, and on the unedited savepoints, which must fail them: the oracle that the checks can fail.
# The ckpt-merge tests skip while ckpt-merge cannot edit a savepoint (-h lists no --relocate).

load helper
bats_require_minimum_version 1.5.0

# ckpt-merge edits Flink savepoints: its help lists --relocate.
ckpt_writes() {
	ckpt-merge -h 2>&1 | grep -q -- '--relocate'
}

# The id of the operator with uid $2 in the job of sidecar $1.
op_id() {
	jq -r --arg u "$2" '.job.operators[] | select(.uid == $u) | .id' "$1"
}

# setup_file: per Flink line, the edits ckpt-merge makes (when it can) into $W/VERSION/NAME, then one
# JVM restores them all, beside the unedited savepoints and the State Processor API's rewrites (the
# two lines' JVMs at once).
setup_file() {
	local v b sp rl old new
	W=$BATS_FILE_TMPDIR
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		mkdir -p "$W/$v"
		set -- \
			"$W/$v/plain.json" "$b/savepoint-hashmap-canonical" \
			"$W/$v/unedited-reuid.json" "$b/savepoint-hashmap-canonical" --uid broadcast=broadcast-v2 \
			"$W/$v/unedited-without.json" "$b/savepoint-hashmap-canonical" --without broadcast \
			"$W/$v/unedited-empty.json" "$b/savepoint-hashmap-canonical" --empty broadcast \
			"$W/$v/spa-reuid.json" "$b/edited/spa-reuid" --uid broadcast=broadcast-v2 \
			"$W/$v/spa-drop-without.json" "$b/edited/spa-drop" --without broadcast \
			"$W/$v/spa-drop-empty.json" "$b/edited/spa-drop" --empty broadcast
		if ckpt_writes; then
			# ckpt-merge's exit status and stderr: $W/VERSION/NAME.ckpt; its savepoint: $W/VERSION/NAME
			for sp in savepoint-hashmap-canonical savepoint-rocksdb-native; do
				ckpt-merge --uid broadcast=broadcast-v2 -o "$W/$v/reuid-$sp/" "$b/$sp" >/dev/null 2>"$W/$v/reuid-$sp.ckpt" &&
					set -- "$@" "$W/$v/reuid-$sp.json" "$W/$v/reuid-$sp" --uid broadcast=broadcast-v2 \
						--backend "$(jq -r .backend "$b/sidecars/$sp.json")"
				echo "status $?" >>"$W/$v/reuid-$sp.ckpt"
				ckpt-merge --drop broadcast -o "$W/$v/drop-$sp/" "$b/$sp" >/dev/null 2>"$W/$v/drop-$sp.ckpt" &&
					set -- "$@" "$W/$v/drop-$sp.json" "$W/$v/drop-$sp" \
						"$([ "$sp" = savepoint-hashmap-canonical ] && echo --without || echo --empty)" broadcast \
						--backend "$(jq -r .backend "$b/sidecars/$sp.json")"
				echo "status $?" >>"$W/$v/drop-$sp.ckpt"
			done
			set -- "$@" "$W/$v/unedited-reuid-rocksdb.json" "$b/savepoint-rocksdb-native" --uid broadcast=broadcast-v2 --backend rocksdb
			rl=$(jq -r '.relocatable[0].path' "$b/index.json")
			old=$(jq -r '.relocatable[0].old_prefix' "$b/index.json")
			new="file:$(cd "$b/$(jq -r '.relocatable[0].new_dir' "$b/index.json")" && pwd)"
			ckpt-merge --relocate "$old=$new" -o "$W/$v/relocated/" "$b/$rl" >/dev/null 2>"$W/$v/relocated.ckpt" &&
				set -- "$@" "$W/$v/relocated.json" "$W/$v/relocated" --backend rocksdb
			echo "status $?" >>"$W/$v/relocated.ckpt"
			# the incremental checkpoint, its shared files named by absolute paths, carried whole
			rl=$(jq -r '.artifacts[] | select(.name == "checkpoint-rocksdb-incremental-2") | .path' "$b/index.json")
			ckpt-merge -o "$W/$v/carried/" "$b/$rl" >/dev/null 2>"$W/$v/carried.ckpt" &&
				set -- "$@" "$W/$v/carried.json" "$W/$v/carried" --backend rocksdb \
					"$W/$v/carried-source.json" "$b/$rl" --backend rocksdb
			echo "status $?" >>"$W/$v/carried.ckpt"
		fi
		restore_all "$v" "$@"
	done
	wait
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
}

# on_lines FUNC: FUNC VERSION SIDECAR PLAIN on each Flink line, which must be two: SIDECAR the
# sidecar of its savepoint-hashmap-canonical, PLAIN the harness's restore of that (restores/*-to-3).
on_lines() {
	local v n=0
	for v in $(flink_versions); do
		"$1" "$v" "$FLINK_OUT/$v/sidecars/savepoint-hashmap-canonical.json" \
			"$FLINK_OUT/$v/restores/savepoint-hashmap-canonical-to-3.json"
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || { echo "expected 2 Flink lines, found $n"; return 1; }
}

JQ_LOOSE='del(.checkpoint_id, .checkpoint_type, .format_type) | .operators |= sort_by(.id)'

# like_spa NAME OUT SPA_OUT: the metadata Flink read from ckpt-merge's rewrite equals what it read
# from the State Processor API's of the same edit, as far as that keeps the input (JQ_LOOSE).
like_spa() {
	diff -u <(jq -S ".metadata | $JQ_LOOSE" "$3") <(jq -S ".metadata | $JQ_LOOSE" "$2") >spa.diff ||
		{ echo "$1: the metadata differs from the State Processor API's rewrite ${3##*/}:"; head -40 spa.diff; return 1; }
}

# same_metadata NAME OUT SIDECAR EDIT [loose]: what Flink read from OUT's _metadata equals the
# sidecar's metadata with EDIT (jq, on .operators; $ENV.OLD, $ENV.NEW, $ENV.NEWUID) applied.  loose:
# operators compared as a set, the checkpoint id and properties left out (the State Processor API
# keeps neither the input's order nor its properties, and 1.20's writes checkpoint id 0).
same_metadata() {
	local norm=.
	[ "$(jq .metadata "$2")" != null ] || { echo "$1: Flink could not read the _metadata: $(jq -r .metadata_error "$2")"; return 1; }
	[ -z "${5:-}" ] || norm=$JQ_LOOSE
	diff -u <(jq -S ".metadata | .operators |= ($4) | $norm" "$3") <(jq -S ".metadata | $norm" "$2") >metadata.diff ||
		{ echo "$1: the metadata Flink read differs from the input's with the edit:"; head -40 metadata.diff; return 1; }
}

# A re-uid: OUT restored into the job with uid broadcast-v2, every operator reporting what PLAIN
# reported; Flink read the input's metadata with the broadcast operator's id (and uid, where the
# format holds it) changed.  check_reuid NAME OUT SIDECAR PLAIN [loose]
check_reuid() {
	restored "$1" "$2" || return 1
	OLD=$(op_id "$3" broadcast) NEW=$(op_id "$2" broadcast-v2) NEWUID=broadcast-v2
	export OLD NEW NEWUID
	[ -n "$NEW" ] && [ "$NEW" != "$OLD" ] || { echo "$1: the job has no operator broadcast-v2 of its own id"; return 1; }
	same_reports "$1" "$2" "$4" || return 1
	same_metadata "$1" "$2" "$3" 'map(if .id == $ENV.OLD then .id = $ENV.NEW | .uid |= (if . == null then null else $ENV.NEWUID end) else . end)' "${5:-}"
}

# A drop: OUT restored (without allowNonRestoredState), the broadcast operator, if in the job,
# restored nothing; every other operator reported what PLAIN reported; Flink read the input's
# metadata without the broadcast operator.  check_dropped NAME OUT SIDECAR PLAIN [loose]
check_dropped() {
	restored "$1" "$2" || return 1
	local left
	left=$(jq -c '[.reports[] | select(.uid == "broadcast") | select(.broadcast.rules != {})]' "$2")
	[ "$left" = '[]' ] || { echo "$1: the broadcast operator restored state: $left"; return 1; }
	same_reports "$1" "$2" "$4" 'map(select(.uid != "broadcast"))' || return 1
	OLD=$(op_id "$3" broadcast)
	export OLD
	same_metadata "$1" "$2" "$3" 'map(select(.id != $ENV.OLD))' "${5:-}"
}

# Flink refused OUT: "Cannot map checkpoint/savepoint state for operator ID to the new program".
check_refused() {
	[ -f "$2" ] || { echo "$1: no restore written"; return 1; }
	[ "$(jq -r .accepted "$2")" = false ] || { echo "$1: Flink restored it"; return 1; }
	jq -r .message "$2" | grep -q "Cannot map checkpoint/savepoint state for operator $3 to the new program, because the operator is not available in the new program\." ||
		{ echo "$1: not Flink's refusal: $(jq -r .message "$2")"; return 1; }
}

# The unedited savepoint through the entry point on line V: restored as the harness did, its metadata read.
plain_line() {
	restored "$1/plain" "$W/$1/plain.json"
	same_reports "$1/plain" "$W/$1/plain.json" "$3"
	same_metadata "$1/plain" "$W/$1/plain.json" "$2" .
}

@test "flink: the restore entry point restores an unedited savepoint as the harness did, and reads its metadata" {
	on_lines plain_line
}

# The State Processor API's re-uid on line V passes the re-uid checks; the unedited savepoint fails them.
spa_reuid_line() {
	check_reuid "$1/spa-reuid" "$W/$1/spa-reuid.json" "$2" "$3" loose
	check_refused "$1/unedited-reuid" "$W/$1/unedited-reuid.json" "$(op_id "$2" broadcast)"
	run check_reuid "$1/unedited-reuid" "$W/$1/unedited-reuid.json" "$2" "$3"
	[ "$status" -eq 1 ] || { echo "$1: the re-uid checks passed the unedited savepoint"; return 1; }
}

@test "flink: the State Processor API's re-uid passes the re-uid checks; the unedited savepoint fails them" {
	on_lines spa_reuid_line
}

# The State Processor API's drop on line V passes the drop checks; the unedited savepoint fails them.
spa_drop_line() {
	check_dropped "$1/spa-drop-without" "$W/$1/spa-drop-without.json" "$2" "$3" loose
	check_dropped "$1/spa-drop-empty" "$W/$1/spa-drop-empty.json" "$2" "$3" loose
	check_refused "$1/unedited-without" "$W/$1/unedited-without.json" "$(op_id "$2" broadcast)"
	run check_dropped "$1/unedited-without" "$W/$1/unedited-without.json" "$2" "$3"
	[ "$status" -eq 1 ] || { echo "$1: the drop checks passed the unedited savepoint (without broadcast)"; return 1; }
	run check_dropped "$1/unedited-empty" "$W/$1/unedited-empty.json" "$2" "$3"
	[ "$status" -eq 1 ] && [[ "$output" == *"the broadcast operator restored state"* ]] ||
		{ echo "$1: the drop checks passed the unedited savepoint (broadcast kept): $output"; return 1; }
}

@test "flink: the State Processor API's drop passes the drop checks; the unedited savepoint fails them" {
	on_lines spa_drop_line
}

@test "flink: the moved checkpoint's old place is gone, and Flink cannot restore it as it is" {
	local v n=0 b
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		[ "$(jq '.relocatable | length' "$b/index.json")" -eq 1 ] || { echo "$v: no relocatable checkpoint"; return 1; }
		[ ! -e "$(jq -r '.relocatable[0].old_dir' "$b/index.json")" ] || { echo "$v: the old place still exists"; return 1; }
		[ -f "$b/$(jq -r '.relocatable[0].path' "$b/index.json")/_metadata" ]
		# every state in a file of its own, named by its absolute path under the old place
		[ "$(grep -c "$(jq -r '.relocatable[0].old_dir' "$b/index.json")" "$b/$(jq -r '.relocatable[0].path' "$b/index.json")/_metadata")" -gt 0 ]
		jq -r '.relocatable[0].unmoved_restore_message' "$b/index.json" | grep -q '^java.io.FileNotFoundException: .*/relocate-old/' ||
			{ echo "$v: $(jq -r '.relocatable[0].unmoved_restore_message' "$b/index.json")"; return 1; }
		[ "$(jq '.reports | length' "$b/$(jq -r '.relocatable[0].restore_before_move' "$b/index.json")")" -gt 0 ]
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || { echo "expected 2 Flink lines, found $n"; return 1; }
}

# ckpt-merge -g agrees with Flink: with EDIT the savepoint SP maps onto the graph Flink generated for
# the job of restore OUT (exit 0), without it not (exit 1, nothing written).  graph_agrees NAME OUT SP EDIT...
graph_agrees() {
	local name=$1 out=$2 sp=$3
	shift 3
	jq .graph "$out" >graph.json
	[ "$(jq '.vertices | length' graph.json)" -gt 0 ] || { echo "$name: no graph in ${out##*/}"; return 1; }
	run --separate-stderr ckpt-merge "$@" -g graph.json -o with-edit/ "$sp"
	[ "$status" -eq 0 ] || { echo "$name: ckpt-merge $* -g: status $status: $stderr"; return 1; }
	run --separate-stderr ckpt-merge -g graph.json -o without-edit/ "$sp"
	[ "$status" -eq 1 ] && [ ! -e without-edit ] ||
		{ echo "$name: ckpt-merge -g without $*: status $status, $(ls -d without-edit 2>/dev/null): $stderr"; return 1; }
	rm -rf with-edit
}

# Each ckpt-merge run of setup_file: exit 0, nothing on stderr.
ckpt_ran() {
	local f=$W/$1.ckpt
	[ -f "$f" ] || { echo "$1: ckpt-merge did not run"; return 1; }
	[ "$(tail -1 "$f")" = "status 0" ] && [ "$(wc -l <"$f")" -eq 1 ] ||
		{ echo "$1: ckpt-merge: $(cat "$f")"; return 1; }
}

@test "flink: ckpt-merge --uid: Flink restores the re-uided savepoint into the job with the new uid, as before" {
	ckpt_writes || skip "ckpt-merge cannot write Flink savepoints yet"
	local v n=0 sp s bad=0
	for v in $(flink_versions); do
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-native; do
			s=$FLINK_OUT/$v/sidecars/$sp.json
			ckpt_ran "$v/reuid-$sp" || { bad=1; continue; }
			check_reuid "$v/reuid-$sp" "$W/$v/reuid-$sp.json" "$s" "$FLINK_OUT/$v/restores/$sp-to-3.json" || bad=1
			[ "$sp" != savepoint-hashmap-canonical ] || like_spa "$v/reuid-$sp" "$W/$v/reuid-$sp.json" "$W/$v/spa-reuid.json" || bad=1
			graph_agrees "$v/reuid-$sp" "$W/$v/spa-reuid.json" "$FLINK_OUT/$v/$sp" --uid broadcast=broadcast-v2 || bad=1
			n=$((n + 1))
		done
		check_refused "$v/unedited-reuid-rocksdb" "$W/$v/unedited-reuid-rocksdb.json" \
			"$(op_id "$FLINK_OUT/$v/sidecars/savepoint-rocksdb-native.json" broadcast)" || bad=1
	done
	[ "$n" -eq 4 ] || { echo "expected 2 savepoints for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

@test "flink: ckpt-merge --drop: Flink restores without allowNonRestoredState, the dropped state gone" {
	ckpt_writes || skip "ckpt-merge cannot write Flink savepoints yet"
	local v n=0 sp bad=0
	for v in $(flink_versions); do
		# savepoint-hashmap-canonical into the job without the operator, savepoint-rocksdb-native
		# into the job that keeps it
		for sp in savepoint-hashmap-canonical savepoint-rocksdb-native; do
			ckpt_ran "$v/drop-$sp" || { bad=1; continue; }
			check_dropped "$v/drop-$sp" "$W/$v/drop-$sp.json" "$FLINK_OUT/$v/sidecars/$sp.json" \
				"$FLINK_OUT/$v/restores/$sp-to-3.json" || bad=1
			[ "$sp" != savepoint-hashmap-canonical ] || like_spa "$v/drop-$sp" "$W/$v/drop-$sp.json" "$W/$v/spa-drop-without.json" || bad=1
			graph_agrees "$v/drop-$sp" "$W/$v/spa-drop-without.json" "$FLINK_OUT/$v/$sp" --drop broadcast || bad=1
			n=$((n + 1))
		done
	done
	[ "$n" -eq 4 ] || { echo "expected 2 savepoints for each of 2 Flink lines, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

@test "flink: ckpt-merge --relocate: Flink restores the moved checkpoint from its new place" {
	ckpt_writes || skip "ckpt-merge cannot write Flink savepoints yet"
	local v n=0 b
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		ckpt_ran "$v/relocated" || return 1
		[ ! -e "$(jq -r '.relocatable[0].old_dir' "$b/index.json")" ] || { echo "$v: the old place still exists"; return 1; }
		# no file the _metadata names is at the old place (inline handles keep their names: Flink
		# names small state it wrote inline by the file it would have been, and never opens it)
		run ckpt-inspect "$W/$v/relocated"
		[ "$status" -eq 0 ] || { echo "$v: ckpt-inspect: $output"; return 1; }
		[ "$(jq '[.flink.files[].path | select(contains("relocate-old"))] | length' <<<"$output")" -eq 0 ] &&
			[ "$(jq '.flink.files | length' <<<"$output")" -gt 0 ] || { echo "$v: the _metadata still names the old place"; return 1; }
		restored "$v/relocated" "$W/$v/relocated.json"
		same_reports "$v/relocated" "$W/$v/relocated.json" "$b/$(jq -r '.relocatable[0].restore_before_move' "$b/index.json")"
		same_metadata "$v/relocated" "$W/$v/relocated.json" "$b/$(jq -r '.relocatable[0].sidecar' "$b/index.json")" .
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || { echo "expected 2 Flink lines, found $n"; return 1; }
}

@test "flink: ckpt-merge -o DIR/ of an incremental checkpoint carries its shared files: Flink restores the same state from the savepoint alone" {
	ckpt_writes || skip "ckpt-merge cannot write Flink savepoints yet"
	local v n=0 outside
	for v in $(flink_versions); do
		ckpt_ran "$v/carried" || return 1
		outside=$(ckpt-inspect -m "$W/$v/carried" | jq -c '[.flink.files[] | select(.kind != "relative_file") | .path]')
		[ "$outside" = '[]' ] || { echo "$v: the savepoint names files outside itself: $outside"; return 1; }
		[ "$(ckpt-inspect -m "$W/$v/carried" | jq '.flink.files | length')" -gt 0 ] || { echo "$v: no file carried"; return 1; }
		restored "$v/carried-source" "$W/$v/carried-source.json"
		restored "$v/carried" "$W/$v/carried.json"
		same_reports "$v/carried" "$W/$v/carried.json" "$W/$v/carried-source.json"
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || { echo "expected 2 Flink lines, found $n"; return 1; }
}
