#!/usr/bin/env bats
# Flink SQL state (RowData, issue 27 item 2) through ckpt-inspect -R: the typed rows of the
# table planner's restore-test savepoints (CKPT_FIXTURES/flink-sql-restore, one per SQL operator,
# SOURCES.md there) against goldens and against the rows Flink's test programs list; damaged rows.
#
# Goldens are regenerated (after checking the change is intended) with:
#   cd "$FIXTURES/flink-sql-restore" && for d in */; do d=${d%/}
#   ckpt-inspect -R $d/_metadata > $DATA/flinksql/$d.rows.expected; done

bats_require_minimum_version 1.5.0
load helper

sql_fixtures() {
	needs_fixtures || return 1
	SQ=$FIXTURES/flink-sql-restore
	[ -d "$SQ" ] || skip "no flink-sql-restore fixtures in $FIXTURES"
}

# The rows of state "sink-results" of fixture $1, as Flink's Row.toString prints them.
sink_rows() {
	ckpt-inspect -R "$SQ/$1/_metadata" | jq -r 'select(.state == "sink-results") | .value |
		.kind + "[" + ([.fields[] | if . == null then "null" else tostring end] | join(", ")) + "]"'
}

# A copy of fixture $1's _metadata as m/_metadata with the bytes $3 (printf escapes) at offset $2,
# where the bytes $4 (hex) were.
patched() {
	mkdir -p m
	cp "$SQ/$1/_metadata" m/_metadata
	[ "$(od -An -tx1 -j "$2" -N $((${#4} / 2)) m/_metadata | tr -d ' \n')" = "$4" ] || {
		echo "fixture $1 changed: not $4 at $2"
		return 1
	}
	printf "$3" | dd of=m/_metadata bs=1 seek="$2" conv=notrunc status=none
}

@test "flinksql: -R of every SQL fixture: keys, values and sink rows typed (goldens)" {
	sql_fixtures
	local d n=0
	for d in "$SQ"/*/; do
		d=$(basename "$d")
		run ckpt-inspect -R "$SQ/$d/_metadata"
		status_is 0
		match_golden "$DATA/flinksql/$d.rows.expected"
		n=$((n + 1))
	done
	[ "$n" -eq 31 ]
}

@test "flinksql: only the CEP operator's NFA state stays untyped" {
	sql_fixtures
	run sh -c 'for d in "$0"/*/; do ckpt-inspect -R "$d/_metadata"; done | jq -r "select(.untyped) | .untyped" | sort | uniq -c' "$SQ"
	output_is '      8 the VALUE_SERIALIZER of state "nfaStateName" is a org.apache.flink.cep.nfa.NFAStateSerializerSnapshot, whose snapshot ckpt cannot step over'
}

# consumedBeforeRestore of DeduplicationTestPrograms DEDUPLICATE_ASC ("deduplicate-asc")
@test "flinksql: sink-results of deduplicate-asc are the program's rows" {
	sql_fixtures
	run sink_rows stream-exec-deduplicate_1__deduplicate-asc
	output_is '+I[1, terry, pen, 1000]
+I[4, bob, apple, 4000]'
}

# GroupAggregateTestPrograms AGG_WITH_STATE_TTL_HINT: "+I[1, 1, null, Hi]", "+I[2, 1, 2.0, Hello]",
# "+U[2, 2, 2.0, Hello]" (avg_a DOUBLE: Java prints 2.0, JSON has 2)
@test "flinksql: sink-results of agg-with-state-ttl-hint are the program's rows" {
	sql_fixtures
	run sink_rows stream-exec-group-aggregate_1__agg-with-state-ttl-hint
	output_is '+I[1, 1, null, Hi]
+I[2, 1, 2, Hello]
+U[2, 2, 2, Hello]'
	run sh -c 'ckpt-inspect -R "$0/_metadata" | jq -c "select(.state == \"sink-results\") | .value.fields" | head -1' \
		"$SQ/stream-exec-group-aggregate_1__agg-with-state-ttl-hint"
	output_is '{"b":1,"cnt":1,"avg_a":null,"min_c":"Hi"}'
}

# IncrementalGroupAggregateTestPrograms INCREMENTAL_GROUP_AGGREGATE_COMPLEX: retractions kept
@test "flinksql: sink-results of incremental-group-aggregate-complex are the program's rows, kinds included" {
	sql_fixtures
	run sink_rows stream-exec-incremental-group-aggregate_1__incremental-group-aggregate-complex
	output_is '+I[1, 1, 1, 1]
-U[1, 1, 1, 1]
+U[1, 3, 2, 2]
-U[1, 3, 2, 2]
+U[1, 5, 2, 3]'
}

# RankTestPrograms RANK_N_TEST
@test "flinksql: sink-results of rank-n-test are the program's rows" {
	sql_fixtures
	run sink_rows stream-exec-rank_1__rank-n-test
	output_is '+I[book, 1, 1]
+I[book, 2, 2]
+I[fruit, 4, 1]'
}

# LimitTestPrograms LIMIT
@test "flinksql: sink-results of limit are the program's rows" {
	sql_fixtures
	run sink_rows stream-exec-limit_1__limit
	output_is '+I[2, a, 6]
+I[4, b, 8]
+I[6, c, 10]'
}

# SinkTestPrograms SINK_NDF_PRIMARY_KEY
@test "flinksql: sink-results of sink-ndf-primary-key are the program's rows" {
	sql_fixtures
	run sink_rows stream-exec-sink_1__sink-ndf-primary-key
	output_is '+I[1, 1, hi--1170105035]
+I[2, 2, hello-234785527]
+I[3, 2, hello world--1360544799]'
}

@test "flinksql: field types: DECIMAL as a plain string, TIMESTAMP, TIMESTAMP_LTZ, a structured accumulator" {
	sql_fixtures
	run sh -c 'ckpt-inspect -R "$0/_metadata" | jq -c "select(.state == \"sink-results\") | .value" | head -1' \
		"$SQ/stream-exec-window-table-function_1__window-table-function-cumulate-tvf"
	output_is '{"kind":"+I","fields":{"bid_time":"2020-04-15T08:00:05","price":"4.00","item":"C","window_start":"2020-04-15T08:00:00","window_end":"2020-04-15T08:00:10","window_time":"2020-04-15T08:00:09.999Z"}}'
	run sh -c 'ckpt-inspect -R "$0/_metadata" | jq -c "select(.state == \"accState\") | .value.fields.f0 | del(.fields.buffer.bytes)"' \
		"$SQ/stream-exec-over-aggregate_1__over-aggregate-lag"
	output_is '{"kind":"+I","fields":{"offset":1,"defaultValue":null,"buffer":{"raw_class":"java.util.LinkedList"}}}'
}

@test "flinksql: a row cut short, an offset outside the row, a decimal past its precision: exit 2, the offset named" {
	sql_fixtures
	# the first sink row of deduplicate-asc claims 16 bytes where its four fields take 40
	patched stream-exec-deduplicate_1__deduplicate-asc 4079 '\x10' 28
	run --separate-stderr ckpt-inspect -R m/_metadata
	status_is 2
	[[ $stderr == *": row of 16 bytes, shorter than the 40 of its fixed part (4 fields)" ]]
	# the string of the first sink row of over-aggregate-lag at 240 of a row of 48 bytes
	patched stream-exec-over-aggregate_1__over-aggregate-lag 9039 '\xf0' 18
	run --separate-stderr ckpt-inspect -R m/_metadata
	status_is 2
	[[ $stderr == *": offset 8693: row offset 8: variable part at 240, 19 bytes, outside the row's 48" ]]
	# DECIMAL(10, 2) price of window-table-function-cumulate-tvf as 2^63 - 1: 19 digits
	patched stream-exec-window-table-function_1__window-table-function-cumulate-tvf 13186 \
		'\xff\xff\xff\xff\xff\xff\xff\x7f' 9001000000000000
	run --separate-stderr ckpt-inspect -R m/_metadata
	status_is 2
	[[ $stderr == *": offset 12275: row offset 16: decimal of 19 digits, more than its precision 10" ]]
	[ -z "$output" ] || [ "$(printf '%s\n' "$output" | wc -l)" -lt 40 ]
}

@test "flinksql: a key whose bytes do not hash to its key group (BinaryRowData.hashCode): exit 2 naming both" {
	sql_fixtures
	# the key row ("pen") of deduplicate-asc's state in key group 3 made "pem": Flink's key group of
	# that row is 82 (murmur of MurmurHashUtil.hashBytesByWords over the row, as Flink assigns it)
	patched stream-exec-deduplicate_1__deduplicate-asc 10184 m 6e
	bad 2 "ckpt-inspect: m/_metadata:inline:file:/var/folders/m1/_62k49_10zq56kf2q3pngg700000gq/T/junit7267982668502044271/savepoint-433758-eee493538448/08ab1b94-95a6-406a-860a-7f68801c39e2: offset 4710: a key of state \"deduplicate-state\" in key group 3 hashes to key group 82" \
		ckpt-inspect -a m
	# unchanged, every key of the SQL fixtures hashes to its key group (the -R goldens above)
	run ckpt-inspect -a "$SQ/stream-exec-deduplicate_1__deduplicate-asc"
	status_is 0
}


@test "flinksql: -k a key row (as -R prints it, or the array of its fields): that key's rows alone" {
	sql_fixtures
	local d=$SQ/stream-exec-deduplicate_1__deduplicate-asc want
	want=$(ckpt-inspect -R "$d" | grep -F '"key":{"kind":"+I","fields":{"f0":"pen"}}')
	[ "$(printf '%s\n' "$want" | wc -l)" -eq 1 ]
	run --separate-stderr ckpt-inspect -R -k '{"kind":"+I","fields":{"f0":"pen"}}' "$d"
	status_is 0
	[ "$output" = "$want" ] && [ -z "$stderr" ]
	run --separate-stderr ckpt-inspect -R -k '["pen"]' "$d"
	status_is 0
	[ "$output" = "$want" ]
	# a string of more than 7 bytes is in the row's variable part, not its slot
	d=$FIXTURES/flink-savepoints/v5-table-over-aggregate-unbounded-partitioned-rows-savepoint
	want=$(ckpt-inspect -R "$d" | grep -F '"key":{"kind":"+I","fields":{"f0":"Hello World"}}')
	[ -n "$want" ]
	run --separate-stderr ckpt-inspect -R -k '["Hello World"]' "$d"
	status_is 0
	[ "$output" = "$want" ]
	# a row of no fields (an over aggregate without PARTITION BY)
	d=$FIXTURES/flink-savepoints/v4-flink1.18-table-over-aggregate-lag-savepoint
	want=$(ckpt-inspect -R "$d" | grep -F '"key":{"kind":"+I","fields":{}}')
	[ -n "$want" ]
	run --separate-stderr ckpt-inspect -R -k '[]' "$d"
	status_is 0
	[ "$output" = "$want" ]
	# a key no entry has, and one of another row kind: nothing, exit 0
	d=$SQ/stream-exec-deduplicate_1__deduplicate-asc
	run --separate-stderr ckpt-inspect -R -k '["pencil case"]' "$d"
	status_is 0
	[ -z "$output" ] && [ -z "$stderr" ]
	run --separate-stderr ckpt-inspect -R -k '{"kind":"-D","fields":{"f0":"pen"}}' "$d"
	status_is 0
	[ -z "$output" ]
}

@test "flinksql: -k every key row of every SQL fixture gives exactly the rows -R gives it" {
	sql_fixtures
	local d o k n=0
	for d in "$SQ"/*/; do
		ckpt-inspect -R "$d" >all.ndjson
		# the operator and key of each row, as ckpt wrote them (grep -F: jq would round big numbers)
		jq -c 'select((.key | type) == "object" and (.key | has("fields"))) | [.operator, .key]' all.ndjson | sort -u >keys
		while read -r o; do
			k=$(printf '%s' "$o" | sed 's/^\["[0-9a-f]*",//; s/\]$//')
			o=$(printf '%s' "$o" | cut -c3-34)
			grep -F "\"operator\":\"$o\"," all.ndjson | grep -F "\"key\":$k," >want || true
			ckpt-inspect -R -u "$o" -k "$k" "$d" >got
			cmp -s want got || { echo "$d: -u $o -k $k:"; diff want got | head -5; return 1; }
			n=$((n + 1))
		done <keys
	done
	[ "$n" -ge 40 ] || { echo "only $n keys"; return 1; }
}

@test "flinksql: -k a key row that does not fit the key's logical types: exit 2 naming the field" {
	sql_fixtures
	local d=$SQ/stream-exec-deduplicate_1__deduplicate-asc m
	m="ckpt-inspect: $d/_metadata: operator ee66688ce5e6ce36d972a4f69b73ae3a: -k"
	bad 2 "$m [5] does not match the key serializer RowDataSerializer: expected field f0 (VARCHAR): a string or null" \
		ckpt-inspect -R -k '[5]' "$d"
	bad 2 "$m [\"pen\",1] does not match the key serializer RowDataSerializer: expected a row of 1 field: {\"kind\": \"+I\", \"fields\": {\"f0\": ...}} as -a prints it, or an array of its fields" \
		ckpt-inspect -R -k '["pen",1]' "$d"
	bad 2 "$m {\"fields\":{\"f1\":\"pen\"}} does not match the key serializer RowDataSerializer: expected a row with the field f0" \
		ckpt-inspect -R -k '{"fields":{"f1":"pen"}}' "$d"
	bad 2 "$m {\"kind\":\"+X\",\"fields\":{\"f0\":\"pen\"}} does not match the key serializer RowDataSerializer: expected a row kind of \"+I\", \"-U\", \"+U\" or \"-D\"" \
		ckpt-inspect -R -k '{"kind":"+X","fields":{"f0":"pen"}}' "$d"
	bad 2 "$m \"pen\" does not match the key serializer RowDataSerializer: expected a row of 1 field: {\"kind\": \"+I\", \"fields\": {\"f0\": ...}} as -a prints it, or an array of its fields" \
		ckpt-inspect -R -k '"pen"' "$d"
	# an INTEGER key: a number out of its range
	d=$SQ/stream-exec-interval-join_1__interval-join-event-time
	run --separate-stderr ckpt-inspect -R -k '[2147483648]' "$d"
	status_is 2
	[[ $stderr == *"-k [2147483648] does not match the key serializer RowDataSerializer: expected field f0 (INTEGER): an integer in its range, or null" ]]
	[ -z "$output" ]
}
