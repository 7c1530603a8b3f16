#!/usr/bin/env bats
# ckpt-merge --rows's encoders (issue 40 section 3) judged by Flink restoring what they wrote
# (RestoreEnc.java): `ckpt-inspect -R | jq EDIT | ckpt-merge --rows - -o OUT/ SP` of
#
#   types  TypesJob's canonical savepoints (HashMap and RocksDB, each restored on its backend):
#          the POJO "pojo", the POJO base class "pet" (the registered subclass and the base class),
#          the Avro specific record "specific" and the Avro generic record "generic" of k3 changed,
#          of k4 deleted, of k9 added ("kryo" named by no row: copied).  The restored job
#          (`ckpt.flink.Main restore-types`) reads every state of k0..k9 from its own keyed operator
#          (its record): it equals the edited rows, leaf by leaf.
#   sql    SqlJob's savepoint (HashMap: Flink deserializes every value at the restore) with the
#          GROUP BY accumulators (a DECIMAL(38, 2) among them) of k1 changed, of k2 deleted, of k7
#          added; a record of the join's left side deleted, one's count changed, one added; the
#          last row the deduplication keeps for k3 changed.  The restored job (`ckpt.flink.Main
#          restore-sql`) takes a savepoint of its own, and the State Processor API reads it: every
#          operator's state (but the window's, which it cannot read) equals the edited rows.
#   oracle the unedited savepoints' restores differ from the edited rows (the checks can fail).

load helper
bats_require_minimum_version 1.5.0

TYPES='IN("pojo", "pet", "specific", "generic")'
# jq -s over the rows of the four states: k4 deleted, k3 changed, k9 added (k1's rows changed; key
# group 0, which ckpt-merge does not read).
TYPES_EDIT='map(select(.key != "k4") | if .key != "k3" then . elif .state == "pojo" then
	.value.inner.label = "edited" | .value.note = null | .value.ratio = 9.5
elif .state == "pet" then .value.value = {extra: 77, name: "sub é"}
elif .state == "specific" then .value.count = 2100 | .value.tags = ["x", "y"] | .value.maybe = null
else .value.color = "BLUE" | .value.amount = "12.34" | .value.label = "new" | .value.attrs = {z: 5} end) as $r
| $r + [$r[] | select(.key == "k1") | .key = "k9" | .key_group = 0 | if .state == "pojo" then .value.id = 9 | .value.inner = null
	elif .state == "pet" then .value = {name: "base9"}
	elif .state == "specific" then .value.name = "spec9"
	else .value.id = 9 | .value.next = ($r[] | select(.key == "k3" and .state == "generic") | .value) end]
| .[]'
# jq -s over -R's rows (the five states): {KEY: {STATE: VALUE}}, a Kryo value as "kryo".
JQ_TYPES='map(select(.state | IN("pojo", "pet", "specific", "generic", "kryo"))) | group_by(.key)
| map({key: .[0].key, value: (map({key: .state, value: (if .state == "kryo" then "kryo" else .value end)}) | from_entries)})
| from_entries'
# jq over restore-types's output: the same, the states a key lacks (null) left out.
JQ_TYPES_READ='.keys | map_values(with_entries(select(.value != null)) | if .kryo then .kryo = "kryo" else . end)
| with_entries(select(.value != {}))'

# jq over -R's rows of SqlJob, $ops its operators: the group's accumulators of k1 changed, of k2
# deleted, of k7 added; the join's left records: id 0 deleted, id 5 counted 3, id 100 added; the
# row the deduplication keeping the last row keeps for k3 changed.
SQL_EDIT='def id(k): $ops | map(select(.kind == k)) | .[0].id;
def key: .key.fields.f0;
map(if .operator == id("group") and .state == "accState" then select(key != "k2")
	| if key == "k1" then .value.fields = {f0: 99, f1: "123.45", f2: "-0.01", f3: "2024-01-01T11:59:59.250"} else . end
elif .operator == id("join") and .state == "left-records" then select(.user_key.fields.f0 != 0)
	| if .user_key.fields.f0 == 5 then .value = 3 else . end
elif .operator == id("dedup-last") and .state == "deduplicate-state" and key == "k3" then .value.fields.f4 = "edited é"
else . end) as $r
| $r + [($r[] | select(.operator == id("group") and key == "k1") | .key.fields.f0 = "k7" | .key_group = 0
	| .value.fields = {f0: 1, f1: "-98765432109876543210987654321098765.43", f2: "0.07", f3: "2024-01-01T12:00:00"}),
	($r[] | select(.operator == id("join") and .state == "left-records" and .user_key.fields.f0 == 10)
	| .user_key.fields = {f0: 100, f1: "k0", f2: "1.00", f3: "new"} | .value = 2)]
| .[]'
# jq -c over those: the rows of the states the edit names (what ckpt-merge is given).
SQL_NAMED='def id(k): $ops | map(select(.kind == k)) | .[0].id;
select([.operator, .state] | IN([id("group"), "accState"], [id("join"), "left-records"], [id("dedup-last"), "deduplicate-state"]))'

setup_file() {
	local v b sp be ops
	W=$BATS_FILE_TMPDIR
	ckpt-merge -h 2>&1 | grep -q -- --rows || return 0
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		mkdir -p "$W/$v"
		[ -f "$b/types/sidecar.json" ] || continue
		set --
		for sp in types-hashmap-canonical types-rocksdb-canonical; do
			be=${sp#types-}
			be=${be%-canonical}
			ckpt-inspect -R "$b/types/$sp" >"$W/$v/$sp.all"
			jq -c "select(.state | $TYPES)" "$W/$v/$sp.all" | jq -s -c "$TYPES_EDIT" >"$W/$v/$sp.rows"
			{ jq -c 'select(.state == "kryo")' "$W/$v/$sp.all" && cat "$W/$v/$sp.rows"; } >"$W/$v/$sp.expected"
			ckpt-merge --rows - -o "$W/$v/$sp/" "$b/types/$sp" <"$W/$v/$sp.rows" >/dev/null 2>"$W/$v/$sp.ckpt" &&
				set -- "$@" "$W/$v/$sp.json" "$W/$v/$sp" --backend "$be"
			echo "status $?" >>"$W/$v/$sp.ckpt"
			set -- "$@" "$W/$v/$sp-plain.json" "$b/types/$sp" --backend "$be"
		done
		{ flink_java "$v" restore-types "$@" >"$W/$v/types.log" 2>&1 || echo "status $?" >>"$W/$v/types.log"; } &
		[ -f "$b/sql/sidecar.json" ] || continue
		sp=sql-hashmap-canonical
		ops=$(jq -c .operators "$b/sql/sidecar.json")
		ckpt-inspect -R "$b/sql/$sp" >"$W/$v/$sp.all"
		jq -s -c --argjson ops "$ops" "$SQL_EDIT" "$W/$v/$sp.all" >"$W/$v/$sp.expected"
		jq -c --argjson ops "$ops" "$SQL_NAMED" "$W/$v/$sp.expected" >"$W/$v/$sp.rows"
		set --
		ckpt-merge --rows - -o "$W/$v/$sp/" "$b/sql/$sp" <"$W/$v/$sp.rows" >/dev/null 2>"$W/$v/$sp.ckpt" &&
			set -- "$W/$v/$sp.json" "$W/$v/$sp"
		echo "status $?" >>"$W/$v/$sp.ckpt"
		# one JVM each (RestoreEnc: 1.20's planner numbers a second job's uids on from the first's)
		{
			[ $# -eq 0 ] || flink_java "$v" restore-sql "$@" >"$W/$v/sql.log" 2>&1 || echo "status $?" >>"$W/$v/sql.log"
			flink_java "$v" restore-sql "$W/$v/$sp-plain.json" "$b/sql/$sp" >>"$W/$v/sql.log" 2>&1 ||
				echo "status $?" >>"$W/$v/sql.log"
		} &
	done
	wait
}

setup() {
	restore_setup --rows
}

# types_same NAME OUT EXPECTED: what restore OUT read equals the rows EXPECTED; else the difference.
types_same() {
	jq -s -S "$JQ_TYPES" "$3" >want.json
	jq -S "$JQ_TYPES_READ" "$2" >read.json
	[ "$(jq length want.json)" -gt 0 ] || { echo "$1: no rows"; return 1; }
	differ "$1" want.json read.json
}

# sql_same NAME OUT EXPECTED OPS: what the State Processor API read from restore OUT's next savepoint
# equals the rows EXPECTED (the window's left out); else the difference.
sql_same() {
	jq -s -S --argjson ops "$4" "$JQ_SQL | del(.window, .\"window-timers\")" "$3" >want.json
	jq -S "$JQ_SPA" "$2" >read.json
	[ "$(jq '.group | length' want.json)" -gt 0 ] || { echo "$1: no rows"; return 1; }
	differ "$1" want.json read.json
}

@test "restoreenc: Flink restores the edited types savepoints, its keyed operator reading exactly the rows given" {
	local v sp n=0
	for v in $(flink_versions); do
		for sp in types-hashmap-canonical types-rocksdb-canonical; do
			[ -f "$W/$v/$sp.ckpt" ] || continue
			n=$((n + 1))
			restored "$v $sp" "$W/$v/$sp.json" "$W/$v/$sp.ckpt"
			types_same "$v $sp" "$W/$v/$sp.json" "$W/$v/$sp.expected"
			[ "$(jq -c '[(.k4 | keys), (.k9 | keys), .k3.pet.value.extra, .k9.pet]' read.json)" = \
				'[["kryo"],["generic","pet","pojo","specific"],77,{"name":"base9"}]' ]
		done
	done
	[ "$n" -gt 0 ] || skip "no types/ artifacts"
}

@test "restoreenc: Flink restores the edited SQL savepoint, its next savepoint holding exactly the rows given (State Processor API)" {
	local v sp=sql-hashmap-canonical n=0
	for v in $(flink_versions); do
		[ -f "$W/$v/$sp.ckpt" ] || continue
		n=$((n + 1))
		restored "$v $sp" "$W/$v/$sp.json" "$W/$v/$sp.ckpt"
		sql_same "$v $sp" "$W/$v/$sp.json" "$W/$v/$sp.expected" "$(jq -c .operators "$FLINK_OUT/$v/sql/sidecar.json")"
		[ "$(jq -c '[.group.k1, .group.k7[1], (.group | has("k2")), .join.left.k0["[100,\"k0\",\"1.00\",\"new\"]"], .join.left.k0["[5,\"k0\",\"-4604.05\",\"n5xxxxxx\"]"], .["dedup-last"].k3[4]]' read.json)" = \
			'[[99,"123.45","-0.01","2024-01-01T11:59:59.250"],"-98765432109876543210987654321098765.43",false,2,3,"edited é"]' ]
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts"
}

@test "restoreenc: the unedited savepoints' restores are not the rows given (the oracle)" {
	local v sp n=0
	for v in $(flink_versions); do
		for sp in types-hashmap-canonical types-rocksdb-canonical; do
			[ -f "$W/$v/$sp.ckpt" ] || continue
			n=$((n + 1))
			restored "$v $sp plain" "$W/$v/$sp-plain.json"
			types_same "$v $sp plain" "$W/$v/$sp-plain.json" "$W/$v/$sp.all"
			run -1 types_same "$v $sp plain" "$W/$v/$sp-plain.json" "$W/$v/$sp.expected"
		done
		sp=sql-hashmap-canonical
		[ -f "$W/$v/$sp.ckpt" ] || continue
		restored "$v $sp plain" "$W/$v/$sp-plain.json"
		sql_same "$v $sp plain" "$W/$v/$sp-plain.json" "$W/$v/$sp.all" "$(jq -c .operators "$FLINK_OUT/$v/sql/sidecar.json")"
		run -1 sql_same "$v $sp plain" "$W/$v/$sp-plain.json" "$W/$v/$sp.expected" "$(jq -c .operators "$FLINK_OUT/$v/sql/sidecar.json")"
	done
	[ "$n" -gt 0 ] || skip "no types/ artifacts"
}
