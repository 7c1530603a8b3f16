#!/usr/bin/env bats
# Every writer round-trips entries and channel state of every size: ckpt-merge -o in each archive
# form, and ckpt-run's checkpoints and savepoints (which the tests read back as they are written:
# helper.bash sets CKPT_VERIFY_SNAPSHOTS=1).  -c parses each state file, not only its checksum.

bats_require_minimum_version 1.5.0
load helper

# keyed N...: a state document with one keyed entry per size N (one subtask each), to doc.json.
keyed() {
	python3 - "$@" > doc.json <<'PY'
import json, sys
subs = [{"index": i, "keyed_state": {"key_groups": "%d" % i, "entries": [
	{"state": "v", "key_group": i, "key": "k", "value": ("%d:" % int(n) + "x" * int(n))[:int(n)]}]}}
	for i, n in enumerate(sys.argv[1:])]
print(json.dumps({"format": "ckpt-state", "version": 1, "checkpoint_id": 1, "kind": "savepoint",
	"operators": [{"id": "op", "parallelism": len(subs), "max_parallelism": 128, "subtasks": subs}]}))
PY
}

@test "roundtrip: one keyed entry of 32 KiB to 64 KiB, each archive form (its header once came after it)" {
	keyed 32767 32768 32769 40000 65535 65536
	ckpt-inspect -a doc.json > want.json
	for out in x.tar x.tar.gz x.zip xd/; do
		run ckpt-merge -o "$out" doc.json
		status_is 0
		run --separate-stderr ckpt-inspect -a "$out"
		status_is 0
		[ -z "$stderr" ]
		output_is "$(cat want.json)"
	done
	run sh -c 'bsdtar -xOf x.tar op/op/1 2> /dev/null | head -c 8'
	output_is ckptsub1
}

@test "roundtrip: ckpt's own archives: -a is typed already (their entries are bytes), the same under --raw, and reads back" {
	cp "$BATS_TEST_DIRNAME/../examples/state.json" doc.json
	for out in x.tar x.tar.gz x.zip xd/; do
		ckpt-merge -o "$out" doc.json
		ckpt-inspect -a "$out" >typed.json
		run sh -c "ckpt-inspect --raw -a $out | cmp - typed.json && echo same"
		output_is same
		run sh -c "ckpt-inspect -a $out | ckpt-merge -o y.tar && ckpt-inspect -a y.tar | cmp - typed.json && echo same"
		output_is same
		rm -f y.tar
	done
}

@test "roundtrip: three list entries of 32 KiB in one subtask" {
	python3 -c '
import json
print(json.dumps({"format": "ckpt-state", "version": 1, "checkpoint_id": 1, "kind": "savepoint",
	"operators": [{"id": "op", "parallelism": 1, "max_parallelism": 128, "subtasks": [{"index": 0,
	"operator_state": {"l": {"mode": "list", "entries": [c * 32768 for c in "abc"]}}}]}]}))' > doc.json
	ckpt-merge -o x.tar doc.json
	run ckpt-inspect -a x.tar
	status_is 0
	[ "$(echo "$output" | jq -c '[.operators[0].subtasks[0].operator_state.l.entries[] | [.[0:1], length]]')" = \
		'[["a",32768],["b",32768],["c",32768]]' ]
}

@test "roundtrip: entries, keys, values and channel state of every size around each power of two to 4 MiB, each archive form" {
	python3 "$DATA/roundtrip/doc.py" 22 > doc.json
	ckpt-inspect -a doc.json > want.json
	[ "$(jq '.operators[0].parallelism' want.json)" -eq 67 ]
	for out in x.tar x.tar.gz x.zip xd/; do
		run ckpt-merge -o "$out" want.json
		status_is 0
		run ckpt-inspect -c "$out"
		status_is 0
		ckpt-inspect -a "$out" | cmp - want.json
	done
}

# rot DIR MEMBER: turn the member's bytes (its first 20 bytes go last) and give the manifest its new
# checksum: a member whose checksum is right and whose bytes are not a state file.
rot() {
	python3 - "$1/$2" <<'PY'
import sys
b = open(sys.argv[1], 'rb').read()
open(sys.argv[1], 'wb').write(b[20:] + b[:20])
PY
	h=$(xxhsum -H3 "$1/$2" | sed 's/.*= //')
	jq --arg m "$2" --arg h "$h" '(.members[] | select(.name == $m) | .xxh3) = $h' "$1/MANIFEST.json" > m.json
	mv m.json "$1/MANIFEST.json"
}

@test "roundtrip: -c parses each member: a right checksum over bytes that are no state file exits 1, named" {
	ckpt-inspect -a "$ROOT/examples/state.json" > doc.json
	ckpt-merge -o xd/ doc.json
	rot xd op/map/0
	run --separate-stderr ckpt-inspect -c xd/
	status_is 1
	[ "$stderr" = "ckpt-inspect: xd/:op/map/0: damaged state file: no ckptsub1 magic at byte 0" ]
	output_is '{"file":"xd/","ok":false,"members":3,"bytes":273,"problems":[{"where":"xd/:op/map/0","problem":"damaged state file: no ckptsub1 magic at byte 0"}]}'
	(cd xd && bsdtar -cf ../x.tar MANIFEST.json op/src/0 op/src/1 op/map/0)
	run --separate-stderr ckpt-inspect -c x.tar
	status_is 1
	[ "$stderr" = "ckpt-inspect: x.tar:op/map/0: damaged state file: no ckptsub1 magic at byte 0" ]
	# -c says what reading the archive says, at the same byte
	run --separate-stderr ckpt-inspect -a x.tar
	[ "$stderr" = "ckpt-inspect: x.tar:op/map/0: damaged state file: no ckptsub1 magic at byte 0" ]
}

@test "roundtrip: -c finds a state file that disagrees with its manifest, or runs on past its end" {
	ckpt-inspect -a "$ROOT/examples/state.json" > doc.json
	ckpt-merge -o xd/ doc.json
	cp -r xd yd
	# the end record, then one more byte (the checksum and size made right)
	printf 'E' >> yd/op/map/0
	h=$(xxhsum -H3 yd/op/map/0 | sed 's/.*= //') s=$(stat -c %s yd/op/map/0)
	jq --arg h "$h" --argjson s "$s" '(.members[] | select(.name == "op/map/0")) |= (.xxh3 = $h | .size = $s)' \
		yd/MANIFEST.json > m.json && mv m.json yd/MANIFEST.json
	run --separate-stderr ckpt-inspect -c yd/
	status_is 1
	[ "$stderr" = "ckpt-inspect: yd/:op/map/0: damaged state file: bytes after the end record at byte 162" ]
	run --separate-stderr ckpt-inspect -a yd/
	[ "$stderr" = "ckpt-inspect: yd/:op/map/0: damaged state file: bytes after the end record at byte 162" ]
	# a manifest counting one list entry more than the file holds
	jq '(.operators[] | select(.id == "map") | .subtasks[0].operator_state[].entries) |= . + 1' \
		xd/MANIFEST.json > m.json && mv m.json xd/MANIFEST.json
	run --separate-stderr ckpt-inspect -c xd/
	status_is 1
	[ "$stderr" = "$(ckpt-inspect -a xd/ 2>&1 >/dev/null)" ]
	[[ "$stderr" == "ckpt-inspect: xd/:op/map/0: damaged state file: entry count differs from the manifest at byte "* ]]
}

unaligned_pipeline() {
	echo '{"vertices":[{"id":"src","operator":"source","params":{"records":20000}},{"id":"slow","operator":"map","params":{"delay_us":20}},{"id":"sink","operator":"file_sink","params":{"path":"out"}}],"edges":[{"source":"src","target":"slow"},{"source":"slow","target":"sink"}],"checkpointing":{"interval_ms":20,"mode":"unaligned","dir":"chk","retain":100}}' > p.json
}

@test "roundtrip: ckpt-run's unaligned checkpoints, tens of KiB in flight, all read back and restore" {
	unaligned_pipeline
	run sh -c 'timeout 120 ckpt-run p.json > events.ndjson'
	status_is 0
	# channel state of 32 KiB and more was written, and every checkpoint reads back whole
	[ "$(jq -s '[.[] | select(.event == "checkpoint_completed") | .persisted_bytes] | max' events.ndjson)" -ge 32768 ]
	for a in chk/chk-*.tar; do
		ckpt-inspect -c "$a" > /dev/null
		ckpt-inspect -a "$a" > /dev/null
	done
	# out/ stays: the restored sink commits its transactions again (they are committed already)
	a=$(jq -r -s '[.[] | select(.event == "checkpoint_completed" and .persisted_bytes >= 32768)][0].path' events.ndjson)
	run sh -c 'timeout 120 ckpt-run --restore "$1" p.json > events2.ndjson' sh "$a"
	status_is 0
}

@test "roundtrip: ckpt-run's aligned checkpoints and savepoint read back" {
	unaligned_pipeline
	# unbounded: only the stop ends the job, the savepoint cannot race with its end
	jq '.checkpointing.mode = "aligned" | .vertices[0].params.records = 0' p.json > q.json
	run sh -c 'timeout 120 ckpt-run --stop-after-checkpoints 2 --savepoint sp.tar q.json > events.ndjson'
	status_is 0
	[ "$(jq -r 'select(.event == "savepoint") | .path' events.ndjson)" = sp.tar ]
	for a in chk/chk-*.tar sp.tar; do
		ckpt-inspect -c "$a" > /dev/null
		ckpt-inspect -a "$a" > /dev/null
	done
}

@test "roundtrip: a keyed state name that is not UTF-8 is damage, named at its byte by -c and -a alike" {
	ckpt-inspect -a "$ROOT/examples/state.json" |
		jq '(.operators[1].subtasks[0].keyed_state.entries[0].state) = "\u00e9t"' > doc.json
	ckpt-merge -o xd/ doc.json
	# the name's first byte 0xc3 becomes 0xff: no UTF-8 sequence starts so
	python3 - xd/op/map/0 <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
i = b.index(b'\xc3\xa9t\x00')
b[i] = 0xff
open(sys.argv[1], 'wb').write(bytes(b))
PY
	h=$(xxhsum -H3 xd/op/map/0 | sed 's/.*= //')
	jq --arg h "$h" '(.members[] | select(.name == "op/map/0") | .xxh3) = $h' xd/MANIFEST.json > m.json
	mv m.json xd/MANIFEST.json
	run --separate-stderr ckpt-inspect -c xd/
	status_is 1
	[[ "$stderr" == "ckpt-inspect: xd/:op/map/0: damaged state file: name not UTF-8 at byte "* ]]
	want=$stderr
	run --separate-stderr ckpt-inspect -a xd/
	status_is 2
	output_is ""
	[ "$stderr" = "$want" ]
}
