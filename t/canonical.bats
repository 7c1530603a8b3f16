#!/usr/bin/env bats
# ckpt-merge --canonical -o OUT/ SNAPSHOT (issue 40 section 1): any form of a Flink snapshot ckpt reads
# written as a canonical savepoint.  The oracle is Flink's own canonical savepoint of the same job
# ($FIXTURES/flink-artifacts: each job at each release in six forms, SOURCES.md there): -R of every
# converted form equals -R of the job's canonical hashmap-savepoint.  Flink restoring conversions:
# t/flink/canonical.bats.

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper

ART=${FIXTURES:+$FIXTURES/flink-artifacts}

# REFUSED: the forms --canonical refuses, one row a line: a bash pattern of directory names and the
# end of the one line ckpt-merge prints (exit 1).  The Scala jobs' heap forms keep Kryo-serialized
# state, which has no lengths in a heap snapshot and which ckpt cannot walk (the state is named);
# the Flink 1.17 and 1.19 changelog forms have no materialized part and, in subtask 1, no timer
# state: their changelog records no key serializer there.
REFUSED='
stateful-scala-udf-migration-itcase-flink1.15-hashmap-checkpoint : state "tryState" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-udf-migration-itcase-flink1.15-hashmap-savepoint-native : state "tryState" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-udf-migration-itcase-flink1.17-hashmap-checkpoint : state "caseClassState" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-udf-migration-itcase-flink1.17-hashmap-savepoint-native : state "caseClassState" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint-native : state "caseClassState" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-with-broadcast-udf-migration-itcase-flink1.15-hashmap-checkpoint : state "_timer_state/event_user-timers" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-with-broadcast-udf-migration-itcase-flink1.15-hashmap-savepoint-native : state "_timer_state/event_user-timers" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-with-broadcast-udf-migration-itcase-flink1.17-hashmap-checkpoint : state "_timer_state/processing_user-timers" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-with-broadcast-udf-migration-itcase-flink1.1[79]-hashmap-savepoint-native : state "_timer_state/processing_user-timers" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes
stateful-scala-with-broadcast-udf-migration-itcase-flink1.19-hashmap-checkpoint : operator add2ad1ab50ccfbdd5ddb85805c0d0d1 subtask 1: state "caseClassState" of a changelog cannot go into a savepoint'"'"'s keyed header: the changelog records no key serializer (no materialized part, no timer state)
stateful-scala-udf-migration-itcase-flink1.19-hashmap-checkpoint : operator d1392353922252257afa15351a98bae9 subtask 1: state "caseClassState" of a changelog cannot go into a savepoint'"'"'s keyed header: the changelog records no key serializer (no materialized part, no timer state)
new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint : operator d5c8b168c6cbfe8c507a10f88b325243 subtask 1: state "state-name" of a changelog cannot go into a savepoint'"'"'s keyed header: the changelog records no key serializer (no materialized part, no timer state)
'

needs_artifacts() {
	needs_fixtures || return
	[ -d "$ART" ] && return 0
	[ "${CI-}" = true ] && { echo "no flink-artifacts/ in $FIXTURES; CI=true requires it"; return 1; }
	skip "no flink-artifacts/ in $FIXTURES (set CKPT_FIXTURES)"
}

# refusal NAME: the end of the line --canonical refuses NAME with, or nothing.
refusal() {
	local line pat
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		pat=${line%% : *}
		pat=${pat%"${pat##*[! ]}"}
		# shellcheck disable=SC2053
		[[ $1 == $pat ]] && { echo "${line#* : }"; return; }
	done <<<"$REFUSED"
}

# reference NAME: the canonical hashmap-savepoint of NAME's job and release.
reference() {
	local n=${1%-savepoint-native}
	n=${n%-checkpoint}
	n=${n%-savepoint}
	echo "${n%-*}-hashmap-savepoint"
}

# rows DIR: ckpt-inspect -R of DIR, sorted (entries within a state's key group come in the order of
# the backend that wrote them: RocksDB's by key, the heap's by its hash table), the timestamps of
# processing-time timers left out (each form was written by a run of its own, with its own clock).
rows() {
	ckpt-inspect -R "$1" | sed -E '/"state":"_timer_state\/processing_/s/"value":-?[0-9]+/"value":"TIME"/' | sort
}

# nothing_written: no output and no temporary directory beside it.
nothing_written() {
	run ls -A
	[ "$(printf '%s\n' "$output" | grep -c "^out")" -eq 0 ] || { echo "left behind: $output"; return 1; }
}

@test "canonical: every form of every job becomes a canonical savepoint whose -R is that of Flink's canonical savepoint (or is refused, naming why)" {
	needs_artifacts
	local d n why ref done=0 refused=0 err
	for d in "$ART"/*/; do
		d=${d%/}
		n=${d##*/}
		why=$(refusal "$n")
		run --separate-stderr ckpt-merge --canonical -o "$n/" "$d"
		if [ -n "$why" ]; then
			[ "$status" -eq 1 ] && [[ $stderr == "ckpt-merge: "*"$why" ]] && [ ! -e "$n" ] ||
				{ echo "$n: expected the refusal ...$why; got status $status: $stderr"; return 1; }
			refused=$((refused + 1))
			continue
		fi
		[ "$status" -eq 0 ] && [ -z "$output" ] && [ -z "$stderr" ] || { echo "$n: status $status: $stderr"; return 1; }
		ref=$(reference "$n")
		err=$(diff <(rows "$ART/$ref") <(rows "$n") | head -5) || { echo "$n: rows differ from $ref: $err"; return 1; }
		rm -rf "$n"
		done=$((done + 1))
	done
	[ "$done" -eq 59 ] && [ "$refused" -eq 13 ] || { echo "converted $done, refused $refused"; return 1; }
	nothing_written
}

@test "canonical: each converted form is a canonical savepoint: its keyed handles KeyGroupsSavepointStateHandle, its properties a CANONICAL savepoint's, -c clean" {
	needs_artifacts
	local f
	for f in hashmap-checkpoint hashmap-savepoint-native rocksdb-checkpoint rocksdb-savepoint-native; do
		ckpt-merge --canonical -o "$f/" "$ART/new-stateful-udf-migration-itcase-flink1.19-$f"
		run ckpt-inspect -a "$f"
		status_is 0
		[ "$(jq -r '[.operators[].subtasks[]?.handles[]? | select(.scope == "managed_keyed") | .kind] | unique | join(",")' <<<"$output")" = savepoint_key_groups ]
		[ "$(jq -c '[.kind, .flink.properties.checkpoint_type.format_type, .flink.properties.discard_subsumed]' <<<"$output")" = '["savepoint","CANONICAL",false]' ]
		run ckpt-inspect -c "$f"
		status_is 0
	done
}

@test "canonical: a heap checkpoint's key group written byte for byte as Flink's heap savepoint writes it" {
	needs_artifacts
	ckpt-merge --canonical -o out/ "$ART/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint"
	cmp out/keyed-d5c8b168c6cbfe8c507a10f88b325243-1 \
		"$ART/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint/19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5"
}

@test "canonical: usage: -o DIR/ needed, not standard input" {
	needs_artifacts
	ln -s "$ART/new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint" chk
	bad 2 "ckpt-merge: --canonical writes a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" ckpt-merge --canonical chk
	bad 2 "ckpt-merge: --canonical writes a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" \
		ckpt-merge --canonical -o out.tar chk
	bad 2 "ckpt-merge: --canonical needs the savepoint (its directory or its _metadata), not standard input (see ckpt-merge -h)" \
		sh -c 'ckpt-merge --canonical -o out/ < chk/_metadata'
	nothing_written
}

@test "canonical: cut and flipped sources exit 2 with one line, nothing written" {
	needs_artifacts
	local f
	cp -r "$ART/new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint" heap
	cp -r "$ART/new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint" rocks
	chmod -R u+w heap rocks
	f=a3b4de73-e952-4c56-aef2-e95bd4b10bee
	cp heap/$f orig
	truncate -s 520 heap/$f
	bad 2 "ckpt-merge: heap/$f: short: 520 bytes, the _metadata records 532" ckpt-merge --canonical -o out/ heap
	cp orig heap/$f
	printf '\177' | dd of=heap/$f bs=1 seek=515 conv=notrunc 2>/dev/null
	bad 2 "ckpt-merge: heap/$f: offset 516: namespace byte 127 (0 expected)" ckpt-merge --canonical -o out/ heap
	f=28eaa4a0-d5ee-41b1-a2ef-a5bfe18bb67d
	truncate -s 900 rocks/$f
	bad 2 "ckpt-merge: rocks/$f: short: 900 bytes, the _metadata records 1029" ckpt-merge --canonical -o out/ rocks
	cp "$ART/new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint/$f" rocks/$f
	f=93a05e04-5651-4454-a5d4-76bd530f61b0
	printf '\377' | dd of=rocks/$f bs=1 seek=20 conv=notrunc 2>/dev/null
	run --separate-stderr ckpt-merge --canonical -o out/ rocks
	status_is 2
	[ -z "$output" ]
	[[ $stderr == "ckpt-merge: rocks/$f: cannot read: rocksdb: Corruption: block checksum mismatch:"* ]]
	mkdir cut
	head -c 1000 heap/_metadata >cut/_metadata
	bad 2 "ckpt-merge: cut/_metadata: offset 995: 1 offsets are more than the remaining 5 bytes can hold" \
		ckpt-merge --canonical -o out/ cut
	nothing_written
}

@test "canonical: the --canonical EXAMPLE of ckpt-merge(1) runs as shown" {
	needs_artifacts
	ln -s "$ART/new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint" chk-2
	run ckpt-merge --canonical -o sp/ chk-2
	status_is 0
	output_is ""
	run sh -c "ckpt-inspect sp | jq -c '[.kind, .flink.properties.checkpoint_type.format_type]'"
	output_is '["savepoint","CANONICAL"]'
	run sh -c 'ckpt-inspect -c sp | jq -c .ok'
	output_is true
}

@test "canonical: with --max-parallelism, a RocksDB incremental checkpoint becomes a canonical savepoint at the new max parallelism" {
	needs_artifacts
	local chk=$ART/new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint
	ckpt-merge --canonical --max-parallelism 200 -o out/ "$chk"
	[ "$(ckpt-inspect out | jq -c '[.operators[].max_parallelism] | unique')" = '[200]' ]
	ckpt-inspect -R "$chk" | jq -c 'del(.subtask, .key_group)' | sort >in.rows
	[ -s in.rows ]
	ckpt-inspect -R out | jq -c 'del(.subtask, .key_group)' | sort | diff -u in.rows -
	run ckpt-inspect -R -u d5c8b168c6cbfe8c507a10f88b325243 -k '[3]' out
	[ "$(jq -c '[.key, .key_group]' <<<"$output" | sort -u)" = '[[3],105]' ]
}

@test "canonical: with -P, a RocksDB incremental checkpoint becomes a canonical savepoint, its keyed and stateless operators at the new parallelism" {
	needs_artifacts
	local j=$ART/new-stateful-udf-migration-itcase-flink1.19
	ckpt-merge --canonical -P 3 -o out/ "$j-rocksdb-checkpoint"
	run sh -c "ckpt-inspect -m out | jq -c '[.operators[] | [.parallelism, .subtasks, .key_groups]]'"
	output_is '[[1,1,{}],[3,3,{"0":"0-1","1":"2","2":"3"}],[3,3,{"0":"0-1","1":"2","2":"3"}],[3,0,{}],[3,0,{}],[3,3,{"0":"0-1","1":"2","2":"3"}],[3,3,{"0":"0-1","1":"2","2":"3"}],[1,1,{}]]'
	diff <(ckpt-inspect -R "$j-rocksdb-checkpoint" | jq -c 'del(.subtask)' | sort) <(ckpt-inspect -R out | jq -c 'del(.subtask)' | sort)
	ckpt-inspect -c out | jq -e .ok >/dev/null
}

@test "canonical: --canonical, --max-parallelism and --rows stopped by SIGINT, SIGTERM or SIGHUP midway leave no OUT.tmp.XXXXXX, exit 128+signal" {
	kv_spread 300000
	ckpt-inspect -R sp >rows.ndjson
	for sig in INT:130 TERM:143 HUP:129; do
		for how in --canonical "--max-parallelism 256" "--rows rows.ndjson"; do
			# shellcheck disable=SC2086
			killed_writing "${sig%:*}" 'out.tmp.*/*' ckpt-merge $how -o out/ sp
			[ "$st" -eq "${sig#*:}" ] || { echo "$how, SIG${sig%:*}: exit $st"; return 1; }
			nothing_written
			[ ! -s killed.out ] && [ ! -s killed.err ]
		done
	done
}

# A changelog checkpoint (flinkstate-helper's cl_dir): a materialized heap part holding "count",
# then changes registering "seen" and "m" (metadata changes) and changing all three.  Its keyed
# header is made of the materialized part's and the metadata changes'; its entries are the rows.
@test "canonical: a changelog checkpoint (materialized part and changes) becomes a canonical savepoint holding its rows" {
	cl_dir
	ckpt-merge --canonical -o out/ cl
	ckpt-inspect -R cl | jq -c 'del(.subtask)' | sort >in.rows
	[ "$(grep -c key_group in.rows)" -eq 4 ]
	run sh -c 'ckpt-inspect -R out | jq -c "del(.subtask)" | sort'
	status_is 0
	output_is "$(cat in.rows)"
	run sh -c 'ckpt-inspect -a out | jq -c "[.operators[].subtasks[].handles[] | select(.scope == \"managed_keyed\") | .kind]"
		ckpt-inspect out | jq -c "[.operators[0].flink_state.states[] | .name]"'
	output_is '["savepoint_key_groups"]
["names","count","seen","m"]'
	run ckpt-inspect -c out
	status_is 0
}

@test "canonical: a changelog state whose meta info ckpt cannot read is refused naming it, a RocksDB materialized part without its meta data handle exits 2; nothing written" {
	CL_CUSTOM=1 cl_dir
	bad 1 'ckpt-merge: cl/_metadata: operator 0102030405060708090a0b0c0d0e0f10 subtask 0: state "blob" of a changelog cannot go into a savepoint'"'"'s keyed header: the VALUE_SERIALIZER of state "blob" is a x.CustomSerializer$Snapshot, whose snapshot ckpt cannot step over' \
		ckpt-merge --canonical -o out/ cl
	nothing_written
	cl_dir rocksdb
	bad 2 "ckpt-merge: cl/_metadata: operator 0102030405060708090a0b0c0d0e0f10 subtask 0: a handle without data" \
		ckpt-merge --canonical -o out/ cl
	nothing_written
}

# --drop of the operators whose changelog records no key serializer (REFUSED above): they are not read
# (a dropped operator's state is not the output's), the rest converts, at a new max parallelism too,
# holding the rows of Flink's own canonical savepoint of the job but for theirs.
@test "canonical: a changelog checkpoint with its unconvertible operators dropped converts the rest, as Flink's canonical savepoint holds it" {
	needs_artifacts
	local j=$ART/new-stateful-udf-migration-itcase-flink1.17 a=d5c8b168c6cbfe8c507a10f88b325243 b=dab25811652d3d4983a30c6e4afacb1c
	bad 1 "ckpt-merge: $j-hashmap-checkpoint/_metadata: operator $b subtask 1: state \"state-name\" of a changelog cannot go into a savepoint's keyed header: the changelog records no key serializer (no materialized part, no timer state)" \
		ckpt-merge --canonical --drop "$a" -o out/ "$j-hashmap-checkpoint"
	nothing_written
	rows "$j-hashmap-savepoint" | grep -v -e "\"operator\":\"$a\"" -e "\"operator\":\"$b\"" >want.rows
	[ "$(grep -c key_group want.rows)" -gt 0 ]
	ckpt-merge --canonical --drop "$a" --drop "$b" -o out/ "$j-hashmap-checkpoint"
	run rows out
	output_is "$(cat want.rows)"
	ckpt-merge --canonical --drop "$a" --drop "$b" --max-parallelism 8 -o out8/ "$j-hashmap-checkpoint"
	[ "$(ckpt-inspect out8 | jq -c '[.operators[].max_parallelism] | unique')" = '[8]' ]
	diff <(ckpt-inspect -R out | jq -c 'del(.key_group, .subtask)' | sort) <(ckpt-inspect -R out8 | jq -c 'del(.key_group, .subtask)' | sort)
}
