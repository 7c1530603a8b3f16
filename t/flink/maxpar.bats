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
#   -P        -P 3 --max-parallelism 8 (both canonical savepoints) and -P 1 --max-parallelism 200
#             (HashMap's): the keyed operators written at 3 and 1 subtasks, restored at those
#             parallelisms (restores/NAME-to-3.json and -to-1.json: the keyed operators 3 and 1),
#             every operator reporting what the unedited savepoint's restore at those reports.
#   --rows    rows.bats's edit (key 4 deleted, key 3 changed, key 42 added) with --max-parallelism
#             200 in the same write: the keyed operator reads exactly the rows given.

load helper
bats_require_minimum_version 1.5.0

# jq, after JQ_REPORTS: the key-group ranges and each key's key group left out, the keys of an
# operator gathered over its subtasks (a key moves to the subtask of its new key group).
JQ_MOVED='map(del(.key_groups) | (if .keys then .keys |= map_values(del(.key_group)) else . end))
	| group_by(.uid) | map(if .[0].keys then {uid: .[0].uid, keys: (map(.keys) | add)} else .[] end)'

# rows.bats's edit of the rows of "count" and "sum" (key 4 deleted, key 3 changed), on stdin.
EDIT='select(.key != 4)
	| if .key == 3 then .value = (if .state == "count" then 100 else 999 end) else . end'

# edit_rows V SP: rows.bats's rows of savepoint SP of line V (key 42 added, at a key group of the
# old max parallelism that ckpt-merge does not read), to $W/V/SP.rows.
edit_rows() {
	local b=$FLINK_OUT/$1 id
	id=$(ckpt-inspect -R -u keyed --state count "$b/$2" | jq -r .operator | head -1)
	{
		ckpt-inspect -R -u keyed --state count "$b/$2"
		ckpt-inspect -R -u keyed --state sum "$b/$2"
	} | jq -c "$EDIT" >"$W/$1/$2.rows"
	printf '{"operator":"%s","state":"count","key_group":0,"key":42,"namespace":null,"value":7}\n' "$id" >>"$W/$1/$2.rows"
	printf '{"operator":"%s","state":"sum","key_group":0,"key":42,"namespace":null,"value":4242}\n' "$id" >>"$W/$1/$2.rows"
}

# merged V NAME TO ARGS...: ckpt-merge ARGS -o $W/V/NAME/ (its status in NAME.ckpt), the restore
# request (at --max-parallelism MAX from ARGS, parallelisms TO) added to "$@" of the caller as REQ.
merged() {
	local v=$1 name=$2 to=$3 n
	shift 3
	n=$(sed -n 's/.*--max-parallelism \([0-9]*\).*/\1/p' <<<"$*")
	ckpt-merge "$@" -o "$W/$v/$name/" >/dev/null 2>"$W/$v/$name.ckpt" &&
		REQ+=("$W/$v/$name.json" "$W/$v/$name" --max-parallelism "$n" --to "$to" --backend "${name%%-*}")
	echo "status $?" >>"$W/$v/$name.ckpt"
}

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
		REQ=("$W/$v/plain-1.json" "$b/savepoint-hashmap-canonical" --to 1)
		for be in hashmap rocksdb; do
			merged "$v" "$be-P3-8" 3 -P 3 --max-parallelism 8 "$b/savepoint-$be-canonical"
			edit_rows "$v" "savepoint-$be-canonical"
			merged "$v" "$be-rows-200" 3 --rows "$W/$v/savepoint-$be-canonical.rows" --max-parallelism 200 \
				"$b/savepoint-$be-canonical"
		done
		merged "$v" hashmap-P1-200 1 -P 1 --max-parallelism 200 "$b/savepoint-hashmap-canonical"
		restore_all "$v" "$@" "${REQ[@]}"
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

# the keyed operators' parallelism, max parallelism and each subtask's key-group range, as Flink read
# the _metadata of the restore's savepoint.
JQ_KEYED_RANGES='[.metadata.operators[] | select(any(.subtasks[].handles[]; .scope == "managed_keyed"))
	| {parallelism, max_parallelism, ranges: [.subtasks[] | [.index, (.handles[] | select(.scope == "managed_keyed")
	| .key_groups)]]}] | unique'

@test "maxpar: -P with --max-parallelism: Flink restores the keyed operators at their new parallelism (3 at 8, 1 at 200), every operator restoring what the unedited savepoint's restore at that parallelism does" {
	local v be
	for v in $(flink_versions); do
		restored "$v plain-1" "$W/$v/plain-1.json"
		for be in hashmap rocksdb; do
			restored "$v $be -P 3 8" "$W/$v/$be-P3-8.json" "$W/$v/$be-P3-8.ckpt"
			[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/$be-P3-8.json")" = '[{"max_parallelism":8,"parallelism":3,"ranges":[[0,[0,2]],[1,[3,5]],[2,[6,7]]]}]' ]
			same_reports "$v $be -P 3 8" "$W/$v/$be-P3-8.json" "$W/$v/plain.json" "$JQ_MOVED"
		done
		restored "$v -P 1 200" "$W/$v/hashmap-P1-200.json" "$W/$v/hashmap-P1-200.ckpt"
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/hashmap-P1-200.json")" = '[{"max_parallelism":200,"parallelism":1,"ranges":[[0,[0,199]]]}]' ]
		same_reports "$v -P 1 200" "$W/$v/hashmap-P1-200.json" "$W/$v/plain-1.json" "$JQ_MOVED"
	done
}

@test "maxpar: --rows with --max-parallelism 200 in one write: Flink's keyed operator reads exactly the rows given, the others what they did" {
	local v be sp
	for v in $(flink_versions); do
		for be in hashmap rocksdb; do
			sp=savepoint-$be-canonical
			restored "$v $be rows 200" "$W/$v/$be-rows-200.json" "$W/$v/$be-rows-200.ckpt"
			[ "$(jq -r '.metadata.operators[0].max_parallelism' "$W/$v/$be-rows-200.json")" = 200 ]
			same_keys "$v $be rows 200" "$W/$v/$be-rows-200.json" "$W/$v/$sp.rows"
			[ "$(jq 'has("42") and has("3") and (has("4") | not)' rows-keys.json)" = true ]
			same_reports "$v $be rows 200 (another operator)" "$W/$v/$be-rows-200.json" "$W/$v/plain.json" \
				"$JQ_MOVED | map(select(.uid != \"keyed\"))"
			# the key group Flink computes for the added key at 200 is the one -R prints
			run jq -r '[.reports[] | select(.uid == "keyed") | .keys["42"] // empty] | .[0].key_group' "$W/$v/$be-rows-200.json"
			[ -n "$output" ] && [ "$output" != null ]
			[ "$(ckpt-inspect -R -u keyed --state count -k 42 "$W/$v/$be-rows-200" | jq .key_group)" = "$output" ]
		done
	done
}

@test "maxpar: -P 3 --max-parallelism 64 of the SQL job's savepoints keeps every row, each RowData key in the key group ckpt computes at 64" {
	local v sp n=0
	for v in $(flink_versions); do
		for sp in sql/sql-hashmap-canonical sql/sql-rocksdb-canonical; do
			[ -f "$FLINK_OUT/$v/$sp/_metadata" ] || continue
			rm -rf out again
			ckpt-merge -P 3 --max-parallelism 64 -o out/ "$FLINK_OUT/$v/$sp"
			ckpt-inspect -R "$FLINK_OUT/$v/$sp" | jq -c 'del(.key_group, .subtask)' | sort >in.rows
			[ -s in.rows ]
			ckpt-inspect -R out | jq -c 'del(.key_group, .subtask)' | sort | diff -u in.rows - || { echo "$v $sp: rows differ"; return 1; }
			ckpt-merge --max-parallelism 64 -o again/ out
			diff <(ckpt-inspect -R out | jq -c 'del(.subtask)' | sort) <(ckpt-inspect -R again | jq -c 'del(.subtask)' | sort) ||
				{ echo "$v $sp: a key not in its key group at 64"; return 1; }
			[ "$(ckpt-inspect -m out | jq -c '[.operators[] | select(.key_groups != {}) | .parallelism] | unique')" = '[3]' ]
			n=$((n + 1))
		done
	done
	[ "$n" -gt 0 ]
}
