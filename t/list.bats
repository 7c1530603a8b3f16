#!/usr/bin/env bats
# ckpt-inspect -l DIR and --latest DIR: the checkpoints and savepoints under a directory tree,
# complete or not and why, and the newest complete one (trees built here from the fixtures and
# from ckpt's own writers).

bats_require_minimum_version 1.5.0
load helper

teardown() {
	[ -z "${LIST_TMP:-}" ] || rm -rf "$LIST_TMP"
}

A=new-stateful-udf-migration-itcase-flink1.19-hashmap-checkpoint # checkpoint 1, 16 state files
B=new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint # checkpoint 2, 2 state files
S=new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint  # savepoint 2, 16 state files
JOB=ckpts/8bc367c771e2761a1e9de0c639418e85

# stamp TIME PATH: the time a snapshot was written (its _metadata's, or the archive's, mtime)
stamp() {
	if [ -f "$2/_metadata" ]; then
		touch -d "$1" "$2/_metadata"
	elif [ -d "$2" ]; then
		touch -d "$1" "$2/MANIFEST.json"
	else
		touch -d "$1" "$2"
	fi
}

# A Flink job's checkpoint directory as Flink lays it out: chk-1 and chk-2 (B, an older file),
# shared/ and taskowned/ (which hold a savepoint here, to show that they are not entered).
flink_job() {
	mkdir -p "$JOB/taskowned" "$JOB/shared"
	cp -r "$FIXTURES/flink-artifacts/$A" "$JOB/chk-1"
	cp -r "$FIXTURES/flink-artifacts/$B" "$JOB/chk-2"
	cp -r "$FIXTURES/flink-artifacts/$S" "$JOB/shared/not-listed"
	stamp '2026-01-02 10:00:00 UTC' "$JOB/chk-1"
	stamp '2026-01-02 09:00:00 UTC' "$JOB/chk-2"
}

@test "list: a Flink job directory: each chk-N with its id, kind, time, size and files, in id order" {
	needs_fixtures
	flink_job
	cp -r "$FIXTURES/flink-artifacts/$A" "$JOB/chk-10"
	stamp '2026-01-02 11:00:00 UTC' "$JOB/chk-10"
	run --separate-stderr ckpt-inspect -l ckpts
	status_is 0
	[ -z "$stderr" ]
	match_golden "$DATA/list/flink-job.expected"
	# the long option, the job directory itself, a trailing slash
	run ckpt-inspect --list "$JOB/"
	status_is 0
	output_is "$(sed "s|\"ckpts/8bc367c771e2761a1e9de0c639418e85/|\"$JOB/|" "$DATA/list/flink-job.expected")"
	# the size is the _metadata's and that of each file it names
	[ "$(jq -r 'select(.path | endswith("chk-2")) | .size' <<< "$(ckpt-inspect -l ckpts)")" = \
	  "$(cat "$JOB"/chk-2/* | wc -c)" ]
}

@test "list: a cut _metadata, a deleted file, a size mismatch, a chk-N without _metadata: not complete, and why" {
	needs_fixtures
	flink_job
	for n in 3 4 5 6; do cp -r "$FIXTURES/flink-artifacts/$A" "$JOB/chk-$n"; done
	head -c 1000 "$FIXTURES/flink-artifacts/$A/_metadata" > "$JOB/chk-3/_metadata" # being written
	rm "$JOB/chk-4/0f6333b0-8a0f-408c-9925-0817dbc40bae"                           # shared file deleted
	truncate -s 10 "$JOB/chk-5/0f6333b0-8a0f-408c-9925-0817dbc40bae"
	: > "$JOB/chk-6/_metadata"
	mkdir "$JOB/chk-7"                                                             # no _metadata yet
	run sh -c 'ckpt-inspect -l ckpts | jq -c "{path, checkpoint_id, complete, reason}"'
	status_is 0
	output_is "{\"path\":\"$JOB/chk-1\",\"checkpoint_id\":1,\"complete\":true,\"reason\":null}
{\"path\":\"$JOB/chk-2\",\"checkpoint_id\":2,\"complete\":true,\"reason\":null}
{\"path\":\"$JOB/chk-3\",\"checkpoint_id\":3,\"complete\":false,\"reason\":\"$JOB/chk-3/_metadata: offset 995: 1 offsets are more than the remaining 5 bytes can hold\"}
{\"path\":\"$JOB/chk-4\",\"checkpoint_id\":1,\"complete\":false,\"reason\":\"$JOB/chk-4/0f6333b0-8a0f-408c-9925-0817dbc40bae: missing (No such file or directory)\"}
{\"path\":\"$JOB/chk-5\",\"checkpoint_id\":1,\"complete\":false,\"reason\":\"$JOB/chk-5/0f6333b0-8a0f-408c-9925-0817dbc40bae: short: 10 bytes, the _metadata records 1508\"}
{\"path\":\"$JOB/chk-6\",\"checkpoint_id\":6,\"complete\":false,\"reason\":\"_metadata is empty (being written)\"}
{\"path\":\"$JOB/chk-7\",\"checkpoint_id\":7,\"complete\":false,\"reason\":\"no _metadata (being written, or abandoned)\"}"
	# what -c says of the same file, word for word
	run --separate-stderr ckpt-inspect -c "$JOB/chk-5"
	status_is 1
	[ "$stderr" = "ckpt-inspect: $JOB/chk-5/0f6333b0-8a0f-408c-9925-0817dbc40bae: short: 10 bytes, the _metadata records 1508" ]
	# the newest complete is checkpoint 2: 3 to 7 are not complete
	run ckpt-inspect --latest ckpts
	status_is 0
	output_is "$JOB/chk-2"
}

@test "latest: the highest complete checkpoint id of a job, not the newest file" {
	needs_fixtures
	flink_job
	# chk-1 was written last (its file is newer), but Flink restores checkpoint 2
	run --separate-stderr ckpt-inspect --latest "$JOB"
	status_is 0
	[ -z "$stderr" ]
	output_is "$JOB/chk-2"
	# checkpoint 2 loses a file: checkpoint 1
	rm "$JOB/chk-2/ab0b7f98-28c6-4ddf-b7a8-9f52fd328a3f"
	run ckpt-inspect --latest "$JOB"
	output_is "$JOB/chk-1"
	# checkpoint 1 is cut too: none
	head -c 100 "$FIXTURES/flink-artifacts/$A/_metadata" > "$JOB/chk-1/_metadata"
	bad 1 "ckpt-inspect: $JOB: no complete checkpoint or savepoint (2 found)" ckpt-inspect --latest "$JOB"
	# and -l still lists both, exit 0
	run ckpt-inspect -l "$JOB"
	status_is 0
	[ "${#lines[@]}" -eq 2 ]
}

@test "list, latest: the directory is the operand wherever it stands, or attached" {
	needs_fixtures
	flink_job
	want=$(ckpt-inspect -l -c "$JOB")
	[ "$(wc -l <<<"$want")" -eq 2 ]
	for args in "-l $JOB -c" "-c -l $JOB" "$JOB -l -c" "-cl$JOB" "--list=$JOB -c" "-c --list -- $JOB"; do
		run --separate-stderr ckpt-inspect $args
		status_is 0
		[ -z "$stderr" ]
		[ "$output" = "$want" ] || { echo "ckpt-inspect $args: $output"; return 1; }
	done
	for args in "--latest $JOB" "-c --latest $JOB" "--latest -c $JOB" "$JOB --latest" "--latest=$JOB -c"; do
		run --separate-stderr ckpt-inspect $args
		status_is 0
		output_is "$JOB/chk-2"
	done
}

@test "latest: across jobs and savepoints, the newest time written" {
	needs_fixtures
	flink_job
	mkdir -p ckpts/0185c2d2ed6b9d01a0f8a2383e6ec9d0 savepoints
	cp -r "$FIXTURES/flink-artifacts/$A" ckpts/0185c2d2ed6b9d01a0f8a2383e6ec9d0/chk-1
	stamp '2026-01-02 09:30:00 UTC' ckpts/0185c2d2ed6b9d01a0f8a2383e6ec9d0/chk-1
	cp -r "$FIXTURES/flink-artifacts/$S" savepoints/savepoint-8bc367-0123456789ab
	stamp '2026-01-02 08:00:00 UTC' savepoints/savepoint-8bc367-0123456789ab
	# job 8bc3's latest is checkpoint 2 (09:00), job 0185's checkpoint 1 (09:30): the newer one
	run ckpt-inspect --latest .
	output_is ./ckpts/0185c2d2ed6b9d01a0f8a2383e6ec9d0/chk-1
	# a savepoint written after both
	stamp '2026-01-02 12:00:00 UTC' savepoints/savepoint-8bc367-0123456789ab
	run ckpt-inspect --latest .
	output_is ./savepoints/savepoint-8bc367-0123456789ab
	# a savepoint being written: its state files, no _metadata yet
	mkdir savepoints/savepoint-8bc367-bbbbbbbbbbbb
	cp "$FIXTURES/flink-artifacts/$S/03a25f40-09fa-4aa9-a6a6-a7a689cae990" savepoints/savepoint-8bc367-bbbbbbbbbbbb/
	run sh -c 'ckpt-inspect -l savepoints/ | jq -c "{path, kind, checkpoint_id, files, complete, reason}"'
	output_is '{"path":"savepoints/savepoint-8bc367-0123456789ab","kind":"savepoint","checkpoint_id":2,"files":16,"complete":true,"reason":null}
{"path":"savepoints/savepoint-8bc367-bbbbbbbbbbbb","kind":"savepoint","checkpoint_id":null,"files":0,"complete":false,"reason":"no _metadata (being written, or abandoned)"}'
	run ckpt-inspect --latest .
	output_is ./savepoints/savepoint-8bc367-0123456789ab
	# none complete in a tree without snapshots, or an empty one
	mkdir empty
	bad 1 "ckpt-inspect: empty: no complete checkpoint or savepoint (0 found)" ckpt-inspect --latest empty
	run --separate-stderr ckpt-inspect -l empty
	status_is 0
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "list: ckpt's archives from ckpt-merge and ckpt-run, each form; another tar is none; a cut one is not complete" {
	d="$ROOT/examples/state.json"
	mkdir -p mine run
	jq '.kind = "checkpoint" | .checkpoint_id = 5' "$d" > c5.json
	jq '.kind = "checkpoint" | .checkpoint_id = 6' "$d" > c6.json
	ckpt-merge -o mine/chk-5.tar c5.json
	ckpt-merge -o mine/chk-6.tgz c6.json
	ckpt-merge -o mine/savepoint-7.zip "$d"
	ckpt-merge -o mine/unpacked/ "$d"
	head -c 3000 mine/chk-5.tar > mine/chk-8.tar # cut
	echo x > other && tar cf mine/other.tar other
	for f in mine/chk-5.tar mine/chk-6.tgz mine/savepoint-7.zip mine/unpacked mine/chk-8.tar; do
		stamp '2026-03-04 05:06:07 UTC' "$f"
	done
	run --separate-stderr ckpt-inspect -l mine
	status_is 0
	[ -z "$stderr" ]
	match_golden "$DATA/list/archives.expected"
	# the archives a run writes, and its savepoint
	run_job --stop-after-checkpoints 2 --dir run/cps "$ROOT/examples/savepoint.pipeline.json"
	status_is 0
	run sh -c 'ckpt-inspect -l run | jq -c "{kind, format, complete}"'
	output_is '{"kind":"checkpoint","format":"tar","complete":true}
{"kind":"savepoint","format":"tar","complete":true}'
	sp=$(events savepoint | jq -r .path)
	[ "$sp" = run/cps/savepoint-3.tar ]
	stamp '2030-01-01 00:00:00 UTC' "$sp"
	run ckpt-inspect --latest .
	output_is "./$sp"
}

@test "list -c: also parsed, as -c checks: a damaged state file or member of the right size" {
	needs_fixtures
	flink_job
	flip "$JOB/chk-2/ab0b7f98-28c6-4ddf-b7a8-9f52fd328a3f" 4
	run sh -c 'ckpt-inspect -l "$1" | jq -c "{complete, reason}"' sh "$JOB"
	output_is '{"complete":true,"reason":null}
{"complete":true,"reason":null}'
	run --separate-stderr ckpt-inspect -c -l "$JOB"
	status_is 0
	[ -z "$stderr" ]
	reason=$(jq -r 'select(.path | endswith("chk-2")) | .reason' <<< "$output")
	# -c's own words for the same file
	run --separate-stderr ckpt-inspect -c "$JOB/chk-2"
	status_is 1
	[ "$stderr" = "ckpt-inspect: $reason" ]
	run ckpt-inspect -c --latest "$JOB"
	output_is "$JOB/chk-1"
	# a ckpt archive: a member's checksum
	ckpt-merge -o d/ "$ROOT/examples/state.json"
	m=$(jq -r '.members[0].name' d/MANIFEST.json)
	flip "d/$m" 20
	run sh -c 'ckpt-inspect -l d | jq -c "{complete, reason}"'
	output_is '{"complete":true,"reason":null}'
	run sh -c 'ckpt-inspect -c -l d | jq -r .reason'
	[[ "$output" == "d:$m: checksum mismatch"* ]]
	bad 1 "ckpt-inspect: d: no complete checkpoint or savepoint (1 found)" ckpt-inspect -c --latest d
}

@test "list: one snapshot named alone: a Flink directory, its _metadata, an archive" {
	needs_fixtures
	flink_job
	run sh -c 'ckpt-inspect -l "$1" | jq -r .path' sh "$JOB/chk-1"
	output_is "$JOB/chk-1"
	run sh -c 'ckpt-inspect -l "$1/_metadata" | jq -r ".path, .complete"' sh "$JOB/chk-1"
	output_is "$JOB/chk-1
true"
	run ckpt-inspect --latest "$JOB/chk-2/_metadata"
	output_is "$JOB/chk-2"
	ckpt-merge -o x.tar "$ROOT/examples/state.json"
	run ckpt-inspect --latest x.tar
	output_is x.tar
}

@test "list: bad input: a directory it cannot read, one that is not there, options that do not go with it" {
	bad 2 'ckpt-inspect: nosuch: cannot open: No such file or directory' ckpt-inspect -l nosuch
	bad 2 'ckpt-inspect: nosuch: cannot open: No such file or directory' ckpt-inspect --latest nosuch
	as=()
	if [ "$(id -u)" -eq 0 ]; then
		# root reads every directory: the tree is read as another user, from a directory open to it
		command -v setpriv > /dev/null || skip "root, and no setpriv to run as another user"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
		LIST_TMP=$(mktemp -d)
		chmod 755 "$LIST_TMP"
		cd "$LIST_TMP"
		"${as[@]}" "$(command -v ckpt-inspect)" -V > /dev/null || skip "ckpt-inspect is not open to other users"
	fi
	mkdir -p tree/a/locked tree/b
	chmod 0 tree/a/locked
	bad 2 'ckpt-inspect: tree/a/locked: cannot open: Permission denied' "${as[@]}" "$(command -v ckpt-inspect)" -l tree
	bad 2 'ckpt-inspect: tree/a/locked: cannot open: Permission denied' "${as[@]}" "$(command -v ckpt-inspect)" --latest tree
	chmod 755 tree/a/locked
	bad 2 'ckpt-inspect: -l goes with -c and -r alone (see ckpt-inspect -h)' ckpt-inspect -a -l tree
	bad 2 'ckpt-inspect: --latest goes with -c and -r alone (see ckpt-inspect -h)' ckpt-inspect -m --latest tree
	bad 2 'ckpt-inspect: --latest takes one directory, not also "x.tar" (see ckpt-inspect -h)' \
		ckpt-inspect --latest tree x.tar
	bad 2 'ckpt-inspect: --latest takes its directory, not files: "x.tar" (see ckpt-inspect -h)' \
		ckpt-inspect --latest=tree x.tar
	bad 2 'ckpt-inspect: -l needs a directory (see ckpt-inspect -h)' ckpt-inspect -c -l
	bad 2 'ckpt-inspect: -l and --latest take one directory, once (see ckpt-inspect -h)' \
		ckpt-inspect -l tree --latest tree
}

@test "list: symbolic links are followed, loops end, a directory reached twice is listed once" {
	needs_fixtures
	flink_job
	ln -s .. "$JOB/chk-1/up"       # never entered: chk-1 is a snapshot
	mkdir -p ckpts/loop
	ln -s ../loop ckpts/loop/again # a loop
	ln -s ../ckpts ckpts/loop/back # back to the top
	ln -s nowhere ckpts/dangling
	ln -s "$PWD/$JOB" ckpts/job-link
	run --separate-stderr timeout 10 ckpt-inspect -l ckpts
	status_is 0
	[ -z "$stderr" ]
	[ "$(jq -r .path <<< "$output")" = "$JOB/chk-1
$JOB/chk-2" ]
}
