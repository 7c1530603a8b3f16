# Snapshot and value writers of Avro records and POJOs for t/flinkavro.bats and t/mergeenc.bats:
# synthetic heap keyed state (flinkstate-helper.bash's sv_dir) whose serializer snapshots are
# flink-avro's AvroSerializerSnapshot (versions 2 and 3) and PojoSerializerSnapshot with nested
# POJOs, a field gone from the class, a registered and a cached subclass.
# Loads usertypes-helper.bash (the nested snapshots, flinkstate-helper.bash).
. "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/usertypes-helper.bash"

AVRO=org.apache.flink.formats.avro.typeutils.AvroSerializerSnapshot
POJO=org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot

# StringValue.writeString of ASCII: the length + 1 as a varint (7 bits a byte, low first), the bytes.
b_sv() {
	local n=$((${#1} + 1))
	while [ $n -ge 128 ]; do b_u8 $((n & 127 | 128)); n=$((n >> 7)); done
	b_u8 $n
	B+=$1
}
b_avstr() { local LC_ALL=C; b_i32 ${#1}; B+=$1; } # DataOutputEncoder.writeString: a length in bytes, the UTF-8

# The Avro schema: a record with a union, an enum, a fixed, decimals (bytes and fixed), a date, the
# timestamps, a map, an array and itself (recursive) in a union.
SCHEMA='{"type":"record","name":"R","namespace":"x.av","fields":[
{"name":"u","type":["null","string"]},
{"name":"e","type":{"type":"enum","name":"E","symbols":["A","B","C"]}},
{"name":"f","type":{"type":"fixed","name":"F","size":3}},
{"name":"d","type":{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}},
{"name":"df","type":{"type":"fixed","name":"D","size":2,"logicalType":"decimal","precision":4,"scale":4}},
{"name":"dt","type":{"type":"int","logicalType":"date"}},
{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
{"name":"us","type":{"type":"long","logicalType":"timestamp-micros"}},
{"name":"lt","type":{"type":"long","logicalType":"local-timestamp-millis"}},
{"name":"tm","type":{"type":"int","logicalType":"time-millis"}},
{"name":"m","type":{"type":"map","values":"long"}},
{"name":"a","type":{"type":"array","items":"int"}},
{"name":"fl","type":"float"},{"name":"b","type":"boolean"},{"name":"by","type":"bytes"},
{"name":"next","type":["null","R"]}]}'
SCHEMA=$(tr -d '\n' <<<"$SCHEMA")
s_avro3() { b_utf "$AVRO"; b_i32 3; b_sv org.apache.avro.generic.GenericRecord; b_sv "$SCHEMA"; }
s_avro2() { b_utf "$AVRO"; b_i32 2; b_utf x.av.R; b_utf "$SCHEMA"; }
v_rec() { # $1: the next record too
	b_i32 1; b_avstr "hé"                # u: the string branch (UTF-8)
	b_i32 2                              # e: C
	B+=xyz                               # f
	b_i32 2; b_u8 0xff; b_u8 0x85        # d: -123, scale 2
	b_u8 0x00; b_u8 0x07                 # df: 7, scale 4
	b_i32 19723                          # dt: 2024-01-01
	b_i64 1704067200123                  # ts
	b_i64 -1                             # us: a microsecond before the epoch
	b_i64 86399999                       # lt
	b_i32 3723004                        # tm: 01:02:03.004
	b_u8 1; b_avstr k; b_i64 5; b_u8 0   # m: one block of one entry, then 0
	b_u8 2; b_i32 7; b_i32 -1; b_u8 1; b_i32 9; b_u8 0 # a: blocks of 2 and 1
	b_i32 0x3fa00000                     # fl: 1.25
	b_u8 1                               # b
	b_i32 2; b_u8 0; b_u8 0xc3           # by: not UTF-8: base64
	if [ -n "${1-}" ]; then b_i32 1; v_rec; else b_i32 0; fi
}
v_avro() { v_rec next; }

# POJO snapshots: x.Base {name: String, inner: x.In {n: Long}, gone: Int, a field no longer in the
# class (its Field frame absent)}, subclass x.Sub {extra: Int, name: String} registered (tag 0),
# x.Cached {c: Long} cached (not registered).
s_field() { # NAME SNAPSHOT-WRITER [gone]
	b_utf "$1"
	if [ "${3-}" = gone ]; then b_u8 0; else b_u8 1; ch b_utf "x.Base"; fi
	b_u8 1; ch "$2"
}
s_in() { b_utf "$POJO"; b_i32 2; b_utf x.In; b_omap 1; s_field n n_long; b_omap 0; b_omap 0; }
s_sub() { b_utf "$POJO"; b_i32 2; b_utf x.Sub; b_omap 2; s_field extra n_int; s_field name n_str; b_omap 0; b_omap 0; }
s_cached() { b_utf "$POJO"; b_i32 2; b_utf x.Cached; b_omap 1; s_field c n_long; b_omap 0; b_omap 0; }
s_sub_entry() { b_utf "$1"; b_u8 1; ch b_utf "$1"; b_u8 1; ch "$2"; }
s_base() {
	b_utf "$POJO"; b_i32 2; b_utf x.Base
	b_omap 3; s_field name n_str; s_field inner s_in; s_field gone n_int gone
	b_omap 1; s_sub_entry x.Sub s_sub
	b_omap 1; s_sub_entry x.Cached s_cached
}
v_base() { b_u8 2; b_u8 0; b_str ab; b_u8 0; b_u8 2; b_u8 0; b_i64 -9; b_u8 0; b_i32 4; }
v_nulls() { b_u8 2; b_u8 1; b_u8 1; b_u8 1; }
v_sub() { b_u8 8; b_u8 0; b_u8 2; b_u8 0; b_i32 -3; b_u8 0; b_str s; }
v_cached() { b_u8 4; b_utf x.Cached; b_u8 2; b_u8 0; b_i64 11; }

STATES='rec3:s_avro3:v_avro rec2:s_avro2:v_avro base:s_base:v_base nulls:s_base:v_nulls sub:s_base:v_sub cached:s_base:v_cached'
