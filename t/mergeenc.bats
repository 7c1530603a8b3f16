#!/usr/bin/env bats
# ckpt-merge --rows (issue 40 section 3) on values of the encoders beyond mergerows.bats's: POJO
# subclasses (by tag and by name), on t/flinkavro-helper.bash's synthetic state made canonical.
# A changed value reads back changed (-R), the savepoint checks (-c); what ckpt still cannot
# write is refused naming it.  Flink restoring such edits: t/flink/rows.bats, restoreenc.bats.

bats_require_minimum_version 1.5.0
load helper
load flinkavro-helper

# canon: flinkavro's states as a canonical savepoint sp (sv_dir writes a heap savepoint), its
# rows in rows.
canon() {
	sv_dir "$STATES"
	ckpt-merge --canonical -o can/ sp
	rm -rf sp
	mv can sp
	ckpt-inspect -R sp >rows
}

# edit JQ: the rows edited by the jq filter JQ written into out/, which checks; the rows of out
# that differ from sp's, as {STATE: VALUE}.
edit() {
	jq -c "$1" rows >edited
	ckpt-merge --rows edited -o out/ sp
	ckpt-inspect -c out >/dev/null
	ckpt-inspect -R out | diff rows - | sed -n 's/^> //p' | jq -c '{(.state): .value}'
}

@test "mergeenc: POJO subclasses written by their tag (registered) and by their name (cached)" {
	canon
	run edit 'if .state == "sub" then .value.value.extra = 5
		elif .state == "cached" then .value.value.c = 12
		elif .state == "base" then .value = {subclass: "x.Cached", tag: null, value: {c: 99}}
		elif .state == "nulls" then .value = {subclass: "x.Sub", tag: 0, value: {extra: null, name: "t"}}
		else . end'
	status_is 0
	output_is '{"base":{"subclass":"x.Cached","tag":null,"value":{"c":99}}}
{"nulls":{"subclass":"x.Sub","tag":0,"value":{"extra":null,"name":"t"}}}
{"sub":{"subclass":"x.Sub","tag":0,"value":{"extra":5,"name":"s"}}}
{"cached":{"subclass":"x.Cached","tag":null,"value":{"c":12}}}'
	# and back to the class itself
	rm -rf out
	run edit 'if .state == "sub" then .value = {name: "n", inner: {n: 1}, gone: null} else . end'
	status_is 0
	output_is '{"sub":{"name":"n","inner":{"n":1},"gone":null}}'
}

@test "mergeenc: a POJO subclass the snapshot has no serializer of, or with another tag, is a bad row" {
	canon
	local e='state sub: the value does not fit its serializer PojoSerializer: expected'
	jq -c 'if .state == "sub" then .value.subclass = "x.Other" else . end' rows >r
	bad 2 "ckpt-merge: r:7: $e a subclass the snapshot holds a serializer of (registered or cached)" \
		ckpt-merge --rows r -o out/ sp
	jq -c 'if .state == "sub" then .value.tag = 1 else . end' rows >r
	bad 2 "ckpt-merge: r:7: $e the tag of subclass x.Sub: 0" ckpt-merge --rows r -o out/ sp
	jq -c 'if .state == "sub" then .value.subclass = "x.Cached" else . end' rows >r
	bad 2 "ckpt-merge: r:7: $e the tag of subclass x.Cached: null (not registered)" ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "mergeenc: Avro records (snapshot versions 3 and 2) written back changed, logical types included" {
	canon
	# unchanged: the same bytes
	ckpt-merge --rows rows -o out/ sp
	cmp <(ckpt-inspect -R sp) <(ckpt-inspect -R out)
	rm -rf out
	run edit 'if .state == "rec3" then .value += {u: null, e: "A", f: {base64: "AAEC"}, d: "1234567.5",
			df: "-0.0128", dt: "-0001-12-31", ts: "1969-12-31T23:59:59.999Z", us: "2024-02-29T10:00:00.000001Z",
			lt: "2024-02-29T10:00:00.5", tm: "23:59:59.999", m: {"a": 1, "é": -2}, a: [], fl: "NaN", b: false,
			by: "x", next: .value.next.next}
		elif .state == "rec2" then .value.next.next = .value.next | .value.next.next.next = null
			| .value.next.m = {} | .value.next.a = [1, 2] | .value.next.d = "0" | .value.next.df = "0.9999"
		else . end'
	status_is 0
	output_is '{"rec3":{"u":null,"e":"A","f":{"base64":"AAEC"},"d":"1234567.50","df":"-0.0128","dt":"-0001-12-31","ts":"1969-12-31T23:59:59.999Z","us":"2024-02-29T10:00:00.000001Z","lt":"2024-02-29T10:00:00.500","tm":"23:59:59.999","m":{"a":1,"é":-2},"a":[],"fl":"NaN","b":false,"by":"x","next":null}}
{"rec2":{"u":"hé","e":"C","f":"xyz","d":"-1.23","df":"0.0007","dt":"2024-01-01","ts":"2024-01-01T00:00:00.123Z","us":"1969-12-31T23:59:59.999999Z","lt":"1970-01-01T23:59:59.999","tm":"01:02:03.004","m":{"k":5},"a":[7,-1,9],"fl":1.25,"b":true,"by":{"base64":"AMM="},"next":{"u":"hé","e":"C","f":"xyz","d":"0.00","df":"0.9999","dt":"2024-01-01","ts":"2024-01-01T00:00:00.123Z","us":"1969-12-31T23:59:59.999999Z","lt":"1970-01-01T23:59:59.999","tm":"01:02:03.004","m":{},"a":[1,2],"fl":1.25,"b":true,"by":{"base64":"AMM="},"next":{"u":"hé","e":"C","f":"xyz","d":"-1.23","df":"0.0007","dt":"2024-01-01","ts":"2024-01-01T00:00:00.123Z","us":"1969-12-31T23:59:59.999999Z","lt":"1970-01-01T23:59:59.999","tm":"01:02:03.004","m":{"k":5},"a":[7,-1,9],"fl":1.25,"b":true,"by":{"base64":"AMM="},"next":null}}}}'
}

@test "mergeenc: an Avro value that does not fit its schema is a bad row, named by what was expected" {
	canon
	local e='state rec3: the value does not fit its serializer AvroSerializer: expected'
	try() { # WHAT JQ: the edit of rec3 (line 3) refused, expecting WHAT
		jq -c "if .state == \"rec3\" then $2 else . end" rows >r
		bad 2 "ckpt-merge: r:3: $e $1" ckpt-merge --rows r -o out/ sp
	}
	try 'a symbol of the Avro enum' '.value.e = "D"'
	try 'a decimal text ("-1.23") within its scale' '.value.d = "1.234"'
	try 'a decimal text ("-1.23") within its scale and its fixed'"'"'s size' '.value.df = "3.2768"'
	try 'an entry of 3 bytes (an Avro fixed)' '.value.f = "ab"'
	try 'a date ("2024-02-29")' '.value.dt = "2023-02-29"'
	try 'a time within a day ("10:00:00.123")' '.value.tm = "24:00:00.000"'
	try 'a timestamp in UTC ("2024-02-29T10:00:00.123Z")' '.value.ts = "2024-01-01T00:00:00.1234Z"'
	try 'a local timestamp ("2024-02-29T10:00:00.123")' '.value.lt = "2024-01-01T00:00:00Z"'
	try 'a value of one of the Avro union'"'"'s branches' '.value.u = 5'
	try 'an integer of 32 bits (an Avro int)' '.value.a = [2147483648]'
	try 'an object of the fields of Avro record x.av.R' '.value.x = 1'
	try 'an object (an Avro map)' '.value.m = []'
	try 'true or false' '.value.b = 1'
	[ ! -e out ]
}

# sql NAME: the SQL job's savepoint of that fixture linked as sp.
sql() {
	needs_fixtures
	ln -s "$FIXTURES/flink-sql-restore/$1" sp
}

# rows_of DIR OPERATOR STATE...: those states' rows of DIR, subtask and key group left out, sorted.
rows_of() {
	local d=$1 o=$2 s
	shift 2
	for s; do ckpt-inspect -R -u "$o" --state "$s" "$d"; done | jq -c 'del(.subtask, .key_group)' | sort
}

@test "mergeenc: SQL values with nested STRUCTURED rows (RAW fields kept from the row) and ExternalSerializer values, changed" {
	sql stream-exec-expand_1__expand
	local a=eaed5eb4f7c21d1756a233804eba9ed6 b=f5cdec4127cb83243f910937981306f8
	{
		ckpt-inspect -R -u $a --state accState sp |
			jq -c '.value.fields.f0 += 10 | .value.fields.f1.fields.firstValue += " and a longer tail"'
		ckpt-inspect -R -u $b --state distinctAcc_0 sp | jq -c 'select(.user_key != 1) | .value += 40'
	} >edited
	ckpt-merge --rows edited -o out/ sp
	run ckpt-inspect -c out
	status_is 0
	diff <(jq -c 'del(.subtask, .key_group)' edited | sort) \
		<(rows_of out $a accState; rows_of out $b distinctAcc_0 | sort)
	# what changed is what was given: f0, firstValue and distinctAcc_0
	run sh -c "ckpt-inspect -R out | jq -c 'select(.state == \"accState\" and .operator == \"$a\") | [.value.fields.f0, .value.fields.f1.fields.firstValue]'"
	output_is '[12,"Hello and a longer tail"]
[11,"Hi and a longer tail"]'
	run sh -c "ckpt-inspect -R out | jq -c 'select(.state == \"distinctAcc_0\") | [.user_key, .value]'"
	output_is '[2,41]
[3,41]'
	# every other state as it was
	diff <(ckpt-inspect -R sp | grep -v '"accState".*"'$a'"\|"'$a'".*"accState"' | grep -v distinctAcc_0) \
		<(ckpt-inspect -R out | grep -v '"accState".*"'$a'"\|"'$a'".*"accState"' | grep -v distinctAcc_0)
}

@test "mergeenc: a nested SQL field of the wrong type is a bad row naming the field" {
	sql stream-exec-expand_1__expand
	local a=eaed5eb4f7c21d1756a233804eba9ed6
	ckpt-inspect -R -u $a --state accState sp >rows
	jq -c '.value.fields.f1.fields.firstValue = 5' rows >r
	bad 2 "ckpt-merge: r:1: state accState: the value does not fit its serializer RowDataSerializer: expected field f1.firstValue (VARCHAR): a string or null" \
		ckpt-merge --rows r -o out/ sp
	jq -c '.value.fields.f1.fields.valueToOrderMap.raw_class = "x.Other"' rows >r
	bad 2 "ckpt-merge: r:1: state accState: the value does not fit its serializer RowDataSerializer: expected field f1.valueToOrderMap (RAW): {\"raw_class\": its class, \"bytes\": an entry} or null" \
		ckpt-merge --rows r -o out/ sp
	jq -c '.value.fields.f1 = 3' rows >r
	bad 2 "ckpt-merge: r:1: state accState: the value does not fit its serializer RowDataSerializer: expected field f1: a row of 4 fields: {\"kind\": \"+I\", \"fields\": {\"f0\": ..., ...}} as -a prints it, or an array of its fields" \
		ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "mergeenc: an integer beyond 64 bits in a row is named at its line and column, not taken for a changed spool" {
	needs_fixtures
	ln -s "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint" sp
	# in -R's form (its names read without parsing the rest)
	ckpt-inspect -R -u d5c8b168c6cbfe8c507a10f88b325243 --state state-name sp | head -2 >r
	sed -i '2s/"value":[0-9]*/"value":9223372036854775808/' r
	bad 2 "ckpt-merge: r:2:$(($(head -2 r | tail -1 | wc -c) - 2)): too big integer near '9223372036854775808'" \
		ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "mergeenc: an Avro decimal \"-0.00\" is BigInteger zero, written in the bytes \"0\" gives" {
	canon
	jq -c 'if .state == "rec2" then .value.next.d = "-0.00" else . end' rows >e1
	jq -c 'if .state == "rec2" then .value.next.d = "0" else . end' rows >e2
	ckpt-merge --rows e1 -o o1/ sp
	ckpt-merge --rows e2 -o o2/ sp
	ckpt-inspect -a --raw o1 >r1
	ckpt-inspect -a --raw o2 >r2
	cmp r1 r2
	ckpt-inspect -R sp | cmp - <(ckpt-inspect -R o1 | sed 's/"d":"0.00"/"d":"-1.23"/')
}

# raw_entries DIR: every keyed entry of DIR as [operator, state, key bytes, value bytes], sorted.
raw_entries() {
	ckpt-inspect --raw -a "$1" |
		jq -c '.operators[] | .id as $o | .subtasks[]?.keyed_state.entries[]? | [$o, .state, .key, .value]' | sort
}

@test "mergeenc: every SQL fixture's keyed rows written back byte-identical, the first row of each value and map state deleted" {
	needs_fixtures
	local d n del
	for d in "$FIXTURES"/flink-sql-restore/stream-*; do
		case $d in *match*) continue ;; esac # its NFA state's serializer ckpt cannot read
		# the rows as -R prints them (not through jq: it rounds integers beyond 2^53)
		ckpt-inspect -R "$d" >all
		awk '/"key_group":/ && match($0, /"operator":"[^"]*","state":"[^"]*","kind":"(value|map)"/) {
			k = substr($0, RSTART, RLENGTH); n[k]++ } END { for (k in n) if (n[k] > 1) print k }' all >many
		awk 'NR == FNR { many[$0] = 1; next }
			/"key_group":/ && match($0, /"operator":"[^"]*","state":"[^"]*","kind":"(value|map)"/) {
			k = substr($0, RSTART, RLENGTH); if ((k in many) && !(k in gone)) { gone[k] = 1; next } }
			{ print }' many all >rows
		rm -rf out
		ckpt-merge --rows rows -o out/ "$d"
		raw_entries "$d" >a
		raw_entries out >b
		# what is left is byte for byte what was: one entry fewer per state a row left
		del=$(wc -l <many)
		n=$(comm -13 a b | wc -l)
		[ "$n" = 0 ] || { echo "$d: $n entries changed"; false; }
		[ $(($(wc -l <a) - $(wc -l <b))) = "$del" ] || { echo "$d: $del rows deleted, entries $(wc -l <a) -> $(wc -l <b)"; false; }
	done
}

@test "mergeenc: SQL ARRAY values (ArrayDataSerializer) changed, elements added and nulled, read back" {
	sql stream-exec-expand_1__expand
	local a=eaed5eb4f7c21d1756a233804eba9ed6
	ckpt-inspect -R -u $a --state 'agg1$orderToValueMap' sp >rows
	sed '1s/"value":\["Hello world"\]/"value":["Hello, longer world",null,"x"]/; 2s/"value":\["Hello"\]/"value":[]/' rows >edited
	ckpt-merge --rows edited -o out/ sp
	run ckpt-inspect -c out
	status_is 0
	run sh -c "ckpt-inspect -R -u $a --state 'agg1\$orderToValueMap' out | jq -c '[.key.fields.f0, .user_key, .value]' | sort"
	output_is '[1,1700520692079,["Hi"]]
[2,1700520692080,[]]
[2,1700520692081,["Hello, longer world",null,"x"]]'
}

@test "mergeenc: a SQL ARRAY value of the wrong shape is a bad row naming the element" {
	sql stream-exec-expand_1__expand
	local a=eaed5eb4f7c21d1756a233804eba9ed6 e='state agg1$orderToValueMap: the value does not fit its serializer ExternalSerializer: expected'
	ckpt-inspect -R -u $a --state 'agg1$orderToValueMap' sp >rows
	sed '2s/"value":\["Hello"\]/"value":["a",7]/' rows >r
	bad 2 "ckpt-merge: r:2: $e field [1] (VARCHAR): a string or null" ckpt-merge --rows r -o out/ sp
	sed '2s/"value":\["Hello"\]/"value":"Hello"/' rows >r
	bad 2 "ckpt-merge: r:2: $e an array" ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "mergeenc: a SQL DECIMAL above precision 18 (a SUM's DECIMAL(38, s)) is written as BinaryRowData holds it, its unscaled bytes apart" {
	needs_fixtures
	local f=$FIXTURES/flink-sql-restore/stream-exec-window-deduplicate_1__window-deduplicate-asc-cumulate-first-row v
	# the row type of keyed state window_deduplicate, its f0 DECIMAL(10, 2) made DECIMAL(30, 2)
	mkdir sp
	cp "$f/_metadata" sp/
	[ "$(od -An -tx1 -j 1941 -N 8 sp/_metadata | tr -d ' \n')" = 0000000a00000002 ]
	printf '\036' | dd of=sp/_metadata bs=1 seek=1944 conv=notrunc status=none
	for v in '"-12345678901234567890.12"' '"99999999999999999999999999.99"' '"-0.01"' '"0.00"' 1 null; do
		ckpt-inspect -R "$f" | jq -c "select(.state == \"window_deduplicate\") | .value.fields.f0 = $v" >r
		rm -rf out
		ckpt-merge --rows r -o out/ sp
		ckpt-inspect -c out >/dev/null
		ckpt-inspect -R out | jq -c 'select(.state == "window_deduplicate") | .value.fields.f0' >>read
	done
	run cat read
	output_is '"-12345678901234567890.12"
"99999999999999999999999999.99"
"-0.01"
"0.00"
"1.00"
null'
	# 30 digits before the point, where 28 fit
	ckpt-inspect -R "$f" | jq -c 'select(.state == "window_deduplicate") | .value.fields.f0 = "123456789012345678901234567890"' >r
	rm -rf out
	bad 2 "ckpt-merge: r:1: state window_deduplicate: the value does not fit its serializer RowDataSerializer: expected field f0 (DECIMAL(30, 2)): a decimal string (\"-12.50\") within its precision and scale, or null" \
		ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}
