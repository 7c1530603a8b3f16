#!/usr/bin/env bats
# Flink _metadata through ckpt-inspect: every real fixture (goldens and the oracle of SOURCES.md),
# the refused legacy formats, cut and damaged files, synthetic files for what no fixture holds, -u.
#
# Goldens: t/data/flinkmeta/FIXTURE.summary.expected (ckpt-inspect -m -p FIXTURE) and
# FIXTURE.all.expected (ckpt-inspect -m -a FIXTURE/_metadata); CKPT_REGOLD=1 rewrites them (t/README).

load helper
load flinkmeta-helper

# goldens KIND: the goldens of every fixture, one after another, as one run of ckpt-inspect over
# all fixtures prints them (one run keeps the sanitizer build quick). With CKPT_REGOLD=1 each is
# first rewritten from ckpt-inspect (KIND summary: -p FIXTURE; all: -a FIXTURE/_metadata).
goldens() {
	local d
	for d in v*; do
		if [ "${CKPT_REGOLD-}" = 1 ]; then
			case $1 in
			summary) ckpt-inspect -m -p "$d" ;;
			all) ckpt-inspect -m -a "$d/_metadata" ;;
			esac >"$DATA/flinkmeta/$d.$1.expected"
		fi
		cat "$DATA/flinkmeta/$d.$1.expected"
	done
}

@test "flinkmeta: the summary of every fixture" {
	needs_fixtures
	cd "$SP"
	[ "$(ls -d v* | wc -l)" -eq 26 ]
	run ckpt-inspect -m -p v*
	status_is 0
	goldens summary >"$BATS_TEST_TMPDIR/want"
	match_golden "$BATS_TEST_TMPDIR/want"
}

@test "flinkmeta: -a of every fixture" {
	needs_fixtures
	cd "$SP"
	run ckpt-inspect -m -a v*/_metadata
	status_is 0
	goldens all >"$BATS_TEST_TMPDIR/want"
	match_golden "$BATS_TEST_TMPDIR/want"
}

# directory | fmt | checkpoint id | operators | subtask entries | master states | properties | channel handles
oracle='v2-flink1.3-typeserializer-rocksdb-savepoint|2|11|3|3|0|-|0
v2-flink1.5-broadcast-memory-savepoint|2|20|8|20|0|-|0
v2-flink1.7-state-evolution-e2e-savepoint|2|65|2|2|0|-|0
v2-flink1.8-nonkeyed-chain-savepoint|2|53|4|16|0|-|0
v2-flink1.9-udf-rocksdb-savepoint|2|21|8|26|0|-|0
v3-flink1.11-udf-memory-savepoint|3|2|8|24|0|-|0
v3-flink1.12-complexkeyed-savepoint|3|1486|3|12|0|-|0
v3-flink1.12-legacy-raw-heap-timers-rocksdb-savepoint|3|1|4|10|0|-|0
v3-flink1.14-broadcast-rocksdb-savepoint|3|1|8|20|0|-|0
v3-flink1.15-scala-broadcast-rocksdb-checkpoint-unaligned|3|1|5|14|0|-|4
v3-flink1.15-udf-rocksdb-savepoint-native|3|2|8|24|0|-|0
v3-flink1.15dev-unified-sink-v1-savepoint|3|3|4|4|0|-|0
v4-flink1.16-typeserializer-rocksdb-checkpoint|4|2|3|3|0|Checkpoint|0
v4-flink1.17-udf-hashmap-checkpoint-changelog|4|2|8|20|0|Checkpoint|0
v4-flink1.17-udf-rocksdb-checkpoint-unaligned|4|1|8|26|0|Checkpoint|40
v4-flink1.18-table-over-aggregate-lag-savepoint|4|1|6|6|0|Suspend Savepoint, CANONICAL|0
v4-flink1.20-complexkeyed-savepoint|4|382|4|12|0|Savepoint, CANONICAL|0
v4-flink1.20-broadcast-rocksdb-savepoint-native|4|2|8|20|0|Savepoint, NATIVE|0
v4-table-group-aggregate-simple-savepoint|4|1|6|6|0|Suspend Savepoint, CANONICAL|0
v5-flink2.0-nonkeyed-chain-savepoint|5|54|5|16|0|Savepoint, CANONICAL|0
v5-flink2.0-udf-rocksdb-checkpoint|5|2|8|24|0|Checkpoint|0
v5-state-processor-table-state-checkpoint|5|2|7|12|1|Checkpoint|0
v5-state-processor-table-state-nulls|5|0|8|13|1|null object|0
v5-table-over-aggregate-unbounded-partitioned-rows-savepoint|5|1|7|7|0|Suspend Savepoint, CANONICAL|0
v6-table-ml-predict-async-unordered-savepoint|6|1|4|4|0|Suspend Savepoint, CANONICAL|0
v6-table-multi-join-three-way-inner-savepoint|6|1|6|6|0|Suspend Savepoint, CANONICAL|0'

@test "flinkmeta: every fixture gives the top-level values of SOURCES.md" {
	needs_fixtures
	filter='[.flink.format_version, .checkpoint_id, (.operators | length),
	  ([.operators[].subtasks[]] | length), (.flink.master_states | length),
	  (if (.flink | has("properties")) | not then "-" elif .flink.properties == null then "null object"
	   else .flink.properties.checkpoint_type | [.name, .format_type // empty] | join(", ") end),
	  ([.operators[].subtasks[].handles[]? | select(.scope | endswith("_channel"))] | length),
	  .flink.counts.subtask_entries, .flink.counts.input_channel_handles + .flink.counts.output_channel_handles]
	  | map(tostring) | join("|")'
	cd "$SP"
	run sh -c 'for d in $(echo "$2" | cut -d"|" -f1); do ckpt-inspect -m -a "$d" || exit; done | jq -r "$1"' sh "$filter" "$oracle"
	status_is 0
	# the file's own counts agree with what the document holds
	output_is "$(echo "$oracle" | cut -d'|' -f2- | awk -F'|' '{ print $0 "|" $4 "|" $7 }')"
}

@test "flinkmeta: operator details the fixtures' notes name" {
	needs_fixtures
	run sh -c 'ckpt-inspect -m "$1" | jq -c "[.operators[] | select(.coordinator_bytes) | .coordinator_bytes]"' sh \
		"$SP/v3-flink1.15dev-unified-sink-v1-savepoint"
	output_is '[16]'
	run sh -c 'ckpt-inspect -m -a "$1" | jq -c "[.operators[] | select(.fully_finished) | [.uid, .subtasks]],
	  .flink.master_states[0].name, .flink.master_states[0].payload_bytes"' sh "$SP/v5-state-processor-table-state-checkpoint"
	output_is '[["broadcast-source-uid",[]]]
"com.example.state.writer.job.masterstate.MasterTriggerRestoreHook"
8'
	run sh -c 'ckpt-inspect -m "$1" | jq -c "[.operators[] | [.uid, .name]] | sort"' sh "$SP/v5-flink2.0-nonkeyed-chain-savepoint"
	output_is '[[null,"Map"],[null,"Source: Custom Source"],["first","Map"],["second","Map"],["third","Map"]]'
	run sh -c 'ckpt-inspect -m "$1" | jq -c "[.operators[] | select(.id == \"01203aa9a12dc1ec725e03853dd7c8f2\") | .key_groups]"' sh \
		"$SP/v3-flink1.12-complexkeyed-savepoint"
	output_is '[{"0":"0-31","1":"32-63","2":"64-95","3":"96-127"}]'
	run sh -c 'ckpt-inspect -m "$1" | jq -c "[.operators[].states[] | [.name, .mode]] | unique"' sh \
		"$SP/v2-flink1.5-broadcast-memory-savepoint"
	output_is '[["broadcast-state-1","broadcast"],["broadcast-state-2","broadcast"],["broadcast-state-3","broadcast"],["source-state","list"],["source-state","union"]]'
	run sh -c 'ckpt-inspect -m -a "$1" | jq -c "[.operators[].subtasks[].handles[]? | select(.scope == \"managed_keyed\") | [.kind, (.non_materialized | map(.kind))]] | unique"' sh \
		"$SP/v4-flink1.17-udf-hashmap-checkpoint-changelog"
	output_is '[["changelog",["changelog_bytes"]]]'
	run sh -c 'ckpt-inspect -m -a "$1" | jq -c "[.operators[].subtasks[].handles[]? | select(.scope == \"output_channel\")][0] | [.subtask, .partition, .subpartition, .size, .delegate.kind]"' sh \
		"$SP/v4-flink1.17-udf-rocksdb-checkpoint-unaligned"
	output_is '[0,0,0,4,"relative_file"]'
	run sh -c 'ckpt-inspect -m "$1" | jq -c ".flink.counts.files, (.flink.files | length), .flink.kind_guess"' sh \
		"$SP/v4-flink1.17-udf-rocksdb-checkpoint-unaligned"
	output_is '85
85
null'
	run sh -c 'ckpt-inspect -m "$1" | jq -c ".flink.kind_guess.kind"' sh "$SP/v3-flink1.14-broadcast-rocksdb-savepoint"
	output_is '"savepoint"'
}

@test "flinkmeta: version 1 and legacy Checkpointed state are refused with Flink's words" {
	needs_fixtures
	cd "$SP"
	bad 2 'ckpt-inspect: unsupported-v1-flink1.2-complexkeyed-savepoint/_metadata: offset 4: this savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported' ckpt-inspect unsupported-v1-flink1.2-complexkeyed-savepoint
	bad 2 "ckpt-inspect: unsupported-v2-flink1.3-legacy-checkpointed-savepoint/_metadata: offset 204: legacy state (from Flink <= 1.1, created through the 'Checkpointed' interface) is no longer supported" ckpt-inspect -a unsupported-v2-flink1.3-legacy-checkpointed-savepoint/_metadata
}

# Each "$ " line of the EXAMPLES of ckpt-flink(5), run in the fixtures' directory, prints (stdout
# and stderr) exactly the lines shown under it.
@test "flinkmeta: the EXAMPLES of ckpt-flink(5) print what they show" {
	needs_fixtures
	local line cmd= want= got n=0
	cd "$SP"
	while IFS= read -r line; do
		if [[ $line == '$ '* || $line == .* ]]; then
			if [ -n "$cmd" ]; then
				got=$(sh -c "$cmd" 2>&1) || true
				if [ "$got" != "$want" ]; then
					printf 'command: %s\nshown:\n%s\nprinted:\n%s\n' "$cmd" "$want" "$got"
					return 1
				fi
				n=$((n + 1))
			fi
			cmd= want=
			if [[ $line == '$ '* ]]; then cmd=${line#\$ }; fi
		elif [ -n "$cmd" ]; then
			want+=${want:+$'\n'}$line
		fi
	done < <(sed -n '/^\.Sh EXAMPLES/,/^\.Sh SEE ALSO/p' "$ROOT/man/ckpt-flink.5")
	[ "$n" -eq 8 ]
}

@test "flinkmeta: a directory holding _metadata, the file itself and stdin give the same" {
	needs_fixtures
	d=v4-flink1.20-complexkeyed-savepoint
	cd "$SP"
	run sh -c 'ckpt-inspect -m "$1" | jq -c "del(.file)"' sh "$d"
	status_is 0
	want=$output
	[ "$(jq -c 'del(.file)' "$DATA/flinkmeta/$d.summary.expected")" = "$want" ]
	run sh -c 'ckpt-inspect -m "$1/_metadata" | jq -c "del(.file)"' sh "$d"
	output_is "$want"
	run sh -c 'ckpt-inspect -m < "$1/_metadata" | jq -c "del(.file)"' sh "$d"
	output_is "$want"
	run sh -c 'ckpt-inspect -m - < "$1/_metadata" | jq -r .file' sh "$d"
	output_is '<stdin>'
}

@test "flinkmeta: -u names operators by the ids Flink derives from uids, in every version" {
	needs_fixtures
	run sh -c 'ckpt-inspect -m -u first -u second -u third "$1" | jq -c ".uids"' sh "$SP/v2-flink1.8-nonkeyed-chain-savepoint"
	status_is 0
	output_is '[{"uid":"first","id":"adf090656b210b1609ad3203d4ee7329","operators":["adf090656b210b1609ad3203d4ee7329"]},{"uid":"second","id":"6730ef7375fb60f9d9bbdfdfd174d803","operators":["6730ef7375fb60f9d9bbdfdfd174d803"]},{"uid":"third","id":"013ef814c76e319e5fe9a82a3ba14933","operators":["013ef814c76e319e5fe9a82a3ba14933"]}]'
	run sh -c 'ckpt-inspect -m -u window "$1" | jq -c "[.operators[] | select(.matched_uid) | [.id, .matched_uid]]"' sh \
		"$SP/v3-flink1.12-complexkeyed-savepoint"
	output_is '[["01203aa9a12dc1ec725e03853dd7c8f2","window"]]'
	for u in CheckpointingSource1:69f32d314b97c6f7f9ed7873983167f2 \
		CheckpointingKeyedStateFlatMap1:d5c8b168c6cbfe8c507a10f88b325243 BrProcess1:12d7d939fd56473cac7cff0603179a41; do
		f=$SP/v2-flink1.9-udf-rocksdb-savepoint
		[ "${u%%:*}" = BrProcess1 ] && f=$SP/v2-flink1.5-broadcast-memory-savepoint
		run sh -c 'ckpt-inspect -m -u "$1" "$2" | jq -r ".uids[0].operators[0]"' sh "${u%%:*}" "$f"
		output_is "${u#*:}"
	done
	run sh -c 'ckpt-inspect -m -u 1c4ec0f9-2d96-46e9-99ea-45e8c3df5202 "$1" | jq -r ".uids[0].operators[0]"' sh \
		"$SP/v3-flink1.15dev-unified-sink-v1-savepoint"
	output_is 709a96cf35a587d849796342cfd36979
	cd "$SP"
	bad 1 'ckpt-inspect: v4-flink1.16-typeserializer-rocksdb-checkpoint: uid "nosuch" (operator id 245a7c5152266a38200c1fd720d17cac) names no operator' sh -c 'ckpt-inspect -m -u nosuch v4-flink1.16-typeserializer-rocksdb-checkpoint >/dev/null'
}

# Every stored uid of the v5/v6 fixtures hashes to the stored id (the decoder warns otherwise).
@test "flinkmeta: stored uids and ids agree" {
	needs_fixtures
	cd "$SP"
	for d in v5* v6*; do
		run sh -c 'ckpt-inspect -m "$1" | jq -c ".flink.warnings // []"' sh "$d"
		output_is '[]'
	done
	run sh -c 'ckpt-inspect -m "$1" | jq -r "[.operators[] | select(.uid == \"6_over-aggregate\") | .id][0]"' sh \
		v5-table-over-aggregate-unbounded-partitioned-rows-savepoint
	want=$output
	run sh -c 'ckpt-inspect -m -u 6_over-aggregate "$1" | jq -r ".uids[0].id"' sh v5-table-over-aggregate-unbounded-partitioned-rows-savepoint
	output_is "$want"
}

# A cut file never decodes: one line each naming the byte offset (or the file as no snapshot), exit 2.
check_cuts() {
	run ckpt-inspect -m c*
	status_is 2
	[ "${#lines[@]}" -eq "$1" ] || { echo "$1 files, ${#lines[@]} lines"; return 1; }
	run sh -c 'ckpt-inspect -m c* 2>&1 | grep -Ev "^ckpt-inspect: c[0-9]+: (offset [0-9]+: .+|empty input|not a snapshot: .+)$"'
	status_is 1
}

gen() {
	bash "$T/flinkmeta-helper.bash" "$@"
}

# (The three smallest fixtures: v4 with incremental handles and the Java trailer, v3 with
# coordinator state, v3 with channel state; the next test cuts every fixture at chosen places.)
@test "flinkmeta: _metadata cut at every length is refused" {
	needs_fixtures
	for d in v4-flink1.16-typeserializer-rocksdb-checkpoint v3-flink1.15dev-unified-sink-v1-savepoint \
		v3-flink1.15-scala-broadcast-rocksdb-checkpoint-unaligned; do
		rm -f c*
		gen fm_prefixes "$SP/$d/_metadata" c
		size=$(wc -c <"$SP/$d/_metadata")
		[ -f c$((size - 1)) ] && [ ! -f c$size ]
		check_cuts "$size" || { echo "in $d"; return 1; }
		run ckpt-inspect -m c$((size - 1))
		[[ $output == "ckpt-inspect: c$((size - 1)): offset "*": truncated "* ]]
	done
}

@test "flinkmeta: every fixture cut near its start, its end and at each eighth is refused" {
	needs_fixtures
	mkdir d
	gen fm_damage_all "$SP" d
	[ "$(ls d/*.c* | wc -l)" -eq $((26 * 59)) ]
	run ckpt-inspect -m d/*.c*
	status_is 2
	[ "${#lines[@]}" -eq $((26 * 59)) ]
	run sh -c 'ckpt-inspect -m d/*.c* 2>&1 | grep -Ev "^ckpt-inspect: d/v[^:]*\.c[0-9]+: (offset [0-9]+: .+|empty input|not a snapshot: .+)$"'
	status_is 1
}

@test "flinkmeta: _metadata with random bytes replaced never crashes (exit 0 or 2, one line per failure)" {
	needs_fixtures
	mkdir d
	gen fm_damage_all "$SP" d flips
	[ "$(ls d/*.m* | wc -l)" -eq $((26 * 8)) ]
	run ckpt-inspect -m d/*.m*
	[ "$status" -eq 0 ] || [ "$status" -eq 2 ] || { echo "status $status"; printf '%s\n' "$output"; return 1; }
	run sh -c 'ckpt-inspect -m d/*.m* 2>&1 >/dev/null | grep -Ev "^ckpt-inspect: d/v[^:]*\.m[0-9]+: [a-z]"'
	status_is 1
}

@test "flinkmeta: -c of a damaged or cut _metadata reports it (exit 1); of a version ckpt does not read, exit 2" {
	needs_fixtures
	mkdir sp
	head -c 100 "$SP/v4-flink1.16-typeserializer-rocksdb-checkpoint/_metadata" > sp/_metadata
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = 'ckpt-inspect: sp/_metadata: offset 20: operator count 3 is more than the remaining 76 bytes can hold' ]
	output_is '{"file":"sp","ok":false,"files":0,"bytes":0,"problems":[{"where":"sp/_metadata","problem":"offset 20: operator count 3 is more than the remaining 76 bytes can hold"}]}'
	bad 2 'ckpt-inspect: sp/_metadata: offset 20: operator count 3 is more than the remaining 76 bytes can hold' ckpt-inspect sp
	cd "$SP"
	bad 2 'ckpt-inspect: unsupported-v1-flink1.2-complexkeyed-savepoint/_metadata: offset 4: this savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported' ckpt-inspect -c unsupported-v1-flink1.2-complexkeyed-savepoint
}

# The end of a Java class descriptor's annotations (TC_ENDBLOCKDATA, 0x78) replaced by no token at all
# is damage, not a feature ckpt lacks (SavepointType's descriptor, offset 1315 of a Flink 1.19 native
# savepoint): -c exits 1.
@test "flinkmeta: a damaged Java class descriptor in the _metadata is damage at its byte, -c exits 1" {
	needs_fixtures
	[ -d "$FIXTURES/flink-artifacts" ] || skip "no flink-artifacts"
	cp -r "$FIXTURES/flink-artifacts/stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint-native" sp
	chmod -R u+w sp
	printf '\xf8' | dd of=sp/_metadata bs=1 seek=1315 conv=notrunc 2>/dev/null
	line='offset 1315: damaged Java class descriptor of org.apache.flink.runtime.checkpoint.SavepointType: byte 0xf8 where its annotations end (0x78)'
	bad 2 "ckpt-inspect: sp/_metadata: $line" ckpt-inspect sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = "ckpt-inspect: sp/_metadata: $line" ]
}

@test "flinkmeta: a trailing byte, a bad magic and an unknown version are refused" {
	needs_fixtures
	f=$SP/v3-flink1.12-complexkeyed-savepoint/_metadata
	{ cat "$f"; printf x; } >t
	bad 2 'ckpt-inspect: t: offset 18009: 1 unexpected bytes after the last operator' ckpt-inspect t
	f=$SP/v4-flink1.16-typeserializer-rocksdb-checkpoint/_metadata
	{ cat "$f"; printf x; } >t
	bad 2 'ckpt-inspect: t: offset 1281: 1 unexpected bytes after the checkpoint properties' ckpt-inspect t
	B=; b_i32 0x4960672d; b_i32 8; b_write v8
	bad 2 'ckpt-inspect: v8: offset 4: unrecognized checkpoint version number: 8' ckpt-inspect v8
}

# A header of format $1 (default 3): checkpoint id 9, no master states, one operator (named "Name"
# from v5 on) of parallelism 2, max parallelism 4.
v3_head() {
	B=; b_i32 0x4960672d; b_i32 "${1:-3}"; b_i64 9; b_i32 0; b_i32 1
	[ "${1:-3}" -ge 5 ] && { b_utf Name; b_utf ""; }
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 2; b_i32 4
}

@test "flinkmeta: a count larger than the file fails fast with a clear message" {
	B=; b_i32 0x4960672d; b_i32 3; b_i64 1; b_i32 0; b_i32 0x7fffffff; b_write big
	bad 2 'ckpt-inspect: big: offset 20: operator count 2147483647 is more than the remaining 0 bytes can hold' ckpt-inspect big
	v3_head; b_u8 0; b_i32 1; b_i32 0; b_i32 1; b_u8 4; b_i32 0x7fffffff; b_write big
	bad 2 'ckpt-inspect: big: offset 62: operator state count 2147483647 is more than the remaining 0 bytes can hold' ckpt-inspect big
}

@test "flinkmeta: synthetic v3: finished subtasks, fully finished operators, file handles, input channels" {
	v3_head
	b_u8 0        # no coordinator state
	b_i32 2       # two entries
	b_i32 -2      # subtask 1 finished
	b_i32 0       # subtask 0:
	b_i32 1; b_u8 4; b_i32 1; b_utf s; b_u8 1; b_i32 2; b_i64 0; b_i64 5  # union state "s", 2 offsets
	b_u8 2; b_i64 9; b_utf hdfs:/x/op                                       # in an absolute file
	b_i32 0                                                                 # no raw operator state
	b_u8 5; b_i64 3; b_utf backend; b_i32 0; b_i32 2                        # incremental (old form), kg 0-1
	b_u8 16; b_i32 1; b_utf 0.sst; b_u8 6; b_utf rel; b_i64 7; b_i32 0      # meta empty segment; shared 0.sst
	b_u8 0                                                                  # no raw keyed state
	b_i32 1; b_i32 0; b_i32 1; b_i32 2; b_i32 1; b_i64 0; b_i64 4           # input channel gate 1, channel 2
	b_u8 3; b_i32 0; b_i32 1; b_i64 0; b_u8 1; b_utf n; b_i32 1; b_u8 7     #   delegate: key groups as stream
	b_i32 0                                                                 # no output channels
	b_write m
	run sh -c 'ckpt-inspect -m -a m | jq -c ".operators[0] | [.id, .subtasks[].finished, (.subtasks[0].handles[] | [.scope, .kind, .size, .path])]"'
	status_is 0
	output_is '["0102030405060708090a0b0c0d0e0f10",false,true,["managed_operator","operator_stream",9,"hdfs:/x/op"],["managed_keyed","incremental",7,null],["input_channel","channel",4,null]]'
	run sh -c 'ckpt-inspect -m m | jq -c "(.operators[0] | [.finished_subtasks, .states, .key_groups, .in_flight_bytes]), .flink.files"'
	output_is '["1",[{"name":"s","mode":"union","entries":2,"bytes":9}],{"0":"0-1"},4]
[{"path":"hdfs:/x/op","kind":"file","size":9},{"path":"rel","kind":"relative_file","size":7}]'
	# the same operator fully finished: no entries may follow, and no coordinator state
	v3_head; b_u8 0; b_i32 -1; b_write ff
	run sh -c 'ckpt-inspect -m -a ff | jq -c ".operators[0] | [.fully_finished, .subtasks]"'
	output_is '[true,[]]'
	v3_head; b_u8 1; b_utf c; b_i32 1; b_u8 0; b_i32 -1; b_write ffc
	bad 2 'ckpt-inspect: ffc: offset 57: fully finished operator 0102030405060708090a0b0c0d0e0f10 has coordinator state' ckpt-inspect ffc
}

@test "flinkmeta: synthetic v6 merged channels and v7 reference checkpoint ids" {
	for v in 6 7; do
		v3_head $v
		b_u8 0; b_i32 1; b_i32 1                        # no coordinator state; subtask 1:
		b_i32 0; b_i32 0; b_u8 0; b_u8 0                # no operator or keyed state
		b_i32 0                                         # no input channels
		b_i32 1; b_u8 4; b_i32 1; b_i64 12              # one merged output handle, 12 bytes
		b_u8 6; b_utf chan; b_i64 12                    #   in relative file "chan"
		b_i32 52                                        #   52 bytes of channel offsets:
		b_i32 2; b_i32 0; b_i32 3; b_i64 5; b_i32 0     #   partition 0/3: 5 bytes, no offsets
		b_i32 0; b_i32 4; b_i64 7; b_i32 1; b_i64 5     #   partition 0/4: 7 bytes at 5
		[ $v = 7 ] && { b_u8 1; b_i64 4; }              # v7: reference checkpoint 4
		b_u8 0xac; b_u8 0xed; b_i16 5; b_u8 0x70        # null properties
		b_write m$v
		run sh -c 'ckpt-inspect -m -a "$1" | jq -c "[.operators[0].name, (.operators[0].subtasks[0].handles[0] | .kind, .size, .path, (.channels | map([.subpartition, .size])))], .flink.ref_checkpoint_ids"' sh m$v
		status_is 0
		[ "${lines[0]}" = '["Name","merged_channels",12,"chan",[[3,5],[4,7]]]' ]
	done
	[ "$output" = '["Name","merged_channels",12,"chan",[[3,5],[4,7]]]
[{"operator":"0102030405060708090a0b0c0d0e0f10","subtask":1,"ref_checkpoint_id":4}]' ]
	run sh -c 'ckpt-inspect -m m6 | jq -c ".operators[0].in_flight_bytes, .flink.properties, .flink.ref_checkpoint_ids"'
	output_is '12
null
null'
}

@test "flinkmeta: nesting is bounded: changelog handles, Java objects, a Java object holding itself" {
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1; b_i64 1; b_i64 2; b_i32 1; b_i32 1
	b_u8 0; b_i32 1; b_i32 0; b_i32 0; b_i32 0
	for ((i = 0; i < 40; i++)); do b_u8 14; b_i32 0; b_i32 1; b_i64 0; b_i32 1; done
	b_write deep
	bad 2 'ckpt-inspect: deep: offset 401: keyed state handles nested more than 16 deep' ckpt-inspect deep
	# class C { C f; }, 40 deep; then one whose field refers to the object itself (handle 0x7e0002)
	java() { B=; b_i32 0x4960672d; b_i32 4; b_i64 9; b_i32 0; b_i32 0; b_u8 0xac; b_u8 0xed; b_i16 5; }
	obj() { b_u8 0x73; b_u8 0x72; b_utf C; b_i64 1; b_u8 2; b_i16 1; b_u8 76; b_utf f; b_u8 0x74; b_utf 'LC;'; b_u8 0x78; b_u8 0x70; }
	java; for ((i = 0; i < 40; i++)); do obj; done; b_write jdeep
	bad 2 'ckpt-inspect: jdeep: offset 440: Java objects nested more than 16 deep' ckpt-inspect jdeep
	java; obj; b_u8 0x71; b_i32 0x7e0002; b_write jcycle
	bad 2 'ckpt-inspect: jcycle: offset 56: Java object refers to itself' ckpt-inspect jcycle
}

@test "flinkmeta: checkpoint properties whose field \"class\" hides the object's class are refused (was a crash)" {
	B=; b_i32 0x4960672d; b_i32 4; b_i64 9; b_i32 0; b_i32 0; b_u8 0xac; b_u8 0xed; b_i16 5
	b_u8 0x73; b_u8 0x72; b_utf X; b_i64 1; b_u8 2; b_i16 1; b_u8 76; b_utf class; b_u8 0x74; b_utf 'LX;'
	b_u8 0x78; b_u8 0x70; b_u8 0x70
	b_write classfield
	run sh -c 'ckpt-inspect classfield 2>/dev/null'
	status_is 2
	[ "$output" = "" ]
	bad 2 'ckpt-inspect: classfield: offset 24: checkpoint properties of unexpected class (hidden by a field "class")' ckpt-inspect classfield
}
