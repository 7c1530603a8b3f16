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

@test "inspect: the summary lists Flink handles and state files; ckpt-merge writes them in no archive form (their state is elsewhere)" {
	cp "$DATA/state/handles.json" handles.json
	run ckpt-inspect handles.json
	status_is 0
	match_golden "$DATA/inspect/handles-summary.expected"
	for out in h.tar h.tgz h.zip hd/; do
		bad 2 "ckpt-merge: handles.json: a Flink snapshot's entries without its state files (ckpt-inspect -a): write the snapshot itself, ckpt-merge -o DIR/ SNAPSHOT" ckpt-merge -o "$out" handles.json
		[ ! -e "$out" ]
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

# The snapshots of one job in six forms (flink-artifacts), and a copy of one of them to change.
ART19=new-stateful-udf-migration-itcase-flink1.19
FORMS='hashmap-savepoint hashmap-checkpoint hashmap-savepoint-native rocksdb-savepoint rocksdb-checkpoint rocksdb-savepoint-native'

@test "inspect: -d between the six forms of one Flink job: exit 0, no entry differs, processing-time timers' timestamps apart" {
	needs_fixtures
	local a=$FIXTURES/flink-artifacts/$ART19 f n
	for f in $FORMS; do
		run --separate-stderr ckpt-inspect -d "$a-hashmap-savepoint" "$a-$f"
		[ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$f: status $status: $stderr"; return 1; }
		d=$(jq -c '[.operators_added, .operators_removed, .operators_rescaled, .states_added, .states_removed, .state]' <<<"$output")
		[ "$d" = '[[],[],[],[],[],{}]' ] || { echo "$f: $d"; return 1; }
		n=$(jq '[.processing_timers[][].changed] | add // 0' <<<"$output")
		# the rows: those timers alone, each with both timestamps, as many as counted
		run --separate-stderr ckpt-inspect -d -R "$a-hashmap-savepoint" "$a-$f"
		[ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$f -R: status $status: $stderr"; return 1; }
		[ "$(jq -c 'select(.change != "timestamp" or .kind != "timers" or (.state | startswith("_timer_state/processing_") | not)
			or .old == .new or .old == null)' <<<"$output")" = '' ] || { echo "$f: $output"; return 1; }
		[ "$(grep -c . <<<"$output")" -eq "$n" ] || { echo "$f: $n timers, rows: $output"; return 1; }
		case $f in hashmap-savepoint) [ "$n" -eq 0 ] ;; *) [ "$n" -eq 8 ] ;; esac || { echo "$f: $n"; return 1; }
	done
}

@test "inspect: -d of a copy with one value changed: exit 1, the state and key group named; -d -R the row with both values; -u, --state, -k narrow" {
	needs_fixtures
	local a=$FIXTURES/flink-artifacts/$ART19-hashmap-savepoint
	cp -r "$a" c && chmod -R u+w c
	# state-name of operator d5c8...'s key [3] (key group 1): its Long value 3 becomes 7, the last
	# byte before the key group's end mark
	printf '\007' | dd of=c/19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5 bs=1 seek=532 conv=notrunc status=none
	run --separate-stderr ckpt-inspect -d "$a" c
	status_is 1
	output_is "{\"from\":\"$a\",\"to\":\"c\",\"operators_added\":[],\"operators_removed\":[],\"operators_rescaled\":[],\"states_added\":[],\"states_removed\":[],\"states_resized\":[],\"state\":{\"d5c8b168c6cbfe8c507a10f88b325243\":{\"state-name\":{\"added\":0,\"removed\":0,\"changed\":1,\"key_groups\":{\"1\":{\"added\":0,\"removed\":0,\"changed\":1}}}}},\"processing_timers\":{}}"
	[ -z "$stderr" ]
	row='{"change":"changed","uid":null,"operator":"d5c8b168c6cbfe8c507a10f88b325243","state":"state-name","kind":"value","subtask":1,"key_group":1,"key":[3],"namespace":null,"old":3,"new":7}'
	for opt in -R --rows "-R -u d5c8b168c6cbfe8c507a10f88b325243" "-R --state state-name" "-R -k [3]"; do
		run --separate-stderr ckpt-inspect -d $opt "$a" c
		status_is 1
		output_is "$row"
		[ -z "$stderr" ]
	done
	# the other way round: old and new swap
	run ckpt-inspect -d -R c "$a"
	output_is "${row/\"old\":3,\"new\":7/\"old\":7,\"new\":3}"
	# narrowed to what did not change: no difference
	for opt in "-u 41e91aae0bee218c44306cf7d21940ad" "--state _timer_state/event_timer" "-k [1]"; do
		run --separate-stderr ckpt-inspect -d $opt "$a" c
		status_is 0
		[ "$(jq -c '[.state, .processing_timers]' <<<"$output")" = '[{},{}]' ] && [ -z "$stderr" ] || { echo "$opt: $output $stderr"; return 1; }
		run ckpt-inspect -d -R $opt "$a" c
		status_is 0
		output_is ''
	done
	ckpt-merge -o c.tar "$ROOT/examples/state.json"
	bad 2 "ckpt-inspect: c.tar: -d -R compares the entries of two Flink snapshots' state files, and this is not one" \
		ckpt-inspect -d -R "$a" c.tar
}

# A copy of the job's hashmap-savepoint with two subtasks' state unreadable: operator 41e9...'s
# subtask 1 (its file missing), operator 4b81...'s subtask 0 (a serializer snapshot's class name damaged).
unreadable_copy() {
	cp -r "$FIXTURES/flink-artifacts/$ART19-hashmap-savepoint" k && chmod -R u+w k
	rm k/ca45bb7b-cd52-47f4-832a-b0e8b41ace12
	printf '\377\377\377\377' | dd of=k/03a25f40-09fa-4aa9-a6a6-a7a689cae990 bs=1 seek=20 conv=notrunc status=none
	SKIP1='ckpt-inspect: k: operator 41e91aae0bee218c44306cf7d21940ad subtask 1 skipped: k/ca45bb7b-cd52-47f4-832a-b0e8b41ace12: cannot open the state file of operator 41e91aae0bee218c44306cf7d21940ad subtask 1: No such file or directory'
	SKIP2='ckpt-inspect: k: operator 4b818c7923a927796d24b727201ba34d subtask 0 skipped: k/03a25f40-09fa-4aa9-a6a6-a7a689cae990: offset 20: damaged serializer snapshot class: byte 0xff is not modified UTF-8'
}

@test "inspect: --keep-going: -R and -a print the rest, name each subtask skipped on stderr, exit 1; without it the first stops, exit 2" {
	needs_fixtures
	unreadable_copy
	local a=$FIXTURES/flink-artifacts/$ART19-hashmap-savepoint
	# one read: the rows before the subtask that cannot be read (the whole's first 8), then it named
	bad_after 2 'ckpt-inspect: k/ca45bb7b-cd52-47f4-832a-b0e8b41ace12: cannot open the state file of operator 41e91aae0bee218c44306cf7d21940ad subtask 1: No such file or directory' \
		"$(ckpt-inspect -R "$a" | head -n 8)" ckpt-inspect -R k
	run --separate-stderr ckpt-inspect -R --keep-going k
	status_is 1
	[ "$stderr" = "$SKIP1"$'\n'"$SKIP2" ]
	# the rows of every other subtask, as -R of the whole snapshot prints them
	[ "$output" = "$(ckpt-inspect -R "$a" | grep -vE '"operator":"41e91aae0bee218c44306cf7d21940ad",[^}]*"subtask":1,|"operator":"4b818c7923a927796d24b727201ba34d",[^}]*"subtask":0,')" ]
	[ "$(grep -c . <<<"$output")" -eq 37 ]
	# -a: the document, the subtasks skipped holding their handles and why they are not read
	run --separate-stderr ckpt-inspect -a --keep-going k
	status_is 1
	[ "$stderr" = "$SKIP1"$'\n'"$SKIP2" ]
	[ "$(jq -c '[.operators[].subtasks[] | select(.unread) | [.index, .unread, (.handles | length), has("keyed_state")]]' <<<"$output")" = \
	  '[[1,"k/ca45bb7b-cd52-47f4-832a-b0e8b41ace12: cannot open the state file of operator 41e91aae0bee218c44306cf7d21940ad subtask 1: No such file or directory",1,false],[0,"k/03a25f40-09fa-4aa9-a6a6-a7a689cae990: offset 20: damaged serializer snapshot class: byte 0xff is not modified UTF-8",1,false]]' ]
	[ "$(jq -c 'del(.operators[].subtasks[] | select(.unread))' <<<"$output")" = \
	  "$(ckpt-inspect -a "$a" | jq -c 'del(.operators[] | select(.id == "41e91aae0bee218c44306cf7d21940ad") .subtasks[] | select(.index == 1))
	     | del(.operators[] | select(.id == "4b818c7923a927796d24b727201ba34d") .subtasks[] | select(.index == 0))')" ]
	# what ckpt-merge would read back of it is refused, not taken for empty
	run sh -c 'ckpt-inspect -a --raw --keep-going k 2>/dev/null | ckpt-merge -o x.tar'
	status_is 2
	[ ! -e x.tar ]
	# -k reads one key group: what it cannot read is named the same way
	run --separate-stderr ckpt-inspect -R --keep-going -k '[3]' k
	status_is 1
	[ "$stderr" = "$SKIP1"$'\n'"$SKIP2" ]
	[ "$output" = "$(ckpt-inspect -R -k '[3]' "$a" | grep -v 41e91aae0bee218c44306cf7d21940ad)" ]
	bad 2 'ckpt-inspect: --keep-going goes with -a, -R and -d (see ckpt-inspect -h)' ckpt-inspect -c --keep-going k
	bad 2 'ckpt-inspect: --keep-going goes with -a, -R and -d (see ckpt-inspect -h)' ckpt-inspect --keep-going k
}

@test "inspect: -d --keep-going compares the operators it can read, names each subtask skipped, exit 1" {
	needs_fixtures
	unreadable_copy
	local a=$FIXTURES/flink-artifacts/$ART19-hashmap-savepoint
	# one value changed in an operator still read: its difference is found
	printf '\007' | dd of=k/19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5 bs=1 seek=532 conv=notrunc status=none
	bad 2 'ckpt-inspect: k/ca45bb7b-cd52-47f4-832a-b0e8b41ace12: cannot open the state file of operator 41e91aae0bee218c44306cf7d21940ad subtask 1: No such file or directory' \
		ckpt-inspect -d "$a" k
	run --separate-stderr ckpt-inspect -d --keep-going "$a" k
	status_is 1
	[ "$stderr" = "$SKIP1"$'\n'"$SKIP2" ]
	[ "$(jq -c '.state' <<<"$output")" = '{"d5c8b168c6cbfe8c507a10f88b325243":{"state-name":{"added":0,"removed":0,"changed":1,"key_groups":{"1":{"added":0,"removed":0,"changed":1}}}}}' ]
	# the operators not compared, named in the output too
	[ "$(jq -c '.not_compared' <<<"$output")" = '["41e91aae0bee218c44306cf7d21940ad","4b818c7923a927796d24b727201ba34d"]' ]
	run --separate-stderr ckpt-inspect -d -R --keep-going "$a" k
	status_is 1
	[ "$stderr" = "$SKIP1"$'\n'"$SKIP2" ]
	output_is '{"change":"changed","uid":null,"operator":"d5c8b168c6cbfe8c507a10f88b325243","state":"state-name","kind":"value","subtask":1,"key_group":1,"key":[3],"namespace":null,"old":3,"new":7}'
	# nothing else changed: the operators read are the same, and still exit 1 (some were not compared)
	printf '\003' | dd of=k/19a62fc9-3c41-4c6c-9e1a-17e75a55f0a5 bs=1 seek=532 conv=notrunc status=none
	run --separate-stderr ckpt-inspect -d --keep-going k "$a"
	status_is 1
	[ "$(jq -c '[.state, .not_compared]' <<<"$output")" = '[{},["41e91aae0bee218c44306cf7d21940ad","4b818c7923a927796d24b727201ba34d"]]' ]
	# nothing unreadable: no "not_compared"
	run ckpt-inspect -d --keep-going "$a" "$a"
	status_is 0
	[ "$(jq -c 'has("not_compared")' <<<"$output")" = false ]
}
