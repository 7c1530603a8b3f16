#!/usr/bin/env bats
# The connector job (issue 41; KafkaJob.java, README "Connectors"): a KafkaSource, a FileSource and
# an exactly-once KafkaSink run against a real Kafka broker until a known point, then snapshotted in
# each backend (build/flink/VERSION/kafka/).  What ckpt reads today: each artifact whole (summary, -a,
# -c), the operators and uids, the sources' state as bytes.  The sidecars hold the oracle: per
# partition the next offset the job resumes from (what it consumed), and what Flink's own
# serializers decode from the source operators' state (splits, enumerators).  kafka-restore makes
# Flink restore a snapshot against a fresh broker holding the same records: the first record each
# partition delivers is at the sidecar's offset (the round trip the --set-offset tests build on).

load helper
load ../connector-helper # i32, i64, utf: the byte strings of a handle

# "VERSION NAME PATH SIDECAR" of every connector artifact (paths under FLINK_OUT/VERSION).
kafka_artifacts() {
	local v
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/kafka/sidecar.json" ] || continue
		jq -r --arg v "$v" '.artifacts[] | "\($v) \(.name) \(.path) \(.sidecar)"' "$FLINK_OUT/$v/kafka/sidecar.json"
	done
}

needs_kafka_artifacts() {
	[ -n "$(kafka_artifacts)" ] || skip "no connector artifacts under $FLINK_OUT (make flink-fixtures)"
}

# The Kafka broker's class path (run.sh: t/flink/target/kafka/classpath.txt) and the line's classes;
# skip without them (fail under CI=true).
needs_kafka_restore() {
	if flink_classpath "$1" >/dev/null && [ -s "$T/target/kafka/classpath.txt" ]; then return 0; fi
	if [ "${CI-}" = true ]; then
		echo "no harness classes or Kafka broker class path for Flink $1 (t/flink/run.sh); CI=true requires them"
		return 1
	fi
	skip "no harness classes or Kafka broker class path for Flink $1 (t/flink/run.sh)"
}

# jq over a sidecar: what the sidecar says each partition resumes from, as "TOPIC:P NEXT" lines:
# the job's own record (consumed) and Flink's reader splits (an unread partition keeps the
# EARLIEST sentinel -2, which resumes at its first offset, 0 here).
JQ_ORACLE='.consumed.offsets | to_entries[] | "\(.key) \(.value.next_offset)"'
JQ_SPLITS='[.flink["kafka-source"].readers[][] | {key: "\(.topic):\(.partition)",
	value: (if .starting_offset == -2 then 0 else .starting_offset end)}] | sort_by(.key)[] | "\(.key) \(.value)"'

@test "each line wrote its connector artifacts: two backends, two savepoint formats and a checkpoint; a savepoint with the state in files" {
	needs_kafka_artifacts
	local v
	for v in $(flink_versions); do
		run jq -r '[.artifacts[].name] | join(" ")' "$FLINK_OUT/$v/kafka/sidecar.json"
		[ "$output" = "kafka-hashmap-canonical kafka-hashmap-native kafka-hashmap-checkpoint kafka-rocksdb-canonical kafka-rocksdb-native kafka-rocksdb-checkpoint kafka-hashmap-files-canonical" ] ||
			{ echo "$v: $output"; return 1; }
		run jq -r '.sql_function.available' "$FLINK_OUT/$v/kafka/sidecar.json"
		[ "$output" = false ]
	done
	while read -r v name path side; do
		[ -f "$FLINK_OUT/$v/$path/_metadata" ] || { echo "$v/$name: no _metadata at $path"; return 1; }
		[ -f "$FLINK_OUT/$v/$side" ] || { echo "$v/$name: no sidecar"; return 1; }
	done < <(kafka_artifacts)
}

@test "ckpt-inspect reads each connector artifact: its operators by id and uid, the sources' state as bytes, every file" {
	needs_kafka_artifacts
	local v name path side art fail=0
	while read -r v name path side; do
		art=$FLINK_OUT/$v/$path
		side=$FLINK_OUT/$v/$side
		run ckpt-inspect "$art"
		[ "$status" -eq 0 ] || { echo "$v/$name: summary exit $status: $output"; fail=1; continue; }
		# the operators: the ids the job's graph derives (StreamGraphHasherV2), the uids where the
		# format holds them (2.x: format 6; 1.20's format 4 has none)
		diff <(echo "$output" | jq -r '.operators[] | "\(.id) \(.uid // "-")"' | sort) \
			<(jq -r --argjson uids "$([ "$v" = 1.20.5 ] && echo false || echo true)" \
				'.job.operators[] | "\(.id) \(if $uids then .uid else "-" end)"' "$side" | sort) ||
			{ echo "$v/$name: operators differ"; fail=1; }
		# each source: its reader state's splits, its enumerator's bytes, as Flink read them
		for uid in kafka-source file-source; do
			got=$(echo "$output" | jq -c --arg id "$(jq -r --arg u "$uid" '.flink[$u].operator_id' "$side")" '.operators[]
				| select(.id == $id) | {states: [.states[] | "\(.name) \(.mode) \(.entries)"], coordinator_bytes}')
			want=$(jq -c --arg u "$uid" '.flink[$u] | {states: ["SourceReaderState list \([.readers[][]] | length)"],
				coordinator_bytes: .enumerator.coordinator_bytes}' "$side")
			[ "$got" = "$want" ] || { echo "$v/$name $uid: ckpt $got, flink $want"; fail=1; }
		done
		run ckpt-inspect -a "$art"
		[ "$status" -eq 0 ] || { echo "$v/$name: -a exit $status: $output"; fail=1; continue; }
		# each split's bytes, per subtask in order, are those Flink's serializer read (their
		# lengths): -a --raw keeps each element's raw bytes beside its typed form, as the state
		# holds them, after the i32 length of their byte[] (counted from the base64's length: jq's
		# @base64d makes a string of them, whose length counts characters, not bytes)
		run ckpt-inspect -a --raw "$art"
		[ "$status" -eq 0 ] || { echo "$v/$name: -a --raw exit $status: $output"; fail=1; continue; }
		for uid in kafka-source file-source; do
			got=$(echo "$output" | jq -c --arg id "$(jq -r --arg u "$uid" '.flink[$u].operator_id' "$side")" '[.operators[]
				| select(.id == $id) | .subtasks[]
				| {key: "\(.index)", value: [.operator_state.SourceReaderState.entries[] | .base64
					| (length / 4 * 3) - (if endswith("==") then 2 elif endswith("=") then 1 else 0 end) - 4]}]
				| from_entries')
			want=$(jq -c --arg u "$uid" '.flink[$u].readers | map_values(map(.bytes))' "$side")
			[ "$got" = "$want" ] || { echo "$v/$name $uid bytes: ckpt $got, flink $want"; fail=1; }
		done
		run ckpt-inspect -c "$art"
		[ "$status" -eq 0 ] && [ "$(echo "$output" | jq -r .ok)" = true ] || { echo "$v/$name: -c: $output"; fail=1; }
	done < <(kafka_artifacts)
	[ "$fail" -eq 0 ]
}

@test "the sidecars hold the offsets the job consumed, and Flink's splits resume there" {
	needs_kafka_artifacts
	local v name path side fail=0
	while read -r v name path side; do
		side=$FLINK_OUT/$v/$side
		# the job read every record of every partition: 10, 20, 30 and none
		run jq -r "$JQ_ORACLE" "$side"
		[ "$output" = "$(printf 'ckpt-in:0 10\nckpt-in:1 20\nckpt-in:2 30\nckpt-in:3 0')" ] ||
			{ echo "$v/$name consumed: $output"; fail=1; }
		# each partition in exactly one reader split, resuming at the job's next offset
		diff <(jq -r "$JQ_ORACLE" "$side") <(jq -r "$JQ_SPLITS" "$side") || { echo "$v/$name: splits differ"; fail=1; }
		run jq -r '[.flink["kafka-source"].readers[][] | .stopping_offset] | unique | map(tostring) | join(" ")' "$side"
		[ "$output" = null ] || { echo "$v/$name: stopping offsets $output"; fail=1; }
		# the enumerator: every partition assigned (1.20's connector: partitions; 2.x: splits)
		run jq -r '.flink["kafka-source"].enumerator.state | (.partitions // .splits)
			| map("\(.topic):\(.partition) \(.status)") | join(" ")' "$side"
		[ "$output" = "ckpt-in:0 ASSIGNED ckpt-in:1 ASSIGNED ckpt-in:2 ASSIGNED ckpt-in:3 ASSIGNED" ] ||
			{ echo "$v/$name enumerator: $output"; fail=1; }
		# the FileSource: the reader holds the gated file after 3 lines (its position the third line's
		# start, one record after it); the enumerator holds the other file, unread
		run jq -r '.consumed as $c | .flink["file-source"] | def base: .path | split("/")[-1];
			[(.readers["0"][] | "\(base) \(.position.offset) \(.position.records_after_offset)"),
			(.enumerator.state.splits[] | "\(base) \(.position)"),
			"\($c.gated_file) \($c.lines_read[$c.gated_file])"] | join(", ")' "$side"
		case $output in
		"a.txt 16 1, b.txt null, a.txt 3" | "b.txt 16 1, a.txt null, b.txt 3") ;;
		*) echo "$v/$name file source: $output"; fail=1 ;;
		esac
		run jq -r '.sink.transactional_id_prefix' "$side"
		[ "$output" = ckpt-kafka-sink ] || fail=1
	done < <(kafka_artifacts)
	[ "$fail" -eq 0 ]
}

# ckpt-inspect --offsets (issue 41) against the job's own record and Flink's own decoding: each
# Kafka reader split by subtask, its starting offset (EARLIEST named, as Flink's -2), no stopping
# offset; the enumerator's partitions none apart from the readers'; the FileSource's reader split
# (path, position) and the enumerator's pending one.
JQ_CKPT_KAFKA='select(.connector == "kafka" and .held_by == "reader")
	| "\(.subtask) \(.topic):\(.partition) \(if .starting_offset == "earliest" then -2 else .starting_offset end) \(.stopping_offset)"'
JQ_FLINK_KAFKA='.flink["kafka-source"].readers | to_entries[] | .key as $st | .value[]
	| "\($st) \(.topic):\(.partition) \(.starting_offset) null"'
JQ_CKPT_FILE='select(.connector == "file") | "\(.subtask) \(.path) \(.position)"'
JQ_FLINK_FILE='.flink["file-source"] | (.readers | to_entries[] | .key as $st | .value[] | "\($st) \(.path) \(.position | tojson)"),
	(.enumerator.state.splits[] | "null \(.path) \(.position)")'

@test "ckpt-inspect --offsets: where each partition and file resumes, as the job consumed and Flink decodes" {
	needs_kafka_artifacts
	local v name path side art fail=0
	while read -r v name path side; do
		art=$FLINK_OUT/$v/$path
		side=$FLINK_OUT/$v/$side
		run ckpt-inspect --offsets "$art"
		[ "$status" -eq 0 ] || { echo "$v/$name: --offsets exit $status: $output"; fail=1; continue; }
		echo "$output" > offsets.ndjson
		diff <(jq -r "$JQ_CKPT_KAFKA" offsets.ndjson | sort) <(jq -r "$JQ_FLINK_KAFKA" "$side" | sort) ||
			{ echo "$v/$name: kafka splits differ"; fail=1; }
		# what the job resumes from is what it consumed (EARLIEST: the partition's first offset, 0)
		diff <(jq -r 'select(.connector == "kafka" and .held_by == "reader")
			| "\(.topic):\(.partition) \(if .starting_offset == "earliest" then 0 else .starting_offset end)"' \
			offsets.ndjson | sort) <(jq -r "$JQ_ORACLE" "$side") || { echo "$v/$name: not the consumed offsets"; fail=1; }
		run jq -r 'select(.connector == "kafka" and .held_by != "reader")' offsets.ndjson
		[ -z "$output" ] || { echo "$v/$name: partitions held by the enumerator alone: $output"; fail=1; }
		diff <(jq -r "$JQ_CKPT_FILE" offsets.ndjson | sort) <(jq -r "$JQ_FLINK_FILE" "$side" | sort) ||
			{ echo "$v/$name: file splits differ"; fail=1; }
	done < <(kafka_artifacts)
	[ "$fail" -eq 0 ]
}

@test "the exactly-once KafkaSink's writer state and its committer's committables are typed: the job's prefix, its transactions" {
	needs_kafka_artifacts
	local v name path side art prefix want fail=0
	while read -r v name path side; do
		art=$FLINK_OUT/$v/$path
		side=$FLINK_OUT/$v/$side
		prefix=$(jq -r .sink.transactional_id_prefix "$side")
		run ckpt-inspect -a "$art"
		[ "$status" -eq 0 ] || { echo "$v/$name: -a exit $status: $output"; fail=1; continue; }
		echo "$output" >all.json
		# the writer: KafkaWriterStateSerializer 2 on connector 5.0 (Flink 2.3), 1 on 3.4 (Flink 1.20)
		want=$([ "$v" = 1.20.5 ] && echo 1 || echo 2)
		run jq -c '[.operators[].subtasks[].operator_state.writer_raw_states // empty | .entries[]
			| [.connector, .version, .transactional_id_prefix]] | unique' all.json
		[ "$output" = "[[\"kafka_sink\",$want,\"$prefix\"]]" ] || { echo "$v/$name: writer $output"; fail=1; }
		# the committer: CommittableCollectorSerializer 2; each committable Kafka's, of the job's prefix,
		# and a transaction the writer's version 2 state lists as precommitted is one of them
		run jq -c '[.operators[].subtasks[].operator_state.streaming_committer_raw_states // empty | .entries[]
			| [.state, .version, ([.checkpoints[].subtasks[].requests[] | .connector,
				(.transactional_id | startswith($p))] | unique)]] | unique' --arg p "$prefix-" all.json
		case $output in
		'[["committables",2,[]]]' | '[["committables",2,[true,"kafka_sink"]]]') ;;
		*) echo "$v/$name: committer $output"; fail=1 ;;
		esac
		run jq -r '[.operators[].subtasks[].operator_state.writer_raw_states // empty | .entries[].precommitted // empty
			| .[].transactional_id] - [.operators[].subtasks[].operator_state.streaming_committer_raw_states // empty
			| .entries[].checkpoints[].subtasks[].requests[].transactional_id] | .[]' all.json
		[ -z "$output" ] || { echo "$v/$name: precommitted but not committable: $output"; fail=1; }
	done < <(kafka_artifacts)
	[ "$fail" -eq 0 ]
}

@test "a changed offset in a sidecar is noticed" {
	needs_kafka_artifacts
	local v name path side
	read -r v name path side < <(kafka_artifacts)
	jq '.flink["kafka-source"].readers["0"][0].starting_offset += 1' "$FLINK_OUT/$v/$side" >changed.json
	run diff <(jq -r "$JQ_ORACLE" changed.json) <(jq -r "$JQ_SPLITS" changed.json)
	[ "$status" -eq 1 ]
}

# kafka_restore VERSION: Flink restores the hashmap canonical savepoint, the RocksDB native savepoint
# and the hashmap checkpoint against a fresh broker holding the same records and 5 more in each
# partition (one JVM); each restore's first offset per partition and first line per file equal the
# sidecar's next offset and the line after the last the job read.
kafka_restore() {
	local v=$1 args=() name side n fail=0
	for name in kafka-hashmap-canonical kafka-rocksdb-native kafka-hashmap-checkpoint; do
		side=$FLINK_OUT/$v/kafka/sidecars/$name.json
		args+=("$BATS_TEST_TMPDIR/$name.json" "$FLINK_OUT/$v/$(jq -r .path "$side")" --backend "$(jq -r .backend "$side")")
	done
	run flink_java "$v" kafka-restore "${args[@]}"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	for name in kafka-hashmap-canonical kafka-rocksdb-native kafka-hashmap-checkpoint; do
		side=$FLINK_OUT/$v/kafka/sidecars/$name.json
		n=$BATS_TEST_TMPDIR/$name.json
		[ "$(jq -r .accepted "$n")" = true ] || { echo "$v/$name refused: $(jq -c 'del(.records, .metadata)' "$n")"; fail=1; continue; }
		diff <(jq -r "$JQ_ORACLE" "$side") <(jq -r '.first_offsets | to_entries[] | "\(.key) \(.value)"' "$n") ||
			{ echo "$v/$name: first offsets differ"; fail=1; }
		run jq -r --slurpfile s "$side" '$s[0].consumed as $c | .first_lines
			| [.[$c.gated_file], (to_entries[] | select(.key != $c.gated_file) | .value)] | join(" ")' "$n"
		[ "$output" = "$(jq -r '.consumed.gated_file as $g | "\($g):\(.consumed.lines_read[$g]) \(if $g == "a.txt" then "b.txt" else "a.txt" end):0"' "$side")" ] ||
			{ echo "$v/$name first lines: $output"; fail=1; }
		[ "$fail" -eq 0 ] || jq -c 'del(.records, .metadata)' "$n"
	done
	[ "$fail" -eq 0 ]
}

@test "kafka-restore (Flink 2.3.0): the untouched snapshots resume at the sidecar's offsets" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/2.3.0/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 2.3.0"
	needs_kafka_restore 2.3.0
	kafka_restore 2.3.0
}

@test "kafka-restore (Flink 1.20.5): the untouched snapshots resume at the sidecar's offsets" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/1.20.5/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 1.20.5"
	needs_kafka_restore 1.20.5
	kafka_restore 1.20.5
}

# kafka_setoffset VERSION [ARTIFACT]: ckpt-merge --set-offset moves three partitions of the hashmap
# canonical savepoint (or ARTIFACT) (ckpt-in:0 +3, ckpt-in:1 to 5, ckpt-in:2 to earliest; ckpt-in:3
# stays at earliest); Flink restores the result against a fresh broker and each partition's first
# record is at the offset set (earliest: 0).
kafka_setoffset() {
	local v=$1 side=$FLINK_OUT/$1/kafka/sidecars/${2:-kafka-hashmap-canonical}.json
	run ckpt-merge --set-offset ckpt-in:0=+3 --set-offset ckpt-in:1=5 --set-offset ckpt-in:2=earliest \
		-o "$BATS_TEST_TMPDIR/moved/" "$FLINK_OUT/$v/$(jq -r .path "$side")"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	run sh -c "ckpt-inspect --offsets '$BATS_TEST_TMPDIR/moved' | jq -r 'select(.connector == \"kafka\") | \"\(.topic):\(.partition) \(.starting_offset)\"' | sort"
	[ "$output" = "$(printf 'ckpt-in:0 13\nckpt-in:1 5\nckpt-in:2 earliest\nckpt-in:3 earliest')" ] || { echo "$output"; return 1; }
	run flink_java "$v" kafka-restore "$BATS_TEST_TMPDIR/r.json" "$BATS_TEST_TMPDIR/moved" --backend "$(jq -r .backend "$side")"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$(jq -r .accepted "$BATS_TEST_TMPDIR/r.json")" = true ] || { jq -c . "$BATS_TEST_TMPDIR/r.json"; return 1; }
	run jq -c .first_offsets "$BATS_TEST_TMPDIR/r.json"
	[ "$output" = '{"ckpt-in:0":13,"ckpt-in:1":5,"ckpt-in:2":0,"ckpt-in:3":0}' ] || { echo "$output"; return 1; }
}

@test "kafka-restore (Flink 2.3.0): after ckpt-merge --set-offset each partition resumes at the offset set" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/2.3.0/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 2.3.0"
	needs_kafka_restore 2.3.0
	kafka_setoffset 2.3.0
}

@test "kafka-restore (Flink 1.20.5): after ckpt-merge --set-offset each partition resumes at the offset set" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/1.20.5/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 1.20.5"
	needs_kafka_restore 1.20.5
	kafka_setoffset 1.20.5
}

# kafka_flinkheld VERSION: the savepoint Flink wrote with state.storage.fs.memory-threshold 0
# (kafka-hashmap-files-canonical), each source reader's state in a file Flink wrote (not ckpt's
# conversion of inline state, as file_held below): ckpt-inspect -a names each reader handle a file,
# --offsets is what the job consumed and Flink decodes, and --set-offset on it is restored by Flink
# at the offsets set (kafka_setoffset).
kafka_flinkheld() {
	local v=$1 name=kafka-hashmap-files-canonical side sp op
	side=$FLINK_OUT/$v/kafka/sidecars/$name.json
	[ -f "$side" ] || { echo "$v: no $name"; return 1; }
	sp=$FLINK_OUT/$v/$(jq -r .path "$side")
	run sh -c "ckpt-inspect -a '$sp' | jq -r '$JQ_KAFKA | .subtasks[].handles[] | select(.scope == \"managed_operator\") | .delegate.kind'"
	[ "$output" = "$(printf 'relative_file\nrelative_file')" ] || { echo "$v reader handles: $output"; return 1; }
	ckpt-inspect --offsets "$sp" >offsets.ndjson
	diff <(jq -r "$JQ_CKPT_KAFKA" offsets.ndjson | sort) <(jq -r "$JQ_FLINK_KAFKA" "$side" | sort) ||
		{ echo "$v: kafka splits differ from Flink's"; return 1; }
	diff <(jq -r 'select(.connector == "kafka" and .held_by == "reader")
		| "\(.topic):\(.partition) \(if .starting_offset == "earliest" then 0 else .starting_offset end)"' offsets.ndjson | sort) \
		<(jq -r "$JQ_ORACLE" "$side") || { echo "$v: not the consumed offsets"; return 1; }
	kafka_setoffset "$v" "$name" || return 1
	# each subtask's reader state rewritten into a new file (none inline), every file whole
	op=$(ckpt-inspect -a "$sp" | jq -r "$JQ_KAFKA | .id")
	run sh -c "ckpt-inspect -a '$BATS_TEST_TMPDIR/moved' | jq -r '$JQ_KAFKA | .subtasks[].handles[]
		| select(.scope == \"managed_operator\") | \"\\(.delegate.kind) \\(.delegate.path)\"'"
	[ "$output" = "$(printf 'relative_file reader-%s-0\nrelative_file reader-%s-1' "$op" "$op")" ] || { echo "$v moved: $output"; return 1; }
	[ "$(ckpt-inspect -c "$BATS_TEST_TMPDIR/moved" | jq -r .ok)" = true ]
}

@test "kafka-restore (Flink 2.3.0): reader state Flink wrote to files (memory threshold 0): --offsets as consumed, --set-offset resumed at the offsets set" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/2.3.0/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 2.3.0"
	needs_kafka_restore 2.3.0
	kafka_flinkheld 2.3.0
}

@test "kafka-restore (Flink 1.20.5): reader state Flink wrote to files (memory threshold 0): --offsets as consumed, --set-offset resumed at the offsets set" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/1.20.5/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 1.20.5"
	needs_kafka_restore 1.20.5
	kafka_flinkheld 1.20.5
}

# kafka_partitions VERSION: ckpt-merge --add-partition and --remove-partition on the hashmap canonical
# savepoint, restored by Flink against a fresh broker (one JVM, two requests):
# - added/: ckpt-in:4 added at offset 2; the topic has 6 partitions.  KafkaSourceEnumerator.
#   getSplitOwner puts "ckpt-in" partition P on reader P mod 2 (partition 0's reader is 0), so ckpt
#   puts ckpt-in:4 on reader 0; ckpt-in:5, which the savepoint lacks, Flink's enumerator discovers
#   and assigns itself (to reader 1, from the earliest offset).  The first record of ckpt-in:4 is
#   offset 2 (not 0: the split added, not discovery, read it), read by reader 0.
# - removed/: ckpt-in:1 removed, the enumerator keeping it as assigned; the topic has 5 partitions.
#   ckpt-in:4, absent from the savepoint, is discovered and read from its earliest offset (what
#   Flink does with a partition of the topic its enumerator does not list); ckpt-in:1 delivers
#   nothing in the 5 s kafka-restore waits after every other partition delivered (--silent 1).
kafka_partitions() {
	local v=$1 side=$FLINK_OUT/$1/kafka/sidecars/kafka-hashmap-canonical.json sp b
	sp=$FLINK_OUT/$v/$(jq -r .path "$side")
	b=$(jq -r .backend "$side")
	run ckpt-merge --add-partition ckpt-in:4=2 -o "$BATS_TEST_TMPDIR/added/" "$sp"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	run ckpt-merge --remove-partition ckpt-in:1 -o "$BATS_TEST_TMPDIR/removed/" "$sp"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	run sh -c "ckpt-inspect --offsets '$BATS_TEST_TMPDIR/added' | jq -r 'select(.connector == \"kafka\") | \"\(.subtask) \(.topic):\(.partition) \(.starting_offset) \(.held_by)\"' | sort"
	[ "$output" = "$(printf '0 ckpt-in:0 10 reader\n0 ckpt-in:2 30 reader\n0 ckpt-in:4 2 reader\n1 ckpt-in:1 20 reader\n1 ckpt-in:3 earliest reader')" ] ||
		{ echo "added: $output"; return 1; }
	run sh -c "ckpt-inspect --offsets '$BATS_TEST_TMPDIR/removed' | jq -r 'select(.connector == \"kafka\") | \"\(.subtask) \(.topic):\(.partition) \(.held_by)\"' | sort"
	case $output in
	"$(printf '0 ckpt-in:0 reader\n0 ckpt-in:2 reader\n1 ckpt-in:3 reader\nnull ckpt-in:1 enumerator')"*) ;;
	*) echo "removed: $output"; return 1 ;;
	esac
	run flink_java "$v" kafka-restore "$BATS_TEST_TMPDIR/a.json" "$BATS_TEST_TMPDIR/added" --backend "$b" --partitions 6 \
		"$BATS_TEST_TMPDIR/r.json" "$BATS_TEST_TMPDIR/removed" --backend "$b" --partitions 5 --silent 1
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$(jq -r .accepted "$BATS_TEST_TMPDIR/a.json")" = true ] || { jq -c 'del(.records, .metadata)' "$BATS_TEST_TMPDIR/a.json"; return 1; }
	run jq -c '[.first_offsets, .readers]' "$BATS_TEST_TMPDIR/a.json"
	[ "$output" = '[{"ckpt-in:0":10,"ckpt-in:1":20,"ckpt-in:2":30,"ckpt-in:3":0,"ckpt-in:4":2,"ckpt-in:5":0},{"ckpt-in:0":0,"ckpt-in:1":1,"ckpt-in:2":0,"ckpt-in:3":1,"ckpt-in:4":0,"ckpt-in:5":1}]' ] ||
		{ echo "added: $output"; return 1; }
	[ "$(jq -r .accepted "$BATS_TEST_TMPDIR/r.json")" = true ] || { jq -c 'del(.records, .metadata)' "$BATS_TEST_TMPDIR/r.json"; return 1; }
	run jq -c '[.first_offsets, .records_read["ckpt-in:1"]]' "$BATS_TEST_TMPDIR/r.json"
	[ "$output" = '[{"ckpt-in:0":10,"ckpt-in:1":null,"ckpt-in:2":30,"ckpt-in:3":0,"ckpt-in:4":0},0]' ] ||
		{ echo "removed: $output"; return 1; }
}

@test "kafka-restore (Flink 2.3.0): a partition added is read from the offset set on the reader Flink assigns; one removed is not read" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/2.3.0/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 2.3.0"
	needs_kafka_restore 2.3.0
	kafka_partitions 2.3.0
}

@test "kafka-restore (Flink 1.20.5): a partition added is read from the offset set on the reader Flink assigns; one removed is not read" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/1.20.5/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 1.20.5"
	needs_kafka_restore 1.20.5
	kafka_partitions 1.20.5
}

# jq over -a: the Kafka source's operator (1.20.5's canonical savepoints record no uids).
JQ_KAFKA='.operators[] | select(.coordinator.connector == "kafka")'

# file_held SRC DIR [OPERATOR]: SRC's Kafka source reader state (OPERATOR: a jq selector over -a of
# another operator, default JQ_KAFKA) held in files: each subtask's inline handle
# (ByteStreamStateHandle, tag 1: its name as ckpt-inspect -a gives it, i32 length, the bytes) made a
# relative file handle (tag 6: the file's name, i64 size) of DIR/held-N, a file holding those bytes,
# as Flink writes operator state above state.storage.fs.memory-threshold.  DIR/_metadata the rest.
file_held() {
	local src=$1 dir=$2 sel=${3-$JQ_KAFKA} h name pat pre rest len i=0
	mkdir -p "$dir"
	h=$(xxd -p "$src/_metadata" | tr -d '\n')
	while read -r name; do
		pat=01$(utf "$name")
		[[ $h == *"$pat"* ]] || { echo "no inline handle $name"; return 1; }
		pre=${h%%"$pat"*}
		rest=${h:$((${#pre} + ${#pat}))}
		len=$((16#${rest:0:8}))
		printf '%s' "${rest:8:$((len * 2))}" | xxd -r -p >"$dir/held-$i"
		h=${pre}06$(utf held-$i)$(i64 $len)${rest:$((8 + len * 2))}
		i=$((i + 1))
	done < <(ckpt-inspect -a "$src" | jq -r "$sel"' | .subtasks[].handles[] | select(.scope == "managed_operator")
		| .delegate.handle_name')
	[ "$i" -eq 2 ] || { echo "$i reader handles"; return 1; }
	printf '%s' "$h" | xxd -r -p >"$dir/_metadata"
}

# kafka_fileheld VERSION: the hashmap canonical savepoint's reader state held in files (file_held);
# ckpt-merge --set-offset writes each subtask's reader state into a new file of the savepoint
# (reader-OPID-SUBTASK, a relative handle naming it; no reader state is left inline), and Flink
# restores it: each partition's first record is at the offset set.  Flink restores the file-held
# input too, at the sidecar's offsets (the edit, not the conversion, moves them).
kafka_fileheld() {
	local v=$1 side=$FLINK_OUT/$1/kafka/sidecars/kafka-hashmap-canonical.json sp b op
	sp=$FLINK_OUT/$v/$(jq -r .path "$side")
	b=$(jq -r .backend "$side")
	op=$(ckpt-inspect -a "$sp" | jq -r "$JQ_KAFKA | .id")
	file_held "$sp" "$BATS_TEST_TMPDIR/fs"
	[ "$(ckpt-inspect --offsets fs)" = "$(ckpt-inspect --offsets "$sp")" ]
	run ckpt-merge --set-offset ckpt-in:0=+3 --set-offset ckpt-in:1=5 --set-offset ckpt-in:2=earliest \
		-o "$BATS_TEST_TMPDIR/moved/" fs
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	run ls moved
	[ "$output" = "$(printf '_metadata\nreader-%s-0\nreader-%s-1' "$op" "$op")" ] || { echo "moved/: $output"; return 1; }
	run sh -c "ckpt-inspect -a moved | jq -c '$JQ_KAFKA | .subtasks[].handles[] | select(.scope == \"managed_operator\")
		| [.delegate.kind, .delegate.path, .size]'"
	[ "$output" = "$(printf '["relative_file","reader-%s-0",%s]\n["relative_file","reader-%s-1",%s]' \
		"$op" "$(wc -c <moved/reader-$op-0)" "$op" "$(wc -c <moved/reader-$op-1)")" ] || { echo "handles: $output"; return 1; }
	run sh -c "ckpt-inspect --offsets moved | jq -r 'select(.connector == \"kafka\") | \"\(.topic):\(.partition) \(.starting_offset)\"' | sort"
	[ "$output" = "$(printf 'ckpt-in:0 13\nckpt-in:1 5\nckpt-in:2 earliest\nckpt-in:3 earliest')" ] || { echo "$output"; return 1; }
	run flink_java "$v" kafka-restore "$BATS_TEST_TMPDIR/r.json" "$BATS_TEST_TMPDIR/moved" --backend "$b" \
		"$BATS_TEST_TMPDIR/f.json" "$BATS_TEST_TMPDIR/fs" --backend "$b"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$(jq -r .accepted r.json)" = true ] || { jq -c 'del(.records, .metadata)' r.json; return 1; }
	run jq -c .first_offsets r.json
	[ "$output" = '{"ckpt-in:0":13,"ckpt-in:1":5,"ckpt-in:2":0,"ckpt-in:3":0}' ] || { echo "moved: $output"; return 1; }
	[ "$(jq -r .accepted f.json)" = true ] || { jq -c 'del(.records, .metadata)' f.json; return 1; }
	diff <(jq -r "$JQ_ORACLE" "$side") <(jq -r '.first_offsets | to_entries[] | "\(.key) \(.value)"' f.json) ||
		{ echo "file-held input: first offsets differ"; return 1; }
}

@test "kafka-restore (Flink 2.3.0): --set-offset on reader state held in files: new files, and each partition resumes at the offset set" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/2.3.0/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 2.3.0"
	needs_kafka_restore 2.3.0
	kafka_fileheld 2.3.0
}

@test "kafka-restore (Flink 1.20.5): --set-offset on reader state held in files: new files, and each partition resumes at the offset set" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/1.20.5/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 1.20.5"
	needs_kafka_restore 1.20.5
	kafka_fileheld 1.20.5
}

# kafka_enum_only VERSION: a partition only the enumerator holds, listed unassigned (a partition
# discovered but not yet given to a reader when the snapshot was taken), made from the hashmap
# canonical savepoint: ckpt-in:1's reader split deleted (ckpt-merge --rows), its entry in the
# enumerator's state (version 3 on 2.3.0: the split, i32 status; version 2 on 1.20.5: topic,
# partition, i32 status) flipped from assigned (0) to unassigned (1).  Flink restores it and its
# enumerator gives ckpt-in:1 to a reader, read from its start (the control); after ckpt-merge
# --remove-partition ckpt-in:1 (the entry listed assigned) Flink restores it and ckpt-in:1 delivers
# nothing in the 5 s kafka-restore waits after every other partition delivered (--silent 1), the
# others resuming at the sidecar's offsets.
kafka_enum_only() {
	local v=$1 side=$FLINK_OUT/$1/kafka/sidecars/kafka-hashmap-canonical.json sp b op h pat
	sp=$FLINK_OUT/$v/$(jq -r .path "$side")
	b=$(jq -r .backend "$side")
	op=$(ckpt-inspect -a "$sp" | jq -r "$JQ_KAFKA | .id")
	ckpt-inspect -R -u "$op" "$sp" | jq -c 'select(.value.partition != 1)' >rows
	run ckpt-merge --rows rows -o "$BATS_TEST_TMPDIR/held/" "$sp"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	case $(ckpt-inspect -a held | jq -r "$JQ_KAFKA | .coordinator.version") in
	3) pat=$(utf ckpt-in)$(i32 1)$(i64 -2)$(i64 -9223372036854775808) ;;
	2) pat=$(utf ckpt-in)$(i32 1) ;;
	*) echo "enumerator version: $(ckpt-inspect -a held | jq -c "$JQ_KAFKA | .coordinator")"; return 1 ;;
	esac
	h=$(xxd -p held/_metadata | tr -d '\n')
	[ "$(grep -o "${pat}00000000" <<<"$h" | wc -l)" -eq 1 ] || { echo "ckpt-in:1's entry not found once"; return 1; }
	mkdir pend
	printf '%s' "${h/${pat}00000000/${pat}00000001}" | xxd -r -p >pend/_metadata
	JQ_HELD='select(.connector == "kafka") | "\(.subtask) \(.topic):\(.partition) \(.held_by) \(.status)"'
	run sh -c "ckpt-inspect --offsets pend | jq -r '$JQ_HELD' | sort"
	[ "$output" = "$(printf '0 ckpt-in:0 reader null\n0 ckpt-in:2 reader null\n1 ckpt-in:3 reader null\nnull ckpt-in:1 enumerator unassigned')" ] ||
		{ echo "pend: $output"; return 1; }
	run ckpt-merge --remove-partition ckpt-in:1 -o "$BATS_TEST_TMPDIR/removed/" pend
	[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$output"; return 1; }
	run sh -c "ckpt-inspect --offsets removed | jq -r '$JQ_HELD' | sort"
	[ "$output" = "$(printf '0 ckpt-in:0 reader null\n0 ckpt-in:2 reader null\n1 ckpt-in:3 reader null\nnull ckpt-in:1 enumerator assigned')" ] ||
		{ echo "removed: $output"; return 1; }
	run flink_java "$v" kafka-restore "$BATS_TEST_TMPDIR/p.json" "$BATS_TEST_TMPDIR/pend" --backend "$b" \
		"$BATS_TEST_TMPDIR/r.json" "$BATS_TEST_TMPDIR/removed" --backend "$b" --silent 1
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	[ "$(jq -r .accepted p.json)" = true ] || { jq -c 'del(.records, .metadata)' p.json; return 1; }
	run jq -c '[.first_offsets, .readers]' p.json
	[ "$output" = '[{"ckpt-in:0":10,"ckpt-in:1":0,"ckpt-in:2":30,"ckpt-in:3":0},{"ckpt-in:0":0,"ckpt-in:1":1,"ckpt-in:2":0,"ckpt-in:3":1}]' ] ||
		{ echo "unassigned, not removed: $output"; return 1; }
	[ "$(jq -r .accepted r.json)" = true ] || { jq -c 'del(.records, .metadata)' r.json; return 1; }
	run jq -c '[.first_offsets, .records_read["ckpt-in:1"]]' r.json
	[ "$output" = '[{"ckpt-in:0":10,"ckpt-in:1":null,"ckpt-in:2":30,"ckpt-in:3":0},0]' ] ||
		{ echo "removed: $output"; return 1; }
}

@test "kafka-restore (Flink 2.3.0): a partition only the enumerator holds, unassigned, is read; --remove-partition of it: not read, the others resume" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/2.3.0/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 2.3.0"
	needs_kafka_restore 2.3.0
	kafka_enum_only 2.3.0
}

@test "kafka-restore (Flink 1.20.5): a partition only the enumerator holds, unassigned, is read; --remove-partition of it: not read, the others resume" {
	needs_kafka_artifacts
	[ -f "$FLINK_OUT/1.20.5/kafka/sidecar.json" ] || skip "no connector artifacts of Flink 1.20.5"
	needs_kafka_restore 1.20.5
	kafka_enum_only 1.20.5
}

# FlinkKafkaConsumer (KafkaConsumerJob.java: flink-connector-kafka 3.4.0-1.20, the last release
# that ships it; 4.0 on have none, so the 1.20.5 line only) reads the topic's records (10, 20, 30,
# 0) into a canonical savepoint of its union state; ckpt-merge --set-offset moves three partitions;
# Flink restores the result, and the savepoint as it was (the control), against a fresh broker:
# each partition's first record is at the offset set (earliest: 0), the control's where the job
# stopped.  The same edit of the state held in files (file_held) writes new reader-OPID-N files,
# and Flink restores them alike.
@test "kafka-restore (Flink 1.20.5): FlinkKafkaConsumer's union state after ckpt-merge --set-offset, inline and in files: each partition resumes at the offset set" {
	local cp op
	needs_kafka_restore 1.20.5
	cp=$(flink_classpath 1.20.5)
	if [ ! -f "${cp%%:*}/ckpt/flink/KafkaConsumerJob.class" ]; then
		[ "${CI-}" != true ] || { echo "the harness classes of 1.20.5 predate KafkaConsumerJob (t/flink/run.sh)"; return 1; }
		skip "the harness classes of 1.20.5 predate KafkaConsumerJob (t/flink/run.sh)"
	fi
	run flink_java 1.20.5 kafka-consumer savepoint "$BATS_TEST_TMPDIR/sp" "$BATS_TEST_TMPDIR/c.json"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	run jq -c .next_offsets c.json
	[ "$output" = '{"ckpt-in:0":10,"ckpt-in:1":20,"ckpt-in:2":30,"ckpt-in:3":null}' ] || { echo "consumed: $output"; return 1; }
	JQ_ROW='"\(.subtask) \(.connector) \(.topic):\(.partition) \(.starting_offset)"'
	run sh -c "ckpt-inspect --offsets sp | jq -r '$JQ_ROW'"
	[ "$output" = "$(printf '0 flink_kafka_consumer ckpt-in:0 10\n0 flink_kafka_consumer ckpt-in:2 30\n1 flink_kafka_consumer ckpt-in:1 20\n1 flink_kafka_consumer ckpt-in:3 0')" ] ||
		{ echo "sp: $output"; return 1; }
	run ckpt-merge --set-offset ckpt-in:0=+3 --set-offset ckpt-in:1=5 --set-offset ckpt-in:2=earliest -o "$BATS_TEST_TMPDIR/moved/" sp
	[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$output"; return 1; }
	run sh -c "ckpt-inspect --offsets moved | jq -r '$JQ_ROW'"
	[ "$output" = "$(printf '0 flink_kafka_consumer ckpt-in:0 13\n0 flink_kafka_consumer ckpt-in:2 earliest\n1 flink_kafka_consumer ckpt-in:1 5\n1 flink_kafka_consumer ckpt-in:3 0')" ] ||
		{ echo "moved: $output"; return 1; }
	op=$(ckpt-inspect --offsets sp | jq -r 'select(.connector == "flink_kafka_consumer") | .operator' | sort -u)
	file_held sp "$BATS_TEST_TMPDIR/fs" ".operators[] | select(.id == \"$op\")"
	run ckpt-merge --set-offset ckpt-in:0=+3 --set-offset ckpt-in:1=5 --set-offset ckpt-in:2=earliest -o "$BATS_TEST_TMPDIR/fsmoved/" fs
	[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$output"; return 1; }
	run ls fsmoved
	[ "$output" = "$(printf '_metadata\nreader-%s-0\nreader-%s-1' "$op" "$op")" ] || { echo "fsmoved/: $output"; return 1; }
	[ "$(ckpt-inspect --offsets fsmoved)" = "$(ckpt-inspect --offsets moved)" ]
	run flink_java 1.20.5 kafka-consumer restore "$BATS_TEST_TMPDIR/r.json" "$BATS_TEST_TMPDIR/moved" \
		"$BATS_TEST_TMPDIR/u.json" "$BATS_TEST_TMPDIR/sp" "$BATS_TEST_TMPDIR/f.json" "$BATS_TEST_TMPDIR/fsmoved"
	[ "$status" -eq 0 ] || { echo "$output"; return 1; }
	run jq -c '[.accepted, .first_offsets]' r.json
	[ "$output" = '[true,{"ckpt-in:0":13,"ckpt-in:1":5,"ckpt-in:2":0,"ckpt-in:3":0}]' ] || { echo "moved: $output"; return 1; }
	run jq -c '[.accepted, .first_offsets]' u.json
	[ "$output" = '[true,{"ckpt-in:0":10,"ckpt-in:1":20,"ckpt-in:2":30,"ckpt-in:3":0}]' ] || { echo "as it was: $output"; return 1; }
	run jq -c '[.accepted, .first_offsets]' f.json
	[ "$output" = '[true,{"ckpt-in:0":13,"ckpt-in:1":5,"ckpt-in:2":0,"ckpt-in:3":0}]' ] || { echo "in files: $output"; return 1; }
}
