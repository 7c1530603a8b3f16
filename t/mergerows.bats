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

@test "mergerows: SQL array values (ArrayDataSerializer), once taken only unchanged, are written" {
	needs_fixtures
	local o=eaed5eb4f7c21d1756a233804eba9ed6
	# agg1$valueToOrderMap's values are SQL arrays, written since ckpt writes BinaryArrayData
	snap expand flink-sql-restore/stream-exec-expand_1__expand
	ckpt-inspect -R -u $o --state 'agg1$valueToOrderMap' expand >vto
	jq -c 'if .user_key == "Hello" then .value = [5] else . end' vto >vto2
	ckpt-merge --rows vto2 -o out/ expand
	run sh -c "ckpt-inspect -R -u $o --state 'agg1\$valueToOrderMap' out | jq -c 'select(.user_key == \"Hello\") | .value'"
	output_is '[5]'
}

# The broadcast job of flink-artifacts (Flink 1.19, compressed operator state in files of their own):
# a list state, a union state (source-state, parallelism 1) and two broadcast states in one handle
# (parallelism 4, broadcast-state-2 of String keys and Long values beside broadcast-state-1).
BC=flink-artifacts/new-stateful-broadcast-udf-migration-itcase-flink1.19-hashmap-savepoint
LIST=81afaf64abeedc40a0f29989b81a3659
UNION=1f2b5df5a66154aca61fcb26193792be
BCAST=12d7d939fd56473cac7cff0603179a41

# bcast DIR: broadcast-state-2's entries per subtask, one line: [[[KEY, VALUE], ...], ...].
bcast() {
	ckpt-inspect -R -u $BCAST --state broadcast-state-2 "$1" | jq -sc 'group_by(.subtask) | map(map([.user_key, .value]))'
}

@test "mergerows: operator state: list and union elements and broadcast entries deleted, changed and added" {
	needs_fixtures
	snap sp $BC
	{
		ckpt-inspect -R -u $LIST sp | jq -c 'select(.value != "Here be more dragons!")'
		echo '{"operator":"'$LIST'","state":"source-state","subtask":0,"value":"Here be a new dragon"}'
		ckpt-inspect -R -u $UNION sp | jq -c 'if .index == 0 then .value = "Here be no dragon" else . end'
		ckpt-inspect -R -u $BCAST --state broadcast-state-2 sp |
			jq -c 'select(.user_key != "3") | if .user_key == "1" then .value = 100 else . end'
		for s in 0 1 2 3; do
			echo '{"operator":"'$BCAST'","state":"broadcast-state-2","subtask":'$s',"user_key":"new","value":5}'
		done
	} >rows
	ckpt-merge --rows rows -o out/ sp
	run sh -c "ckpt-inspect -R -u $LIST out | jq -c '[.subtask, .index, .value]'"
	output_is '[0,0,"Here be dragons!"]
[0,1,"Here be yet more dragons!"]
[0,2,"Here be the mostest dragons!"]
[0,3,"Here be a new dragon"]'
	run sh -c "ckpt-inspect -R -u $UNION out | jq -c '[.kind, .subtask, .index, .value]'"
	output_is '["union",0,0,"Here be no dragon"]
["union",0,1,"Here be more dragons!"]
["union",0,2,"Here be yet more dragons!"]
["union",0,3,"Here be the mostest dragons!"]'
	run bcast out
	output_is "$(printf '[%s,%s,%s,%s]' '[["0",0],["1",100],["2",2],["new",5]]' '[["0",0],["1",100],["2",2],["new",5]]' \
		'[["0",0],["1",100],["2",2],["new",5]]' '[["0",0],["1",100],["2",2],["new",5]]')"
	# the broadcast state beside it in its handles, and every state no row names, as they were
	diff <(ckpt-inspect -R sp | grep -v '"state":"broadcast-state-2"\|"operator":"'$LIST'\|"operator":"'$UNION) \
		<(ckpt-inspect -R out | grep -v '"state":"broadcast-state-2"\|"operator":"'$LIST'\|"operator":"'$UNION)
	ckpt-inspect -c out | jq -e .ok >/dev/null
	# a new stream for each handle that changed (its elements uncompressed), none for the others
	run sh -c 'ls out | grep ^operator- | sort'
	output_is "operator-$BCAST-0
operator-$BCAST-1
operator-$BCAST-2
operator-$BCAST-3
operator-$UNION-0
operator-$LIST-0"
	# the rows given back unchanged: nothing written anew
	ckpt-inspect -R out | grep -v key_group >same
	ckpt-merge --rows same -o again/ out
	run sh -c 'ls again | grep -c ^operator-'
	output_is 6
	cmp out/operator-$LIST-0 again/operator-$LIST-0
}

@test "mergerows: --clear empties operator state on every subtask holding it" {
	needs_fixtures
	snap sp $BC
	ckpt-merge --clear broadcast-state-2 --clear source-state -o out/ sp
	run sh -c "ckpt-inspect -R out | grep -c '\"state\":\"broadcast-state-2\"\\|\"state\":\"source-state\"'"
	output_is 0
	diff <(ckpt-inspect -R sp | grep -v '"state":"broadcast-state-2"\|"state":"source-state"') <(ckpt-inspect -R out)
	ckpt-inspect -c out | jq -e .ok >/dev/null
}

@test "mergerows: untyped rows of operator state carry their bytes: a list element, a broadcast map whole" {
	needs_fixtures
	local m
	snap sp $BC
	# StringSerializer's "abcd": its length + 1, then the characters
	printf '%s\n' '{"operator":"'$LIST'","state":"source-state","subtask":0,"value":"\u0005abcd","untyped":""}' \
		'{"operator":"'$LIST'","state":"source-state","subtask":0,"value":"efg"}' >rows
	# broadcast-state-2's map of two entries: i32 2, then "0" -> 0 and "1" -> 1 (String keys, Long values)
	m=$(printf '\0\0\0\002\0020\0\0\0\0\0\0\0\0\0021\0\0\0\0\0\0\0\001' | base64)
	for s in 0 1 2 3; do
		echo '{"operator":"'$BCAST'","state":"broadcast-state-2","subtask":'$s',"value":{"base64":"'$m'"},"untyped":""}'
	done >>rows
	ckpt-merge --rows rows -o out/ sp
	run sh -c "ckpt-inspect -R -u $LIST out | jq -c .value"
	output_is '"abcd"
"efg"'
	run bcast out
	output_is '[[["0",0],["1",1]],[["0",0],["1",1]],[["0",0],["1",1]],[["0",0],["1",1]]]'
	ckpt-inspect -c out | jq -e .ok >/dev/null
	echo '{"operator":"'$BCAST'","state":"broadcast-state-2","subtask":0,"user_key":"2","value":2}' >>rows
	bad 2 "ckpt-merge: rows:7: state broadcast-state-2: the untyped row of line 3 holds the subtask's map whole" \
		ckpt-merge --rows rows -o out2/ sp
	[ ! -e out2 ]
}

@test "mergerows: a connector's splits, which ckpt cannot write, are taken as the state holds them" {
	needs_fixtures
	local op=cb16aa5adb311e8ac72482def19accbe
	snap k flink-connectors/kafka-source-enum1-split0
	# partition 2's split deleted, partition 9's moved from subtask 1 to subtask 0 (last there)
	ckpt-inspect -R -u $op k | jq -c 'select(.value.partition != 2) | if .value.partition == 9 then .subtask = 0 else . end' >rows
	ckpt-merge --rows rows -o out/ k
	run sh -c "ckpt-inspect -R -u $op out | jq -c '[.subtask, .index, .value.partition, .value.starting_offset]'"
	output_is '[0,0,8,10]
[0,1,5,10]
[0,2,9,10]
[1,0,6,10]
[1,1,0,10]
[1,2,3,10]
[2,0,7,10]
[2,1,1,10]
[2,2,4,10]'
	ckpt-inspect -c out | jq -e .ok >/dev/null
	jq -c 'if .value.partition == 8 then .value.starting_offset = 11 else . end' rows >moved
	bad 2 "ckpt-merge: moved:1: state SourceReaderState: ckpt cannot write values of the serializer BytePrimitiveArraySerializer: it takes a row of it only as the state holds it" \
		ckpt-merge --rows moved -o out2/ k
	[ ! -e out2 ]
}

@test "mergerows: a bad row of operator state is named by its line, exit 2, nothing written" {
	needs_fixtures
	snap sp $BC
	local l='{"operator":"'$LIST'","state":"source-state","kind":"list","subtask":0,"index":0,"value":"x"}'
	local b='{"operator":"'$BCAST'","state":"broadcast-state-2","kind":"broadcast","subtask":0,"user_key":"a","value":1}'
	row() {
		printf '%s\n' "$@" >r
	}
	row "$l" "${l/source-state/nope}"
	bad 2 "ckpt-merge: r:2: operator $LIST has no operator state nope" ckpt-merge --rows r -o out/ sp
	row "${l/\"value\":\"x\"/\"value\":7}"
	bad 2 "ckpt-merge: r:1: state source-state: the value does not fit its serializer StringSerializer: expected a string" \
		ckpt-merge --rows r -o out/ sp
	row "${b/:1\}/:\"x\"\}}"
	bad 2 "ckpt-merge: r:1: state broadcast-state-2: the value does not fit its serializer LongSerializer: expected an integer (a long)" \
		ckpt-merge --rows r -o out/ sp
	row "${l/\"subtask\":0/\"subtask\":1}"
	bad 2 "ckpt-merge: r:1: operator $LIST has no subtask 1 (its parallelism is 1)" ckpt-merge --rows r -o out/ sp
	row "${l/\"subtask\":0,/}"
	bad 2 "ckpt-merge: r:1: state source-state: a row of operator state names its subtask (an integer)" \
		ckpt-merge --rows r -o out/ sp
	row "${l/\"kind\":\"list\"/\"kind\":\"union\"}"
	bad 2 "ckpt-merge: r:1: state source-state: the row's kind is union, the state's list" ckpt-merge --rows r -o out/ sp
	row "${b/,\"user_key\":\"a\"/}"
	bad 2 "ckpt-merge: r:1: state broadcast-state-2: the row has no user_key" ckpt-merge --rows r -o out/ sp
	row "$b" "${b/:1\}/:2\}}"
	bad 2 "ckpt-merge: r:2: state broadcast-state-2: a second row of the key of line 1" ckpt-merge --rows r -o out/ sp
	row "$b"
	bad 2 "ckpt-merge: r:1: state broadcast-state-2: subtask 1's entries differ from subtask 0's (a broadcast state is one map, the same on every subtask)" \
		ckpt-merge --rows r -o out/ sp
	nothing_left
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
	bad 2 "ckpt-merge: --clear: nope: no state of that name in the snapshot" ckpt-merge --clear nope -o out/ sp
	bad 2 "ckpt-merge: nofile: cannot open: No such file or directory" ckpt-merge --rows nofile -o out/ sp
	nothing_left
}

@test "mergerows: what --rows cannot write into is refused: other forms, wrong options, damaged state files" {
	needs_fixtures
	local f=19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5
	echo '{"operator":"'$OP'","state":"state-name","key_group":0,"key":[7],"namespace":null,"value":70}' >r
	snap chk flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint
	snap native flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-rocksdb-savepoint-native
	bad 1 "ckpt-merge: chk/_metadata: operator $OP subtask 1: its keyed state is not a canonical savepoint's (handle kind key_groups): --rows writes into canonical savepoints only: add --canonical to convert it in the same write" \
		ckpt-merge --rows r -o out/ chk
	bad 1 "ckpt-merge: native/_metadata: operator $OP subtask 1: its keyed state is not a canonical savepoint's (handle kind incremental): --rows writes into canonical savepoints only: add --canonical to convert it in the same write" \
		ckpt-merge --rows r -o out/ native
	bad 2 "ckpt-merge: --rows and --clear write a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" ckpt-merge --rows r chk
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

@test "mergerows: --rows with --max-parallelism and -P in one write: exactly the rows given, each key in Flink's key group at the new max parallelism" {
	needs_fixtures
	snap sp $UDF
	ckpt-inspect -R -u $OP --state state-name sp |
		jq -c 'select(.key != [1]) | if .key == [3] then .value = 30 else . end' >rows
	echo '{"operator":"'$OP'","state":"state-name","key_group":0,"key":[7],"namespace":null,"value":70}' >>rows
	ckpt-merge --rows rows --max-parallelism 300 -P 3 -o out/ sp
	run sh -c "ckpt-inspect -R -u $OP --state state-name out | jq -c '[.subtask, .key_group, .key, .value]'"
	output_is '[0,5,[3],30]
[1,154,[0],0]
[2,221,[7],70]
[2,263,[2],2]'
	diff <(jq -c '{operator, state, key, namespace, value}' rows | sort) \
		<(the_rows out $OP state-name | jq -c '{operator, state, key, namespace, value}' | sort)
	# every key where Flink's hash puts it at 300: regrouped at 300 again, nothing moves
	ckpt-merge --max-parallelism 300 -o again/ out
	diff <(ckpt-inspect -R out | jq -c 'del(.subtask)' | sort) <(ckpt-inspect -R again | jq -c 'del(.subtask)' | sort)
	# every other row as it was, but for its key group
	diff <(ckpt-inspect -R sp | grep -v $OP | jq -c 'del(.subtask, .key_group)' | sort) \
		<(ckpt-inspect -R out | grep -v $OP | jq -c 'del(.subtask, .key_group)' | sort)
	[ "$(ckpt-inspect -m out | jq -c "[.operators[] | select(.id == \"$OP\") | .parallelism, .max_parallelism]")" = '[3,300]' ]
	ckpt-inspect -c out | jq -e .ok >/dev/null
	# --clear too
	ckpt-merge --clear state-name --max-parallelism 8 -o cleared/ sp
	[ -z "$(ckpt-inspect -R -u $OP --state state-name cleared)" ]
	# a key whose hashCode ckpt cannot know keeps the key group of its row only at its own max parallelism
	snap scala flink-artifacts/stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint
	ckpt-inspect -R scala >srows
	bad 1 "ckpt-merge: scala/_metadata: operator d1392353922252257afa15351a98bae9 state caseClassState: ckpt cannot compute the key group of a key of the key serializer KryoSerializerSnapshot (its keys' hashCode is not known)" \
		ckpt-merge --rows srows --max-parallelism 8 -o o2/ scala
	ckpt-merge --rows srows -o o3/ scala
	ckpt-inspect -R o3 | cmp - srows
}

@test "mergerows: --rows with --canonical in one write: a RocksDB incremental checkpoint's state becomes the rows given, in a canonical savepoint" {
	needs_fixtures
	snap chk flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint
	ckpt-inspect -R -u $OP --state state-name chk |
		jq -c 'select(.key != [1]) | if .key == [3] then .value = 30 else . end' >rows
	echo '{"operator":"'$OP'","state":"state-name","key_group":0,"key":[7],"namespace":null,"value":70}' >>rows
	ckpt-merge --rows rows --canonical -P 2 -o out/ chk
	run sh -c "ckpt-inspect -R -u $OP --state state-name out | jq -c '[.subtask, .key_group, .key, .value]'"
	output_is '[0,1,[3],30]
[0,1,[7],70]
[1,2,[0],0]
[1,3,[2],2]'
	diff <(ckpt-inspect -R chk | grep -v $OP | jq -c 'del(.subtask)' | sort) \
		<(ckpt-inspect -R out | grep -v $OP | jq -c 'del(.subtask)' | sort)
	run sh -c "ckpt-inspect -m out | jq -c '[.flink.properties.checkpoint_type.format_type, ([.operators[].handles[]? | select(.scope == \"managed_keyed\") | .kind] | unique)]'"
	output_is '["CANONICAL",["savepoint_key_groups"]]'
	ckpt-inspect -c out | jq -e .ok >/dev/null
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
	snap savepoint-bcast $BC
	{ ckpt-inspect -R -u 81afaf64abeedc40a0f29989b81a3659 savepoint-bcast |
	    jq -c 'select(.value != "Here be more dragons!")'
	  ckpt-inspect -R -u 12d7d939fd56473cac7cff0603179a41 \
	    --state broadcast-state-2 savepoint-bcast |
	    jq -c 'if .user_key == "1" then .value = 100 else . end'
	  } >oprows.ndjson
	ckpt-merge --rows oprows.ndjson -o edited/ savepoint-bcast
	run sh -c "ckpt-inspect -R -u 81afaf64abeedc40a0f29989b81a3659 edited | jq -c '[.subtask, .index, .value]'"
	output_is '[0,0,"Here be dragons!"]
[0,1,"Here be yet more dragons!"]
[0,2,"Here be the mostest dragons!"]'
	run sh -c "ckpt-inspect -R -u 12d7d939fd56473cac7cff0603179a41 --state broadcast-state-2 edited |
		jq -c 'select(.user_key == \"1\") | [.subtask, .value]'"
	output_is '[0,100]
[1,100]
[2,100]
[3,100]'
}

@test "mergerows: --rows read from a file, a pipe, standard input partway through a file and a last line without its newline give one result" {
	needs_fixtures
	snap sp $UDF
	ckpt-inspect -R sp | awk 'NR != 2' >rows
	ckpt-merge --rows rows -o a/ sp
	ckpt-inspect -R a >want
	! cmp -s want <(ckpt-inspect -R sp)
	cat rows | ckpt-merge --rows - -o b/ sp
	ckpt-inspect -R b | cmp - want
	# standard input a regular file already read partway: the rows from there, lines counted from there
	{ echo '{"not": "a row"}'; printf '\n \t\n'; cat rows; } >later
	{ head -n 1 >/dev/null; ckpt-merge --rows - -o c/ sp; } <later
	ckpt-inspect -R c | cmp - want
	{ echo '{"not": "a row"}'; echo; echo '{"operator": 1}'; } >later2
	bad 2 "ckpt-merge: <stdin>:2: not a row: an object with \"operator\" and \"state\" (as ckpt-inspect -R prints them)" \
		sh -c 'head -n 1 >/dev/null; exec ckpt-merge --rows - -o d/ sp' <later2
	[ ! -e d ]
	printf '%s' "$(cat rows)" >cut
	ckpt-merge --rows cut -o e/ sp
	ckpt-inspect -R e | cmp - want
}

@test "mergerows: a SIGBUS while the rows are read in place (the file cut short under the mapping) is one line and exit 2, nothing written" {
	needs_fixtures
	snap sp $UDF
	mkfifo fifo
	ckpt-merge --rows - -o out/ sp <fifo >stdout 2>stderr 3>&- &
	local pid=$! i
	exec 8>fifo
	# the handler is in place once SIGBUS (7) is among the caught signals; ckpt-merge then waits on the pipe
	for i in $(seq 100); do
		(( 0x$(sed -n 's/^SigCgt:\t//p' "/proc/$pid/status") & 0x40 )) && break
		sleep 0.1
	done
	kill -BUS "$pid"
	exec 8>&-
	local status=0
	wait "$pid" || status=$?
	[ "$status" -eq 2 ]
	[ "$(cat stderr)" = "ckpt-merge: <stdin>: read error: the file changed or could not be read while it was read in place" ]
	[ ! -s stdout ]
	[ ! -e out ] && [ "$(ls -A | grep -v '^\(sp\|fifo\|stdout\|stderr\)$')" = "" ]
}

@test "mergerows: --rows from standard input is copied under TMPDIR: one that cannot take it is one line, exit 2, nothing written" {
	needs_fixtures
	snap sp $UDF
	ckpt-inspect -R sp | awk 'NR != 2' >rows
	mkdir tmp
	TMPDIR=$PWD/tmp ckpt-merge --rows - -o a/ sp <rows
	[ -z "$(ls -A tmp)" ]
	ckpt-inspect -R a | cmp - <(ckpt-merge --rows rows -o b/ sp && ckpt-inspect -R b)
	bad 2 "ckpt-merge: <stdin>: cannot create a temporary file in $PWD/none: No such file or directory" \
		env TMPDIR="$PWD/none" ckpt-merge --rows - -o c/ sp <rows
	[ ! -e c ]
}
