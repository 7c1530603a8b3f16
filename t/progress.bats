#!/usr/bin/env bats
# Progress of long work (ckpt-inspect -c, ckpt-merge -o, ckpt-replay) on stderr when it is a
# terminal (a pty from script(1)), cleared at the end; nothing at all when stderr is not a terminal.

bats_require_minimum_version 1.5.0
load helper

# Run "$@" with stdin, stdout and stderr on a pty; $output is what the terminal got.
on_tty() {
	local cmd=
	printf -v cmd '%q ' "$@"
	run script -qec "$cmd" /dev/null </dev/null
}

E=$'\e[K'

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	ckpt-merge -o s.tar "$ROOT/examples/state.json"
	ckpt-replay -w L <"$ROOT/examples/events.ndjson"
	size=$(wc -c <s.tar)
}

@test "progress: ckpt-inspect -c shows bytes of the archive on a terminal, then clears the line" {
	on_tty ckpt-inspect -c s.tar
	status_is 0
	want=$'\r'"ckpt-inspect: 0 B of $(awk -v n="$size" 'BEGIN { printf "%.1f KiB", n / 1024 }') (0%)$E"$'\r'"$E"
	[ "${output:0:${#want}}" = "$want" ] || { printf '%q\n' "$output"; return 1; }
	# then the result, as without a terminal (there indented, with the terminal's CR LF)
	[ "${output:${#want}}" = "$(ckpt-inspect -c -p s.tar | sed 's/$/\r/')" ]
}

@test "progress: ckpt-merge -o shows subtasks written on a terminal, then clears the line" {
	on_tty ckpt-merge -o s2.tar s.tar
	status_is 0
	output_is $'\r'"ckpt-merge: 0 of 4 subtasks (0%)$E"$'\r'"$E"
	cmp s.tar s2.tar
}

@test "progress: ckpt-replay shows bytes of the log on a terminal; -e to the terminal does not" {
	on_tty ckpt-replay L
	status_is 0
	want=$'\r'"ckpt-replay: 0 B of 1.1 KiB (0%)$E"$'\r'"$E"
	[ "${output:0:${#want}}" = "$want" ] || { printf '%q\n' "$output"; return 1; }
	on_tty ckpt-replay -e L
	[[ $output != *ckpt-replay:* ]]
	on_tty sh -c 'ckpt-replay -e L > ev'
	output_is $'\r'"ckpt-replay: 0 B of 1.1 KiB (0%)$E"$'\r'"$E"
}

@test "progress: nothing when stderr is not a terminal, even with stdout on one" {
	on_tty sh -c 'ckpt-inspect -c s.tar 2>e1 >/dev/null; ckpt-merge -o s3.tar s.tar 2>e2; ckpt-replay L 2>e3 >/dev/null'
	status_is 0
	output_is ''
	[ ! -s e1 ] && [ ! -s e2 ] && [ ! -s e3 ]
	run --separate-stderr ckpt-inspect -c s.tar
	status_is 0
	[ -z "$stderr" ]
}

@test "progress: a problem found while checking goes on a line of its own" {
	cp s.tar bad.tar
	# a byte of op/map/0's data (the last member; its data starts at 5120)
	printf 'X' | dd of=bad.tar bs=1 seek=5200 conv=notrunc 2>/dev/null
	run --separate-stderr ckpt-inspect -c bad.tar
	want=$stderr
	[[ $want == 'ckpt-inspect: bad.tar:op/map/0: checksum mismatch: '* ]]
	on_tty sh -c 'ckpt-inspect -c bad.tar > /dev/null'
	# every line the user reads is whole: the progress line is cleared before the message
	[[ $output == *$'\r'"$E$want"$'\r' ]] || { printf '%q\n' "$output"; return 1; }
}
