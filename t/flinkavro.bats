#!/usr/bin/env bats
# Avro records and POJOs completed (issue 27 items 1, 4) through ckpt-inspect, without the harness:
# synthetic heap keyed state whose serializer snapshots are flink-avro's AvroSerializerSnapshot
# (versions 2 and 3) and PojoSerializerSnapshot with nested POJOs, a field gone from the class, a
# registered and a cached subclass; golden rows in t/data/flinkavro-rows.ndjson.

bats_require_minimum_version 1.5.0
load helper
load flinkavro-helper

@test "flinkavro: Avro records (snapshot versions 2 and 3) and POJOs (nested, null, a gone field, subclasses) typed: the golden rows" {
	sv_dir "$STATES"
	run sh -c "ckpt-inspect -R sp | jq -c 'select(.state != \"names\") | {state, key, value}'"
	status_is 0
	output_is "$(cat "$BATS_TEST_DIRNAME/data/flinkavro-rows.ndjson")"
	# -a types them alike
	run typed_entries '{state, key, value}'
	status_is 0
	output_is "$(cat "$BATS_TEST_DIRNAME/data/flinkavro-rows.ndjson")"
}

@test "flinkavro: a subclass ckpt has no snapshot of stops with its name and offset, never guessed past" {
	v_gone() { b_u8 4; b_utf x.Gone; b_u8 2; }
	sv_dir 'gone:s_base:v_gone'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 9)): POJO subclass x.Gone of x.Base: its snapshot is not in the snapshot (not registered, not cached)" "$NAMES_ROWS" ckpt-inspect -R sp
	v_tag() { b_u8 8; b_u8 3; }
	sv_dir 'tag:s_base:v_tag'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 2)): POJO subclass tag 3 of x.Base, which has 1 registered subclasses" "$NAMES_ROWS" ckpt-inspect -R sp
	v_flags() { b_u8 3; }
	sv_dir 'flags:s_base:v_flags'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 1)): POJO flags 3 of x.Base (1, 2, 4 or 8 expected)" "$NAMES_ROWS" ckpt-inspect -R sp
	v_null() { b_u8 2; b_u8 2; }
	sv_dir 'null:s_base:v_null'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 2)): POJO field null flag 2 (0 or 1 expected)" "$NAMES_ROWS" ckpt-inspect -R sp
}

@test "flinkavro: damaged Avro values: the offset and what is wrong, never a wrong value" {
	v_enum() { b_i32 1; b_avstr a; b_i32 3; }
	sv_dir 'enum:s_avro3:v_enum'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 13)): Avro enum index 3 of 3" "$NAMES_ROWS" ckpt-inspect -R sp
	v_union() { b_i32 2; }
	sv_dir 'union:s_avro3:v_union'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 4)): Avro union branch 2 of 2" "$NAMES_ROWS" ckpt-inspect -R sp
	v_str() { b_i32 1; b_i32 2; b_u8 0xc3; b_u8 0x28; }
	sv_dir 'str:s_avro3:v_str'
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 10)): Avro string not UTF-8" "$NAMES_ROWS" ckpt-inspect -R sp
	# a value that runs past the end: the string's length claims more than there is
	v_long() { b_i32 1; b_i32 1000; }
	sv_dir 'long:s_avro3:v_long'
	run --separate-stderr ckpt-inspect -R sp
	status_is 2
	[[ $stderr == "ckpt-inspect: sp/kv: offset "*"Avro string"* ]] || { echo "$stderr"; return 1; }
}

@test "flinkavro: an Avro schema that is not JSON is damage, named; one of an unknown type leaves the state untyped" {
	s_bad() { b_utf "$AVRO"; b_i32 3; b_sv x.R; b_sv '{"type":'; }
	sv_dir 'bad:s_bad:v_avro'
	run --separate-stderr ckpt-inspect -R sp
	status_is 2
	[[ $stderr == "ckpt-inspect: sp/kv: offset "*": Avro schema not JSON: "* ]] || { echo "$stderr"; return 1; }
	s_odd() { b_utf "$AVRO"; b_i32 3; b_sv x.R; b_sv '{"type":"x.Nowhere"}'; }
	v_odd() { :; }
	sv_dir 'odd:s_odd:v_odd'
	bad_after 1 "ckpt-inspect: sp/kv: state \"odd\" of a heap snapshot has no lengths, and its serializer $AVRO is not one ckpt decodes" "$NAMES_ROWS" ckpt-inspect -R sp
}

@test "flinkavro: dates beyond years 0 to 9999 signed as Java's LocalDate writes them; timestamps before the epoch" {
	s_dates() { b_utf "$AVRO"; b_i32 3; b_sv x.Ds; b_sv '{"type":"array","items":[{"type":"int","logicalType":"date"},{"type":"long","logicalType":"timestamp-millis"}]}'; }
	v_dates() { b_u8 4; b_i32 0; b_i32 2932897; b_i32 0; b_i32 -719529; b_i32 0; b_i32 -719163; b_i32 1; b_i64 -1; b_u8 0; }
	sv_dir 'dates:s_dates:v_dates'
	run sh -c "ckpt-inspect -R sp | jq -c 'select(.state == \"dates\") | .value'"
	status_is 0
	output_is '["+10000-01-01","-0001-12-31","0000-12-31","1969-12-31T23:59:59.999Z"]'
}

# Canonical keyed state (ckv_dir): value state "rec" of the Avro record, key 42 in key group 29.
k42() { b_i32 42; }

@test "flinkavro: canonical entries: the record typed; a value that runs past its entry stops at its byte, never read on" {
	ckv_dir n_int rec s_avro3 29 k42 v_avro
	run sh -c "ckpt-inspect -R sp | jq -c 'select(.state == \"rec\") | .value.next.d'"
	status_is 0
	output_is '"-1.23"'
	v_past() { b_i32 1; b_i32 10; B+=abc; }
	ckv_dir n_int rec s_avro3 29 k42 v_past
	bad_after 2 "ckpt-inspect: sp/kv: offset $((VAL_AT[0] + 8)): Avro string of 10 bytes, more than the 3 left" "$NAMES_ROWS" ckpt-inspect -R sp
}
