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
		# each letter of the optstring has its line in -h, or is one ckpt(7) lists as moved
		for c in $(grep -o "getopt_long(argc, argv, \":[^\"]*\"" "$ROOT/bin/$p.c" | sed 's/.*":\(.*\)"/\1/; s/://g' | fold -w1); do
			grep -q -- "^  -$c, --" "$DATA/usage/$p.expected" || moved_letters | grep -qx -- "$c $p" ||
				{ echo "$p: -$c has no help line"; return 1; }
		done
	done
}

# help_options PROG: the options PROG -h lists, "LETTER LONG" a line (LETTER - when long only).
help_options() {
	"$1" -h | sed -n 's/^  -\([A-Za-z]\), --\([a-z-]*\).*/\1 \2/p; s/^      --\([a-z-]*\).*/- \1/p'
}

# table: ckpt(7)'s table of options, "LETTER LONG PROGRAM..." a line (LETTER - when long only).
table() {
	sed -n '/^\.Ss Options$/,/^\.Sh /p' "$ROOT/man/ckpt.7" | sed -n '/^\.Bl -column "Letter"/,/^\.El/p' |
		sed -n 's/^\.It \(Fl \([A-Za-z]\)\|\\(em\) Ta Fl -\([a-z-]*\) Ta \([a-z ]*\) Ta .*/\2 \3 \4/p' |
		sed 's/^ /- /; s/all five/inspect merge plan replay run/'
}

# moved_letters: ckpt(7)'s letters kept for a release, "LETTER PROGRAM" a line.
moved_letters() {
	sed -n 's/^\.It Fl \([A-Za-z]\) Ta \(ckpt-[a-z]*\) Ta .*/\1 \2/p' "$ROOT/man/ckpt.7"
}

@test "usage: ckpt(7)'s table lists every option each program's -h lists, with the same letter" {
	[ "$(table | wc -l)" -ge 40 ]
	for p in ckpt-inspect ckpt-merge ckpt-plan ckpt-replay ckpt-run; do
		while read -r letter long; do
			row=$(table | awk -v l="$long" -v p="${p#ckpt-}" '$2 == l { for (i = 3; i <= NF; i++) if ($i == p) print }')
			[ -n "$row" ] || { echo "$p: --$long is not in ckpt(7)'s table for ${p#ckpt-}"; return 1; }
			[ "$letter" = - ] || [ "${row%% *}" = "$letter" ] || { echo "$p: -$letter --$long, ckpt(7): $row"; return 1; }
		done < <(help_options "$p")
	done
}

@test "usage: a letter means one thing in all five programs' -h, and in ckpt(7)'s table" {
	for p in ckpt-inspect ckpt-merge ckpt-plan ckpt-replay ckpt-run; do help_options "$p"; done | grep -v '^-' | sort -u > letters
	[ "$(wc -l < letters)" -ge 20 ]
	run sh -c 'cut -d" " -f1 letters | uniq -d'
	[ -z "$output" ] || { echo "letters of two meanings: $output"; grep -E "^($(echo $output | tr ' ' '|')) " letters; return 1; }
	run sh -c "$(declare -f table); ROOT=$ROOT; table | cut -d' ' -f1 | grep -v '^-\$' | sort | uniq -d"
	[ -z "$output" ] || { echo "ckpt(7) gives these letters twice: $output"; return 1; }
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
	[ "$(ckpt-plan --print-graph --pretty "$ROOT/examples/graph.json")" = "$(ckpt-plan -G -p "$ROOT/examples/graph.json")" ]
	[ "$(ckpt-plan --regions --strategy=full "$ROOT/examples/graph.json")" = "$(ckpt-plan --regions -s full "$ROOT/examples/graph.json")" ]
}

@test "usage: long options of ckpt-replay" {
	ckpt-replay --write L < "$ROOT/examples/events.ndjson"
	[ -f L/events.0 ]
	run --separate-stderr ckpt-replay --events L
	status_is 0
	[ "$output" = "$(ckpt-replay -e L)" ]
	[ "$(ckpt-replay --graph="$ROOT/examples/replay-graph.json" --available "$ROOT/examples/available.json" L)" = \
		"$(ckpt-replay -g "$ROOT/examples/replay-graph.json" --available "$ROOT/examples/available.json" L)" ]
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

# moved OLD NEW PROG ARGS...: PROG OLD ARGS gives what PROG NEW ARGS gives (stdout and status), and
# says on stderr, in one line, what OLD is now; NEW says nothing.
moved() {
	local old=$1 new=$2 p=$3
	shift 3
	run --separate-stderr "$p" $new "$@"
	local want=$output want_status=$status
	[ -z "$stderr" ] || { echo "$p $new: $stderr"; return 1; }
	run --separate-stderr "$p" $old "$@"
	[ "$status" -eq "$want_status" ] || { echo "$p $old: exit $status, $new: $want_status"; return 1; }
	[ "$output" = "$want" ] || { echo "$p $old: another output than $new"; return 1; }
	[ "${stderr%%$'\n'*}" = "${WARNING:?}" ] || { echo "$p $old said: $stderr"; return 1; }
}

@test "usage: ckpt-plan's moved letters keep their meaning for a release, with a warning" {
	g=$ROOT/examples/graph-batch.json
	WARNING='ckpt-plan: -g is now -G, --print-graph (-g stops working in the next release)' moved -g -G ckpt-plan "$g"
	WARNING='ckpt-plan: --graph is now --print-graph, -G (--graph stops working in the next release)' \
		moved --graph --print-graph ckpt-plan "$g"
	WARNING='ckpt-plan: -r is now --regions (-r stops working in the next release)' moved -r --regions ckpt-plan "$g"
	WARNING='ckpt-plan: -l is now --lost (-l stops working in the next release)' \
		moved "-f aggregate:0 -l orders:1" "-f aggregate:0 --lost orders:1" ckpt-plan "$g"
	# once a run, however often the letter comes
	run --separate-stderr ckpt-plan -f aggregate:0 -l orders:1 -l orders:0 "$g"
	status_is 0
	[ "$stderr" = 'ckpt-plan: -l is now --lost (-l stops working in the next release)' ]
}

@test "usage: ckpt-replay's moved letters keep their meaning for a release, with a warning" {
	ckpt-replay -w L < "$ROOT/examples/events.ndjson"
	WARNING='ckpt-replay: -a is now --available (-a stops working in the next release)' \
		moved -a --available ckpt-replay "$ROOT/examples/available.json" L
	run --separate-stderr ckpt-replay -R L2 L
	status_is 0
	[ "$stderr" = 'ckpt-replay: -R is now --repair (-R stops working in the next release)' ]
	cmp L/events.0 L2/events.0
	run --separate-stderr ckpt-replay --repair L3 L
	status_is 0
	[ -z "$stderr" ]
	cmp L/events.0 L3/events.0
}

@test "usage: ckpt-run's moved letters keep their meaning for a release, with a warning" {
	jq '.vertices[0].params.records = 0 | .checkpointing.interval_ms = 20' "$ROOT/examples/windows.pipeline.json" > p.json
	run --separate-stderr timeout 60 ckpt-run -d chk -n 1 -o sp.tar p.json
	status_is 0
	[ "$stderr" = "ckpt-run: -d is now --dir (-d stops working in the next release)
ckpt-run: -n is now --stop-after-checkpoints (-n will mean --allow-non-restored-state in the next release)
ckpt-run: -o is now --savepoint (-o stops working in the next release)" ]
	[ -f sp.tar ]
	ls chk/chk-*.tar > /dev/null
	[ "$(jq -c 'select(.event == "checkpoint_completed") | .checkpoint' <<<"$output" | wc -l)" -ge 1 ]
	run --separate-stderr timeout 60 ckpt-run -r sp.tar -a -D -s 1 --dir chk2 p.json
	status_is 0
	[ "$stderr" = "ckpt-run: -r is now --restore (-r stops working in the next release)
ckpt-run: -a is now --allow-non-restored-state (-a stops working in the next release)
ckpt-run: -D is now --drain (-D stops working in the next release)
ckpt-run: -s is now --stop-after-ms (-s stops working in the next release)" ]
	sp=$(ls chk2/savepoint-*.tar)
	id=${sp#chk2/savepoint-}
	[ "${id%.tar}" -ge 3 ] # restored: ids go on after the savepoint's
	bad 2 'ckpt-run: -L, --recover and -B need a pipeline in batch mode (blocking edges)' ckpt-run --recover log p.json
	run --separate-stderr ckpt-run -R log p.json
	status_is 2
	[ "$stderr" = "ckpt-run: -R is now --recover (-R stops working in the next release)
ckpt-run: -L, --recover and -B need a pipeline in batch mode (blocking edges)" ]
}

# same "CMD A" "CMD B": both exit 0, print nothing on stderr, and the same non-empty output.
same() {
	run --separate-stderr sh -c "$1"
	status_is 0
	[ -z "$stderr" ] && [ -n "$output" ] || { echo "$1: $stderr"; return 1; }
	local want=$output
	run --separate-stderr sh -c "$2"
	status_is 0
	[ -z "$stderr" ] && [ "$output" = "$want" ] || { echo "$2 differs from $1: $stderr"; return 1; }
}

@test "usage: options and operands mix in any order; -- ends the options" {
	ckpt-merge -o s.tar "$ROOT/examples/state.json"
	same "ckpt-inspect -a s.tar" "ckpt-inspect s.tar -a"
	same "ckpt-merge -P 3 $ROOT/examples/merge-state.json" "ckpt-merge $ROOT/examples/merge-state.json -P 3"
	same "ckpt-plan -G $ROOT/examples/graph.json" "ckpt-plan $ROOT/examples/graph.json -G"
	same "ckpt-plan --regions $ROOT/examples/graph.json" "ckpt-plan $ROOT/examples/graph.json --regions"
	ckpt-replay -w L < "$ROOT/examples/events.ndjson"
	same "ckpt-replay -e L" "ckpt-replay L -e"
	same "ckpt-replay --available $ROOT/examples/available.json L" "ckpt-replay L --available=$ROOT/examples/available.json"
	cp s.tar ./-a
	run --separate-stderr ckpt-inspect -c -- -a
	status_is 0
	[ "$(jq -r .file <<<"$output")" = -a ]
	bad 2 'ckpt-plan: -x: cannot open: No such file or directory' ckpt-plan -- -x
}

# on_tty CMD: CMD with a terminal as standard input (script(1)), its stderr to err.txt and stdout to
# out.txt; its status is the last run's.
on_tty() {
	run timeout 20 script -qec "$* 2>err.txt >out.txt" /dev/null < /dev/null
}

@test "usage: no operand on a terminal prints the usage on stderr, exit 2, rather than wait on stdin" {
	for p in ckpt-inspect ckpt-merge ckpt-plan; do
		on_tty "$p"
		status_is 2
		[ ! -s out.txt ] || { echo "$p printed on stdout:"; cat out.txt; return 1; }
		diff err.txt "$DATA/usage/$p.expected" || { echo "in $p"; return 1; }
	done
	on_tty ckpt-inspect -a
	status_is 2
	grep -q '^usage: ckpt-inspect ' err.txt
	# not a terminal: standard input is read, as before
	bad 2 'ckpt-plan: <stdin>: no job graph in input' sh -c 'ckpt-plan < /dev/null'
	run sh -c "ckpt-plan -G < '$ROOT/examples/graph.json'"
	status_is 0
	# a terminal named as -: read
	run timeout 20 script -qec "ckpt-plan - 2>err.txt >out.txt" /dev/null < /dev/null
	[ "$(head -c 6 err.txt)" != usage: ]
}
