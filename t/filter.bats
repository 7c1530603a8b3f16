#!/usr/bin/env bats
# ckpt-inspect -k KEY, --state NAME and -u UID on Flink snapshots: what they narrow the reading to
# (one key group's bytes, one state, one operator's files), checked against the full read, and
# their errors.

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper

ART() {
	echo "$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink$1-$2"
}

# The full read's rows whose key is $2 (JSON), and -k's rows, each sorted, compared as JSON by
# python (jq would round the timers' 64-bit values).
same_rows() {
	ckpt-inspect -R "$1" >all
	run ckpt-inspect -R -k "$2" "$1"
	status_is 0
	printf '%s\n' "$output" >got
	python3 - "$2" <<'PY'
import json, sys
key = json.loads(sys.argv[1])
want = sorted(l for l in open("all").read().splitlines() if l and json.loads(l).get("key", None) == key)
got = sorted(l for l in open("got").read().splitlines() if l)
if want != got or not want:
    print("want", len(want), "got", len(got)); sys.exit(1)
PY
}

# A savepoint sp/ of one operator with operator state (op) and a canonical keyed state "count" of
# Integer keys (kv) holding N keys (default 4000), key k -> value k * 3, every key group
# non-empty: written by python from the header kv_file writes, with Flink's murmur hash.
big_sp() {
	mkdir -p sp
	op_file sp/op
	kv_file sp/kv
	python3 - "${1:-4000}" "${KV_OFF[0]}" sp/kv >offs <<'PY'
import struct, sys
n, hdr, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
M = 0xffffffff
def rotl(x, r): return ((x << r) | (x >> (32 - r))) & M
def murmur(code):
    code = (code * 0xcc9e2d51) & M; code = rotl(code, 15); code = (code * 0x1b873593) & M
    code = rotl(code, 13); code = (code * 5 + 0xe6546b64) & M; code ^= 4
    code ^= code >> 16; code = (code * 0x85ebca6b) & M; code ^= code >> 13
    code = (code * 0xc2b2ae35) & M; code ^= code >> 16
    s = code - (1 << 32) if code & 0x80000000 else code
    return s if s >= 0 else (-s if s != -(1 << 31) else 0)
groups = {}
for k in range(n):
    groups.setdefault(murmur(k) % 128, []).append(k)
data = bytearray(open(path, "rb").read()[:hdr])
kgs, offs = [], []
for kg in sorted(groups):
    kgs.append(kg); offs.append(len(data))
    data += struct.pack(">h", 0)
    for i, k in enumerate(groups[kg]):
        last = i == len(groups[kg]) - 1
        data += struct.pack(">iBiBiq", 6, kg | (0x80 if last else 0), k, 0, 8, k * 3)
    data += struct.pack(">h", -1)
open(path, "wb").write(data)
print(" ".join(map(str, kgs))); print(" ".join(map(str, offs)))
PY
	KV_KGS=$(sed -n 1p offs)
	KV_OFF=($(sed -n 2p offs))
	(cd sp && meta_file "rel op" "rel kv" .)
}

@test "filter: -k of every key of the fixtures' canonical, heap and RocksDB forms gives the full read's rows of that key" {
	needs_fixtures
	for f in hashmap-savepoint hashmap-savepoint-native rocksdb-savepoint rocksdb-checkpoint rocksdb-savepoint-native; do
		for k in '[0]' '[1]' '[2]' '[3]'; do
			same_rows "$(ART 1.19 $f)" "$k"
		done
	done
	same_rows "$(ART 1.17 rocksdb-checkpoint)" '[2]'
}

@test "filter: -k of keys of the complex-keyed fixtures (strings, tuples) gives the full read's rows" {
	needs_fixtures
	cd "$FIXTURES/flink-savepoints"
	for d in v3-flink1.12-complexkeyed-savepoint v4-flink1.20-complexkeyed-savepoint; do
		for k in $(ckpt-inspect -R $d | jq -c 'select(.key != null and .untyped == null) | .key' | sort -u | head -4); do
			cd "$BATS_TEST_TMPDIR"
			same_rows "$FIXTURES/flink-savepoints/$d" "$k"
			cd "$FIXTURES/flink-savepoints"
		done
	done
}

@test "filter: a key never written: no rows, exit 0" {
	needs_fixtures
	for f in hashmap-savepoint rocksdb-checkpoint; do
		run --separate-stderr ckpt-inspect -R -k '[12345]' "$(ART 1.19 $f)"
		status_is 0
		[ -z "$output" ] && [ -z "$stderr" ]
	done
}

@test "filter: -k on the synthetic savepoint: its key's row alone, in -R, -a and the summary" {
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	run ckpt-inspect -R -k 1 sp
	status_is 0
	output_is '{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"count","kind":"value","subtask":0,"key_group":86,"key":1,"namespace":null,"value":8}'
	run ckpt-inspect -a -k 42 sp
	status_is 0
	[ "$(jq -c '[.operators[].subtasks[].keyed_state.entries[] | [.key_group, .key, .value]]' <<<"$output")" = '[[29,42,7]]' ]
	run ckpt-inspect -k 0 sp
	status_is 0
	[ "$(jq -c '.operators[0].flink_state.states[] | select(.name == "count") | .entries' <<<"$output")" = 1 ]
	run --separate-stderr ckpt-inspect -R -k 7 sp
	status_is 0
	[ -z "$output" ]
}

@test "filter: -k that is not JSON, or does not fit the key serializer: exit 2 naming both, nothing on stdout" {
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	bad 2 "ckpt-inspect: -k user-7: not JSON (a key is JSON: 42, '\"user-7\"', [1, \"a\"]): invalid token near 'user' (see ckpt-inspect -h)" \
		ckpt-inspect -R -k user-7 sp
	bad 2 'ckpt-inspect: sp/_metadata: operator 0102030405060708090a0b0c0d0e0f10: -k "user-7" does not match the key serializer IntSerializer: expected an integer from -2147483648 to 2147483647 (an int)' \
		ckpt-inspect -R -k '"user-7"' sp
	bad 2 'ckpt-inspect: sp/_metadata: operator 0102030405060708090a0b0c0d0e0f10: -k 2147483648 does not match the key serializer IntSerializer: expected an integer from -2147483648 to 2147483647 (an int)' \
		ckpt-inspect -a -k 2147483648 sp
	bad 2 'ckpt-inspect: sp/_metadata: operator 0102030405060708090a0b0c0d0e0f10: -k [1] does not match the key serializer IntSerializer: expected an integer from -2147483648 to 2147483647 (an int)' \
		ckpt-inspect -k '[1]' sp
}

@test "filter: a key serializer ckpt cannot write (Kryo) is refused, naming it" {
	needs_fixtures
	d=$FIXTURES/flink-artifacts/stateful-scala-udf-migration-itcase-flink1.19-hashmap-savepoint
	[ -d "$d" ] || skip "no $d"
	run --separate-stderr ckpt-inspect -R -k 1 "$d"
	status_is 2
	[ -z "$output" ]
	[[ $stderr == *"-k 1: ckpt cannot compute the key group of a key of the key serializer "*Kryo* ]]
}

@test "filter: -k on a snapshot that is not Flink's, or with -c, -m: refused" {
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	bad 2 'ckpt-inspect: -k goes with the summary, -a, -R and -d, not with -c (see ckpt-inspect -h)' ckpt-inspect -c -k 1 sp
	bad 2 'ckpt-inspect: --state goes with the summary, -a, -R and -d, not with -c (see ckpt-inspect -h)' \
		ckpt-inspect -c --state count sp
	bad 2 "ckpt-inspect: sp: -k narrows the reading of a Flink snapshot's state files, and this is a _metadata read alone (-m)" \
		ckpt-inspect -m -k 1 sp
	bad 2 "ckpt-inspect: $ROOT/examples/state.json: --state narrows the reading of a Flink snapshot's state files, and this is not a Flink snapshot" \
		ckpt-inspect -R --state count "$ROOT/examples/state.json"
}

@test "filter: --state and -u select; an operator not selected has its files left unopened" {
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	run ckpt-inspect -R --state names sp
	status_is 0
	[ "$(jq -c '[.state, .value]' <<<"$output" | tr -d '\n')" = '["names","a"]["names","bc"]' ]
	run ckpt-inspect -R --state count -k 0 sp
	status_is 0
	[ "$(jq -c '[.state, .key]' <<<"$output")" = '["count",0]' ]
	run ckpt-inspect --state names sp
	status_is 0
	[ "$(jq -c '[.operators[0].flink_state.states[] | [.name, .entries]]' <<<"$output")" = '[["names",2]]' ]
	run ckpt-inspect --state count -k 42 sp
	status_is 0
	[ "$(jq -c '[.operators[0].flink_state.states[] | [.name, .entries, (.key_groups | keys)]]' <<<"$output")" = '[["count",1,["29"]]]' ]
	run ckpt-inspect -R -u 0102030405060708090a0b0c0d0e0f10 sp
	status_is 0
	[ "$(wc -l <<<"$output")" -eq 5 ]
	rm sp/kv sp/op # not opened when not selected
	run --separate-stderr ckpt-inspect -R -u other sp
	status_is 0
	[ -z "$output" ]
	run --separate-stderr ckpt-inspect -v -a -u other sp
	status_is 0
	[ "$stderr" = 'ckpt-inspect: sp: 0 bytes of state files read' ]
}

@test "filter: --state naming no state: exit 2, naming it and the states there are, as -u names its uid" {
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	bad 2 'ckpt-inspect: sp: --state "nothing" names no state (the states: count, names)' ckpt-inspect -R --state nothing sp
	bad 2 'ckpt-inspect: sp: --state "nothing" names no state (the states: count, names)' ckpt-inspect --state nothing sp
	bad 2 'ckpt-inspect: sp: --state "Count" names no state (the states: count)' ckpt-inspect -R -k 0 --state Count sp # -k reads keyed state alone
	run --separate-stderr ckpt-inspect -a --state nothing sp
	status_is 2
	[ "$stderr" = 'ckpt-inspect: sp: --state "nothing" names no state (the states: count, names)' ]
	# a state of another operator than -u's: not there either
	run --separate-stderr ckpt-inspect -R -u other --state count sp
	status_is 0
	[ -z "$output" ]
}

@test "filter: --state naming no state of a Flink job's fixture, RocksDB and heap alike" {
	needs_fixtures
	for d in "$(ART 1.19 rocksdb-checkpoint)" "$(ART 1.19 hashmap-savepoint)"; do
		run --separate-stderr ckpt-inspect -R --state state-nam "$d"
		status_is 2
		[ -z "$output" ]
		[[ $stderr == "ckpt-inspect: $d: --state \"state-nam\" names no state (the states: "*"state-name"* ]] || { echo "$stderr"; return 1; }
	done
}

@test "filter: --uid and --state on the fixtures equal the full read's rows of that operator and state" {
	needs_fixtures
	d=$(ART 1.19 rocksdb-checkpoint)
	ckpt-inspect -R "$d" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["operator"] == "41e91aae0bee218c44306cf7d21940ad" and o["state"] == "state-name": print(l, end="")' | sort >want
	run ckpt-inspect -R --uid 41e91aae0bee218c44306cf7d21940ad --state state-name "$d"
	status_is 0
	[ "$(wc -l <want)" -eq 4 ]
	[ "$(sort <<<"$output")" = "$(cat want)" ]
}

# of_state S FILE: FILE's rows whose state is S, as they are (byte for byte): NDJSON rows hold no tab.
of_state() {
	jq -r .state "$2" | paste -d '\t' - "$2" | awk -F '\t' -v s="$1" '$1 == s' | cut -f 2-
}

@test "filter: --state on RocksDB (its column family alone read) gives -R's rows of that state byte for byte, -k --state those of -k, in every RocksDB form of the fixtures" {
	needs_fixtures
	m=0 n=0
	# every fixture of RocksDB handles with its files (1.15's RocksDB checkpoints are full snapshots)
	for d in "$FIXTURES"/flink-artifacts/*-flink1.1[79]-rocksdb-{checkpoint,savepoint-native}; do
		[ -f "$d/_metadata" ]
		ckpt-inspect -R "$d" >all
		jq -r .state all | sort -u >states
		while read -r s; do
			of_state "$s" all >want
			ckpt-inspect -R --state "$s" "$d" >got
			cmp want got || { echo "$d: --state $s"; return 1; }
			[ -s got ] && m=$((m + 1))
			k=$(jq -c --arg s "$s" 'select(.state == $s and has("key")) | .key' all | head -1)
			[ -n "$k" ] && [[ $k != *kryo_class* ]] || continue # Kryo: -k refused (no hashCode)
			ckpt-inspect -R -k "$k" "$d" >allk
			of_state "$s" allk >want
			ckpt-inspect -R -k "$k" --state "$s" "$d" >got
			cmp want got || { echo "$d: -k $k --state $s"; return 1; }
			[ -s got ] && n=$((n + 1))
		done <states
	done
	[ "$m" -eq 128 ] && [ "$n" -eq 12 ] # states with rows, and -k keys with rows of a state
	d=$(ART 1.19 rocksdb-savepoint-native)
	bad 2 "ckpt-inspect: $d: --state \"nosuch\" names no state (the states: _timer_state/event_timer, _timer_state/processing_timer, source-state, state-name)" \
		ckpt-inspect -R --state nosuch "$d"
	bad 2 "ckpt-inspect: $d: --state \"nosuch\" names no state (the states: _timer_state/event_timer, _timer_state/processing_timer, state-name)" \
		ckpt-inspect -R -k '[3]' --state nosuch "$d"
}

@test "filter: --state on RocksDB opens no other state's table files: their damage is not read, fewer bytes are; its own is named" {
	needs_fixtures
	# 08aafd2d... is 000016.sst of operator 41e91aae... subtask 1, of column family "state-name"
	sst=08aafd2d-e900-4956-b8f7-e45241cef160
	d=$(ART 1.17 rocksdb-checkpoint)
	ckpt-inspect -R --state _timer_state/event_timer "$d" >want
	[ "$(wc -l <want)" -eq 8 ]
	for at in 20 982; do # a data block's byte, the footer's magic number
		rm -rf ck && cp -r "$d" ck
		flip ck/$sst $at
		run --separate-stderr ckpt-inspect -R --state _timer_state/event_timer ck
		status_is 0
		match_golden want
		run --separate-stderr ckpt-inspect -R -k '[3]' --state _timer_state/event_timer ck
		status_is 0
	done
	run --separate-stderr ckpt-inspect -R --state state-name ck
	status_is 2
	[ "$stderr" = "ckpt-inspect: ck/$sst: cannot open: rocksdb: Corruption: Bad table magic number: expected 9863518390377041911, found 9935575984414969847 in 000016.sst in file MANIFEST-000004" ]
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 # LeakSanitizer does not run under ptrace
	sum() { awk -F'= ' '/(read|pread64)\(/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$1"; }
	strace -f -o all.txt -e trace=read,pread64 ckpt-inspect -R "$d" >/dev/null
	strace -f -o one.txt -e trace=read,pread64 ckpt-inspect -R --state _timer_state/event_timer "$d" >/dev/null
	[ "$(sum one.txt)" -lt "$(sum all.txt)" ]
}

# kg_of KEY: the key group of the Integer KEY at max parallelism 128 (Flink's murmur hash).
kg_of() {
	python3 -c '
import sys
M = 0xffffffff
def rotl(x, r): return ((x << r) | (x >> (32 - r))) & M
c = int(sys.argv[1]) & M
c = (c * 0xcc9e2d51) & M; c = rotl(c, 15); c = (c * 0x1b873593) & M; c = rotl(c, 13); c = (c * 5 + 0xe6546b64) & M
c ^= 4; c ^= c >> 16; c = (c * 0x85ebca6b) & M; c ^= c >> 13; c = (c * 0xc2b2ae35) & M; c ^= c >> 16
s = c - (1 << 32) if c & 0x80000000 else c
print((s if s >= 0 else (-s if s != -(1 << 31) else 0)) % 128)' "$1"
}

# flip_at OFFSET: one byte of sp/kv at OFFSET made 0x7f (a key length no entry has).
flip_at() {
	printf '\x7f' | dd of=sp/kv bs=1 seek="$1" conv=notrunc status=none
}

@test "filter: -k reads its key group's bytes alone: damage in another key group is not read, in its own it is named" {
	big_sp 200000
	size=$(wc -c <sp/kv)
	ckpt-inspect -v -R sp >all 2>err
	[ "$(wc -l <all)" -eq 200002 ]
	all=$(sed 's/.*: \([0-9]*\) bytes.*/\1/' err)
	[ "$all" -ge "$size" ]
	run --separate-stderr ckpt-inspect -v -R -k 1234 sp
	status_is 0
	kg=$(kg_of 1234)
	output_is '{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"count","kind":"value","subtask":0,"key_group":'"$kg"',"key":1234,"namespace":null,"value":3702}'
	one=$(sed 's/.*: \([0-9]*\) bytes.*/\1/' <<<"$stderr")
	# the header's window and the key group's, for the check and the print: under a tenth
	[ "$one" -lt $((size / 10)) ]
	# a key length made wrong in key group kg + 1 (its first entry's, after the state id): the
	# full read stops there (-R reads once: the rows of the key groups before it out, whole), -k 1234
	# never reads it
	other=$(((kg + 1) % 128))
	flip_at $((KV_OFF[other] + 2 + 3))
	run --separate-stderr ckpt-inspect -R sp
	status_is 2
	n=$(grep -n -m1 "\"key_group\":$other," all | cut -d: -f1)
	[ "$n" -gt 3 ]
	[ "$output" = "$(head -n $((n - 1)) all)" ]
	[[ $stderr == "ckpt-inspect: sp/kv: offset "* ]]
	run --separate-stderr ckpt-inspect -R -k 1234 sp
	status_is 0
	[ "$(jq .key <<<"$output")" = 1234 ]
	# the same in its own key group: named, nothing printed
	flip_at $((KV_OFF[kg] + 2 + 3))
	run --separate-stderr ckpt-inspect -R -k 1234 sp
	status_is 2
	[ -z "$output" ]
	[[ $stderr == "ckpt-inspect: sp/kv: offset "* ]]
}

@test "filter: a state file cut short: -k exits 2 naming it, nothing on stdout" {
	mkdir sp && (cd sp && op_file op && kv_file kv && meta_file "rel op" "rel kv" .)
	truncate -s 420 sp/kv
	bad 2 'ckpt-inspect: sp/kv: short: 420 bytes, the _metadata records 443' ckpt-inspect -R -k 0 sp
}

@test "filter: -k on a RocksDB checkpoint reads its key group's prefix: the same rows, with strace counting what is read" {
	needs_fixtures
	strace -o /dev/null true 2>/dev/null || skip "strace cannot trace here"
	d=$(ART 1.19 rocksdb-checkpoint)
	same_rows "$d" '[1]'
	# LeakSanitizer does not run under ptrace
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	strace -f -o all.txt -e trace=read,pread64 ckpt-inspect -R "$d" >/dev/null
	strace -f -o one.txt -e trace=read,pread64 ckpt-inspect -R -k '[1]' "$d" >/dev/null
	sum() { awk -F'= ' '/(read|pread64)\(/ && $NF ~ /^[0-9]+$/ { s += $NF } END { print s + 0 }' "$1"; }
	[ "$(sum one.txt)" -lt "$(sum all.txt)" ]
}

@test "filter: the -k example of ckpt-inspect(1) runs and gives its key's row" {
	needs_fixtures
	cd "$FIXTURES/flink-artifacts"
	run --separate-stderr ckpt-inspect -v -R -u 41e91aae0bee218c44306cf7d21940ad --state state-name \
		-k '[3]' new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint
	status_is 0
	output_is '{"uid":null,"operator":"41e91aae0bee218c44306cf7d21940ad","state":"state-name","kind":"value","subtask":1,"key_group":1,"key":[3],"namespace":3,"value":3}'
	[[ $stderr =~ ^ckpt-inspect:\ new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint:\ [0-9]+\ bytes\ of\ state\ files\ read\ from\ new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint$ ]]
	grep -q "k '\[3\]' new-stateful-udf-migration-itcase-flink1.19-rocksdb-checkpoint" "$ROOT/man/ckpt-inspect.1"
}
