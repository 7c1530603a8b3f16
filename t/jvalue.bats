#!/usr/bin/env bats
# Java's own value types in state (lib/flink/types/jvalue.c, issue 27 item 7): Flink's JavaSerializer,
# whose values are Java serialization streams (t/data/jvalue/*.bin, written by Gen.java there:
# `java Gen.java`), and flink-core's serializers of java.math, java.util.Date, java.sql and
# java.time.  Synthetic savepoints (flinkstate-helper.bash) hold them as operator list state and
# as heap keyed state, whose entries have no lengths: only the stream says where a value ends.
load helper
load flinkstate-helper

JAVA='org.apache.flink.runtime.state.JavaSerializer$JavaSerializerSnapshot'
J=$DATA/jvalue
VALUES='string integer long boolean char double arraylist linkedhashmap treemap hashset intarray
bytearray bigint bigdec date enum point derived custom shared class'

# op_list_file FILE STATE:SNAPSHOT:ELEM,ELEM... ...: operator state, one SPLIT_DISTRIBUTE list
# state per argument, each element the bytes of a file; sets OP_STATES for meta_file.
op_list_file() {
	local f=$1 x st snap elems e offs
	shift
	B=; b_i32 6; b_u8 0; b_i16 $#
	for x in "$@"; do
		IFS=: read -r st snap elems <<<"$x"
		b_utf "$st"; b_i32 1; b_i32 1; b_utf OPERATOR_STATE_DISTRIBUTION_MODE; b_utf SPLIT_DISTRIBUTE
		b_i32 1; b_utf VALUE_SERIALIZER; s_proxy "$snap"
	done
	b_i16 0
	OP_STATES=
	for x in "$@"; do
		IFS=: read -r st snap elems <<<"$x"
		offs=
		for e in ${elems//,/ }; do
			offs+=${offs:+,}$(blen)
			b_file "$e"
		done
		OP_STATES+="${OP_STATES:+ }$st:$offs"
	done
	b_write "$f"
}

# A savepoint sp/ whose operator state is the list states given (as op_list_file), keyed state kv.
op_sp() {
	rm -rf sp
	mkdir sp
	op_list_file sp/op "$@"
	kv_file sp/kv
	(cd sp && meta_file "rel op" "rel kv" .)
}

# The entries of sp's operator state $1, one per line.
entries() {
	ckpt-inspect -a sp | jq -c --arg s "$1" '.operators[0].subtasks[0].operator_state[$s].entries[]'
}

@test "jvalue: JavaSerializer values typed: strings, boxed numbers, collections, arrays, java.math, Date, enums, plain classes" {
	local e=
	for v in $VALUES; do e+=${e:+,}$J/$v.bin; done
	op_sp "_default_:$JAVA:$e"
	run entries _default_
	status_is 0
	match_golden "$J/values.expected"
	# every value is read to the end of its stream: the summary counts them, -c is clean
	run sh -c 'ckpt-inspect sp | jq -c ".operators[0].flink_state.states[] | select(.name == \"_default_\") | .entries"'
	output_is 21
	run --separate-stderr ckpt-inspect -c sp
	status_is 0
	[ -z "$stderr" ]
}

@test "jvalue: -R rows and --raw of JavaSerializer values" {
	op_sp "_default_:$JAVA:$J/string.bin,$J/point.bin"
	run sh -c 'ckpt-inspect -R sp | grep "\"state\":\"_default_\""'
	status_is 0
	output_is '{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"_default_","kind":"list","subtask":0,"index":0,"value":"héllo"}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"_default_","kind":"list","subtask":0,"index":1,"value":{"class":"Gen$Point","x":3,"label":"p","next":{"class":"Gen$Point","x":3,"label":"p","next":null,"w":[0.5,-1.0]},"w":[0.5,-1.0]}}'
	run sh -c 'ckpt-inspect --raw -a sp | jq -c ".operators[0].subtasks[0].operator_state._default_ | [.entries[0], .typed[0]]"'
	output_is '[{"base64":"rO0ABXQABmjDqWxsbw=="},"héllo"]'
}

# The first $2 Integer keys of key group $1 (max parallelism 128), as Flink assigns them:
# murmur of the key's hashCode, modulo the max parallelism.
keys_of_group() {
	python3 -c '
import sys
def kg(h):
    m = 0xffffffff
    c = (h * 0xcc9e2d51) & m
    c = ((c << 15) | (c >> 17)) & m
    c = (c * 0x1b873593) & m
    c = ((c << 13) | (c >> 19)) & m
    c = (c * 5 + 0xe6546b64) & m
    c ^= 4
    c ^= c >> 16
    c = (c * 0x85ebca6b) & m
    c ^= c >> 13
    c = (c * 0xc2b2ae35) & m
    c ^= c >> 16
    r = c - (1 << 32) if c >= 1 << 31 else c
    r = 0 if r == -(1 << 31) else abs(r)
    return r % 128
want, n, i, out = int(sys.argv[1]), int(sys.argv[2]), 0, []
while len(out) < n:
    if kg(i) == want:
        out.append(i)
    i += 1
print(" ".join(map(str, out)))' "$1" "$2"
}

# A heap keyed state (hv_file's layout) of value state "j", Integer keys, of JavaSerializer:
# key group 29 holds N entries (keys of that group -> the value of file $2), more than the
# reader's window holds, so that values cross its edges; key group 30 one entry (file $3).
hv_java_file() {
	local n=$1 one two k keys
	one=$(od -An -v -tx1 "$2" | tr -d ' \n' | sed 's/../\\x&/g')
	two=$(od -An -v -tx1 "$3" | tr -d ' \n' | sed 's/../\\x&/g')
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 1; b_value_state j s_proxy "$JAVA"
	KV_OFF=("$(blen)")
	b_i32 29; b_i16 0; b_i32 "$n"
	keys=$(keys_of_group 29 "$n")
	for k in $keys; do b_u8 0; b_i32 "$k"; B+=$one; done
	KEYSUM=$(($(tr ' ' + <<<"$keys")))
	KV_OFF+=("$(( ${KV_OFF[0]} + 10 + n * (5 + $(wc -c <"$2")) ))")
	b_i32 30; b_i16 0; b_i32 1; b_u8 0; b_i32 "$(keys_of_group 30 1)"; B+=$two
	b_write sp/kv
	KV_KGS="29 30" KG_TAG=3 KG_FIRST=29 KG_COUNT=2
}

@test "jvalue: heap keyed state of JavaSerializer: values across the reader's window read whole, every key" {
	rm -rf sp
	mkdir sp
	op_file sp/op
	hv_java_file 1000 "$J/point.bin" "$J/linkedhashmap.bin"
	(cd sp && meta_file "rel op" "rel kv" .)
	# 1000 times the point in key group 29, the map once in 30 (jq -s writes -1.0 as -1)
	run sh -c 'ckpt-inspect -a sp | jq -c ".operators[0].subtasks[0].keyed_state.entries[] | select(.key_group == 29)" | jq -sc "[length, (map(.key) | add), (map(.value) | unique)]"'
	status_is 0
	output_is "[1000,$KEYSUM,[{\"class\":\"Gen\$Point\",\"x\":3,\"label\":\"p\",\"next\":{\"class\":\"Gen\$Point\",\"x\":3,\"label\":\"p\",\"next\":null,\"w\":[0.5,-1]},\"w\":[0.5,-1]}]]"
	run sh -c 'ckpt-inspect -a sp | jq -c ".operators[0].subtasks[0].keyed_state.entries[] | select(.key_group == 30) | .value"'
	output_is '[{"key":"k","value":1},{"key":"j","value":2}]'
	run -0 ckpt-inspect -R sp
	[ "$(grep -c '"state":"j"' <<<"$output")" -eq 1001 ]
	# the summary walks them to count them: key group 30 follows key group 29's 1000 values
	run sh -c 'ckpt-inspect sp | jq -c ".operators[0].flink_state.states[] | select(.name == \"j\") | [.entries, .key_groups]"'
	output_is '[1001,{"29":{"entries":1000,"bytes":188000},"30":{"entries":1,"bytes":236}}]'
}

@test "jvalue: damaged Java streams: exit 2 naming the offset, nothing on stdout" {
	printf '\xac\xed\x00\x06\x74\x00\x01x' >badver.bin
	head -c 100 "$J/point.bin" >cut.bin
	printf '\xac\xed\x00\x05\x77\x01\x00' >block.bin
	op_sp "_default_:$JAVA:badver.bin"
	bad 2 'ckpt-inspect: sp/op: offset 180: Java-serialized value: not a Java serialization stream (0xaced0006, want 0xaced0005)' ckpt-inspect -a sp
	op_sp "_default_:$JAVA:cut.bin"
	bad 2 'ckpt-inspect: sp/op: offset 280: Java-serialized value: truncated' ckpt-inspect -a sp
	op_sp "_default_:$JAVA:block.bin"
	bad 2 'ckpt-inspect: sp/op: offset 184: Java-serialized value: block data where an object belongs' ckpt-inspect -a sp
}

# Elements of flink-core's serializers, written as they write them.
hexfile() { printf '%b' "$2" >"$1"; }

@test "jvalue: flink-core's BigInteger, BigDecimal, Date, java.sql, Instant and java.time serializers" {
	# BigInteger: null, ZERO, TEN, -129 (toByteArray ff 7f), 2^64
	hexfile bi0 '\x00\x00\x00\x00'
	hexfile bi1 '\x00\x00\x00\x01'
	hexfile bi2 '\x00\x00\x00\x03'
	hexfile bi3 '\x00\x00\x00\x06\xff\x7f'
	hexfile bi4 '\x00\x00\x00\x0d\x01\x00\x00\x00\x00\x00\x00\x00\x00'
	# BigDecimal: null, ONE (scale 0 after it), -1.29 (unscaled -129, scale 2), 5E+3 (scale -3)
	hexfile bd0 '\x00\x00\x00\x00'
	hexfile bd1 '\x00\x00\x00\x02\x00\x00\x00\x00'
	hexfile bd2 '\x00\x00\x00\x06\xff\x7f\x00\x00\x00\x02'
	hexfile bd3 '\x00\x00\x00\x05\x05\xff\xff\xff\xfd'
	# Date, java.sql.Date and Time: null (Long.MIN_VALUE), 1700000000123 ms, -1 ms
	hexfile d0 '\x80\x00\x00\x00\x00\x00\x00\x00'
	hexfile d1 '\x00\x00\x01\x8b\xcf\xe5\x68\x7b'
	hexfile d2 '\xff\xff\xff\xff\xff\xff\xff\xff'
	# Timestamp: 1700000000123 ms with nanos 123456789; null (and its int)
	hexfile t1 '\x00\x00\x01\x8b\xcf\xe5\x68\x7b\x07\x5b\xcd\x15'
	hexfile t0 '\x80\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00'
	# Instant: 1700000000 s + 5 ns; null (Long.MIN_VALUE, Integer.MIN_VALUE)
	hexfile i1 '\x00\x00\x00\x00\x65\x53\xf1\x00\x00\x00\x00\x05'
	hexfile i0 '\x80\x00\x00\x00\x00\x00\x00\x00\x80\x00\x00\x00'
	# LocalDate 2024-02-29, null; LocalTime 23:59:58.5, null; LocalDateTime of both, null
	hexfile ld1 '\x00\x00\x07\xe8\x02\x1d'
	hexfile ld0 '\x80\x00\x00\x00\x80\x00'
	hexfile lt1 '\x17\x3b\x3a\x1d\xcd\x65\x00'
	hexfile lt0 '\x80\x80\x00\x80\x00\x00\x00'
	cat ld1 lt1 >ldt1
	cat ld0 lt0 >ldt0
	op_sp "bi:$SER.BigIntSerializer\$BigIntSerializerSnapshot:bi0,bi1,bi2,bi3,bi4" \
		"bd:$SER.BigDecSerializer\$BigDecSerializerSnapshot:bd0,bd1,bd2,bd3" \
		"date:$SER.DateSerializer\$DateSerializerSnapshot:d0,d1,d2" \
		"sqldate:$SER.SqlDateSerializer\$SqlDateSerializerSnapshot:d1" \
		"sqltime:$SER.SqlTimeSerializer\$SqlTimeSerializerSnapshot:d2" \
		"ts:$SER.SqlTimestampSerializer\$SqlTimestampSerializerSnapshot:t1,t0" \
		"instant:$SER.InstantSerializer\$InstantSerializerSnapshot:i1,i0" \
		"ld:$SER.LocalDateSerializer\$LocalDateSerializerSnapshot:ld1,ld0" \
		"lt:$SER.LocalTimeSerializer\$LocalTimeSerializerSnapshot:lt1,lt0" \
		"ldt:$SER.LocalDateTimeSerializer\$LocalDateTimeSerializerSnapshot:ldt1,ldt0"
	run sh -c 'ckpt-inspect -a sp | jq -c ".operators[0].subtasks[0].operator_state | to_entries[] | [.key, .value.entries]"'
	status_is 0
	output_is '["bi",[null,"0","10","-129","18446744073709551616"]]
["bd",[null,"1","-1.29","5000"]]
["date",[null,"2023-11-14T22:13:20.123Z","1969-12-31T23:59:59.999Z"]]
["sqldate",["2023-11-14T22:13:20.123Z"]]
["sqltime",["1969-12-31T23:59:59.999Z"]]
["ts",["2023-11-14T22:13:20.123456789Z",null]]
["instant",["2023-11-14T22:13:20.000000005Z",null]]
["ld",["2024-02-29",null]]
["lt",["23:59:58.500",null]]
["ldt",["2024-02-29T23:59:58.500",null]]'
}

# bad_element STATE:SNAPSHOT BYTES LINE: list state STATE of the serializer SNAPSHOT names holds one
# element, BYTES (\xHH escapes): -a stops at it with exit 2 and "ckpt-inspect: sp/op: LINE".
bad_element() {
	hexfile bad "$2"
	op_sp "$1:bad"
	bad 2 "ckpt-inspect: sp/op: $3" ckpt-inspect -a sp
}

@test "jvalue: damaged values of flink-core's serializers: exit 2 naming what and where" {
	bad_element "ld:$SER.LocalDateSerializer\$LocalDateSerializerSnapshot" '\x00\x00\x07\xe9\x02\x1d' \
		'offset 201: LocalDate 2025-2-29'
	bad_element "i:$SER.InstantSerializer\$InstantSerializerSnapshot" '\x00\x00\x00\x00\x65\x53\xf1\x00\x3b\x9a\xca\x00' \
		'offset 202: instant nanoseconds 1000000000 (0 to 999999999)'
	bad_element "b:$SER.BigIntSerializer\$BigIntSerializerSnapshot" '\x00\x00\x00\x04' \
		'offset 192: BigInteger of no bytes'
	bad_element "ldt:$SER.LocalDateTimeSerializer\$LocalDateTimeSerializerSnapshot" '\x80\x00\x00\x00\x80\x00\x0c\x00\x00\x00\x00\x00\x00' \
		'offset 217: LocalDateTime: exactly one of LocalDate and LocalTime is null'
}

# rt FILE...: t/jvalue-rt.c, built against the library of the build under test, over the files.
rt() {
	local obj san=
	case ${CKPT_BIN:-$ROOT/bin} in
	"$ROOT/bin") obj=$ROOT/build/plain/obj ;;
	"$ROOT/build/san/bin") obj=$ROOT/build/san/obj san=-fsanitize=address,undefined ;;
	*) skip "CKPT_BIN is not a build of this tree" ;;
	esac
	"${CC:-cc}" -std=c11 -D_GNU_SOURCE -DCKPT_LIBRARY $san -I"$ROOT/lib" -o "$BATS_TEST_TMPDIR/rt" "$ROOT/t/jvalue-rt.c" "$obj/libckpt.a" \
		$(pkg-config --libs jansson libarchive libxxhash snappy rocksdb libcurl zlib libzstd 2>/dev/null ||
			echo -ljansson -larchive -lxxhash -lsnappy -lrocksdb -lcurl -lz -lzstd) -lm -pthread
	"$BATS_TEST_TMPDIR/rt" "$@"
}

@test "jvalue: every Java stream of t/data/jvalue and of the fixtures' JavaSerializer state written back byte-identical (javaser-write.c)" {
	needs_fixtures
	local d i=0 b
	mkdir fx
	for d in "$FIXTURES"/flink-savepoints/*/ "$FIXTURES"/flink-artifacts/*-savepoint/; do
		for b in $(ckpt-inspect --raw -a "$d" 2>/dev/null |
			jq -r '.operators[].subtasks[]?.operator_state // {} | .[].entries[]?.base64 // empty'); do
			i=$((i + 1))
			echo "$b" | base64 -d >fx/$i.bin
			[ "$(od -An -tx1 -N4 fx/$i.bin | tr -d ' ')" = aced0005 ] || rm fx/$i.bin
		done
	done
	[ "$(ls fx | wc -l)" -ge 40 ]
	cd "$J"
	run rt *.bin
	status_is 0
	[ "${#lines[@]}" = 21 ]
	[ -z "$(printf '%s\n' "${lines[@]}" | grep -v ': same$')" ]
	cd "$BATS_TEST_TMPDIR/fx"
	run rt *.bin
	status_is 0
	[ -z "$(printf '%s\n' "${lines[@]}" | grep -v ': same$')" ]
}

# A canonical savepoint sp of a heap value state "j" (Integer keys, JavaSerializer) whose keys of
# key group 29 hold the streams of t/data/jvalue named, one each; its rows in rows.
java_canon() {
	local f k i=0 keys
	rm -rf heap sp
	mkdir heap
	op_file heap/op
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 1; b_value_state j s_proxy "$JAVA"
	KV_OFF=("$(blen)")
	b_i32 29; b_i16 0; b_i32 $#
	keys=($(keys_of_group 29 $#))
	for f; do
		b_u8 0; b_i32 "${keys[$i]}"; B+=$(od -An -v -tx1 "$J/$f.bin" | tr -d ' \n' | sed 's/../\\x&/g')
		i=$((i + 1))
	done
	b_write heap/kv
	KV_KGS=29 KG_TAG=3 KG_FIRST=29 KG_COUNT=1
	(cd heap && meta_file "rel op" "rel kv" .)
	ckpt-merge --canonical -o sp/ heap
	ckpt-inspect -R sp >rows
}

# A canonical savepoint sp of a heap list state "jl" (Integer keys, ListSerializer of
# JavaSerializer) whose keys of key group 29 hold, one key an argument, the lists of the streams
# of t/data/jvalue named (f,f,...); the heap savepoint in heap, sp's rows in rows.  JKIND=MAP: a
# map state of Integer user keys 0, 1, ... to those values.
java_list_canon() {
	local l f i=0 u keys
	rm -rf heap sp
	mkdir heap
	op_file heap/op
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 1; b_utf jl; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf "${JKIND:-LIST}"
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	b_utf VALUE_SERIALIZER; b_i32 2; b_utf "$SER.$([ "${JKIND-}" = MAP ] && echo Map || echo List)SerializerSnapshot"; b_i32 3; b_i32 911108; b_i32 1
	b_i32 1333245; b_i32 1
	if [ "${JKIND-}" = MAP ]; then b_i32 2; b_utf "$SER.IntSerializer\$IntSerializerSnapshot"; b_i32 3; else b_i32 1; fi
	b_utf "$JAVA"; b_i32 3
	KV_OFF=("$(blen)")
	b_i32 29; b_i16 0; b_i32 $#
	keys=($(keys_of_group 29 $#))
	for l; do
		b_u8 0; b_i32 "${keys[$i]}"; b_i32 "$(tr , '\n' <<<"$l" | wc -l)"
		u=0
		for f in ${l//,/ }; do
			[ "${JKIND-}" != MAP ] || { b_i32 $u; b_u8 0; u=$((u + 1)); }
			b_file "$J/$f.bin"
		done
		i=$((i + 1))
	done
	b_write heap/kv
	KV_KGS=29 KG_TAG=3 KG_FIRST=29 KG_COUNT=1
	(cd heap && meta_file "rel op" "rel kv" .)
	ckpt-merge --canonical -o sp/ heap
	ckpt-inspect -R sp >rows
}

# The bytes of sp's and out's entries of state j, each a line, sorted.
j_bytes() {
	ckpt-inspect --raw -a "$1" | jq -c '.operators[].subtasks[]?.keyed_state.entries[]? | select(.state == "j") | [.key, .value]' | sort
}

@test "jvalue: ckpt-merge --rows writes JavaSerializer values by the state's own: unchanged ones byte for byte, changed ones with their class descriptors" {
	java_canon string integer point derived intarray enum
	# deleted, changed (a string, an Integer, fields of plain classes, a subclass's shadowed field,
	# a primitive array) and added (another key with a value the state holds)
	grep -v '"value":"GREEN"' rows | sed 's/"value":"héllo"/"value":"hé"/; s/"value":-5/"value":7/
		s/"x":3,"label":"p","next":{/"x":7,"label":"q","next":{/
		s/"Gen$Base.id":1,"id":2/"Gen$Base.id":10,"id":20/; s/"value":\[1,-2,3\]/"value":[4,5]/' >r
	grep '"value":"GREEN"' rows | sed 's/"key":[0-9]*/"key":1/; s/"key_group":29/"key_group":null/' >>r
	ckpt-merge --rows r -o out/ sp
	run ckpt-inspect -c out
	status_is 0
	run sh -c 'ckpt-inspect -R out | jq -c "select(.state == \"j\") | [.key, .value]" | sort'
	output_is '[1,"GREEN"]
[161,[4,5]]
[33,"hé"]
[36,7]
[42,{"class":"Gen$Point","x":7,"label":"q","next":{"class":"Gen$Point","x":3,"label":"p","next":null,"w":[0.5,-1]},"w":[0.5,-1]}]
[92,{"class":"Gen$Derived","Gen$Base.id":10,"id":20,"name":"d"}]'
	# what was not changed is byte for byte what it was; the changed ones as Java writes them
	j_bytes sp >a
	j_bytes out >b
	[ "$(comm -12 a b | wc -l)" = 0 ] # each changed, or deleted
	[ "$(comm -12 <(jq -c '.[1]' a | sort) <(jq -c '.[1]' b | sort))" = '{"base64":"rO0ABX5yAAlHZW4kQ29sb3IAAAAAAAAAABIAAHhyAA5qYXZhLmxhbmcuRW51bQAAAAAAAAAAEgAAeHB0AAVHUkVFTg=="}' ]
	run sh -c 'j_bytes() { ckpt-inspect --raw -a "$1" | jq -r ".operators[].subtasks[]?.keyed_state.entries[]? | select(.state == \"j\") | .value.base64"; }; j_bytes out | sort'
	status_is 0
	# "hé" as a java.lang.String; 7 an Integer by the state's descriptor of it
	[[ "$output" == *rO0ABXQAA2jDqQ==* ]]
	[[ "$output" == *rO0ABXNyABFqYXZhLmxhbmcuSW50ZWdlchLioKT3gYc4AgABSQAFdmFsdWV4cgAQamF2YS5sYW5nLk51bWJlcoaslR0LlOCLAgAAeHAAAAAH* ]]
}

@test "jvalue: a Java-serialized value ckpt cannot write is a bad row naming why: a class the state holds none of, one of two classes, a changed collection" {
	java_canon string point derived integer long arraylist
	local e='state j: the value does not fit its serializer JavaSerializer: expected'
	sed 's/"class":"Gen$Derived"/"class":"Gen$Other"/' rows >r
	bad 2 "ckpt-merge: r:5: $e a class the state holds a value of, not Gen\$Other" ckpt-merge --rows r -o out/ sp
	sed 's/"value":-5/"value":-6/' rows >r
	bad 2 "ckpt-merge: r:6: $e a value of one class (the state holds java.lang.Integer and java.lang.Long values of this shape)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"value":\["a",1,null\]/"value":["a"]/' rows >r
	bad 2 "ckpt-merge: r:8: $e java.util.ArrayList as it was (ckpt writes a changed one only of plain classes)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"x":3,"label":"p","next":{/"x":"three","label":"p","next":{/' rows >r
	bad 2 "ckpt-merge: r:4: $e a value of a field of type I" ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "jvalue: a list state of JavaSerializer elements takes changed, added and deleted elements as a value state: -R of the output the rows given" {
	java_list_canon string,integer point,derived,enum intarray
	# "héllo" changed, a Point's fields changed, the enum deleted, an int[] added after key 42's
	grep -v '"value":"GREEN"' rows | sed 's/"value":"héllo"/"value":"hé"/
		s/"x":3,"label":"p","next":{/"x":7,"label":"q","next":{/' >r
	grep '"key":42' rows | sed 's/"index":0,"value":\[1,-2,3\]/"index":1,"value":[4,5]/' >>r
	ckpt-merge --rows r -o out/ sp
	run ckpt-inspect -c out
	status_is 0
	ckpt-inspect -R out >got
	cmp got r
	# the same from the heap snapshot, converted in the same write
	ckpt-merge --canonical --rows r -o out2/ heap
	ckpt-inspect -R out2 >got
	cmp got r
	# key 33's list: "hé" as a java.lang.String, joined by ',' to the Integer's own bytes
	run sh -c 'ckpt-inspect --raw -a out | jq -r ".operators[].subtasks[]?.keyed_state.entries[]? | select(.state == \"jl\") | .value.base64"'
	status_is 0
	[[ "$output" == *"$( (printf '\254\355\000\005t\000\003h\303\251,'; cat "$J/integer.bin") | base64 -w0)"* ]]
}

@test "jvalue: a list state's Java-serialized element ckpt cannot write is a bad row naming why, as a value state's" {
	local e='state jl: the value does not fit its serializer JavaSerializer: expected'
	java_list_canon string,point derived,integer long,arraylist
	sed 's/"class":"Gen$Derived"/"class":"Gen$Other"/' rows >r
	bad 2 "ckpt-merge: r:5: $e a class the state holds a value of, not Gen\$Other" ckpt-merge --rows r -o out/ sp
	sed 's/"value":-5/"value":-6/' rows >r
	bad 2 "ckpt-merge: r:6: $e a value of one class (the state holds java.lang.Integer and java.lang.Long values of this shape)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"value":\["a",1,null\]/"value":["a"]/' rows >r
	bad 2 "ckpt-merge: r:8: $e java.util.ArrayList as it was (ckpt writes a changed one only of plain classes)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"x":3,"label":"p","next":{/"x":"three","label":"p","next":{/' rows >r
	bad 2 "ckpt-merge: r:4: $e a value of a field of type I" ckpt-merge --rows r -o out/ sp
	java_list_canon bigdec date
	sed 's/"value":"-12345.6789"/"value":"1.5"/' rows >r
	bad 2 "ckpt-merge: r:3: $e a value of one class (the state holds java.math.BigDecimal and java.util.Date values of this shape)" \
		ckpt-merge --rows r -o out/ sp
	# Strings beside another class printed as a string: a changed string is neither guessed a String
	java_list_canon string bigdec
	sed 's/"value":"héllo"/"value":"hé"/' rows >r
	bad 2 "ckpt-merge: r:3: $e a value of one class (the state holds java.math.BigDecimal and java.lang.String values of this shape)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"value":"-12345.6789"/"value":"1.5"/' rows >r
	bad 2 "ckpt-merge: r:4: $e a value of one class (the state holds java.math.BigDecimal and java.lang.String values of this shape)" \
		ckpt-merge --rows r -o out/ sp
	java_list_canon bigdec,bigdec
	sed '3s/"value":"-12345.6789"/"value":"1.5"/' rows >r
	bad 2 "ckpt-merge: r:3: $e java.math.BigDecimal as it was (ckpt writes a changed one only of plain classes)" \
		ckpt-merge --rows r -o out/ sp
	java_list_canon date
	sed 's/"value":"2023-11-14T22:13:20.123Z"/"value":"2024-11-14T22:13:20.123Z"/' rows >r
	bad 2 "ckpt-merge: r:3: $e java.util.Date as it was (ckpt writes a changed one only of plain classes)" \
		ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "jvalue: an operator list state of JavaSerializer elements (Flink's _default_ of Strings) takes changed, added and deleted elements" {
	needs_fixtures
	local f=$FIXTURES/flink-savepoints/v4-flink1.20-complexkeyed-savepoint
	ckpt-inspect -R "$f" >rows
	# second0 changed, first2 deleted, an element added to subtask 1 after first1
	grep -v '"value":"first2"' rows | sed 's/"value":"second0"/"value":"second0-changed"/
		/"value":"first1"/{p; s/"index":0,"value":"first1"/"index":1,"value":"first-added"/; }' >r
	[ "$(grep -c '"state":"_default_"' r)" = 8 ]
	grep -q '"subtask":1,"index":1,"value":"first-added"' r
	ckpt-merge --rows r -o out/ "$f"
	run ckpt-inspect -c out
	status_is 0
	ckpt-inspect -R out >got
	cmp got r
	# the changed one as Java writes a String, the others their own bytes
	run sh -c 'ckpt-inspect --raw -a out | jq -r ".operators[].subtasks[]?.operator_state._default_.entries[]?.base64 // empty" | sort'
	status_is 0
	output_is "$(for s in first-added first0 first1 first3 second0-changed second1 second2 second3; do
		(printf '\254\355\000\005t\000'; printf "\\$(printf %03o ${#s})"; printf %s "$s") | base64 -w0; echo; done | sort)"
}

@test "jvalue: an operator list state's Java-serialized element ckpt cannot write is a bad row naming why" {
	local e='state _default_: the value does not fit its serializer JavaSerializer: expected'
	op_sp "_default_:$JAVA:$J/integer.bin,$J/long.bin,$J/arraylist.bin,$J/string.bin"
	ckpt-inspect -R sp >rows
	sed 's/"value":-5/"value":-6/' rows >r
	bad 2 "ckpt-merge: r:1: $e a value of one class (the state holds java.lang.Integer and java.lang.Long values of this shape)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"value":\["a",1,null\]/"value":["a"]/' rows >r
	bad 2 "ckpt-merge: r:3: $e java.util.ArrayList as it was (ckpt writes a changed one only of plain classes)" \
		ckpt-merge --rows r -o out/ sp
	sed 's/"value":"héllo"/"value":{"class":"Gen$Point","x":1}/' rows >r
	bad 2 "ckpt-merge: r:4: $e a class the state holds a value of, not Gen\$Point" ckpt-merge --rows r -o out/ sp
	sed 's/"value":"héllo"/"value":true/' rows >r
	bad 2 "ckpt-merge: r:4: $e a value of a shape the state holds (an enum: one of its constants the state holds)" \
		ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "jvalue: a heap map state of JavaSerializer values converted with --rows --canonical: changed values written by the state's own" {
	JKIND=MAP java_list_canon string,integer point
	sed 's/"value":"héllo"/"value":"hé"/; s/"x":3,"label":"p","next":{/"x":7,"label":"q","next":{/' rows >r
	ckpt-merge --canonical --rows r -o out/ heap
	run ckpt-inspect -c out
	status_is 0
	ckpt-inspect -R out >got
	cmp got r
}
