#!/usr/bin/env bats
# ckpt-inspect: the summary, -d and -u, on state documents and every archive form.

load helper

@test "inspect: the summary of a state document and of its archives" {
	cp "$ROOT/examples/state.json" state.json
	run ckpt-inspect state.json
	status_is 0
	match_golden "$DATA/inspect/summary.expected"
	ckpt-merge -o x.zip "$ROOT/examples/state.json"
	run sh -c 'ckpt-inspect x.zip | jq -c "del(.file, .format)"'
	output_is "$(jq -c 'del(.file, .format)' "$DATA/inspect/summary.expected")"
	run sh -c 'ckpt-inspect x.zip | jq -r .format'
	output_is zip
}

@test "inspect: -d names operators added, removed, rescaled and states added, removed, resized" {
	d="$ROOT/examples/state.json"
	jq '.operators[0].id = "src2" | .operators[1].parallelism = 3
	    | .operators[1].subtasks[0].operator_state.buffer.entries += ["b"]
	    | .operators[1].subtasks[0].operator_state.extra = {"mode": "broadcast", "entries": ["c"]}
	    | .operators[1].subtasks[0].keyed_state.entries |= map(select(.state != "seen"))' "$d" > b.json
	ckpt-merge -o b.tar b.json
	run --separate-stderr ckpt-inspect -d "$d" b.tar
	status_is 1
	[ -z "$stderr" ]
	output_is "{\"from\":\"$d\",\"to\":\"b.tar\",\"operators_added\":[{\"id\":\"src2\",\"uid\":\"source-1\",\"name\":\"Kafka Source\",\"parallelism\":2,\"max_parallelism\":128}],\"operators_removed\":[{\"id\":\"src\",\"uid\":\"source-1\",\"name\":\"Kafka Source\",\"parallelism\":2,\"max_parallelism\":128}],\"operators_rescaled\":[{\"id\":\"map\",\"parallelism\":[2,3],\"max_parallelism\":[128,128]}],\"states_added\":[{\"operator\":\"map\",\"state\":{\"name\":\"extra\",\"mode\":\"broadcast\",\"entries\":1,\"bytes\":1}}],\"states_removed\":[{\"operator\":\"map\",\"state\":{\"name\":\"seen\",\"mode\":\"keyed\",\"entries\":1,\"bytes\":2}}],\"states_resized\":[{\"operator\":\"map\",\"state\":\"buffer\",\"mode\":[\"list\",\"list\"],\"entries\":[2,3],\"bytes\":[5,6]}]}"
	run ckpt-inspect -d "$d" "$d"
	status_is 0
}

@test "inspect: -d OLD NEW as diff(1); the last release's -d OTHER FILE still works, with a warning" {
	d="$ROOT/examples/state.json"
	jq '.operators[1].parallelism = 3' "$d" > b.json
	run --separate-stderr ckpt-inspect -d "$d" b.json
	status_is 1
	want=$output
	[[ $want == "{\"from\":\"$d\",\"to\":\"b.json\","*'"parallelism":[2,3]'* ]]
	warn='ckpt-inspect: -d OTHER FILE (how OTHER differs from FILE) is the form of the last release: write -d FILE OTHER, -d OLD NEW as diff(1)'
	# the old forms a second operand does not make ambiguous: OTHER attached, or one FILE (stdin), or more than one
	for old in "-db.json $d" "--diff=b.json $d" "-d b.json $d $d"; do
		run --separate-stderr ckpt-inspect $old
		status_is 1
		[ "${lines[0]}" = "$want" ] && [ "$stderr" = "$warn" ] || { echo "$old: $output / $stderr"; return 1; }
	done
	run --separate-stderr ckpt-inspect -d b.json < "$d"
	status_is 1
	[ "$output" = "${want/$d/<stdin>}" ] && [ "$stderr" = "$warn" ]
	bad 2 'ckpt-inspect: -d compares two snapshots: -d OLD NEW (see ckpt-inspect -h)' ckpt-inspect -d
}

@test "inspect: -u names operators by uid, id, or the id Flink derives from the uid" {
	run sh -c 'ckpt-inspect -u map-1 -u src "$1" | jq -c ".uids, [.operators[].matched_uid]"' sh "$ROOT/examples/state.json"
	status_is 0
	[ "${lines[1]}" = '["src","map-1"]' ]
	run ckpt-inspect -u nope "$ROOT/examples/state.json"
	status_is 1
	[[ "${lines[0]}" == 'ckpt-inspect: '*'/examples/state.json: uid "nope" (operator id '*') names no operator' ]]
}

@test "inspect: usage" {
	run ckpt-inspect -h
	status_is 0
	match_golden "$DATA/usage/ckpt-inspect.expected"
	run ckpt-inspect -a -c x
	status_is 2
	bad 2 'ckpt-inspect: nosuch.tar: cannot open: No such file or directory' ckpt-inspect nosuch.tar
	echo garbage > g.bin
	bad 2 'ckpt-inspect: g.bin: not a snapshot: unrecognized archive format' ckpt-inspect g.bin
}

@test "inspect: Flink handles and facts survive every form; the summary lists handles and state files" {
	cp "$DATA/state/handles.json" handles.json
	run ckpt-inspect handles.json
	status_is 0
	match_golden "$DATA/inspect/handles-summary.expected"
	for out in h.tar h.tgz h.zip hd/; do
		ckpt-merge -o "$out" handles.json
		run ckpt-inspect -a "$out"
		status_is 0
		output_is "$(cat handles.json)"
	done
}

@test "inspect: stdin gives the same summary as the file, named <stdin>" {
	run sh -c 'ckpt-inspect < "$1"' sh "$ROOT/examples/state.json"
	status_is 0
	output_is "$(sed 's|"file":"state.json"|"file":"<stdin>"|' "$DATA/inspect/summary.expected")"
	ckpt-merge -o x.tgz "$ROOT/examples/state.json"
	run sh -c 'ckpt-inspect - < x.tgz | jq -c "del(.format)"'
	output_is "$(sed 's|"file":"state.json","format":"state document"|"file":"<stdin>"|' "$DATA/inspect/summary.expected")"
}

@test "inspect: several files give one value each; the worst status wins" {
	ckpt-merge -o a.tar "$ROOT/examples/state.json"
	ckpt-merge -o b/ "$ROOT/examples/state.json"
	rm b/op/src/0
	run sh -c 'ckpt-inspect -c a.tar b a.tar 2>/dev/null | jq -c .ok'
	output_is 'true
false
true'
	run ckpt-inspect -c a.tar b
	status_is 1
	run ckpt-inspect -c a.tar nosuch b
	status_is 2
}
