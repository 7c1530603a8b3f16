# Helpers of t/flinkavro.bats and t/flinktypes.bats (user types, issue 27): the serializer snapshots
# their nested snapshots are made of, a canonical savepoint of one keyed entry, -a's typed entries.
# Loads flinkstate-helper.bash (the state files and the _metadata around them).
. "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/flinkstate-helper.bash"

STR="$SER.StringSerializer\$StringSerializerSnapshot"
LONG="$SER.LongSerializer\$LongSerializerSnapshot"
INT="$SER.IntSerializer\$IntSerializerSnapshot"

# A nested snapshot of a serializer of no parameters: its class, version 3 (no format version
# before it, as s_proxy writes in the state meta info).
n_simple() { b_utf "$1"; b_i32 3; }
n_str() { n_simple "$STR"; }
n_long() { n_simple "$LONG"; }
n_int() { n_simple "$INT"; }
# b_omap N: the header of a LinkedOptionalMap of N entries (its magic, its size).
b_omap() { b_i64 0x4f2c69a3d70; b_i32 "$1"; }

# ckv_dir KEY-SNAPSHOT STATE VALUE-SNAPSHOT KEY-GROUP KEY VALUE: a canonical savepoint sp/ (op_file's
# operator state, keyed state in kv_file's layout: entries with their lengths) whose keyed state is
# value state STATE of one entry in KEY-GROUP (max parallelism 128): the key KEY writes, the void
# namespace, the value VALUE writes.  The snapshots (after s_by's format version) and the key and
# value are functions.  KV_OFF: the offset of the key group; VAL_AT: that of the value's bytes.
ckv_dir() {
	rm -rf sp
	mkdir sp
	unset KV_KGS KG_TAG KG_FIRST KG_COUNT KG_FOR
	op_file sp/op
	B=; b_i32 6; b_u8 0; s_by "$1"
	b_i16 1; b_value_state "$2" s_by "$3"
	KV_OFF=("$(blen)")
	b_i16 0; ch ckv_key "$4" "$5"
	VAL_AT=("$(($(blen) + 4))")
	ch "$6"
	b_i16 -1
	b_write sp/kv
	KV_KGS=$4
	(cd sp && meta_file "rel op" "rel kv" .)
}
# The key bytes of an entry: the key group (its first entry: the high bit set), the key KEY writes, the
# void namespace.
ckv_key() { b_u8 $(($1 | 128)); "$2"; b_u8 0; }

# typed_entries JQ: -a's keyed entries of sp, each as the jq filter JQ makes it, one a line.
typed_entries() {
	ckpt-inspect -a sp | jq -c ".operators[].subtasks[].keyed_state.entries[] | $1"
}
