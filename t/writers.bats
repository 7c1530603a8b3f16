#!/usr/bin/env bats
# Writers under failure: a program killed (SIGKILL) at any point while it writes an archive
# (ckpt-merge -o) or a log segment (ckpt-replay -w, -R) leaves the old target or the whole new
# one, never half.  Kill points: the entry of the Nth write, fsync, rename or link (strace
# injects the signal there, so the points are exact), and a few at random times.

load helper

setup() {
	strace -f -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	# fsync on a disk costs seconds a run; tmpfs (where there is one) keeps the file fast
	WDIR=$(mktemp -d "$( [ -w /dev/shm ] && echo /dev/shm || echo "$BATS_TEST_TMPDIR")/ckpt-writers.XXXXXX")
	cd "$WDIR" || return 1
}

teardown() {
	[ -n "${WDIR:-}" ] && rm -rf "$WDIR"
}

# a state document of 4 subtasks with N list entries each (about 100 bytes apiece)
big_state() {
	awk -v n="$1" 'BEGIN {
		printf "{\"format\":\"ckpt-state\",\"version\":1,\"checkpoint_id\":3,\"kind\":\"checkpoint\","
		printf "\"operators\":[{\"id\":\"op\",\"parallelism\":4,\"max_parallelism\":128,\"subtasks\":["
		for (i = 0; i < 4; i++) {
			printf "%s{\"index\":%d,\"operator_state\":{\"s\":{\"mode\":\"list\",\"entries\":[", i ? "," : "", i
			for (k = 0; k < n; k++)
				printf "%s\"e%d-%d-%080d\"", k ? "," : "", i, k, k
			printf "]}}}"
		}
		printf "]}]}\n" }'
}

RENAME=rename,renameat,renameat2
LINK=link,linkat

# kill_at SYSCALLS N COMMAND...: run the command, killed as it enters its Nth call of any of SYSCALLS
kill_at() {
	local sc=$1 n=$2
	shift 2
	strace -f -o /dev/null -e trace="$sc" -e inject="$sc":signal=KILL:when="$n" "$@" 2>/dev/null || true
}

# count SYSCALLS COMMAND...: how often a complete run enters any of SYSCALLS
count() {
	local sc=$1
	shift
	strace -f -o calls.txt -e trace="$sc" "$@" >/dev/null 2>&1
	grep -cE "^[0-9]+ +(${sc//,/|})\(" calls.txt || true
}

# kill_points N: the first, the middle and the last call
kill_points() {
	echo 1 $(($1 / 2 + 1)) "$1" | tr ' ' '\n' | sort -nu
}

# dir_whole_or_none REF OPTION SYSCALLS INPUT: ckpt-merge -o out/ INPUT killed as it enters the
# first, the middle and the last of its calls of each of SYSCALLS (words, each as kill_at takes
# it) leaves no out/, or a whole one: ckpt-inspect -c passes and ckpt-inspect OPTION prints REF.
dir_whole_or_none() {
	local ref=$1 opt=$2 input=$4 sc n k
	for sc in $3; do
		n=$(count "$sc" ckpt-merge -o "probe-${sc%%,*}/" "$input")
		[ "$n" -gt 0 ] || { echo "ckpt-merge -o DIR/ made no $sc call"; return 1; }
		for k in $(kill_points "$n"); do
			rm -rf out
			kill_at "$sc" "$k" ckpt-merge -o out/ "$input"
			if [ -e out ]; then
				ckpt-inspect -c out/ >/dev/null || return
				run ckpt-inspect "$opt" out/
				output_is "$(cat "$ref")" || { echo "killed at $sc call $k of $n"; return 1; }
			fi
		done
	done
}

# The target is the old one or the reference, byte for byte, and it verifies.
old_or_new() {
	if cmp -s "$1" old.tar; then
		echo old >> seen
	elif cmp -s "$1" ref.tar && ckpt-inspect -c "$1" >/dev/null; then
		echo new >> seen
	else
		echo "after a kill ($2) $1 is neither the old nor the whole new archive"
		ls -la
		return 1
	fi
}

@test "writers: ckpt-merge -o killed at writes, fsync and rename leaves the old archive or the new one" {
	big_state 2000 > big.json
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","operators":[]}' > small.json
	ckpt-merge -o old.tar small.json
	ckpt-merge -o ref.tar big.json
	for sc in write fsync $RENAME; do
		n=$(count $sc ckpt-merge -o probe.tar big.json)
		[ "$n" -gt 0 ]
		for k in $(kill_points "$n"); do
			cp old.tar out.tar
			kill_at $sc "$k" ckpt-merge -o out.tar big.json
			old_or_new out.tar "$sc $k of $n"
		done
	done
	# killed before the rename: the old archive; the rename itself completes or does not
	grep -q old seen
}

@test "writers: ckpt-merge -o killed at random times leaves the old archive or the new one" {
	big_state 2000 > big.json
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","operators":[]}' > small.json
	ckpt-merge -o old.tar small.json
	ckpt-merge -o ref.tar big.json
	for i in 1 2 3 4 5; do
		cp old.tar out.tar
		ckpt-merge -o out.tar big.json &
		pid=$!
		sleep "0.$((RANDOM % 4))$((RANDOM % 10))"
		kill -9 $pid 2>/dev/null || true
		wait $pid || true
		old_or_new out.tar "random kill $i"
	done
}

@test "writers: ckpt-merge -o DIR/ killed at any point leaves no directory or the whole one" {
	big_state 1000 > big.json
	ckpt-merge -o ref/ big.json
	ckpt-inspect -a ref/ > ref.out
	dir_whole_or_none ref.out -a "write $RENAME" big.json
}

@test "writers: ckpt-merge -o DIR/ of a Flink savepoint killed at any point leaves no directory or the whole savepoint; -o FILE writes nothing" {
	needs_fixtures
	[ -d "$FIXTURES/flink-artifacts" ] || needs_fixtures
	local f=$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-rocksdb-savepoint-native sc n k
	ckpt-merge -o ref/ "$f"
	ckpt-inspect -R ref > ref.R
	[ -s ref.R ]
	dir_whole_or_none ref.R -R "write fsync $RENAME" "$f"
	# a write that would lose state is refused before anything is written, killed or not
	for sc in write $RENAME; do
		kill_at $sc 1 ckpt-merge -o out.tar "$f"
		[ ! -e out.tar ]
	done
	run ckpt-merge -o out.tar "$f"
	status_is 2
	[ ! -e out.tar ] && [ -z "$(ls -A | grep '^\.out\.tar')" ]
}

# finish_log N: a log (NDJSON) of one vertex of parallelism 64 whose subtasks finish N times each
finish_log() {
	printf '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":64}}\n'
	awk -v n="$1" 'BEGIN { for (k = 0; k < n; k++) for (i = 0; i < 64; i++)
		printf "{\"type\":\"vertex_finished\",\"payload\":{\"vertex\":\"a\",\"subtask\":%d,\"attempt\":%d}}\n", i, k }'
}

@test "writers: ckpt-replay -w killed at any point leaves the old log or the old log and the whole new segment" {
	finish_log 1 > old.ndjson
	finish_log 100 | tail -n +2 > new.ndjson
	ckpt-replay -w OLD < old.ndjson
	cp -r OLD REF
	ckpt-replay -w REF < new.ndjson
	ckpt-replay -e OLD > old.out
	ckpt-replay -e REF > ref.out
	for sc in write fsync $LINK; do
		rm -rf P
		cp -r OLD P
		n=$(count $sc sh -c 'ckpt-replay -w P < new.ndjson')
		[ "$n" -gt 0 ] || continue
		for k in $(kill_points "$n"); do
			rm -rf L
			cp -r OLD L
			kill_at $sc "$k" sh -c 'ckpt-replay -w L < new.ndjson'
			run ckpt-replay -e L
			status_is 0
			if [ "$output" != "$(cat old.out)" ] && [ "$output" != "$(cat ref.out)" ]; then
				echo "after a kill ($sc $k of $n) the log reads neither as the old nor as the new one"
				ls -la L
				return 1
			fi
		done
	done
}

@test "writers: ckpt-replay --repair killed at any point leaves no copy or the whole copy" {
	finish_log 10 > in.ndjson
	ckpt-replay -w L < in.ndjson
	printf '\000\000\001\000\000\000\000\001torn' >> L/events.0
	ckpt-replay --repair REF L 2>/dev/null
	ckpt-replay -e REF > ref.out
	for sc in write fsync $RENAME; do
		n=$(count $sc ckpt-replay --repair PROBE$sc L)
		[ "$n" -gt 0 ] || continue
		for k in $(kill_points "$n"); do
			rm -rf OUT
			kill_at $sc "$k" ckpt-replay --repair OUT L
			if [ -e OUT ]; then
				run ckpt-replay -e OUT
				status_is 0
				output_is "$(cat ref.out)"
			fi
		done
	done
}
