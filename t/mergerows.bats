#!/usr/bin/env bats
# ckpt-merge --rows FILE and --clear STATE (issue 40 section 3): the rows ckpt-inspect -R prints,
# edited, written back into a canonical savepoint.  The round trip on every canonical savepoint of
# the fixtures proves the encoders (lib/flink/types/encode.c, key.c) byte for byte on real data;
# edits give exactly the rows given; every refusal is one line, and nothing is written then.
# Flink restoring the edits: t/flink/rows.bats.

load helper

# snap NAME FIXTURE: a link named NAME to $FIXTURES/FIXTURE, so that messages name it short.
snap() {
	ln -s "$FIXTURES/$2" "$1"
}

UDF=flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint
OP=d5c8b168c6cbfe8c507a10f88b325243 # its first keyed operator: state-name, a ValueState<Long> of Tuple1<Long> keys

# nothing_left: no output directory out, and no temporary directory beside it.
nothing_left() {
	run ls -A
	! grep -q '^out\|^\.out' <<<"$output" || { echo "left behind: $output"; return 1; }
}

# the_rows DIR OPERATOR STATE: DIR's rows of that state, subtask and key group left out, sorted.
the_rows() {
	ckpt-inspect -R -u "$2" --state "$3" "$1" | jq -c 'del(.subtask, .key_group)' | sort
}

@test "mergerows: -R | --rows - gives back every canonical savepoint of flink-artifacts byte for byte" {
	needs_fixtures
	local f n=0
	for f in "$FIXTURES"/flink-artifacts/*-savepoint; do
		rm -rf out
		ckpt-inspect -R "$f" >rows
		ckpt-merge --rows - -o out/ "$f" <rows
		ckpt-inspect -R out | cmp - rows || { echo "$f: rows differ"; return 1; }
		ckpt-inspect -c out | jq -e .ok >/dev/null || { echo "$f: -c fails"; return 1; }
		# the keyed state was written anew, not copied
		! grep -q key_group rows || ls out | grep -q '^keyed-' || { echo "$f: no keyed file written"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 24 ]
}

@test "mergerows: -R | --rows gives back the SQL restore savepoints byte for byte" {
	needs_fixtures
	local f n=0
	for f in "$FIXTURES"/flink-sql-restore/*/; do
		f=${f%/}
		[ "${f##*/}" != stream-exec-match_1__match-complex ] || continue
		rm -rf out
		ckpt-inspect -R "$f" >rows
		ckpt-merge --rows rows -o out/ "$f"
		ckpt-inspect -R out | cmp - rows || { echo "$f: rows differ"; return 1; }
		ckpt-inspect -c out | jq -e .ok >/dev/null || { echo "$f: -c fails"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -eq 30 ]
	# the CEP job's header names a serializer ckpt cannot step over: refused, nothing written
	rm -rf out
	snap cep flink-sql-restore/stream-exec-match_1__match-complex
	ckpt-inspect -R cep >rows
	bad 1 "ckpt-merge: cep/_metadata: operator 165829c9d160df2560df1893e9059ee5 subtask 0: its keyed state header cannot be read: the VALUE_SERIALIZER of state \"nfaStateName\" is a org.apache.flink.cep.nfa.NFAStateSerializerSnapshot, whose snapshot ckpt cannot step over" \
		ckpt-merge --rows rows -o out/ cep
	nothing_left
}

@test "mergerows: a value state's rows deleted, changed and added are exactly the state afterwards" {
	needs_fixtures
	snap sp $UDF
	ckpt-inspect -R -u $OP --state state-name sp |
		jq -c 'select(.key != [1]) | if .key == [3] then .value = 30 else . end' >rows
	echo '{"operator":"'$OP'","state":"state-name","key_group":0,"key":[7],"namespace":null,"value":70}' >>rows
	ckpt-merge --rows rows -o out/ sp
	run ckpt-inspect -R -u $OP --state state-name out
	output_is '{"uid":null,"operator":"d5c8b168c6cbfe8c507a10f88b325243","state":"state-name","kind":"value","subtask":1,"key_group":1,"key":[3],"namespace":null,"value":30}
{"uid":null,"operator":"d5c8b168c6cbfe8c507a10f88b325243","state":"state-name","kind":"value","subtask":1,"key_group":1,"key":[7],"namespace":null,"value":70}
{"uid":null,"operator":"d5c8b168c6cbfe8c507a10f88b325243","state":"state-name","kind":"value","subtask":2,"key_group":2,"key":[0],"namespace":null,"value":0}
{"uid":null,"operator":"d5c8b168c6cbfe8c507a10f88b325243","state":"state-name","kind":"value","subtask":3,"key_group":3,"key":[2],"namespace":null,"value":2}'
	# the new key where -k looks for it (its key group Flink's, not the row's 0)
	run sh -c "ckpt-inspect -R -u $OP -k '[7]' out | jq -c '[.key_group, .value]'"
	output_is '[1,70]'
	# every other row as it was
	diff <(ckpt-inspect -R sp | grep -v $OP) <(ckpt-inspect -R out | grep -v $OP)
	ckpt-inspect -c out | jq -e .ok >/dev/null
}

@test "mergerows: a map state's and a list state's rows edited (SQL RowData keys, user keys and values)" {
	needs_fixtures
	local j=d048d7b2bbd1f4c7a3b1cdd5df979ed0 w=9a1e7cab9657a89496d64f051ca5eb1c
	snap join flink-sql-restore/stream-exec-join_1__join-anti-join
	ckpt-inspect -R -u $j --state right-records join |
		jq -c 'select(.user_key.fields.f0 != 2) | if .user_key.fields.f0 == 3 then .value = 5 else . end' >map
	jq -c 'select(.user_key.fields.f0 == 1) | .user_key.fields.f0 = 9 | .value = 4' map >>map
	ckpt-merge --rows map -o out/ join
	diff <(jq -c 'del(.subtask, .key_group)' map | sort) <(the_rows out $j right-records)
	[ "$(wc -l <map)" -eq 3 ]
	diff <(ckpt-inspect -R join | grep -v right-records) <(ckpt-inspect -R out | grep -v right-records)

	snap win flink-sql-restore/stream-exec-window-join_1__window-join-anti-tumble-event-time
	# key "b": a second element (its rows consecutive); a new key "z" of one element
	ckpt-inspect -R -u $w --state left-records win |
		jq -c '., (select(.key.fields.f0 == "b") | .index = 1 | .value.fields.f0 = "L99")' >list
	jq -c 'select(.key.fields.f0 == "b" and .index == 0) | .key.fields.f0 = "z" | .value.fields.f2 = "z"' list >>list
	rm -rf out
	ckpt-merge --rows list -o out/ win
	diff <(jq -c 'del(.subtask, .key_group)' list | sort) <(the_rows out $w left-records)
	run sh -c "ckpt-inspect -R -u $w --state left-records -k '{\"kind\":\"+I\",\"fields\":{\"f0\":\"b\"}}' out | jq -c '[.index, .value.fields.f0]'"
	output_is '[0,"L12"]
[1,"L99"]'
}

@test "mergerows: a TTL value's last access is kept from the row" {
	needs_fixtures
	local o=20066aaa5f4902f5627b7c13fb0ab2a5
	snap ttl flink-sql-restore/stream-exec-group-aggregate_1__agg-with-state-ttl-hint
	ckpt-inspect -R -u $o --state accState ttl | jq -c '.value.last_access += 1000 | .value.value.fields.f3 = "Changed"' >rows
	ckpt-merge --rows rows -o out/ ttl
	diff <(jq -c 'del(.subtask, .key_group)' rows | sort) <(the_rows out $o accState)
	run sh -c "ckpt-inspect -R -u $o --state accState out | jq -c '.value.last_access'"
	output_is '1706683112489
1706683112476'
}

@test "mergerows: --rows from a file and from standard input alike; --clear empties a state" {
	needs_fixtures
	snap sp $UDF
	ckpt-inspect -R -u $OP --state state-name sp | jq -c 'select(.key != [0])' >rows
	ckpt-merge --rows rows -o a/ sp
	ckpt-merge --rows - -o b/ sp <rows
	diff <(ckpt-inspect -R a) <(ckpt-inspect -R b)
	[ "$(ckpt-inspect -R -u $OP --state state-name a | wc -l)" -eq 3 ]
	ckpt-merge --clear state-name -o c/ sp
	[ "$(ckpt-inspect -R sp | grep -c '"state":"state-name"')" -eq 16 ]
	run sh -c 'ckpt-inspect -R c | grep -c "\"state\":\"state-name\""'
	output_is 0
	diff <(ckpt-inspect -R sp | grep -v '"state":"state-name"') <(ckpt-inspect -R c)
	# --clear and rows: the state is the rows
	ckpt-merge --clear state-name --rows rows -o d/ sp
	diff <(the_rows a $OP state-name) <(the_rows d $OP state-name)
	[ "$(ckpt-inspect -R d | grep -c '"state":"state-name"')" -eq 3 ]
}

@test "mergerows: operator state and values ckpt cannot write are taken only unchanged" {
	needs_fixtures
	local o=eaed5eb4f7c21d1756a233804eba9ed6
	snap sp $UDF
	ckpt-inspect -R sp | jq -c 'select(.kind == "list" and .key_group == null)' >rows
	ckpt-merge --rows rows -o out/ sp
	rm -rf out
	jq -c 'if .index == 0 then .value = "Here be cats" else . end' rows >changed
	bad 1 "ckpt-merge: changed:1: operator state source-state of operator 69f32d314b97c6f7f9ed7873983167f2: ckpt writes operator state back only as it is" \
		ckpt-merge --rows changed -o out/ sp
	nothing_left
	# agg1$valueToOrderMap's values are SQL arrays, written since ckpt writes BinaryArrayData
	snap expand flink-sql-restore/stream-exec-expand_1__expand
	ckpt-inspect -R -u $o --state 'agg1$valueToOrderMap' expand >vto
	jq -c 'if .user_key == "Hello" then .value = [5] else . end' vto >vto2
	ckpt-merge --rows vto2 -o out/ expand
	run sh -c "ckpt-inspect -R -u $o --state 'agg1\$valueToOrderMap' out | jq -c 'select(.user_key == \"Hello\") | .value'"
	output_is '[5]'
}

@test "mergerows: a bad row is named by its line, exit 2, nothing written" {
	needs_fixtures
	snap sp $UDF
	local r='{"operator":"'$OP'","state":"state-name","key_group":0,"key":[7],"namespace":null,"value":70}'
	row() { # row LINE...: the lines into file r
		printf '%s\n' "$@" >r
	}
	row "$r" "${r/state-name/nope}"
	bad 2 "ckpt-merge: r:2: operator $OP has no keyed state nope" ckpt-merge --rows r -o out/ sp
	row "${r/$OP/ffff}"
	bad 2 "ckpt-merge: r:1: no operator ffff in the snapshot" ckpt-merge --rows r -o out/ sp
	row "${r/:70/:\"x\"}"
	bad 2 "ckpt-merge: r:1: state state-name: the value does not fit its serializer LongSerializer: expected an integer (a long)" \
		ckpt-merge --rows r -o out/ sp
	row "${r/\[7\]/[\"a\"]}"
	bad 2 "ckpt-merge: r:1: state state-name: the key does not fit its serializer TupleSerializer: expected an integer (a long)" \
		ckpt-merge --rows r -o out/ sp
	row "${r/\[7\]/[7,8]}"
	bad 2 "ckpt-merge: r:1: state state-name: the key does not fit its serializer TupleSerializer: expected an array of 1 field (a tuple)" \
		ckpt-merge --rows r -o out/ sp
	row "$r" '' "${r:0:40}"
	bad 2 "ckpt-merge: r:3:40: unexpected newline" ckpt-merge --rows r -o out/ sp
	row '[1]'
	bad 2 "ckpt-merge: r:1: not a row: an object with \"operator\" and \"state\" (as ckpt-inspect -R prints them)" \
		ckpt-merge --rows r -o out/ sp
	row "${r/,\"value\":70/}"
	bad 2 "ckpt-merge: r:1: state state-name: the row has no value" ckpt-merge --rows r -o out/ sp
	row "$r" "${r/:70/:71}"
	bad 2 "ckpt-merge: r:2: state state-name: a second row of the key of line 1" ckpt-merge --rows r -o out/ sp
	snap win flink-sql-restore/stream-exec-window-join_1__window-join-anti-tumble-event-time
	ckpt-inspect -R -u 9a1e7cab9657a89496d64f051ca5eb1c --state left-records win >list
	head -1 list >>list
	bad 2 "ckpt-merge: list:3: state left-records: an element of the list of line 1 apart from it (a list's elements come in consecutive rows)" \
		ckpt-merge --rows list -o out/ win
	bad 2 "ckpt-merge: --clear: nope: no keyed state of that name in the snapshot" ckpt-merge --clear nope -o out/ sp
	bad 2 "ckpt-merge: nofile: cannot open: No such file or directory" ckpt-merge --rows nofile -o out/ sp
	nothing_left
}

@test "mergerows: what --rows cannot write into is refused: other forms, wrong options, damaged state files" {
	needs_fixtures
	local f=19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5
	echo '{"operator":"'$OP'","state":"state-name","key_group":0,"key":[7],"namespace":null,"value":70}' >r
	snap chk flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint
	snap native flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-rocksdb-savepoint-native
	bad 1 "ckpt-merge: chk/_metadata: operator $OP subtask 1: its keyed state is not a canonical savepoint's (a key_groups handle): --rows writes into canonical savepoints only: make one with ckpt-merge --canonical first" \
		ckpt-merge --rows r -o out/ chk
	bad 1 "ckpt-merge: native/_metadata: operator $OP subtask 1: its keyed state is not a canonical savepoint's (a incremental handle): --rows writes into canonical savepoints only: make one with ckpt-merge --canonical first" \
		ckpt-merge --rows r -o out/ native
	bad 2 "ckpt-merge: --rows and --clear write a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" ckpt-merge --rows r chk
	bad 2 "ckpt-merge: --rows and --clear keep each operator's parallelism and max parallelism: -P and --max-parallelism with them are not supported yet (see ckpt-merge -h)" \
		ckpt-merge --rows r --max-parallelism 8 -o out/ chk
	bad 2 "ckpt-merge: --rows and --clear need the savepoint (its directory or its _metadata), not standard input (see ckpt-merge -h)" \
		sh -c 'ckpt-merge --rows r -o out/ < chk/_metadata'
	bad 2 "ckpt-merge: --rows: one file of rows at most (see ckpt-merge -h)" ckpt-merge --rows r --rows r -o out/ chk
	cp -r "$FIXTURES/$UDF" cut
	chmod -R u+w cut
	cp -r cut flipped
	truncate -s 500 cut/$f
	bad 2 "ckpt-merge: cut/$f: short: 500 bytes, the _metadata records 535" ckpt-merge --rows r -o out/ cut
	flip flipped/$f 300
	bad 2 "ckpt-merge: flipped/$f: offset 301: serializer snapshot format version 3 (2, Flink 1.7 on, expected)" \
		ckpt-merge --rows r -o out/ flipped
	nothing_left
}

@test "mergerows: the --rows and --clear EXAMPLES of ckpt-merge(1) run as shown" {
	needs_fixtures
	snap savepoint-udf $UDF
	ckpt-inspect -R -u d5c8b168c6cbfe8c507a10f88b325243 \
		--state state-name savepoint-udf |
		jq -c 'select(.key != [1])
         | if .key == [3] then .value = 30 else . end' >rows.ndjson
	echo '{"operator": "d5c8b168c6cbfe8c507a10f88b325243",
  "state": "state-name", "key": [7], "namespace": null,
  "value": 70, "key_group": 0}' | jq -c . >>rows.ndjson
	ckpt-merge --rows rows.ndjson -o repaired/ savepoint-udf
	run sh -c "ckpt-inspect -R -u d5c8b168c6cbfe8c507a10f88b325243 --state state-name repaired | jq -c '[.key, .value]'"
	output_is '[[3],30]
[[7],70]
[[0],0]
[[2],2]'
	ckpt-merge --clear state-name -o cleared/ savepoint-udf
	run sh -c "ckpt-inspect -R cleared | grep -c '\"state\":\"state-name\"'"
	output_is 0
}
