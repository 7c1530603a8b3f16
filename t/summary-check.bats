#!/usr/bin/env bats
# The default ckpt-inspect summary reads no state, but checks that every member the
# manifest lists is there whole (member headers; directory: file sizes), with -c's words.
# Regressions of issue 9: a truncated archive used to pass the summary.

load helper

# An archive of kind $1 whose member op/map/0 holds 2 MB of incompressible bytes, so that
# cutting the file in half cuts inside that member (past the manifest) in every kind.
big() {
	{
		printf '{"format":"ckpt-state","version":1,"checkpoint_id":7,"kind":"savepoint","operators":[{"id":"map","parallelism":2,"max_parallelism":128,"subtasks":[{"index":0,"operator_state":{"offsets":{"mode":"list","entries":["'
		head -c 1500000 /dev/urandom | base64 -w0
		printf '"]}}},{"index":1,"operator_state":{"offsets":{"mode":"list","entries":["p1"]}}}]}]}'
	} > big.json
	ckpt-merge -o "big.$1" big.json
	head -c $(($(stat -c %s "big.$1") / 2)) "big.$1" > "half.$1"
}

small() { # a two-subtask archive of kind $1
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":7,"kind":"savepoint","operators":[{"id":"map","parallelism":2,"max_parallelism":128,"subtasks":[{"index":0,"operator_state":{"offsets":{"mode":"list","entries":["p0:17"]}}},{"index":1,"operator_state":{"offsets":{"mode":"list","entries":["p1"]}}}]}]}' > s.json
	rm -rf "s.$1"
	ckpt-merge -o "s.$1" s.json
}

@test "summary-check: a whole archive of each kind passes, from a file and from stdin" {
	for k in tar tar.gz zip; do
		small $k
		run ckpt-inspect "s.$k"
		status_is 0
		run sh -c "ckpt-inspect < s.$k"
		status_is 0
	done
	small /
	run ckpt-inspect s./
	status_is 0
}

@test "summary-check: a tar cut inside a member's data" {
	big tar
	bad 1 'ckpt-inspect: half.tar:op/map/0: truncated member: the archive ends inside it' ckpt-inspect half.tar
	bad 1 'ckpt-inspect: <stdin>:op/map/0: truncated member: the archive ends inside it' sh -c 'ckpt-inspect < half.tar'
	run ckpt-inspect big.tar
	status_is 0
}

@test "summary-check: a tar.gz cut inside a member's data (it is decompressed to see that)" {
	big tar.gz
	bad 1 'ckpt-inspect: half.tar.gz:op/map/0: truncated member: the archive ends inside it' ckpt-inspect half.tar.gz
	run ckpt-inspect big.tar.gz
	status_is 0
}

@test "summary-check: a zip cut inside a member's data" {
	big zip
	bad 1 'ckpt-inspect: half.zip:op/map/0: truncated member: the archive ends inside it' ckpt-inspect half.zip
	run ckpt-inspect big.zip
	status_is 0
}

@test "summary-check: a tar cut after a member's header, and between members" {
	small tar
	head -c 2048 s.tar > cut.tar # the manifest (1536 bytes) and the next header
	bad 1 'ckpt-inspect: cut.tar:op/map/0: truncated member: the archive ends inside it' ckpt-inspect cut.tar
	head -c 1536 s.tar > cut.tar # the manifest alone
	bad 1 'ckpt-inspect: cut.tar:op/map/0: missing member' ckpt-inspect cut.tar
	head -c 1600 s.tar > cut.tar # inside the next header
	bad 2 'ckpt-inspect: cut.tar: unreadable archive: truncated tar archive' ckpt-inspect cut.tar
}

@test "summary-check: a tar without one of its members, and one whose member has another size" {
	small /
	tar -C s. -cf nomember.tar MANIFEST.json op/map/0
	bad 1 'ckpt-inspect: nomember.tar:op/map/1: missing member' ckpt-inspect nomember.tar
	printf 'xx' >> s./op/map/1
	tar -C s. -cf longer.tar MANIFEST.json op/map/0 op/map/1
	bad 1 'ckpt-inspect: longer.tar:op/map/1: size mismatch: 43 bytes, manifest says 41' ckpt-inspect longer.tar
}

@test "summary-check: a directory with a member missing, cut short or grown" {
	small /
	rm s./op/map/1
	bad 1 'ckpt-inspect: s.:op/map/1: missing member' ckpt-inspect s.
	small /
	truncate -s 10 s./op/map/0
	bad 1 'ckpt-inspect: s.:op/map/0: truncated member: 10 of 44 bytes' ckpt-inspect s.
	small /
	printf 'x' >> s./op/map/0
	bad 1 'ckpt-inspect: s.:op/map/0: size mismatch: 45 bytes, manifest says 44' ckpt-inspect s.
}

@test "summary-check: the summary's words are -c's" {
	small tar
	head -c 2048 s.tar > cut.tar
	run ckpt-inspect -c cut.tar
	status_is 1
	[ "${lines[0]}" = 'ckpt-inspect: cut.tar:op/map/0: truncated member: the archive ends inside it' ]
	small /
	rm s./op/map/1
	run ckpt-inspect -c s.
	status_is 1
	[ "${lines[0]}" = 'ckpt-inspect: s.:op/map/1: missing member' ]
}
