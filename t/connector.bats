#!/usr/bin/env bats
# Source connectors' state (ckpt-flink(5), SOURCES): the splits of SourceReaderState and the
# enumerator's checkpoint in the coordinator state typed by -a and -R, and ckpt-inspect --offsets.
# The Kafka connector's own savepoint (enumerator version 1) is the fixture; the other versions and
# the other sources' splits are written here from their layouts (connector-helper.bash).
#
# Goldens: CKPT_REGOLD=1 CKPT_BIN=$PWD/bin bats t/connector.bats

bats_require_minimum_version 1.5.0
load helper
load connector-helper

G=$DATA/connector
OP=cb16aa5adb311e8ac72482def19accbe
INL="sp/_metadata:inline:file:/Users/arv/flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952/f797d07f-447e-4460-8216-d1c05a2a0a2d"
NOSTOP=-9223372036854775808
# subtask 0's last element: partition 5 at offset 10, its stream 350 bytes long
LAST=

last() { LAST=$(reader_element 0 "$(kafka_split topic 5 10 $NOSTOP)"); }

@test "connector: -a types the Kafka savepoint's splits and its enumerator (version 1)" {
	needs_fixtures
	run ckpt-inspect -a -p "$KAFKA"
	status_is 0
	match_golden "$G/kafka-enum1.all.expected"
}

@test "connector: -R gives each split typed as its value" {
	needs_fixtures
	run ckpt-inspect -R -u kafka-source-operator-uid "$KAFKA"
	status_is 0
	match_golden "$G/kafka-enum1.rows.expected"
}

@test "connector: --offsets: the 10 partitions resume at offset 10 with no stopping offset, from a file or stdin" {
	needs_fixtures
	run ckpt-inspect --offsets "$KAFKA"
	status_is 0
	match_golden "$G/kafka-enum1.offsets.expected"
	run sh -c "ckpt-inspect --offsets - <'$KAFKA/_metadata' | jq -sc '[length, ([.[].partition] | sort),
		([.[] | [.starting_offset, .stopping_offset, .held_by]] | unique)]'"
	status_is 0
	output_is '[10,[0,1,2,3,4,5,6,7,8,9],[[10,null,"reader"]]]'
}

@test "connector: the enumerator at version 3: each split whole with its status; one no reader holds is said" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 3 "$(kafka_enum3 1 "topic 3 10 $NOSTOP 0" "topic 10 -2 $NOSTOP 1")")"
	unhex
	run sh -c "ckpt-inspect -a sp | jq -c '.operators[1].coordinator'"
	output_is '{"connector":"kafka","version":3,"coordinator_version":1,"splits":[{"topic":"topic","partition":3,"starting_offset":10,"stopping_offset":null,"status":"assigned"},{"topic":"topic","partition":10,"starting_offset":"earliest","stopping_offset":null,"status":"unassigned"}],"initial_discovery_finished":true}'
	run sh -c "ckpt-inspect --offsets sp | tail -n 1"
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","subtask":null,"connector":"kafka","topic":"topic","partition":10,"starting_offset":"earliest","stopping_offset":null,"held_by":"enumerator","status":"unassigned"}'
}

@test "connector: the enumerator at version 2 (partitions and statuses) and 0 (splits by reader)" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 2 "$(kafka_enum2 0 'topic 0 0' 'topic 11 1')")"
	unhex
	run sh -c "ckpt-inspect -a sp | jq -c '.operators[1].coordinator'"
	output_is '{"connector":"kafka","version":2,"coordinator_version":1,"partitions":[{"topic":"topic","partition":0,"status":"assigned"},{"topic":"topic","partition":11,"status":"unassigned"}],"initial_discovery_finished":false}'
	run sh -c "ckpt-inspect --offsets sp | tail -n 1"
	output_is '{"uid":null,"operator":"'$OP'","subtask":null,"connector":"kafka","topic":"topic","partition":11,"starting_offset":"migrated","stopping_offset":null,"held_by":"enumerator","status":"unassigned"}'
	tohex
	set_coordinator "$(coordinator 0 "$(kafka_enum0 2 "topic 7 10 $NOSTOP" "other 0 5 -3")")"
	unhex
	run sh -c "ckpt-inspect -a sp | jq -c '.operators[1].coordinator'"
	output_is '{"connector":"kafka","version":0,"coordinator_version":1,"assignments":[{"subtask":2,"splits":[{"topic":"topic","partition":7,"starting_offset":10,"stopping_offset":null},{"topic":"other","partition":0,"starting_offset":5,"stopping_offset":"committed"}]}]}'
	run sh -c "ckpt-inspect --offsets sp | tail -n 1"
	output_is '{"uid":null,"operator":"'$OP'","subtask":null,"connector":"kafka","topic":"other","partition":0,"starting_offset":5,"stopping_offset":"committed","held_by":"enumerator","status":"assigned"}'
}

@test "connector: an enumerator no format parses stays bytes with the reason; an unknown version is named" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 9 "$(i32 0)")"
	unhex
	run sh -c "ckpt-inspect -a sp | jq -c '.operators[1].coordinator'"
	output_is '{"connector":null,"reason":"enumerator version 9 is none of a source ckpt reads (kafka 0-3, file 1, number_sequence 1, hybrid 0)","bytes":{"base64":"AAAAAQAAAAkAAAAEAAAAAA=="}}'
	tohex
	set_coordinator "$(coordinator 2 "$(kafka_enum2 7 'topic 0 0')")"
	unhex
	run sh -c "ckpt-inspect -a sp | jq -r '.operators[1].coordinator.reason'"
	output_is 'kafka: offset 31: initial discovery finished byte 7 is no boolean'
}

@test "connector: Kafka's sentinels are named: earliest, latest, committed; others are no offset" {
	needs_fixtures
	last
	tohex
	set_last_element 350 "$LAST" "$(reader_element 0 "$(kafka_split topic 5 -2 -1)")"
	unhex
	run sh -c "ckpt-inspect -R sp | sed -n 3p | jq -c .value"
	output_is '{"connector":"kafka","version":0,"topic":"topic","partition":5,"starting_offset":"earliest","stopping_offset":"latest"}'
	tohex
	set_last_element 350 "$LAST" "$(reader_element 0 "$(kafka_split topic 5 -3 42)")"
	unhex
	run sh -c "ckpt-inspect --offsets sp | sed -n 3p | jq -c '[.starting_offset, .stopping_offset]'"
	output_is '["committed",42]'
	tohex
	set_last_element 350 "$LAST" "$(reader_element 0 "$(kafka_split topic 5 10 -2)")"
	unhex
	run sh -c "ckpt-inspect -R sp | sed -n 3p | jq -c .value.reason"
	output_is '"kafka: offset 342: stopping offset -2 is neither an offset nor a sentinel; hybrid: offset 350: truncated split id"'
}

@test "connector: NumberSequenceSource, FileSource and HybridSource splits are typed" {
	needs_fixtures
	last
	tohex
	set_last_element 350 "$LAST" "$(reader_element 1 "$(utf 3)$(i64 250)$(i64 499)")"
	unhex
	run sh -c "ckpt-inspect -R sp | sed -n 3p | jq -c .value"
	output_is '{"connector":"number_sequence","version":1,"split_id":"3","from":250,"to":499}'
	# FileSourceSplit (connector-helper.bash's file_split)
	file=$(file_split /in/a.txt)
	tohex
	set_last_element 350 "$LAST" "$(reader_element 1 "$file")"
	unhex
	run sh -c "ckpt-inspect -R sp | sed -n 3p | jq -c .value"
	output_is '{"connector":"file","version":1,"split_id":"0000000001","uri":{"scheme":"file","path":"/in/a.txt"},"offset":0,"length":100,"modification_time":1700000000000,"file_size":100,"hostnames":[],"position":{"offset":40,"records_after_offset":2}}'
	run sh -c "ckpt-inspect --offsets sp | sed -n 3p"
	output_is '{"uid":null,"operator":"'$OP'","subtask":0,"connector":"file","path":"file:/in/a.txt","split_id":"0000000001","offset":0,"length":100,"position":{"offset":40,"records_after_offset":2},"held_by":"reader"}'
	inner=$(kafka_split topic 5 12 $NOSTOP)
	tohex
	set_last_element 350 "$LAST" "$(reader_element 0 "$(i32 1)$(utf topic-5)$(i32 0)$(hexlen "$inner")$inner")"
	unhex
	run sh -c "ckpt-inspect -R sp | sed -n 3p | jq -c .value"
	output_is '{"connector":"hybrid","version":0,"source_index":1,"split_id":"topic-5","split":{"connector":"kafka","version":0,"topic":"topic","partition":5,"starting_offset":12,"stopping_offset":null}}'
	run sh -c "ckpt-inspect --offsets sp | sed -n 3p | jq -c '[.connector, .source_index, .starting_offset]'"
	output_is '["kafka",1,12]'
}

@test "connector: a split whose length field lies, or cut short, is refused naming operator, subtask and offset" {
	needs_fixtures
	last
	msg="ckpt-inspect: $INL: operator $OP subtask 0: SourceReaderState element 2: offset 319: split length 28, but 27 bytes follow it"
	tohex
	set_last_element 350 "$LAST" "$(i32 35)$(i32 0)$(i32 28)$(kafka_split topic 5 10 $NOSTOP)"
	unhex
	bad 2 "$msg" ckpt-inspect -a sp
	# -R streams (issue 42): the rows before the damaged element, then the damage, exit 2
	bad_after 2 "$msg" "$(ckpt-inspect -R "$KAFKA" | head -n 2)" ckpt-inspect -R sp
	bad 2 "$msg" ckpt-inspect --offsets sp
	tohex
	set_last_element 350 "$LAST" "$(i32 27)$(i32 0)$(i32 27)$(utf topic)$(i32 5)$(i64 10)"
	unhex
	bad 2 "ckpt-inspect: $INL: operator $OP subtask 0: SourceReaderState element 2: offset 319: split length 27, but 19 bytes follow it" ckpt-inspect --offsets sp
}

@test "connector: a flipped byte or an unknown version: -a keeps the bytes with the reason, --offsets refuses" {
	needs_fixtures
	last
	tohex
	at=$(($(offset_of "$LAST") + 13)) # the low byte of the topic's length
	unhex
	flip sp/_metadata $at
	run sh -c "ckpt-inspect -a sp | jq -c '.operators[1].subtasks[0].operator_state.SourceReaderState.entries[2]'"
	output_is '{"connector":null,"reason":"kafka: offset 349: 1 byte after the split; hybrid: offset 350: truncated split id","bytes":{"base64":"AAAAAAAAABsABHRvcGljAAAABQAAAAAAAAAKgAAAAAAAAAA="}}'
	bad 2 "ckpt-inspect: sp/_metadata: operator $OP subtask 0: SourceReaderState element 2 of a kafka source: kafka: offset 349: 1 byte after the split; hybrid: offset 350: truncated split id" \
		ckpt-inspect --offsets sp
	tohex
	set_last_element 350 "$LAST" "$(reader_element 7 "$(kafka_split topic 5 10 $NOSTOP)")"
	unhex
	run sh -c "ckpt-inspect -R sp | sed -n 3p | jq -r .value.reason"
	output_is 'split version 7 is none of a source ckpt reads (kafka 0, file 1, number_sequence 1, hybrid 0)'
	bad 2 "ckpt-inspect: sp/_metadata: operator $OP subtask 0: SourceReaderState element 2 of a kafka source: split version 7 is none of a source ckpt reads (kafka 0, file 1, number_sequence 1, hybrid 0)" \
		ckpt-inspect --offsets sp
}

@test "connector: --offsets goes alone with -u and -r, and reads the state files" {
	needs_fixtures
	bad 2 "ckpt-inspect: --offsets excludes -a, -R, -c and -d (see ckpt-inspect -h)" ckpt-inspect --offsets -a "$KAFKA"
	bad 2 "ckpt-inspect: --state does not go with --offsets (see ckpt-inspect -h)" ckpt-inspect --offsets --state x "$KAFKA"
	bad 2 "ckpt-inspect: --offsets reads the state files: not with -m" ckpt-inspect --offsets -m "$KAFKA"
	run ckpt-inspect --offsets -u other-uid "$KAFKA"
	status_is 0
	output_is ''
}

@test "connector: -a --raw keeps the coordinator's bytes, the typed form beside them, and reads back" {
	needs_fixtures
	run sh -c "ckpt-inspect -a --raw '$KAFKA' | jq -c '.operators[1] | [.coordinator, .coordinator_typed.version, .coordinator_typed.partitions[0]]'"
	status_is 0
	output_is '[{"base64":"AAAAAQAAAAEAAAByAAAACgAFdG9waWMAAAAJAAV0b3BpYwAAAAAABXRvcGljAAAAAgAFdG9waWMAAAABAAV0b3BpYwAAAAQABXRvcGljAAAAAwAFdG9waWMAAAAGAAV0b3BpYwAAAAUABXRvcGljAAAACAAFdG9waWMAAAAH"},1,{"topic":"topic","partition":9}]'
	run sh -c "ckpt-inspect -a --raw '$KAFKA' | ckpt-merge | jq -c '.operators[1].coordinator'"
	status_is 0
	output_is '{"base64":"AAAAAQAAAAEAAAByAAAACgAFdG9waWMAAAAJAAV0b3BpYwAAAAAABXRvcGljAAAAAgAFdG9waWMAAAABAAV0b3BpYwAAAAQABXRvcGljAAAAAwAFdG9waWMAAAAGAAV0b3BpYwAAAAUABXRvcGljAAAACAAFdG9waWMAAAAH"}'
}
