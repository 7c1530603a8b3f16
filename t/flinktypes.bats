#!/usr/bin/env bats
# Typed values of user types (issue 27) through ckpt-inspect: synthetic state files whose serializer
# snapshots are those of flink-scala (case classes, Option, Either, Try, collections, Enumeration,
# Unit), of Java's Either and of Kryo, and the real Scala fixtures of flink-artifacts/.

bats_require_minimum_version 1.5.0
load helper
load usertypes-helper

S=org.apache.flink.api.scala.typeutils

# A composite snapshot (CompositeTypeSerializerSnapshot, version 3): class $1, outer version 2,
# the outer payload already in OUTER (B's escapes), then the nested snapshots, each a function.
s_composite() {
	local cls=$1 k
	shift
	b_utf "$cls"; b_i32 3; b_i32 911108; b_i32 2; B+=${OUTER-}; OUTER=
	b_i32 1333245; b_i32 1; b_i32 $#
	for k; do "$k"; done
}
s_kryo() { # KryoSerializerSnapshot: the type's class and three empty LinkedOptionalMaps
	b_utf org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot; b_i32 2; b_utf java.lang.Throwable
	b_omap 0; b_omap 0; b_omap 0
}
s_case() { OUTER=; local save=$B; B=; b_utf x.Point; OUTER=$B; B=$save; s_composite "$S.ScalaCaseClassSerializerSnapshot" n_str n_long; }
s_option() { s_composite "$S.ScalaOptionSerializerSnapshot" s_case; }
s_either() { s_composite "$S.ScalaEitherSerializerSnapshot" s_case n_str; }
s_jeither() { s_composite org.apache.flink.api.java.typeutils.runtime.JavaEitherSerializerSnapshot n_long n_str; }
s_try() { s_composite "$S.ScalaTrySerializerSnapshot" n_long s_kryo; }
s_list() { local save=$B; B=; b_utf 'implicitly[CanBuildFrom[List[x.Point], x.Point, List[x.Point]]]'; OUTER=$B; B=$save; s_composite "$S.TraversableSerializerSnapshot" s_case; }
s_enum() { b_utf "$S.ScalaEnumSerializerSnapshot"; b_i32 3; b_utf 'x.Color$'; b_i32 2; b_utf RED; b_i32 0; b_utf BLUE; b_i32 5; }
s_unit() { b_utf "$S.UnitSerializer\$UnitSerializerSnapshot"; b_i32 3; }
s_void() { b_utf "$SER.VoidSerializer\$VoidSerializerSnapshot"; b_i32 3; }

# Values: Point("ab", 7); the states below, each with its value, in STATES order.
v_point() { b_str ab; b_i64 7; }
STATES='option:s_option:v_some none:s_option:v_none left:s_either:v_left right:s_either:v_right
jleft:s_jeither:v_jleft points:s_list:v_list color:s_enum:v_color unit:s_unit:v_unit void:s_void:v_unit
ok:s_try:v_ok'
v_some() { b_u8 1; v_point; }
v_none() { b_u8 0; }
v_left() { b_u8 1; v_point; }
v_right() { b_u8 0; b_str r; }
v_jleft() { b_u8 1; b_i64 -3; }
v_list() { b_i32 3; b_u8 1; v_point; b_u8 0; b_u8 1; b_str c; b_i64 -1; }
v_color() { b_i32 5; }
v_unit() { b_u8 0; }
v_ok() { b_u8 1; b_i64 9; }

@test "flinktypes: Scala case classes, Option, Either, collections, Enumeration, Unit, Java's Either and Void typed" {
	sv_dir "${STATES%[[:space:]]ok:*}"
	run typed_entries '[.state, .value]'
	status_is 0
	output_is '["option",["ab",7]]
["none",null]
["left",{"left":["ab",7]}]
["right",{"right":"r"}]
["jleft",{"left":-3}]
["points",[["ab",7],null,["c",-1]]]
["color","BLUE"]
["unit",null]
["void",null]'
}

@test "flinktypes: a Kryo serializer is stepped over: the heap state it is in stops, naming it" {
	sv_dir "$STATES"
	bad 1 'ckpt-inspect: sp/kv: state "ok" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes' \
		ckpt-inspect -a sp
}

@test "flinktypes: damaged Scala values: one line naming the file, the offset and what is wrong" {
	# an Option flag of 2, an enumeration id of no constant, a collection element flag of 7
	v_none() { b_u8 2; }
	sv_dir 'none:s_option:v_none'
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[0] + 16)): option flag 2 (0 or 1 expected)" ckpt-inspect -a sp
	v_color() { b_i32 4; }
	sv_dir 'color:s_enum:v_color'
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[0] + 19)): enumeration id 4 is none of the 2 constants of x.Color\$" ckpt-inspect -a sp
	v_list() { b_i32 1; b_u8 7; }
	sv_dir 'points:s_list:v_list'
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[0] + 20)): collection element flag 7 (0 or 1 expected)" ckpt-inspect -a sp
}

# A canonical savepoint (ckv_dir) whose key serializer is Kryo: in key group 113 (Flink's of
# Long.hashCode 3: a key of Kryo's default classes is checked against its key group), the key Kryo
# wrote as the registered java.lang.Long 3 (id 7 + 2, zigzag varint 6) in value state "blob" of a
# Kryo value of the unregistered class x.Foo (1, name id 0, the name's last byte with its high bit
# set), then its fields' bytes "zz"; and list state "names" of Strings in the operator state.
k_long3() { b_u8 9; b_u8 6; }
v_foo() { b_u8 1; b_u8 0; B+=x.Fo; b_u8 $((0x6f | 128)); B+=zz; }

@test "flinktypes: Kryo keys and values in a canonical savepoint: the class named, the bytes kept, typed null" {
	ckv_dir s_kryo blob s_kryo 113 k_long3 v_foo
	run typed_entries '[.state, .key_group, {key, namespace, value}]'
	status_is 0
	output_is '["blob",113,{"key":{"kryo_class":"java.lang.Long","kryo_id":7,"typed":null,"reason":"Kryo writes no schema: the bytes are kept as they are","bytes":"\t\u0006"},"namespace":null,"value":{"kryo_class":"x.Foo","kryo_id":null,"typed":null,"reason":"Kryo writes no schema: the bytes are kept as they are","bytes":{"base64":"AQB4LkZv73p6"}}}]'
	# the key 3 made 4 (zig-zag 8): Long.hashCode 4 is key group 7
	printf '\010' | dd of=sp/kv bs=1 seek=$((KV_OFF[0] + 8)) conv=notrunc status=none
	bad 2 "ckpt-inspect: sp/kv: offset $((KV_OFF[0] + 2)): a key of state \"blob\" in key group 113 hashes to key group 7" \
		ckpt-inspect -a sp
}

@test "flinktypes: the Scala fixtures: Kryo keys named, Scala values typed, alike in every canonical form" {
	needs_fixtures
	[ -d "$FIXTURES/flink-artifacts" ] || skip "no flink-artifacts/"
	cd "$FIXTURES/flink-artifacts"
	for f in stateful-scala-udf-migration-itcase-flink1.1{5,7,9}-{hashmap,rocksdb}-savepoint; do
		run sh -c "ckpt-inspect -a $f | jq -c '[.operators[].subtasks[].keyed_state.entries // [] | .[] | select(.key.bytes == \"\\t\\u0004\") | [.state, .key.kryo_class, (.value | if type == \"object\" and has(\"failure\") then .failure |= del(.bytes) else . end)]] | sort | .[]'"
		status_is 0
		output_is '["caseClassState","java.lang.Long",["2",4]]
["caseClassWithNestingState","java.lang.Long",[2,["2",4]]]
["collectionState","java.lang.Long",[["2",4]]]
["eitherLeftState","java.lang.Long",{"left":["2",4]}]
["eitherRightState","java.lang.Long",{"right":"6"}]
["enumOneState","java.lang.Long","THREE"]
["optionNoneState","java.lang.Long",null]
["optionState","java.lang.Long",["2",4]]
["tryFailureState","java.lang.Long",{"failure":{"kryo_class":"java.lang.RuntimeException","kryo_id":null,"typed":null,"reason":"Kryo writes no schema: the bytes are kept as they are"}}]
["tryState","java.lang.Long",{"success":["2",10]}]'
	done
}
