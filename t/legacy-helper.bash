# legacy-helper.bash: operator state of the connectors before the Source API and of the sinks,
# written from their layouts (ckpt-flink(5), LEGACY CONNECTORS) with the big-endian writers of
# flinkmeta-helper.bash, in savepoints of one operator whose subtasks each hold one state file.
. "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/flinkstate-helper.bash"

CONSUMER=topic-partition-offset-states
BYTES_SNAP='org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot'
# KafkaTopicPartitionStateSentinel
OFFSET_NOT_SET=-915623761776 EARLIEST=-915623761775 LATEST=-915623761774 GROUP=-915623761773

# Kryo's variable-length int: positive (7 bits a byte, low first), and zig-zag.
k_varint() {
	local v=$(($1 & 0xffffffff))
	while [ $v -ge 128 ]; do b_u8 $(((v & 127) | 128)); v=$((v >> 7)); done
	b_u8 $v
}
k_zigzag() { k_varint $(((($1 << 1) ^ ($1 >> 31)) & 0xffffffff)); }
# Kryo's writeString of an ASCII string: of 2 to 63 characters its bytes, the last one's high bit
# set; else the length + 1 (6 bits and the 0x80 flag, then 7 bits a byte, 0x40 and 0x80 saying
# more follow), then the characters.
k_ascii() {
	local n=$((${#1} + 1))
	if [ ${#1} -gt 1 ] && [ ${#1} -lt 64 ]; then
		B+=${1:0:-1}; b_u8 $(($(printf '%d' "'${1: -1}") | 128))
		return
	fi
	if [ $n -lt 64 ]; then b_u8 $((n | 128)); else b_u8 $(((n & 63) | 192)); k_varint $((n >> 6)); fi
	B+=$1
}
# String.hashCode of ASCII $1, as a signed 32-bit int.
java_hash() {
	local h=0 i
	for ((i = 0; i < ${#1}; i++)); do h=$(((31 * h + $(printf '%d' "'${1:i:1}")) & 0xffffffff)); done
	echo $((h >= 2147483648 ? h - 4294967296 : h))
}
# FlinkKafkaConsumer's element TOPIC PARTITION OFFSET [HASH]: Tuple2<KafkaTopicPartition, Long>,
# KafkaTopicPartition by Kryo (registered id 85, as the connector's migration snapshots have it:
# the reference marker, cachedHash, partition, the topic's marker, the topic), then the offset.
ktp_element() {
	local hash=${4:-$(((31 * $(java_hash "$1") + $2) & 0xffffffff))}
	k_varint 87; k_varint 1; k_zigzag $((hash >= 2147483648 ? hash - 4294967296 : hash)); k_zigzag "$2"
	k_varint 1; k_ascii "$1"; b_i64 "$3"
}

# An operator state file FILE of one state NAME (mode SPLIT_DISTRIBUTE or UNION), its value
# serializer snapshot written by SNAP, its elements written by the commands after it (each one
# word, spaces as commas): OFFS gets their offsets.
op_stream() {
	local file=$1 name=$2 mode=$3 snap=$4 el
	shift 4
	B=; b_i32 6; b_u8 0; b_i16 1
	b_utf "$name"; b_i32 1; b_i32 1; b_utf OPERATOR_STATE_DISTRIBUTION_MODE; b_utf "$mode"
	b_i32 1; b_utf VALUE_SERIALIZER; $snap
	b_i16 0
	OFFS=()
	for el; do OFFS+=("$(blen)"); ${el//,/ }; done
	b_write "$file"
}
s_bytes() { s_proxy "$BYTES_SNAP"; }
# A byte[] as BytePrimitiveArraySerializer writes it: its i32 length, then hex $1.
b_bytearray() { b_i32 $((${#1} / 2)); B+=$(sed 's/../\\x&/g' <<<"$1"); }

# _metadata (format 3) in DIR of one operator (uid-less, id 0102...10) of parallelism P, subtask i
# holding state NAME of mode MODE (0 SPLIT_DISTRIBUTE, 1 UNION) in DIR/op$i at offsets OFFS_i (a
# variable holding them, space-separated); with INLINE=1 the bytes of DIR/op$i inline (a byte
# stream handle) and the files removed.
legacy_meta() {
	local dir=$1 p=$2 name=$3 mode=$4 i o offs
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 "$p"; b_i32 128
	b_u8 0; b_i32 "$p"
	for ((i = 0; i < p; i++)); do
		offs="OFFS_$i"
		offs=(${!offs})
		b_i32 $i
		b_i32 1; b_u8 4; b_i32 1; b_utf "$name"; b_u8 "$mode"; b_i32 ${#offs[@]}
		for o in "${offs[@]}"; do b_i64 "$o"; done
		if [ "${INLINE:-}" = 1 ]; then
			b_u8 1; b_utf "op$i"; b_i32 "$(wc -c <"$dir/op$i")"; B+=$(xxd -p "$dir/op$i" | tr -d '\n' | sed 's/../\\x&/g')
		else
			b_u8 6; b_utf "op$i"; b_i64 "$(wc -c <"$dir/op$i")"
		fi
		b_i32 0; b_u8 0; b_u8 0; b_i32 0; b_i32 0
	done
	b_write "$dir/_metadata"
	if [ "${INLINE:-}" = 1 ]; then for ((i = 0; i < p; i++)); do rm "$dir/op$i"; done; fi
}

# The consumer's value serializer snapshot, as FlinkKafkaConsumerBase.createStateSerializer makes
# it: a TupleSerializerSnapshot of Tuple2, of a KryoSerializerSnapshot of KafkaTopicPartition (its
# three LinkedOptionalMaps empty here) and Long's.
s_consumer() {
	b_i32 2; b_utf org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot; b_i32 3
	b_i32 911108; b_i32 2; b_utf org.apache.flink.api.java.tuple.Tuple2; b_i32 1333245; b_i32 1; b_i32 2
	b_utf org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot; b_i32 2
	b_utf org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition
	for _ in 1 2 3; do b_i64 0x4f2c69a3d70; b_i32 0; done
	b_utf "$SER.LongSerializer\$LongSerializerSnapshot"; b_i32 3
}

# The consumer's savepoint cs/: subtask 0 holding abc:13 (last record 16768) and def:7 (never
# read: EARLIEST_OFFSET), subtask 1 holding abc:0 (-1: a specific start at offset 0) and
# ghi:2 (GROUP_OFFSET).
consumer_sp() {
	mkdir -p cs
	op_stream cs/op0 $CONSUMER UNION s_consumer "ktp_element,abc,13,16768" "ktp_element,def,7,$EARLIEST"
	OFFS_0=${OFFS[*]}
	op_stream cs/op1 $CONSUMER UNION s_consumer "ktp_element,abc,0,-1" "ktp_element,ghi,2,$GROUP"
	OFFS_1=${OFFS[*]}
	legacy_meta cs 2 $CONSUMER 1
}

# Hex helpers for the sinks' byte[]: SimpleVersionedSerialization of hex $2 at version $1.
h_i16() { printf '%04x' $(($1 & 0xffff)); }
h_i32() { printf '%08x' $(($1 & 0xffffffff)); }
h_i64() { printf '%016x' "$1"; }
h_utf() { printf '%04x' "${#1}"; printf '%s' "$1" | xxd -p | tr -d '\n'; }
h_framed() { h_i32 "$1"; h_i32 $((${#2} / 2)); printf '%s' "$2"; }
# KafkaWriterStateSerializer v2: PREFIX SUBTASK SUBTASKS OWNERSHIP then "ID CHECKPOINT" ...
h_writer2() {
	local h n=0 t
	h=$(h_utf "$1")$(h_i32 "$2")$(h_i32 "$3")$(h_i32 "$4")
	shift 4
	t=
	for e in "$@"; do set -- $e; t=$t$(h_utf "$1")$(h_i64 "$2"); n=$((n + 1)); done
	printf '%s%s%s' "$h" "$(h_i32 $n)" "$t"
}
# KafkaCommittableSerializer v1: EPOCH PRODUCER-ID TRANSACTIONAL-ID.
h_committable() { h_i16 "$1"; h_i64 "$2"; h_utf "$3"; }
# CommittableCollectorSerializer v2 of one checkpoint CK of one subtask (subtask manager version
# SV) holding committables of hex $4 ... (each a request: framed at version 1, retries 0, RECEIVED).
h_collector() {
	local ck=$1 sv=$2 sub=$3 reqs n st c
	shift 3
	n=$#
	reqs=$(req_list $n "$@")
	st=$(h_i32 "$sub")$reqs$(h_i32 $n)
	[ "$sv" = 1 ] && st=$st$(h_i32 0)
	st=$st$(h_i32 0)
	c=$(h_i64 "$ck")$(h_i32 1)$(h_i32 "$sv")$(h_i32 1)$(h_i32 $((${#st} / 2)))$st
	printf 'b91f252c%s%s%s%s' "$(h_i32 1)" "$(h_i32 1)" "$(h_i32 $((${#c} / 2)))" "$c"
}
# The requests' list (version 0) of committables hex $2 ...: each framed, the committable
# framed at version CVER (1 unless set) inside, then retries 0 and state RECEIVED.
req_list() {
	local n=$1 r h=''
	shift
	for c; do
		r=$(h_framed "${CVER:-1}" "$c")$(h_i32 0)$(h_i32 0)
		h=$h$(h_i32 $((${#r} / 2)))$r
	done
	printf '%s%s%s' "$(h_i32 0)" "$(h_i32 "$n")" "$h"
}

# A sink's savepoint DIR of one subtask holding state NAME, its one element the byte[] of hex $3.
sink_sp() {
	mkdir -p "$1"
	op_stream "$1/op0" "$2" SPLIT_DISTRIBUTE s_bytes "b_bytearray,$3"
	OFFS_0=${OFFS[*]}
	legacy_meta "$1" 1 "$2" 0
}

# FlinkKafkaProducer (ckpt-flink(5), LEGACY CONNECTORS): its union state of the transactional id
# hint and TwoPhaseCommitSinkFunction's state of its transactions, in one operator state file.
HINT=next-transactional-id-hint-v2
FKP='org.apache.flink.streaming.connectors.kafka.FlinkKafkaProducer$'
TWOPC='org.apache.flink.streaming.api.functions.sink.TwoPhaseCommitSinkFunction$StateSerializerSnapshot'
s_hint() { s_proxy "${FKP}NextTransactionalIdHintSerializer\$NextTransactionalIdHintSerializerSnapshot"; }
# StateSerializerSnapshot at outer version $1 (4 writes the null transaction flag, $2, 1 unless
# given), nesting the transaction's and the context's snapshots.
s_twopc() {
	b_i32 2; b_utf "$TWOPC"; b_i32 3; b_i32 911108; b_i32 "$1"
	[ "$1" -ge 4 ] && b_u8 "${2:-1}"
	b_i32 1333245; b_i32 1; b_i32 2
	b_utf "${FKP}TransactionStateSerializer\$TransactionStateSerializerSnapshot"; b_i32 3
	b_utf "${FKP}ContextStateSerializer\$ContextStateSerializerSnapshot"; b_i32 3
}
s_twopc4() { s_twopc 4; }
s_twopc2() { s_twopc 2; }
# NextTransactionalIdHint: NEXT-ID PARALLELISM.
p_hint() { b_i64 "$1"; b_i32 "$2"; }
# A TransactionHolder: ID (- for none) PRODUCER-ID EPOCH START-TIME.
p_txn() {
	if [ "$1" = - ]; then b_u8 0; else b_u8 1; b_utf "$1"; fi
	b_i64 "$2"; b_i16 "$3"; b_i64 "$4"
}
# The connector's migration snapshot's transaction state (kafka-migration-kafka-producer-flink-1.20-
# snapshot, FlinkKafkaProducerMigrationTest, read by hand): pending MockTask-...-2 (producer id 16,
# epoch 1, started 1727696038061), one pending commit MockTask-...-1 (producer id 3, epoch 1,
# started 1727696037790), the context of ids -1, -2, -3, -4, -0; its hint next id 5 at parallelism 1.
MT=MockTask-00000000000000010000000000000001
p_state() {
	b_u8 1; p_txn $MT-2 16 1 1727696038061
	b_i32 1; p_txn $MT-1 3 1 1727696037790
	b_u8 1; b_i32 5; local i; for i in 1 2 3 4 0; do b_utf $MT-$i; done
}
# The producer's savepoint DIR of one subtask: the hint (union), then the state (split), its
# snapshot written by SNAP, the hint's element by HINT-CMD, the state's by the commands after it
# (each one word, spaces as commas).
producer_sp() {
	local dir=$1 snap=$2 hint=$3 hoff soff c
	shift 3
	mkdir -p "$dir"
	B=; b_i32 6; b_u8 0; b_i16 2
	b_utf $HINT; b_i32 1; b_i32 1; b_utf OPERATOR_STATE_DISTRIBUTION_MODE; b_utf UNION
	b_i32 1; b_utf VALUE_SERIALIZER; s_hint
	b_utf state; b_i32 1; b_i32 1; b_utf OPERATOR_STATE_DISTRIBUTION_MODE; b_utf SPLIT_DISTRIBUTE
	b_i32 1; b_utf VALUE_SERIALIZER; $snap
	b_i16 0
	hoff=$(blen); ${hint//,/ }
	soff=$(blen)
	for c; do ${c//,/ }; done
	b_write "$dir/op0"
	OFFS_0="$hoff $soff"
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 1; b_i32 128
	b_u8 0; b_i32 1; b_i32 0
	b_i32 1; b_u8 4; b_i32 2
	b_utf $HINT; b_u8 1; b_i32 1; b_i64 "$hoff"
	b_utf state; b_u8 0; b_i32 1; b_i64 "$soff"
	b_u8 6; b_utf op0; b_i64 "$(wc -c <"$dir/op0")"
	b_i32 0; b_u8 0; b_u8 0; b_i32 0; b_i32 0
	b_write "$dir/_metadata"
}

# StreamingFileSink's BucketStateSerializer (versions 1 and 2): BUCKET-ID PATH CREATED, the
# in-progress file's hex (- for none), then "CHECKPOINT HEX..." per checkpoint of pending files
# (their serializer version 1).  The bucket id is SimpleVersionedStringSerializer's (version 1): its
# length little-endian (h_le32), as Flink's ByteBuffer writes it, then the UTF-8.
h_str() { printf '%s' "$1" | xxd -p | tr -d '\n'; }
h_le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
h_bucket() {
	local id=$1 path=$2 created=$3 cur=$4 h n=0 t= c f
	shift 4
	h=1e764b79$(h_framed 1 "$(h_le32 ${#id})$(h_str "$id")")$(h_utf "$path")$(h_i64 "$created")
	if [ "$cur" = - ]; then h=${h}00; else h=${h}01$(h_framed 1 "$cur"); fi
	for c; do
		set -- $c
		t=$t$(h_i64 "$1")$(h_i32 $(($# - 1)))
		shift
		for f; do t=$t$(h_i32 $((${#f} / 2)))$f; done
		n=$((n + 1))
	done
	printf '%s%s%s%s' "$h" "$(h_i32 1)" "$(h_i32 $n)" "$t"
}
# The FileSink's FileWriterBucketStateSerializer version 3: BUCKET-ID PATH CREATED and the
# in-progress file's hex (- for none), no pending files (versions 1 and 2 are h_bucket's layout).
h_filebucket3() {
	local h
	h=1e764b79$(h_framed 1 "$(h_le32 ${#1})$(h_str "$1")")$(h_utf "$2")$(h_i64 "$3")
	if [ "$4" = - ]; then printf '%s00' "$h"; else printf '%s01%s' "$h" "$(h_framed 1 "$4")"; fi
}
# The local file system's recoverable (LocalRecoverableSerializer 1, little-endian): OFFSET TARGET
# TEMP.  OutputStreamBasedPartFileWriter's recoverables around it, version 2: h_inprogress TARGET-URI
# HEX, h_pendingfile TARGET-URI SIZE HEX (HEX the file system's recoverable, framed at version 1).
h_le64() { h_le32 $(($1 & 0xffffffff)); h_le32 $(($1 >> 32)); }
h_local() { printf 574b741e; h_le64 "$1"; h_le32 ${#2}; h_le32 ${#3}; h_str "$2"; h_str "$3"; }
h_inprogress() { printf b3a4073d01; h_utf "$1"; h_framed 1 "$2"; }
h_pendingfile() { printf 2c853c8901; h_utf "$1"; h_i64 "$2"; h_framed 1 "$3"; }
# FileSinkCommittableSerializer version 2: BUCKET-ID, the pending file's hex, the in-progress file
# to clean up's hex (each - for none, else framed at version 1), the compacted file's URI (- none);
# version 1 (h_filecommittable1 PENDING IN-PROGRESS): no bucket id, no compacted file.
h_fileflagged() { if [ "$1" = - ]; then printf 00; else printf 01; h_framed 1 "$1"; fi; }
h_filecommittable() {
	printf 1e765c80; h_utf "$1"; h_fileflagged "$2"; h_fileflagged "$3"
	if [ "$4" = - ]; then printf 00; else printf 01; h_utf "$4"; fi
}
h_filecommittable1() { printf 1e765c80; h_fileflagged "$1"; h_fileflagged "$2"; }
