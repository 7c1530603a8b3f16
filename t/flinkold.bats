#!/usr/bin/env bats
# Flink 1.3 to 1.6 state headers (ckpt-flink(5), Headers of Flink 1.3 to 1.6): serializers
# Java-serialized with their config snapshots.  The fixtures' typed entries against goldens, the
# summary against -a, and savepoints made here from the fixtures' own header bytes: cut, damaged,
# and a keyed header rebuilt from their serializers so that its entries type.
#
# Goldens are regenerated (after checking the change is intended) with
#   CKPT_REGOLD=1 CKPT_BIN=$PWD/bin bats t/flinkold.bats

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper

SP=${FIXTURES:+$FIXTURES/flink-savepoints}
F13=v2-flink1.3-typeserializer-rocksdb-savepoint
F15=v2-flink1.5-broadcast-memory-savepoint

# The typed entries of -a: per operator with state, per subtask, its operator state and keyed entries.
ENTRIES='[.operators[] | select(any(.subtasks[]; (.operator_state // {}) != {} or .keyed_state.entries)) |
	{id, subtasks: [.subtasks[] | {index, operator_state, keyed: .keyed_state.entries}]}]'

# inline FIXTURE HANDLE SIZE OUT: the bytes of the inline handle named HANDLE (SIZE bytes) of a fixture.
inline() {
	local f=$SP/$1/_metadata at
	at=$(grep -obUaF "$2" "$f" | cut -d: -f1)
	tail -c +$((at + ${#2} + 5)) "$f" | head -c "$3" >"$4"
}

# sp/: the 1.5 fixture's union list state (header version 3, elements from 417) as its operator
# state file and the 1.3 fixture's keyed state (header version 3, key group 0 at 2359) as its keyed
# one, beside a _metadata naming them (max parallelism 1, key group 0).
old_sp() {
	mkdir -p sp
	inline $F15 a72b82b5-3237-4b6e-8f8e-12806e3425cd 511 sp/op
	inline $F13 87d7fee8-1019-45ff-aef7-5403cdcb639f 2467 sp/kv
	KV_OFF=(2359) KV_KGS=0 KG_TAG=3 KG_FIRST=0 KG_COUNT=1 OP_STATES=source-state:417,434,456,482
	(cd sp && meta_file "rel op" "rel kv" .)
	B=; b_i32 1; printf '%b' "$B" | dd of=sp/_metadata bs=1 seek=44 conv=notrunc status=none
}

# The part [FROM, FROM + N) of file F, appended to B.
b_part() {
	B+=$(tail -c +$(($2 + 1)) "$1" | head -c "$3" | od -An -v -tx1 | tr -d ' \n' | sed 's/../\\x&/g')
}

@test "flinkold: the 1.5 fixture's list, union and broadcast states and the 1.3 fixture's list state are typed" {
	needs_fixtures
	run sh -c 'ckpt-inspect -a "$1" | jq -c "$2"' sh "$SP/$F15" "$ENTRIES"
	status_is 0
	match_golden "$DATA/flinkold/$F15.entries.expected"
	run sh -c 'ckpt-inspect -a "$1" | jq -c "$2"' sh "$SP/$F13" "$ENTRIES"
	status_is 0
	match_golden "$DATA/flinkold/$F13.entries.expected"
}

@test "flinkold: a serializer ckpt does not know is named as the reason, its entries keep their bytes" {
	needs_fixtures
	run sh -c 'ckpt-inspect -a "$1" | jq -c "[.operators[].subtasks[].keyed_state.entries // empty | .[] |
		{state, key, untyped}] | map(.key |= type) | unique"' sh "$SP/$F13"
	status_is 0
	output_is '[{"state":"testState","key":"object","untyped":"org.apache.flink.test.migration.TypeSerializerSnapshotMigrationITCase$TestSerializer"}]'
	run sh -c 'ckpt-inspect "$1" | jq -c "[.operators[].flink_state | .not_read // empty], .operators[0].flink_state.key_serializer"' sh "$SP/$F13"
	status_is 0
	output_is '[]
{"class":"org.apache.flink.api.java.typeutils.runtime.TupleSerializer","nested":["org.apache.flink.api.common.typeutils.base.LongSerializer"]}'
}

@test "flinkold: the summary's entries and bytes are those -a and --raw print" {
	needs_fixtures
	local f
	for f in $F13 $F15; do
		# per state: entries and bytes, from the summary and from the raw entries of --raw -a
		run sh -c 'ckpt-inspect "$1" | jq -c "[.operators[] | .id as \$o | .flink_state.states[] |
			{o: \$o, name, entries, bytes}] | sort"' sh "$SP/$f"
		status_is 0
		local want=$output
		run sh -c 'ckpt-inspect --raw -a "$1" | jq -c "
			def n: if type == \"string\" then utf8bytelength
				else .base64 | length * 3 / 4 - ([scan(\"=\")] | length) end;
			[.operators[] | .id as \$o | .subtasks[] |
			 ((.operator_state // {} | to_entries[] | {o: \$o, name: .key, n: (.value.entries | length),
			   b: ([.value.entries[] | n] | add)}),
			  (.keyed_state.entries // [] | .[] | {o: \$o, name: .state, n: 1, b: ((.key | n) + (.value | n))}))] |
			group_by([.o, .name]) | map({o: .[0].o, name: .[0].name, entries: (map(.n) | add),
			bytes: (map(.b) | add)}) | sort"' sh "$SP/$f"
		status_is 0
		[ "$output" = "$want" ] || { echo "$f: summary $want"; echo "$f: -a      $output"; return 1; }
		[ "$(jq length <<<"$want")" -ge 1 ]
	done
}

@test "flinkold: old headers beside their data in files: typed, and the same through -R" {
	needs_fixtures
	old_sp
	run sh -c 'ckpt-inspect -a sp | jq -c ".operators[0].subtasks[0].operator_state"'
	status_is 0
	output_is '{"source-state":{"mode":"list","entries":["Here be dragons!","Here be more dragons!","Here be yet more dragons!","Here be the mostest dragons!"]}}'
	run sh -c 'ckpt-inspect -R sp | jq -c "select(.state == \"source-state\") | .value"'
	status_is 0
	output_is '"Here be dragons!"
"Here be more dragons!"
"Here be yet more dragons!"
"Here be the mostest dragons!"'
	run ckpt-inspect -c sp
	status_is 0
}

@test "flinkold: a keyed header of version 3 whose serializers ckpt knows types its entries" {
	needs_fixtures
	old_sp
	# the 1.3 fixture's header with the key's pair (TupleSerializer of a LongSerializer) as the value's
	local kv=sp/kv.13 key ns
	mv sp/kv $kv
	B=; b_part $kv 0 4                       # version 3
	b_part $kv 4 $((16 + 0x542))             # the key serializer's list
	b_i16 1; b_i32 1; b_utf testState        # one value state
	b_i32 2; b_i32 0; b_i32 0xe7; b_i32 0x170; b_i32 $((0x170 + 0x2e0)); b_i32 $((0x170 + 0x542))
	b_part $kv 1407 $((0x170))               # the namespace's pair: VoidNamespaceSerializer
	b_part $kv 20 $((0x542))                 # the key's pair
	key=$(blen)
	b_part $kv 2359 108                      # key group 0, as it was
	b_write sp/kv
	KV_OFF=($key) KG_FOR=
	(cd sp && meta_file "rel op" "rel kv" .)
	B=; b_i32 1; printf '%b' "$B" | dd of=sp/_metadata bs=1 seek=44 conv=notrunc status=none
	run sh -c 'ckpt-inspect -a sp | jq -c ".operators[0].subtasks[0].keyed_state.entries[]"'
	status_is 0
	output_is '{"state":"testState","key_group":0,"key":[0],"namespace":null,"value":[0]}
{"state":"testState","key_group":0,"key":[1],"namespace":null,"value":[1]}
{"state":"testState","key_group":0,"key":[2],"namespace":null,"value":[2]}
{"state":"testState","key_group":0,"key":[3],"namespace":null,"value":[3]}'
	run sh -c 'ckpt-inspect -k "[2]" -R sp | jq -c "[.state, .key, .value]"'
	status_is 0
	output_is '["testState",[2],[2]]'
}

@test "flinkold: a cut old header: one line naming the file and the offset, nothing on stdout" {
	needs_fixtures
	old_sp
	head -c 200 sp/op >cut && mv cut sp/op
	set_size "$(size_at op)" 200
	bad 2 "ckpt-inspect: sp/op: offset 37: serializers and config snapshots of 378 bytes, more than the 163 left" \
		ckpt-inspect -a sp
	old_sp
	head -c 1400 sp/kv >cut && mv cut sp/kv
	set_size "$(size_at kv)" 1400
	bad 2 "ckpt-inspect: sp/kv: offset 1400: truncated config snapshot offset" \
		ckpt-inspect sp
}

@test "flinkold: a damaged Java-serialized serializer in an old header is refused with its offset" {
	needs_fixtures
	old_sp
	cp sp/op whole
	flip sp/op 45
	bad 2 "ckpt-inspect: sp/op: offset 45: Java-serialized serializer: not a Java serialization stream (0xaded0005, want 0xaced0005)" \
		ckpt-inspect -a sp
	cp whole sp/op
	flip sp/op 49
	bad 2 "ckpt-inspect: sp/op: offset 49: Java-serialized serializer: unsupported Java serialization token 0x72" \
		ckpt-inspect -a sp
	cp whole sp/op
	flip sp/op 32 # the config snapshot's offset
	bad 2 "ckpt-inspect: sp/op: offset 273: config snapshot 0 at offset 237 of its list, but its serializer ends at 236" \
		ckpt-inspect -a sp
	cp whole sp/op
	printf '\x01' | dd of=sp/op bs=1 seek=3 conv=notrunc status=none # version 1: Flink 1.2's, not read
	run --separate-stderr sh -c 'ckpt-inspect sp | jq -c ".operators[0].flink_state.not_read"'
	status_is 0
	output_is '["operator state header version 1 (Flink 1.2) is not read"]'
	cp whole sp/op
	# the keyed header's key serializer, a TupleSerializer: its arity (after the class descriptors) made 0
	at=$(grep -obUaP '\x78\x70\x00\x00\x00\x01\x00\x00\x00\x08' sp/kv | head -1 | cut -d: -f1)
	flip sp/kv $((at + 5))
	bad 2 "ckpt-inspect: sp/kv: offset 32: Java-serialized serializer: org.apache.flink.api.java.typeutils.runtime.TupleSerializer of arity 0 with 1 field serializers" \
		ckpt-inspect -a sp
}

@test "flinkold: old headers cut at every length: refused with one line naming the file and an offset" {
	needs_fixtures
	old_sp
	bash -c '. "$1/flinkstate-helper.bash"; cut_runs old op 0; cut_runs old kv 0' sh "$T" >lines
	run grep -c "^old [0-9]*: ckpt-inspect: sp/" lines
	output_is 2978
	run grep -v "^old [0-9]*: " lines
	output_is ''
}
