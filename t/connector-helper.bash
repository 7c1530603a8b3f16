# connector-helper.bash: the byte strings of Flink's source formats, written from their layouts
# (ckpt-flink(5), SOURCES) as hex, and spliced into a copy of the Kafka connector's savepoint:
# only version 1 of the enumerator has a fixture, the other versions are built here.

KAFKA=$FIXTURES/flink-connectors/kafka-source-enum1-split0

i32() { printf '%08x' "$1" | tail -c 8; }
i64() { printf '%016x' "$1"; }
# Java's writeUTF of an ASCII string: u16 length, its bytes.
utf() { printf '%04x' "${#1}"; printf '%s' "$1" | xxd -p | tr -d '\n'; }
hexlen() { i32 $((${#1} / 2)); }

# KafkaPartitionSplitSerializer v0: TOPIC PARTITION START STOP.
kafka_split() { utf "$1"; i32 "$2"; i64 "$3"; i64 "$4"; }
# StringValue.writeString of ASCII (the null flag, the length + 1, the bytes), as Path writes them.
sv() { printf '01%02x' $((${#1} + 1)); printf '%s' "$1" | xxd -p | tr -d '\n'; }
# FileSourceSplit v1 of PATH (scheme "file"): id 0000000001, offset 0, length 100, modification
# time, file size, no hosts, the checkpointed position offset 40 after which 2 records are skipped.
file_split() {
	printf '%s' "$(utf 0000000001)01$(sv file)0000$(i32 -1)$(sv "$1")0000$(i64 0)$(i64 100)$(i64 1700000000000)$(i64 100)$(i32 0)01$(i64 40)$(i64 2)"
}
# SimpleVersionedSerialization of split hex SPLIT at VERSION, then as BytePrimitiveArraySerializer
# writes it into SourceReaderState (its i32 length first).
reader_element() {
	local s
	s=$(i32 "$1")$(hexlen "$2")$2
	printf '%s%s' "$(hexlen "$s")" "$s"
}
# SourceCoordinator's framing (serde version 1) of enumerator checkpoint hex ENUM at VERSION.
coordinator() { i32 1; i32 "$1"; hexlen "$2"; printf '%s' "$2"; }

# KafkaSourceEnumStateSerializer v1: "TOPIC PARTITION" ...
kafka_enum1() {
	local n=0 body=''
	for e in "$@"; do
		set -- $e
		body=$body$(utf "$1")$(i32 "$2")
		n=$((n + 1))
	done
	printf '%s%s' "$(i32 $n)" "$body"
}
# The fixture's enumerator: version 1, its partitions in the order it wrote them.
FIXTURE_ENUM="topic 9,topic 0,topic 2,topic 1,topic 4,topic 3,topic 6,topic 5,topic 8,topic 7"

# KafkaSourceEnumStateSerializer v2: "TOPIC PARTITION STATUS" ... then the discovery flag.
kafka_enum2() {
	local flag=$1 n=0 body=''
	shift
	for e in "$@"; do
		set -- $e
		body=$body$(utf "$1")$(i32 "$2")$(i32 "$3")
		n=$((n + 1))
	done
	printf '%s%s%02x' "$(i32 $n)" "$body" "$flag"
}
# v3: "TOPIC PARTITION START STOP STATUS" ..., after the count the split version 0.
kafka_enum3() {
	local flag=$1 n=0 body='' s
	shift
	for e in "$@"; do
		set -- $e
		s=$(kafka_split "$1" "$2" "$3" "$4")
		body=$body$(hexlen "$s")$s$(i32 "$5")
		n=$((n + 1))
	done
	printf '%s%s%s%02x' "$(i32 $n)" "$(i32 0)" "$body" "$flag"
}
# v0: SerdeUtils' assignments, one reader SUBTASK holding "TOPIC PARTITION START STOP" ...
kafka_enum0() {
	local sub=$1 n=0 body='' s
	shift
	for e in "$@"; do
		set -- $e
		s=$(kafka_split "$1" "$2" "$3" "$4")
		body=$body$(hexlen "$s")$s
		n=$((n + 1))
	done
	printf '%s%s%s%s%s' "$(i32 1)" "$(i32 0)" "$(i32 "$sub")" "$(i32 $n)" "$body"
}

# A copy of the fixture's _metadata, as hex, into meta.hex; written back by unhex.
tohex() { xxd -p "$KAFKA/_metadata" | tr -d '\n' >meta.hex; }
unhex() { mkdir -p sp && xxd -r -p meta.hex >sp/_metadata; }

# The coordinator state (its i32 length before it) replaced by hex NEW.
set_coordinator() {
	local h old
	h=$(cat meta.hex)
	IFS=, read -ra parts <<<"$FIXTURE_ENUM"
	old=$(coordinator 1 "$(kafka_enum1 "${parts[@]}")")
	[[ $h == *"0000007e$old"* ]] || return 1
	printf '%s' "${h/0000007e$old/$(hexlen "$1")$1}" >meta.hex
}

# The byte stream of SIZE bytes whose last element is hex OLD ends with hex NEW instead: its i32
# length, just before the stream, grows or shrinks with it.
set_last_element() {
	local size=$1 old=$2 new=$3 h pre start
	h=$(cat meta.hex)
	pre=${h%%"$old"*}
	[ "$pre" != "$h" ] || return 1
	start=$((${#pre} + ${#old} - 2 * size))
	[ "${h:$((start - 8)):8}" = "$(i32 "$size")" ] || return 1
	printf '%s%s%s%s%s' "${h:0:$((start - 8))}" "$(i32 $((size - ${#old} / 2 + ${#new} / 2)))" \
		"${h:$start:$((${#pre} - start))}" "$new" "${h:$((${#pre} + ${#old}))}" >meta.hex
}

# The byte offset in the _metadata of the first occurrence of hex X.
offset_of() {
	local h pre
	h=$(cat meta.hex)
	pre=${h%%"$1"*}
	echo $((${#pre} / 2))
}
