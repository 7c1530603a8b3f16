#!/usr/bin/env bats
# ckpt-merge --max-parallelism N, -P N and -g (issue 40 section 2) on the changelog state backend's
# checkpoints, verified by Flink.  The harness's three (Main.changelog): checkpoint-changelog-
# materialized (m: a heap materialized part and the changes after it), checkpoint-changelog-rocksdb
# (r: RocksDB's files, then the changes) and checkpoint-changelog (l: changes only; ambig's states
# record no key serializer, so ckpt refuses them, and `--drop ambig` leaves the keyed operator,
# whose key serializer its timers' serializer nests).  A changelog checkpoint becomes a canonical
# savepoint in the same write (--max-parallelism alone refuses it, naming --canonical).  Each
# rewrite is restored by `ckpt.flink.Main restore` (Restore.java) with the job built at its max
# parallelism, on the backend named:
#
#   m-8       --canonical --max-parallelism 8                       hashmap   to-3
#   m-200     --canonical --max-parallelism 200                     rocksdb   to-3
#   m-P1-200  --canonical -P 1 --max-parallelism 200                hashmap   to-1
#   m-P3      --canonical -P 3 (max parallelism 32 kept)            rocksdb   to-3
#   m-g8      --canonical --max-parallelism 8 -g GRAPH (to-1 at 8)  hashmap   to-1
#   r-8       --canonical --max-parallelism 8                       rocksdb   to-3
#   r-200     --canonical --max-parallelism 200                     hashmap   to-3
#   r-P3-8    --canonical -P 3 --max-parallelism 8                  rocksdb   to-3
#   r-P1      --canonical -P 1                                      hashmap   to-1
#   l-8       --canonical --drop ambig --max-parallelism 8          hashmap   to-3, ambig empty
#   l-200     --canonical --drop ambig -P 3 --max-parallelism 200   rocksdb   to-3, ambig empty
#   m-P1-2    --canonical -P 1 --max-parallelism 2                  hashmap   to-1 at 2
#   r-2       --canonical --max-parallelism 2                       rocksdb   to-1 at 2
#
# (at max parallelism 2 the operators with operator state alone above it, src-finishing and map-list
# at 3, are written at -P's 1 or at 2, their list state redistributed as Flink's restore at that
# parallelism does; Flink cannot load them at 3)
# and, unconverted, each checkpoint on the changelog backend that wrote it at to-3 (m and r at to-1
# too): Flink's own rescaling, the judge of every operator's reports; m and r at max parallelism 8,
# which Flink refuses.  Left out (each restore costs seconds): every rewrite on both backends and
# ForSt (canonical.bats and changelogrocks.bats restore --canonical alone on all of them), -P 2.
#
#   restores  Flink accepts each rewrite; every operator reports what it reports restoring the
#             checkpoint itself at those parallelisms (the keyed operator's keys, counts and sums
#             whichever subtask holds them); the keyed operators' ranges are KeyGroupRangeAssignment's.
#   groups    the key group Flink computes for each restored key at the new max parallelism is the
#             one ckpt-inspect -R prints in the rewrite; ambig's keys at 8 are in the key group the
#             job's record gives them at 32, modulo 8 (Flink's murmur hash, modulo either).
#   rows      each key's count and sum Flink restored are -R's of the checkpoint (one edited row
#             makes the comparison fail); -R of each rewrite is -R of the checkpoint but for
#             key_group and subtask.
#   refusals  Flink refuses the unconverted checkpoints at max parallelism 8; ckpt-merge -g with
#             the graph at 8 refuses the conversion at 32 in Flink's words; what ckpt-merge refuses
#             on a changelog checkpoint, one line each, nothing written.

load helper
bats_require_minimum_version 1.5.0

# jq, after JQ_REPORTS: the key-group ranges and each key's key group left out, the keys of an
# operator gathered over its subtasks (maxpar.bats's).
JQ_MOVED='map(del(.key_groups) | (if .keys then .keys |= map_values(del(.key_group)) else . end))
	| group_by(.uid) | map(if .[0].keys then {uid: .[0].uid, keys: (map(.keys) | add)} else .[] end)'

# The rewrites: NAME SOURCE RESTORE-OPTIONS -- CKPT-MERGE-OPTIONS (GRAPH8: the graph at 8).
REWRITES='m-8 m --max-parallelism 8 --backend hashmap -- --max-parallelism 8
m-200 m --max-parallelism 200 --backend rocksdb -- --max-parallelism 200
m-P1-200 m --max-parallelism 200 --backend hashmap --to 1 -- -P 1 --max-parallelism 200
m-P3 m --backend rocksdb -- -P 3
m-g8 m --max-parallelism 8 --backend hashmap --to 1 -- --max-parallelism 8 -g GRAPH8
r-8 r --max-parallelism 8 --backend rocksdb -- --max-parallelism 8
r-200 r --max-parallelism 200 --backend hashmap -- --max-parallelism 200
r-P3-8 r --max-parallelism 8 --backend rocksdb -- -P 3 --max-parallelism 8
r-P1 r --backend hashmap --to 1 -- -P 1
l-8 l --max-parallelism 8 --backend hashmap --empty ambig -- --drop ambig --max-parallelism 8
l-200 l --max-parallelism 200 --backend rocksdb --empty ambig -- --drop ambig -P 3 --max-parallelism 200
m-P1-2 m --max-parallelism 2 --backend hashmap --to 1 -- -P 1 --max-parallelism 2
r-2 r --max-parallelism 2 --backend rocksdb --to 1 -- --max-parallelism 2'

# src_name S: the harness's artifact of source S; src_backend S: the backend that wrote it.
src_name() {
	case $1 in
	m) echo checkpoint-changelog-materialized ;;
	r) echo checkpoint-changelog-rocksdb ;;
	l) echo checkpoint-changelog ;;
	esac
}
src_backend() {
	case $1 in r) echo changelog-rocksdb ;; *) echo changelog ;; esac
}

# src_dir V S: the checkpoint directory of source S of line V.
src_dir() {
	echo "$FLINK_OUT/$1/$(jq -r --arg n "$(src_name "$2")" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$1/index.json")"
}

# graph8 V: the job graph of the restores at to-1 (restores/savepoint-hashmap-canonical-to-1.json,
# the one Flink generated), every vertex at max parallelism 8, to $W/V/graph8.json.
graph8() {
	jq '.graph | .vertices[].max_parallelism = 8' "$FLINK_OUT/$1/restores/savepoint-hashmap-canonical-to-1.json" >"$W/$1/graph8.json"
}

# plain_of NAME: the unconverted restore a rewrite's reports are compared with.
plain_of() {
	local s=${1%%-*}
	case " $(grep "^$1 " <<<"$REWRITES") " in
	*" --to 1 "*) echo "$s-plain-1" ;;
	*) echo "$s-plain" ;;
	esac
}

setup_file() {
	local v line name s ropts mopts st fin
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --max-parallelism || return 0
	for v in $(flink_versions); do
		mkdir -p "$W/$v"
		graph8 "$v"
		set --
		for s in m r l; do
			set -- "$@" "$W/$v/$s-plain.json" "$(src_dir "$v" "$s")" --backend "$(src_backend "$s")"
		done
		for s in m r; do
			set -- "$@" "$W/$v/$s-plain-1.json" "$(src_dir "$v" "$s")" --backend "$(src_backend "$s")" --to 1 \
				"$W/$v/$s-unedited-8.json" "$(src_dir "$v" "$s")" --backend "$(src_backend "$s")" --max-parallelism 8
		done
		while read -r line; do
			name=${line%% *}
			line=${line#* }
			s=${line%% *}
			line=${line#* }
			ropts=${line%% -- *}
			mopts=${line#* -- }
			mopts=${mopts//GRAPH8/$W/$v/graph8.json}
			st=0
			# shellcheck disable=SC2086
			ckpt-merge --canonical $mopts -o "$W/$v/$name/" "$(src_dir "$v" "$s")" >/dev/null 2>"$W/$v/$name.ckpt" || st=$?
			echo "status $st" >>"$W/$v/$name.ckpt"
			# shellcheck disable=SC2086
			[ "$st" -ne 0 ] || set -- "$@" "$W/$v/$name.json" "$W/$v/$name" $ropts
		done <<<"$REWRITES"
		# the heap checkpoint after src-finishing's subtask 0 and all of src-done finished, at max parallelism 1
		fin=$FLINK_OUT/$v/$(jq -r '.artifacts[] | select(.name == "checkpoint-hashmap-finished") | .path' "$FLINK_OUT/$v/index.json")
		st=0
		ckpt-merge --canonical -P 1 --max-parallelism 1 -o "$W/$v/f-P1-1/" "$fin" >/dev/null 2>"$W/$v/f-P1-1.ckpt" || st=$?
		echo "status $st" >>"$W/$v/f-P1-1.ckpt"
		set -- "$@" "$W/$v/f-plain-1.json" "$fin" --to 1
		[ "$st" -ne 0 ] || set -- "$@" "$W/$v/f-P1-1.json" "$W/$v/f-P1-1" --max-parallelism 1 --to 1
		restore_all "$v" "$@"
	done
	wait
}

setup() {
	restore_setup --max-parallelism
}

# max_of NAME: the max parallelism the rewrite was written at (32: kept).
max_of() {
	local m
	m=$(grep "^$1 " <<<"$REWRITES" | sed -n 's/.* -- .*--max-parallelism \([0-9]*\).*/\1/p')
	echo "${m:-32}"
}

# keyed_id V NAME [UID]: the id of the operator of uid UID (keyed), from the restore's job (Flink 1.x
# writes no uids into the _metadata).
keyed_id() {
	jq -r --arg u "${3:-keyed}" '.job.operators[] | select(.uid == $u) | .id' "$W/$1/$2.json"
}

@test "changelogpar: Flink restores each rewrite at its new max parallelism and parallelism, every operator restoring what the checkpoint restores" {
	local v name n plain filter
	for v in $(flink_versions); do
		for plain in m-plain m-plain-1 r-plain r-plain-1 l-plain; do
			restored "$v $plain (unconverted)" "$W/$v/$plain.json"
			[ "$(jq "$JQ_REPORTS | $JQ_MOVED | map(select(.keys)) | length" "$W/$v/$plain.json")" -gt 0 ] || return 1
		done
		while read -r name _; do
			restored "$v $name" "$W/$v/$name.json" "$W/$v/$name.ckpt"
			n=$(max_of "$name")
			[ "$(jq -c '[.metadata.operators[].max_parallelism] | unique' "$W/$v/$name.json")" = "[$n]" ] ||
				{ echo "$v $name: max parallelism not $n"; return 1; }
			filter=$JQ_MOVED
			[ "${name%%-*}" != l ] || filter="$JQ_MOVED | map(select(.uid != \"ambig\"))"
			same_reports "$v $name" "$W/$v/$name.json" "$W/$v/$(plain_of "$name").json" "$filter"
		done <<<"$REWRITES"
	done
}

# the keyed operators' parallelism, max parallelism and each subtask's key-group range, as Flink read
# the _metadata of the restore's savepoint (maxpar.bats's).
JQ_KEYED_RANGES='[.metadata.operators[] | select(any(.subtasks[].handles[]; .scope == "managed_keyed"))
	| {parallelism, max_parallelism, ranges: [.subtasks[] | [.index, (.handles[] | select(.scope == "managed_keyed")
	| .key_groups)]]}] | unique'

@test "changelogpar: with -P the keyed operators are written at their new parallelism, each subtask at KeyGroupRangeAssignment's range, and Flink restores them there" {
	local v
	for v in $(flink_versions); do
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/m-P1-200.json")" = '[{"max_parallelism":200,"parallelism":1,"ranges":[[0,[0,199]]]}]' ]
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/m-P3.json")" = '[{"max_parallelism":32,"parallelism":3,"ranges":[[0,[0,10]],[1,[11,21]],[2,[22,31]]]}]' ]
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/r-P3-8.json")" = '[{"max_parallelism":8,"parallelism":3,"ranges":[[0,[0,2]],[1,[3,5]],[2,[6,7]]]}]' ]
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/r-P1.json")" = '[{"max_parallelism":32,"parallelism":1,"ranges":[[0,[0,31]]]}]' ]
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/l-200.json")" = '[{"max_parallelism":200,"parallelism":3,"ranges":[[0,[0,66]],[1,[67,133]],[2,[134,199]]]}]' ]
		# without -P the parallelism stays the checkpoint's (2)
		[ "$(jq -S -c "$JQ_KEYED_RANGES" "$W/$v/m-8.json")" = '[{"max_parallelism":8,"parallelism":2,"ranges":[[0,[0,3]],[1,[4,7]]]}]' ]
		# Flink restored each at the parallelism of its request (the keyed operator's reports)
		[ "$(jq -c '[.reports[] | select(.uid == "keyed") | .key_groups]' "$W/$v/r-P3-8.json")" = '[[0,2],[3,5],[6,7]]' ]
		[ "$(jq -c '[.reports[] | select(.uid == "keyed") | .key_groups]' "$W/$v/m-P1-200.json")" = '[[0,199]]' ]
	done
}

@test "changelogpar: at max parallelism 2 the operators with operator state alone at 3 (src-finishing, map-list) are written at -P 1 or at 2, and Flink restores what it restores from the checkpoint" {
	local v name want u id
	for v in $(flink_versions); do
		for name in m-P1-2 r-2; do
			restored "$v $name" "$W/$v/$name.json" "$W/$v/$name.ckpt"
			want=2
			[ "$name" != m-P1-2 ] || want=1
			for u in src-finishing map-list; do
				id=$(keyed_id "$v" "$name" "$u")
				[ "$(ckpt-inspect -m "$W/$v/$name" | jq -c --arg id "$id" '.operators[] | select(.id == $id) | [.parallelism, .subtasks]')" = "[$want,$want]" ] ||
					{ echo "$v $name: $u not written at $want"; return 1; }
				[ "$(ckpt-inspect -m "$(src_dir "$v" "${name%%-*}")" | jq -c --arg id "$id" '.operators[] | select(.id == $id) | .parallelism')" = 3 ]
			done
			# src-finishing's list state: every element once, as Flink's own restore of the checkpoint hands it
			[ "$(jq -c "$JQ_REPORTS | map(select(.uid == \"src-finishing\"))" "$W/$v/$name.json")" = \
				"$(jq -c "$JQ_REPORTS | map(select(.uid == \"src-finishing\"))" "$W/$v/$(plain_of "$name").json")" ]
			[ "$(jq -c "$JQ_REPORTS | map(select(.uid == \"src-finishing\")) | length" "$W/$v/$name.json")" = 1 ]
		done
	done
}

@test "changelogpar: at max parallelism 1 a partly finished operator with list state (src-finishing, subtask 0 finished) and a fully finished one (src-done) are written at 1, and Flink restores what it restores from the checkpoint" {
	local v id
	for v in $(flink_versions); do
		restored "$v f-P1-1" "$W/$v/f-P1-1.json" "$W/$v/f-P1-1.ckpt"
		id=$(keyed_id "$v" f-P1-1 src-finishing)
		[ "$(ckpt-inspect -m "$W/$v/f-P1-1" | jq -c --arg id "$id" '.operators[] | select(.id == $id) | [.parallelism, .subtasks, .finished_subtasks]')" = '[1,1,""]' ]
		id=$(keyed_id "$v" f-P1-1 src-done)
		[ "$(ckpt-inspect -m "$W/$v/f-P1-1" | jq -c --arg id "$id" '.operators[] | select(.id == $id) | [.parallelism, .fully_finished]')" = '[1,true]' ]
		same_reports "$v f-P1-1" "$W/$v/f-P1-1.json" "$W/$v/f-plain-1.json" "$JQ_MOVED"
	done
}

@test "changelogpar: -g checked the conversion against the job graph Flink then ran (to-1, max parallelism 8)" {
	local v
	for v in $(flink_versions); do
		restored "$v m-g8" "$W/$v/m-g8.json" "$W/$v/m-g8.ckpt"
		diff -u <(jq -S '.vertices |= sort_by(.id)' "$W/$v/graph8.json") <(jq -S '.graph | .vertices |= sort_by(.id)' "$W/$v/m-g8.json") ||
			{ echo "$v: the graph given to -g is not the one Flink generated"; return 1; }
	done
}

@test "changelogpar: the key group Flink computes for each restored key is the one ckpt-inspect -R prints; ambig's at 8 are the job's at 32 modulo 8" {
	local v name id side aid
	for v in $(flink_versions); do
		while read -r name _; do
			id=$(keyed_id "$v" "$name")
			jq -S '[.reports[] | select(.uid == "keyed") | .keys] | add | map_values(.key_group)' "$W/$v/$name.json" >flink.json
			ckpt-inspect -R -u "$id" "$W/$v/$name" | jq -s -S 'map(select(.state == "count")
				| {key: (.key | tostring), value: .key_group}) | from_entries' >ckpt.json
			[ "$(jq length flink.json)" -eq 10 ] || { echo "$v $name: $(jq length flink.json) keys restored"; return 1; }
			diff -u flink.json ckpt.json || { echo "$v $name: key groups differ"; return 1; }
		done <<<"$REWRITES"
		for name in m-8 r-8 r-P3-8 m-g8; do
			side=$FLINK_OUT/$v/sidecars/$(src_name "${name%%-*}").json
			aid=$(keyed_id "$v" "$name" ambig)
			jq -S '[.contents | to_entries[] | select(.key | startswith("ambig/")) | .value.keys | to_entries[]
				| {key, value: (.value.key_group % 8)}] | from_entries' "$side" >job.json
			ckpt-inspect -R -u "$aid" "$W/$v/$name" | jq -s -S 'map({key, value: .key_group}) | unique | from_entries' >ckpt.json
			[ "$(jq length job.json)" -eq 3 ] || { echo "$v $name: the job recorded $(jq length job.json) ambig keys"; return 1; }
			diff -u job.json ckpt.json || { echo "$v $name: ambig's key groups differ"; return 1; }
		done
	done
}

@test "changelogpar: each key's count and sum Flink restored from each rewrite are those -R read from the checkpoint" {
	local v name id
	for v in $(flink_versions); do
		while read -r name _; do
			restored "$v $name" "$W/$v/$name.json"
			id=$(keyed_id "$v" "$name")
			ckpt-inspect -R -u "$id" "$(src_dir "$v" "${name%%-*}")" >keyed.rows
			same_keys "$v $name" "$W/$v/$name.json" keyed.rows
		done <<<"$REWRITES"
	done
}

@test "changelogpar: the comparison fails on one row changed (a count) or moved to another key group" {
	local v=$(flink_versions | head -n 1) id
	id=$(keyed_id "$v" m-8)
	ckpt-inspect -R -u "$id" "$(src_dir "$v" m)" >keyed.rows
	same_keys x "$W/$v/m-8.json" keyed.rows
	jq -c 'if .state == "count" and .key == 3 then .value += 1 else . end' keyed.rows >edited.rows
	run same_keys x "$W/$v/m-8.json" edited.rows
	[ "$status" -eq 1 ] && [[ $output == *'"count": '* ]] || { echo "$output"; return 1; }
	# a key group -R would print wrongly is seen by the key-group comparison's diff
	jq -S '[.reports[] | select(.uid == "keyed") | .keys] | add | map_values(.key_group)' "$W/$v/m-8.json" >flink.json
	jq '.["3"] = ((.["3"] + 1) % 8)' flink.json >wrong.json
	run diff -u flink.json wrong.json
	[ "$status" -eq 1 ]
}

@test "changelogpar: ckpt-inspect -R of each rewrite prints the checkpoint's rows but for key_group and subtask (and a list element's index, where its operator moved: m-P1-2, r-2)" {
	local v name s u f
	for v in $(flink_versions); do
		while read -r name s _; do
			u=
			[ "$s" != l ] || u=keyed
			f='del(.key_group, .subtask)'
			[ "${name%-2}" = "$name" ] || f="$f | if .kind == \"list\" then del(.index) else . end"
			ckpt-inspect -R ${u:+-u $u} "$(src_dir "$v" "$s")" | jq -c "$f" | sort >in.rows
			[ "$(grep -c '"kind":"timers"' in.rows)" -gt 0 ] && [ "$(grep -c '"kind":"map"' in.rows)" -gt 0 ]
			ckpt-inspect -R ${u:+-u $u} "$W/$v/$name" | jq -c "$f" | sort >out.rows
			diff -u in.rows out.rows || { echo "$v $name: rows differ"; return 1; }
		done <<<"$REWRITES"
	done
}

# refused STATUS LINE CMD...: CMD exits STATUS with exactly LINE on stderr, nothing on stdout (t/helper.bash's bad).
refused() {
	local want_status=$1 want=$2
	shift 2
	run --separate-stderr "$@"
	[ "$status" -eq "$want_status" ] && [ "$stderr" = "$want" ] && [ -z "$output" ] ||
		{ printf 'expected: status %s, stderr: %s\ngot:      status %s, stderr: %s %s\n' "$want_status" "$want" "$status" "$stderr" "$output"; return 1; }
}

@test "changelogpar: Flink refuses each unconverted checkpoint at max parallelism 8; ckpt-merge -g with that job graph refuses the conversion at 32 in Flink's words" {
	local v s dir want
	for v in $(flink_versions); do
		for s in m r; do
			[ "$(jq -r .accepted "$W/$v/$s-unedited-8.json")" = false ] || { echo "$v $s: Flink accepted it at 8"; return 1; }
			want=$(jq -r .message "$W/$v/$s-unedited-8.json")
			[[ $want == *'Max parallelism mismatch between checkpoint/savepoint state and new program. Cannot map operator '*' with max parallelism 32 to new program with max parallelism 8.'* ]] ||
				{ echo "$v $s: $want"; return 1; }
			rm -rf out
			dir=$(src_dir "$v" "$s")
			run --separate-stderr ckpt-merge --canonical -g "$W/$v/graph8.json" -o out/ "$dir"
			[ "$status" -eq 1 ] && [ -z "$output" ] && [ ! -e out ] || { echo "$v $s: status $status: $stderr"; return 1; }
			# Flink's message (Checkpoints.loadAndValidateCheckpoint: the operator it meets first)
			[ "$stderr" = "ckpt-merge: $dir: $want" ] ||
				{ printf '%s %s:\n  ckpt:  %s\n  flink: %s\n' "$v" "$s" "$stderr" "$want"; return 1; }
		done
	done
}

@test "changelogpar: what ckpt-merge refuses on a changelog checkpoint: -P alone, --max-parallelism without --canonical, a state with no key serializer; nothing written" {
	local v dir
	for v in $(flink_versions); do
		rm -f chk chl
		ln -s "$(src_dir "$v" m)" chk
		ln -s "$(src_dir "$v" l)" chl
		refused 2 'ckpt-merge: -P alone writes no Flink savepoint: Flink rescales one on restore (to split its keyed state at the new parallelism now, add --canonical) (see ckpt-merge -h)' \
			ckpt-merge -P 3 -o out/ chk
		refused 1 "ckpt-merge: chk/_metadata: operator e7beec23fd9f6ed5e1b8395129d43728 subtask 0: its keyed state is not a canonical savepoint's (handle kind changelog): --max-parallelism rewrites canonical savepoints only: add --canonical to convert it in the same write" \
			ckpt-merge --max-parallelism 8 -o out/ chk
		refused 1 "ckpt-merge: chl/_metadata: operator ffbb303c356ee15e3ec72d55fe9d8b05 subtask 0: state \"visits\" of a changelog cannot go into a savepoint's keyed header: the changelog records no key serializer (no materialized part, no timer state)" \
			ckpt-merge --canonical --max-parallelism 8 -o out/ chl
		[ "$(ls -A | grep -c '^out')" -eq 0 ]
	done
}
