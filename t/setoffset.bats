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
	bad 2 "ckpt-merge: sp/_metadata: --set-offset tupic:3=2: no reader holds tupic:3 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4); --add-partition adds it" \
		ckpt-merge --set-offset tupic:3=2 --source $OP -o out3/ sp
	[ ! -e out3 ]
}

@test "setoffset: a partition no reader holds is refused, naming those they hold; nothing written" {
	needs_fixtures
	bad 2 "ckpt-merge: $M: --set-offset topic:10=3: no reader holds topic:10 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4); --add-partition adds it" \
		ckpt-merge --set-offset topic:1=4 --set-offset topic:10=3 -o out/ "$KAFKA"
	[ ! -e out ]
	bad 2 "ckpt-merge: $M: --set-offset other:1=3: no reader holds other:1 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4); --add-partition adds it" \
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
	bad 2 "ckpt-merge: --source needs --set-offset, --add-partition or --remove-partition (see ckpt-merge -h)" ckpt-merge --source x -o out/ "$KAFKA"
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

# --add-partition and --remove-partition (ckpt-merge(1)).  The fixture's source runs at parallelism
# 3; KafkaSourceEnumerator.getSplitOwner puts "topic" partition 0 on reader 1 ((String.hashCode *
# 31 & 0x7fffffff) % 3), so partition P on reader (1 + P) % 3, and "x" partition 0 on reader 0.
# The --offsets rows of DIR as "subtask topic:partition starting_offset held_by", in their order.
rows() { ckpt-inspect --offsets "$1" | jq -r '"\(.subtask) \(.topic):\(.partition) \(.starting_offset) \(.held_by)"' | tr '\n' ,; }
FIXTURE_ROWS='0 topic:8 10 reader,0 topic:2 10 reader,0 topic:5 10 reader,1 topic:6 10 reader,1 topic:9 10 reader,1 topic:0 10 reader,1 topic:3 10 reader,2 topic:7 10 reader,2 topic:1 10 reader,2 topic:4 10 reader,'

@test "addpart: each partition added joins the reader Flink's enumerator assigns it to, last; the enumerator lists it" {
	needs_fixtures
	run ckpt-merge --add-partition topic:10=7 --add-partition x:0=earliest --add-partition topic:11=latest \
		--add-partition topic:12=committed -o out/ "$KAFKA"
	status_is 0
	output_is ''
	run rows out/
	output_is '0 topic:8 10 reader,0 topic:2 10 reader,0 topic:5 10 reader,0 x:0 earliest reader,0 topic:11 latest reader,1 topic:6 10 reader,1 topic:9 10 reader,1 topic:0 10 reader,1 topic:3 10 reader,1 topic:12 committed reader,2 topic:7 10 reader,2 topic:1 10 reader,2 topic:4 10 reader,2 topic:10 7 reader,'
	run rows "$KAFKA"
	output_is "$FIXTURE_ROWS"
	# the splits added are whole splits as the reader's others, no stopping offset as theirs
	run sh -c "ckpt-inspect -R out/ | jq -c 'select(.value.partition == 10) | .value'"
	output_is '{"connector":"kafka","version":0,"topic":"topic","partition":10,"starting_offset":7,"stopping_offset":null}'
	# the enumerator (version 1: partitions, all assigned) lists them after its own
	run sh -c "ckpt-inspect -a out/ | jq -r '.operators[1].coordinator.partitions | map(\"\(.topic):\(.partition)\") | join(\" \")'"
	output_is 'topic:9 topic:0 topic:2 topic:1 topic:4 topic:3 topic:6 topic:5 topic:8 topic:7 topic:10 x:0 topic:11 topic:12'
	# the rows of the partitions the fixture holds are what they were
	[ "$(ckpt-inspect -R out/ | jq -c 'select(.value.partition < 10 and .value.topic == "topic")')" = "$(ckpt-inspect -R "$KAFKA" | jq -c .)" ]
	run ckpt-inspect -c out/
	output_is '{"file":"out/","ok":true,"files":0,"bytes":0,"problems":[]}'
}

@test "removepart: the reader's split goes, the enumerator keeps the partition (so Flink's discovery does not read it again)" {
	needs_fixtures
	run ckpt-merge --remove-partition topic:9 --remove-partition topic:4 -o out/ "$KAFKA"
	status_is 0
	output_is ''
	run rows out/
	output_is '0 topic:8 10 reader,0 topic:2 10 reader,0 topic:5 10 reader,1 topic:6 10 reader,1 topic:0 10 reader,1 topic:3 10 reader,2 topic:7 10 reader,2 topic:1 10 reader,null topic:9 migrated enumerator,null topic:4 migrated enumerator,'
	[ "$(ckpt-inspect -a out/ | jq -c '.operators[1].coordinator')" = "$(ckpt-inspect -a "$KAFKA" | jq -c '.operators[1].coordinator')" ]
	run ckpt-inspect -c out/
	status_is 0
	# added again, it is read again, from the offset given
	run ckpt-merge --add-partition topic:9=12 -o again/ out
	status_is 0
	run rows again/
	output_is '0 topic:8 10 reader,0 topic:2 10 reader,0 topic:5 10 reader,1 topic:6 10 reader,1 topic:0 10 reader,1 topic:3 10 reader,1 topic:9 12 reader,2 topic:7 10 reader,2 topic:1 10 reader,null topic:4 migrated enumerator,'
}

@test "addpart: a reader emptied by --remove-partition takes a partition added; removal, addition and a set in one run" {
	needs_fixtures
	run ckpt-merge --remove-partition topic:6 --remove-partition topic:9 --remove-partition topic:0 \
		--remove-partition topic:3 -o empty/ "$KAFKA"
	status_is 0
	run ckpt-merge --add-partition topic:12=1 -o out/ empty
	status_is 0
	run rows out/
	output_is '0 topic:8 10 reader,0 topic:2 10 reader,0 topic:5 10 reader,1 topic:12 1 reader,2 topic:7 10 reader,2 topic:1 10 reader,2 topic:4 10 reader,null topic:9 migrated enumerator,null topic:0 migrated enumerator,null topic:3 migrated enumerator,null topic:6 migrated enumerator,'
	run ckpt-inspect -c out/
	status_is 0
	# in one handle: the first split cut, one set after it, one added; the others' elements move
	run ckpt-merge --remove-partition topic:6 --set-offset topic:0=+1 --add-partition topic:15=3 --set-offset topic:7=2 -o two/ "$KAFKA"
	status_is 0
	run rows two/
	output_is '0 topic:8 10 reader,0 topic:2 10 reader,0 topic:5 10 reader,1 topic:9 10 reader,1 topic:0 11 reader,1 topic:3 10 reader,1 topic:15 3 reader,2 topic:7 2 reader,2 topic:1 10 reader,2 topic:4 10 reader,null topic:6 migrated enumerator,'
	run ckpt-inspect -c two/
	output_is '{"file":"two/","ok":true,"files":0,"bytes":0,"problems":[]}'
}

@test "addpart: enumerators of versions 2, 3 and 0 list the partition added as assigned, and keep the one removed" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 2 "$(kafka_enum2 1 "topic 3 0" "topic 4 1")")"
	unhex
	run ckpt-merge --add-partition topic:10=5 --remove-partition topic:4 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator | del(.coordinator_version)'"
	output_is '{"connector":"kafka","version":2,"partitions":[{"topic":"topic","partition":3,"status":"assigned"},{"topic":"topic","partition":4,"status":"assigned"},{"topic":"topic","partition":10,"status":"assigned"}],"initial_discovery_finished":true}'
	rm -rf sp out
	tohex
	set_coordinator "$(coordinator 3 "$(kafka_enum3 0 "topic 3 10 -9223372036854775808 0" "topic 4 10 -9223372036854775808 0")")"
	unhex
	bad 2 "ckpt-merge: sp/_metadata: --add-partition topic:4=6: subtask 2's reader holds topic:4 already (--set-offset moves it)" \
		ckpt-merge --add-partition topic:4=6 -o out/ sp
	[ ! -e out ]
	run ckpt-merge --add-partition topic:10=latest --remove-partition topic:3 --set-offset topic:4=+1 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator | del(.coordinator_version)'"
	output_is '{"connector":"kafka","version":3,"splits":[{"topic":"topic","partition":3,"starting_offset":10,"stopping_offset":null,"status":"assigned"},{"topic":"topic","partition":4,"starting_offset":11,"stopping_offset":null,"status":"assigned"},{"topic":"topic","partition":10,"starting_offset":"latest","stopping_offset":null,"status":"assigned"}],"initial_discovery_finished":false}'
	rm -rf sp out
	tohex
	set_coordinator "$(coordinator 0 "$(kafka_enum0 1 "topic 3 10 -9223372036854775808")")"
	unhex
	run ckpt-merge --add-partition topic:10=5 --add-partition topic:12=1 --remove-partition topic:3 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator.assignments'"
	output_is '[{"subtask":1,"splits":[{"topic":"topic","partition":3,"starting_offset":10,"stopping_offset":null},{"topic":"topic","partition":12,"starting_offset":1,"stopping_offset":null}]},{"subtask":2,"splits":[{"topic":"topic","partition":10,"starting_offset":5,"stopping_offset":null}]}]'
	run ckpt-inspect -c out/
	status_is 0
}

@test "removepart: a partition the enumerator alone holds: unassigned (versions 2, 3) becomes assigned, so no reader gets it; assigned (1, 0) stays" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 2 "$(kafka_enum2 1 "topic 3 0" "topic 10 1" "topic 11 1")")"
	unhex
	run rows sp
	output_is "$FIXTURE_ROWS"'null topic:10 migrated enumerator,null topic:11 migrated enumerator,'
	run sh -c "ckpt-inspect --offsets sp | jq -c 'select(.held_by == \"enumerator\") | .status'"
	output_is '"unassigned"
"unassigned"'
	run ckpt-merge --remove-partition topic:10 -o out/ sp
	status_is 0
	output_is ''
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator.partitions'"
	output_is '[{"topic":"topic","partition":3,"status":"assigned"},{"topic":"topic","partition":10,"status":"assigned"},{"topic":"topic","partition":11,"status":"unassigned"}]'
	run sh -c "ckpt-inspect --offsets out/ | jq -c 'select(.held_by == \"enumerator\") | [.partition, .status]'"
	output_is '[10,"assigned"]
[11,"unassigned"]'
	[ "$(ckpt-inspect -R sp)" = "$(ckpt-inspect -R out/)" ]
	rm -rf sp out
	tohex
	set_coordinator "$(coordinator 3 "$(kafka_enum3 0 "topic 3 10 -9223372036854775808 0" "topic 10 5 -9223372036854775808 1")")"
	unhex
	run ckpt-merge --remove-partition topic:10 --set-offset topic:3=4 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator.splits'"
	output_is '[{"topic":"topic","partition":3,"starting_offset":4,"stopping_offset":null,"status":"assigned"},{"topic":"topic","partition":10,"starting_offset":5,"stopping_offset":null,"status":"assigned"}]'
	run ckpt-inspect -c out/
	status_is 0
	rm -rf sp out
	tohex
	set_coordinator "$(coordinator 0 "$(kafka_enum0 1 "topic 10 10 -9223372036854775808")")"
	unhex
	run ckpt-merge --remove-partition topic:10 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator.assignments'"
	output_is '[{"subtask":1,"splits":[{"topic":"topic","partition":10,"starting_offset":10,"stopping_offset":null}]}]'
	run rows out/
	output_is "$FIXTURE_ROWS"'null topic:10 10 enumerator,'
	rm -rf sp out
	tohex
	set_coordinator "$(coordinator 1 "$(kafka_enum1 "topic 3" "topic 10")")"
	unhex
	run ckpt-merge --remove-partition topic:10 -o out/ sp
	status_is 0
	run sh -c "ckpt-inspect -a out/ | jq -c '.operators[1].coordinator.partitions'"
	output_is '[{"topic":"topic","partition":3},{"topic":"topic","partition":10}]'
	bad 2 "ckpt-merge: sp/_metadata: --remove-partition topic:11: no reader holds topic:11 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4)" \
		ckpt-merge --remove-partition topic:11 -o out2/ sp
}

@test "addpart, removepart: refused without a word written: a partition held or not, named twice, stopping offsets of their own" {
	needs_fixtures
	bad 2 "ckpt-merge: $M: --add-partition topic:3=1: subtask 1's reader holds topic:3 already (--set-offset moves it)" \
		ckpt-merge --add-partition topic:10=1 --add-partition topic:3=1 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: $M: --remove-partition topic:10: no reader holds topic:10 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4)" \
		ckpt-merge --remove-partition topic:10 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: $M: --set-offset topic:10=1: no reader holds topic:10 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4); --add-partition adds it" \
		ckpt-merge --remove-partition topic:1 --set-offset topic:10=1 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: $M: --add-partition topic:10=1 and --remove-partition topic:10 name one partition" \
		ckpt-merge --add-partition topic:10=1 --remove-partition topic:10 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: $M: --remove-partition topic:2 and --set-offset topic:2=4 name one partition" \
		ckpt-merge --remove-partition topic:2 --set-offset topic:2=4 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: $M: --add-partition a+b:1=1: \"a+b\" is no Kafka topic name" \
		ckpt-merge --add-partition a+b:1=1 -o out/ "$KAFKA"
	[ ! -e out ]
	# one split stopping at offset 20: where would a new partition stop?
	tohex
	h=$(cat meta.hex)
	printf '%s' "${h/$(kafka_split topic 8 10 -9223372036854775808)/$(kafka_split topic 8 10 20)}" >meta.hex
	unhex
	bad 2 "ckpt-merge: sp/_metadata: --add-partition topic:10=1: the splits held stop at offsets of their own, none Flink would give a new partition" \
		ckpt-merge --add-partition topic:10=1 -o out/ sp
	[ ! -e out ]
}

@test "addpart, removepart: usage" {
	needs_fixtures
	bad 2 "ckpt-merge: --add-partition topic:10=+1: a partition added has no offset to count from: give a number, earliest, latest or committed (see ckpt-merge -h)" \
		ckpt-merge --add-partition topic:10=+1 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --add-partition topic:10: give TOPIC:PARTITION=OFFSET (see ckpt-merge -h)" \
		ckpt-merge --add-partition topic:10 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --remove-partition topic: give TOPIC:PARTITION (see ckpt-merge -h)" \
		ckpt-merge --remove-partition topic -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --remove-partition topic:1=2: the partition must be a number from 0 to 2147483647 (see ckpt-merge -h)" \
		ckpt-merge --remove-partition topic:1=2 -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --remove-partition writes a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" \
		ckpt-merge --remove-partition topic:1 -o out.tar "$KAFKA"
	bad 2 "ckpt-merge: --add-partition goes with --uid, --drop, --relocate and --link only (see ckpt-merge -h)" \
		ckpt-merge --add-partition topic:10=1 --canonical -o out/ "$KAFKA"
	bad 2 "ckpt-merge: --add-partition needs the savepoint (its directory or its _metadata), not standard input (see ckpt-merge -h)" \
		ckpt-merge --add-partition topic:10=1 -o out/ - <"$M"
	[ ! -e out ] && [ ! -e out.tar ]
}

# Reader state in a file of its own (Flink writes operator state to a file above
# state.storage.fs.memory-threshold, 20 KB by default: a source holding many partitions).  The
# fixture's three inline byte stream handles (tag 1) made file handles, into DIR: subtasks 0 and 2
# relative ones (tag 6) of DIR/op0 and DIR/op2, subtask 1 an absolute one (tag 2) of $PWD/abs/op1,
# a file outside the savepoint.  Their bytes are the inline ones: the rows are the fixture's.
file_held() {
	local dir=$1 h out='' len i=0 pre f
	tohex
	h=$(cat meta.hex)
	mkdir -p "$dir" abs
	while [[ $h == *0100b566696c653a2f* ]]; do # tag 1, the handle's name (181 bytes, "file:/...")
		pre=${h%%0100b566696c653a2f*}
		h=${h:${#pre}}
		len=$((16#${h:368:8}))
		if [ $i = 1 ]; then
			f=$PWD/abs/op$i
			out=$out${pre}02$(i64 $len)$(utf "$f")
		else
			f=$dir/op$i
			out=$out${pre}06$(utf op$i)$(i64 $len)
		fi
		printf '%s' "${h:376:$((len * 2))}" | xxd -r -p >"$f"
		h=${h:$((376 + len * 2))}
		i=$((i + 1))
	done
	[ $i = 3 ] && printf '%s%s' "$out" "$h" | xxd -r -p >"$dir/_metadata"
}
# What a savepoint says of its source: the offsets, the rows, the enumerator.
says() {
	ckpt-inspect --offsets "$1"
	ckpt-inspect -R "$1"
	ckpt-inspect -a "$1" | jq -c '.operators[1].coordinator'
}
R=reader-$OP

@test "fileheld: set, add and remove on reader state in files give what the same edits give inline; a changed subtask's file is new, the others carried" {
	needs_fixtures
	file_held fs
	[ "$(says fs)" = "$(says "$KAFKA")" ]
	sum=$(cat fs/* abs/* | cksum)
	n=0
	for edit in "--set-offset topic:2=3 --set-offset topic:5=earliest --set-offset topic:8=+5 --set-offset topic:0=-2" \
		"--add-partition topic:10=7 --add-partition x:0=earliest --add-partition topic:11=latest" \
		"--remove-partition topic:9 --remove-partition topic:4" \
		"--remove-partition topic:6 --set-offset topic:0=+1 --add-partition topic:15=3 --set-offset topic:7=2"; do
		n=$((n + 1))
		run ckpt-merge $edit -o out$n/ fs
		status_is 0
		output_is ''
		ckpt-merge $edit -o in$n/ "$KAFKA"
		[ "$(says out$n)" = "$(says in$n)" ]
		[ "$(says out$n)" != "$(says fs)" ]
	done
	[ "$(cat fs/* abs/* | cksum)" = "$sum" ] # the input as it was
	# each subtask changed has a new file, its handle a relative one naming it, its size the file's
	run ls out1 out2 out3 out4
	output_is "out1:
_metadata
op2
$R-0
$R-1

out2:
_metadata
op1
$R-0
$R-2

out3:
_metadata
op0
$R-1
$R-2

out4:
_metadata
op0
$R-1
$R-2"
	run sh -c "ckpt-inspect -m out2 | jq -c '.flink.files[]'"
	output_is '{"path":"op1","kind":"relative_file","size":389}
{"path":"'$R'-0","kind":"relative_file","size":424}
{"path":"'$R'-2","kind":"relative_file","size":389}'
	# offsets set: the file's other bytes kept (subtask 0: three 8-byte offsets)
	[ "$(size out1/$R-0)" = 350 ] && [ "$(cmp -l fs/op0 out1/$R-0 | wc -l)" -le 24 ]
	for n in 1 2 3 4; do
		run ckpt-inspect -c out$n
		status_is 0
		[ "$(jq -c '[.ok, .files, .problems]' <<<"$output")" = '[true,3,[]]' ]
	done
	# the output edited again: subtask 0's file replaced under its own name
	run ckpt-merge --set-offset topic:8=1 -o again/ out1
	status_is 0
	run ls again
	output_is "_metadata
op2
$R-0
$R-1"
	run starts again/
	output_is '0:8 1:10 2:3 3:10 4:10 5:earliest 6:10 7:10 8:1 9:10 '
}

@test "fileheld: a new file takes no name a file the savepoint keeps has" {
	needs_fixtures
	file_held fs
	# subtask 2's file is named as subtask 0's new one would be
	mv fs/op2 fs/$R-0
	h=$(xxd -p fs/_metadata | tr -d '\n')
	printf '%s' "${h/$(utf op2)/$(utf $R-0)}" | xxd -r -p >fs/_metadata
	run ckpt-merge --set-offset topic:8=1 -o out/ fs
	status_is 0
	run ls out
	output_is "_metadata
op1
$R-0
$R-0-2"
	run starts out/
	output_is '0:10 1:10 2:10 3:10 4:10 5:10 6:10 7:10 8:1 9:10 '
	cmp fs/$R-0 out/$R-0
	run ckpt-inspect -c out
	status_is 0
}

@test "fileheld: refusals write nothing; a state file cut, grown, flipped or gone exits 2 naming it" {
	needs_fixtures
	file_held fs
	bad 2 "ckpt-merge: fs/_metadata: --set-offset topic:10=3: no reader holds topic:10 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4); --add-partition adds it" \
		ckpt-merge --set-offset topic:1=4 --set-offset topic:10=3 -o out/ fs
	bad 2 "ckpt-merge: fs/_metadata: --add-partition topic:3=1: subtask 1's reader holds topic:3 already (--set-offset moves it)" \
		ckpt-merge --add-partition topic:10=1 --add-partition topic:3=1 -o out/ fs
	bad 2 "ckpt-merge: fs/_metadata: --remove-partition topic:10: no reader holds topic:10 (the readers hold topic:8, topic:2, topic:5, topic:6, topic:9, topic:0, topic:3, topic:7, topic:1, topic:4)" \
		ckpt-merge --remove-partition topic:10 -o out/ fs
	cp fs/op0 op0
	head -c -2 op0 >fs/op0
	bad 2 "ckpt-merge: fs/op0: short: 348 bytes, the _metadata records 350" ckpt-merge --set-offset topic:2=1 -o out/ fs
	{ cat op0; printf x; } >fs/op0
	bad 2 "ckpt-merge: fs/op0: long: 351 bytes, the _metadata records 350" ckpt-merge --remove-partition topic:8 -o out/ fs
	# element 0 of subtask 0 (at 233): its split's version (SimpleVersionedSerialization) 1
	cp op0 fs/op0
	flip fs/op0 240
	bad 2 "ckpt-merge: fs/op0: operator $OP subtask 0 SourceReaderState element 0: not a Kafka split ckpt can type: file: offset 272: truncated modification_time; number_sequence: offset 268: split id \"topic\" is not a number" \
		ckpt-merge --set-offset topic:2=1 -o out/ fs
	# the split's length, 27 then 26
	cp op0 fs/op0
	flip fs/op0 244
	bad 2 "ckpt-merge: fs/op0: operator $OP subtask 0 SourceReaderState element 0: offset 241: split length 26, but 27 bytes follow it" \
		ckpt-merge --add-partition topic:10=1 -o out/ fs
	# the element's length, 2^24 + 35
	cp op0 fs/op0
	flip fs/op0 233
	bad 2 "ckpt-merge: fs/op0: operator $OP subtask 0 SourceReaderState element 0: its length lies outside the state" \
		ckpt-merge --set-offset topic:2=1 -o out/ fs
	cp op0 fs/op0
	rm abs/op1
	bad 2 "ckpt-merge: $PWD/abs/op1: cannot open the state file of operator $OP subtask 1: No such file or directory" \
		ckpt-merge --set-offset topic:2=1 -o out/ fs
	run ls -A
	output_is 'abs
fs
meta.hex
op0'
}
