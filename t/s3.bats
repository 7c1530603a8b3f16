#!/usr/bin/env bats
# s3:// paths (issue 28): Flink savepoints read from a real S3 server (s3proxy, t/s3-helper.bash)
# give the same answers as their local copies; ckpt-merge -o s3://.../ writes one whole or not at
# all; faults (a fault-injecting proxy, t/s3-fault.py) end in one line naming bucket and key.
load helper
load s3-helper
load flinkstate-helper

setup_file() {
	s3_start
}

teardown_file() {
	s3_stop
}

# a test that failed between s3_fault and s3_fault_stop leaves no proxy behind
teardown() {
	s3_fault_stop
}

ART=flink-artifacts/new-stateful-broadcast-udf-migration-itcase-flink1.17

# s3_upload DIR BUCKET/PREFIX: the files of DIR uploaded under the prefix (bucket made).
s3_upload() {
	s3_bucket "${2%%/*}"
	s3_put_dir "$1" "$2"
}

# sp NAME BUCKET/PREFIX: the fixture artifact NAME uploaded under the prefix.
sp() {
	s3_upload "$FIXTURES/$ART-$1" "$2"
}

# same_as_local ARGS... -- S3URL LOCAL: ckpt-inspect ARGS gives the same output on both (the
# "file" member aside).
same_as_local() {
	local args=() a
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	run --separate-stderr ckpt-inspect "${args[@]}" "$2"
	status_is 0
	[ -z "$stderr" ] || { echo "stderr: $stderr"; return 1; }
	jq -S 'del(.file)' <<<"$output" >s3.json
	run ckpt-inspect "${args[@]}" "$3"
	status_is 0
	jq -S 'del(.file)' <<<"$output" >local.json
	diff -u local.json s3.json
	[ -s s3.json ]
}

@test "s3: the summary, -a and -c of savepoints and checkpoints in S3 equal their local copies" {
	needs_fixtures
	needs_s3
	for form in hashmap-savepoint rocksdb-savepoint hashmap-checkpoint rocksdb-savepoint-native; do
		sp "$form" "forms/$form"
		same_as_local -- "s3://forms/$form" "$FIXTURES/$ART-$form"
		same_as_local -a -- "s3://forms/$form/" "$FIXTURES/$ART-$form"
		same_as_local -c -- "s3://forms/$form/_metadata" "$FIXTURES/$ART-$form"
	done
	# Flink's schemes name the same objects
	same_as_local -a -- "s3a://forms/hashmap-savepoint" "$FIXTURES/$ART-hashmap-savepoint"
	same_as_local -a -- "s3p://forms/hashmap-savepoint" "$FIXTURES/$ART-hashmap-savepoint"
	# the file member names the S3 URL as given
	run ckpt-inspect s3://forms/hashmap-savepoint/
	[ "$(jq -r .file <<<"$output")" = s3://forms/hashmap-savepoint/ ]
}

@test "s3: state files are read by range, several requests for a file larger than a part" {
	needs_fixtures
	needs_s3
	sp rocksdb-savepoint parts/sp
	CKPT_S3_PART=100 same_as_local -a -- s3://parts/sp "$FIXTURES/$ART-rocksdb-savepoint"
	s3_fault
	CKPT_S3_PART=100 run ckpt-inspect -a s3://parts/sp
	status_is 0
	s3_fault_stop
	# the files are of some hundred bytes: more ranged GETs than files
	gets=$(grep -c '^GET /parts/sp/' fault.log)
	files=$(ls "$FIXTURES/$ART-rocksdb-savepoint" | wc -l)
	[ "$gets" -gt "$files" ]
	# -a reads a file twice (checked, then printed): its size and ETag come from one HEAD, pinned
	# for the run, so both reads are of the one object
	grep '^HEAD /parts/sp/' fault.log | sort | uniq -c
	[ "$(grep -c '^HEAD /parts/sp/' fault.log)" -ge "$((files - 1))" ]
	[ -z "$(grep '^HEAD ' fault.log | sort | uniq -d)" ]
}


@test "s3: a prefix without a _metadata, listed over several pages" {
	needs_s3
	s3_bucket empty
	for i in 1 2 3 4 5; do echo $i >f$i && s3curl -o /dev/null -T f$i "$S3_ENDPOINT/empty/dir/f$i"; done
	CKPT_S3_MAX_KEYS=2 bad 2 'ckpt-inspect: s3://empty/dir: not a snapshot: no _metadata (5 objects under s3://empty/dir/)' \
		ckpt-inspect s3://empty/dir
	bad 2 'ckpt-inspect: s3://empty/dir/f1: not a Flink _metadata (only those are read from S3)' ckpt-inspect s3://empty/dir/f1
}

@test "s3: credentials and endpoint from AWS_PROFILE, the credentials and config files" {
	needs_fixtures
	needs_s3
	sp hashmap-savepoint profile/sp
	printf '[other]\naws_access_key_id = %s\naws_secret_access_key = %s\n' "$S3_ID" "$S3_SECRET" >creds
	printf '[profile other]\nregion = us-east-1\nendpoint_url = %s\n' "$S3_ENDPOINT" >conf
	unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_ENDPOINT_URL
	AWS_PROFILE=other AWS_SHARED_CREDENTIALS_FILE=creds AWS_CONFIG_FILE=conf run ckpt-inspect -c s3://profile/sp
	status_is 0
	[ "$(jq -r .ok <<<"$output")" = true ]
	# without any credentials: said so, no request made
	bad 2 'ckpt-inspect: s3://profile/sp: no AWS credentials (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials)' \
		ckpt-inspect s3://profile/sp
}

@test "s3: wrong credentials: exit 2, bucket, key and the server's error code, never the secret" {
	needs_fixtures
	needs_s3
	sp hashmap-savepoint denied/sp
	AWS_SECRET_ACCESS_KEY=not-the-secret bad 2 'ckpt-inspect: s3://denied/sp: GET: HTTP 403 SignatureDoesNotMatch' \
		ckpt-inspect s3://denied/sp
	[[ $stderr != *not-the-secret* ]]
}

@test "s3: a bucket that does not exist, a key that does not" {
	needs_s3
	bad 2 'ckpt-inspect: s3://no-such-bucket/sp/_metadata: GET: HTTP 404 NoSuchBucket' ckpt-inspect s3://no-such-bucket/sp/_metadata
	s3_bucket there
	bad 2 'ckpt-inspect: s3://there/nothing: not a snapshot: no _metadata (0 objects under s3://there/nothing/)' \
		ckpt-inspect s3://there/nothing
}

@test "s3: a request answered 503 SlowDown three times, then 200: retried, the same answer" {
	needs_fixtures
	needs_s3
	sp hashmap-savepoint slow/sp
	s3_fault --503 3
	same_as_local -a -- s3://slow/sp "$FIXTURES/$ART-hashmap-savepoint"
	s3_fault_stop
	[ "$(grep -c '^GET ' fault.log)" -gt 3 ]
}

@test "s3: the server stopped in the middle of a read: exit 2, one line, nothing on stdout" {
	needs_fixtures
	needs_s3
	sp hashmap-savepoint gone/sp
	s3_fault --die-after-gets 3
	run --separate-stderr ckpt-inspect -a s3://gone/sp
	s3_fault_stop
	status_is 2
	[ -z "$output" ]
	echo "stderr: $stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr =~ ^ckpt-inspect:\ s3://gone/sp/[^:]+:\ (HEAD|GET):\ .*after\ 5\ attempts$ ]]
}

@test "s3: an object replaced during a read (its ETag changed): exit 2, never mixed bytes" {
	needs_fixtures
	needs_s3
	sp rocksdb-savepoint swap/sp
	big=$(cd "$FIXTURES/$ART-rocksdb-savepoint" && ls -S | grep -v _metadata | head -1)
	head -c "$(size "$FIXTURES/$ART-rocksdb-savepoint/$big")" /dev/zero >zeros
	s3_fault --replace "swap/sp/$big" zeros
	CKPT_S3_PART=64 run --separate-stderr ckpt-inspect -a s3://swap/sp
	s3_fault_stop
	status_is 2
	[ -z "$output" ]
	echo "stderr: $stderr"
	[[ $stderr == "ckpt-inspect: s3://swap/sp/$big: GET: the object changed during the read (HTTP 412 PreconditionFailed: its ETag is no longer \""*'")' ]]
}

@test "s3: ckpt-merge -o s3://bucket/prefix/ writes a savepoint that reads as the local one, _metadata last" {
	needs_fixtures
	needs_s3
	s3_bucket out
	in=$FIXTURES/$ART-hashmap-savepoint
	ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o local/ "$in"
	mkdir tmp
	s3_fault
	TMPDIR=$PWD/tmp ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o s3://out/edited/ "$in"
	s3_fault_stop
	# the local copy it uploaded from is gone
	[ -z "$(ls tmp)" ]
	same_as_local -a -- s3://out/edited local
	[ "$(s3_keys out edited/)" = "$(ls local | sed 's|^|edited/|' | sort)" ]
	# the _metadata is the last object written
	[ "$(grep '^PUT ' fault.log | tail -1)" = "PUT /out/edited/_metadata" ]
	# an existing _metadata at the target is refused, as a local directory is
	bad 2 'ckpt-merge: s3://out/edited/_metadata: already exists: the savepoint is written to a new prefix' \
		ckpt-merge -o s3://out/edited/ "$in"
}

@test "s3: ckpt-merge edits a savepoint read from S3 (its prefix or its _metadata, any scheme) as its local copy" {
	needs_fixtures
	needs_s3
	in=$FIXTURES/$ART-hashmap-savepoint
	sp hashmap-savepoint src/sp
	s3_bucket out
	ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o local/ "$in"
	mkdir tmp
	# into a local directory: the same files, byte for byte
	TMPDIR=$PWD/tmp ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o from-s3/ s3://src/sp
	diff -r local from-s3
	TMPDIR=$PWD/tmp ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o from-meta/ s3p://src/sp/_metadata
	diff -r local from-meta
	# S3 to S3, the uid edit too: as from the local copy
	ckpt-merge --uid 6a5da2ed9f898786a971ec9eb755e20b=renamed -o local-uid/ "$in"
	TMPDIR=$PWD/tmp ckpt-merge --uid 6a5da2ed9f898786a971ec9eb755e20b=renamed -o s3://out/uid/ s3a://src/sp/
	same_as_local -a -- s3://out/uid local-uid
	[ "$(s3_keys out uid/)" = "$(ls local-uid | sed 's|^|uid/|' | sort)" ]
	[ -z "$(ls tmp)" ]
	# a prefix without a _metadata, as ckpt-inspect says it
	bad 2 'ckpt-merge: s3://src/none: not a savepoint: no s3://src/none/_metadata' \
		ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o none/ s3://src/none
	[ ! -e none ]
}

@test "s3: an upload cut halfway: exit 2, nothing left behind" {
	needs_fixtures
	needs_s3
	s3_bucket cut
	mkdir tmp
	s3_fault --cut-puts-after 5
	TMPDIR=$PWD/tmp run --separate-stderr ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o s3://cut/sp/ "$FIXTURES/$ART-hashmap-savepoint"
	s3_fault_stop
	status_is 2
	[ -z "$output" ]
	[[ $stderr =~ ^ckpt-merge:\ s3://cut/sp/[^:]+:\ PUT:\ .*after\ 5\ attempts$ ]]
	[ -z "$(s3_keys cut sp/)" ]
	[ "$(grep -c '^DELETE /cut/sp/' fault.log)" -eq 5 ]
	[ -z "$(ls tmp)" ]
}

# tree DIR: a job's checkpoints (chk-2 complete, chk-3 being written, shared/ and taskowned/ beside
# them) and savepoints (one complete, one aborted), as a local directory.
tree() {
	mkdir -p "$1/job/chk-3" "$1/job/shared" "$1/job/taskowned" "$1/sp/savepoint-2b"
	cp -r "$FIXTURES/$ART-hashmap-checkpoint" "$1/job/chk-2"
	cp -r "$FIXTURES/$ART-hashmap-savepoint" "$1/sp/savepoint-1a"
	echo x >"$1/job/chk-3/state"
	echo x >"$1/job/shared/state"
	cp -r "$FIXTURES/$ART-hashmap-savepoint" "$1/job/taskowned/savepoint-in-taskowned"
	echo x >"$1/sp/savepoint-2b/state"
}

# s3_put_tree DIR BUCKET/PREFIX: every file under DIR uploaded under the prefix, the savepoints
# first (so that the checkpoint is the newest).
s3_put_tree() {
	local f
	(cd "$1" && find . -type f | sed 's|^\./||' | sort -r) | while read -r f; do
		s3curl -o /dev/null -T "$1/$f" "$S3_ENDPOINT/$2/$f"
	done
}

@test "s3: -l on a prefix lists what -l lists of the same tree on disk, the listing read page by page" {
	needs_fixtures
	needs_s3
	tree local
	s3_bucket lists
	s3_put_tree local lists/root
	run --separate-stderr ckpt-inspect -l local
	status_is 0
	jq -c 'del(.time) | .path |= sub("^local"; "s3://lists/root") | .reason |= (if . then sub("local/"; "s3://lists/root/") else . end)' \
		<<<"$output" >local.jsonl
	s3_fault
	CKPT_S3_MAX_KEYS=3 run --separate-stderr ckpt-inspect -l s3://lists/root/
	s3_fault_stop
	status_is 0
	[ -z "$stderr" ]
	jq -c 'del(.time)' <<<"$output" >s3.jsonl
	diff -u local.jsonl s3.jsonl
	[ "$(wc -l <s3.jsonl)" -eq 4 ]
	# the listing went in pages of 3 keys, each asked with the continuation token of the one before
	[ "$(grep -c '^GET /lists/[?].*list-type=2' fault.log)" -gt 3 ]
	[ "$(grep -c '^GET /lists/[?]continuation-token=' fault.log)" -gt 2 ]
	# the time is the _metadata's LastModified
	[ "$(jq -r 'select(.complete) | .time' <<<"$output" | grep -c '^20[0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9:]*Z$')" -eq 2 ]
	# -c reads the state files too
	s3_fault
	run ckpt-inspect -c -l s3://lists/root
	s3_fault_stop
	status_is 0
	[ "$(jq -c 'select(.complete)' <<<"$output" | wc -l)" -eq 2 ]
	# their sizes and ETags came with the listing: no HEAD of any of them
	[ "$(grep -c '^GET /lists/root/job/chk-2/.' fault.log)" -gt 2 ]
	[ "$(grep -c '^HEAD ' fault.log)" -eq 0 ]
}

@test "s3: --latest on a prefix prints the newest complete snapshot's URL, in the scheme given" {
	needs_fixtures
	needs_s3
	tree local
	s3_bucket latest
	s3_put_tree local latest/root
	run --separate-stderr ckpt-inspect --latest s3://latest/root/job
	status_is 0
	[ "$output" = s3://latest/root/job/chk-2 ]
	run --separate-stderr ckpt-inspect --latest s3a://latest/root/sp/
	status_is 0
	[ "$output" = s3a://latest/root/sp/savepoint-1a ]
	# the prefix of one snapshot, and its _metadata, name that snapshot
	run --separate-stderr ckpt-inspect --latest s3://latest/root/job/chk-2/_metadata
	[ "$output" = s3://latest/root/job/chk-2 ]
	# nothing complete: exit 1
	run --separate-stderr ckpt-inspect --latest s3://latest/root/job/chk-3
	status_is 1
	[ "$stderr" = "ckpt-inspect: s3://latest/root/job/chk-3: no complete checkpoint or savepoint (1 found)" ]
	bad 2 'ckpt-inspect: s3://latest/nothing: no such prefix (no objects under s3://latest/nothing/)' \
		ckpt-inspect -l s3://latest/nothing
	bad 2 'ckpt-inspect: s3://no-such-bucket/x/: GET: HTTP 404 NoSuchBucket' ckpt-inspect -l s3://no-such-bucket/x
}

@test "s3: -d between a snapshot in S3 and a local one, either way round" {
	needs_fixtures
	needs_s3
	in=$FIXTURES/$ART-hashmap-savepoint
	sp hashmap-savepoint diff/sp
	ckpt-merge --drop 6a5da2ed9f898786a971ec9eb755e20b -o edited/ "$in"
	run --separate-stderr ckpt-inspect -d "$in" s3://diff/sp
	status_is 0
	[ -z "$stderr" ]
	for pair in "edited s3://diff/sp|edited $in" "s3://diff/sp edited|$in edited"; do
		run ckpt-inspect -d ${pair#*|}
		status_is 1
		jq -S 'del(.from, .to)' <<<"$output" >local.json
		run --separate-stderr ckpt-inspect -d ${pair%|*}
		status_is 1
		[ -z "$stderr" ]
		jq -S 'del(.from, .to)' <<<"$output" >s3.json
		diff -u local.json s3.json
		grep -q 6a5da2ed9f898786a971ec9eb755e20b s3.json
	done
}

# What -a reads of sp_dir's state (t/flinkstate-helper.bash): its entries, not where they were.
ENTRIES='.operators[0].subtasks[0] | [.operator_state.names.entries, (.keyed_state.entries[] | [.key_group, .key, .value])]'

@test "s3: -r maps a local prefix into S3, and an S3 prefix onto a local directory" {
	needs_s3
	sp_dir
	s3_bucket remap
	s3_put_dir sp remap/chk
	ckpt-inspect --raw -a sp | jq -cS "$ENTRIES" >want.json
	# handles naming local paths, the files in S3
	mkdir m
	(cd sp && meta_file "abs /data/chk/op" "abs /data/chk/kv" ../m)
	for to in s3://remap/chk s3a://remap/chk/ s3p://remap/chk; do
		run --separate-stderr ckpt-inspect --raw -a -r "/data/chk=$to" m
		status_is 0
		jq -cS "$ENTRIES" <<<"$output" | diff -u want.json -
	done
	run ckpt-inspect -c -r /data/chk=s3://remap/chk m
	status_is 0
	run --separate-stderr ckpt-inspect -c -r /data/chk=s3://remap/elsewhere m
	status_is 1
	[ "$(jq -c '.problems' <<<"$output")" = '[{"where":"s3://remap/elsewhere/kv","problem":"missing (no such object)"},{"where":"s3://remap/elsewhere/op","problem":"missing (no such object)"}]' ]
	# handles naming S3, read from S3, or with -r from a local copy while no server answers
	(cd sp && meta_file "abs s3a://remap/chk/op" "abs s3://remap/chk/kv" ../m)
	run --separate-stderr ckpt-inspect --raw -a m
	status_is 0
	jq -cS "$ENTRIES" <<<"$output" | diff -u want.json -
	AWS_ENDPOINT_URL=http://127.0.0.1:9 run --separate-stderr ckpt-inspect --raw -a -r "s3p://remap/chk/=$PWD/sp" m
	status_is 0
	jq -cS "$ENTRIES" <<<"$output" | diff -u want.json -
	AWS_ENDPOINT_URL=http://127.0.0.1:9 run --separate-stderr ckpt-inspect --raw -a m
	status_is 2
	[[ $stderr == "ckpt-inspect: s3://remap/chk/op: HEAD: "*"after 5 attempts" ]]
}

# same_replay ARGS... -- S3URL LOCAL: ckpt-replay ARGS gives the same stdout, status and stderr (the
# log's name aside) on both.
same_replay() {
	local args=() a
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	run --separate-stderr ckpt-replay "${args[@]}" "$3"
	local lstatus=$status lout=$output lerr=${stderr//$3/LOG}
	run --separate-stderr ckpt-replay "${args[@]}" "$2"
	[ "$status" -eq "$lstatus" ] || { echo "status $status, locally $lstatus: $stderr"; return 1; }
	[ "${stderr//${2%/}/LOG}" = "$lerr" ] || { echo "stderr: $stderr"; echo "locally: $lerr"; return 1; }
	[ "$output" = "$lout" ] || { diff -u <(echo "$lout") <(echo "$output"); return 1; }
	[ -n "$output" ]
}

@test "s3: ckpt-replay reads an event log under a prefix as it reads the local directory" {
	needs_s3
	# ckpt's format in three segments (three sessions), the last one torn
	head -4 "$ROOT/examples/events.ndjson" | ckpt-replay -w L
	sed -n 5,8p "$ROOT/examples/events.ndjson" | ckpt-replay -w L
	sed -n '9,$p' "$ROOT/examples/events.ndjson" | ckpt-replay -w L
	printf '\0\0\0\100torn' >>L/events.2
	[ -s L/events.2 ] && [ ! -e L/events.3 ]
	s3_upload L logs/ckpt
	s3_fault
	same_replay -p -- s3://logs/ckpt L
	s3_fault_stop
	# the listing gave each segment's size and ETag: no HEAD asked
	[ "$(grep -c '^HEAD ' fault.log)" -eq 0 ]
	[ "$(grep -c '^GET /logs/?.*list-type=2' fault.log)" -eq 1 ]
	same_replay -e -- s3a://logs/ckpt/ L
	[ "$stderr" = "ckpt-replay: s3a://logs/ckpt/events.2: offset 362: torn record of 8 bytes ignored" ]
	same_replay -g "$DATA/replay/graph.json" -- s3p://logs/ckpt L
	# -R copies it to a local directory, torn tail cut off
	ckpt-replay --repair local-copy L
	run --separate-stderr ckpt-replay --repair s3-copy s3://logs/ckpt/
	status_is 0
	[ -z "$stderr" ]
	diff -r local-copy s3-copy
	# Flink's format, four records a segment, a gap after events.1
	python3 "$T/flinklog.py" F 4 <"$DATA/replay-flink/log.ndjson"
	[ -e F/events.2 ]
	s3_upload F logs/flink
	same_replay -p -- s3://logs/flink F
	same_replay -e -- s3://logs/flink F
	same_replay -g "$DATA/replay-flink/graph.json" -- s3://logs/flink F
	mv F/events.1 F-events.1
	s3curl -X DELETE "$S3_ENDPOINT/logs/flink/events.1"
	same_replay -- s3://logs/flink F
	[[ $stderr == "ckpt-replay: s3://logs/flink: events.1 is missing: "*" ignored" ]]
	# a log is written to a local directory only
	bad 2 'ckpt-replay: s3://logs/new: a log is written to a local directory only, not to S3' \
		ckpt-replay -w s3://logs/new </dev/null
	bad 2 'ckpt-replay: s3://logs/copy: a log is written to a local directory only, not to S3' \
		ckpt-replay --repair s3://logs/copy L
	[ -z "$(s3_keys logs new)$(s3_keys logs copy)" ]
}

@test "s3: ckpt-replay on a prefix without objects, in a bucket that does not exist" {
	needs_s3
	s3_bucket logs
	bad 2 'ckpt-replay: s3://logs/nothing: no such prefix (no objects under s3://logs/nothing/)' \
		ckpt-replay s3://logs/nothing/
	bad 2 'ckpt-replay: s3://logs/nothing: no such prefix (no objects under s3://logs/nothing/)' \
		ckpt-replay -e s3://logs/nothing
	bad 2 'ckpt-replay: s3://no-such-bucket/L/: GET: HTTP 404 NoSuchBucket' ckpt-replay s3://no-such-bucket/L
}

@test "s3: ckpt-replay with the server stopped in the middle of the log: exit 2, one line, nothing on stdout" {
	needs_s3
	ckpt-replay -w L <"$ROOT/examples/events.ndjson"
	s3_upload L gone/L
	s3_fault --die-after-gets 4
	CKPT_S3_PART=100 run --separate-stderr ckpt-replay s3://gone/L
	s3_fault_stop
	status_is 2
	[ -z "$output" ]
	echo "stderr: $stderr"
	[ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ]
	[[ $stderr =~ ^ckpt-replay:\ s3://gone/L/events.0:\ GET:\ .*after\ 5\ attempts$ ]]
	# the log had been read in part: the listing, its first bytes, then the first of its ranges
	[ "$(grep -c '^GET /gone/L/events.0' fault.log)" -ge 2 ]
}

# on_tty CMD...: CMD with stdin, stdout and stderr on a pty (script(1)); $output is what the
# terminal got (as t/progress.bats).
on_tty() {
	local cmd=
	printf -v cmd '%q ' "$@"
	run script -qec "$cmd" /dev/null </dev/null
}

@test "s3: progress on a terminal: -c shows bytes fetched of the state files' bytes, ckpt-replay of the log's" {
	needs_fixtures
	needs_s3
	local E=$'\e[K' total
	sp rocksdb-savepoint progress/sp
	total=$(ckpt-inspect -c s3://progress/sp | jq .bytes)
	[ "$total" -gt 1024 ]
	kib=$(awk -v n="$total" 'BEGIN { printf "%.1f KiB", n / 1024 }')
	# ranges answered late, so that the line is redrawn on the way
	s3_fault --slow-ranges 0.3
	CKPT_S3_PART=500 on_tty ckpt-inspect -c s3://progress/sp
	s3_fault_stop
	status_is 0
	want=$'\r'"ckpt-inspect: 0 B of $kib (0%)$E"
	[ "${output:0:${#want}}" = "$want" ] || { printf '%q\n' "$output"; return 1; }
	# some of it on the way (the bytes of the ranges come in ahead of the files read), then cleared
	[[ $output =~ $'\r'"ckpt-inspect: "[0-9.]+\ (B|KiB)" of $kib ("[1-9][0-9]?"%)" ]] || { printf '%q\n' "$output"; return 1; }
	[[ $output == *$'\r'"$E{"* ]]
	[ "$(jq -c . <<<"${output#*$'\r'"$E"}" | tr -d '\r')" = "$(ckpt-inspect -c s3://progress/sp)" ]
	# not on a terminal: nothing
	run --separate-stderr ckpt-inspect -c s3://progress/sp
	[ -z "$stderr" ]
	# ckpt-replay: the log's bytes, the sizes from the listing
	ckpt-replay -w L <"$ROOT/examples/events.ndjson"
	s3_upload L progress/L
	on_tty ckpt-replay s3://progress/L
	status_is 0
	want=$'\r'"ckpt-replay: 0 B of 1.1 KiB (0%)$E"
	[ "${output:0:${#want}}" = "$want" ] || { printf '%q\n' "$output"; return 1; }
}

@test "s3: -v says how many bytes were fetched from the store" {
	needs_fixtures
	needs_s3
	sp rocksdb-savepoint verbose/sp
	# the summary of a RocksDB savepoint reads every file once, whole (RocksDB's files are fetched)
	run --separate-stderr ckpt-inspect -v s3://verbose/sp
	status_is 0
	[ "${stderr##*$'\n'}" = "ckpt-inspect: s3://verbose/sp: $(du -cb "$FIXTURES/$ART-rocksdb-savepoint"/* | tail -1 | cut -f1) bytes fetched from S3" ]
	# nothing of the kind for a local copy
	run --separate-stderr ckpt-inspect -v "$FIXTURES/$ART-rocksdb-savepoint"
	[[ $stderr != *fetched* ]]
}
