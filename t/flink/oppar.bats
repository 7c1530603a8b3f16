#!/usr/bin/env bats
# ckpt-merge -P N (issue 40 section 2) on an operator holding operator state beside its keyed state,
# verified by Flink.  OpPar.java's job: its keyed operator "op" (parallelism 3, max parallelism 8)
# holds keyed state and operator state: list states split-a (idx + 2 elements a subtask) and
# split-b (2 idx + 1), union state "union" (2 a subtask), broadcast state "bcast" (a map of its own
# a subtask).  Its canonical HashMap savepoint, taken by each test run with the streams inline
# (sp) and in files of their own (spf, FS_SMALL_FILE_THRESHOLD 0), is written by
# `ckpt-merge -P N --max-parallelism 8` at 1, 2 (smaller) and 4 (larger), and Flink restores
# each at N, every subtask reporting from initializeState what its operator state holds.
#
#   restores  each subtask of each rewrite reports what the same subtask reports when Flink
#             restores the unedited savepoint at N itself (Flink's own redistribution is the judge):
#             each list state's elements, the union, the broadcast map.  Elements are compared
#             sorted: within a subtask Flink restores the old streams in the order of a HashMap keyed
#             by stream handle (RoundRobinOperatorStateRepartitioner's merge map); ckpt-merge writes
#             them in old-subtask order (its man page).
#             The judge redistributes (its restore at N differs from the savepoint's own subtasks:
#             the comparison is of a redistribution, not a copy), and each rewrite's operator is at N
#             subtasks itself (a rewrite left at 3 would be redistributed by Flink and agree).
#   -R        ckpt-inspect -R of each rewrite prints, per subtask, the list and broadcast elements
#             Flink restored there.

load helper
bats_require_minimum_version 1.5.0

# jq: a restore's reports with every array sorted.
JQ_SORTED='walk(if type == "array" then sort else . end)'

setup_file() {
	local v b n sp s
	W=$BATS_FILE_TMPDIR
	for v in $(flink_versions); do
		mkdir -p "$W/$v"
		flink_java "$v" oppar-savepoint "$W/$v/sp" 3 >"$W/$v/sp.log" 2>&1 || continue
		flink_java "$v" oppar-savepoint "$W/$v/spf" 3 --files >"$W/$v/spf.log" 2>&1 || continue
		set --
		for sp in sp spf; do
			b=$(dirname "$W/$v/$sp"/*/_metadata)
			ln -s "$b" "$W/$v/$sp-in"
			for n in 1 2 4; do
				s=0
				ckpt-merge -P $n --max-parallelism 8 -o "$W/$v/$sp-P$n/" "$b" >"$W/$v/$sp-P$n.ckpt" 2>&1 || s=$?
				echo "status $s" >>"$W/$v/$sp-P$n.ckpt"
				set -- "$@" "$W/$v/$sp-P$n.json" "$W/$v/$sp-P$n" $n
			done
		done
		for n in 1 2 4; do
			set -- "$@" "$W/$v/flink-$n.json" "$W/$v/sp-in" $n
		done
		{ flink_java "$v" oppar-restore "$@" >"$W/$v/restore.log" 2>&1 || echo "status $?" >>"$W/$v/restore.log"; } &
	done
	wait
}

setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	[ -n "$(flink_versions)" ] || skip "no Flink artifacts (run t/flink/run.sh)"
}

# accepted V FILE: Flink wrote FILE and accepted its restore.
accepted() {
	[ -f "$W/$1/$2" ] || { echo "$1: no $2"; cat "$W/$1/restore.log" "$W/$1/sp.log" "$W/$1"/*.ckpt; return 1; }
	[ "$(jq -r .accepted "$W/$1/$2")" = true ] || { echo "$1 $2: not accepted: $(jq -r .message "$W/$1/$2")"; return 1; }
}

@test "oppar: Flink restores each rewrite at its new parallelism (1, 2, 4 of 3), every subtask restoring the list, union and broadcast state Flink's own restore of the unedited savepoint at that parallelism hands it" {
	local v sp n
	for v in $(flink_versions); do
		# the savepoint's own subtasks, as -R prints their split-a elements
		ckpt-inspect -R "$W/$v/sp-in" | jq -s -c 'map(select(.state == "split-a")) | group_by(.subtask)
			| map(map(.value) | sort)' >own.json
		[ "$(jq -c . own.json)" = '[["a0:0","a0:1"],["a1:0","a1:1","a1:2"],["a2:0","a2:1","a2:2","a2:3"]]' ]
		for n in 1 2 4; do
			accepted "$v" "flink-$n.json"
			[ "$(jq '.reports | length' "$W/$v/flink-$n.json")" -eq $n ]
			# the judge redistributes: no subtask holds what the savepoint's same subtask held, every
			# one the whole union, the 9 split-a elements once
			jq -c '[.reports[] | .["split-a"] | sort]' "$W/$v/flink-$n.json" >flink.json
			! diff -q own.json flink.json >/dev/null || { echo "$v at $n: as the savepoint held it"; return 1; }
			[ "$(jq -c '[.reports[] | .union | length] | unique' "$W/$v/flink-$n.json")" = '[6]' ]
			[ "$(jq -c '[.reports[] | .["split-a"] | length] | add' "$W/$v/flink-$n.json")" = 9 ]
			for sp in sp spf; do
				grep -qx 'status 0' "$W/$v/$sp-P$n.ckpt" || { echo "$v $sp -P $n:"; cat "$W/$v/$sp-P$n.ckpt"; return 1; }
				# the rewrite is at N itself (else Flink's restore would redistribute it, and agree)
				[ "$(ckpt-inspect -m "$W/$v/$sp-P$n" | jq -c '[.operators[] | select(.states | any(.name == "split-a"))
					| [.parallelism, .subtasks]]')" = "[[$n,$n]]" ] || { echo "$v $sp -P $n: not written at $n"; return 1; }
				accepted "$v" "$sp-P$n.json"
				diff -u <(jq -S "$JQ_SORTED" "$W/$v/flink-$n.json") <(jq -S "$JQ_SORTED" "$W/$v/$sp-P$n.json") ||
					{ echo "$v $sp -P $n: the restored operator state differs from Flink's redistribution"; return 1; }
			done
		done
	done
}

@test "oppar: ckpt-inspect -R of each rewrite prints per subtask the list and broadcast elements Flink restored there" {
	local v sp n
	for v in $(flink_versions); do
		for sp in sp spf; do
			for n in 1 2 4; do
				accepted "$v" "$sp-P$n.json"
				jq -S -c '.reports | map_values({"split-a": .["split-a"], "split-b": .["split-b"], bcast}) | '"$JQ_SORTED" \
					"$W/$v/$sp-P$n.json" >flink.json
				ckpt-inspect -R "$W/$v/$sp-P$n" | jq -s -S -c 'map(select(.kind == "list" or .kind == "broadcast"))
					| group_by(.subtask) | map({key: (.[0].subtask | tostring), value: {
						"split-a": map(select(.state == "split-a") | .value),
						"split-b": map(select(.state == "split-b") | .value),
						bcast: (map(select(.state == "bcast") | {key: .user_key, value}) | from_entries)}})
					| from_entries | '"$JQ_SORTED" >ckpt.json
				diff -u flink.json ckpt.json || { echo "$v $sp -P $n: -R differs from Flink's restore"; return 1; }
			done
		done
	done
}
