#!/usr/bin/env bats
# ckpt-inspect --offsets shown to a person: a table on a terminal or with --table, NDJSON through a
# pipe or with --json (CONTRACT.md: a summary meant for a person is a table that fits a screen).
# The Kafka connector's savepoint is the fixture; the other splits are spliced in as t/connector.bats
# does (connector-helper.bash).
#
# Goldens: CKPT_REGOLD=1 CKPT_BIN=$PWD/bin bats t/offsets.bats

bats_require_minimum_version 1.5.0
load helper
load connector-helper

G=$DATA/connector
NOSTOP=-9223372036854775808
LAST=

last() { LAST=$(reader_element 0 "$(kafka_split topic 5 10 $NOSTOP)"); }

@test "offsets: --table: a line a partition, from a file or stdin; --json and a pipe give the NDJSON" {
	needs_fixtures
	run ckpt-inspect --offsets --table "$KAFKA"
	status_is 0
	match_golden "$G/kafka-enum1.offsets.table.expected"
	run sh -c "ckpt-inspect --offsets --table - <'$KAFKA/_metadata'"
	status_is 0
	match_golden "$G/kafka-enum1.offsets.table.expected"
	run ckpt-inspect --offsets --json "$KAFKA"
	status_is 0
	match_golden "$G/kafka-enum1.offsets.expected"
}

@test "offsets: on a terminal, the table (tmux); --json there gives the NDJSON" {
	needs_fixtures
	on_terminal "$KAFKA" "ckpt-inspect --offsets ."
	[ "$(sed -n 1p <<<"$output")" = '$ ckpt-inspect --offsets .; echo END' ] || { echo "$output"; return 1; }
	diff <(sed -n '2,/^END$/p' <<<"$output" | sed '$d') <(ckpt-inspect --offsets --table "$KAFKA")
	on_terminal "$KAFKA" "ckpt-inspect --offsets --json . | head -n 1"
	# (the terminal wraps the line at 80 columns)
	[ "$(sed -n '2,/^END$/p' <<<"$output" | sed '$d' | tr -d '\n')" = "$(ckpt-inspect --offsets "$KAFKA" | head -n 1)" ]
}

@test "offsets: --table: the enumerator's own partitions, a file split's position, a number split" {
	needs_fixtures
	tohex
	set_coordinator "$(coordinator 3 "$(kafka_enum3 1 "topic 3 10 $NOSTOP 0" "topic 10 -2 $NOSTOP 1")")"
	unhex
	run sh -c "ckpt-inspect --offsets --table sp | sed -n '1p;\$p'"
	output_is 'UID           SUB SPLIT                    RESUMES AT       STOPS AT HELD BY
cb16aa5adb...   - topic:10                 earliest         -        enumerator, unassigned'
	last
	file=$(file_split /data/in/2026/12/06/part-0000000017.txt)
	tohex
	set_last_element 350 "$LAST" "$(reader_element 1 "$file")"
	unhex
	run sh -c "ckpt-inspect --offsets --table sp | sed -n 4p"
	output_is 'cb16aa5adb...   0 .../part-0000000017.txt  byte 40 +2 rec   -        reader'
	tohex
	set_last_element 350 "$LAST" "$(reader_element 1 "$(utf 3)$(i64 250)$(i64 499)")"
	unhex
	run sh -c "ckpt-inspect --offsets --table sp | sed -n 4p"
	output_is 'cb16aa5adb...   0 number_sequence 3        250              499      reader'
}

@test "offsets: --table prints nothing of a snapshot it cannot read whole; none held is said" {
	needs_fixtures
	last
	tohex
	set_last_element 350 "$LAST" "$(i32 35)$(i32 0)$(i32 28)$(kafka_split topic 5 10 $NOSTOP)"
	unhex
	bad 2 "ckpt-inspect: sp/_metadata:inline:file:/Users/arv/flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952/f797d07f-447e-4460-8216-d1c05a2a0a2d: operator cb16aa5adb311e8ac72482def19accbe subtask 0: SourceReaderState element 2: offset 319: split length 28, but 27 bytes follow it" \
		ckpt-inspect --offsets --table sp
	run ckpt-inspect --offsets --table -u other-uid "$KAFKA"
	status_is 0
	output_is 'no source operator holds splits'
}

@test "offsets: --json and --table exclude each other, -p and --skew" {
	bad 2 'ckpt-inspect: --json, --table and --skew exclude each other (see ckpt-inspect -h)' ckpt-inspect --offsets --json --table x
	bad 2 'ckpt-inspect: -p indents JSON: not with --table (see ckpt-inspect -h)' ckpt-inspect --offsets -p --table x
	bad 2 'ckpt-inspect: --skew goes with the summary, not with -a, -R, -c or -d (see ckpt-inspect -h)' ckpt-inspect --offsets --skew x
}
