#!/usr/bin/env bats
# Connectors before the Source API, and the sinks (ckpt-flink(5), LEGACY CONNECTORS):
# FlinkKafkaConsumer's union state of partitions and offsets, the KafkaSink's writer state and its
# committer's committables, FlinkKafkaProducer's, StreamingFileSink's and the FileSink's, typed by -a
# and -R, the consumer's partitions in --offsets.  No real
# savepoint of the fixtures holds them: each state is written here from its layout
# (legacy-helper.bash); the consumer's element bytes equal those of the connector's own migration
# snapshots (FlinkKafkaConsumerBaseMigrationTest, Flink 1.8 to 1.20), and t/flink/kafka.bats reads
# the KafkaSink's state of real artifacts.
#
# Goldens: CKPT_REGOLD=1 CKPT_BIN=$PWD/bin bats t/legacy.bats

bats_require_minimum_version 1.5.0
load helper
load legacy-helper

G=$DATA/legacy
OP=0102030405060708090a0b0c0d0e0f10
NOSTOP=-9223372036854775808

@test "legacy: the consumer's element is the connector's own bytes (abc:13 at 16768, as its migration snapshots hold it)" {
	B=; ktp_element abc 13 16768
	[ "$(printf '%b' "$B" | base64)" = VwHWz+wCGgFhYuMAAAAAAABBgA== ]
}

@test "legacy: -a types FlinkKafkaConsumer's union state: topic, partition, offset, where it resumes, sentinels named" {
	consumer_sp
	run ckpt-inspect -a cs
	status_is 0
	match_golden "$G/consumer.all.expected"
	run sh -c "ckpt-inspect -a cs | jq -c '[.operators[0].subtasks[].operator_state[\"$CONSUMER\"].entries[] | [.topic, .partition, .offset, .starting_offset]]'"
	output_is '[["abc",13,16768,16769],["def",7,"EARLIEST_OFFSET","earliest"],["abc",0,-1,0],["ghi",2,"GROUP_OFFSET","committed"]]'
}

@test "legacy: -R gives each of the consumer's partitions as its value" {
	consumer_sp
	run ckpt-inspect -R cs
	status_is 0
	match_golden "$G/consumer.rows.expected"
}

@test "legacy: --offsets: FlinkKafkaConsumer's partitions, shaped as the KafkaSource's, its connector named" {
	consumer_sp
	run ckpt-inspect --offsets cs
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","subtask":0,"connector":"flink_kafka_consumer","topic":"abc","partition":13,"starting_offset":16769,"stopping_offset":null,"held_by":"reader"}
{"uid":null,"operator":"'$OP'","subtask":0,"connector":"flink_kafka_consumer","topic":"def","partition":7,"starting_offset":"earliest","stopping_offset":null,"held_by":"reader"}
{"uid":null,"operator":"'$OP'","subtask":1,"connector":"flink_kafka_consumer","topic":"abc","partition":0,"starting_offset":0,"stopping_offset":null,"held_by":"reader"}
{"uid":null,"operator":"'$OP'","subtask":1,"connector":"flink_kafka_consumer","topic":"ghi","partition":2,"starting_offset":"committed","stopping_offset":null,"held_by":"reader"}'
}

@test "legacy: every sentinel KafkaTopicPartitionStateSentinel defines is named; another negative offset is not an offset" {
	mkdir -p cs
	local long
	long=$(printf 'x%.0s' {1..200}) # Kryo writes the strings of 64 characters and more with their length
	op_stream cs/op0 $CONSUMER UNION s_consumer "ktp_element,t,0,$OFFSET_NOT_SET" "ktp_element,t,1,$LATEST" \
		"ktp_element,$long,3,41" "ktp_element,t,2,-2"
	OFFS_0=${OFFS[*]}
	legacy_meta cs 1 $CONSUMER 1
	run sh -c "ckpt-inspect -a cs | jq -c '[.operators[0].subtasks[0].operator_state[\"$CONSUMER\"].entries[] | [(.topic | length), .offset, .starting_offset // .reason]]'"
	output_is '[[1,"OFFSET_NOT_SET","not_set"],[1,"LATEST_OFFSET","latest"],[200,41,42],[0,null,"flink_kafka_consumer: offset 781: offset -2 is neither an offset nor a sentinel"]]'
	bad 2 "ckpt-inspect: cs/_metadata: operator $OP subtask 0: $CONSUMER element 3 of a flink_kafka_consumer source: flink_kafka_consumer: offset 781: offset -2 is neither an offset nor a sentinel" \
		ckpt-inspect --offsets cs
}

@test "legacy: a consumer's element cut or flipped: -a keeps its bytes with the reason, --offsets refuses naming operator, subtask and offset" {
	consumer_sp
	head -c -3 cs/op0 >x && mv x cs/op0
	legacy_meta cs 2 $CONSUMER 1
	run sh -c "ckpt-inspect -a cs | jq -c '.operators[0].subtasks[0].operator_state[\"$CONSUMER\"].entries[1]'"
	output_is '{"connector":null,"reason":"flink_kafka_consumer: offset 557: truncated offset","bytes":{"base64":"VwHE8vcCDgFkZeb///8q0A=="}}'
	bad 2 "ckpt-inspect: cs/_metadata: operator $OP subtask 0: $CONSUMER element 1 of a flink_kafka_consumer source: flink_kafka_consumer: offset 557: truncated offset" \
		ckpt-inspect --offsets cs
	rm -rf cs
	consumer_sp
	printf 'j' | dd of=cs/op1 bs=1 seek=$((${OFFS_1#* } + 8)) conv=notrunc status=none # ghi -> jhi
	bad 2 "ckpt-inspect: cs/_metadata: operator $OP subtask 1: $CONSUMER element 1 of a flink_kafka_consumer source: flink_kafka_consumer: offset 552: cachedHash 3171674 is not that of jhi:2" \
		ckpt-inspect --offsets cs
	run ckpt-inspect -R cs
	status_is 0
	[ "$(echo "$output" | tail -n 1 | jq -c .value.reason)" = '"flink_kafka_consumer: offset 552: cachedHash 3171674 is not that of jhi:2"' ]
}

@test "legacy: the KafkaSink's writer state, versions 2 and 1: its transactions typed" {
	sink_sp w writer_raw_states "$(h_framed 2 "$(h_writer2 pre 0 2 1 "pre-0-5 5" "pre-0-6 6")")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state'"
	output_is '{"writer_raw_states":{"mode":"list","entries":[{"connector":"kafka_sink","version":2,"transactional_id_prefix":"pre","owned_subtask":0,"owned_subtasks":2,"transaction_ownership":"EXPLICIT_BY_WRITER_STATE","precommitted":[{"transactional_id":"pre-0-5","checkpoint_id":5},{"transactional_id":"pre-0-6","checkpoint_id":6}]}]}}'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 1 "$(h_utf pre)")"
	run ckpt-inspect -R w
	output_is '{"uid":null,"operator":"'$OP'","state":"writer_raw_states","kind":"list","subtask":0,"index":0,"value":{"connector":"kafka_sink","version":1,"transactional_id_prefix":"pre"}}'
}

@test "legacy: the committer's committables (collector version 2, subtask managers of Flink 1.20 and 2.x), Kafka's typed" {
	sink_sp c streaming_committer_raw_states "$(h_framed 2 "$(h_collector 7 2 0 "$(h_committable 3 1000 pre-0-7)")")"
	run sh -c "ckpt-inspect -a c | jq -c '.operators[0].subtasks[0].operator_state'"
	output_is '{"streaming_committer_raw_states":{"mode":"list","entries":[{"state":"committables","version":2,"checkpoints":[{"checkpoint_id":7,"number_of_subtasks":1,"subtasks":[{"subtask":0,"requests":[{"connector":"kafka_sink","version":1,"epoch":3,"producer_id":1000,"transactional_id":"pre-0-7","retries":0,"request_state":"RECEIVED"}],"committables":1,"failed":0}]}]}]}}'
	rm -rf c
	sink_sp c streaming_committer_raw_states "$(h_framed 2 "$(h_collector 7 1 0 "$(h_committable 3 1000 pre-0-7)" 0001)")"
	run sh -c "ckpt-inspect -a c | jq -c '.operators[0].subtasks[0].operator_state.streaming_committer_raw_states.entries[0].checkpoints[0].subtasks[0]'"
	output_is '{"subtask":0,"requests":[{"connector":"kafka_sink","version":1,"epoch":3,"producer_id":1000,"transactional_id":"pre-0-7","retries":0,"request_state":"RECEIVED"},{"connector":null,"version":1,"bytes":{"base64":"AAE="},"retries":0,"request_state":"RECEIVED"}],"committables":2,"failed":0,"drained":0}'
}

@test "legacy: a sink's state no format parses stays bytes with the reason; its length lying is refused naming operator, subtask and offset" {
	sink_sp w writer_raw_states "$(h_framed 3 "$(h_utf pre)")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state.writer_raw_states.entries[0]'"
	output_is '{"connector":null,"reason":"kafka_sink: offset 246: version 3 is none of KafkaWriterStateSerializer'"'"'s (0 to 2)","bytes":{"base64":"AAAAAwAAAAUAA3ByZQ=="}}'
	rm -rf w
	sink_sp c streaming_committer_raw_states "$(h_framed 2 "b91f252d$(h_i32 1)$(h_i32 0)")"
	run sh -c "ckpt-inspect -a c | jq -c '.operators[0].subtasks[0].operator_state.streaming_committer_raw_states.entries[0].reason'"
	output_is '"committable_collector: offset 259: magic number B91F252D, not CommittableCollectorSerializer'"'"'s B91F252C"'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 2 "$(h_writer2 pre 0 2 1 "pre-0-5 5")")"
	printf '\100' | dd of=w/op0 bs=1 seek=$((OFFS_0 + 11)) conv=notrunc status=none
	for o in -a -R; do
		bad 2 "ckpt-inspect: w/op0: operator $OP subtask 0: writer_raw_states element 0: offset 242: element length 64, but 38 bytes follow it" \
			ckpt-inspect $o w
	done
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 2 "$(h_writer2 pre 0 2 1)")"
	head -c -2 w/op0 >x && mv x w/op0
	OFFS_0=${OFFS[*]} legacy_meta w 1 writer_raw_states 0
	bad 2 "ckpt-inspect: w/op0: operator $OP subtask 0: writer_raw_states element 0: offset 238: byte array of 29 bytes, more than the 27 left" \
		ckpt-inspect -a w
}

@test "legacy: --offsets reads a source's reader state from its state file as from the _metadata" {
	needs_fixtures
	local at
	at=$(xxd -p "$FIXTURES/flink-connectors/kafka-source-enum1-split0/_metadata" | tr -d '\n' | grep -bo 0000015e00000005 | head -n 1 | cut -d: -f1)
	mkdir -p rs
	dd if="$FIXTURES/flink-connectors/kafka-source-enum1-split0/_metadata" of=rs/op0 bs=1 skip=$((at / 2 + 4)) count=350 status=none
	OFFS_0="233 272 311" legacy_meta rs 1 SourceReaderState 0
	run ckpt-inspect --offsets rs
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","subtask":0,"connector":"kafka","topic":"topic","partition":8,"starting_offset":10,"stopping_offset":null,"held_by":"reader"}
{"uid":null,"operator":"'$OP'","subtask":0,"connector":"kafka","topic":"topic","partition":2,"starting_offset":10,"stopping_offset":null,"held_by":"reader"}
{"uid":null,"operator":"'$OP'","subtask":0,"connector":"kafka","topic":"topic","partition":5,"starting_offset":10,"stopping_offset":null,"held_by":"reader"}'
}

# FlinkKafkaProducer: the hint and TwoPhaseCommitSinkFunction's state written from their layouts
# (legacy-helper.bash). The stream producer_sp writes of the connector's migration snapshot values
# (p_state, hint 5 at parallelism 1) is the operator state stream of the connector's
# kafka-migration-kafka-producer-flink-1.20-snapshot byte for byte (its bytes 125 to 1226, checked by
# hand; the checksum below is of those bytes).
@test "legacy: the producer's state stream is the connector's own (its 1.20 migration snapshot's, 1102 bytes)" {
	producer_sp p s_twopc4 p_hint,5,1 p_state
	[ "$(sha256sum <p/op0 | cut -d' ' -f1)" = 8112f39ff81767684e713f855c7fee3508711a31587949b71c2156d59917d260 ]
}

@test "legacy: -a types FlinkKafkaProducer's hint and transactions: pending, pending commit, the context's ids" {
	producer_sp p s_twopc4 p_hint,5,1 p_state
	run ckpt-inspect -a p
	status_is 0
	match_golden "$G/producer.all.expected"
	run ckpt-inspect -R p
	status_is 0
	match_golden "$G/producer.rows.expected"
}

@test "legacy: the producer's older snapshots (outer version 2: no null flag) and its nulls: no pending transaction, no id, no context" {
	producer_sp p s_twopc4 p_hint,0,4 b_u8,0 b_i32,2 p_txn,-,-1,-1,0 p_txn,t-1,7,2,3 b_u8,0
	run sh -c "ckpt-inspect -a p | jq -c '.operators[0].subtasks[0].operator_state'"
	output_is '{"next-transactional-id-hint-v2":{"mode":"union","entries":[{"connector":"flink_kafka_producer","next_transactional_id":0,"last_parallelism":4}]},"state":{"mode":"list","entries":[{"connector":"flink_kafka_producer","pending_transaction":null,"pending_commit_transactions":[{"transactional_id":null,"producer_id":-1,"epoch":-1,"start_time":0},{"transactional_id":"t-1","producer_id":7,"epoch":2,"start_time":3}],"transactional_ids":null}]}}'
	rm -rf p
	producer_sp p s_twopc2 p_hint,5,1 p_txn,a,1,1,1 b_i32,0 b_u8,0
	run ckpt-inspect -R p
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","state":"next-transactional-id-hint-v2","kind":"union","subtask":0,"index":0,"value":{"connector":"flink_kafka_producer","next_transactional_id":5,"last_parallelism":1}}
{"uid":null,"operator":"'$OP'","state":"state","kind":"list","subtask":0,"index":0,"value":{"connector":"flink_kafka_producer","pending_transaction":{"transactional_id":"a","producer_id":1,"epoch":1,"start_time":1},"pending_commit_transactions":[],"transactional_ids":null}}'
	rm -rf p
	producer_sp p s_twopc2 p_hint,5,1 b_i32,0 b_u8,0 # version 2 has no flag: the transaction is there
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: state element 0: flink_kafka_producer: offset 743: truncated producer id" \
		ckpt-inspect -a p
}

@test "legacy: the producer's element cut, flipped, with a length or count that lies, or insane: exit 2 naming operator, subtask, element and offset" {
	local st="state element 0: flink_kafka_producer: offset"
	producer_sp p s_twopc4 p_hint,5,1 b_u8,1 b_u8,1 b_utf,abc b_i32,0
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: $st 750: truncated producer id" ckpt-inspect -a p
	run --separate-stderr ckpt-inspect -R p # the hint's row, then the damage
	status_is 2
	[ "$(echo "$output" | jq -c .value)" = '{"connector":"flink_kafka_producer","next_transactional_id":5,"last_parallelism":1}' ]
	[ "$stderr" = "ckpt-inspect: p/op0: operator $OP subtask 0: $st 750: truncated producer id" ]
	rm -rf p
	producer_sp p s_twopc4 p_hint,5,1 p_state
	printf '\002' | dd of=p/op0 bs=1 seek=739 conv=notrunc status=none
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: $st 739: pending transaction flag 2" ckpt-inspect -a p
	run --separate-stderr ckpt-inspect -c p
	status_is 1
	[ "$(echo "$output" | jq -c .problems)" = '[{"where":"p/op0","problem":"operator '$OP' subtask 0: '"$st"' 739: pending transaction flag 2"}]' ]
	producer_sp p s_twopc4 p_hint,5,1 p_state
	printf '\377' | dd of=p/op0 bs=1 seek=741 conv=notrunc status=none
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: $st 741: transactional id length 65323, but 359 bytes follow it" \
		ckpt-inspect -a p
	producer_sp p s_twopc4 p_hint,5,1 b_u8,0 b_i32,0 b_u8,1 b_i32,3 b_utf,a
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: $st 745: transactional id count 3, but 3 bytes follow it" \
		ckpt-inspect -a p
	producer_sp p s_twopc4 p_hint,5,1 b_u8,0 b_i32,0 b_u8,0 b_u8,0
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: $st 745: 1 bytes after the state" ckpt-inspect -a p
	producer_sp p s_twopc4 p_hint,5,0 p_state
	bad 2 "ckpt-inspect: p/op0: operator $OP subtask 0: next-transactional-id-hint-v2 element 0: flink_kafka_producer: offset 727: next transactional id 5 at parallelism 0: not sane" \
		ckpt-inspect -R p
}

@test "legacy: StreamingFileSink's bucket-states (BucketStateSerializer 2 and 1): bucket, path, in-progress and pending files per checkpoint" {
	sink_sp b bucket-states "$(h_framed 2 "$(h_bucket 2026-12-07--00 /out/2026-12-07--00 1765065600000 0a0b0c "7 0102 0304" "8 05")")"
	run sh -c "ckpt-inspect -a b | jq -c '.operators[0].subtasks[0].operator_state'"
	output_is '{"bucket-states":{"mode":"list","entries":[{"connector":"streaming_file_sink","version":2,"bucket_id":"2026-12-07--00","bucket_path":"/out/2026-12-07--00","in_progress_creation_time":1765065600000,"in_progress":{"version":1,"bytes":"\n\u000b\f"},"pending":[{"checkpoint_id":7,"files":[{"version":1,"bytes":"\u0001\u0002"},{"version":1,"bytes":"\u0003\u0004"}]},{"checkpoint_id":8,"files":[{"version":1,"bytes":"\u0005"}]}]}]}}'
	rm -rf b
	sink_sp b bucket-states "$(h_framed 1 "$(h_bucket x /o 0 -)")"
	run ckpt-inspect -R b
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","state":"bucket-states","kind":"list","subtask":0,"index":0,"value":{"connector":"streaming_file_sink","version":1,"bucket_id":"x","bucket_path":"/o","in_progress_creation_time":0,"in_progress":null,"pending":[]}}'
}

@test "legacy: bucket-states no version parses stays bytes with the reason (version, cut); its framing's length lying is refused" {
	sink_sp b bucket-states "$(h_framed 3 "$(h_bucket x /o 0 -)")"
	run sh -c "ckpt-inspect -a b | jq -c '.operators[0].subtasks[0].operator_state[\"bucket-states\"].entries[0].reason'"
	output_is '"streaming_file_sink: offset 242: version 3 is none of BucketStateSerializer'"'"'s (1, 2)"'
	rm -rf b
	sink_sp b bucket-states "$(h_framed 2 "1e764b79$(h_framed 1 00000009)")"
	run sh -c "ckpt-inspect -a b | jq -c '.operators[0].subtasks[0].operator_state[\"bucket-states\"].entries[0].reason'"
	output_is '"streaming_file_sink: offset 258: truncated bucket path"'
	rm -rf b
	sink_sp b bucket-states "$(h_framed 2 "$(h_bucket x /o 0 - "7 0102")")"
	printf '\100' | dd of=b/op0 bs=1 seek=$((OFFS_0 + 11)) conv=notrunc status=none
	bad 2 "ckpt-inspect: b/op0: operator $OP subtask 0: bucket-states element 0: offset 238: element length 64, but 56 bytes follow it" \
		ckpt-inspect -a b
}

# The FileSink (Sink V2): its writer's FileWriterBucketStateSerializer in "writer_raw_states" (the
# KafkaSink's state name too; told apart by the magic number and an exact parse) and its
# FileSinkCommittableSerializer's committables in the committer's collector, written from Flink
# 2.3.0's source (flink-connector-files); t/flink/filesink.bats reads a real job's.
@test "legacy: the FileSink's writer state (FileWriterBucketStateSerializer 3; 2 and 1 with pending files): bucket, path, in-progress file" {
	sink_sp w writer_raw_states "$(h_framed 3 "$(h_filebucket3 2026-12-07--03 /out/2026-12-07--03 1765076400000 0102)")"
	run ckpt-inspect -R w
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","state":"writer_raw_states","kind":"list","subtask":0,"index":0,"value":{"connector":"file_sink","version":3,"bucket_id":"2026-12-07--03","bucket_path":"/out/2026-12-07--03","in_progress_creation_time":1765076400000,"in_progress":{"version":1,"bytes":"\u0001\u0002"}}}'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 2 "$(h_bucket x /o 5 - "4 01")")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state'"
	output_is '{"writer_raw_states":{"mode":"list","entries":[{"connector":"file_sink","version":2,"bucket_id":"x","bucket_path":"/o","in_progress_creation_time":5,"in_progress":null,"pending":[{"checkpoint_id":4,"files":[{"version":1,"bytes":"\u0001"}]}]}]}}'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 1 "$(h_bucket x /o 5 -)")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state.writer_raw_states.entries[0]'"
	output_is '{"connector":"file_sink","version":1,"bucket_id":"x","bucket_path":"/o","in_progress_creation_time":5,"in_progress":null,"pending":[]}'
}

@test "legacy: the FileSink's committables (FileSinkCommittableSerializer 2 and 1) in the committer's collector" {
	sink_sp c streaming_committer_raw_states "$(h_framed 2 "$(CVER=2 h_collector 7 2 0 "$(h_filecommittable b1 0102 - -)" "$(h_filecommittable b2 - 03 file:/out/b2/c-0)")")"
	run sh -c "ckpt-inspect -a c | jq -c '.operators[0].subtasks[0].operator_state.streaming_committer_raw_states.entries[0].checkpoints[0].subtasks[0].requests'"
	output_is '[{"connector":"file_sink","version":2,"pending_file":{"version":1,"bytes":"\u0001\u0002"},"in_progress_to_clean_up":null,"bucket_id":"b1","compacted_file_to_clean_up":null,"retries":0,"request_state":"RECEIVED"},{"connector":"file_sink","version":2,"pending_file":null,"in_progress_to_clean_up":{"version":1,"bytes":"\u0003"},"bucket_id":"b2","compacted_file_to_clean_up":"file:/out/b2/c-0","retries":0,"request_state":"RECEIVED"}]'
	rm -rf c
	sink_sp c streaming_committer_raw_states "$(h_framed 2 "$(h_collector 7 2 0 "$(h_filecommittable1 0102 -)" "$(h_filecommittable b - - -)")")"
	run ckpt-inspect -R c
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","state":"streaming_committer_raw_states","kind":"list","subtask":0,"index":0,"value":{"state":"committables","version":2,"checkpoints":[{"checkpoint_id":7,"number_of_subtasks":1,"subtasks":[{"subtask":0,"requests":[{"connector":"file_sink","version":1,"pending_file":{"version":1,"bytes":"\u0001\u0002"},"in_progress_to_clean_up":null,"retries":0,"request_state":"RECEIVED"},{"connector":null,"version":1,"bytes":{"base64":"HnZcgAABYgAAAA=="},"retries":0,"request_state":"RECEIVED"}],"committables":2,"failed":0}]}]}}'
}

# The part files' recoverables as the FileSink writes them on the local file system (t/flink/filesink.bats
# reads Flink's own): OutputStreamBasedPartFileWriter's in-progress (0xB3A4073D) and pending
# (0x2C853C89) serializers, version 2, around LocalRecoverableSerializer 1 (little-endian).
@test "legacy: the FileSink's part files on the local file system: the in-progress file (target, offset, temp file) and the pending one (its size too) typed; another file system's recoverable, or one that does not parse, stays bytes" {
	local loc body
	loc=$(h_local 145 /o/b/part-u-0 /o/b/.part-u-0.inprogress.t)
	body=$(h_filebucket3 b file:/o/b 5 -)
	sink_sp w writer_raw_states "$(h_framed 3 "${body%00}01$(h_framed 2 "$(h_inprogress file:/o/b/part-u-0 "$loc")")")"
	run ckpt-inspect -R w
	status_is 0
	output_is '{"uid":null,"operator":"'$OP'","state":"writer_raw_states","kind":"list","subtask":0,"index":0,"value":{"connector":"file_sink","version":3,"bucket_id":"b","bucket_path":"file:/o/b","in_progress_creation_time":5,"in_progress":{"version":2,"target_path":"file:/o/b/part-u-0","recoverable":{"version":1,"file_system":"local","offset":145,"target_file":"/o/b/part-u-0","temp_file":"/o/b/.part-u-0.inprogress.t"}}}}'
	rm -rf w
	sink_sp c streaming_committer_raw_states "$(h_framed 2 "$(CVER=2 h_collector 7 2 0 \
		"1e765c80$(h_utf b)01$(h_framed 2 "$(h_pendingfile file:/o/b/part-u-0 145 "$loc")")0000" \
		"1e765c80$(h_utf b)01$(h_framed 1 "2c853c89$(h_framed 3 0102)")01$(h_framed 2 "$(h_inprogress file:/o/b/p "$loc")ff")00" \
		"1e765c80$(h_utf b)01$(h_framed 2 "$(h_pendingfile file:/o/b/q 7 "${loc}00")")0000")")"
	run sh -c "ckpt-inspect -a c | jq -c '.operators[0].subtasks[0].operator_state.streaming_committer_raw_states.entries[0].checkpoints[0].subtasks[0].requests | map([.pending_file, .in_progress_to_clean_up])'"
	output_is '[[{"version":2,"target_path":"file:/o/b/part-u-0","recoverable":{"version":1,"file_system":"local","offset":145,"target_file":"/o/b/part-u-0","temp_file":"/o/b/.part-u-0.inprogress.t"},"size":145},null],[{"version":1,"target_path":null,"recoverable":{"version":3,"bytes":"\u0001\u0002"}},{"version":2,"bytes":{"base64":"s6QHPQEAC2ZpbGU6L28vYi9wAAAAAQAAADxXS3QekQAAAAAAAAANAAAAGwAAAC9vL2IvcGFydC11LTAvby9iLy5wYXJ0LXUtMC5pbnByb2dyZXNzLnT/"}}],[{"version":2,"target_path":"file:/o/b/q","recoverable":{"version":1,"bytes":{"base64":"V0t0HpEAAAAAAAAADQAAABsAAAAvby9iL3BhcnQtdS0wL28vYi8ucGFydC11LTAuaW5wcm9ncmVzcy50AA=="}},"size":7},null]]'
}

@test "legacy: the FileSink's writer state no version parses stays bytes with the reason (version, cut, bytes left over); its framing's length lying is refused" {
	sink_sp w writer_raw_states "$(h_framed 4 "$(h_filebucket3 x /o 0 -)")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state.writer_raw_states.entries[0].reason'"
	output_is '"file_sink: offset 246: version 4 is none of FileWriterBucketStateSerializer'"'"'s (1 to 3)"'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 3 "$(h_bucket x /o 0 -)")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state.writer_raw_states.entries[0].reason'"
	output_is '"file_sink: offset 276: 8 bytes after the state"'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 2 "$(h_filebucket3 x /o 0 -)")"
	run sh -c "ckpt-inspect -a w | jq -c '.operators[0].subtasks[0].operator_state.writer_raw_states.entries[0].reason'"
	output_is '"file_sink: offset 276: truncated pending file version"'
	rm -rf w
	sink_sp w writer_raw_states "$(h_framed 3 "$(h_filebucket3 x /o 0 0a)")"
	printf '\100' | dd of=w/op0 bs=1 seek=$((OFFS_0 + 11)) conv=notrunc status=none
	bad 2 "ckpt-inspect: w/op0: operator $OP subtask 0: writer_raw_states element 0: offset 242: element length 64, but 39 bytes follow it" \
		ckpt-inspect -R w
}

# ckpt-merge --set-offset on FlinkKafkaConsumer's union state (ckpt-merge(1)): each subtask's
# element of the partition takes the offset the consumer stores (where it resumes, less one; the
# sentinels as KafkaTopicPartitionStateSentinel has them), in place inline, in a new file for a file.
# The --offsets rows of DIR as "subtask topic:partition starting_offset".
crows() { ckpt-inspect --offsets "$1" | jq -r '"\(.subtask) \(.topic):\(.partition) \(.starting_offset)"' | tr '\n' ,; }

@test "legacy: --set-offset on FlinkKafkaConsumer's state: a number, each sentinel, +N and -N; --offsets shows them, -R the stored offsets" {
	consumer_sp
	run ckpt-merge --set-offset abc:13=100 --set-offset def:7=latest --set-offset abc:0=+5 --set-offset ghi:2=earliest -o out/ cs
	status_is 0
	output_is ''
	run crows out
	output_is '0 abc:13 100,0 def:7 latest,1 abc:0 5,1 ghi:2 earliest,'
	run sh -c "ckpt-inspect -R out | jq -c '.value.offset'"
	output_is '99
"LATEST_OFFSET"
4
"EARLIEST_OFFSET"'
	run ckpt-merge --set-offset abc:13=-16769 --set-offset def:7=committed --set-offset abc:0=0 -o out2/ cs
	status_is 0
	run crows out2
	output_is '0 abc:13 0,0 def:7 committed,1 abc:0 0,1 ghi:2 committed,'
	run crows cs
	output_is '0 abc:13 16769,0 def:7 earliest,1 abc:0 0,1 ghi:2 committed,'
	run ckpt-inspect -c out
	status_is 0
	output_is '{"file":"out","ok":true,"files":2,"bytes":1120,"problems":[]}'
}

@test "legacy: --set-offset on FlinkKafkaConsumer's state inline changes the 8 bytes of each element set; a file's is written anew, the other carried" {
	INLINE=1 consumer_sp
	run ckpt-merge --set-offset abc:13=100 --set-offset ghi:2=latest -o out/ cs
	status_is 0
	run crows out
	output_is '0 abc:13 100,0 def:7 earliest,1 abc:0 0,1 ghi:2 latest,'
	[ "$(cmp -l cs/_metadata out/_metadata | wc -l)" -le 16 ]
	[ "$(ls out)" = _metadata ]
	rm -rf cs
	consumer_sp
	run ckpt-merge --set-offset ghi:2=7 -o out2/ cs
	status_is 0
	run ls out2
	output_is '_metadata
op0
reader-0102030405060708090a0b0c0d0e0f10-1'
	cmp cs/op0 out2/op0
	run crows out2
	output_is '0 abc:13 16769,0 def:7 earliest,1 abc:0 0,1 ghi:2 7,'
}

@test "legacy: --set-offset on FlinkKafkaConsumer's state refused without a word written: a partition none holds, a sentinel or 0 moved past, adding or removing, a damaged element" {
	consumer_sp
	bad 2 "ckpt-merge: cs/_metadata: --set-offset abc:9=1: FlinkKafkaConsumer 0102030405060708090a0b0c0d0e0f10 holds no abc:9 (it holds abc:13, def:7, abc:0, ghi:2)" \
		ckpt-merge --set-offset abc:9=1 -o out/ cs
	bad 2 "ckpt-merge: cs/_metadata: --set-offset def:7=+1: subtask 0's FlinkKafkaConsumer state holds def:7 at a sentinel, not an offset to count from" \
		ckpt-merge --set-offset def:7=+1 -o out/ cs
	bad 2 "ckpt-merge: cs/_metadata: --set-offset abc:0=-1: the starting offset 0 moved by -1 is below 0" \
		ckpt-merge --set-offset abc:0=-1 -o out/ cs
	bad 2 "ckpt-merge: cs/_metadata: --add-partition abc:1=0: operator 0102030405060708090a0b0c0d0e0f10 is a FlinkKafkaConsumer, which reads the partitions Kafka has: only --set-offset applies" \
		ckpt-merge --add-partition abc:1=0 -o out/ cs
	bad 2 "ckpt-merge: cs/_metadata: --remove-partition abc:0: operator 0102030405060708090a0b0c0d0e0f10 is a FlinkKafkaConsumer, which reads the partitions Kafka has: only --set-offset applies" \
		ckpt-merge --remove-partition abc:0 -o out/ cs
	bad 2 "ckpt-merge: cs/_metadata: --source nope: no such operator" ckpt-merge --set-offset abc:0=1 --source nope -o out/ cs
	printf '\001' | dd of=cs/op1 bs=1 seek=$((${OFFS_1%% *} + 2)) conv=notrunc status=none
	bad 2 "ckpt-merge: cs/op1: operator 0102030405060708090a0b0c0d0e0f10 subtask 1 topic-partition-offset-states element 0: flink_kafka_consumer: offset 528: partition -23336 below 0" \
		ckpt-merge --set-offset abc:13=1 -o out/ cs
	[ ! -e out ]
}
