#!/usr/bin/env bats
# Flink state files through ckpt-inspect: the real fixtures' inline state (goldens), synthetic
# savepoints for where the bytes are, typed values, key groups, Snappy, -c, -d, cut and damaged
# state files.
#
# Goldens are regenerated (after checking the change is intended) with:
#   cd "$FIXTURES/flink-savepoints" && for d in $INLINE; do ckpt-inspect -p $d > $DATA/flinkstate/$d.summary.expected
#   ckpt-inspect -a $d > $DATA/flinkstate/$d.all.expected
#   ckpt-inspect --raw -a $d > $DATA/flinkstate/$d.raw.expected; done
# and the cut state files' lines (t/data/flinkstate/cuts.expected) with
#   CKPT_REGOLD=1 CKPT_BIN=$PWD/bin bats -f 'cut at every length' t/flinkstate.bats

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper

# The fixtures whose state is all inline in their _metadata.
INLINE='v2-flink1.3-typeserializer-rocksdb-savepoint v2-flink1.5-broadcast-memory-savepoint
v2-flink1.7-state-evolution-e2e-savepoint
v2-flink1.8-nonkeyed-chain-savepoint v2-flink1.9-udf-rocksdb-savepoint v3-flink1.11-udf-memory-savepoint
v3-flink1.12-complexkeyed-savepoint v3-flink1.12-legacy-raw-heap-timers-rocksdb-savepoint
v3-flink1.14-broadcast-rocksdb-savepoint v3-flink1.15dev-unified-sink-v1-savepoint
v4-flink1.18-table-over-aggregate-lag-savepoint v4-flink1.20-complexkeyed-savepoint
v4-table-group-aggregate-simple-savepoint v5-flink2.0-nonkeyed-chain-savepoint
v5-state-processor-table-state-checkpoint v5-state-processor-table-state-nulls
v5-table-over-aggregate-unbounded-partitioned-rows-savepoint v6-table-ml-predict-async-unordered-savepoint
v6-table-multi-join-three-way-inner-savepoint'

goldens() {
	local d
	for d in $INLINE; do cat "$DATA/flinkstate/$d.$1.expected"; done
}

@test "flinkstate: -a of every fixture whose state is inline decodes it to its end" {
	needs_fixtures
	cd "$SP"
	run ckpt-inspect -a $INLINE
	status_is 0
	goldens all >"$BATS_TEST_TMPDIR/want"
	match_golden "$BATS_TEST_TMPDIR/want"
}

@test "flinkstate: -a --raw of every fixture whose state is inline: every entry's bytes, the typed form beside them" {
	needs_fixtures
	cd "$SP"
	run ckpt-inspect --raw -a $INLINE
	status_is 0
	goldens raw >"$BATS_TEST_TMPDIR/want"
	match_golden "$BATS_TEST_TMPDIR/want"
}

@test "flinkstate: the summary of every fixture whose state is inline" {
	needs_fixtures
	cd "$SP"
	run ckpt-inspect -p $INLINE
	status_is 0
	goldens summary >"$BATS_TEST_TMPDIR/want"
	match_golden "$BATS_TEST_TMPDIR/want"
}

@test "flinkstate: typed values of the fixtures: POJOs, lists, maps, broadcast entries, timers" {
	needs_fixtures
	cd "$SP"
	run sh -c 'ckpt-inspect -a v5-state-processor-table-state-nulls | jq -c "[.operators[].subtasks[0].keyed_state.entries // [] | .[] | select(.key == 4) | [.state, .value]] | sort | .[]"'
	output_is '["KeyedPojoValue",{"privateLong":1,"publicLong":1}]
["KeyedPrimitiveValue",1]
["KeyedPrimitiveValueList",[4]]
["KeyedPrimitiveValueMap",[{"key":4,"value":4}]]
["total",{"privateLong":4,"publicLong":4}]'
	run sh -c 'ckpt-inspect -a v5-state-processor-table-state-nulls | jq -c "[.operators[].subtasks[].operator_state.LongBroadcastState.entries[0] // empty][0][0:2]"'
	output_is '[{"key":0,"value":0},{"key":1,"value":1}]'
	# (jq prints Long.MIN_VALUE as a double)
	run sh -c 'ckpt-inspect -a v3-flink1.11-udf-memory-savepoint | jq -c "[.operators[].subtasks[].keyed_state.entries // [] | .[] | select(.state | startswith(\"_timer\"))][0:2][] | [.state, .key_group, del(.state, .key_group)]"'
	output_is '["_timer_state/processing_timer",1,{"timestamp":1595516554622,"key":[3],"namespace":3}]
["_timer_state/event_timer",1,{"timestamp":-9223372036854776000,"key":[3],"namespace":3}]'
}

@test "flinkstate: state in files the fixtures lack is named, and -m reads the _metadata alone" {
	needs_fixtures
	cd "$SP"
	bad 2 "ckpt-inspect: v4-flink1.20-broadcast-rocksdb-savepoint-native/c77110d1-0a51-430e-a8c6-b07852c0cc9f: cannot open the state file of operator 1f2b5df5a66154aca61fcb26193792be subtask 0: No such file or directory" \
		ckpt-inspect -a v4-flink1.20-broadcast-rocksdb-savepoint-native
	run ckpt-inspect -m -a v4-flink1.20-broadcast-rocksdb-savepoint-native
	status_is 0
}

# The Flink releases' own snapshots (flink-artifacts/ beside flink-savepoints/).
needs_artifacts() {
	needs_fixtures
	FA=$FIXTURES/flink-artifacts
	[ -d "$FA" ] && return 0
	if [ "${CI:-}" = true ]; then
		echo "no $FA; CI=true requires it"
		return 1
	fi
	skip "no flink-artifacts in $FIXTURES"
}

# The summary of fixture $2 (in directory $1) is its golden and exits 0; -a refuses it (exit 1)
# with the line $3; -c exits 0.
summary_not_read() {
	cd "$1"
	run ckpt-inspect -p "$2"
	status_is 0
	match_golden "$DATA/flinkstate/$2.summary.expected"
	bad 1 "$3" ckpt-inspect -a "$2"
	run ckpt-inspect -c "$2"
	status_is 0
}

@test "flinkstate: Flink 1.7's legacy config snapshots (ParameterlessTypeSerializerConfig, TupleSerializerConfigSnapshot) type their states" {
	needs_fixtures
	cd "$SP"
	# either-state's namespace and tuple-state's value: the serializers Flink 1.7 wrote the way of
	# 1.6 (ckpt stopped at the first, exit 1); the Avro, tuple and Either values of the job
	run ckpt-inspect -R v2-flink1.7-state-evolution-e2e-savepoint
	status_is 0
	output_is "$(printf '%s\n' \
		'{"uid":null,"operator":"46fe65c20d95ac360c296fef8820108c","state":"test-state","kind":"value","subtask":0,"key_group":94,"key":0,"namespace":null,"value":{"num":555,"street":"555 W 42nd St","city":"New York","state":"NY","zip":"10036"}}' \
		'{"uid":null,"operator":"46fe65c20d95ac360c296fef8820108c","state":"tuple-state","kind":"value","subtask":0,"key_group":94,"key":0,"namespace":null,"value":["19",19]}' \
		'{"uid":null,"operator":"46fe65c20d95ac360c296fef8820108c","state":"either-state","kind":"value","subtask":0,"key_group":94,"key":0,"namespace":null,"value":{"left":"255"}}')"
	run ckpt-inspect -c v2-flink1.7-state-evolution-e2e-savepoint
	status_is 0
}

# A KryoSerializerSnapshot (version 2) of class $1, no registrations.
s_kryo() {
	b_i32 2; b_utf 'org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot'; b_i32 2
	b_utf "$1"
	for _ in 1 2 3; do b_i64 $((0x4f2c69a3d70)); b_i32 0; done
}

# A heap file (as hv_file) of two states: "count" (Long) and "blob", of Kryo, which ckpt steps over
# in the header but cannot walk (Kryo writes no lengths): key group 29 holds count (key 42 -> 7),
# then one blob; key group 30 two blobs, then count (key 3 -> 5), which cannot be found.
hv_blob_file() {
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 2; b_value_state count s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
	b_value_state blob s_kryo com.example.Blob
	KV_OFF=("$(blen)")
	b_i32 29; b_i16 0; b_i32 1; b_u8 0; b_i32 42; b_i64 7; b_i16 1; b_i32 1; B+=xyz
	KV_OFF+=("$(blen)")
	b_i32 30; b_i16 1; b_i32 2; B+=xyzxyz; b_i16 0; b_i32 1; b_u8 0; b_i32 3; b_i64 5
	b_write "$1"
	KV_KGS="29 30" KG_TAG=3 KG_FIRST=29 KG_COUNT=2
}

@test "flinkstate: a heap state ckpt cannot walk: the states before it in a key group are counted, those after it null" {
	rm -rf sp
	mkdir sp
	op_file sp/op
	hv_blob_file sp/kv
	(cd sp && meta_file "rel op" "rel kv" .)
	run sh -c 'ckpt-inspect sp | jq -c ".operators[0].flink_state.states[] | [.name, .entries, .bytes, .key_groups, .entries_not_read]"'
	status_is 0
	output_is '["names",2,5,null,null]
["count",null,null,{"29":{"entries":1,"bytes":14},"30":{"entries":null,"bytes":null}},"a heap snapshot has no lengths, and in some key group it follows state \"blob\", whose entries are not read"]
["blob",3,null,{"29":{"entries":1,"bytes":null},"30":{"entries":2,"bytes":null}},"a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes"]'
	bad 1 'ckpt-inspect: sp/kv: state "blob" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes' \
		ckpt-inspect -a sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 0
	[ "$stderr" = 'ckpt-inspect: sp/kv: not checked: state "blob" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes' ]
}

@test "flinkstate: a heap checkpoint with Kryo keys: its first state's counts, the rest null, the summary exits 0; -a refuses" {
	needs_artifacts
	summary_not_read "$FA" stateful-scala-udf-migration-itcase-flink1.15-hashmap-checkpoint \
		'ckpt-inspect: stateful-scala-udf-migration-itcase-flink1.15-hashmap-checkpoint/af59b4b8-c925-4b32-b080-366794e3c3c1: state "tryState" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes'
	run sh -c 'ckpt-inspect stateful-scala-udf-migration-itcase-flink1.15-hashmap-checkpoint | jq -c ".operators[1].flink_state.states[] | [.name, .entries, .bytes]" | head -3'
	output_is '["caseClassState",null,null]
["enumThreeState",null,null]
["optionState",null,null]'
}

@test "flinkstate: compressed operator state of a Scala case class (Flink 1.19): the summary, -a and -c read it" {
	needs_artifacts
	cd "$FA"
	run ckpt-inspect -p stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint
	status_is 0
	match_golden "$DATA/flinkstate/stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint.summary.expected"
	run ckpt-inspect -a stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint
	status_is 0
	run ckpt-inspect -c stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint
	status_is 0
}

entries='.operators[0].subtasks[0] | [.operator_state.names.entries, .operator_state.names.typed, (.keyed_state.entries[] | [.key_group, .key, .value, .typed])]'
typed='.operators[0].subtasks[0] | [.operator_state.names, (.keyed_state.entries[] | [.key_group, .key, .namespace, .value, has("untyped")])]'
want_typed='[{"mode":"list","entries":["a","bc"]},[29,42,null,7,false],[86,1,null,8,false],[94,0,null,9,false]]'
want_entries='[["\u0002a","\u0003bc"],["a","bc"],[29,{"base64":"HQAAACoA"},{"base64":"AAAAAAAAAAc="},{"key":42,"namespace":null,"value":7}],[86,{"base64":"VgAAAAEA"},{"base64":"AAAAAAAAAAg="},{"key":1,"namespace":null,"value":8}],[94,{"base64":"XgAAAAAA"},{"base64":"AAAAAAAAAAk="},{"key":0,"namespace":null,"value":9}]]'

@test "flinkstate: a _metadata on standard input: inline and absolute state read as from the file, a relative file refused by name" {
	sp_dir
	mkdir -p m
	kv=$PWD/sp/kv
	(cd sp && meta_file "inline op" "abs $kv" ../m)
	run sh -c "ckpt-inspect --raw -a < m/_metadata | jq -c '$entries'"
	status_is 0
	output_is "$want_entries"
	run bash -c 'ckpt-inspect -a - < m/_metadata | cmp - <(ckpt-inspect -a m) && echo same'
	output_is same
	bad 2 "ckpt-inspect: op: a relative state file, but the _metadata came from standard input" \
		sh -c 'ckpt-inspect -a < sp/_metadata'
}

@test "flinkstate: relative, absolute, file: URI, --root mapped and inline state read alike" {
	sp_dir
	run sh -c "ckpt-inspect --raw -a sp | jq -c '$entries'"
	status_is 0
	output_is "$want_entries"
	# typed (no --raw): the operator state's strings and each entry's key, namespace and value, no bytes
	run sh -c "ckpt-inspect -a sp | jq -c '$typed'"
	status_is 0
	output_is "$want_typed"
	for how in "abs $PWD/sp/op|abs $PWD/sp/kv" "abs file://$PWD/sp/op|abs file:$PWD/sp/kv" \
		"abs hdfs://nn/chk/op|abs hdfs://nn/chk/kv" "inline op|inline kv"; do
		mkdir -p m
		(cd sp && meta_file "${how%|*}" "${how#*|}" ../m)
		run sh -c "ckpt-inspect --raw -a -r hdfs://nn/chk=$PWD/sp m | jq -c '$entries'"
		status_is 0
		output_is "$want_entries"
	done
	(cd sp && meta_file "abs hdfs://nn/chk/op" "rel kv" ../m)
	bad 2 "ckpt-inspect: hdfs://nn/chk/op: not a local path: map its prefix with --root PREFIX=DIR" ckpt-inspect -a m
	# a prefix that is not the path's
	bad 2 "ckpt-inspect: hdfs://nn/chk/op: not a local path: map its prefix with --root PREFIX=DIR" \
		ckpt-inspect -a -r nn=x m
	bad 2 'ckpt-inspect: -r needs OLDPREFIX=DIR, not "hdfs://nn/chk" (see ckpt-inspect -h)' \
		ckpt-inspect -a -r hdfs://nn/chk m
}

@test "flinkstate: -r /old=/copy (a bare path) maps the file: URIs Flink writes; the copy alone is read (-v)" {
	mkdir old
	(cd old && sp_dir && cd sp && meta_file "abs file:$PWD/op" "abs file://$PWD/kv" .)
	cp -r old copy
	want=$(ckpt-inspect -a old/sp)
	printf 'x' | dd of=old/sp/kv bs=1 seek=100 conv=notrunc status=none # the old place, other bytes
	for root in "$PWD/old" "$PWD/old/" "file:$PWD/old" "file://$PWD/old"; do
		run --separate-stderr ckpt-inspect -v -a -r "$root=$PWD/copy" copy/sp
		status_is 0
		[ "$output" = "$want" ]
		[[ $stderr =~ ^ckpt-inspect:\ copy/sp:\ [0-9]+\ bytes\ of\ state\ files\ read\ from\ $PWD/copy/sp$ ]]
	done
	run --separate-stderr ckpt-inspect -c -r "$PWD/old=$PWD/copy" copy/sp
	status_is 0
	# the old place gone: the copy reads alone; a file deleted from the copy is missing, not read at the old place
	rm -rf old
	run --separate-stderr ckpt-inspect -a -r "$PWD/old=$PWD/copy" copy/sp
	status_is 0
	[ "$output" = "$want" ]
	mkdir old && cp -r copy/sp old/sp && rm copy/sp/kv
	run --separate-stderr ckpt-inspect -c -r "$PWD/old=$PWD/copy" copy/sp
	status_is 1
	[ "$(jq -c .problems <<<"$output")" = "[{\"where\":\"$PWD/copy/sp/kv\",\"problem\":\"missing (No such file or directory)\"}]" ]
	bad_after 2 "ckpt-inspect: $PWD/copy/sp/kv: cannot open the state file of operator 0102030405060708090a0b0c0d0e0f10 subtask 0: No such file or directory" \
		"$NAMES_ROWS" ckpt-inspect -R -r "$PWD/old=$PWD/copy" copy/sp
	# a job directory of the copies: checkpoint 2 lost a file the old place still has, --latest skips it
	mkdir job
	cp -r copy/sp job/chk-2
	sp_dir
	mv sp job/chk-1
	run --separate-stderr ckpt-inspect -r "$PWD/old/sp=$PWD/job/chk-2" --latest job
	status_is 0
	output_is job/chk-1
	run --separate-stderr ckpt-inspect -c -r "$PWD/old/sp=$PWD/job/chk-2" --latest job
	status_is 0
	output_is job/chk-1
	# ckpt-inspect(1)'s example, the same commands
	grep -q '^ckpt-inspect -v -c -r /data/flink/job=/mnt/copy/job /mnt/copy/job/chk-42$' "$ROOT/man/ckpt-inspect.1"
	grep -q '^ckpt-inspect -r /data/flink/job=/mnt/copy/job --latest /mnt/copy/job$' "$ROOT/man/ckpt-inspect.1"
	# a prefix that ends inside a name is no prefix: the old place is read
	run --separate-stderr ckpt-inspect -v -a -r "$PWD/ol=$PWD/copy" copy/sp
	status_is 0
	[[ $stderr =~ bytes\ of\ state\ files\ read\ from\ $PWD/old/sp$ ]]
}

@test "flinkstate: each key's key group is checked against its prefix and its hash" {
	sp_dir
	KEY_OF=([29]=43)
	kv_file sp/kv
	bad 2 'ckpt-inspect: sp/kv: offset 367: a key of state "count" in key group 29 hashes to key group 61' ckpt-inspect -a sp
}

@test "flinkstate: the summary: states, kinds, serializers, entries and bytes per key group" {
	sp_dir
	run sh -c 'ckpt-inspect sp | jq -c ".operators[0].flink_state.states[] | [.name, .scope, .kind, .serializers, .entries, .bytes, .key_groups]"'
	status_is 0
	output_is '["names","operator","list",{"VALUE_SERIALIZER":"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot"},2,5,null]
["count","keyed","value",{"NAMESPACE_SERIALIZER":"org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot","VALUE_SERIALIZER":"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"},3,42,{"29":{"entries":1,"bytes":14},"86":{"entries":1,"bytes":14},"94":{"entries":1,"bytes":14}}]'
}

@test "flinkstate: state files absent: the summary of the _metadata alone naming them, -a refuses, -m and -c" {
	sp_dir
	ckpt-inspect -m sp | jq -c . >meta.json
	rm sp/kv
	run --separate-stderr ckpt-inspect sp
	status_is 0
	[ "$stderr" = "ckpt-inspect: sp: 1 state file missing (sp/kv); the summary is of the _metadata alone" ]
	[ "$(jq -c 'del(.missing_files)' <<<"$output")" = "$(cat meta.json)" ]
	[ "$(jq -c .missing_files <<<"$output")" = '["sp/kv"]' ]
	rm sp/op
	run --separate-stderr ckpt-inspect sp
	status_is 0
	[ "$stderr" = "ckpt-inspect: sp: 2 state files missing (first sp/kv); the summary is of the _metadata alone" ]
	[ "$(jq -c .missing_files <<<"$output")" = '["sp/kv","sp/op"]' ]
	bad 2 'ckpt-inspect: sp/op: cannot open the state file of operator 0102030405060708090a0b0c0d0e0f10 subtask 0: No such file or directory' ckpt-inspect -a sp
	run --separate-stderr ckpt-inspect -m -a sp
	status_is 0
	[ "$stderr" = "" ]
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[false,[{"where":"sp/kv","problem":"missing (No such file or directory)"},{"where":"sp/op","problem":"missing (No such file or directory)"}]]' ]
}

@test "flinkstate: the summary of a real fixture whose state files are absent is its _metadata's, naming them" {
	needs_fixtures
	cd "$SP"
	d=v4-flink1.16-typeserializer-rocksdb-checkpoint
	run --separate-stderr ckpt-inspect -p $d
	status_is 0
	[ "$stderr" = "ckpt-inspect: $d: 6 state files missing (first $d/723d217f-3a43-4dda-a451-ad912a908e1c); the summary is of the _metadata alone" ]
	[ "$(jq -c 'del(.missing_files)' <<<"$output")" = "$(jq -c . "$DATA/flinkmeta/$d.summary.expected")" ]
	[ "$(jq -c '.missing_files | length' <<<"$output")" = 6 ]
}

@test "flinkstate: Snappy-compressed key groups decode; a bad chunk checksum is named" {
	sp_dir
	kvz_file sp/kv
	(cd sp && meta_file "rel op" "rel kv" .)
	run sh -c "ckpt-inspect --raw -a sp | jq -c '$entries'"
	status_is 0
	output_is "$want_entries"
	run sh -c "ckpt-inspect -a sp | jq -c '$typed'"
	output_is "$want_typed"
	# the first chunk's checksum: 16 bytes into key group 29's stream
	printf '\x00' | dd of=sp/kv bs=1 seek=$((KV_OFF[0] + 14)) conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[0] + 10)) (Snappy chunk), byte 0 of its stream: Snappy chunk checksum mismatch" \
		ckpt-inspect -a sp
}

@test "flinkstate: compressed operator state as Flink wrote it: a Snappy stream per state (1.17), one for all (1.19, FLINK-34063)" {
	for layout in per-state one; do
		opz $layout
		run sh -c "ckpt-inspect --raw -a sp | jq -c '.operators[0].subtasks[0].operator_state | [.names.typed, .more.typed]'"
		status_is 0
		output_is '[["a","bc"],["d"]]'
		run ckpt-inspect -c sp
		status_is 0
		output_is '{"file":"sp","ok":true,"files":2,"bytes":864,"problems":[]}'
	done
	# one stream: "more" recorded a byte past the chunk where "names" ends
	OP_STATES="names:${OPZ_AT[0]},${OPZ_AT[1]} more:$((OPZ_AT[2] + 1))"
	(cd sp && meta_file "rel op" "rel kv" .)
	bad 2 "ckpt-inspect: sp/op: offset ${OPZ_AT[1]} (Snappy chunk), byte 5 of its stream: compressed operator state \"names\" does not end where the next begins" \
		ckpt-inspect -a sp
	# a stream per state: the second one's identifier damaged
	opz per-state
	flip sp/op $((OPZ_AT[2] - 3))
	bad 2 "ckpt-inspect: sp/op: offset $((OPZ_AT[2] - 10)) (Snappy chunk), byte 0 of its stream: bad Snappy stream identifier" \
		ckpt-inspect -a sp
}

@test "flinkstate: Flink 1.19's compressed operator state (one Snappy stream): the summary, -a and -c; broadcast entries as the job's 1.17 savepoint has them" {
	needs_fixtures
	cd "$FIXTURES/flink-artifacts"
	j=new-stateful-broadcast-udf-migration-itcase-flink
	q='[.operators[] | [.id, [.subtasks[].operator_state // {} | to_entries[] | select(.key | startswith("broadcast-state")) | [.key, .value.typed]]] | select(.[1] != [])] | sort'
	want=$(ckpt-inspect --raw -a ${j}1.17-hashmap-savepoint-native | jq -c "$q")
	[ "$(jq -c '[length, (.[0][1] | length), .[0][1][0]]' <<<"$want")" = '[2,8,["broadcast-state-2",[[{"key":"0","value":0},{"key":"1","value":1},{"key":"2","value":2},{"key":"3","value":3}]]]]' ]
	for f in hashmap-checkpoint hashmap-savepoint rocksdb-savepoint rocksdb-savepoint-native; do
		run --separate-stderr ckpt-inspect ${j}1.19-$f
		status_is 0
		[ -z "$stderr" ]
		run --separate-stderr ckpt-inspect -c ${j}1.19-$f
		status_is 0
		[ -z "$stderr" ]
		[ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[true,[]]' ]
		run sh -c "ckpt-inspect --raw -a ${j}1.19-$f | jq -c '$q'"
		status_is 0
		output_is "$want"
	done
	# the Scala job's: its broadcast states check (what else ckpt cannot walk is not checked)
	for f in hashmap-checkpoint hashmap-savepoint-native; do
		run --separate-stderr ckpt-inspect -c stateful-scala-with-broadcast-udf-migration-itcase-flink1.19-$f
		status_is 0
		[ "$(jq -c '[.ok, [.problems[] | select(.problem | contains("broadcast-state") or startswith("not checked") == false)]]' <<<"$output")" = '[true,[]]' ]
	done
}

@test "flinkstate: a byte flipped in Flink 1.19's compressed operator state: one line naming the file and the chunk" {
	needs_fixtures
	cp -r "$FIXTURES/flink-artifacts/new-stateful-broadcast-udf-migration-itcase-flink1.19-hashmap-checkpoint" sp
	f=sp/0433147b-1e91-499d-9619-2ca0bf7e50b1
	cp $f whole
	# broadcast-state-1 is the stream's second chunk (offset 645, after broadcast-state-2's 44 bytes):
	# its checksum, then its compressed data
	for at in 650:'Snappy chunk checksum mismatch' 660:'damaged Snappy chunk'; do
		cp whole $f
		flip $f ${at%%:*}
		line="ckpt-inspect: $f: offset 645 (Snappy chunk), byte 44 of its stream: ${at#*:}"
		bad 2 "$line" ckpt-inspect -a sp
		bad 2 "$line" ckpt-inspect sp
		run --separate-stderr ckpt-inspect -c sp
		status_is 1
		[ "$stderr" = "$line" ]
	done
}

@test "flinkstate: -a and the summary stop at a state file of the wrong size, in -c's words" {
	sp_dir
	truncate -s 100 sp/kv
	bad 2 'ckpt-inspect: sp/kv: short: 100 bytes, the _metadata records 443' ckpt-inspect -a sp
	truncate -s 448 sp/kv
	bad 2 'ckpt-inspect: sp/kv: long: 448 bytes, the _metadata records 443' ckpt-inspect -a sp
	bad 2 'ckpt-inspect: sp/kv: long: 448 bytes, the _metadata records 443' ckpt-inspect sp
}

@test "flinkstate: -c names each missing, short and damaged file (exit 1)" {
	sp_dir
	run ckpt-inspect -c sp
	status_is 0
	output_is '{"file":"sp","ok":true,"files":2,"bytes":640,"problems":[]}'
	head -c 100 sp/kv >k && mv k sp/kv
	printf '\x7f' | dd of=sp/op bs=1 seek=$((OP_HDR)) conv=notrunc status=none
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$output" = '{"file":"sp","ok":false,"files":2,"bytes":197,"problems":[{"where":"sp/kv","problem":"short: 100 bytes, the _metadata records 443"},{"where":"sp/op","problem":"offset 194: truncated string character"}]}' ]
	[ "$stderr" = 'ckpt-inspect: sp/kv: short: 100 bytes, the _metadata records 443
ckpt-inspect: sp/op: offset 194: truncated string character' ]
	rm sp/kv
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[[ ${lines[0]} == *'"problems":[{"where":"sp/kv","problem":"missing (No such file or directory)"}'* ]]
}

@test "flinkstate: -d compares entries by operator, state and key group" {
	sp_dir
	cp -r sp sp2
	kv_file sp2/kv
	run sh -c 'ckpt-inspect -d sp2 sp | jq -c .state'
	status_is 0
	output_is '{}'
	# key 42's value 7 becomes 70: 16 bytes into its key group (state id, key length, key, value length)
	B=; b_i64 70; printf '%b' "$B" | dd of=sp2/kv bs=1 seek=$((KV_OFF[0] + 16)) conv=notrunc status=none
	run ckpt-inspect -d sp2 sp
	status_is 1
	run sh -c 'ckpt-inspect -d sp2 sp | jq -c .state'
	output_is '{"0102030405060708090a0b0c0d0e0f10":{"count":{"added":0,"removed":0,"changed":1,"key_groups":{"29":{"added":0,"removed":0,"changed":1}}}}}'
}

@test "flinkstate: -d -R: each entry added, removed or changed as its row, both values of a change; operator state as a multiset" {
	sp_dir
	cp -r sp sp2
	# key 42 (key group 29) becomes 33 (the same group), key 1's value 8 becomes 80, element "a" becomes "z"
	KEY_OF=([29]=33)
	kv_file sp2/kv
	B=; b_i64 80; printf '%b' "$B" | dd of=sp2/kv bs=1 seek=$((KV_OFF[1] + 16)) conv=notrunc status=none
	printf z | dd of=sp2/op bs=1 seek=$((OP_HDR + 1)) conv=notrunc status=none
	run --separate-stderr ckpt-inspect -d -R sp sp2
	status_is 1
	[ -z "$stderr" ]
	local r='"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10"'
	output_is "{\"change\":\"added\",$r,\"state\":\"names\",\"kind\":\"list\",\"subtask\":0,\"index\":0,\"value\":\"z\"}
{\"change\":\"removed\",$r,\"state\":\"names\",\"kind\":\"list\",\"subtask\":0,\"index\":0,\"value\":\"a\"}
{\"change\":\"added\",$r,\"state\":\"count\",\"kind\":\"value\",\"subtask\":0,\"key_group\":29,\"key\":33,\"namespace\":null,\"value\":7}
{\"change\":\"removed\",$r,\"state\":\"count\",\"kind\":\"value\",\"subtask\":0,\"key_group\":29,\"key\":42,\"namespace\":null,\"value\":7}
{\"change\":\"changed\",$r,\"state\":\"count\",\"kind\":\"value\",\"subtask\":0,\"key_group\":86,\"key\":1,\"namespace\":null,\"old\":8,\"new\":80}"
	# the rows agree with the counts
	run ckpt-inspect -d sp sp2
	status_is 1
	run jq -c .state <<<"$output"
	output_is '{"0102030405060708090a0b0c0d0e0f10":{"names":{"added":1,"removed":1,"changed":0},"count":{"added":1,"removed":1,"changed":1,"key_groups":{"29":{"added":1,"removed":1,"changed":0},"86":{"added":0,"removed":0,"changed":1}}}}}'
	# the same element moved to another index (another subtask, as a rescaled list would) is no difference
	run ckpt-inspect -d -R sp sp
	status_is 0
	output_is ''
}

@test "flinkstate: -d of snapshots of a million keys: added, removed and changed in every window, in small memory" {
	kv_spread 1000000
	cp -r sp sp2
	# the first keys of key groups 0 and 127 change value: 16 bytes into a key group (state id,
	# key length, key, value length); the first key of key group 64 becomes another key of that
	# group: 7 bytes in (state id, key length, prefix)
	B=; b_i64 -1
	for g in 0 127; do printf '%b' "$B" | dd of=sp2/kv bs=1 seek=$((KV_OFF[g] + 16)) conv=notrunc status=none; done
	B=; b_i32 "$SPARE64"; printf '%b' "$B" | dd of=sp2/kv bs=1 seek=$((KV_OFF[64] + 7)) conv=notrunc status=none
	# holding every entry of one side took about 150 MB; a window of key groups at a time, about 20
	LOWMEM_KB=131072 run --separate-stderr lowmem ckpt-inspect -d sp2 sp
	status_is 1
	[ "$stderr" = "" ]
	run sh -c 'ckpt-inspect -d sp2 sp | jq -c .state'
	output_is '{"0102030405060708090a0b0c0d0e0f10":{"count":{"added":1,"removed":1,"changed":2,"key_groups":{"0":{"added":0,"removed":0,"changed":1},"64":{"added":1,"removed":1,"changed":0},"127":{"added":0,"removed":0,"changed":1}}}}}'
	run sh -c 'ckpt-inspect -d sp sp | jq -c .state'
	output_is '{}'
}

@test "flinkstate: -d on one thread and on several: the same differences, the same first error" {
	# two subtasks, each its own file of key groups, compared a window of key groups at a time on
	# CKPT_THREADS threads: the windows finish in any order, the output is one thread's
	kv_spread 1000000
	split_dir sp
	cp -r sp sp2
	local mid=$((KV_OFF[64] - KV_OFF[0])) g
	at() { echo $((KV_OFF[$1] - $1 / 64 * mid + $2)); } # byte $2 of key group $1 in its file
	# the first keys of key groups 3 and 100 change value (16 bytes in), operator state "a" becomes "z"
	B=; b_i64 -1
	for g in 3 100; do printf '%b' "$B" | dd of=sp2/kv$((g / 64)) bs=1 seek="$(at $g 16)" conv=notrunc status=none; done
	printf z | dd of=sp2/op bs=1 seek=$((OP_HDR + 1)) conv=notrunc status=none
	CKPT_THREADS=1 run ckpt-inspect -d sp2 sp
	status_is 1
	local one=$output
	run jq -c .state <<<"$one"
	output_is '{"0102030405060708090a0b0c0d0e0f10":{"names":{"added":2,"removed":2,"changed":0},"count":{"added":0,"removed":0,"changed":2,"key_groups":{"3":{"added":0,"removed":0,"changed":1},"100":{"added":0,"removed":0,"changed":1}}}}}'
	for n in 2 3 8 16; do
		CKPT_THREADS=$n run ckpt-inspect -d sp2 sp
		status_is 1
		output_is "$one"
	done
	run ckpt-inspect -d sp sp2
	status_is 1
	run ckpt-inspect -d sp sp
	status_is 0
	# a key length beyond the file in key group 10 (the first window) and in 120 (the last): the
	# error said is key group 10's, however many threads read
	B=; b_i32 0x7fffff00
	for g in 120 10; do printf '%b' "$B" | dd of=sp2/kv$((g / 64)) bs=1 seek="$(at $g 2)" conv=notrunc status=none; done
	local want="ckpt-inspect: sp2/kv0: offset $(at 10 6): key of 2147483392 bytes, more than the $(($(wc -c <sp2/kv0) - $(at 10 6))) left"
	for n in 1 2 8 16; do
		CKPT_THREADS=$n bad 2 "$want" ckpt-inspect -d sp2 sp
	done
}

@test "flinkstate: the summary on one thread and on several: the same counts, the same first error" {
	# two subtasks, each its own file of key groups, read on CKPT_THREADS threads and counted in
	# the document's order
	kv_spread 100000
	split_dir sp
	CKPT_THREADS=1 run ckpt-inspect sp
	status_is 0
	local one=$output
	run sh -c 'jq -c ".operators[0].flink_state.states[] | [.name, .entries, (.key_groups // {} | length)]" <<EOF
$1
EOF' sh "$one"
	output_is '["names",4,0]
["count",100000,128]'
	for n in 2 3 8; do
		CKPT_THREADS=$n run ckpt-inspect sp
		status_is 0
		output_is "$one"
	done
	# both subtasks' files cut: the first's error, however many threads read
	local size
	size=$(wc -c <sp/kv0)
	truncate -s 100 sp/kv0 sp/kv1
	for n in 1 2 8; do
		CKPT_THREADS=$n bad 2 "ckpt-inspect: sp/kv0: short: 100 bytes, the _metadata records $size" ckpt-inspect sp
	done
}

@test "flinkstate: state files cut at every length: -a and -c name the file and the offset, never a crash" {
	# operator state, canonical keyed state and its header, Snappy-compressed and heap keyed state;
	# outside bats' per-command trap, which would make the loops slow
	run bash -c '. "$1/flinkstate-helper.bash"; cut_all' sh "$T"
	status_is 0
	[[ $output != *bad:* ]] || { grep bad: <<<"$output"; return 1; }
	match_golden "$DATA/flinkstate/cuts.expected"
}

@test "flinkstate: state files with bytes replaced: -a and -c print one line naming the file, never a crash" {
	run bash -c '. "$1/flinkstate-helper.bash"; flip_all' sh "$T"
	status_is 0
	output_is ''
}

@test "flinkstate: damaged state files: the one line names the file, the offset and what is wrong" {
	sp_kind kv
	# key group 29's state id 0 becomes 1 (one state)
	printf '\x01' | dd of=sp/kv bs=1 seek=$((KV_OFF[0] + 1)) conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[0] + 2)): state id 1 (the header has 1 states)" ckpt-inspect -a sp
	sp_kind hv
	# the heap layout: key group 30's number is 31; its entry count of state 0 is 2^31 - 1
	B=; b_i32 31; printf '%b' "$B" | dd of=sp/kv bs=1 seek="${KV_OFF[1]}" conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[1] + 4)): key group 31 where key group 30 starts" ckpt-inspect -a sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = "ckpt-inspect: sp/kv: offset $((KV_OFF[1] + 4)): key group 31 where key group 30 starts" ]
	sp_kind hv
	B=; b_i32 0x7fffffff; printf '%b' "$B" | dd of=sp/kv bs=1 seek=$((KV_OFF[0] + 6)) conv=notrunc status=none
	# (the entries read on into key group 30, and past the end)
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[1] + 10)): truncated value" ckpt-inspect -a sp
	# a class name with a newline in it is printed as \x0a: the diagnostic stays one line
	sp_kind hv
	perl -pi -e 's/VoidNamespaceSerializer\$VoidNamespaceSerializerSnapshot/VoidNamespaceSerializer\$VoidNamespace\nerializerSnapshot/' sp/kv
	bad 1 'ckpt-inspect: sp/kv: a heap snapshot, whose entries have no lengths, and the NAMESPACE_SERIALIZER of state "count" is a org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespace\x0aerializerSnapshot, whose snapshot ckpt cannot step over' \
		ckpt-inspect -a sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 0 # what ckpt cannot read is not a damaged file
	[ "$stderr" = 'ckpt-inspect: sp/kv: not checked: a heap snapshot, whose entries have no lengths, and the NAMESPACE_SERIALIZER of state "count" is a org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespace\x0aerializerSnapshot, whose snapshot ckpt cannot step over' ]
	# an operator state element's string length one past its end
	sp_kind kv
	printf '\x04' | dd of=sp/op bs=1 seek=$((OP_HDR + 2)) conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/op: offset $((OP_HDR + 5)): truncated string character" ckpt-inspect -a sp
}

# The typed entries of sp/ (ckpt-inspect -a), a long namespace shortened to its start and length.
typed_entries() {
	ckpt-inspect -a sp | jq -c '.operators[0].subtasks[0].keyed_state.entries[]
		| [.state, .key_group, (del(.state, .key_group) | .namespace |= if length > 20 then "\(.[:5])...(\(length))" else . end)]'
}

@test "flinkstate: key and namespace both of variable length: canonical entries with length suffixes typed, heap ones without" {
	asp_dir akv
	run typed_entries
	status_is 0
	output_is '["visits",81,{"key":"a","namespace":"union","value":7}]
["visits",81,{"key":"a","namespace":"done:...(300)","value":8}]
["parity",81,{"key":"a","namespace":"union","user_key":"odd","value":3}]'
	run --separate-stderr ckpt-inspect -c sp
	status_is 0
	[ -z "$stderr" ] && [ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[true,[]]' ]
	raw='[.operators[].subtasks[].keyed_state.entries[] | select(.state == "visits") | [.key, .value]]'
	canonical=$(ckpt-inspect --raw -a sp | jq -c "$raw")
	# the heap layout writes no suffixes; its raw keys are given as the canonical layout has them
	asp_dir ahv
	run typed_entries
	status_is 0
	output_is '["visits",81,{"key":"a","namespace":"union","value":7}]
["visits",81,{"key":"a","namespace":"done:...(300)","value":8}]
["parity",81,{"key":"a","namespace":"union","value":[{"key":"odd","value":3}]}]'
	run sh -c "ckpt-inspect --raw -a sp | jq -c '$raw'"
	output_is "$canonical"
}

@test "flinkstate: State V2 (ForSt's asynchronous states): a list's element serializer, a map's user key and value serializers, a v2 TTL value typed as their KEY_VALUE forms" {
	V2=0 asp_dir vkv
	run --separate-stderr ckpt-inspect -R sp
	status_is 0
	want='{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"seen","kind":"list","subtask":0,"key_group":29,"key":42,"namespace":null,"index":0,"value":5}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"seen","kind":"list","subtask":0,"key_group":29,"key":42,"namespace":null,"index":1,"value":6}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"m","kind":"map","subtask":0,"key_group":29,"key":42,"namespace":null,"user_key":1,"value":10}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"t","kind":"value","subtask":0,"key_group":29,"key":42,"namespace":null,"value":{"last_access":1700000000000,"value":77}}'
	[ "$(grep -v '"state":"names"' <<<"$output")" = "$want" ] || { echo "$output"; return 1; }
	V2=1 asp_dir vkv
	run --separate-stderr ckpt-inspect -R sp
	status_is 0
	[ "$(grep -v '"state":"names"' <<<"$output")" = "$want" ] || { echo "$output"; return 1; }
	# the summary keeps the serializers as Flink named them
	run sh -c "ckpt-inspect sp | jq -c '.operators[0].flink_state.states[] | select(.name == \"m\") | .serializers | keys'"
	output_is '["NAMESPACE_SERIALIZER","USER_KEY_SERIALIZER","VALUE_SERIALIZER"]'
}

@test "flinkstate: an enum key (fixed length, as EnumSerializer.getLength() says) and a String namespace: no length suffixes" {
	asp_dir ekv
	run typed_entries
	status_is 0
	output_is '["visits",81,{"key":"BLUE","namespace":"union","value":7}]'
}

@test "flinkstate: a length suffix that is not its key's or namespace's length: one line naming its offset" {
	asp_dir akv
	# key "a" (2 bytes): its suffix 2 becomes 3
	printf '\x03' | dd of=sp/kv bs=1 seek="${AKV_AT[0]}" conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset ${AKV_AT[0]}: key of state \"visits\" has length suffix 3, not its length 2" \
		ckpt-inspect -a sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = "ckpt-inspect: sp/kv: offset ${AKV_AT[0]}: key of state \"visits\" has length suffix 3, not its length 2" ]
	# namespace "union" (6 bytes): 7
	asp_dir akv
	printf '\x07' | dd of=sp/kv bs=1 seek="${AKV_AT[1]}" conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset ${AKV_AT[1]}: namespace of state \"visits\" has length suffix 7, not its length 6" \
		ckpt-inspect -a sp
	# the long namespace (302 bytes, suffix 0x2e 0x01): its second byte 2
	asp_dir akv
	printf '\x02' | dd of=sp/kv bs=1 seek=$((AKV_AT[2] + 1)) conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset ${AKV_AT[2]}: namespace of state \"visits\" has length suffix 558, not its length 302" \
		ckpt-inspect -a sp
}

@test "flinkstate: -a streams: a keyed state file of 400000 entries prints in small memory" {
	mkdir -p sp
	op_file sp/op
	kv_big 400000
	[ "$(wc -c <sp/kv)" -gt 8000000 ]
	# holding the document took more than the 512 MB lowmem allows; streaming, a few MB
	run lowmem sh -c 'ckpt-inspect -a sp | grep -o "\"state\":\"count\"" | wc -l'
	status_is 0
	output_is 400002
	run sh -c 'ckpt-inspect -a sp | jq -c ".operators[0].subtasks[0].keyed_state.entries | [length, .[0], .[399999], .[400001]] | map(if type == \"object\" then del(.state, .key_group) else . end)"'
	output_is '[400002,{"key":161,"namespace":null,"value":161},{"key":7828,"namespace":null,"value":7828},{"key":0,"namespace":null,"value":9}]'
}

@test "flinkstate: -R: a row an entry, map entry and list element; the heap layout's rows are the canonical layout's" {
	# a row an element of operator state, by index (no key), one a keyed entry
	sp_dir
	run ckpt-inspect -R sp
	status_is 0
	output_is '{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"names","kind":"list","subtask":0,"index":0,"value":"a"}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"names","kind":"list","subtask":0,"index":1,"value":"bc"}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"count","kind":"value","subtask":0,"key_group":29,"key":42,"namespace":null,"value":7}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"count","kind":"value","subtask":0,"key_group":86,"key":1,"namespace":null,"value":8}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"count","kind":"value","subtask":0,"key_group":94,"key":0,"namespace":null,"value":9}'
	rm -rf sp
	asp_dir akv
	cols='[.state, .kind, .subtask, .key_group, .key, (.namespace | if length > 20 then "\(.[:5])...(\(length))" else . end), .user_key, .value]'
	run sh -c "ckpt-inspect -R sp | jq -c '$cols'"
	status_is 0
	output_is '["names","list",0,null,null,null,null,"a"]
["names","list",0,null,null,null,null,"bc"]
["visits","value",0,81,"a","union",null,7]
["visits","value",0,81,"a","done:...(300)",null,8]
["parity","map",0,81,"a","union","odd",3]'
	run --separate-stderr ckpt-inspect -R sp
	status_is 0
	[ -z "$stderr" ]
	canonical=$output
	asp_dir ahv
	run --separate-stderr ckpt-inspect -R sp
	status_is 0
	output_is "$canonical"
}

@test "flinkstate: -R reads once: the rows before a damaged state file, whole, then the damage named (exit 2); -a prints nothing" {
	sp_dir
	truncate -s 100 sp/kv
	bad_after 2 'ckpt-inspect: sp/kv: short: 100 bytes, the _metadata records 443' "$NAMES_ROWS" ckpt-inspect -R sp
	bad 2 'ckpt-inspect: sp/kv: short: 100 bytes, the _metadata records 443' ckpt-inspect -a sp
	bad 2 'ckpt-inspect: -a, -R, -c and -d exclude each other (see ckpt-inspect -h)' ckpt-inspect -R -a sp
}

# The 1.17 hashmap checkpoints of flink-artifacts/ keep their keyed state in changelog handles
# (ChangelogStateBackendHandle): no materialized part, the changes inline in the _metadata.
FA_JOB=new-stateful-udf-migration-itcase-flink1.17-hashmap

@test "flinkstate: changelog keyed state (a 1.17 hashmap checkpoint): the summary counts it, -a lists it, -c reads it" {
	needs_fixtures
	cd "$FIXTURES/flink-artifacts"
	run sh -c 'ckpt-inspect "$1" | jq -c "[.operators[] | select(.flink_state.states | length > 0) | [.id[0:6], (.flink_state.states[] | [.name, .entries, .kind])]]"' sh "$FA_JOB-checkpoint"
	status_is 0
	output_is '[["1f2b5d",["source-state",4,"union"]],["d5c8b1",["state-name",4,"value"]],["41e91a",["state-name",4,"value"],["_timer_state/event_timer",4,"timers"],["_timer_state/processing_timer",4,"timers"]],["dab258",["state-name",4,"value"]],["4b818c",["state-name",4,"value"],["_timer_state/event_timer",4,"timers"],["_timer_state/processing_timer",4,"timers"]],["69f32d",["source-state",4,"list"]]]'
	run sh -c 'ckpt-inspect --raw -a "$1" | jq -c "[.operators[] | .id[0:6] as \$o | .subtasks[] | .keyed_state.entries[]? | [\$o, .state, .key_group, (.typed | if . then del(.timestamp) else . end)]] | group_by(.[0]) | map([.[0][0], length, (map(.[3]) | unique)])"' sh "$FA_JOB-checkpoint"
	status_is 0
	# a changelog records no key serializer: where no timer state nests it, the entries are raw
	output_is '[["41e91a",12,[{"key":[0],"namespace":0},{"key":[1],"namespace":1},{"key":[2],"namespace":2},{"key":[3],"namespace":3},{"key":[0],"namespace":0,"value":0},{"key":[1],"namespace":1,"value":1},{"key":[2],"namespace":2,"value":2},{"key":[3],"namespace":3,"value":3}]],["4b818c",12,[{"key":[0],"namespace":0},{"key":[1],"namespace":1},{"key":[2],"namespace":2},{"key":[3],"namespace":3},{"key":[0],"namespace":0,"value":0},{"key":[1],"namespace":1,"value":1},{"key":[2],"namespace":2,"value":2},{"key":[3],"namespace":3,"value":3}]],["d5c8b1",4,[null]],["dab258",4,[null]]]'
	run ckpt-inspect -c "$FA_JOB-checkpoint"
	status_is 0
	output_is '{"file":"'"$FA_JOB"'-checkpoint","ok":true,"files":2,"bytes":573,"problems":[]}'
}

# The oracle of flink-artifacts/SOURCES.md: one job's state in every form.  Processing-time timers
# differ (each form ran with its own clock): their key, namespace and key group are compared.
@test "flinkstate: changelog keyed entries equal those of the canonical and native savepoints of the same job" {
	needs_fixtures
	local f raw='[.operators[] | .id as $o | .subtasks[] | .keyed_state.entries[]? | select(.state | endswith("processing_timer") | not) | [$o, .state, .key_group, .key, .value]] | sort'
	local typed='[.operators[] | .id as $o | .subtasks[] | .keyed_state.entries[]? | select(.typed) | [$o, .state, .key_group, (.typed | del(.timestamp?))]] | sort'
	cd "$FIXTURES/flink-artifacts"
	for f in checkpoint savepoint savepoint-native; do
		ckpt-inspect --raw -a "$FA_JOB-$f" >"$BATS_TEST_TMPDIR/$f.json"
		jq -c "$raw" "$BATS_TEST_TMPDIR/$f.json" >"$BATS_TEST_TMPDIR/$f.raw"
		jq -c "$typed" "$BATS_TEST_TMPDIR/$f.json" >"$BATS_TEST_TMPDIR/$f.typed"
	done
	cd "$BATS_TEST_TMPDIR"
	[ "$(jq length checkpoint.raw)" -eq 24 ]
	cmp checkpoint.raw savepoint.raw
	cmp checkpoint.raw savepoint-native.raw
	# typed: the changelog's entries typed (24 of 32) are the savepoint's of the same operators
	[ "$(jq length checkpoint.typed)" -eq 24 ]
	jq -c --slurpfile c checkpoint.typed '[.[] | select(.[0] as $o | $c[0] | any(.[0] == $o))]' savepoint.typed >want
	jq -c . checkpoint.typed >got
	cmp want got
	run jq -c '[.operators[] | .id as $o | .subtasks[] | .keyed_state.entries[]? | select(.state | endswith("processing_timer")) | [$o, .key_group, (.typed | del(.timestamp))]] | sort' checkpoint.json
	[ "$output" = "$(jq -c '[.operators[] | .id as $o | .subtasks[] | .keyed_state.entries[]? | select(.state | endswith("processing_timer")) | [$o, .key_group, (.typed | del(.timestamp))]] | sort' savepoint.json)" ]
}

@test "flinkstate: a changelog: the materialized heap part, then the changes of its files and inline ones, in order" {
	cl_dir
	run ckpt-inspect -a cl
	status_is 0
	run sh -c 'ckpt-inspect --raw -a cl | jq -c ".operators[0].subtasks[0].keyed_state"'
	output_is '{"key_groups":"29-30","entries":[{"state":"seen","key_group":29,"key":{"base64":"HQAAACoA"},"value":{"base64":"AAAAAgAAAAAAAAAFAAAAAAAAAAY="},"typed":{"key":42,"namespace":null,"value":[5,6]}},{"state":"m","key_group":29,"key":{"base64":"HQAAACoA"},"value":{"base64":"AAAAAQAAAAIAAAAAAAAAABQ="},"typed":{"key":42,"namespace":null,"value":[{"key":2,"value":20}]}},{"state":"count","key_group":30,"key":{"base64":"HgAAABgA"},"value":{"base64":"AAAAAAAAAAM="},"typed":{"key":24,"namespace":null,"value":3}}]}'
	run sh -c 'ckpt-inspect cl | jq -c "[.operators[0].flink_state.states[] | [.name, .entries, .bytes, .kind, .key_groups]], .operators[0].flink_state.key_serializer"'
	output_is '[["names",2,5,"list",null],["count",1,14,"value",{"30":{"entries":1,"bytes":14}}],["seen",1,26,"list",{"29":{"entries":1,"bytes":26}}],["m",1,23,"map",{"29":{"entries":1,"bytes":23}}]]
"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot"'
	run ckpt-inspect -c cl
	status_is 0
	output_is '{"file":"cl","ok":true,"files":3,"bytes":1908,"problems":[]}'
}

@test "flinkstate: a Snappy-framed changelog file reads as the plain one" {
	cl_dir
	ckpt-inspect -a cl >plain
	CL_Z=1 cl_dir
	[ "$(head -c 1 cl/log | od -An -tx1)" = " 01" ]
	run ckpt-inspect -a cl
	status_is 0
	output_is "$(cat plain)"
	run ckpt-inspect -c cl
	status_is 0
}

@test "flinkstate: a changelog whose materialized part is a RocksDB handle without its meta data handle: the summary and -a exit 2 naming the subtask, -c reports it" {
	local why="cl/_metadata: operator 0102030405060708090a0b0c0d0e0f10 subtask 0: a handle without data"
	cl_dir rocksdb
	bad 2 "ckpt-inspect: $why" ckpt-inspect cl
	bad 2 "ckpt-inspect: $why" ckpt-inspect -a cl
	run --separate-stderr ckpt-inspect -c cl
	status_is 1
	[ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[false,[{"where":"cl/_metadata","problem":"operator 0102030405060708090a0b0c0d0e0f10 subtask 0: a handle without data"}]]' ]
}

@test "flinkstate: a changelog state of a serializer ckpt cannot step over is unknown, the others read" {
	local why='the VALUE_SERIALIZER of state \"blob\" is a x.CustomSerializer$Snapshot, whose snapshot ckpt cannot step over'
	CL_CUSTOM=1 cl_dir
	run sh -c 'ckpt-inspect cl | jq -c "[.operators[0].flink_state.states[] | [.name, .entries, .entries_not_read]]"'
	status_is 0
	output_is '[["names",2,null],["count",1,null],["seen",1,null],["m",1,null],["blob",null,"'"$why"'"]]'
	bad 1 "ckpt-inspect: cl/_metadata: operator 0102030405060708090a0b0c0d0e0f10 subtask 0: state \"blob\" not read: ${why//\\/}" ckpt-inspect -a cl
}

@test "flinkstate: a cut changelog file: the summary and -a exit 2 naming it, -c names it (exit 1)" {
	local n
	cl_dir
	for n in 0 1 100 700 $(($(size cl/log) - 1)); do
		head -c "$n" cl/log >cut && cp cut cl/log
		bad 2 "ckpt-inspect: cl/log: short: $n bytes, the _metadata records 1313 and a flag byte" ckpt-inspect -a cl
		bad 2 "ckpt-inspect: cl/log: short: $n bytes, the _metadata records 1313 and a flag byte" ckpt-inspect cl
		run --separate-stderr ckpt-inspect -c cl
		status_is 1
		[ "$stderr" = "ckpt-inspect: cl/log: short: $n bytes, the _metadata records 1313 and a flag byte" ]
		output_is '{"file":"cl","ok":false,"files":3,"bytes":595,"problems":[{"where":"cl/log","problem":"short: '"$n"' bytes, the _metadata records 1313 and a flag byte"}]}'
		cl_log cl/log
	done
	# of the right size, the last change claiming a byte more than the file holds: the offset named
	printf '\0\0\0\21' | dd of=cl/log bs=1 seek=$(($(size cl/log) - 20)) conv=notrunc status=none
	bad 2 "ckpt-inspect: cl/log: offset 1298: state change of 17 bytes, more than the 16 left" ckpt-inspect -a cl
}

@test "flinkstate: changelog files with bytes replaced: -a prints one line or the whole document, never a crash" {
	local f
	cl_dir
	fm_flips cl/log flip 40 7
	for f in flip*; do
		cp "$f" cl/log
		run --separate-stderr ckpt-inspect -a cl
		case $status in
		0) jq -e .operators <<<"$output" >/dev/null ;;
		1 | 2) [ -z "$output" ] && [ "$(wc -l <<<"$stderr")" -eq 1 ] ;;
		*) false ;;
		esac
	done
}

# A byte of a serializer snapshot's class name replaced: damaged at that byte, in Flink's terms (not
# what ckpt cannot hold); the flink1.19 HashMap checkpoint's keyed state file, whose class name
# (TupleSerializerSnapshot's) starts at offset 11.
@test "flinkstate: a damaged class name in a state file is named at its byte: -a exit 2, -c exit 1" {
	needs_artifacts
	cp -r "$FA/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint" sp
	chmod -R u+w sp
	f=261ab736-34c5-4875-be02-6c0064658c5a
	printf '\0' | dd of=sp/$f bs=1 seek=31 conv=notrunc 2>/dev/null
	line="ckpt-inspect: sp/$f: offset 31: damaged serializer snapshot class: a 0 byte, which modified UTF-8 never holds (U+0000 is c0 80)"
	bad 2 "$line" ckpt-inspect -a sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = "$line" ]
	[ "$(jq -c '[.ok, .problems[].problem]' <<<"$output")" = '[false,"offset 31: damaged serializer snapshot class: a 0 byte, which modified UTF-8 never holds (U+0000 is c0 80)"]' ]
	printf '\377' | dd of=sp/$f bs=1 seek=31 conv=notrunc 2>/dev/null
	bad 2 "ckpt-inspect: sp/$f: offset 31: damaged serializer snapshot class: byte 0xff is not modified UTF-8" ckpt-inspect sp
}

# -c answers yes or no only when it could read every file: a state file missing is a no (exit 1),
# one there that cannot be read (here a loop of symbolic links) leaves the answer open (exit 2).
@test "flinkstate: -c: a state file missing exits 1, one that cannot be read exits 2" {
	needs_artifacts
	cp -r "$FA/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint" sp
	chmod -R u+w sp
	f=261ab736-34c5-4875-be02-6c0064658c5a
	rm sp/$f
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = "ckpt-inspect: sp/$f: missing (No such file or directory)" ]
	ln -s loop sp/$f
	ln -s $f sp/loop
	run --separate-stderr ckpt-inspect -c sp
	status_is 2
	[ "$stderr" = "ckpt-inspect: sp/$f: cannot stat: Too many levels of symbolic links" ]
	[ "$(jq -c '[.ok, .problems]' <<<"$output")" = "[false,[{\"where\":\"sp/$f\",\"problem\":\"cannot stat: Too many levels of symbolic links\"}]]" ]
}

# What a serializer snapshot holds in place of what Flink writes there is named with what belongs:
# a serializer name (flink1.19 HashMap checkpoint, "VALUE_SERIALIZER" at offset 281), the header of
# a Scala case class's optional map (flink1.15 HashMap savepoint, at offset 104).
@test "flinkstate: a damaged serializer name or optional map header says what was expected" {
	needs_artifacts
	cp -r "$FA/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint" a
	cp -r "$FA/stateful-scala-udf-migration-itcase-flink1.15-hashmap-savepoint" b
	chmod -R u+w a b
	f=261ab736-34c5-4875-be02-6c0064658c5a
	printf W | dd of=a/$f bs=1 seek=281 conv=notrunc 2>/dev/null
	bad 2 "ckpt-inspect: a/$f: offset 297: unknown serializer name \"WALUE_SERIALIZER\" of state \"state-name\" (KEY_SERIALIZER, NAMESPACE_SERIALIZER or VALUE_SERIALIZER expected)" ckpt-inspect -a a
	g=79915441-05d2-478c-83f8-5c8a5f335903
	printf '\x40\xdc' | dd of=b/$g bs=1 seek=108 conv=notrunc 2>/dev/null
	bad 2 "ckpt-inspect: b/$g: offset 112: optional map header 4f240dc3d70 (4f2c69a3d70 expected)" ckpt-inspect -a b
}
