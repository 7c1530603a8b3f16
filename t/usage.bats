#!/usr/bin/env bats
# What every program says to -h (the same shape everywhere: usage lines, then one line per option
# with its long name), and that the long options work as the short ones do.

bats_require_minimum_version 1.5.0
load helper

@test "usage: -h and --help of every program, exactly" {
	for p in ckpt-inspect ckpt-merge ckpt-plan ckpt-replay ckpt-run; do
		run --separate-stderr "$p" -h
		status_is 0
		[ -z "$stderr" ]
		match_golden "$DATA/usage/$p.expected" || { echo "in $p -h"; return 1; }
		run --separate-stderr "$p" --help
		status_is 0
		match_golden "$DATA/usage/$p.expected" || { echo "in $p --help"; return 1; }
	done
}

@test "usage: every long option of -h is in the program's man page, and every option letter in -h" {
	for p in ckpt-inspect ckpt-merge ckpt-plan ckpt-replay ckpt-run; do
		for l in $(grep -o -- '--[a-z-]*' "$DATA/usage/$p.expected"); do
			grep -qE -- "^\.It (Fl .*)?Fl -${l#--}\b" "$ROOT/man/$p.1" || { echo "$p: $l not in the man page"; return 1; }
		done
		# each letter of the optstring has its line in -h
		for c in $(grep -o "getopt_long(argc, argv, \":[^\"]*\"" "$ROOT/bin/$p.c" | sed 's/.*":\(.*\)"/\1/; s/://g' | fold -w1); do
			grep -q -- "^  -$c, --" "$DATA/usage/$p.expected" || { echo "$p: -$c has no help line"; return 1; }
		done
	done
}

@test "usage: long options of ckpt-inspect" {
	ckpt-merge -o s.tar "$ROOT/examples/state.json"
	[ "$(ckpt-inspect --all s.tar)" = "$(ckpt-inspect -a s.tar)" ]
	run --separate-stderr ckpt-inspect --check --pretty s.tar
	status_is 0
	[ "$output" = "$(ckpt-inspect -c -p s.tar)" ]
	[ "$(ckpt-inspect --uid=src s.tar)" = "$(ckpt-inspect -u src s.tar)" ]
	[ "$(ckpt-inspect --diff s.tar "$ROOT/examples/state.json")" = "$(ckpt-inspect -d s.tar "$ROOT/examples/state.json")" ]
	mkdir -p cps/chk-1 && cp s.tar cps/chk-2.tar
	[ "$(ckpt-inspect --list=cps)" = "$(ckpt-inspect -l cps)" ]
	[ "$(ckpt-inspect --list cps | wc -l)" -eq 2 ]
	[ "$(ckpt-inspect --latest=cps)" = cps/chk-2.tar ]
	run --separate-stderr ckpt-inspect --nope s.tar
	status_is 2
	[ "$stderr" = "ckpt-inspect: unknown option --nope (see ckpt-inspect -h)" ]
	run --separate-stderr ckpt-inspect --diff
	status_is 2
	[ "$stderr" = "ckpt-inspect: -d compares two snapshots: -d OLD NEW (see ckpt-inspect -h)" ]
}

@test "usage: long options of ckpt-merge" {
	want=$(ckpt-merge -P 3 "$ROOT/examples/merge-state.json")
	[ "$(ckpt-merge --parallelism=3 "$ROOT/examples/merge-state.json")" = "$want" ]
	[ "$(ckpt-merge --parallelism 3 "$ROOT/examples/merge-state.json")" = "$want" ]
	ckpt-merge --parallelism=3 --output=o.tar "$ROOT/examples/merge-state.json"
	[ "$(ckpt-inspect -a o.tar | jq -c .)" = "$(jq -c . <<<"$want")" ]
	[ "$(ckpt-merge --graph="$ROOT/examples/merge-job.json" "$ROOT/examples/merge-state.json")" = \
		"$(ckpt-merge -g "$ROOT/examples/merge-job.json" "$ROOT/examples/merge-state.json")" ]
	run --separate-stderr ckpt-merge --allow-non-restored-state "$ROOT/examples/merge-state.json"
	status_is 2
	[ "$stderr" = "ckpt-merge: -n needs -g (see ckpt-merge -h)" ]
}

@test "usage: long options of ckpt-plan" {
	[ "$(ckpt-plan --graph --pretty "$ROOT/examples/graph.json")" = "$(ckpt-plan -g -p "$ROOT/examples/graph.json")" ]
	[ "$(ckpt-plan --regions --strategy=full "$ROOT/examples/graph.json")" = "$(ckpt-plan -r -s full "$ROOT/examples/graph.json")" ]
}

@test "usage: long options of ckpt-replay" {
	ckpt-replay --write L < "$ROOT/examples/events.ndjson"
	[ -f L/events.0 ]
	run --separate-stderr ckpt-replay --events L
	status_is 0
	[ "$output" = "$(ckpt-replay -e L)" ]
	[ "$(ckpt-replay --graph="$ROOT/examples/replay-graph.json" --available "$ROOT/examples/available.json" L)" = \
		"$(ckpt-replay -g "$ROOT/examples/replay-graph.json" -a "$ROOT/examples/available.json" L)" ]
	ckpt-replay --repair=L2 L
	cmp L/events.0 L2/events.0
}

@test "usage: long options of ckpt-run" {
	# unbounded: only the stops end the runs, their savepoints cannot race with the end of the job
	jq '.vertices[0].params.records = 0 | .checkpointing.interval_ms = 20' "$ROOT/examples/windows.pipeline.json" > p.json
	run --separate-stderr timeout 60 ckpt-run --dir=chk --stop-after-checkpoints 1 --savepoint=sp.tar p.json
	status_is 0
	[ -f sp.tar ]
	ls chk/chk-*.tar > /dev/null
	[ "$(tail -1 <<<"$output" | jq -r .event)" = job_finished ]
	run --separate-stderr timeout 60 ckpt-run --restore=sp.tar --drain --stop-after-ms=1 --dir=chk2 p.json
	status_is 0
	# checkpoint ids go on after the restored savepoint's (2)
	sp=$(ls chk2/savepoint-*.tar)
	id=${sp#chk2/savepoint-}
	[ "${id%.tar}" -ge 3 ]
}

# Quoting macros on one line nest ('.Brq Qq a , Qq b' renders {"a, "b""}): read as rendered.
@test "man pages: no nested quotes as rendered" {
	for m in "$ROOT"/man/*.[157]; do
		run sh -c 'mandoc -Tutf8 "$1" | col -b | grep -n "“[^”]*“\|\"[a-z_]*, \"[a-z_]*, \|\"\"[]}).]"' sh "$m"
		[ "$status" -eq 1 ] || { echo "${m##*/}:"; printf '%s\n' "$output"; return 1; }
	done
}
