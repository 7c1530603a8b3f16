# Shared by every test file (t/README says what goes where): the built programs first on PATH, a
# fresh directory per test, and the one copy of each helper the files share.
bats_require_minimum_version 1.5.0 # run --separate-stderr
T=$(cd "$BATS_TEST_DIRNAME" && pwd)
ROOT=$(cd "$T/.." && pwd)
DATA=$T/data
# The real Flink files (REST responses, _metadata) are not part of the project: they are found
# through CKPT_FIXTURES (default ../shared/fixtures beside the repository). A test that reads them
# calls needs_fixtures first: absent, it is skipped with FIXTURES_ABSENT (t/run counts those), or
# fails when CI=true.
FIXTURES=$(cd "${CKPT_FIXTURES:-$ROOT/../shared/fixtures}" 2>/dev/null && [ -d flink-savepoints ] &&
	[ -d flink-rest ] && pwd)
FIXTURES_ABSENT="no Flink fixtures (set CKPT_FIXTURES)"
PATH="${CKPT_BIN:-$ROOT/bin}:$PATH"
export PATH
# ckpt-run reads back every snapshot it writes, and stops with status 2 when one does not read back
# as written (ckpt-run(1), ENVIRONMENT): a writer bug fails the test that meets it.
CKPT_VERIFY_SNAPSHOTS=1
export CKPT_VERIFY_SNAPSHOTS

needs_fixtures() {
	[ -n "$FIXTURES" ] && return 0
	if [ "${CI-}" = true ]; then
		echo "$FIXTURES_ABSENT; CI=true requires them"
		return 1
	fi
	skip "$FIXTURES_ABSENT"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# --- assertions on the last `run` -----------------------------------------------------------

# match_golden FILE: the output equals FILE (diff shown on failure). With CKPT_REGOLD=1 the output
# is written to FILE instead, and the test passes: review the change with git diff.
match_golden() {
	if [ "${CKPT_REGOLD-}" = 1 ]; then
		printf '%s\n' "$output" >"$1"
		return
	fi
	if [ "$output" != "$(cat "$1")" ]; then
		diff -u "$1" <(printf '%s\n' "$output") || true
		return 1
	fi
}

# status_is STATUS: the exit status.
status_is() {
	if [ "$status" -ne "$1" ]; then
		echo "expected status $1, got $status; output:"
		printf '%s\n' "$output"
		[ -z "${stderr-}" ] || printf 'stderr:\n%s\n' "$stderr"
		return 1
	fi
}

# output_is TEXT: the whole output equals TEXT.
output_is() {
	if [ "$output" != "$1" ]; then
		echo "expected: $1"
		echo "got:      $output"
		return 1
	fi
}

# bad STATUS LINE COMMAND...: run COMMAND; it exits STATUS, prints exactly LINE on stderr and
# nothing on stdout (the error contract of CONTRACT.md). $output is then stdout, $stderr stderr.
bad() {
	local want_status=$1 want=$2
	shift 2
	run --separate-stderr "$@"
	rm -f "$BATS_TEST_TMPDIR"/separate-stderr-* # bats leaves its capture in the test's directory
	if [ "$status" -ne "$want_status" ] || [ "$stderr" != "$want" ] || [ -n "$output" ]; then
		echo "expected: status $want_status, stderr: $want, nothing on stdout"
		echo "got:      status $status, stderr: $stderr"
		[ -z "$output" ] || printf 'stdout:   %s\n' "$output"
		return 1
	fi
}

# bad_after STATUS LINE OUT CMD...: CMD prints exactly OUT on stdout (-R's rows before a damage it
# meets later), then exits STATUS with exactly LINE on stderr.
bad_after() {
	local want_status=$1 want=$2 want_out=$3
	shift 3
	run --separate-stderr "$@"
	rm -f "$BATS_TEST_TMPDIR"/separate-stderr-*
	if [ "$status" -ne "$want_status" ] || [ "$stderr" != "$want" ] || [ "$output" != "$want_out" ]; then
		echo "expected: status $want_status, stderr: $want"
		printf 'stdout:   %s\n' "$want_out"
		echo "got:      status $status, stderr: $stderr"
		printf 'stdout:   %s\n' "$output"
		return 1
	fi
}

# on_terminal DIR COMMAND: what a person sees running COMMAND (a shell line) in DIR on an 80x50
# terminal (tmux): the screen, its trailing empty lines cut, as $output. Fails (in CI) or skips
# without tmux. The line is typed once the shell shows its prompt (typed before, it is echoed
# without one), and the screen is read once the command has ended.
on_terminal() {
	local dir=$1 line=$2 sock="ckpt-term-$$-$BATS_TEST_NUMBER" i
	command -v tmux >/dev/null || { [ "${CI-}" != true ] || return 1; skip "no tmux"; }
	tmux -L "$sock" -f /dev/null new-session -d -x 80 -y 50 -c "$dir" "env PS1='$ ' PATH='$PATH' sh"
	for i in $(seq 100); do
		tmux -L "$sock" capture-pane -p | grep -q '^\$' && break
		sleep 0.1
	done
	tmux -L "$sock" send-keys "$line; echo END" Enter
	for i in $(seq 300); do
		tmux -L "$sock" capture-pane -p | grep -qx END && break
		sleep 0.1
	done
	output=$(tmux -L "$sock" capture-pane -p | sed -e :a -e '/^\n*$/{$d;N;ba' -e '}')
	tmux -L "$sock" kill-server
}

# lowmem COMMAND...: COMMAND under a 512 MiB address-space limit (LOWMEM_KB), so that allocating what the
# input claims (gigabytes) fails loudly; ASan reserves terabytes of shadow, so its builds run
# unlimited (the sanitizer itself then reports huge allocations). As `bad 2 LINE lowmem CMD...`.
lowmem() {
	case ${CKPT_BIN:-} in
	*/san/*) "$@" ;;
	*) sh -c 'ulimit -v "$0" && exec "$@"' "${LOWMEM_KB:-524288}" "$@" ;;
	esac
}

# run_lowmem COMMAND...: `run lowmem COMMAND...`.
run_lowmem() {
	run lowmem "$@"
}

# --- ckpt-run -----------------------------------------------------------------------------

# pipeline BASE [JQ-FILTER]: t/data/run/BASE.json changed by the filter, to p.json.
pipeline() {
	jq "${2:-.}" "$DATA/run/$1.json" > p.json
}

# slow_sources PIPELINE OUT: PIPELINE with every source slowed to 1 ms a record, to OUT: for the run
# of a bounded job that a test stops with a savepoint (--stop-after-*) and then restores.  Such a stop races
# with the job's end: a trigger that finds a source closing is declined and the job ends without a
# savepoint (exit 1, ckpt-run(1)); one that comes after the sources' end of input takes a savepoint
# of a job that has already flushed its windows.  At 1 ms a record the splits of t/data/run last
# 4 s or more, while the stop comes after a few checkpoints (20 to 30 ms apart); the restore goes on
# at the pipeline's own speed.  Only where the output compared does not depend on timing.
slow_sources() {
	jq '(.vertices[] | select(.operator == "source") | .params.delay_us) = 1000' "$1" > "$2"
}

# run_job ARGS...: `run` ckpt-run with a deadline of DEADLINE seconds (read from the environment:
# export it or prefix the call; default 60), its events to $EVENTS (default events.ndjson), its
# diagnostics to err.txt. The deadline's SIGTERM asks for a savepoint; a job that ignores it is
# killed 5 seconds later.
run_job() {
	run sh -c 'o=$1; shift; timeout -k 5 "${DEADLINE:-60}" ckpt-run "$@" > "$o" 2> err.txt' sh "${EVENTS:-events.ndjson}" "$@"
}

# start_job ARGS...: ckpt-run ARGS in the background with run_job's deadline, its events to
# events.ndjson, its diagnostics to err.txt; its process ($pid) for await and signal_job.
start_job() {
	timeout -k 5 "${DEADLINE:-60}" ckpt-run "$@" > events.ndjson 2> err.txt &
	pid=$!
}

# restore_matches BASE BEFORE AFTER [MERGE-ARGS...]: the pipeline BASE changed by the jq filter
# BEFORE runs to its end: its output (the command OUTPUT, default committed) to ref.txt, the count of
# its committed lines in REF_COUNT.  Run again with slow sources, it is stopped after CHECKPOINTS
# (default 2) checkpoints with a savepoint sp.tar, before its end; with MERGE-ARGS, ckpt-merge
# MERGE-ARGS -o sp2.tar sp.tar rewrites it.  BASE changed by AFTER, restored from that, finishes
# with the output of the uninterrupted run (got.txt, the difference shown where not).
restore_matches() {
	local base=$1 before=$2 after=$3 sp=sp.tar
	shift 3
	pipeline "$base" "$before"
	run_job p.json
	status_is 0 || return
	${OUTPUT:-committed} > ref.txt
	REF_COUNT=$(committed | wc -l)
	rm -rf out ck
	slow_sources p.json slow.json
	run_job --stop-after-checkpoints "${CHECKPOINTS:-2}" --savepoint sp.tar slow.json
	status_is 0 || return
	[ "$(committed | wc -l)" -lt "$REF_COUNT" ] || { echo "stopped after its end: $REF_COUNT lines committed"; return 1; }
	if [ $# -gt 0 ]; then
		run ckpt-merge "$@" -o sp2.tar sp.tar
		status_is 0 || return
		sp=sp2.tar
	fi
	pipeline "$base" "$after"
	run_job --restore "$sp" p.json
	status_is 0 || return
	[ "$(events job_finished | jq -r .state)" = FINISHED ] || { echo "restored job: $(events job_finished)"; return 1; }
	${OUTPUT:-committed} > got.txt
	cmp -s ref.txt got.txt || { diff ref.txt got.txt | head -20; return 1; }
}

# events NAME [FILE]: the events named NAME in FILE (default $EVENTS or events.ndjson), compact,
# one a line.
events() {
	jq -c --arg e "$1" 'select(.event == $e)' "${2:-${EVENTS:-events.ndjson}}"
}

# await PATTERN: wait (10 s at most) until events.ndjson has a line grep -q PATTERN finds; the
# caller checks what it needs afterwards.  signal_job SIG: send SIG to the job started in the
# background ($pid) and wait for it, its exit status in st.
await() {
	local i
	for i in $(seq 1 200); do
		grep -q "$1" events.ndjson && return 0
		sleep 0.05
	done
}
signal_job() {
	kill "-$1" "$pid"
	st=0
	wait "$pid" || st=$?
}

# job_ended STATUS STATE [LINE]: the job signal_job stopped exited STATUS, its job_finished event
# says STATE, and err.txt holds exactly LINE (default: nothing).
job_ended() {
	[ "$st" -eq "$1" ] || { echo "exit status $st, $1 expected; err.txt:"; cat err.txt; return 1; }
	[ "$(events job_finished | jq -r .state)" = "$2" ] || { echo "job_finished: $(events job_finished); state $2 expected"; return 1; }
	[ "$(cat err.txt)" = "${3-}" ] || { printf 'err.txt:  %s
expected: %s
' "$(cat err.txt)" "${3-}"; return 1; }
}

# committed [DIR]: the committed output of the file sink under DIR (default out), sorted; nothing
# pending may be left.
committed() {
	local d=${1:-out}
	if ls -A "$d" | grep -q '^\.pending'; then
		echo "pending transactions left in $d:"; ls -A "$d"; return 1
	fi
	cat "$d"/part-* | sort
}

# --- files --------------------------------------------------------------------------------

# flip FILE OFFSET: flip the lowest bit of the byte at OFFSET, in place.
flip() {
	perl -e 'open(F, "+<", $ARGV[0]) or die; seek(F, $ARGV[1], 0); read(F, $b, 1);
		 seek(F, $ARGV[1], 0); print F chr(ord($b) ^ 1); close F' "$1" "$2"
}

# size FILE: its size in bytes.
size() {
	wc -c < "$1" | tr -d ' '
}

# killed_writing SIG GLOB CMD...: CMD run with each fsync(2) a second late (strace), so that it is
# still writing when a path matching GLOB (its temporary output, begun) exists: a file is synced
# before it is put in place.  Then SIG, sent to CMD itself (INT, TERM and HUP restored from the
# SIG_IGN a job started with &, or a suite run under nohup or a CI runner, inherits: the programs
# leave an ignored signal ignored).  Its status in $st, its stdout and stderr in killed.out,
# killed.err.
killed_writing() {
	local sig=$1 glob=$2 tracer i
	shift 2
	env --default-signal=INT,TERM,HUP strace -f -o /dev/null -e trace=fsync,fdatasync -e inject=fsync,fdatasync:delay_exit=1000000 "$@" \
		>killed.out 2>killed.err &
	tracer=$!
	for i in $(seq 200); do
		compgen -G "$glob" >/dev/null && break
		sleep 0.05
	done
	compgen -G "$glob" >/dev/null || { echo "no $glob after 10 s"; kill "$tracer"; return 1; }
	kill "-$sig" "$(pgrep -P "$tracer")"
	st=0
	wait "$tracer" || st=$?
}
