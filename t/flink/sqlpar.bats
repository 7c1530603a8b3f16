#!/usr/bin/env bats
# The SQL jobs' savepoints at a new max parallelism and parallelism (issue 40 section 2), judged
# by Flink restoring what ckpt-merge wrote, and -k and --max-parallelism on the SQL key kinds
# whose BinaryRowData has a variable part.
#
#   sql      SqlJob's canonical savepoint (max parallelism 32, parallelism 1) rewritten with
#            --max-parallelism 8 and 200, -P 3 --max-parallelism 8 and -P 2 --max-parallelism 200
#            (-P alone is refused on a savepoint: Flink rescales one itself); each restored by
#            `ckpt.flink.Main restore-sql OUT.json DIR --parallelism P --max-parallelism N`
#            (RestoreEnc.java, one JVM each), which savepoints the restored job: the State
#            Processor API's read of that savepoint (every key looked up in the key group Flink
#            computes for it, so a key ckpt put in another one is missing) equals -R's rows of the
#            input (the window's left out: the API cannot read it).
#   sqlkeys  SqlKeys.java's savepoints (HashMap and RocksDB; parallelism 2, max parallelism 32):
#            six GROUP BY operators keyed by ARRAY<INT>, MAP<STRING, INT>, TIME, DECIMAL(38, 10),
#            TIMESTAMP(9), and all of these with a TIMESTAMP_LTZ(6) (Flink groups by every one),
#            each group named by its MIN(id).  The sidecar holds Flink's key group of each key
#            (KeyGroupRangeAssignment of the BinaryRowData the State Processor API read):
#            -R prints it, and -k finds the key there.  --max-parallelism 8 and 200 and -P 3
#            --max-parallelism 8 of each are restored (`restore-sqlkeys`), the restored job's next
#            savepoint read by the State Processor API: every group's accumulator equals -R's
#            row, its key group at the new max parallelism the one -R prints in the rewrite.
#   refusals Flink's own: the unedited savepoint at max parallelism 8 ("Max parallelism
#            mismatch"), a rewrite at 8 restored at parallelism 9; ckpt-merge's: -P 9 over 8.

load helper
bats_require_minimum_version 1.5.0

# sqlmerge V NAME ARGS...: ckpt-merge ARGS -o $W/V/NAME/ of SqlJob's savepoint (status in NAME.ckpt).
sqlmerge() {
	local v=$1 name=$2
	shift 2
	local st=0
	ckpt-merge "$@" -o "$W/$v/$name/" "$FLINK_OUT/$v/sql/sql-hashmap-canonical" >/dev/null 2>"$W/$v/$name.ckpt" || st=$?
	echo "status $st" >>"$W/$v/$name.ckpt"
}

# keysmerge V BE NAME ARGS...: the same of SqlKeys's savepoint of backend BE, into $W/V/BE-NAME/.
keysmerge() {
	local v=$1 be=$2 name=$3
	shift 3
	local st=0
	ckpt-merge "$@" -o "$W/$v/$be-$name/" "$FLINK_OUT/$v/sqlkeys/sqlkeys-$be-canonical" >/dev/null 2>"$W/$v/$be-$name.ckpt" || st=$?
	echo "status $st" >>"$W/$v/$be-$name.ckpt"
}

setup_file() {
	local v be n s
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --max-parallelism || return 0
	for v in $(flink_versions); do
		mkdir -p "$W/$v"
		if [ -f "$FLINK_OUT/$v/sqlkeys/sidecar.json" ]; then
			set --
			for be in hashmap rocksdb; do
				for n in 8 200; do
					keysmerge "$v" "$be" "$n" --max-parallelism "$n"
					set -- "$@" "$W/$v/$be-$n.json" "$W/$v/$be-$n" --backend "$be" --max-parallelism "$n"
				done
				keysmerge "$v" "$be" P3-8 -P 3 --max-parallelism 8
				set -- "$@" "$W/$v/$be-P3-8.json" "$W/$v/$be-P3-8" --backend "$be" --parallelism 3 --max-parallelism 8
				set -- "$@" "$W/$v/$be-plain-8.json" "$FLINK_OUT/$v/sqlkeys/sqlkeys-$be-canonical" --backend "$be" --max-parallelism 8
			done
			set -- "$@" "$W/$v/over-max.json" "$W/$v/hashmap-8" --parallelism 9 --max-parallelism 8
			{ flink_java "$v" restore-sqlkeys "$@" >"$W/$v/sqlkeys.log" 2>&1 || echo "status $?" >>"$W/$v/sqlkeys.log"; } &
		fi
		# SqlKeys's restores in one JVM, beside SqlJob's (one SQL restore a JVM: RestoreEnc) one by one
		[ ! -f "$FLINK_OUT/$v/sql/sidecar.json" ] || for s in "sql-8 1 8" "sql-200 1 200" "sql-P3-8 3 8" "sql-P2-200 2 200"; do
			set -- $s
			# shellcheck disable=SC2046
			sqlmerge "$v" "$1" $([ "$2" = 1 ] || echo -P "$2") --max-parallelism "$3"
			flink_java "$v" restore-sql "$W/$v/$1.json" "$W/$v/$1" --parallelism "$2" --max-parallelism "$3" \
				>"$W/$v/$1.log" 2>&1 || echo "status $?" >>"$W/$v/$1.log"
		done
		wait
	done
	wait
}

setup() {
	restore_setup --max-parallelism
}

# sql_same NAME OUT ROWS OPS: what the State Processor API read from restore OUT's next savepoint
# equals the rows ROWS (JQ_SQL, the window left out); else the difference.
sql_same() {
	jq -s -S --argjson ops "$4" "$JQ_SQL | del(.window, .\"window-timers\")" "$3" >want.json
	jq -S "$JQ_SPA" "$2" >read.json
	[ "$(jq '.group | length' want.json)" -gt 0 ] || { echo "$1: no rows"; return 1; }
	differ "$1" want.json read.json
}

# jq -s over -R's rows of SqlKeys (the sidecar's operators $ops): per kind {MIN(id): {key_group, acc}}.
JQ_KEYS_ROWS='($ops | map({key: .id, value: .kind}) | from_entries) as $kind
| map(select(.state == "accState")) | group_by($kind[.operator])
| map({key: $kind[.[0].operator], value: (map({key: (.value.fields.f0 | tostring),
	value: {key_group, acc: [.value.fields[]]}}) | from_entries)}) | from_entries'
# jq over the State Processor API's read (a sidecar's spa[SAVEPOINT] or a restore's spa): the same.
JQ_KEYS_SPA='map_values(map_values({key_group, acc}))'

@test "sqlpar: Flink restores SqlJob's savepoint at max parallelism 8 and 200, -P 3 at 8 and -P 2 at 200, its next savepoint holding exactly the input's rows" {
	local v name n=0 ops
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/sql/sidecar.json" ] || continue
		ops=$(jq -c .operators "$FLINK_OUT/$v/sql/sidecar.json")
		ckpt-inspect -R "$FLINK_OUT/$v/sql/sql-hashmap-canonical" >in.rows
		for name in sql-8 sql-200 sql-P3-8 sql-P2-200; do
			n=$((n + 1))
			[ -f "$W/$v/$name.json" ] || { echo "$v $name: no restore ($(tail -3 "$W/$v/$name.log"))"; return 1; }
			restored "$v $name" "$W/$v/$name.json" "$W/$v/$name.ckpt"
			sql_same "$v $name" "$W/$v/$name.json" in.rows "$ops"
		done
		[ "$(ckpt-inspect -m "$W/$v/sql-P3-8" | jq -c '[.operators[] | select(.key_groups != {}) | [.parallelism, .max_parallelism]] | unique')" = '[[3,8]]' ]
		[ "$(ckpt-inspect -m "$W/$v/sql-P2-200" | jq -c '[.operators[] | select(.key_groups != {}) | [.parallelism, .max_parallelism]] | unique')" = '[[2,200]]' ]
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts"
}

@test "sqlpar: the SQL job's restores are not whatever the rows: an edited row makes the comparison fail (the oracle)" {
	local v n=0 ops
	for v in $(flink_versions); do
		[ -f "$W/$v/sql-200.json" ] || continue
		n=$((n + 1))
		ops=$(jq -c .operators "$FLINK_OUT/$v/sql/sidecar.json")
		ckpt-inspect -R "$FLINK_OUT/$v/sql/sql-hashmap-canonical" |
			jq -c 'if .state == "accState" and .key.fields.f0 == "k1" then .value.fields.f0 += 1 else . end' >edited.rows
		run -1 sql_same "$v sql-200" "$W/$v/sql-200.json" edited.rows "$ops"
		[[ "$output" == *"group.k1.0: ckpt "* ]]
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts"
}

@test "sqlpar: Flink groups by ARRAY, MAP, TIME, DECIMAL(38, 10), TIMESTAMP(9) and TIMESTAMP_LTZ(6) keys; -R prints each key in the key group Flink computes for it" {
	local v be n=0
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/sqlkeys/sidecar.json" ] || continue
		[ "$(jq -c '[.refused, [.operators[].kind]]' "$FLINK_OUT/$v/sqlkeys/sidecar.json")" = \
			'[{},["array","map","time","decimal","timestamp","all"]]' ]
		for be in hashmap rocksdb; do
			n=$((n + 1))
			ckpt-inspect -R "$FLINK_OUT/$v/sqlkeys/sqlkeys-$be-canonical" |
				jq -s -S --argjson ops "$(jq -c .operators "$FLINK_OUT/$v/sqlkeys/sidecar.json")" "$JQ_KEYS_ROWS" >ckpt.json
			jq -S --arg sp "sqlkeys-$be-canonical" ".spa[\$sp] | $JQ_KEYS_SPA" "$FLINK_OUT/$v/sqlkeys/sidecar.json" >flink.json
			[ "$(jq '[.[] | length] | add' flink.json)" = 42 ]
			differ "$v $be" ckpt.json flink.json
		done
	done
	[ "$n" -gt 0 ] || skip "no sqlkeys/ artifacts"
}

# find_keys DIR OPS: for every accState row of -R of DIR, ckpt-inspect -R -k KEY of its operator
# gives that row alone, in the same key group; else a line for each that does not, status 1.
find_keys() {
	local l op k bad=0
	ckpt-inspect -R "$1" | jq -c 'select(.state == "accState")' >rows.ndjson
	[ -s rows.ndjson ] || { echo "$1: no rows"; return 1; }
	while read -r l; do
		op=$(jq -r .operator <<<"$l")
		k=$(jq -c .key <<<"$l")
		[ "$(ckpt-inspect -R -u "$op" --state accState -k "$k" "$1" | jq -c .)" = "$l" ] ||
			{ echo "${1##*/}: -k $k of $op: not $(jq -c .key_group <<<"$l")"; bad=1; }
	done <rows.ndjson
	return $bad
}

@test "sqlpar: ckpt-inspect -k finds every key of the six SQL key kinds in the key group Flink put it in, at 32 and in the rewrites at 8 and 200" {
	local v be n=0
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/sqlkeys/sidecar.json" ] || continue
		for be in hashmap rocksdb; do
			n=$((n + 1))
			find_keys "$FLINK_OUT/$v/sqlkeys/sqlkeys-$be-canonical"
			grep -qx 'status 0' "$W/$v/$be-200.ckpt" && find_keys "$W/$v/$be-200"
		done
	done
	[ "$n" -gt 0 ] || skip "no sqlkeys/ artifacts"
}

@test "sqlpar: Flink restores SqlKeys's savepoints at max parallelism 8 and 200 and -P 3 at 8, every group's accumulator as the rows give it, in the key group -R prints" {
	local v be name n=0 ops
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/sqlkeys/sidecar.json" ] || continue
		ops=$(jq -c .operators "$FLINK_OUT/$v/sqlkeys/sidecar.json")
		for be in hashmap rocksdb; do
			for name in 8 200 P3-8; do
				n=$((n + 1))
				restored "$v $be $name" "$W/$v/$be-$name.json" "$W/$v/$be-$name.ckpt" ||
					{ tail -3 "$W/$v/sqlkeys.log"; return 1; }
				# the rows of the input, their key groups those of the rewrite
				ckpt-inspect -R "$FLINK_OUT/$v/sqlkeys/sqlkeys-$be-canonical" |
					jq -s -S --argjson ops "$ops" "$JQ_KEYS_ROWS | map_values(map_values(del(.key_group)))" >in.json
				ckpt-inspect -R "$W/$v/$be-$name" | jq -s -S --argjson ops "$ops" "$JQ_KEYS_ROWS" >ckpt.json
				jq -S ".spa | $JQ_KEYS_SPA" "$W/$v/$be-$name.json" >flink.json
				[ "$(jq '[.[] | length] | add' flink.json)" = 42 ]
				differ "$v $be $name" ckpt.json flink.json
				differ "$v $be $name (acc)" in.json <(jq -S 'map_values(map_values(del(.key_group)))' flink.json)
			done
			[ "$(ckpt-inspect -m "$W/$v/$be-P3-8" | jq -c '[.operators[] | select(.key_groups != {}) | [.parallelism, .max_parallelism]] | unique')" = '[[3,8]]' ]
		done
	done
	[ "$n" -gt 0 ] || skip "no sqlkeys/ artifacts"
}

@test "sqlpar: Flink refuses the unedited SQL savepoint at max parallelism 8 and a rewrite at 8 restored at parallelism 9; ckpt-merge refuses -P 9 over 8" {
	local v be n=0
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/sqlkeys/sidecar.json" ] || continue
		n=$((n + 1))
		for be in hashmap rocksdb; do
			[ "$(jq -r .accepted "$W/$v/$be-plain-8.json")" = false ]
			jq -r .message "$W/$v/$be-plain-8.json" | grep -q 'Max parallelism mismatch between checkpoint/savepoint state and new program'
		done
		[ "$(jq -r .accepted "$W/$v/over-max.json")" = false ]
		jq -r .message "$W/$v/over-max.json" | grep -q 'parallelism (9) is higher than the max parallelism (8)'
		run -2 --separate-stderr ckpt-merge -P 9 --max-parallelism 8 -o out/ "$FLINK_OUT/$v/sqlkeys/sqlkeys-hashmap-canonical"
		[ "$stderr" = 'ckpt-merge: -P 9 is above --max-parallelism 8 (Flink: Maximum parallelism must not be smaller than parallelism.) (see ckpt-merge -h)' ]
		[ -z "$output" ]
		[ ! -e out ]
	done
	[ "$n" -gt 0 ] || skip "no sqlkeys/ artifacts"
}
