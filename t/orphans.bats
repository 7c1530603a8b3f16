#!/usr/bin/env bats
# ckpt-inspect --orphans DIR: the files under DIR that no complete checkpoint or savepoint there
# references and that cannot be in use, never one that is (issue 29).  The job directories are
# built here from the fixtures' RocksDB checkpoints (state files named relative to their
# _metadata) and from synthetic _metadata files (flinkstate-helper.bash) naming files in shared/
# by absolute path, as incremental checkpoints name their shared state.

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper

R=stateful-scala-udf-migration-itcase-flink1.15-rocksdb-checkpoint # checkpoint 2, 6 state files
S=new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint     # savepoint 2, 16 state files
JOB=ckpts/8bc367c771e2761a1e9de0c639418e85
SP=ckpts/savepoints
OLD='2026-01-01 10:00:00 UTC'

# chk-N (N $1) a synthetic checkpoint naming its operator state shared/$2 and its keyed state $3
# (an absolute path), both written here.
shared_chk() {
	mkdir -p "$JOB/chk-$1"
	cp op "$JOB/shared/$2"
	cp kv "$3"
	meta_file "abs $PWD/$JOB/shared/$2" "abs $3" "$JOB/chk-$1"
}

# A job that leaked as Flink's do: chk-1 aborted (no _metadata), chk-2 complete (the fixture's,
# and one stray upload in it), chk-3 and chk-4 complete sharing shared/kv-a (chk-4's keyed state
# lies outside ckpts/), shared/old-1 referenced by none, shared/fresh written after chk-4's
# _metadata, chk-5 (no _metadata yet) and chk-6 (a cut _metadata) above the newest, taskowned/;
# beside it, a savepoint that failed (no _metadata) and one that did not.
leaky_job() {
	op_file op
	kv_file kv
	mkdir -p "$JOB/shared" "$JOB/taskowned" "$SP" outside
	cp -r "$FIXTURES/flink-artifacts/$R" "$JOB/chk-1"
	rm "$JOB/chk-1/_metadata"
	cp -r "$FIXTURES/flink-artifacts/$R" "$JOB/chk-2"
	echo stray > "$JOB/chk-2/3b1d0c2e-stray-upload"
	shared_chk 3 op-3 "$PWD/$JOB/shared/kv-a"
	shared_chk 4 op-4 "$PWD/outside/kv-b"
	cp kv "$JOB/shared/kv-a"
	echo old > "$JOB/shared/old-1"
	echo fresh > "$JOB/shared/fresh"
	mkdir "$JOB/chk-5" "$JOB/chk-6"
	echo uploading > "$JOB/chk-5/e0f1-upload"
	head -c 100 "$JOB/chk-4/_metadata" > "$JOB/chk-6/_metadata"
	echo owned > "$JOB/taskowned/0c1d-owned"
	mkdir "$SP/savepoint-8bc367-0123456789ab"
	echo half > "$SP/savepoint-8bc367-0123456789ab/5d6e-state"
	echo half > "$SP/savepoint-8bc367-0123456789ab/7f80-state"
	cp -r "$FIXTURES/flink-artifacts/$S" "$SP/savepoint-8bc367-fedcba987654"
	find ckpts outside -exec touch -h -d "$OLD" {} +
	touch -d '2026-01-02 08:00:00 UTC' "$JOB/chk-2/_metadata"
	touch -d '2026-01-02 09:00:00 UTC' "$JOB/chk-3/_metadata"
	touch -d '2026-01-02 10:00:00 UTC' "$JOB/chk-4/_metadata"
	touch -d '2026-01-02 10:30:00 UTC' "$JOB/shared/fresh" "$JOB/chk-5/e0f1-upload" "$JOB/chk-6/_metadata"
}

@test "orphans: a leaky job: the aborted checkpoint, the unreferenced shared file, the stray upload, the failed savepoint, by path" {
	needs_fixtures
	leaky_job
	run --separate-stderr ckpt-inspect --orphans ckpts
	status_is 0
	[ "$stderr" = "ckpt-inspect: ckpts: 1 file a _metadata names lies outside it: not listed" ]
	match_golden "$DATA/orphans/leaky.expected"
}

@test "orphans: deleting exactly what is listed leaves every retained checkpoint and savepoint complete" {
	needs_fixtures
	leaky_job
	before=$(ckpt-inspect -l ckpts)
	ckpt-inspect --orphans ckpts 2>/dev/null | jq -r .path | xargs rm --
	# nothing more to list, and nothing listed is left
	[ -z "$(ckpt-inspect --orphans ckpts 2>/dev/null)" ]
	for f in $(jq -r .path "$DATA/orphans/leaky.expected"); do [ ! -e "$f" ]; done
	for d in "$JOB/chk-2" "$JOB/chk-3" "$SP/savepoint-8bc367-fedcba987654"; do
		run ckpt-inspect -c "$d/_metadata"
		status_is 0
	done
	run ckpt-inspect -c -r "$PWD/outside=$PWD/outside" "$JOB/chk-4/_metadata"
	status_is 0
	[ "$(ckpt-inspect --latest ckpts)" = "$JOB/chk-4" ]
	# -l says the same of each complete one as before the delete; chk-1 and the failed savepoint are
	# empty directories now (files are listed, directories are not)
	diff <(jq -c 'select(.complete)' <<<"$before") <(ckpt-inspect -l ckpts | jq -c 'select(.complete)')
	[ "$(ckpt-inspect -l ckpts | jq -r 'select(.complete | not) | .path' | sort | tr '\n' ' ')" = \
	  "$JOB/chk-1 $JOB/chk-5 $JOB/chk-6 $SP/savepoint-8bc367-0123456789ab " ]
	[ -z "$(find "$JOB/chk-1" "$SP/savepoint-8bc367-0123456789ab" -mindepth 1)" ]
}

@test "orphans: never listed: what a _metadata names, the _metadata, files newer than the newest one, chk-N above it, taskowned/" {
	needs_fixtures
	leaky_job
	# chk-5 and chk-6 are kept for their N above the newest complete one, however old their files
	touch -d "$OLD" "$JOB/chk-5/e0f1-upload" "$JOB/chk-6/_metadata"
	ckpt-inspect --orphans ckpts --older-than=0 2>/dev/null | jq -r .path | sort > listed
	[ "$(wc -l < listed)" -eq 10 ]
	for f in $(ls -d "$JOB"/chk-2/* | grep -v stray) "$JOB"/chk-[3-6]/* "$JOB"/shared/op-[34] "$JOB"/shared/kv-a "$JOB"/shared/fresh \
		"$JOB"/taskowned/* "$SP"/savepoint-8bc367-fedcba987654/*; do
		! grep -qxF "$f" listed || { echo "listed: $f"; return 1; }
	done
	# a job directory of its own, DIR with a trailing slash: its own paths, the same verdicts
	run --separate-stderr ckpt-inspect --orphans "$JOB/"
	status_is 0
	[ "$stderr" = "ckpt-inspect: $JOB/: 1 file a _metadata names lies outside it: not listed" ]
	output_is "$(grep chk- "$DATA/orphans/leaky.expected"; grep shared/ "$DATA/orphans/leaky.expected")"
}

@test "orphans: --older-than keeps back what is younger (default 1h), and never what is newer than the newest _metadata" {
	needs_fixtures
	leaky_job
	touch -d '-30 minutes' "$JOB/shared/old-1"
	touch -d '-20 minutes' "$JOB/chk-4/_metadata"
	touch -d '-10 minutes' "$JOB/shared/fresh"
	listed() { ckpt-inspect --orphans ckpts "$@" 2>/dev/null | jq -r .path | grep shared/ | tr '\n' ' '; }
	[ "$(listed)" = "" ]
	[ "$(listed --older-than 1h)" = "" ]
	[ "$(listed --older-than 40m)" = "" ]
	[ "$(listed --older-than 25m)" = "$JOB/shared/old-1 " ]
	[ "$(listed --older-than 90s)" = "$JOB/shared/old-1 " ]
	[ "$(listed --older-than 0)" = "$JOB/shared/old-1 " ]
	# the rest of the tree is older than a day
	[ "$(ckpt-inspect --orphans ckpts --older-than 1d 2>/dev/null | wc -l)" -eq 9 ]
	[ "$(ckpt-inspect --orphans ckpts --older-than 999d 2>/dev/null | wc -l)" -eq 0 ]
}

@test "orphans: a job with no complete checkpoint: nothing of it is listed" {
	needs_fixtures
	mkdir -p j/shared
	cp -r "$FIXTURES/flink-artifacts/$R" j/chk-1
	rm j/chk-1/_metadata
	echo x > j/shared/a
	find j -exec touch -d "$OLD" {} +
	run --separate-stderr ckpt-inspect --orphans j --older-than 0
	status_is 0
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "orphans: a job is dated by its complete checkpoints: a savepoint in it does not date its shared files" {
	needs_fixtures
	mkdir -p j/shared j/chk-3
	cp -r "$FIXTURES/flink-artifacts/$S" j/savepoint-8bc367-fedcba987654
	head -c 100 "$FIXTURES/flink-artifacts/$R/_metadata" > j/chk-3/_metadata # being written
	echo x > j/shared/a
	find j -exec touch -d "$OLD" {} +
	touch -d '2026-01-02 10:00:00 UTC' j/savepoint-8bc367-fedcba987654/_metadata
	run --separate-stderr ckpt-inspect --orphans j --older-than 0
	status_is 0
	[ -z "$output" ] && [ -z "$stderr" ]
}

@test "orphans: a cut or empty _metadata below the newest: refused, naming it, nothing listed" {
	needs_fixtures
	leaky_job
	head -c 300 "$FIXTURES/flink-artifacts/$R/_metadata" > "$JOB/chk-2/_metadata"
	bad 2 "ckpt-inspect: $JOB/chk-2/_metadata: not read whole, so no file's use is known and nothing is listed: offset 267: truncated relative path" \
		ckpt-inspect --orphans ckpts
	cp "$FIXTURES/flink-artifacts/$R/_metadata" "$JOB/chk-2/_metadata"
	: > "$SP/savepoint-8bc367-fedcba987654/_metadata"
	bad 2 "ckpt-inspect: $SP/savepoint-8bc367-fedcba987654/_metadata: not read whole, so no file's use is known and nothing is listed: empty (being written?)" \
		ckpt-inspect --orphans ckpts
}

@test "orphans: a symbolic link loop is refused; a dangling link and a second way to a directory are not" {
	needs_fixtures
	leaky_job
	ln -s ../.. "$JOB/chk-2/up"
	bad 2 "ckpt-inspect: $JOB/chk-2/up: a symbolic link loop" ckpt-inspect --orphans ckpts
	rm "$JOB/chk-2/up"
	ln -s itself "$JOB/shared/itself"
	bad 2 "ckpt-inspect: $JOB/shared/itself: a symbolic link loop" ckpt-inspect --orphans ckpts
	rm "$JOB/shared/itself"
	ln -s nowhere "$JOB/shared/dangling"
	ln -s "$PWD/$JOB/chk-1" ckpts/again
	# what lies behind a link to a directory elsewhere is read, never listed
	echo x > outside/unreferenced
	touch -d "$OLD" outside/unreferenced
	ln -s "$PWD/outside" "$JOB/shared/elsewhere"
	run --separate-stderr ckpt-inspect --orphans ckpts
	status_is 0
	match_golden "$DATA/orphans/leaky.expected"
}

@test "orphans: a savepoint directory alone: listed whole when it has no _metadata, kept when it has" {
	needs_fixtures
	mkdir sp
	cp -r "$FIXTURES/flink-artifacts/$S" sp/savepoint-8bc367-fedcba987654
	mkdir sp/savepoint-8bc367-0123456789ab
	echo half > sp/savepoint-8bc367-0123456789ab/5d6e-state
	find sp -exec touch -d "$OLD" {} +
	touch -d '2026-01-02 10:00:00 UTC' sp/savepoint-8bc367-fedcba987654/_metadata
	run --separate-stderr ckpt-inspect --orphans sp
	status_is 0
	output_is '{"path":"sp/savepoint-8bc367-0123456789ab/5d6e-state","size":5,"mtime":"2026-01-01T10:00:00Z","reason":"aborted savepoint"}'
}

@test "orphans: usage: --older-than with --orphans only, a duration, one directory" {
	mkdir d
	bad 2 'ckpt-inspect: --older-than needs a duration (30s, 10m, 1h, 2d), not "1w" (see ckpt-inspect -h)' \
		ckpt-inspect --orphans d --older-than 1w
	bad 2 'ckpt-inspect: --older-than goes with --orphans (see ckpt-inspect -h)' ckpt-inspect --older-than 1h -l d
	bad 2 'ckpt-inspect: --orphans goes with --older-than and -r alone (see ckpt-inspect -h)' ckpt-inspect --orphans d -c
	bad 2 'ckpt-inspect: --orphans takes one directory, not also "e" (see ckpt-inspect -h)' ckpt-inspect --orphans d e
	bad 2 'ckpt-inspect: --orphans takes its directory, not files: "e" (see ckpt-inspect -h)' ckpt-inspect --orphans=d e
	bad 2 'ckpt-inspect: --orphans needs a directory (see ckpt-inspect -h)' ckpt-inspect --orphans --older-than 0
	run --separate-stderr ckpt-inspect --orphans=d --older-than=30s
	status_is 0
	[ -z "$output" ]
}

@test "orphans: the directory is the operand, before or after --older-than, or --orphans=DIR" {
	needs_fixtures
	leaky_job
	for args in "--orphans --older-than 0 ckpts" "--older-than 0 --orphans ckpts" "ckpts --orphans --older-than 0" \
		"--orphans=ckpts --older-than=0" "--older-than 0 --orphans -- ckpts"; do
		run --separate-stderr ckpt-inspect $args
		status_is 0
		[ "$stderr" = "ckpt-inspect: ckpts: 1 file a _metadata names lies outside it: not listed" ] || { echo "$args: $stderr"; return 1; }
		match_golden "$DATA/orphans/leaky.expected" || { echo "in ckpt-inspect $args"; return 1; }
	done
}

@test "orphans: a directory that cannot be listed is refused, naming it, nothing listed" {
	needs_fixtures
	# as root every directory can be listed: the scan runs as nobody, in a tree nobody may read
	# but for chk-1, which nobody may not
	command -v setpriv >/dev/null || skip "no setpriv (util-linux)"
	top=$(mktemp -d /tmp/ckpt-orphans.XXXXXX)
	chmod 755 "$top"
	cd "$top"
	leaky_job
	chmod -R a+rX ckpts outside
	chmod 000 "$JOB/chk-1"
	run --separate-stderr setpriv --reuid=65534 --regid=65534 --clear-groups env PATH="$PATH" \
		ckpt-inspect --orphans ckpts
	cd - >/dev/null
	rm -rf "$top"
	status_is 2
	[ -z "$output" ]
	[ "$stderr" = "ckpt-inspect: $JOB/chk-1: cannot list: Permission denied" ]
}

@test "orphans: a file or directory that vanishes during the scan is no error and is not listed" {
	needs_fixtures
	# an aborted checkpoint of five uploads beside a complete one; the Nth stat of the scan is
	# made to fail as for a name deleted between readdir and stat (strace's fault injection)
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# LeakSanitizer cannot run under ptrace (the sanitized suite)
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	mkdir -p "$JOB/chk-1"
	cp -r "$FIXTURES/flink-artifacts/$R" "$JOB/chk-2"
	for i in 1 2 3 4 5; do echo "upload $i" > "$JOB/chk-1/upload-$i"; done
	find ckpts -exec touch -h -d "$OLD" {} +
	touch -d '2026-01-02 08:00:00 UTC' "$JOB/chk-2/_metadata"
	ckpt-inspect --orphans ckpts > all
	[ "$(wc -l < all)" -eq 5 ]
	strace -f -o calls -e trace=newfstatat ckpt-inspect --orphans ckpts >/dev/null
	fewer=0
	for n in $(seq 1 "$(grep -c newfstatat calls)"); do
		# (127, the loader's failure, becomes 99: bats takes 127 for a command not found)
		run --separate-stderr sh -c 'strace -f -o /dev/null -e trace=newfstatat \
			-e inject=newfstatat:error=ENOENT:when=$1 ckpt-inspect --orphans ckpts; s=$?; [ $s -eq 127 ] && s=99; exit $s' sh "$n"
		if [ "$status" -eq 99 ]; then # the Nth stat was the dynamic loader's, before the scan
			[[ $stderr == *"error while loading shared libraries"* ]]
			continue
		fi
		if [ "$status" -eq 2 ]; then # the directory asked for is gone: that one is an error
			[ "$stderr" = "ckpt-inspect: ckpts: cannot list: No such file or directory" ]
			[ -z "$output" ]
			continue
		fi
		status_is 0
		# a file a _metadata names, unseen by the walk but there when the _metadata is read (only
		# the injection makes a file vanish and come back) is taken for one outside the directory
		[ -z "$stderr" ] || [ "$stderr" = "ckpt-inspect: ckpts: 1 file a _metadata names lies outside it: not listed" ]
		# what is listed is what the whole scan lists, less what vanished
		[ -z "$(printf '%s\n' "$output" | grep -v '^$' | grep -vxF -f all)" ]
		[ "$(printf '%s\n' "$output" | grep -c .)" -eq 4 ] && fewer=$((fewer + 1))
	done
	# five of the stats were those of the uploads, one each
	[ "$fewer" -ge 5 ]
}
