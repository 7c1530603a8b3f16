#!/usr/bin/env bats
# The catalogue of bad inputs: every kind of bad input each program may meet, with the one
# diagnostic line it prints and its exit status (nothing on stdout).  Programs' own tests
# cover their common errors; this is the one place that lists them all side by side.

load helper

# ---- ckpt-plan: files, JSON, job graphs

@test "catalogue: ckpt-plan: a file that does not exist" {
	bad 2 'ckpt-plan: nope.json: cannot open: No such file or directory' ckpt-plan nope.json
}

@test "catalogue: ckpt-plan: a directory given as a file" {
	mkdir d
	bad 2 'ckpt-plan: d: read error: Is a directory' ckpt-plan d
}

@test "catalogue: ckpt-plan: a dangling symbolic link" {
	ln -s missing.json link.json
	bad 2 'ckpt-plan: link.json: cannot open: No such file or directory' ckpt-plan link.json
}

@test "catalogue: ckpt-plan: only white space on stdin" {
	bad 2 'ckpt-plan: <stdin>: no job graph in input' sh -c 'printf "  \n\t\n" | ckpt-plan'
}

@test "catalogue: ckpt-plan: bytes that are not UTF-8" {
	printf '{"vertices":[{"id":"a\303\050","parallelism":1}]}' > g.json
	bad 2 "ckpt-plan: g.json:1:20: unable to decode byte 0xc3 near '\"a'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a NUL escaped in a string" {
	printf '{"vertices":[{"id":"a\\u0000","parallelism":1}]}' > g.json
	bad 2 "ckpt-plan: g.json:1:20: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"a\\u0000\"'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: single quotes instead of JSON's double quotes" {
	printf "{'vertices':[]}" > g.json
	bad 2 "ckpt-plan: g.json:1:2: string or '}' expected near '''" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a trailing comma" {
	printf '{"vertices":[],}' > g.json
	bad 2 "ckpt-plan: g.json:1:16: string or '}' expected near '}'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a comment" {
	printf '/* c */ {"vertices":[]}' > g.json
	bad 2 "ckpt-plan: g.json:1:1: '[' or '{' expected near '/'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a duplicate key" {
	printf '{"vertices":[{"id":"a","parallelism":1}],\n"edges":[{"source":"a","target":"b","source":"a"}]}' > g.json
	bad 2 "ckpt-plan: g.json:2:37: duplicate object key near '\"source\"'" ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an array where a graph object belongs" {
	bad 2 'ckpt-plan: <stdin>:1:1: not a job graph (an array): expected {"vertices": [...], "edges": [...]} or Flink'"'"'s GET /jobs/:jobid' sh -c 'echo "[]" | ckpt-plan'
}

@test "catalogue: ckpt-plan: an object that is no job graph" {
	bad 2 'ckpt-plan: <stdin>:1:1: not a job graph: expected {"vertices": [...], "edges": [...]} or Flink'"'"'s GET /jobs/:jobid' sh -c 'echo "{\"nodes\": []}" | ckpt-plan'
}

@test "catalogue: ckpt-merge -g: a graph file that is no job graph" {
	printf '{"nodes": []}' > g.json
	bad 2 'ckpt-merge: g.json:1:1: not a job graph: expected {"vertices": [...], "edges": [...]}' ckpt-merge -g g.json "$ROOT/examples/state.json"
	printf '[]' > g.json
	bad 2 'ckpt-merge: g.json:1:1: not a job graph (an array): expected {"vertices": [...], "edges": [...]}' ckpt-merge -g g.json "$ROOT/examples/state.json"
}

@test "catalogue: ckpt-plan: Flink's REST response of another endpoint than GET /jobs/:jobid" {
	needs_fixtures
	bad 2 "ckpt-plan: $FIXTURES/flink-rest/checkpoints-flink-1.9.1.json:1:1: Flink's GET /jobs/:jobid/checkpoints (checkpoint statistics), not a job: expected a job graph ({\"vertices\": [...], \"edges\": [...]}) or Flink's GET /jobs/:jobid" \
		ckpt-plan "$FIXTURES/flink-rest/checkpoints-flink-1.9.1.json"
}

@test "catalogue: ckpt-plan: a vertex that is not an object" {
	printf '{"vertices":[1]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: vertex 0 must be an object' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a vertex without an id" {
	printf '{"vertices":[{"parallelism":1}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: vertex 0: missing "id"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a vertex id that is a number" {
	printf '{"vertices":[{"id":7,"parallelism":1}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:20: vertex 0: "id" must be a string' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a parallelism given as a string" {
	printf '{"vertices":[{"id":"a","parallelism":"4"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:38: vertex "a": "parallelism" must be an integer' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a fractional parallelism" {
	printf '{"vertices":[{"id":"a","parallelism":1.5}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:38: vertex "a": "parallelism" must be an integer' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: max_parallelism below parallelism" {
	printf '{"vertices":[{"id":"a","parallelism":4,"max_parallelism":2}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:58: vertex "a": max_parallelism 2 is below parallelism 4' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: tasks and finished together" {
	printf '{"vertices":[{"id":"a","parallelism":1,"tasks":["RUNNING"],"finished":"0"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: vertex "a": give "tasks" or "finished", not both' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: tasks as a string" {
	printf '{"vertices":[{"id":"a","parallelism":1,"tasks":"RUNNING"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:48: vertex "a": "tasks" must be an array' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: finished as a number" {
	printf '{"vertices":[{"id":"a","parallelism":4,"finished":4}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: expected a range list or an array of subtask indices' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a string in a finished array" {
	printf '{"vertices":[{"id":"a","parallelism":4,"finished":[1,"2"]}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: vertex "a": finished: subtask list element 1 is not an integer' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: batch_snapshot not a boolean" {
	printf '{"vertices":[{"id":"a","parallelism":1,"batch_snapshot":"no"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:57: vertex "a": "batch_snapshot" must be true or false' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: operators not an array" {
	printf '{"vertices":[{"id":"a","parallelism":4,"operators":{}}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:52: vertex "a": "operators" must be an array' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an unknown key in an operator" {
	printf '{"vertices":[{"id":"a","parallelism":1,"operators":[{"id":"o","colour":"red"}]}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:72: vertex "a": operator 0: unknown key "colour"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a state declaration without a mode" {
	printf '{"vertices":[{"id":"a","parallelism":4,"operators":[{"id":"o","state":[{"name":"s"}]}]}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:72: vertex "a": operator 0: state 0 needs "name" and "mode"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an edge that is a string" {
	printf '{"vertices":[{"id":"a","parallelism":1}],"edges":["a->b"]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: edge 0 must be an object' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an edge without a target" {
	printf '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:51: edge 0: missing "target"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: an edge from a vertex to itself" {
	printf '{"vertices":[{"id":"a","parallelism":1}],"edges":[{"source":"a","target":"a"}]}' > g.json
	bad 2 'ckpt-plan: g.json:1:14: cycle through vertices "a" -> "a"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a distribution Flink has no name for" {
	printf '{"vertices":[{"id":"a","parallelism":1},{"id":"b","parallelism":1}],\n"edges":[{"source":"a","target":"b","distribution":"forward"}]}' > g.json
	bad 2 'ckpt-plan: g.json:2:52: edge 0: distribution must be "all_to_all" or "pointwise"' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: a partition type given as a number" {
	printf '{"vertices":[{"id":"a","parallelism":1},{"id":"b","parallelism":1}],\n"edges":[{"source":"a","target":"b","partition":7}]}' > g.json
	bad 2 'ckpt-plan: g.json:2:49: edge 0: unknown partition type (not a string)' ckpt-plan g.json
}

@test "catalogue: ckpt-plan: garbage after a good graph in a stream" {
	printf '{"vertices":[]}\n{"vertices":[]}\nx' > g.json
	run ckpt-plan -G g.json
	status_is 2
	# each document's result is whole; the garbage is named and fails the run
	output_is "$(printf '%s\n' '{"vertices":[],"edges":[]}' '{"vertices":[],"edges":[]}' "ckpt-plan: g.json:3:1: '[' or '{' expected near 'x'")"
}

# ---- ckpt-inspect: snapshots of every kind

doc() { # a state document whose one operator "a" has the given members
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","operators":[{"id":"a",%s}]}' "$1" > s.json
}
# doc_refused JSON LINE: ckpt-inspect of the state document JSON (in s.json) exits 2 with
# "ckpt-inspect: s.json:LINE" alone.  op_refused MEMBERS LINE: the same of doc's document.
doc_refused() {
	printf '%s' "$1" > s.json
	bad 2 "ckpt-inspect: s.json:$2" ckpt-inspect s.json
}
op_refused() {
	doc "$1"
	bad 2 "ckpt-inspect: s.json:$2" ckpt-inspect s.json
}

# archive KIND: a small archive good.KIND (tar, tar.gz, zip), made by the tools themselves
archive() {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":7,"kind":"savepoint","operators":[{"id":"map","parallelism":2,"max_parallelism":128,"subtasks":[{"index":0,"operator_state":{"offsets":{"mode":"list","entries":["p0:17"]}}}]}]}' > good.json
	ckpt-merge -o "good.$1" good.json
}

@test "catalogue: ckpt-inspect: -R of a Flink snapshot's entries without its state files" {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","flink":{},"operators":[]}' >f.json
	bad 2 "ckpt-inspect: a Flink snapshot's entries without its state files, whose serializers type them: give -R the Flink snapshot itself" ckpt-inspect -R f.json
}

@test "catalogue: ckpt-inspect: empty standard input" {
	bad 2 'ckpt-inspect: <stdin>: empty input' sh -c 'ckpt-inspect < /dev/null'
}

@test "catalogue: ckpt-inspect: an empty file" {
	: > empty
	bad 2 'ckpt-inspect: empty: empty input' ckpt-inspect empty
}

@test "catalogue: ckpt-inspect: a directory that holds no snapshot" {
	mkdir d
	bad 2 'ckpt-inspect: d: not a snapshot: no MANIFEST.json and no _metadata' ckpt-inspect d
}

@test "catalogue: ckpt-inspect: a directory of checkpoints, or of a job's, says so (also with -c)" {
	mkdir -p d/0a1b/chk-7 d/0a1b/shared e/shared/chk-1 a
	: > d/0a1b/chk-7/_metadata
	: > e/shared/chk-1/_metadata
	: > a/chk-2.tar
	hint='; it holds checkpoints (the newest complete one: ckpt-inspect --latest DIR)'
	bad 2 "ckpt-inspect: d: not a snapshot: no MANIFEST.json and no _metadata$hint" ckpt-inspect d
	bad 2 "ckpt-inspect: d/0a1b: not a snapshot: no MANIFEST.json and no _metadata$hint" ckpt-inspect -c d/0a1b
	bad 2 "ckpt-inspect: a: not a snapshot: no MANIFEST.json and no _metadata$hint" ckpt-inspect a
	# Flink's shared/ holds state files, never checkpoints; two levels down is not looked at
	bad 2 'ckpt-inspect: e: not a snapshot: no MANIFEST.json and no _metadata' ckpt-inspect e
	mkdir -p f/g/h/chk-1 && : > f/g/h/chk-1/_metadata
	bad 2 'ckpt-inspect: f: not a snapshot: no MANIFEST.json and no _metadata' ckpt-inspect f
}

@test "catalogue: ckpt-inspect: a Flink _metadata that is empty (also with -c)" {
	mkdir sp
	: > sp/_metadata
	bad 2 'ckpt-inspect: sp/_metadata: empty file: a Flink _metadata starts with its magic number and version (8 bytes)' ckpt-inspect sp
	run --separate-stderr ckpt-inspect -c sp
	status_is 1
	[ "$stderr" = 'ckpt-inspect: sp/_metadata: empty file: a Flink _metadata starts with its magic number and version (8 bytes)' ]
	output_is '{"file":"sp","ok":false,"files":0,"bytes":0,"problems":[{"where":"sp/_metadata","problem":"empty file: a Flink _metadata starts with its magic number and version (8 bytes)"}]}'
}

@test "catalogue: ckpt-inspect: a Flink _metadata cut inside its magic number" {
	printf '\x49\x60\x67' > cut
	bad 2 'ckpt-inspect: cut: offset 0: truncated magic number: 3 of its 4 bytes' ckpt-inspect cut
	mkdir sp
	printf '\x49' > sp/_metadata
	bad 2 'ckpt-inspect: sp/_metadata: offset 0: truncated magic number: 1 of its 4 bytes' ckpt-inspect -a sp
	bad 2 'ckpt-inspect: <stdin>: offset 0: truncated magic number: 1 of its 4 bytes' sh -c 'ckpt-inspect < sp/_metadata'
}

@test "catalogue: ckpt-inspect: a file called _metadata that is not Flink's" {
	mkdir sp
	printf 'hello' > sp/_metadata
	bad 2 'ckpt-inspect: sp/_metadata: offset 0: unexpected magic number 0x68656c6c: not a Flink _metadata file (or a Flink 1.0 savepoint, which is not supported)' ckpt-inspect -c sp
}

@test "catalogue: ckpt-inspect -c: a directory that holds no snapshot, an empty file" {
	mkdir d
	bad 2 'ckpt-inspect: d: not a snapshot: no MANIFEST.json and no _metadata' ckpt-inspect -c d
	: > empty
	bad 2 'ckpt-inspect: empty: empty input' ckpt-inspect -c empty
	bad 2 'ckpt-inspect: <stdin>: empty input' sh -c 'ckpt-inspect -c < empty'
}

@test "catalogue: ckpt-inspect -c: a Flink _metadata on standard input" {
	printf '\x49\x60\x67\x2d\0\0\0\4' > m
	bad 2 'ckpt-inspect: <stdin>: a Flink _metadata: -c reads the state files beside it: name the _metadata or its directory, not standard input' \
		sh -c 'ckpt-inspect -c < m'
}

@test "catalogue: ckpt-inspect: a text file that is no archive" {
	printf 'hello' > junk
	bad 2 'ckpt-inspect: junk: not a snapshot: unrecognized archive format' ckpt-inspect junk
}

@test "catalogue: ckpt-inspect: a tar cut inside its first header" {
	archive tar
	head -c 100 good.tar > cut.tar
	bad 2 'ckpt-inspect: cut.tar: truncated tar archive: 100 bytes, cut inside the 512-byte header of its first member, MANIFEST.json' ckpt-inspect cut.tar
	run --separate-stderr ckpt-inspect -c cut.tar
	status_is 1
	[ "$stderr" = 'ckpt-inspect: cut.tar: truncated tar archive: 100 bytes, cut inside the 512-byte header of its first member, MANIFEST.json' ]
}

@test "catalogue: ckpt-inspect: a tar cut short" {
	archive tar
	head -c 2000 good.tar > cut.tar
	bad 2 'ckpt-inspect: cut.tar: unreadable archive: truncated tar archive' ckpt-inspect -a cut.tar
}

@test "catalogue: ckpt-inspect: a tar.gz cut short" {
	archive tar.gz
	head -c 300 good.tar.gz > cut.tar.gz
	bad 2 'ckpt-inspect: cut.tar.gz: not a snapshot: truncated gzip input' ckpt-inspect cut.tar.gz
}

@test "catalogue: ckpt-inspect: a zip cut short" {
	archive zip
	head -c 400 good.zip > cut.zip
	bad 2 'ckpt-inspect: cut.zip: unreadable archive: truncated ZIP file header' ckpt-inspect -a cut.zip
	# cut inside the manifest's compressed bytes: damage found in a member (exit 1)
	head -c 200 good.zip > cut.zip
	bad 1 'ckpt-inspect: cut.zip: unreadable member: truncated ZIP data: the archive ends inside a compressed member' ckpt-inspect -a cut.zip
}

@test "catalogue: ckpt-inspect: a state file whose bytes changed in the archive" {
	archive tar
	# the member's data starts at 2048 in this tar; flip a byte of it
	printf 'Z' | dd of=good.tar bs=1 seek=2050 conv=notrunc 2>/dev/null
	run ckpt-inspect -a good.tar
	status_is 1
	[[ $output == 'ckpt-inspect: good.tar:op/map/0: checksum mismatch: xxh3 '*', manifest says '* ]]
	[ "${#lines[@]}" -eq 1 ]
}

@test "catalogue: ckpt-inspect: a state document of another format or version" {
	doc_refused '{"format":"other","version":1,"operators":[]}' \
		'1:11: not a state document: "format" must be "ckpt-state"'
	doc_refused '{"format":"ckpt-state","version":2,"operators":[]}' \
		'1:34: state document: unsupported version 2 (this is version 1)'
}

@test "catalogue: ckpt-inspect: a negative checkpoint id" {
	doc_refused '{"format":"ckpt-state","version":1,"checkpoint_id":-1,"kind":"savepoint","operators":[]}' \
		'1:52: state document: checkpoint_id -1 out of range (0 to 9223372036854775807)'
}

@test "catalogue: ckpt-inspect: a kind that is neither checkpoint nor savepoint" {
	doc_refused '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"snapshot","operators":[]}' \
		'1:61: state document: "kind" must be "checkpoint", "savepoint" or null'
}

@test "catalogue: ckpt-inspect: parallelism above max parallelism" {
	op_refused '"parallelism":2,"max_parallelism":1,"subtasks":[]' \
		'1:110: operator "a": parallelism 2 exceeds max parallelism 1'
}

@test "catalogue: ckpt-inspect: a subtask index beyond the parallelism, and twice the same" {
	op_refused '"parallelism":2,"max_parallelism":128,"subtasks":[{"index":2}]' \
		'1:155: operator "a": subtask 0: index 2 out of range (0 to 1)'
	op_refused '"parallelism":2,"max_parallelism":128,"subtasks":[{"index":0},{"index":0}]' \
		'1:167: operator "a": subtask 1: index 0 appears twice'
}

@test "catalogue: ckpt-inspect: two operators of one id" {
	doc_refused '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","operators":[{"id":"a","parallelism":2,"max_parallelism":128,"subtasks":[]},{"id":"a","parallelism":2,"max_parallelism":128,"subtasks":[]}]}' \
		'1:155: operator 1: duplicate operator "a"'
}

@test "catalogue: ckpt-inspect: an operator state mode Flink has not" {
	op_refused '"parallelism":2,"max_parallelism":128,"subtasks":[{"index":0,"operator_state":{"s":{"mode":"keyed","entries":[]}}}]' \
		'1:187: operator "a": subtask 0: state "s": unknown mode "keyed" (list, union or broadcast)'
}

@test "catalogue: ckpt-inspect: an entry of bad base64" {
	op_refused '"parallelism":2,"max_parallelism":128,"subtasks":[{"index":0,"operator_state":{"s":{"mode":"list","entries":[{"base64":"!!"}]}}}]' \
		'1:205: operator "a": subtask 0: state "s": entry 0: bad base64 in entry'
}

@test "catalogue: ckpt-inspect: a keyed entry outside its subtask's key groups" {
	op_refused '"parallelism":2,"max_parallelism":128,"subtasks":[{"index":0,"keyed_state":{"key_groups":"0-63","entries":[{"state":"s","key_group":64,"key":"k","value":"v"}]}}]' \
		"1:228: operator \"a\": subtask 0: keyed entry 0: key group 64 outside the subtask's 0-63"
}

@test "catalogue: ckpt-inspect: a finished subtask that holds entries" {
	fin='"parallelism":1,"max_parallelism":128,"subtasks":[{"index":0,"finished":true,'
	op_refused "$fin"'"operator_state":{"s":{"mode":"list","entries":["x","y"]}}}]' \
		'1:195: operator "a": subtask 0: finished, but holds 2 entries of list state "s"'
	op_refused "$fin"'"operator_state":{"s":{"mode":"union","entries":["x"]}}}]' \
		'1:195: operator "a": subtask 0: finished, but holds 1 entry of union state "s"'
	op_refused "$fin"'"operator_state":{"s":{"mode":"broadcast","entries":["x"]}}}]' \
		'1:195: operator "a": subtask 0: finished, but holds 1 entry of broadcast state "s"'
	op_refused "$fin"'"keyed_state":{"key_groups":"0-127","entries":[{"state":"s","key_group":3,"key":"k","value":"v"}]}}]' \
		'1:187: operator "a": subtask 0: finished, but holds 1 entry of keyed state "s"'
	op_refused "$fin"'"channel_state":{"input":[{"gate":0,"channel":0,"data":"d"}]}}]' \
		'1:198: operator "a": subtask 0: finished, but holds 1 entry of input channel state'
	op_refused "$fin"'"channel_state":{"output":[{"partition":0,"subpartition":0,"data":"d"}]}}]' \
		'1:199: operator "a": subtask 0: finished, but holds 1 entry of output channel state'
}

@test "catalogue: ckpt-inspect: a Flink 1.2 _metadata (version 1) is refused" {
	needs_fixtures
	bad 2 "ckpt-inspect: $FIXTURES/flink-savepoints/unsupported-v1-flink1.2-complexkeyed-savepoint/_metadata: offset 4: this savepoint / checkpoint version (Flink 1.1 / 1.2) is no longer supported" \
		ckpt-inspect "$FIXTURES/flink-savepoints/unsupported-v1-flink1.2-complexkeyed-savepoint/_metadata"
}

@test "catalogue: ckpt-inspect: a _metadata of an unknown version" {
	perl -e 'print pack("NN", 0x4960672d, 8)' > _metadata
	bad 2 'ckpt-inspect: _metadata: offset 4: unrecognized checkpoint version number: 8' ckpt-inspect _metadata
}

@test "catalogue: ckpt-inspect: a _metadata cut short, in a directory" {
	needs_fixtures
	mkdir cp
	head -c 100 "$FIXTURES/flink-savepoints/v3-flink1.15dev-unified-sink-v1-savepoint/_metadata" > cp/_metadata
	bad 2 'ckpt-inspect: cp/_metadata: offset 20: operator count 4 is more than the remaining 76 bytes can hold' ckpt-inspect cp
}

@test "catalogue: ckpt-inspect: a _metadata with bytes after its end" {
	needs_fixtures
	cat "$FIXTURES/flink-savepoints/v3-flink1.15dev-unified-sink-v1-savepoint/_metadata" > _metadata
	printf 'xx' >> _metadata
	bad 2 'ckpt-inspect: _metadata: offset 1640: 2 unexpected bytes after the last operator' ckpt-inspect _metadata
}

@test "catalogue: ckpt-inspect: a _metadata with Flink 1.1's Checkpointed state" {
	needs_fixtures
	bad 2 "ckpt-inspect: $FIXTURES/flink-savepoints/unsupported-v2-flink1.3-legacy-checkpointed-savepoint/_metadata: offset 204: legacy state (from Flink <= 1.1, created through the 'Checkpointed' interface) is no longer supported" \
		ckpt-inspect "$FIXTURES/flink-savepoints/unsupported-v2-flink1.3-legacy-checkpointed-savepoint/_metadata"
}

@test "catalogue: ckpt-inspect: a changelog file cut short (FsStateChangelogWriter's, t/flinkstate.bats)" {
	load flinkstate-helper
	cl_dir
	head -c 700 cl/log >cut && cp cut cl/log
	bad 2 'ckpt-inspect: cl/log: short: 700 bytes, the _metadata records 1313 and a flag byte' ckpt-inspect -a cl
}

@test "catalogue: ckpt-inspect: --state naming no state of the files read (t/filter.bats)" {
	load flinkstate-helper
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	bad 2 'ckpt-inspect: sp: --state "cuont" names no state (the states: count, names)' ckpt-inspect -R --state cuont sp
}

@test "catalogue: ckpt-inspect: -l, --latest or --orphans without a directory, or with two" {
	bad 2 'ckpt-inspect: -l needs a directory (see ckpt-inspect -h)' ckpt-inspect -l
	bad 2 'ckpt-inspect: --latest takes one directory, not also "b" (see ckpt-inspect -h)' ckpt-inspect --latest a b
}

@test "catalogue: ckpt-inspect: -d naming a snapshot that does not exist" {
	archive tar
	bad 2 'ckpt-inspect: nope: cannot open: No such file or directory' ckpt-inspect -d nope good.tar
}

@test "catalogue: ckpt-inspect: -l or --latest on a directory that does not exist" {
	bad 2 'ckpt-inspect: nope: cannot open: No such file or directory' ckpt-inspect -l nope
}

@test "catalogue: ckpt-inspect: --latest where nothing is complete (a defined negative answer)" {
	mkdir -p j/chk-3
	bad 1 'ckpt-inspect: j: no complete checkpoint or savepoint (1 found)' ckpt-inspect --latest j
}

@test "catalogue: ckpt-inspect: --orphans on a directory that does not exist, or on a file" {
	bad 2 'ckpt-inspect: nope: cannot list: No such file or directory' ckpt-inspect --orphans nope
	: > f
	bad 2 'ckpt-inspect: f: cannot list: Not a directory' ckpt-inspect --orphans f
}

@test "catalogue: ckpt-inspect: --orphans where a _metadata below the newest checkpoint is cut" {
	needs_fixtures
	mkdir -p j/chk-1 j/chk-2
	head -c 300 "$FIXTURES/flink-savepoints/v5-flink2.0-nonkeyed-chain-savepoint/_metadata" > j/chk-1/_metadata
	cp "$FIXTURES/flink-savepoints/v5-flink2.0-nonkeyed-chain-savepoint/_metadata" j/chk-2/
	bad 2 "ckpt-inspect: j/chk-1/_metadata: not read whole, so no file's use is known and nothing is listed: offset 142: inline byte count 194 is more than the remaining 154 bytes can hold" \
		ckpt-inspect --orphans j
}

@test "catalogue: ckpt-inspect: --orphans meeting a symbolic link loop" {
	mkdir -p j/chk-1
	ln -s .. j/chk-1/up
	bad 2 'ckpt-inspect: j/chk-1/up: a symbolic link loop' ckpt-inspect --orphans j
}

@test "catalogue: ckpt-inspect: --older-than without a unit" {
	mkdir d
	bad 2 'ckpt-inspect: --older-than needs a duration (30s, 10m, 1h, 2d), not "60" (see ckpt-inspect -h)' \
		ckpt-inspect --orphans d --older-than 60
}

@test "catalogue: ckpt-inspect: a source's split whose length field lies" {
	needs_fixtures
	load connector-helper
	tohex
	set_last_element 350 "$(reader_element 0 "$(kafka_split topic 5 10 -9223372036854775808)")" \
		"$(i32 35)$(i32 0)$(i32 28)$(kafka_split topic 5 10 -9223372036854775808)"
	unhex
	bad 2 "ckpt-inspect: sp/_metadata:inline:file:/Users/arv/flink-connector-kafka/flink-connector-kafka/src/test/resources/kafka-source-savepoint/enum1-split0/savepoint-3c7c0a-07c49f841952/f797d07f-447e-4460-8216-d1c05a2a0a2d: operator cb16aa5adb311e8ac72482def19accbe subtask 0: SourceReaderState element 2: offset 319: split length 28, but 27 bytes follow it" \
		ckpt-inspect --offsets sp
}

@test "catalogue: ckpt-inspect --offsets: a Kafka source's split that parses as no split" {
	needs_fixtures
	load connector-helper
	tohex
	set_last_element 350 "$(reader_element 0 "$(kafka_split topic 5 10 -9223372036854775808)")" \
		"$(reader_element 0 "$(kafka_split topic 5 -7 -9223372036854775808)")"
	unhex
	bad 2 "ckpt-inspect: sp/_metadata: operator cb16aa5adb311e8ac72482def19accbe subtask 0: SourceReaderState element 2 of a kafka source: kafka: offset 334: starting offset -7 is neither an offset nor a sentinel; hybrid: offset 350: truncated split id" \
		ckpt-inspect --offsets sp
}

# ---- ckpt-merge: outputs

@test "catalogue: ckpt-merge: an output name of no archive kind" {
	archive tar
	bad 2 'ckpt-merge: out.rar: name the archive .tar, .tar.gz, .tgz or .zip, or end it with / for a directory (see ckpt-merge -h)' ckpt-merge -o out.rar good.tar
	[ ! -e out.rar ]
}

@test "catalogue: ckpt-merge: an output in a directory that does not exist" {
	archive tar
	bad 2 'ckpt-merge: nodir/out.tar: cannot create: No such file or directory' ckpt-merge -o nodir/out.tar good.tar
}

@test "catalogue: ckpt-merge: an output that is the input, also through a link" {
	archive tar
	ln -s good.tar link.tar
	bad 2 'ckpt-merge: link.tar: the output would overwrite the input (see ckpt-merge -h)' ckpt-merge -o link.tar good.tar
	cmp good.tar "$(readlink -f link.tar)"
}

@test "catalogue: ckpt-merge: an output directory that exists and is not empty" {
	archive tar
	mkdir out
	touch out/keep
	bad 2 'ckpt-merge: out: cannot rename into place: Directory not empty' ckpt-merge -o out/ good.tar
	[ "$(ls out)" = keep ]
}

@test "catalogue: ckpt-merge: a Flink snapshot written to an archive file, rescaled or not" {
	needs_fixtures
	ln -s "$FIXTURES/flink-savepoints/v4-flink1.20-complexkeyed-savepoint" sp
	bad 2 "ckpt-merge: sp: a Flink snapshot is written as a Flink savepoint with its state files: give -o DIR/ and the snapshot's directory or _metadata" ckpt-merge -o out.tar sp
	bad 2 "ckpt-merge: <stdin>: a Flink snapshot is written as a Flink savepoint with its state files: give -o DIR/ and the snapshot's directory or _metadata" sh -c 'ckpt-merge -o out/ < sp/_metadata'
	bad 2 'ckpt-merge: sp: a Flink snapshot is rescaled by Flink on restore: without -o ckpt-merge prints the assignment, -o DIR/ without -P writes the savepoint' ckpt-merge -P 2 -o out.tar sp
	[ "$(ls)" = sp ]
}

@test "catalogue: ckpt-merge --canonical: ckpt's own archive, which is no Flink snapshot" {
	archive tar
	bad 2 'ckpt-merge: good.tar: not a Flink snapshot: --canonical converts Flink snapshots only' ckpt-merge --canonical -o out/ good.tar
	[ ! -e out ]
}

@test "catalogue: ckpt-merge: a Flink snapshot's state document (ckpt-inspect -a) written" {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","flink":{},"operators":[]}' >f.json
	bad 2 "ckpt-merge: f.json: a Flink snapshot's entries without its state files (ckpt-inspect -a): write the snapshot itself, ckpt-merge -o DIR/ SNAPSHOT" ckpt-merge -o out.tar f.json
	[ "$(ls)" = f.json ]
}

@test "catalogue: ckpt-merge: a typed keyed entry (ckpt-inspect -a without --raw)" {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"savepoint","operators":[{"id":"a","parallelism":1,"max_parallelism":4,"subtasks":[{"index":0,"keyed_state":{"key_groups":"0-3","entries":[{"state":"s","key_group":1,"key":[3],"namespace":null,"value":3}]}}]}]}' >t.json
	bad 2 'ckpt-merge: t.json:1:200: operator "a": subtask 0: keyed entry 0: a typed entry (it has "namespace"): state documents are read as bytes, as ckpt-inspect -a --raw prints them' ckpt-merge -P 2 t.json
}

# ---- ckpt-merge -o DIR/ of a Flink savepoint: edited Flink savepoints (t/flinkwrite.bats tests each beside its feature)

# savepoint: a Flink 1.20 savepoint (format version 4) of operators of uids first, second, third
# and window, in sp/.
savepoint() {
	needs_fixtures || return
	mkdir sp
	cp "$FIXTURES/flink-savepoints/v4-flink1.20-complexkeyed-savepoint/_metadata" sp/
}

@test "catalogue: ckpt-merge -o DIR/ of a Flink savepoint: --uid or --drop naming no operator" {
	savepoint
	bad 1 'ckpt-merge: sp/_metadata: --uid nosuch=x: no operator has the uid or id "nosuch" (Some identifier changes were never applied!)' ckpt-merge --uid nosuch=x -o out/ sp
	bad 1 'ckpt-merge: sp/_metadata: --drop nosuch: no operator has the uid or id "nosuch" (Some identifier changes were never applied!)' ckpt-merge --drop nosuch -o out/ sp
	[ ! -e out ]
}

@test "catalogue: ckpt-merge -o DIR/ of a Flink savepoint: two edits of one operator that conflict" {
	savepoint
	bad 2 'ckpt-merge: sp/_metadata: --uid first=x and --drop first edit the same operator adf090656b210b1609ad3203d4ee7329' ckpt-merge --uid first=x --drop first -o out/ sp
	[ ! -e out ]
}

@test "catalogue: ckpt-merge -o DIR/ of a Flink savepoint: a new uid colliding with an operator" {
	savepoint
	bad 1 'ckpt-merge: sp/_metadata: --uid first=window: another operator already has the id 01203aa9a12dc1ec725e03853dd7c8f2 that uid "window" gives' ckpt-merge --uid first=window -o out/ sp
	[ ! -e out ]
}

@test "catalogue: ckpt-merge -o DIR/ of a Flink savepoint: an output in the input's directory, or one that exists" {
	savepoint
	bad 2 "ckpt-merge: sp/out: the output would lie in the input's directory sp" ckpt-merge -o sp/out/ sp
	bad 2 'ckpt-merge: sp: already exists: the savepoint is written to a new directory' ckpt-merge -o sp/ sp
	[ "$(ls sp)" = _metadata ]
}

@test "catalogue: ckpt-merge -o DIR/ of a Flink savepoint: input that is not a Flink snapshot, or of version 2" {
	archive tar
	bad 2 'ckpt-merge: good.tar: not a Flink snapshot: --uid, --drop, --relocate and --link edit Flink savepoints only' ckpt-merge --drop x -o out/ good.tar
	needs_fixtures
	bad 2 "ckpt-merge: $FIXTURES/flink-savepoints/v2-flink1.8-nonkeyed-chain-savepoint/_metadata: format version 2: version 2 and below are read-only: Flink cannot write them either" ckpt-merge --drop x -o out/ "$FIXTURES/flink-savepoints/v2-flink1.8-nonkeyed-chain-savepoint"
	[ ! -e out ]
}

@test "catalogue: ckpt-merge: a full disk on standard output" {
	archive tar
	[ -w /dev/full ] || skip "no /dev/full"
	bad 2 'ckpt-merge: stdout: write error: No space left on device' sh -c 'ckpt-merge good.tar > /dev/full'
}

@test "catalogue: ckpt-merge: a corrupt member stops the merge and writes nothing" {
	archive tar
	printf 'Z' | dd of=good.tar bs=1 seek=2050 conv=notrunc 2>/dev/null
	run ckpt-merge -o new.tar good.tar
	status_is 1
	[[ $output == 'ckpt-merge: good.tar:op/map/0: checksum mismatch: '* ]]
	[ ! -e new.tar ]
}

@test "catalogue: ckpt-merge --rows: a malformed line, a row of no state, a value of the wrong type" {
	needs_fixtures
	local op=d5c8b168c6cbfe8c507a10f88b325243
	ln -s "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint" sp
	printf '{"operator":"%s","state":"state-name",\n' $op >r
	bad 2 'ckpt-merge: r:1:1: string or '"'"'}'"'"' expected near end of file' ckpt-merge --rows r -o out/ sp
	printf '{"operator":"%s","state":"nope","key_group":1,"key":[3],"namespace":null,"value":3}\n' $op >r
	bad 2 "ckpt-merge: r:1: operator $op has no keyed state nope" ckpt-merge --rows r -o out/ sp
	printf '{"operator":"%s","state":"state-name","key_group":1,"key":[3],"namespace":null,"value":"3"}\n' $op >r
	bad 2 'ckpt-merge: r:1: state state-name: the value does not fit its serializer LongSerializer: expected an integer (a long)' \
		ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

@test "catalogue: ckpt-merge --rows: a row of operator state of a subtask the operator does not have" {
	needs_fixtures
	local op=69f32d314b97c6f7f9ed7873983167f2
	ln -s "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19-hashmap-savepoint" sp
	printf '{"operator":"%s","state":"source-state","subtask":3,"value":"x"}\n' $op >r
	bad 2 "ckpt-merge: r:1: operator $op has no subtask 3 (its parallelism is 1)" ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}

# ---- ckpt-replay: logs

@test "catalogue: ckpt-replay: a log directory that does not exist" {
	bad 2 'ckpt-replay: nope: cannot open: No such file or directory' ckpt-replay nope
}

@test "catalogue: ckpt-replay: a file given as the log directory" {
	: > file
	bad 2 'ckpt-replay: file: cannot open: Not a directory' ckpt-replay file
}

@test "catalogue: ckpt-replay: a record whose checksum does not match" {
	mkdir L
	perl -e 'print pack("NNH16", 2, 3, "0" x 16), "{}"' > L/events.0
	bad 1 'ckpt-replay: L/events.0: offset 0: checksum mismatch (record says 0000000000000000, payload has 1349cde127705c16)' ckpt-replay L
}

@test "catalogue: ckpt-replay: a torn record refuses to be appended to" {
	mkdir L
	perl -e 'print pack("NNH16", 0xffffffff, 1, "0" x 16), "x" x 100' > L/events.0
	printf '{"type":"vertex_initialized","payload":{"vertex":"a","parallelism":2}}\n' > e.ndjson
	bad 1 'ckpt-replay: L/events.0: offset 0: the log ends in a torn record (116 bytes); cut it off first (ckpt-replay --repair)' \
		sh -c 'ckpt-replay -w L < e.ndjson'
}

@test "catalogue: ckpt-replay: an NDJSON event of an unknown type" {
	printf '{"type":"vertex_finshed","payload":{}}\n' > e.ndjson
	bad 2 'ckpt-replay: <stdin>:1:9: unknown event type "vertex_finshed"' sh -c 'ckpt-replay -w L < e.ndjson'
	[ ! -e L/events.0 ]
}

@test "catalogue: ckpt-replay: an NDJSON line that is not JSON" {
	bad 2 'ckpt-replay: <stdin>:1:1: an event must be an object' sh -c 'echo "not json" | ckpt-replay -w L'
}

@test "catalogue: ckpt-replay: an event without a required member" {
	printf '{"type":"vertex_initialized","payload":{"vertex":"a"}}\n' > e.ndjson
	bad 2 'ckpt-replay: <stdin>:1:40: vertex_initialized: missing "parallelism"' sh -c 'ckpt-replay -w L < e.ndjson'
}

@test "catalogue: ckpt-replay: an available-partitions file cut short, or of bad ids" {
	mkdir L
	printf '["a:0"' > av.json
	bad 2 "ckpt-replay: av.json:1:7: ']' expected near end of file" ckpt-replay --available av.json L
	printf '["zz"]' > av.json
	bad 2 'ckpt-replay: av.json:1:2: partition 0: not a "vertex:subtask" string' ckpt-replay --available av.json L
}

@test "catalogue: ckpt-replay: a copy onto a directory that exists" {
	mkdir L R
	bad 2 'ckpt-replay: R: already exists' ckpt-replay --repair R L
}

@test "catalogue: ckpt-replay: Flink's log: a payload that is not a Java serialization stream" {
	printf '{"type":"vertex_initialized","payload":{"vertex":"%032x","parallelism":2}}\n' 1 2 | python3 "$T/flinklog.py" L
	flip L/events.0 $((506 + 9))
	bad 1 "ckpt-replay: L/events.0: offset 506: payload byte 0: not a Java serialization stream (0xacec0005, want 0xaced0005)" ckpt-replay L
}

@test "catalogue: ckpt-replay: Flink's log: a record of a type Flink has no serializer for" {
	printf '{"type":"vertex_initialized","payload":{"vertex":"%032x","parallelism":2}}\n' 1 | python3 "$T/flinklog.py" L
	{ printf '\0\0\0\11'; tail -c +5 L/events.0; } > t && mv t L/events.0
	bad 1 "ckpt-replay: L/events.0: offset 0: unknown record type 9" ckpt-replay L
}

@test "catalogue: ckpt-replay: Flink's log is not appended to" {
	printf '{"type":"vertex_initialized","payload":{"vertex":"%032x","parallelism":2}}\n' 1 | python3 "$T/flinklog.py" L
	bad 1 "ckpt-replay: L: a Flink job event log: ckpt writes ckpt-events(5) logs only" ckpt-replay -w L < /dev/null
}

# ---- ckpt-run: pipelines

@test "catalogue: ckpt-run: no pipeline named" {
	bad 2 'ckpt-run: one pipeline file expected (see ckpt-run -h)' ckpt-run
}

@test "catalogue: ckpt-run: a pipeline without vertices" {
	printf '{}' > p.json
	bad 2 'ckpt-run: p.json:1:1: pipeline: "vertices" must be a non-empty array' ckpt-run p.json
}

@test "catalogue: ckpt-run: an operator that is not built in" {
	printf '{"vertices":[{"id":"src","operator":"teleport","parallelism":1}]}' > p.json
	bad 2 'ckpt-run: p.json:1:37: vertex "src": unknown operator "teleport" (one of source, map, filter, keyed_sum, window, broadcast_state, file_sink, discard_sink)' ckpt-run p.json
}

@test "catalogue: ckpt-run: forward partitioning between different parallelisms" {
	printf '{"vertices":[{"id":"src","operator":"source","parallelism":1},{"id":"m","operator":"map","parallelism":2}],"edges":[{"source":"src","target":"m","partitioner":"forward"}]}' > p.json
	bad 2 'ckpt-run: p.json:1:117: edge 0: forward partitioning does not allow change of parallelism ("src" 1, "m" 2): use rescale, rebalance, hash or broadcast' ckpt-run p.json
}

@test "catalogue: ckpt-run: an unknown partitioner" {
	printf '{"vertices":[{"id":"src","operator":"source","parallelism":1},{"id":"m","operator":"map","parallelism":1}],"edges":[{"source":"src","target":"m","partitioner":"zigzag"}]}' > p.json
	bad 2 'ckpt-run: p.json:1:160: edge 0: unknown partitioner "zigzag" (one of forward, rescale, rebalance, hash, broadcast)' ckpt-run p.json
}

@test "catalogue: ckpt-run: a negative record count" {
	printf '{"vertices":[{"id":"src","operator":"source","parallelism":1,"params":{"records":-5}}]}' > p.json
	bad 2 'ckpt-run: p.json:1:82: vertex "src": params: records -5 out of range (0 to 2305843009213693951)' ckpt-run p.json
}

@test "catalogue: ckpt-run: a restore from an archive that does not exist" {
	printf '{"vertices":[{"id":"src","operator":"source","parallelism":1}]}' > p.json
	bad 2 'ckpt-run: nope.tar: cannot open: No such file or directory' ckpt-run --restore nope.tar p.json
}
