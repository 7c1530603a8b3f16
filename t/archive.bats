#!/usr/bin/env bats
# ckpt-archive(5): every archive form round-trips the state document; -c names what is wrong.

load helper

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
	ckpt-inspect -a "$ROOT/examples/state.json" > doc.json
}

@test "archive: state document -> tar, tar.gz, tgz, zip, directory -> state document, byte equal" {
	for out in x.tar x.tar.gz x.tgz x.zip xd/; do
		run ckpt-merge -o "$out" doc.json
		status_is 0
		run ckpt-inspect -a "$out"
		status_is 0
		output_is "$(cat doc.json)"
		run ckpt-inspect -c "$out"
		status_is 0
	done
	run ckpt-inspect -a "$DATA/state/normal.json"
	output_is "$(cat doc.json)"
}

@test "archive: stdin and files alike, through ckpt-merge and ckpt-inspect" {
	ckpt-merge -o x.tar < doc.json
	run sh -c 'ckpt-inspect -a < x.tar'
	status_is 0
	output_is "$(cat doc.json)"
	run sh -c 'ckpt-inspect -a x.tar | ckpt-merge'
	output_is "$(cat doc.json)"
	run sh -c 'ckpt-inspect -c < x.tar'
	status_is 0
	output_is '{"file":"<stdin>","ok":true,"members":3,"bytes":273,"problems":[]}'
}

@test "archive: MANIFEST.json comes first, then one state file per operator subtask" {
	ckpt-merge -o x.tar doc.json
	run sh -c 'bsdtar -tf x.tar'
	output_is "MANIFEST.json
op/src/0
op/src/1
op/map/0"
	run sh -c 'bsdtar -xOf x.tar op/map/0 | head -c 8'
	output_is ckptsub1
	run sh -c 'bsdtar -xOf x.tar MANIFEST.json | jq -c ".members[2]"'
	output_is "{\"name\":\"op/map/0\",\"size\":162,\"xxh3\":\"$(bsdtar -xOf x.tar op/map/0 | xxhsum -H3 | sed 's/.*= //')\"}"
}

@test "archive: the same snapshot always packs to the same bytes" {
	ckpt-merge -o a.tar doc.json
	ckpt-merge -o b.tar doc.json
	cmp a.tar b.tar
}

# flip_member TAR MEMBER OFFSET: flip the byte at OFFSET into MEMBER's data (flip, t/helper.bash).
flip_member() {
	local at
	at=$(python3 -c 'import sys, tarfile; print(tarfile.open(sys.argv[1]).getmember(sys.argv[2]).offset_data)' "$1" "$2") &&
		flip "$1" $((at + $3))
}

@test "archive: -c names a flipped byte and exits 1" {
	ckpt-merge -o x.tar doc.json
	flip_member x.tar op/map/0 20
	run ckpt-inspect -c x.tar
	status_is 1
	[ "${lines[0]}" = "ckpt-inspect: x.tar:op/map/0: checksum mismatch: xxh3 3c0167f1ce7ed4bf, manifest says 30c26d44f02197ad" ]
	bad 1 "ckpt-inspect: x.tar:op/map/0: checksum mismatch: xxh3 3c0167f1ce7ed4bf, manifest says 30c26d44f02197ad" ckpt-inspect -a x.tar
}

@test "archive: -c names a truncated member, in a cut tar and in a directory" {
	ckpt-merge -o x.tar doc.json
	python3 -c '
import tarfile; t = tarfile.open("x.tar"); m = t.getmember("op/map/0")
open("cut.tar", "wb").write(open("x.tar", "rb").read()[:m.offset_data + 50])'
	bad 1 "ckpt-inspect: cut.tar:op/map/0: truncated member: the archive ends inside it" sh -c 'ckpt-inspect -c cut.tar >/dev/null'
	ckpt-merge -o d/ doc.json
	truncate -s 100 d/op/map/0
	bad 1 "ckpt-inspect: d:op/map/0: truncated member: 100 of 162 bytes" sh -c 'ckpt-inspect -c d >/dev/null'
}

@test "archive: -c names a missing and an extra member" {
	ckpt-merge -o d/ doc.json
	rm d/op/src/1
	echo stray > d/op/stray
	run ckpt-inspect -c d
	status_is 1
	[ "${lines[0]}" = "ckpt-inspect: d:op/src/1: missing member" ]
	[ "${lines[1]}" = "ckpt-inspect: d:op/stray: extra member (not in the manifest)" ]
	bsdtar -cf m.tar -C d MANIFEST.json op/src/0 op/map/0 op/stray
	run sh -c 'ckpt-inspect -c m.tar 2>&1 >/dev/null'
	status_is 1
	output_is "ckpt-inspect: m.tar:op/stray: extra member (not in the manifest)
ckpt-inspect: m.tar:op/src/1: missing member"
	bad 1 "ckpt-inspect: m.tar:op/src/1: missing member" ckpt-inspect -a m.tar
}

# -c says yes or no only when it could read every member: one there that cannot be read (a loop of
# symbolic links; root reads what permissions forbid) is an I/O failure, exit 2, the report printed.
@test "archive: -c of a directory: a member there that cannot be read exits 2" {
	ckpt-merge -o d/ doc.json
	rm d/op/src/1
	ln -s "$PWD/loop" d/op/src/1
	ln -s "$PWD/d/op/src/1" loop
	run --separate-stderr ckpt-inspect -c d
	status_is 2
	[ "$stderr" = "ckpt-inspect: d:op/src/1: cannot open: Too many levels of symbolic links" ]
	[ "$(jq -c '[.ok, .problems]' <<<"$output")" = '[false,[{"where":"d:op/src/1","problem":"cannot open: Too many levels of symbolic links"}]]' ]
}

@test "archive: -c names a damaged manifest" {
	ckpt-merge -o d/ doc.json
	sed 's/"version": 1/"version": 1,,/' d/MANIFEST.json > m && mv m d/MANIFEST.json
	bad 1 "ckpt-inspect: d:MANIFEST.json:3:15: damaged manifest: string or '}' expected near ','" sh -c 'ckpt-inspect -c d >/dev/null'
	ckpt-merge -o e/ doc.json
	sed 's/"xxh3": "[0-9a-f]*"/"xxh3": "xyz"/' e/MANIFEST.json > m && mv m e/MANIFEST.json
	run sh -c 'ckpt-inspect -c e 2>&1 >/dev/null'
	status_is 1
	[[ "$output" == 'ckpt-inspect: e:MANIFEST.json:'*': damaged manifest: member 0: "xxh3" must be 16 lowercase hex digits' ]]
	run ckpt-inspect e
	status_is 2
}

@test "archive: a tar whose first member is not the manifest is refused" {
	ckpt-merge -o d/ doc.json
	bsdtar -cf bad.tar -C d op/src/0 MANIFEST.json
	bad 2 'ckpt-inspect: bad.tar: not a ckpt archive: first member is "op/src/0", not MANIFEST.json' ckpt-inspect bad.tar
}

@test "archive: a manifest naming a member outside the archive is refused" {
	ckpt-merge -o d/ doc.json
	sed 's#"op/src/0"#"../src/0"#' d/MANIFEST.json > m && mv m d/MANIFEST.json
	run ckpt-inspect d
	status_is 2
	[[ "$output" == *'member 0: unsafe member name "../src/0"' ]]
}

@test "archive: an output name of unknown kind, or the input itself, is a usage error" {
	bad 2 "ckpt-merge: x.rar: name the archive .tar, .tar.gz, .tgz or .zip, or end it with / for a directory (see ckpt-merge -h)" ckpt-merge -o x.rar doc.json
	ckpt-merge -o x.tar doc.json
	bad 2 "ckpt-merge: x.tar: the output would overwrite the input (see ckpt-merge -h)" ckpt-merge -o x.tar x.tar
}

@test "archive: a failed write leaves nothing behind" {
	run ckpt-merge -o nodir/x.tar doc.json
	status_is 2
	[ ! -e nodir ]
	[ -z "$(ls -A | grep -v doc.json)" ]
}

@test "archive: tar.gz output is reproducible (no time stamp in the gzip header)" {
	ckpt-merge -o a.tar.gz "$ROOT/examples/state.json"
	touch -d '2001-01-01' a.tar.gz
	sleep 1.1
	ckpt-merge -o b.tar.gz "$ROOT/examples/state.json"
	cmp a.tar.gz b.tar.gz
}
