#!/usr/bin/env bats
# Flink SQL state typed (issue 27): SqlJob's canonical hashmap savepoint (sql/, SqlJob.java) of a
# GROUP BY aggregate, deduplication keeping the first and the last row, a regular join, a tumbling
# window aggregate and a Top-2.  ckpt-inspect -R's rows of each SQL operator, put in the shape of the
# sidecar's "expected" (what the rows put in must leave there, computed by the harness), equal it
# leaf by leaf, and equal what the State Processor API read ("spa": every operator but the window
# aggregate, whose TimeWindow namespaces readKeyedState does not read; the sidecar says so), and
# the GROUP BY accumulators what the SQL savepoint connector reads, where it reads them (2.3.0 reads
# no RowData state: the sidecar holds its error, "unread").  A row
# is compared as the list of its fields: a RowDataSerializer snapshot names none.

load helper

# jq over the sidecar: "expected" in that shape (2.x keeps the first row by rowtime as a flag:
# then the flag per key, no row), "spa" in it: JQ_SPA (helper.bash, with JQ_SQL).
JQ_EXPECTED='.expected as $e | $c[0] as $ck | $e + {
	"dedup-first": (if ($ck["dedup-first"] | length) > 0 then $e["dedup-first"] else {} end),
	"dedup-first-emitted": (if ($ck["dedup-first"] | length) > 0 then {} else ($e["dedup-first"] | map_values(true)) end),
	"window-timers": ($e.window | map_values(.window_end - 1))}'
sql_versions() {
	local v
	for v in $(flink_versions) $(cd "$FLINK_OUT" 2>/dev/null && ls -d */sql/sidecar.json 2>/dev/null | cut -d/ -f1); do
		[ -f "$FLINK_OUT/$v/sql/sidecar.json" ] && echo "$v"
	done | sort -u
}

# ckpt.json, job.json and spa.json of version $1's savepoint: ckpt's, the expected and the State
# Processor API's, each in JQ_SQL's shape (spa.json without the window, which it could not read).
sql_shapes() {
	local side=$FLINK_OUT/$1/sql/sidecar.json sp=$FLINK_OUT/$1/sql/sql-hashmap-canonical
	ckpt-inspect -R "$sp" >rows.ndjson || { echo "$1: ckpt-inspect -R failed"; return 1; }
	jq -s --argjson ops "$(jq .operators "$side")" "$JQ_SQL" rows.ndjson >ckpt.json
	jq --slurpfile c ckpt.json "$JQ_EXPECTED" "$side" >job.json
	jq "$JQ_SPA" "$side" >spa.json
	jq 'del(.window, ."window-timers")' ckpt.json >ckpt-spa.json
}

@test "flink sql: every entry of the SQL job's savepoint typed (-a: no typed null), each SQL operator's states there" {
	local v n=0 k
	for v in $(sql_versions); do
		n=$((n + 1))
		ckpt-inspect -a "$FLINK_OUT/$v/sql/sql-hashmap-canonical" >all.json || { echo "$v: ckpt-inspect -a failed"; return 1; }
		[ "$(grep -c '"typed":null' all.json)" -eq 0 ] || { echo "$v: untyped entries"; return 1; }
		sql_shapes "$v"
		for k in group dedup-last join window window-timers topn; do
			[ "$(jq --arg k "$k" '.[$k] | length' ckpt.json)" -gt 0 ] || { echo "$v: no $k state typed"; return 1; }
		done
		[ "$(jq '(."dedup-first" | length) + (."dedup-first-emitted" | length)' ckpt.json)" -gt 0 ] ||
			{ echo "$v: no dedup-first state typed"; return 1; }
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts (make flink-fixtures)"
}

@test "flink sql: GROUP BY accumulators, deduplicated rows, join records and counts, windows, Top-N equal the job's, leaf by leaf" {
	local v bad=0 n=0
	for v in $(sql_versions); do
		n=$((n + 1))
		sql_shapes "$v" || { bad=1; continue; }
		differ "$v/sql expected" ckpt.json job.json || bad=1
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts (make flink-fixtures)"
	[ "$bad" -eq 0 ]
}

@test "flink sql: the same entries equal what the State Processor API reads (the window aggregate unread, said why)" {
	local v bad=0 n=0
	for v in $(sql_versions); do
		n=$((n + 1))
		sql_shapes "$v" || { bad=1; continue; }
		differ "$v/sql spa" ckpt-spa.json spa.json || bad=1
		[[ $(jq -r .spa.window.unread "$FLINK_OUT/$v/sql/sidecar.json") == *"VoidNamespace only"* ]] || { echo "$v: window read?"; bad=1; }
		# the SQL savepoint connector (2.1 on): its accumulators where it reads them, else why not
		if jq -e '.spa["sql-connector"].accState' "$FLINK_OUT/$v/sql/sidecar.json" >/dev/null; then
			jq '{group: .spa["sql-connector"].accState}' "$FLINK_OUT/$v/sql/sidecar.json" >conn.json
			jq '{group}' ckpt.json >ckpt-group.json
			differ "$v/sql savepoint connector" ckpt-group.json conn.json || bad=1
		else
			[ -n "$(jq -r '.spa["sql-connector"].unread // empty' "$FLINK_OUT/$v/sql/sidecar.json")" ] ||
				{ echo "$v: the savepoint connector neither read nor said why"; bad=1; }
		fi
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts (make flink-fixtures)"
	[ "$bad" -eq 0 ]
}

@test "flink sql: the GROUP BY row, the window's TimeWindow and a join count, exactly; a changed leaf is seen" {
	local v n=0
	for v in $(sql_versions); do
		n=$((n + 1))
		sql_shapes "$v"
		# k1: rows 1, 6, ..., 36: COUNT(*) 8, SUM, MAX(amount), MAX(ts) 10:00:36.036
		[ "$(jq -c '.group.k1' ckpt.json)" = '[8,"-28279.88","-2149.16","2024-01-01T10:00:36.036"]' ] || { jq -c .group.k1 ckpt.json; return 1; }
		[ "$(jq -c '.window.k1' ckpt.json)" = '{"window_start":1704103200000,"window_end":1704106800000,"acc":[8,"-28279.88"]}' ] ||
			{ jq -c .window.k1 ckpt.json; return 1; }
		[ "$(jq -c '.join.right.k1' ckpt.json)" = '{"[\"k1\",\"name-k1\"]":2}' ] || { jq -c .join.right.k1 ckpt.json; return 1; }
		jq '.group.k2[1] = "-1.00" | .topn.k0[0][1] = 7 | .join.left.k3 |= with_entries(.value = 2)' job.json >changed.json
		run differ "$v/sql expected" ckpt.json changed.json
		[ "$status" -eq 1 ]
		[[ $output == *"group.k2.1: ckpt \"-27646.36\", flink \"-1.00\""* ]] || { echo "$output"; return 1; }
		[ "$(printf '%s\n' "$output" | wc -l)" -eq 10 ] || { echo "$output"; return 1; }
	done
	[ "$n" -gt 0 ] || skip "no sql/ artifacts (make flink-fixtures)"
}
