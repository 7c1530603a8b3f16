#!/usr/bin/env bats
# Keyed state inside RocksDB handles (ckpt-flink(5), ROCKSDB): incremental checkpoints and native
# savepoints read through RocksDB, typed as the canonical layout is; -c and damaged SST files.

bats_require_minimum_version 1.5.0
load helper

ART() {
	echo "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink$1-$2"
}

# The typed keyed entries, sorted: operator, state, key group, typed form.  Processing-time timers
# hold the wall clock of each run, so their timestamps are left out.
typed() {
	ckpt-inspect -a "$1" | jq -c '[.operators[] | .id as $o | .subtasks[] | .keyed_state.entries[]? |
		[$o, .state, .key_group, .typed] |
		if .[1] == "_timer_state/processing_timer" then .[3].timestamp = "wall clock" else . end] | sort | .[]'
}

# The fixture copied, to damage.  The SST 000016.sst of operator 41e91aae... subtask 1.
SST=08aafd2d-e900-4956-b8f7-e45241cef160
copy() {
	cp -r "$(ART 1.17 rocksdb-checkpoint)" ck
}

# check_finds FILTER TEXT: ckpt-inspect -c ck exits 1, and jq -cr FILTER makes TEXT of what it found.
check_finds() {
	run --separate-stderr ckpt-inspect -c ck
	status_is 1 || return
	run jq -cr "$1" <<<"$output"
	output_is "$2"
}

@test "flinkrocksdb: -a of the incremental checkpoint and the native savepoint gives the hashmap savepoint's entries" {
	needs_fixtures
	for v in 1.17 1.19; do
		typed "$(ART $v hashmap-savepoint)" >want
		[ "$(wc -l <want)" -eq 32 ]
		for f in rocksdb-checkpoint rocksdb-savepoint-native; do
			run typed "$(ART $v $f)"
			status_is 0
			match_golden want
		done
	done
}

@test "flinkrocksdb: the RocksDB entries come in the canonical savepoint's order, byte for byte" {
	needs_fixtures
	raw() {
		ckpt-inspect -a "$1" | jq -c '.operators[] | .id as $o | .subtasks[] | .index as $i |
			.keyed_state.entries[]? | select(.state != "_timer_state/processing_timer") |
			[$o, $i, .state, .key_group, .key, .value]'
	}
	raw "$(ART 1.19 rocksdb-savepoint)" >want
	[ "$(wc -l <want)" -eq 24 ]
	run raw "$(ART 1.19 rocksdb-checkpoint)"
	match_golden want
	run raw "$(ART 1.19 rocksdb-savepoint-native)"
	match_golden want
}

@test "flinkrocksdb: the summary counts the entries and bytes of each RocksDB state as of the canonical savepoint" {
	needs_fixtures
	counts() {
		ckpt-inspect "$1" | jq -c '.operators[] | [.id, [.flink_state.states[] | [.name, .kind, .entries, .bytes]]]'
	}
	counts "$(ART 1.17 hashmap-savepoint)" >want
	grep -q '"state-name","value",4,100' want
	run counts "$(ART 1.17 rocksdb-checkpoint)"
	status_is 0
	match_golden want
	run sh -c 'ckpt-inspect "$1" | jq -c "[.operators[].flink_state.files[]? | select(.local_name == \"000016.sst\")] | length"' \
		sh "$(ART 1.17 rocksdb-checkpoint)"
	output_is 6
}

@test "flinkrocksdb: -c reads every SST, MANIFEST and CURRENT of the handles" {
	needs_fixtures
	run sh -c 'ckpt-inspect -c "$1" | jq -c "[.ok, .files, .problems]"' sh "$(ART 1.19 rocksdb-savepoint-native)"
	status_is 0
	output_is '[true,82,[]]'
}

@test "flinkrocksdb: a missing SST is named: -a exits 2, -c reports it and exits 1" {
	needs_fixtures
	copy
	rm ck/$SST
	bad 2 "ckpt-inspect: ck/$SST: cannot open the RocksDB file 000016.sst: No such file or directory" \
		ckpt-inspect -a ck
	check_finds .problems "[{\"where\":\"ck/$SST\",\"problem\":\"missing (No such file or directory)\"}]"
}

@test "flinkrocksdb: a cut SST is named: -a and the summary exit 2, nothing on stdout; -c exits 1" {
	needs_fixtures
	copy
	truncate -s 500 ck/$SST
	bad 2 "ckpt-inspect: ck/$SST: short: 500 bytes, the _metadata records 983" ckpt-inspect -a ck
	bad 2 "ckpt-inspect: ck/$SST: short: 500 bytes, the _metadata records 983" ckpt-inspect ck
	check_finds .problems "[{\"where\":\"ck/$SST\",\"problem\":\"short: 500 bytes, the _metadata records 983\"}]"
}

@test "flinkrocksdb: an SST with flipped bytes: RocksDB's checksum names it, exit 2 (-c: 1)" {
	needs_fixtures
	copy
	flip ck/$SST 20
	line="ck/$SST: cannot read: rocksdb: Corruption: block checksum mismatch: stored = 3198773879, computed = 1285908361, type = 1  in 000016.sst offset 0 size 35"
	bad 2 "ckpt-inspect: $line" ckpt-inspect -a ck
	check_finds '.problems[] | "\(.where): \(.problem)"' "$line"
}

@test "flinkrocksdb: the temporary directory goes, whether the read succeeds or fails" {
	needs_fixtures
	copy
	mkdir tmp
	TMPDIR=$PWD/tmp ckpt-inspect -a ck >/dev/null
	TMPDIR=$PWD/tmp ckpt-inspect -c ck >/dev/null
	[ -z "$(ls -A tmp)" ]
	flip ck/$SST 20
	run env TMPDIR=$PWD/tmp ckpt-inspect -a ck
	status_is 2
	[ -z "$(ls -A tmp)" ]
	rm -r tmp
	bad 2 "ckpt-inspect: $PWD/tmp/ckpt-rocksdb-XXXXXX: cannot make a temporary directory: No such file or directory" \
		env TMPDIR=$PWD/tmp ckpt-inspect -a ck
}

@test "flinkrocksdb: -d between the canonical and the RocksDB forms of one job: keyed state differs in processing-time timers' timestamps only, exit 0" {
	needs_fixtures
	for f in rocksdb-savepoint-native rocksdb-checkpoint; do
		run ckpt-inspect -d "$(ART 1.19 rocksdb-savepoint)" "$(ART 1.19 $f)"
		status_is 0
		run jq -c "[.states_added, .states_removed, .state, (.processing_timers | map_values(map_values(del(.key_groups))))]" <<<"$output"
		output_is '[[],[],{},{"41e91aae0bee218c44306cf7d21940ad":{"_timer_state/processing_timer":{"added":0,"removed":0,"changed":4}},"4b818c7923a927796d24b727201ba34d":{"_timer_state/processing_timer":{"added":0,"removed":0,"changed":4}}}]'
	done
}

@test "flinkrocksdb: a column family without meta info in the handle's header is named, exit 2" {
	needs_fixtures
	copy
	# the meta data handle of operator 41e91aae... subtask 1: its state "state-name" renamed
	perl -pi -e 's/state-name/state-namf/' ck/3acbb02e-2e24-4947-a751-fa16ce28aacc
	bad 2 'ckpt-inspect: ck/_metadata: operator 41e91aae0bee218c44306cf7d21940ad subtask 1: column family "state-name" has no meta info in the state'"'"'s header' \
		ckpt-inspect -a ck
}

@test "flinkrocksdb: a signal while the temporary directory exists removes it" {
	needs_fixtures
	mkdir tmp
	# each link made a second late, so that the signal comes while the directory is there
	TMPDIR=$PWD/tmp strace -f -o /dev/null -e trace=symlink,symlinkat \
		-e inject=symlink,symlinkat:delay_exit=1000000 ckpt-inspect "$(ART 1.17 rocksdb-checkpoint)" >out 2>err &
	tracer=$!
	for i in $(seq 100); do
		[ -z "$(ls -A tmp/* 2>/dev/null)" ] || break
		sleep 0.1
	done
	[ -n "$(ls -A tmp/*)" ]
	kill -TERM "$(pgrep -P $tracer)"
	status=0
	wait $tracer || status=$?
	[ "$status" -eq 143 ]
	[ -z "$(ls -A tmp)" ]
	[ ! -s out ]
}

@test "flinkrocksdb: a MANIFEST naming a table file the handle lacks is named, exit 2 (-c: 1)" {
	needs_fixtures
	copy
	# every handle lists its 000016.sst as 000099.sst (a name of the same length): the first read fails
	perl -pi -e 's/000016\.sst/000099.sst/' ck/_metadata
	line="ck/_metadata: RocksDB's MANIFEST-000004 names the table file 000016.sst, which the handle does not list"
	bad 2 "ckpt-inspect: $line" ckpt-inspect -a ck
	check_finds '.problems[] | "\(.where): \(.problem)"' "$line"
}
