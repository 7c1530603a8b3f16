#!/usr/bin/env bats
# Progress of long work (ckpt-inspect -c, ckpt-merge -o, ckpt-replay; a Flink snapshot's state
# files read by the summary, -c, -a, -R and -d, and copied by ckpt-merge -o DIR/) on stderr when it
# is a terminal (a pty from script(1)), cleared at the end; nothing at all when stderr is not a
# terminal.

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper

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

# The progress line of ckpt-inspect at 0 of $1 bytes (as cli.c writes it), then the line cleared.
zero_of() {
	printf '\rckpt-inspect: 0 B of %s (0%%)\e[K\r\e[K' "$(awk -v n="$1" 'BEGIN { if (n < 1024) printf "%d B", n; else printf "%.1f KiB", n / 1024 }')"
}

@test "progress: a Flink snapshot's state files read by the summary, -c, -a, -R and -d: bytes on a terminal, then cleared" {
	sp_dir
	cp -r sp sp2
	local n=$(($(size sp/op) + $(size sp/kv)))
	# the summary, -c and -d read the files once (-d: both snapshots'); -a twice (read through
	# before anything is printed, then printed as read); -R once (its rows go out as read)
	for c in ":$n" "-c:$n" "-a:$((2 * n))" "-R:$n" "-d sp2:$((2 * n))" "-d -R sp2:$((2 * n))"; do
		on_tty sh -c "ckpt-inspect ${c%:*} sp > /dev/null"
		[ "$output" = "$(zero_of "${c#*:}")" ] || { printf '%s: %q\n' "${c%:*}" "$output"; return 1; }
	done
	# narrowed (-k), what is read of the whole is not known: the bytes alone
	on_tty sh -c 'ckpt-inspect -R -k 42 sp > /dev/null'
	output_is $'\r'"ckpt-inspect: 0 B$E"$'\r'"$E"
	# -a and -R to the terminal: the rows show how far it is
	on_tty ckpt-inspect -R sp
	[[ $output != *ckpt-inspect:* ]] && [[ $output == '{"uid":null,'* ]]
	on_tty sh -c 'ckpt-inspect -R sp 2>/dev/null >/dev/null'
	output_is ''
}

@test "progress: -a and -R of ckpt's own archive show its subtasks read on a terminal (-R reads each twice), then clear" {
	on_tty sh -c 'ckpt-inspect -a s.tar > /dev/null'
	status_is 0
	output_is $'\r'"ckpt-inspect: 0 of 4 subtasks (0%)$E"$'\r'"$E"
	# its three subtasks that are not finished
	on_tty sh -c 'ckpt-inspect -R s.tar > /dev/null'
	status_is 0
	output_is $'\r'"ckpt-inspect: 0 of 6 subtasks (0%)$E"$'\r'"$E"
	on_tty ckpt-inspect -R s.tar
	[[ $output != *ckpt-inspect:* ]]
}

@test "progress: a long read of a Flink snapshot's state (-R of a million entries) shows its bytes growing, then clears" {
	kv_spread 1000000
	local n=$(($(size sp/op) + $(size sp/kv))) # -R reads once
	# the rows go to a reader that waits a second before it reads, and again once it has read a
	# fifth of them: the read is held up on a full pipe for each second whatever the machine's
	# speed, so that an update (at most four a second) follows the first, and one later in the
	# read (it reads once: the rows go out as it reads)
	on_tty sh -c 'ckpt-inspect -R sp | { sleep 1; head -c 20000000 >/dev/null; sleep 1; cat >/dev/null; }'
	status_is 0
	# the updates, each further than the one before, all of the same total
	mapfile -t ups < <(tr '\r' '\n' <<<"$output" | sed -n 's/^ckpt-inspect: \([0-9.]*\) \(B\|KiB\|MiB\) of \(.*\) (\([0-9]*\)%)\x1b\[K$/\4 \3/p')
	[ "${#ups[@]}" -ge 2 ] || { printf '%q\n' "$output" | cut -c1-600; return 1; }
	local last=-1 u
	for u in "${ups[@]}"; do
		[ "${u#* }" = "$(awk -v n="$n" 'BEGIN { printf "%.1f MiB", n / 1048576 }')" ] && [ "${u%% *}" -ge "$last" ] ||
			{ printf '%s\n' "${ups[@]}"; return 1; }
		last=${u%% *}
	done
	[ "$last" -gt 0 ]
	[[ $output == *$'\r'"$E" ]]
}

@test "progress: ckpt-merge -o DIR/ of a Flink snapshot shows the bytes of the state files it copies" {
	needs_fixtures
	local in=$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint
	on_tty ckpt-merge --drop 1f2b5df5a66154aca61fcb26193792be -o out/ "$in"
	status_is 0
	# the files the new _metadata names (not the dropped operator's)
	local n=$(ckpt-inspect -a out | jq '[.operators[].subtasks[].handles[]?.size] | add')
	output_is $'\r'"ckpt-merge: 0 B of $(awk -v n="$n" 'BEGIN { printf "%.1f KiB", n / 1024 }') (0%)$E"$'\r'"$E"
	[ -e out/_metadata ]
	run sh -c 'ckpt-merge --drop 1f2b5df5a66154aca61fcb26193792be -o out2/ "$1" 2>&1' sh "$in"
	output_is ''
}
