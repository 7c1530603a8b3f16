#!/usr/bin/env bats
# Flink's own snapshots in every form (issue 31): each job of flink-artifacts/ at each release holds
# the same state whether written as a canonical savepoint of either backend, a HashMap checkpoint
# or native savepoint, or a RocksDB incremental checkpoint or native savepoint (SOURCES.md there).
# So every form's typed entries must equal those of the job's canonical hashmap-savepoint, -d
# between the two must report no difference in state, and the summary and -c must exit 0.

bats_require_minimum_version 1.5.0
load helper

# PENDING: the forms ckpt does not read yet, the one place that says so. One row a line: a bash
# pattern matched against the directory names of flink-artifacts/, the checks it is not yet
# expected to pass (comma separated), and what it waits for. The checks:
#   summary   the summary exits 0
#   check     -c exits 0
#   entries   -a exits 0 and its typed entries (NORMAL in flinkforms-helper.bash) equal the canonical
#             hashmap-savepoint's of the same job and release, every entry typed
#   diff      -d between the form and that canonical savepoint exits 0 or 1 and reports no
#             difference in state
# A (form, check) is pending when some row matching the form names the check; the first such row
# gives the reason. A pending one must still fail, so that the list only shrinks: when a fix makes
# it pass, the test fails and says which row to narrow or remove.
PENDING='
new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint                        entries                    a changelog without a materialized part records no key serializer: 8 of its 32 entries untyped (their bytes equal the canonical)
stateful-scala-*-hashmap-checkpoint                                                   entries,diff               issue 27 (Scala case classes, Option, Either, Kryo: heap snapshot not walked)
stateful-scala-*-hashmap-savepoint-native                                             entries,diff               issue 27 (Scala case classes, Option, Either, Kryo: heap snapshot not walked)
'

export PENDING
ART=${FIXTURES:+$FIXTURES/flink-artifacts}
export ART

needs_artifacts() {
	needs_fixtures || return
	[ -d "$ART" ] && return 0
	if [ "${CI-}" = true ]; then
		echo "no flink-artifacts/ in $FIXTURES; CI=true requires it"
		return 1
	fi
	skip "no flink-artifacts/ in $FIXTURES (set CKPT_FIXTURES)"
}

# forms CHECK: CHECK on every artifact (flinkforms-helper.bash, outside bats' per-command trap,
# which would make the loops slow); each artifact that fails it and is not pending, or is pending
# and passes it, is named with why.
forms() {
	run bash "$T/flinkforms-helper.bash" forms_pass "$1"
	status_is 0
}

@test "flinkforms: every artifact is one of the six forms, its canonical hashmap-savepoint beside it" {
	needs_artifacts
	run bash "$T/flinkforms-helper.bash" layout
	status_is 0
}

@test "flinkforms: every row of PENDING names known checks, a reason, and is the reason of some artifact" {
	needs_artifacts
	run bash "$T/flinkforms-helper.bash" rows
	status_is 0
}

@test "flinkforms: the summary of every form exits 0" {
	needs_artifacts
	forms summary
}

@test "flinkforms: -c of every form exits 0" {
	needs_artifacts
	forms check
}

@test "flinkforms: every form's typed entries equal those of its canonical hashmap-savepoint" {
	needs_artifacts
	forms entries
}

@test "flinkforms: -d between every form and its canonical hashmap-savepoint reports no difference in state" {
	needs_artifacts
	forms diff
}

# damaged COPY FILE OFFSET XOR [BLOCK SIZE]: the byte at OFFSET of COPY/FILE xor'ed with XOR (hex); with
# BLOCK and SIZE, an SST's data block holding it gets its checksum again (RocksDB's masked CRC-32C of
# the block and its compression type), as a writer that wrote the wrong key would have left it.
damaged() {
	python3 - "$@" <<'PY'
import sys
path, off, x = sys.argv[1] + "/" + sys.argv[2], int(sys.argv[3]), int(sys.argv[4], 16)
d = bytearray(open(path, "rb").read())
d[off] ^= x
if len(sys.argv) > 5:
    bo, bn = int(sys.argv[5]), int(sys.argv[6])
    c = 0xFFFFFFFF
    for b in d[bo:bo + bn + 1]:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
    c ^= 0xFFFFFFFF
    c = (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF
    d[bo + bn + 1:bo + bn + 5] = c.to_bytes(4, "little")
open(path, "wb").write(d)
PY
}

# keys_named FORM FILE PROBLEM ORIG N: -c reports PROBLEM of FILE (exit 1); -a exits 2 with it,
# nothing printed; -R (one read) prints the first N rows of ORIG (the snapshot before the damage),
# then exits 2 with it
keys_named() {
	run --separate-stderr ckpt-inspect -c "$1"
	status_is 1
	output_is "{\"file\":\"$1\",\"ok\":false,\"files\":$(jq .files <<<"$output"),\"bytes\":$(jq .bytes <<<"$output"),\"problems\":[{\"where\":\"$1/$2\",\"problem\":\"${3//\"/\\\"}\"}]}"
	bad 2 "ckpt-inspect: $1/$2: $3" ckpt-inspect -a "$1"
	bad_after 2 "ckpt-inspect: $1/$2: $3" "$(ckpt-inspect -R "$4" | head -n "$5")" ckpt-inspect -R "$1"
}

@test "flinkforms: a key changed in place is named in every form (file, offset or table file and key, both key groups): -c exits 1, -a and -R 2" {
	needs_fixtures
	J=new-stateful-udf-migration-itcase-flink
	for f in 1.19-hashmap-savepoint 1.19-hashmap-checkpoint 1.19-hashmap-savepoint-native 1.17-rocksdb-savepoint \
		1.17-rocksdb-checkpoint 1.17-rocksdb-savepoint-native 1.17-hashmap-checkpoint; do
		cp -r "$ART/$J$f" "$f"
		chmod -R u+w "$f"
	done
	# the issue's: a byte of an event timer's key (a Tuple1<Long>, [3] made [71776119061217283]) in
	# the canonical layout, then in the heap layout of a checkpoint and a native savepoint
	damaged 1.19-hashmap-savepoint ca45bb7b-cd52-47f4-832a-b0e8b41ace12 1500 ff
	keys_named 1.19-hashmap-savepoint ca45bb7b-cd52-47f4-832a-b0e8b41ace12 \
		'offset 1486: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 2' "$ART/${J}1.19-hashmap-savepoint" 10
	damaged 1.19-hashmap-checkpoint 0f6333b0-8a0f-408c-9925-0817dbc40bae 1498 ff
	keys_named 1.19-hashmap-checkpoint 0f6333b0-8a0f-408c-9925-0817dbc40bae \
		'offset 1484: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 3' "$ART/${J}1.19-hashmap-checkpoint" 10
	damaged 1.19-hashmap-savepoint-native 0eeec0a6-9966-4772-b077-10426ecd7bf2 1498 ff
	keys_named 1.19-hashmap-savepoint-native 0eeec0a6-9966-4772-b077-10426ecd7bf2 \
		'offset 1484: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 3' "$ART/${J}1.19-hashmap-savepoint-native" 10
	damaged 1.17-rocksdb-savepoint 15fefde7-f7a7-481e-bf62-2ed9ead10e60 1468 ff
	keys_named 1.17-rocksdb-savepoint 15fefde7-f7a7-481e-bf62-2ed9ead10e60 \
		'offset 1451: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 3' "$ART/${J}1.17-rocksdb-savepoint" 9
	# RocksDB: a flipped byte breaks the block's checksum (t/flinkrocksdb.bats), so the block is
	# written again with its checksum, a key of its Snappy literals changed: RocksDB gives no offset,
	# the table file and the key name the entry.  The event timer's key [3] made [0] (the Snappy
	# copy after it repeats it into the namespace), and a value state's key [3] made [0]
	damaged 1.17-rocksdb-savepoint-native 5513d017-ed22-4b4b-8644-6efe2e5f79c6 15 03 0 35
	keys_named 1.17-rocksdb-savepoint-native 5513d017-ed22-4b4b-8644-6efe2e5f79c6 \
		'000015.sst, key 01000000000000000a00000000000000000000000000000000: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 2' "$ART/${J}1.17-rocksdb-savepoint-native" 9
	damaged 1.17-rocksdb-checkpoint a4ee4541-f1bb-4bfa-9629-1714fbe6eb27 15 03 0 35
	keys_named 1.17-rocksdb-checkpoint a4ee4541-f1bb-4bfa-9629-1714fbe6eb27 \
		'000015.sst, key 01000000000000000a00000000000000000000000000000000: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 2' "$ART/${J}1.17-rocksdb-checkpoint" 9
	cp "$ART/${J}1.17-rocksdb-checkpoint/a4ee4541-f1bb-4bfa-9629-1714fbe6eb27" 1.17-rocksdb-checkpoint
	damaged 1.17-rocksdb-checkpoint 08aafd2d-e900-4956-b8f7-e45241cef160 10 03 0 35
	keys_named 1.17-rocksdb-checkpoint 08aafd2d-e900-4956-b8f7-e45241cef160 \
		'000016.sst, key 0100000000000000000000000000000003: a key of state "state-name" in key group 1 hashes to key group 2' "$ART/${J}1.17-rocksdb-checkpoint" 10
	# the changelog (1.17's hashmap checkpoint, its changes inline in the _metadata; the offset is in
	# the handle's bytes): Flink's applier puts a key in its hash's key group, here not the subtask's
	damaged 1.17-hashmap-checkpoint _metadata 9012 03
	keys_named 1.17-hashmap-checkpoint _metadata \
		'offset 808: a key of state "_timer_state/event_timer" in key group 1 hashes to key group 2, not one of the subtask'"'"'s' "$ART/${J}1.17-hashmap-checkpoint" 24
}

@test "flinkforms: a Kryo key of one of Kryo's default classes (the Scala job's java.lang.Long keys) is checked against its key group" {
	needs_fixtures
	f=stateful-scala-udf-migration-itcase-flink1.17-hashmap-savepoint
	cp -r "$ART/$f" sp
	chmod -R u+w sp
	# the key 3 (Kryo's class id 9, then the zig-zag varint 6) made 2: Long.hashCode 2 is key group 3
	damaged sp 461031a4-fda7-4201-8014-7f6b6b501f0b 8143 02
	keys_named sp 461031a4-fda7-4201-8014-7f6b6b501f0b \
		'offset 8137: a key of state "caseClassState" in key group 1 hashes to key group 3' "$ART/$f" 1
	# every Kryo key of the job's forms hashes to its key group
	for g in hashmap-savepoint hashmap-checkpoint rocksdb-savepoint-native; do
		run ckpt-inspect -c "$ART/${f%-hashmap-savepoint}-$g"
		status_is 0
	done
}
