#!/usr/bin/env bats
# ckpt-merge -o DIR/ of a Flink savepoint: Flink savepoints written again (the _metadata writer of lib/flink/format/meta-write.c) and
# edited (--uid, --drop, --relocate): decode then encode is the identity on every real fixture of
# versions 3 to 6 and on synthetic files of versions 3 to 7; each edit's effect as ckpt-inspect
# sees it; every refusal with its line, and nothing written then; state files copied or linked.
#
# Goldens: t/data/flinkwrite/NAME.expected (CKPT_REGOLD=1 rewrites them, t/README).

load helper
load flinkmeta-helper

# ops DIR: each operator of DIR's _metadata as [id, uid, name, parallelism, subtask entries].
ops() {
	ckpt-inspect -m "$1" | jq -c '.operators[] | [.id, .uid, .name, .parallelism, .subtasks]'
}

# copy_fixture NAME DIR: the fixture's _metadata in DIR, with an empty file for every relative path
# it names (the fixtures hold the _metadata alone; ckpt-merge -o copies the files it names).
copy_fixture() {
	mkdir -p "$2"
	cp "$SP/$1/_metadata" "$2/_metadata"
	chmod u+w "$2/_metadata"
	ckpt-inspect -m "$2" | jq -r '.flink.files[] | select(.kind == "relative_file") | .path' |
		while read -r f; do : >"$2/$f"; done
}

# nothing_written [NAME]: no output directory NAME (default out) and no temporary one beside it.
nothing_written() {
	run ls -A
	[ "$(printf '%s\n' "$output" | grep -c "^${1:-out}")" -eq 0 ] || { echo "left behind: $output"; return 1; }
}

# syn VERSION: a synthetic _metadata to file m: master state "hook"; operator uid "first" (one
# subtask: union state "s" in hdfs:/old/x, savepoint key groups in relative file "r1"); operator
# uid "second", fully finished; an operator without uid (file-merging state: directories and a
# segment under hdfs:/old/); from version 5 names and uids, from 4 null properties, in 7 a
# reference checkpoint id.  SYN_FINISHED=1: operator "first" has a second subtask, FINISHED.
syn() {
	local v=$1
	B=; b_i32 0x4960672d; b_i32 "$v"; b_i64 42
	b_i32 1; b_i32 0xc96b1696; b_i32 16; b_i32 1; b_utf hook; b_i32 2; b_u8 7; b_u8 8
	b_i32 3
	[ "$v" -ge 5 ] && { b_utf Map; b_utf first; }
	b_i64 0xadf090656b210b16; b_i64 0x09ad3203d4ee7329; b_i32 2; b_i32 4
	b_u8 0; b_i32 $((1 + ${SYN_FINISHED:-0})); b_i32 0
	b_i32 1; b_u8 4; b_i32 1; b_utf s; b_u8 1; b_i32 1; b_i64 0; b_u8 2; b_i64 9; b_utf hdfs:/old/x
	b_i32 0
	b_u8 7; b_i32 0; b_i32 2; b_i64 0; b_i64 3; b_u8 6; b_utf r1; b_i64 5
	b_u8 0; b_i32 0; b_i32 0
	[ "$v" -ge 7 ] && { b_u8 1; b_i64 40; }
	[ -n "${SYN_FINISHED:-}" ] && b_i32 -2
	[ "$v" -ge 5 ] && { b_utf Sink; b_utf second; }
	b_i64 0x6730ef7375fb60f9; b_i64 0xd9bbdfdfd174d803; b_i32 1; b_i32 4; b_u8 0; b_i32 -1
	[ "$v" -ge 5 ] && { b_utf Merging; b_utf ""; }
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 1; b_i32 4
	b_u8 0; b_i32 1; b_i32 0
	b_i32 1; b_u8 17; b_i32 1; b_utf t; b_u8 0; b_i32 1; b_i64 0
	b_utf hdfs:/old/own; b_utf hdfs:/old/shared; b_u8 0
	b_u8 15; b_i64 0; b_i64 3; b_i32 1; b_utf hdfs:/old/seg; b_utf L
	b_i32 0; b_u8 0; b_u8 0; b_i32 0; b_i32 0
	[ "$v" -ge 7 ] && b_u8 0
	[ "$v" -ge 4 ] && { b_u8 0xac; b_u8 0xed; b_i16 5; b_u8 0x70; }
	mkdir -p in
	b_write in/_metadata
	printf 'rfile' >in/r1
}

@test "flinkwrite: decode then encode is the identity on every fixture of versions 3 to 6" {
	needs_fixtures
	local d n=0 bad=0
	for d in "$SP"/v[3-6]-*; do
		d=${d##*/}
		copy_fixture "$d" "in-$d"
		if ! ckpt-merge -o "out-$d/" "in-$d" || ! cmp "in-$d/_metadata" "out-$d/_metadata"; then
			echo "$d: not written back byte for byte"
			bad=1
		fi
		n=$((n + 1))
	done
	[ "$n" -eq 21 ] || { echo "expected 21 fixtures of versions 3 to 6, found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

@test "flinkwrite: version 2 and below are read-only, as for Flink" {
	needs_fixtures
	copy_fixture v2-flink1.8-nonkeyed-chain-savepoint in
	bad 2 'ckpt-merge: in/_metadata: format version 2: version 2 and below are read-only: Flink cannot write them either' ckpt-merge -o out/ in
	nothing_written
	bad 2 "ckpt-merge: $SP/unsupported-v1-flink1.2-complexkeyed-savepoint/_metadata: offset 4: this savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported" ckpt-merge -o out/ "$SP/unsupported-v1-flink1.2-complexkeyed-savepoint"
	nothing_written
}

@test "flinkwrite: synthetic files of versions 3 to 7 are written back byte for byte" {
	local v
	for v in 3 4 5 6 7; do
		syn "$v"
		ckpt-merge -o "out$v/" in
		cmp in/_metadata "out$v/_metadata"
		[ "$(cat "out$v/r1")" = rfile ]
		rm -r in
	done
}

@test "flinkwrite: uids are encoded as Java's modified UTF-8: supplementary characters as surrogate pairs" {
	# v6, one operator of uid "é😀" (the emoji as two 3-byte surrogates), no state
	B=; b_i32 0x4960672d; b_i32 6; b_i64 1; b_i32 0; b_i32 1
	b_utf N; b_i16 8; B+='\xc3\xa9\xed\xa0\xbd\xed\xb8\x80'
	b_i64 1; b_i64 2; b_i32 1; b_i32 1; b_u8 0; b_i32 0
	b_u8 0xac; b_u8 0xed; b_i16 5; b_u8 0x70
	mkdir in; b_write in/_metadata
	ckpt-merge -o out/ in
	cmp in/_metadata out/_metadata
	ckpt-merge --uid 'é😀=ü😀' -o out2/ in
	run sh -c 'od -An -tx1 -j27 -N10 out2/_metadata | tr -d " \n"'
	output_is '0008c3bceda0bdedb880'
	run sh -c 'ckpt-inspect -m -u "ü😀" out2 | jq -c ".operators[] | [.uid, .matched_uid]"'
	output_is '["ü😀","ü😀"]'
}

@test "flinkwrite: union state of a partly finished operator in a Flink snapshot: every new subtask gets the running subtasks' elements" {
	# Flink declines such checkpoints when it takes them, but its restore accepts one; ckpt's own
	# archives keep the engine's FLIP-147 refusal (merge.bats)
	SYN_FINISHED=1 syn 5
	run sh -c 'ckpt-inspect in 2>/dev/null | jq -c ".operators[0] | [.parallelism, .finished_subtasks]"'
	output_is '[2,"1"]'
	run ckpt-merge -P 3 in
	status_is 0
	run jq -c '[.operators[0].subtasks[] | [.index, [.from[] | [.subtask, .union, [.handles[] | select(.scope == "managed_operator") | .states.s.offsets]]]]]' <<<"$output"
	output_is '[[0,[[0,["s"],[[0]]]]],[1,[[0,["s"],[[0]]]]],[2,[[0,["s"],[[0]]]]]]'
}

@test "flinkwrite: --uid gives the operator Flink's id of the new uid, and the uid where the version stores it" {
	syn 5
	ckpt-merge --uid first=renamed -o out/ in
	run ops out
	output_is '["d96cb4bbd5f5bc302b14f969ee21bc59","renamed","Map",2,1]
["6730ef7375fb60f9d9bbdfdfd174d803","second","Sink",1,0]
["0102030405060708090a0b0c0d0e0f10",null,"Merging",1,1]'
	run sh -c 'ckpt-inspect -m -u renamed out | jq -r ".operators[] | select(.matched_uid) | .id"'
	output_is d96cb4bbd5f5bc302b14f969ee21bc59
	# version 4 stores no uid: the id alone changes; OLD may be the operator id (any case)
	rm -r in; syn 4
	ckpt-merge --uid 0102030405060708090A0B0C0D0E0F10=third -o out4/ in
	run ops out4
	output_is '["adf090656b210b1609ad3203d4ee7329",null,null,2,1]
["6730ef7375fb60f9d9bbdfdfd174d803",null,null,1,0]
["013ef814c76e319e5fe9a82a3ba14933",null,null,1,1]'
	# everything but the operator record's id is as it was
	cmp -n 56 in/_metadata out4/_metadata
	[ "$(size in/_metadata)" -eq "$(size out4/_metadata)" ]
	[ "$(cmp -l in/_metadata out4/_metadata | wc -l)" -le 16 ]
}

@test "flinkwrite: --drop removes an operator's state, named by uid or id" {
	syn 6
	ckpt-merge --drop second --drop 0102030405060708090a0b0c0d0e0f10 -o out/ in
	run ops out
	output_is '["adf090656b210b1609ad3203d4ee7329","first","Map",2,1]'
	run sh -c 'ckpt-inspect -m out | jq -c "[.flink.counts.operators, .flink.master_states[].name, .flink.files]"'
	output_is '[1,"hook",[{"path":"hdfs:/old/x","kind":"file","size":9},{"path":"r1","kind":"relative_file","size":5}]]'
	# dropping the only operator whose state names r1 leaves r1 out of the directory
	ckpt-merge --drop first -o out2/ in
	[ ! -e out2/r1 ]
	[ "$(ls out2)" = _metadata ]
}

@test "flinkwrite: --relocate rewrites absolute paths (files, segments, file-merging directories), not relative ones" {
	syn 6
	ckpt-merge --relocate hdfs:/old/=s3://bucket/new/ -o out/ in
	run sh -c 'ckpt-inspect -m -a out | jq -c "[.operators[].subtasks[].handles[] | [.kind, .path, .task_owned_directory, .shared_directory]]"'
	output_is '[["operator_stream","s3://bucket/new/x",null,null],["savepoint_key_groups","r1",null,null],["file_merging_operator_stream","s3://bucket/new/seg","s3://bucket/new/own","s3://bucket/new/shared"]]'
	# the first --relocate whose prefix matches wins
	ckpt-merge --relocate hdfs:/old/x=file:/x --relocate hdfs:/old=file:/o -o out2/ in
	run sh -c 'ckpt-inspect -m -a out2 | jq -c "[.operators[].subtasks[].handles[] | .path, .task_owned_directory?]"'
	output_is '["file:/x",null,"r1",null,"file:/o/seg","file:/o/own"]'
}

# local_x NAME: syn's file hdfs:/old/x named file:$PWD/old/NAME instead, a local file of 9 bytes.
local_x() {
	local p="file:$PWD/old/$1" lp
	printf -v lp '\\x%02x\\x%02x' $((${#p} >> 8)) $((${#p} & 255))
	B=${B/'\x00\x0bhdfs:/old/x'/"$lp$p"}
	b_write in/_metadata
	mkdir -p old
	printf 'ninebytes' >"old/$1"
}

@test "flinkwrite: a local file named by its absolute path is carried into OUTDIR, its handle made relative" {
	syn 6
	local_x x
	ckpt-merge -o out/ in
	[ "$(ls out)" = "$(printf '%s\n' _metadata r1 x)" ]
	cmp old/x out/x
	rm -r old # the savepoint holds what it names
	run sh -c 'ckpt-inspect -m out | jq -c "[.flink.files[] | [.path, .kind, .size]]"'
	output_is '[["hdfs:/old/seg","segment_file",3],["r1","relative_file",5],["x","relative_file",9]]'
	# the rest of the _metadata as it was: the handle's own bytes alone differ
	run sh -c 'ckpt-inspect -m -a in | jq -c "del(.flink.files, .flink.counts) | .operators[0].subtasks[0].handles[0] |= del(.path, .delegate)"'
	local was=$output
	run sh -c 'ckpt-inspect -m -a out | jq -c "del(.flink.files, .flink.counts) | .operators[0].subtasks[0].handles[0] |= del(.path, .delegate)"'
	output_is "$was"
}

@test "flinkwrite: a local file moved by --relocate stays where it is named; two files of one name, or one missing, are refused" {
	syn 6
	local_x x
	ckpt-merge --relocate "file:$PWD/old/=file:/new/" -o out/ in
	[ "$(ls out)" = "$(printf '%s\n' _metadata r1)" ]
	run sh -c 'ckpt-inspect -m out | jq -c "[.flink.files[].path]"'
	output_is '["file:/new/x","hdfs:/old/seg","r1"]'
	ckpt-merge --link -o linked/ in
	[ "$(stat -c %i old/x)" = "$(stat -c %i linked/x)" ]
	rm -r in old
	syn 6
	local_x r1
	bad 2 "ckpt-merge: in/_metadata: two state files would be named \"r1\" in the savepoint: $PWD/old/r1 and r1" ckpt-merge -o out2/ in
	nothing_written out2
	rm old/r1
	syn 6
	local_x x
	rm old/x
	bad 2 "ckpt-merge: $PWD/old/x: cannot open: No such file or directory" ckpt-merge -o out2/ in
	nothing_written out2
}

@test "flinkwrite: the edits' goldens on real fixtures" {
	needs_fixtures
	copy_fixture v5-flink2.0-nonkeyed-chain-savepoint in5
	ckpt-merge --uid first=first-v2 --uid 013ef814c76e319e5fe9a82a3ba14933=third-v2 --drop second -o out5/ in5
	copy_fixture v4-flink1.20-complexkeyed-savepoint in4
	ckpt-merge --uid window=window-v2 --drop first -o out4/ in4
	run sh -c 'ckpt-inspect -m -p out5 out4 | sed "s/\"file\": \"out/\"file\": \"OUT/"'
	match_golden "$DATA/flinkwrite/edits.expected"
}

@test "flinkwrite: an edit naming no operator is refused with the State Processor API's words" {
	syn 5
	bad 1 'ckpt-merge: in/_metadata: --uid nosuch=x: no operator has the uid or id "nosuch" (Some identifier changes were never applied!)' ckpt-merge --uid nosuch=x -o out/ in
	nothing_written
	bad 1 'ckpt-merge: in/_metadata: --drop 00000000000000000000000000000000: no operator has the uid or id "00000000000000000000000000000000" (Some identifier changes were never applied!)' ckpt-merge --drop 00000000000000000000000000000000 -o out/ in
	nothing_written
	bad 1 'ckpt-merge: in/_metadata: --relocate s3:/=file:/: no absolute path of a kept operator starts with "s3:/"' ckpt-merge --relocate s3:/=file:/ -o out/ in
	nothing_written
}

@test "flinkwrite: two edits of one operator that conflict are a usage error" {
	syn 5
	bad 2 'ckpt-merge: in/_metadata: --uid first=x and --drop adf090656b210b1609ad3203d4ee7329 edit the same operator adf090656b210b1609ad3203d4ee7329' ckpt-merge --uid first=x --drop adf090656b210b1609ad3203d4ee7329 -o out/ in
	nothing_written
	bad 2 'ckpt-merge: in/_metadata: --uid first=x and --uid first=y edit the same operator adf090656b210b1609ad3203d4ee7329' ckpt-merge --uid first=x --uid first=y -o out/ in
	nothing_written
	# the same edit twice is no conflict
	ckpt-merge --uid first=x --uid adf090656b210b1609ad3203d4ee7329=x --drop second --drop second -o out/ in
	[ "$(ops out | wc -l)" -eq 2 ]
}

@test "flinkwrite: a new uid colliding with an operator kept is refused" {
	syn 5
	bad 1 'ckpt-merge: in/_metadata: --uid first=second: another operator already has the id 6730ef7375fb60f9d9bbdfdfd174d803 that uid "second" gives' ckpt-merge --uid first=second -o out/ in
	nothing_written
	bad 1 'ckpt-merge: in/_metadata: --uid first=x: another operator already has the id e7fe1aba01e8166d8c78ae6b966dedd7 that uid "x" gives' ckpt-merge --uid first=x --uid 0102030405060708090a0b0c0d0e0f10=x -o out/ in
	nothing_written
	# the operator holding that id dropped, or re-uided itself: no collision
	ckpt-merge --uid first=second --drop second -o out/ in
	ckpt-merge --uid first=second --uid second=first -o out2/ in
	run ops out2
	output_is '["6730ef7375fb60f9d9bbdfdfd174d803","second","Map",2,1]
["adf090656b210b1609ad3203d4ee7329","first","Sink",1,0]
["0102030405060708090a0b0c0d0e0f10",null,"Merging",1,1]'
}

@test "flinkwrite: the output must be new and outside the input's directory" {
	syn 5
	bad 2 "ckpt-merge: in/out: the output would lie in the input's directory in" ckpt-merge -o in/out/ in
	bad 2 "ckpt-merge: in/sub/out: the output would lie in the input's directory in" sh -c 'mkdir in/sub && ckpt-merge -o in/sub/out/ in/_metadata'
	[ "$(ls in)" = "$(printf '%s\n' _metadata r1 sub)" ]
	bad 2 "ckpt-merge: in: already exists: the savepoint is written to a new directory" ckpt-merge -o in/ in
	mkdir out
	bad 2 "ckpt-merge: out: already exists: the savepoint is written to a new directory" ckpt-merge -o out/ in
	bad 2 "ckpt-merge: nodir/out: cannot create: No such file or directory" ckpt-merge -o nodir/out/ in
}

@test "flinkwrite: -o DIR/ and the edits on what is not a Flink snapshot, or wrongly combined" {
	syn 5
	echo '{"format":"ckpt-state","version":1,"checkpoint_id":1,"operators":[]}' >state.json
	bad 2 'ckpt-merge: state.json: not a Flink snapshot: --uid, --drop, --relocate and --link edit Flink savepoints only' ckpt-merge --drop first -o out/ state.json
	bad 2 'ckpt-merge: --uid, --drop, --relocate and --link write a Flink savepoint: give -o DIR/ (see ckpt-merge -h)' ckpt-merge --uid first=x in
	bad 2 'ckpt-merge: --uid, --drop, --relocate and --link write a Flink savepoint: give -o DIR/ (see ckpt-merge -h)' ckpt-merge --uid first=x -o out.tar in
	bad 2 'ckpt-merge: -P alone writes no Flink savepoint: Flink rescales one on restore (to split its keyed state at the new parallelism now, add --canonical) (see ckpt-merge -h)' ckpt-merge -P 2 -o out/ in
	bad 2 'ckpt-merge: --uid, --drop, --relocate and --link need the savepoint (its directory or its _metadata), not standard input (see ckpt-merge -h)' sh -c 'ckpt-merge --drop first -o out/ < in/_metadata'
	bad 2 'ckpt-merge: --uid first: give OLD=NEW (a uid or operator id, and the new uid) (see ckpt-merge -h)' ckpt-merge --uid first -o out/ in
	bad 2 'ckpt-merge: --relocate a=: give OLDPREFIX=NEWPREFIX (see ckpt-merge -h)' ckpt-merge --relocate a= -o out/ in
	bad 2 $'ckpt-merge: in/_metadata: operator uid "\xff" is not UTF-8' ckpt-merge --uid $'first=\xff' -o out/ in
	nothing_written
}

@test "flinkwrite: a state file missing or outside the directory: nothing written" {
	syn 5
	rm in/r1
	bad 2 'ckpt-merge: in/r1: cannot open: No such file or directory' ckpt-merge -o out/ in
	nothing_written
	# a relative path that leaves the directory ("../r1")
	B=${B/'\x00\x02r1'/'\x00\x05../r1'}
	b_write in/_metadata
	bad 2 'ckpt-merge: in/_metadata: relative path "../r1" leaves the savepoint directory' ckpt-merge -o out/ in
	nothing_written
}

@test "flinkwrite: state files are copied, or hard-linked with --link; never moved" {
	syn 5
	ckpt-merge -o copy/ in
	[ "$(stat -c %i in/r1)" != "$(stat -c %i copy/r1)" ]
	cmp in/r1 copy/r1
	ckpt-merge --link -o linked/ in
	[ "$(stat -c %i in/r1)" = "$(stat -c %i linked/r1)" ]
	[ -e in/r1 ] && [ -e in/_metadata ]
	# across file systems a link cannot be made: the file is copied
	local other
	other=$(df --output=target /dev/shm 2>/dev/null | tail -1)
	[ -n "$other" ] && [ "$other" != "$(df --output=target . | tail -1)" ] || skip "no second file system (/dev/shm)"
	other=$(mktemp -d /dev/shm/ckpt-flinkwrite.XXXXXX)
	ckpt-merge --link -o "$other/out/" in
	cmp in/r1 "$other/out/r1"
	rm -r "$other"
}

@test "flinkwrite: -g checks the edited savepoint against the new job graph first" {
	syn 5
	cat >graph.json <<-'EOF'
	{"vertices": [{"id": "v", "parallelism": 2, "max_parallelism": 4,
	  "operators": [{"id": "adf090656b210b1609ad3203d4ee7329", "uid": "first"}]},
	  {"id": "w", "parallelism": 1, "max_parallelism": 4,
	  "operators": [{"id": "6730ef7375fb60f9d9bbdfdfd174d803", "uid": "second"}]}],
	 "edges": []}
	EOF
	bad 1 'ckpt-merge: in: Failed to rollback to checkpoint/savepoint in. Cannot map checkpoint/savepoint state for operator 0102030405060708090a0b0c0d0e0f10 to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.' ckpt-merge -g graph.json -o out/ in
	nothing_written
	ckpt-merge -g graph.json --drop 0102030405060708090a0b0c0d0e0f10 -o out/ in
	ckpt-merge -g graph.json -n -o out2/ in
	cmp in/_metadata out2/_metadata
	bad 1 'ckpt-merge: in: Failed to rollback to checkpoint/savepoint in. Cannot map checkpoint/savepoint state for operator 03445f265812b71a258f80c0a29de2e4 to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI.' ckpt-merge -g graph.json --uid first=other --drop 0102030405060708090a0b0c0d0e0f10 -o out3/ in
	nothing_written out3
}

@test "flinkwrite: the EXAMPLES of ckpt-merge(1) for -o run as shown" {
	needs_fixtures
	ln -s "$SP/v5-flink2.0-nonkeyed-chain-savepoint" savepoint-chain
	ckpt-merge --uid first=first-v2 --drop third -o edited/ savepoint-chain
	run sh -c "ckpt-inspect -m edited | jq -c '[.operators[].uid]'"
	output_is '["second",null,"first-v2",null]'
	syn 6
	mv in chk-42
	ckpt-merge --relocate hdfs:/old/=s3://bucket/new/ -o moved/ chk-42
	run sh -c "ckpt-inspect -m moved | jq -c '[.flink.files[].path]'"
	output_is '["r1","s3://bucket/new/seg","s3://bucket/new/x"]'
	printf '{"vertices": [{"id": "v", "parallelism": 4, "operators": [{"uid": "first-v2"}, {"uid": "second"}, {"id": "bc764cd8ddf7a0cff126f51c16239658"}, {"id": "1265f98db15949b4489d98bcba215148"}]}], "edges": []}\n' >new-job.json
	bad 1 "ckpt-merge: savepoint-chain: Failed to rollback to checkpoint/savepoint savepoint-chain. Cannot map checkpoint/savepoint state for operator 013ef814c76e319e5fe9a82a3ba14933 to the new program, because the operator is not available in the new program. If you want to allow to skip this, you can set the --allowNonRestoredState option on the CLI." ckpt-merge -g new-job.json --uid first=first-v2 -o edited2/ savepoint-chain
	nothing_written edited2
	ckpt-merge -g new-job.json --uid first=first-v2 --drop third -o edited2/ savepoint-chain
}

@test "flinkwrite: a relative path in a subdirectory keeps its place under OUTDIR" {
	syn 6
	B=${B/'\x00\x02r1'/'\x00\x04d/r1'}
	b_write in/_metadata
	mkdir in/d
	mv in/r1 in/d/r1
	ckpt-merge -o out/ in
	cmp in/_metadata out/_metadata
	[ "$(cat out/d/r1)" = rfile ]
}

# ---------------------------------------------------------------- --max-parallelism (issue 40 section 2)

# fa NAME: a link named NAME to the Flink 1.19 job of flink-artifacts/ in form $2 (job $3, default the
# udf migration job), so that messages name it short.
fa() {
	ln -s "$FIXTURES/flink-artifacts/${3:-new-stateful-udf-migration-itcase}-flink1.19-$2" "$1"
}

OPK=d5c8b168c6cbfe8c507a10f88b325243 # the udf job's first keyed operator (parallelism 4, 3 subtasks recorded)

# rows_but_groups DIR: ckpt-inspect -R of DIR, key_group and subtask left out, sorted.
rows_but_groups() {
	ckpt-inspect -R "$1" | jq -c 'del(.key_group, .subtask)' | sort
}

@test "flinkwrite: --max-parallelism N keeps every row of the canonical savepoints, each key in its key group at N" {
	needs_fixtures
	local f n
	for f in "$FIXTURES"/flink-artifacts/new-stateful*-savepoint; do
		for n in 5 128 300; do
			rm -rf out
			ckpt-merge --max-parallelism $n -o out/ "$f"
			[ "$(ckpt-inspect -m out | jq -c '[.operators[].max_parallelism] | unique')" = "[$n]" ]
			ckpt-inspect -c out | jq -e .ok >/dev/null
			diff <(rows_but_groups "$f") <(rows_but_groups out) || { echo "$f at $n: rows differ"; return 1; }
			# the key groups moved: some key's is not what it was
			[ "$n" = 128 ] || ! diff -q <(ckpt-inspect -R "$f" | jq -c 'select(.key_group) | [.key, .key_group]' | sort) \
				<(ckpt-inspect -R out | jq -c 'select(.key_group) | [.key, .key_group]' | sort) >/dev/null
		done
	done
}

@test "flinkwrite: --max-parallelism: ckpt-inspect -k finds every row of the result in the key group it prints" {
	needs_fixtures
	local r n=0
	fa sp hashmap-savepoint
	ckpt-merge --max-parallelism 300 -o out/ sp
	while read -r r; do
		run sh -c "ckpt-inspect -R -u $(jq -r .operator <<<"$r") --state '$(jq -r .state <<<"$r")' -k '$(jq -c .key <<<"$r")' out"
		[ "$status" -eq 0 ]
		grep -qxF "$r" <<<"$(jq -c . <<<"$output")" || { echo "not found by -k: $r"; return 1; }
		n=$((n + 1))
	done < <(ckpt-inspect -R out | jq -c 'select(has("key_group"))')
	[ "$n" -eq 32 ]
	# each subtask's handle covers KeyGroupRangeAssignment's range at parallelism 4
	run sh -c "ckpt-inspect -m out | jq -c '.operators[] | select(.id == \"d5c8b168c6cbfe8c507a10f88b325243\") | .key_groups'"
	output_is '{"0":"0-74","1":"75-149","2":"150-224","3":"225-299"}'
}

@test "flinkwrite: --max-parallelism on RocksDB's canonical savepoint" {
	needs_fixtures
	fa sp rocksdb-savepoint
	ckpt-merge --max-parallelism 200 -o out/ sp
	ckpt-inspect -c out | jq -e .ok >/dev/null
	diff <(rows_but_groups sp) <(rows_but_groups out)
}

@test "flinkwrite: --max-parallelism refuses what it cannot regroup, and bad numbers: nothing written" {
	needs_fixtures
	local n
	fa sp hashmap-savepoint
	fa scala hashmap-savepoint stateful-scala-udf-migration-itcase
	fa chk hashmap-checkpoint
	fa native rocksdb-savepoint-native
	for n in 0 32769 x -1 ''; do
		bad 2 "ckpt-merge: --max-parallelism $n: the max parallelism must be a number from 1 to 32768 (see ckpt-merge -h)" \
			ckpt-merge --max-parallelism "$n" -o out/ sp
	done
	bad 1 "ckpt-merge: scala/_metadata: operator d1392353922252257afa15351a98bae9 state caseClassState: ckpt cannot compute the key group of a key of the key serializer KryoSerializerSnapshot (its keys' hashCode is not known)" \
		ckpt-merge --max-parallelism 8 -o out/ scala
	bad 1 "ckpt-merge: chk/_metadata: operator d5c8b168c6cbfe8c507a10f88b325243 subtask 1: its keyed state is not a canonical savepoint's (handle kind key_groups): --max-parallelism rewrites canonical savepoints only: add --canonical to convert it in the same write" \
		ckpt-merge --max-parallelism 8 -o out/ chk
	bad 1 "ckpt-merge: native/_metadata: operator d5c8b168c6cbfe8c507a10f88b325243 subtask 1: its keyed state is not a canonical savepoint's (handle kind incremental): --max-parallelism rewrites canonical savepoints only: add --canonical to convert it in the same write" \
		ckpt-merge --max-parallelism 8 -o out/ native
	bad 1 "ckpt-merge: sp/_metadata: operator d5c8b168c6cbfe8c507a10f88b325243: its parallelism 4 is above the max parallelism 2 (Flink: Maximum parallelism must not be smaller than parallelism.)" \
		ckpt-merge --max-parallelism 2 -o out/ sp
	bad 2 "ckpt-merge: --max-parallelism writes a Flink savepoint: give -o DIR/ (see ckpt-merge -h)" ckpt-merge --max-parallelism 8 sp
	bad 2 "ckpt-merge: -P 3 is above --max-parallelism 2 (Flink: Maximum parallelism must not be smaller than parallelism.) (see ckpt-merge -h)" \
		ckpt-merge --max-parallelism 2 -P 3 -o out/ sp
	bad 2 "ckpt-merge: -P $OPK=3 is above --max-parallelism 2 (Flink: Maximum parallelism must not be smaller than parallelism.) (see ckpt-merge -h)" \
		ckpt-merge --max-parallelism 2 -P 2 -P $OPK=3 -o out/ sp
	bad 2 "ckpt-merge: sp/_metadata: -P nosuch=2: no operator with that id or uid" ckpt-merge -P nosuch=2 --max-parallelism 8 -o out/ sp
	fa bc hashmap-savepoint new-stateful-broadcast-udf-migration-itcase
	printf '{"operator":"56a26c4c54bda3adf3700194db4afe93","state":"broadcast-state-3","subtask":0,"user_key":9,"value":"9"}\n' >rows
	bad 1 "ckpt-merge: bc/_metadata: operator 56a26c4c54bda3adf3700194db4afe93: --rows and a new parallelism of its operator state in one write: write the rows first, then the parallelism" \
		ckpt-merge -P 1 --rows rows -o out/ bc
	printf '{"operator":"1f2b5df5a66154aca61fcb26193792be","state":"source-state","subtask":0,"index":0,"value":"x"}\n' >urows
	bad 1 "ckpt-merge: sp/_metadata: operator 1f2b5df5a66154aca61fcb26193792be: --rows and a new parallelism of its operator state in one write: write the rows first, then the parallelism" \
		ckpt-merge -P 1f2b5df5a66154aca61fcb26193792be=2 --rows urows -o out/ sp
	bad 2 "ckpt-merge: --max-parallelism needs the savepoint (its directory or its _metadata), not standard input (see ckpt-merge -h)" \
		sh -c 'ckpt-merge --max-parallelism 8 -o out/ < sp/_metadata'
	nothing_written
}

# parallelisms DIR: each operator's [parallelism, max parallelism, subtasks recorded, key-group ranges].
parallelisms() {
	ckpt-inspect -m "$1" | jq -c '[.operators[] | [.parallelism, .max_parallelism, .subtasks, .key_groups]]'
}

@test "flinkwrite: -P with --max-parallelism: each keyed operator split into its new subtasks at Flink's ranges, stateless ones at it, operator state kept" {
	needs_fixtures
	local f
	fa sp hashmap-savepoint
	ckpt-merge -P 2 --max-parallelism 2 -o out/ sp
	run parallelisms out
	output_is '[[1,2,1,{}],[2,2,2,{"0":"0","1":"1"}],[2,2,2,{"0":"0","1":"1"}],[2,2,0,{}],[2,2,0,{}],[2,2,2,{"0":"0","1":"1"}],[2,2,2,{"0":"0","1":"1"}],[1,2,1,{}]]'
	ckpt-inspect -c out | jq -e .ok >/dev/null
	diff <(rows_but_groups sp) <(rows_but_groups out)
	# each key in the key group Flink computes at 2: regrouped at 2 again, nothing moves
	ckpt-merge --max-parallelism 2 -o again/ out
	diff <(ckpt-inspect -R out | jq -c 'del(.subtask)' | sort) <(ckpt-inspect -R again | jq -c 'del(.subtask)' | sort)
	# -P OP=N: that operator alone, at KeyGroupRangeAssignment's five ranges of 8
	ckpt-merge -P $OPK=5 --max-parallelism 8 -o five/ sp
	run parallelisms five
	output_is '[[1,8,1,{}],[5,8,5,{"0":"0-1","1":"2-3","2":"4","3":"5-6","4":"7"}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[4,8,4,{}],[4,8,4,{}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[1,8,1,{}]]'
	diff <(rows_but_groups sp) <(rows_but_groups five)
	# every canonical savepoint, at a parallelism up (4 of 300) and down (1 of 3)
	for f in "$FIXTURES"/flink-artifacts/new-stateful*-savepoint; do
		[[ $f != *broadcast* ]] || continue # a broadcast state's copies: the test below
		rm -rf up down
		ckpt-merge -P 4 --max-parallelism 300 -o up/ "$f"
		ckpt-merge -P 1 --max-parallelism 3 -o down/ "$f"
		diff <(rows_but_groups "$f") <(rows_but_groups up) || { echo "$f at 4 of 300: rows differ"; return 1; }
		diff <(rows_but_groups "$f") <(rows_but_groups down) || { echo "$f at 1 of 3: rows differ"; return 1; }
		[ "$(ckpt-inspect -m down | jq -c '[.operators[] | select(.key_groups != {}) | .key_groups] | unique')" = '[{"0":"0-2"}]' ]
	done
}

# broadcast_as_flink IN N: IN's broadcast rows as Flink's RoundRobinOperatorStateRepartitioner hands
# them to N new subtasks (subtask t: old subtask t mod the old parallelism's copy), sorted.
broadcast_as_flink() {
	ckpt-inspect -R "$1" | jq -c 'select(.kind == "broadcast")' | jq -s -c --argjson n "$2" --argjson old "$3" \
		'.[] as $r | range($n) | select(. % $old == $r.subtask) as $t | $r | .subtask = $t' | sort
}

@test "flinkwrite: -P with --max-parallelism writes operator state beside keyed state as Flink's restore at N redistributes it (broadcast: new subtask t holds old subtask t mod 4's copy)" {
	needs_fixtures
	local n
	fa bc hashmap-savepoint new-stateful-broadcast-udf-migration-itcase
	for n in 1 3 8; do
		rm -rf out
		run --separate-stderr ckpt-merge -P $n --max-parallelism 8 -o out/ bc
		[ "$status" -eq 0 ] && [ -z "$output" ] && [ -z "$stderr" ] || { echo "-P $n: status $status: $stderr"; return 1; }
		ckpt-inspect -c out | jq -e .ok >/dev/null
		[ "$(ckpt-inspect -R out | jq -c 'select(.kind == "broadcast")' | wc -l)" -eq $((12 * n)) ]
		diff <(broadcast_as_flink bc $n 4) <(ckpt-inspect -R out | jq -c 'select(.kind == "broadcast")' | sort) ||
			{ echo "-P $n: broadcast rows differ"; return 1; }
		# keyed rows but for key groups and subtasks, list and union state as they were (parallelism 1)
		diff <(rows_but_groups bc | grep -v '"broadcast"') <(rows_but_groups out | grep -v '"broadcast"') ||
			{ echo "-P $n: rows differ"; return 1; }
		[ "$(ckpt-inspect -m out | jq -c '[.operators[] | select(.key_groups != {}) | .parallelism] | unique')" = "[$n]" ]
	done
}

BC1=56a26c4c54bda3adf3700194db4afe93 # the broadcast job's keyed broadcast operator (broadcast-state-3)
BC2=12d7d939fd56473cac7cff0603179a41 # and its other (broadcast-state-1 and -2)

@test "flinkwrite: --max-parallelism N below the parallelism of operators without keyed state writes them at N (or -P's), their broadcast state as Flink's restore at that parallelism hands it" {
	needs_fixtures
	local n
	# the broadcast job's checkpoint: its two broadcast operators hold no keyed state (parallelism 4),
	# two stateless ones parallelism 4 too
	fa chk hashmap-checkpoint new-stateful-broadcast-udf-migration-itcase
	fa bc hashmap-savepoint new-stateful-broadcast-udf-migration-itcase
	run parallelisms chk
	output_is '[[1,4,1,{}],[4,4,4,{}],[4,4,4,{}],[1,4,1,{}],[4,4,4,{}],[4,4,4,{}],[1,4,1,{}],[1,4,1,{}]]'
	for n in 2 3; do
		rm -rf out
		run --separate-stderr ckpt-merge --canonical --max-parallelism $n -o out/ chk
		[ "$status" -eq 0 ] && [ -z "$output" ] && [ -z "$stderr" ] || { echo "at $n: status $status: $stderr"; return 1; }
		run parallelisms out
		output_is "[[1,$n,1,{}],[$n,$n,$n,{}],[$n,$n,$n,{}],[1,$n,1,{}],[$n,$n,0,{}],[$n,$n,0,{}],[1,$n,1,{}],[1,$n,1,{}]]"
		ckpt-inspect -c out | jq -e .ok >/dev/null
		# new subtask t holds old subtask t mod 4's copy, as the -P path writes the savepoint's
		[ "$(ckpt-inspect -R out | jq -c 'select(.kind == "broadcast")' | wc -l)" -eq $((12 * n)) ]
		diff <(broadcast_as_flink chk $n 4) <(ckpt-inspect -R out | jq -c 'select(.kind == "broadcast")' | sort) ||
			{ echo "at $n: broadcast rows differ"; return 1; }
		rm -rf p
		ckpt-merge -P $n --max-parallelism 8 -o p/ bc
		diff <(ckpt-inspect -R p | jq -c 'select(.kind == "broadcast")' | sort) \
			<(ckpt-inspect -R out | jq -c 'select(.kind == "broadcast")' | sort) || { echo "at $n: not -P's"; return 1; }
		diff <(rows_but_groups chk | grep -v '"broadcast"') <(rows_but_groups out | grep -v '"broadcast"')
		# the old subtask whose copy each new one holds: the one ckpt-merge -P's assignment names
		[ "$(ckpt-merge -P $n chk | jq -c --arg id $BC1 '[.operators[] | select(.id == $id) | .subtasks[]
			| [.index, [.from[] | select(.broadcast != []) | .subtask]]]')" = "$(seq 0 $((n - 1)) | jq -s -c 'map([., [. % 4]])')" ]
	done
	# -P 1: every operator at 1; -P OPERATOR=1 that one at 1, the others at the max parallelism
	rm -rf out
	ckpt-merge --canonical --max-parallelism 2 -P 1 -o out/ chk
	run parallelisms out
	output_is '[[1,2,1,{}],[1,2,1,{}],[1,2,1,{}],[1,2,1,{}],[1,2,0,{}],[1,2,0,{}],[1,2,1,{}],[1,2,1,{}]]'
	diff <(broadcast_as_flink chk 1 4) <(ckpt-inspect -R out | jq -c 'select(.kind == "broadcast")' | sort)
	rm -rf out
	ckpt-merge --canonical --max-parallelism 2 -P $BC2=1 -o out/ chk
	run parallelisms out
	output_is '[[1,2,1,{}],[2,2,2,{}],[1,2,1,{}],[1,2,1,{}],[2,2,0,{}],[2,2,0,{}],[1,2,1,{}],[1,2,1,{}]]'
	diff <(ckpt-inspect -R chk | jq -c "select(.operator == \"$BC2\") | select(.subtask == 0)" | sort) \
		<(ckpt-inspect -R out | jq -c "select(.operator == \"$BC2\")" | sort)
}

@test "flinkwrite: -P OPERATOR=N naming an operator with operator state only writes it at N: union state once, old subtask j's into new subtask j mod N" {
	needs_fixtures
	fa sp hashmap-savepoint
	ckpt-merge -P 1f2b5df5a66154aca61fcb26193792be=2 --max-parallelism 8 -o out/ sp
	run parallelisms out
	output_is '[[2,8,2,{}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[4,8,4,{}],[4,8,4,{}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[4,8,4,{"0":"0-1","1":"2-3","2":"4-5","3":"6-7"}],[1,8,1,{}]]'
	ckpt-inspect -c out | jq -e .ok >/dev/null
	run sh -c "ckpt-inspect -R -u 1f2b5df5a66154aca61fcb26193792be out | jq -c '[.kind, .subtask, .value]'"
	output_is '["union",0,"Here be dragons!"]
["union",0,"Here be more dragons!"]
["union",0,"Here be yet more dragons!"]
["union",0,"Here be the mostest dragons!"]'
	diff <(rows_but_groups sp) <(rows_but_groups out)
}

@test "flinkwrite: --max-parallelism of a savepoint whose state file is cut: exit 2, nothing written" {
	needs_fixtures
	local f
	cp -r "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint" cut
	chmod -R u+w cut
	f=19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5
	truncate -s 500 cut/$f
	bad 2 "ckpt-merge: cut/$f: short: 500 bytes, the _metadata records 535" ckpt-merge --max-parallelism 8 -o out/ cut
	nothing_written
}

@test "flinkwrite: the --max-parallelism EXAMPLES of ckpt-merge(1) run as shown" {
	needs_fixtures
	fa savepoint-udf hashmap-savepoint
	ckpt-merge --max-parallelism 1024 -o sp-1024/ savepoint-udf
	run sh -c 'ckpt-inspect -c sp-1024 | jq -c .ok'
	output_is true
	run sh -c "ckpt-inspect -R -u d5c8b168c6cbfe8c507a10f88b325243 -k '[3]' sp-1024 | jq -c '[.key, .key_group]'"
	output_is '[[3],369]'
	run sh -c "ckpt-inspect -R -u d5c8b168c6cbfe8c507a10f88b325243 -k '[3]' savepoint-udf | jq -c '[.key, .key_group]'"
	output_is '[[3],1]'
	ckpt-merge -P 8 --max-parallelism 64 -o sp-8/ savepoint-udf
	run sh -c "ckpt-inspect -m sp-8 |
  jq -c '.operators[1] | [.parallelism, .max_parallelism, .key_groups[\"7\"]]'"
	output_is '[8,64,"56-63"]'
}

@test "flinkwrite: --max-parallelism at the savepoint's own max parallelism puts every key in the key group Flink wrote it in" {
	needs_fixtures
	local f
	for f in "$FIXTURES"/flink-artifacts/new-stateful*-savepoint; do
		rm -rf out
		ckpt-merge --max-parallelism 4 -o out/ "$f"
		diff <(ckpt-inspect -R "$f" | jq -c 'del(.subtask)' | sort) <(ckpt-inspect -R out | jq -c 'del(.subtask)' | sort) ||
			{ echo "$f: rows differ"; return 1; }
	done
}
