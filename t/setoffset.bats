#!/usr/bin/env bats
# ckpt-merge --set-offset TOPIC:PARTITION=OFFSET (ckpt-merge(1)): a Kafka source's reader splits
# start at new offsets, on the Kafka connector's own savepoint (enumerator version 1, ten partitions
# of "topic" at offset 10, two readers); every other byte of the savepoint kept.

bats_require_minimum_version 1.5.0
load helper
load connector-helper

OP=cb16aa5adb311e8ac72482def19accbe
M=$KAFKA/_metadata

# The --offsets rows of DIR as "partition:starting_offset" sorted by partition.
starts() { ckpt-inspect --offsets "$1" | jq -r '"\(.partition):\(.starting_offset)"' | sort -n | tr '\n' ' '; }
# -R's rows of DIR without their starting offsets, and the enumerator as -a prints it.
rest() {
	ckpt-inspect -R "$1" | jq -c 'del(.value.starting_offset)'
	ckpt-inspect -a "$1" | jq -c '.operators[] | .coordinator'
}

@test "setoffset: 3, earliest, +5 and -2 on four partitions; nothing else changes" {
	needs_fixtures
	run ckpt-merge --set-offset topic:2=3 --set-offset topic:5=earliest --set-offset topic:8=+5 \
		--set-offset topic:0=-2 -o out/ "$KAFKA"
	status_is 0
	output_is ''
	run starts out/
	output_is '0:8 1:10 2:3 3:10 4:10 5:earliest 6:10 7:10 8:15 9:10 '
	run starts "$KAFKA"
	output_is '0:10 1:10 2:10 3:10 4:10 5:10 6:10 7:10 8:10 9:10 '
	[ "$(rest out/)" = "$(rest "$KAFKA")" ]
	[ "$(cmp -l "$M" out/_metadata | wc -l)" -le 32 ] # four 8-byte offsets at most
	run ckpt-inspect -c out/
	status_is 0
	output_is '{"file":"out/","ok":true,"files":0,"bytes":0,"problems":[]}'
}

@test "setoffset: latest and committed, --source by id, the _metadata as the operand" {
	needs_fixtures
	run ckpt-merge --set-offset topic:9=latest --set-offset topic:1=committed --source $OP -o out/ "$M"
	status_is 0
	run starts out/
	output_is '0:10 1:committed 2:10 3:10 4:10 5:10 6:10 7:10 8:10 9:latest '
	run sh -c "ckpt-inspect -R out/ | jq -c 'select(.value.partition == 9) | .value'"
	output_is '{"connector":"kafka","version":0,"topic":"topic","partition":9,"starting_offset":"latest","stopping_offset":null}'
}

@test "setoffset: with --uid the source takes its new id and the offset together" {
	needs_fixtures
	run ckpt-merge --set-offset topic:2=7 --uid $OP=kafka-src -o out/ "$KAFKA"
	status_is 0
	run sh -c "ckpt-inspect --offsets out/ | jq -c 'select(.partition == 2) | [.operator, .starting_offset]'"
	output_is '["2cfff4cfdc12cf3ce3a313acc56edab3",7]'
}

# Two Kafka sources: the fixture's source operator again, after it, as operator abab... reading
# "tupic" (same length: every offset stays), into sp/.
two_sources() {
	local h i j rec
	tohex
	h=$(cat meta.hex)
	i=$(offset_of $OP)
	j=$(offset_of aced0005) # the checkpoint properties after the last operator (format version 4)
	rec=${h:$((i * 2)):$(((j - i) * 2))}
	rec=$(printf 'ab%.0s' $(seq 16))${rec:32}
	printf '%s%s%s%s%s' "${h:0:40}" "$(i32 3)" "${h:48:$(((j - 24) * 2))}" "${rec//0005746f706963/00057475706963}" \
		"${h:$((j * 2))}" >meta.hex
	unhex
}

@test "setoffset: of two Kafka sources the topic chooses, else --source; neither refuses" {
	needs_fixtures
	two_sources
	run ckpt-merge --set-offset tupic:3=1 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect --offsets out/ | jq -c 'select(.partition == 3) | [.topic, .starting_offset]'"
	output_is '["topic",10]
["tupic",1]'
	bad 2 "ckpt-merge: sp/_metadata: --set-offset: 2 Kafka sources (operators $OP, abababababababababababababababab) and the topics do not tell which: choose one with --source UID" \
		ckpt-merge --set-offset tupic:3=1 --set-offset topic:3=1 -o out2/ sp
	[ ! -e out2 ]
	run ckpt-merge --set-offset topic:3=2 --source $OP -o out2/ sp
	status_is 0
	run sh -c "ckpt-inspect --offsets out2/ | jq -c 'select(.partition == 3) | [.topic, .starting_offset]'"
	output_is '["topic",2]
["tupic",10]'
	bad 2 "ckpt-merge: sp/_metadata: --set-offset tupic:3=2: no reader holds tupic:3 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4)" \
		ckpt-merge --set-offset tupic:3=2 --source $OP -o out3/ sp
	[ ! -e out3 ]
}

@test "setoffset: a partition no reader holds is refused, naming those they hold; nothing written" {
	needs_fixtures
	bad 2 "ckpt-merge: $M: --set-offset topic:10=3: no reader holds topic:10 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4)" \
		ckpt-merge --set-offset topic:1=4 --set-offset topic:10=3 -o out/ "$KAFKA"
	[ ! -e out ]
	bad 2 "ckpt-merge: $M: --set-offset other:1=3: no reader holds other:1 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4)" \
		ckpt-merge --set-offset other:1=3 -o out/ "$KAFKA"
	[ ! -e out ]
}

@test "setoffset: relative offsets below 0 or from a sentinel are refused" {
	needs_fixtures
	bad 2 "ckpt-merge: $M: --set-offset topic:5=-11: the starting offset 10 moved by -11 is below 0" \
		ckpt-merge --set-offset topic:5=-11 -o out/ "$KAFKA"
	[ ! -e out ]
	ckpt-merge --set-offset topic:5=earliest -o e/ "$KAFKA"
	bad 2 "ckpt-merge: e/_metadata: --set-offset topic:5=+1: the starting offset is earliest, not a number to count from" \
		ckpt-merge --set-offset topic:5=+1 -o out/ e
	[ ! -e out ]
	run ckpt-merge --set-offset topic:5=-10 -o z/ "$KAFKA"
	status_is 0
	run starts z/
	output_is '0:10 1:10 2:10 3:10 4:10 5:0 6:10 7:10 8:10 9:10 '
}

@test "setoffset: a Kafka reader split ckpt cannot type is refused, naming it and why" {
	needs_fixtures
	tohex
	at=$(offset_of "$(kafka_split topic 8 10 -9223372036854775808)")
	# the split's version (SimpleVersionedSerialization), 8 bytes before it, becomes 1
	h=$(cat meta.hex)
	printf '%s01%s' "${h:0:$(((at - 5) * 2))}" "${h:$(((at - 4) * 2))}" >meta.hex
	unhex
	bad 2 "ckpt-merge: sp/_metadata: operator $OP subtask 0 SourceReaderState element 0: not a Kafka split ckpt can type: file: offset 833: truncated modification_time; number_sequence: offset 829: split id \"topic\" is not a number" \
		ckpt-merge --set-offset topic:2=1 -o out/ sp
	[ ! -e out ]
}

@test "setoffset: a reader element whose length lies is refused, naming the file, operator, subtask and offset" {
	needs_fixtures
	tohex
	at=$(offset_of "$(kafka_split topic 8 10 -9223372036854775808)")
	h=$(cat meta.hex)
	# BytePrimitiveArraySerializer's length, 12 bytes before the split: 35 becomes 38, then 2^31-1
	printf '%s%s%s' "${h:0:$(((at - 12) * 2))}" "$(i32 38)" "${h:$(((at - 8) * 2))}" >meta.hex
	unhex
	bad 2 "ckpt-merge: sp/_metadata: operator $OP subtask 0 SourceReaderState element 0: offset 802: split length 27, but 30 bytes follow it" \
		ckpt-merge --set-offset topic:2=1 -o out/ sp
	[ ! -e out ]
	printf '%s%s%s' "${h:0:$(((at - 12) * 2))}" "$(i32 2147483647)" "${h:$(((at - 8) * 2))}" >meta.hex
	unhex
	bad 2 "ckpt-merge: sp/_metadata: operator $OP subtask 0 SourceReaderState element 0: its length lies outside the state" \
		ckpt-merge --set-offset topic:2=1 -o out/ sp
	[ ! -e out ]
}

@test "setoffset: a source whose enumerator ckpt cannot type is refused, naming why" {
	needs_fixtures
	tohex
	at=$(offset_of "$(utf topic)$(i32 8)") # the enumerator's first partition, before the readers' splits
	h=$(cat meta.hex)
	printf '%s01%s' "${h:0:$(((at + 6) * 2))}" "${h:$(((at + 7) * 2))}" >meta.hex
	unhex
	bad 2 "ckpt-merge: sp/_metadata: --set-offset: no Kafka source: operator $OP's enumerator state is none ckpt can type: kafka: offset 111: topic \"topi\x01\" is no Kafka topic name; file: offset 16: magic number 0a000000, not deadbeef; number_sequence: offset 39: split id \"topic\" is not a number" \
		ckpt-merge --set-offset topic:2=1 -o out/ sp
	[ ! -e out ]
	bad 2 "ckpt-merge: sp/_metadata: --source $OP: not a Kafka source: operator $OP's enumerator state is none ckpt can type: kafka: offset 111: topic \"topi\x01\" is no Kafka topic name; file: offset 16: magic number 0a000000, not deadbeef; number_sequence: offset 39: split id \"topic\" is not a number" \
		ckpt-merge --set-offset topic:2=1 --source $OP -o out/ sp
	[ ! -e out ]
}

@test "setoffset: an enumerator recording splits (versions 3 and 0) gets the new starting offset too" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 3 "$(kafka_enum3 1 "topic 3 10 -9223372036854775808 0" "topic 4 10 -9223372036854775808 0")")"
	unhex
	run ckpt-merge --set-offset topic:3=latest -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '[.operators[1].coordinator.splits[] | [.partition, .starting_offset]]'"
	output_is '[[3,"latest"],[4,10]]'
	run starts out/
	output_is '0:10 1:10 2:10 3:latest 4:10 5:10 6:10 7:10 8:10 9:10 '
	rm -rf sp out
	tohex
	set_coordinator "$(coordinator 0 "$(kafka_enum0 1 "topic 3 10 -9223372036854775808" "topic 4 10 -9223372036854775808")")"
	unhex
	run ckpt-merge --set-offset topic:4=+2 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '[.operators[1].coordinator.assignments[].splits[] | [.partition, .starting_offset]]'"
	output_is '[[3,10],[4,12]]'
}

@test "setoffset: no Kafka source, --source naming none, standard input, usage" {
	needs_fixtures
	bad 2 "ckpt-merge: $M: --source nope: no such operator" ckpt-merge --set-offset topic:1=1 --source nope -o out/ "$KAFKA"
	p=$FIXTURES/flink-artifacts/new-stateful-broadcast-udf-migration-itcase-flink1.15-hashmap-savepoint
	bad 2 "ckpt-merge: $p/_metadata: --set-offset: no Kafka source" ckpt-merge --set-offset topic:1=1 -o out/ "$p"
	bad 2 "ckpt-merge: --set-offset needs the savepoint (its directory or its _metadata), not standard input (see ckpt-merge -h)" \
		ckpt-merge --set-offset topic:1=1 -o out/ - <"$M"
	bad 2 "ckpt-merge: --set-offset writes a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" \
		ckpt-merge --set-offset topic:1=1 -o out.tar "$KAFKA"
	bad 2 "ckpt-merge: --source needs --set-offset (see ckpt-merge -h)" ckpt-merge --source x -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --set-offset topic=1: give TOPIC:PARTITION=OFFSET (see ckpt-merge -h)" \
		ckpt-merge --set-offset topic=1 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --set-offset topic:x=1: the partition must be a number from 0 to 2147483647 (see ckpt-merge -h)" \
		ckpt-merge --set-offset topic:x=1 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --set-offset topic:1=soon: the offset must be a number, earliest, latest, committed, +N or -N (see ckpt-merge -h)" \
		ckpt-merge --set-offset topic:1=soon -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --set-offset goes with --uid, --drop, --relocate and --link only (see ckpt-merge -h)" \
		ckpt-merge --set-offset topic:1=1 --canonical -o out/ "$KAFKA"
	bad 2 "ckpt-merge: $M: --set-offset: one partition set twice" \
		ckpt-merge --set-offset topic:1=1 --set-offset topic:1=2 -o out/ "$KAFKA"
	[ ! -e out ] && [ ! -e out.tar ]
}
