#!/usr/bin/env bats
# ckpt-state(5): the loader's errors, each located at the value at fault.

load helper

# bad_op OPERATORS LINE: ckpt-inspect refuses a one-line state document of these operators (JSON):
# exit 2, exactly LINE on stderr, nothing on stdout.
bad_op() {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"checkpoint","operators":[%s]}\n' "$1" > s.json
	bad 2 "$2" ckpt-inspect s.json
}

OP='"id":"map","parallelism":2,"max_parallelism":8'

@test "state: the normal form reads back to itself, from a file and stdin" {
	run ckpt-inspect -a "$DATA/state/normal.json"
	status_is 0
	output_is "$(cat "$DATA/state/normal.json")"
	run sh -c 'ckpt-inspect -a < "$1"' sh "$DATA/state/normal.json"
	output_is "$(cat "$DATA/state/normal.json")"
}

@test "state: not a state document" {
	echo '{"format":"ckpt-graph"}' > s.json
	bad 2 'ckpt-inspect: s.json:1:11: not a state document: "format" must be "ckpt-state"' ckpt-inspect s.json
	echo '{"format":"ckpt-state","version":2}' > s.json
	bad 2 'ckpt-inspect: s.json:1:34: state document: unsupported version 2 (this is version 1)' ckpt-inspect s.json
	echo '{"format":"ckpt-state","version":1,"checkpoint_id":-1}' > s.json
	bad 2 'ckpt-inspect: s.json:1:52: state document: checkpoint_id -1 out of range (0 to 9223372036854775807)' ckpt-inspect s.json
	echo '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"snapshot","operators":[]}' > s.json
	bad 2 'ckpt-inspect: s.json:1:61: state document: "kind" must be "checkpoint", "savepoint" or null' ckpt-inspect s.json
	echo '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"checkpoint","operators":[],"extra":1}' > s.json
	bad 2 'ckpt-inspect: s.json:1:97: state document: unknown key "extra"' ckpt-inspect s.json
}

@test "state: operators: duplicate id, duplicate uid, parallelism above max parallelism" {
	bad_op "{$OP},{$OP}" 'ckpt-inspect: s.json:1:142: operator 1: duplicate operator "map"'
	bad_op '{"id":"a","uid":"u","parallelism":1,"max_parallelism":1},{"id":"b","uid":"u","parallelism":1,"max_parallelism":1}' 'ckpt-inspect: s.json:1:160: operator "b": uid "u" is also operator "a"'"'"'s'
	bad_op '{"id":"a","parallelism":200,"max_parallelism":128}' 'ckpt-inspect: s.json:1:111: operator "a": parallelism 200 exceeds max parallelism 128'
	bad_op '{"id":"a","parallelism":1,"max_parallelism":40000}' 'ckpt-inspect: s.json:1:131: operator "a": max_parallelism 40000 out of range (1 to 32768)'
	bad_op '{"parallelism":1}' 'ckpt-inspect: s.json:1:87: operator 0: missing "id"'
}

@test "state: subtasks: index out of range, twice, out of order" {
	bad_op "{$OP,\"subtasks\":[{\"index\":2}]}" 'ckpt-inspect: s.json:1:156: operator "map": subtask 0: index 2 out of range (0 to 1)'
	bad_op "{$OP,\"subtasks\":[{\"index\":1},{\"index\":1}]}" 'ckpt-inspect: s.json:1:168: operator "map": subtask 1: index 1 appears twice'
	bad_op "{$OP,\"subtasks\":[{\"index\":1},{\"index\":0}]}" 'ckpt-inspect: s.json:1:168: operator "map": subtask 1: index 0 out of order (subtasks go by ascending index)'
}

@test "state: finished subtasks hold nothing; fully finished operators have only finished subtasks" {
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"finished\":true,\"operator_state\":{\"s\":{\"mode\":\"list\",\"entries\":[\"x\"]}}}]}" 'ckpt-inspect: s.json:1:196: operator "map": subtask 0: finished, but holds 1 entry of list state "s"'
	bad_op "{$OP,\"fully_finished\":true,\"subtasks\":[{\"index\":0}]}" 'ckpt-inspect: s.json:1:169: operator "map": subtask 0: not finished in a fully finished operator'
}

# A document where subtask 0 of "map" is running with key groups 0-3 and subtask 1 finished with the
# members $1 (the containers a user or jq left in it).
finished_doc() {
	printf '{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"checkpoint","operators":[{%s,"subtasks":[{"index":0,"keyed_state":{"key_groups":"0-3","entries":[]}},{"index":1,"finished":true,%s}]}]}\n' "$OP" "$1"
}

# ckpt-inspect -a of the document made of $1, from a file and from stdin: exit status $2, stdout $3, stderr $4
# (the file's name in $4 is FILE, <stdin> for stdin).
inspect_both() {
	finished_doc "$1" > s.json
	run --separate-stderr ckpt-inspect -a s.json
	status_is "$2"
	output_is "$3"
	[ "$stderr" = "${4//FILE/s.json}" ] || { echo "stderr: $stderr"; return 1; }
	run --separate-stderr sh -c 'ckpt-inspect -a < s.json'
	status_is "$2"
	output_is "$3"
	[ "$stderr" = "${4//FILE/<stdin>}" ] || { echo "stderr: $stderr"; return 1; }
}

@test "state: a finished subtask's empty containers hold nothing: accepted, and dropped on output" {
	bats_require_minimum_version 1.5.0
	want='{"format":"ckpt-state","version":1,"checkpoint_id":1,"kind":"checkpoint","operators":[{"id":"map","uid":null,"name":null,"vertex":null,"parallelism":2,"max_parallelism":8,"fully_finished":false,"coordinator":null,"subtasks":[{"index":0,"finished":false,"operator_state":{},"keyed_state":{"key_groups":"0-3","entries":[]}},{"index":1,"finished":true}]}]}'
	# keyed state: its key groups hold nothing, so they may overlap the running subtask's
	inspect_both '"keyed_state":{"key_groups":"2-5","entries":[]}' 0 "$want" ''
	inspect_both '"keyed_state":{"key_groups":"4-7"}' 0 "$want" ''
	# list, union and broadcast state, and empty operator_state
	inspect_both '"operator_state":{"L":{"mode":"list","entries":[]}}' 0 "$want" ''
	inspect_both '"operator_state":{"U":{"mode":"union","entries":[]}}' 0 "$want" ''
	inspect_both '"operator_state":{"B":{"mode":"broadcast"}}' 0 "$want" ''
	inspect_both '"operator_state":{}' 0 "$want" ''
	# channel state
	inspect_both '"channel_state":{"input":[],"output":[]}' 0 "$want" ''
	inspect_both '"channel_state":{}' 0 "$want" ''
	# all of them at once, and packed into an archive
	all='"operator_state":{"L":{"mode":"list","entries":[]},"B":{"mode":"broadcast","entries":[]}},"keyed_state":{"key_groups":"0-7","entries":[]},"channel_state":{"input":[]}'
	inspect_both "$all" 0 "$want" ''
	finished_doc "$all" | ckpt-merge -o x.tar
	run ckpt-inspect -a x.tar
	status_is 0
	output_is "$want"
}

@test "state: a finished subtask holding entries is refused, naming the first thing it holds" {
	bats_require_minimum_version 1.5.0
	inspect_both '"operator_state":{"E":{"mode":"list","entries":[]},"L":{"mode":"list","entries":["a","b","c"]}}' 2 '' \
		'ckpt-inspect: FILE:1:289: operator "map": subtask 1: finished, but holds 3 entries of list state "L"'
	inspect_both '"operator_state":{"U":{"mode":"union","entries":["a"]}}' 2 '' \
		'ckpt-inspect: FILE:1:256: operator "map": subtask 1: finished, but holds 1 entry of union state "U"'
	inspect_both '"operator_state":{"B":{"mode":"broadcast","entries":["a","b"]}}' 2 '' \
		'ckpt-inspect: FILE:1:256: operator "map": subtask 1: finished, but holds 2 entries of broadcast state "B"'
	inspect_both '"keyed_state":{"key_groups":"4-7","entries":[{"state":"count","key_group":4,"key":"k","value":"1"},{"state":"sum","key_group":5,"key":"k","value":"2"},{"state":"count","key_group":6,"key":"j","value":"3"}]}' 2 '' \
		'ckpt-inspect: FILE:1:248: operator "map": subtask 1: finished, but holds 2 entries of keyed state "count"'
	inspect_both '"channel_state":{"input":[{"gate":0,"channel":1,"data":"x"}],"output":[]}' 2 '' \
		'ckpt-inspect: FILE:1:259: operator "map": subtask 1: finished, but holds 1 entry of input channel state'
	inspect_both '"channel_state":{"output":[{"partition":0,"subpartition":1,"data":"x"},{"partition":0,"subpartition":0,"data":"y"}]}' 2 '' \
		'ckpt-inspect: FILE:1:260: operator "map": subtask 1: finished, but holds 2 entries of output channel state'
}

@test "state: operator state: unknown mode, mode differing between subtasks, bad entries" {
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"operator_state\":{\"s\":{\"mode\":\"lst\"}}}]}" 'ckpt-inspect: s.json:1:188: operator "map": subtask 0: state "s": unknown mode "lst" (list, union or broadcast)'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"operator_state\":{\"s\":{\"mode\":\"list\"}}},{\"index\":1,\"operator_state\":{\"s\":{\"mode\":\"union\"}}}]}" 'ckpt-inspect: s.json:1:239: operator "map": subtask 1: state "s": mode union differs from list in an earlier subtask'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"operator_state\":{\"s\":{\"mode\":\"list\",\"entries\":[\"a\",{\"base64\":\"!!\"}]}}}]}" 'ckpt-inspect: s.json:1:210: operator "map": subtask 0: state "s": entry 1: bad base64 in entry'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"operator_state\":{\"s\":{\"mode\":\"list\",\"entries\":[7]}}}]}" 'ckpt-inspect: s.json:1:206: operator "map": subtask 0: state "s": entry 0: an entry must be a string or {"base64": "..."}'
}

@test "state: keyed state: key groups outside max parallelism, overlapping, not contiguous; entries outside" {
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"keyed_state\":{\"key_groups\":\"0-8\"}}]}" 'ckpt-inspect: s.json:1:186: operator "map": subtask 0: key_groups must be a range within 0-7 (max parallelism 8)'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"keyed_state\":{\"key_groups\":\"0-4\"}},{\"index\":1,\"keyed_state\":{\"key_groups\":\"4-7\"}}]}" 'ckpt-inspect: s.json:1:233: operator "map": subtask 1: key groups 4-7 overlap another subtask'"'"'s'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"keyed_state\":{\"key_groups\":\"0-1,3\"}}]}" 'ckpt-inspect: s.json:1:186: operator "map": subtask 0: key_groups is not one contiguous range'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"keyed_state\":{\"key_groups\":\"0-3\",\"entries\":[{\"state\":\"c\",\"key_group\":4,\"key\":\"k\",\"value\":\"v\"}]}}]}" 'ckpt-inspect: s.json:1:228: operator "map": subtask 0: keyed entry 0: key group 4 outside the subtask'"'"'s 0-3'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"keyed_state\":{\"key_groups\":\"0-3\",\"entries\":[{\"state\":\"c\",\"key_group\":1,\"key\":\"k\"}]}}]}" 'ckpt-inspect: s.json:1:203: operator "map": subtask 0: keyed entry 0: needs "key" and "value"'
}

@test "state: channel state: unknown keys and missing data" {
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"channel_state\":{\"input\":[{\"gate\":0,\"channel\":1}]}}]}" 'ckpt-inspect: s.json:1:184: operator "map": subtask 0: input 0: missing "data"'
	bad_op "{$OP,\"subtasks\":[{\"index\":0,\"channel_state\":{\"output\":[{\"gate\":0,\"channel\":1,\"data\":\"\"}]}}]}" 'ckpt-inspect: s.json:1:193: operator "map": subtask 0: output 0: unknown key "gate"'
}

@test "state: truncated and empty input" {
	bad 2 "ckpt-inspect: <stdin>:1:11: unexpected token near end of file" sh -c 'printf "{\"format\":" | ckpt-inspect'
	bad 2 'ckpt-inspect: <stdin>: empty input' sh -c 'ckpt-inspect < /dev/null'
}
