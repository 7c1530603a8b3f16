#!/usr/bin/env bats
# ckpt-merge --rows (issue 40 section 3) on values of the encoders beyond mergerows.bats's: POJO
# subclasses (by tag and by name), on t/flinkavro-helper.bash's synthetic state made canonical.
# A changed value reads back changed (-R), the savepoint checks (-c); what ckpt still cannot
# write is refused naming it.  Flink restoring such edits: t/flink/rows.bats.

bats_require_minimum_version 1.5.0
load helper
load flinkavro-helper

# canon: flinkavro's states as a canonical savepoint sp (sv_dir writes a heap savepoint), its
# rows in rows.
canon() {
	sv_dir "$STATES"
	ckpt-merge --canonical -o can/ sp
	rm -rf sp
	mv can sp
	ckpt-inspect -R sp >rows
}

# edit JQ: the rows edited by the jq filter JQ written into out/, which checks; the rows of out
# that differ from sp's, as {STATE: VALUE}.
edit() {
	jq -c "$1" rows >edited
	ckpt-merge --rows edited -o out/ sp
	ckpt-inspect -c out >/dev/null
	ckpt-inspect -R out | diff rows - | sed -n 's/^> //p' | jq -c '{(.state): .value}'
}

@test "mergeenc: POJO subclasses written by their tag (registered) and by their name (cached)" {
	canon
	run edit 'if .state == "sub" then .value.value.extra = 5
		elif .state == "cached" then .value.value.c = 12
		elif .state == "base" then .value = {subclass: "x.Cached", tag: null, value: {c: 99}}
		elif .state == "nulls" then .value = {subclass: "x.Sub", tag: 0, value: {extra: null, name: "t"}}
		else . end'
	status_is 0
	output_is '{"base":{"subclass":"x.Cached","tag":null,"value":{"c":99}}}
{"nulls":{"subclass":"x.Sub","tag":0,"value":{"extra":null,"name":"t"}}}
{"sub":{"subclass":"x.Sub","tag":0,"value":{"extra":5,"name":"s"}}}
{"cached":{"subclass":"x.Cached","tag":null,"value":{"c":12}}}'
	# and back to the class itself
	rm -rf out
	run edit 'if .state == "sub" then .value = {name: "n", inner: {n: 1}, gone: null} else . end'
	status_is 0
	output_is '{"sub":{"name":"n","inner":{"n":1},"gone":null}}'
}

@test "mergeenc: a POJO subclass the snapshot has no serializer of, or with another tag, is a bad row" {
	canon
	local e='state sub: the value does not fit its serializer PojoSerializer: expected'
	jq -c 'if .state == "sub" then .value.subclass = "x.Other" else . end' rows >r
	bad 2 "ckpt-merge: r:7: $e a subclass the snapshot holds a serializer of (registered or cached)" \
		ckpt-merge --rows r -o out/ sp
	jq -c 'if .state == "sub" then .value.tag = 1 else . end' rows >r
	bad 2 "ckpt-merge: r:7: $e the tag of subclass x.Sub: 0" ckpt-merge --rows r -o out/ sp
	jq -c 'if .state == "sub" then .value.subclass = "x.Cached" else . end' rows >r
	bad 2 "ckpt-merge: r:7: $e the tag of subclass x.Cached: null (not registered)" ckpt-merge --rows r -o out/ sp
	[ ! -e out ]
}
