#!/usr/bin/env bats
# ckpt-inspect --raw -a against real Flink: the typed entries it reads from the state of every
# checkpoint and savepoint the harness had Flink write (build/flink/VERSION/, `make
# flink-fixtures`) equal what the job put in state (the sidecar's "contents") and, for the
# canonical savepoints, what Flink's State Processor API read back (its "spa"), leaf by leaf.  Of
# RocksDB native and incremental snapshots ckpt reads the keyed state inside the SST files too
# (ckpt-flink(5), ROCKSDB), and lists those files: the listing equals the handles Flink loaded.
# The unaligned checkpoint's contents are not fixed: its state decodes to its end.

bats_require_minimum_version 1.5.0 # run --separate-stderr
load helper

# The artifacts by what is compared: contents (and spa where the sidecar has it); contents and
# the SST listing; decoding only.
FULL='savepoint-hashmap-canonical savepoint-hashmap-native savepoint-rocksdb-canonical
checkpoint-hashmap-aligned checkpoint-hashmap-finished checkpoint-hashmap-snappy checkpoint-union-partly-finished'
ROCKS='savepoint-rocksdb-native checkpoint-rocksdb-incremental-1 checkpoint-rocksdb-incremental-2'
DECODE='checkpoint-unaligned'
# The changelog backend's (Main.changelog): compared in the tests of their own below (over RocksDB:
# changelogrocks.bats).
CHANGELOG='checkpoint-changelog checkpoint-changelog-materialized checkpoint-changelog-rocksdb'

artifact_dir() {
	echo "$FLINK_OUT/$1/$(jq -r --arg n "$2" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$1/index.json")"
}

# compare_state VERSION ARTIFACT [SIDECAR [DIR]]: ckpt-inspect --raw -a of the artifact (or DIR) in the
# sidecar's shapes against the sidecar (or SIDECAR); each difference printed as
# "VERSION/ARTIFACT: FIELD: ckpt X, flink Y", status 1 when any.
compare_state() {
	local v=$1 a=$2 side=${3:-$FLINK_OUT/$1/sidecars/$2.json} dir=${4:-$(artifact_dir "$1" "$2")} bad=0
	${READ:-ckpt_state} "$dir" st.json || { echo "$v/$a: ckpt-inspect failed ($?)"; return 1; }
	jq -s --slurpfile S "$side" "$JQ_STATE" st.json >ckpt.json
	case " $ROCKS " in
	*" $a "*)
		# keyed state (of "keyed" and "ambig"): the contents read from the SSTs, and the files listed
		jq .contents "$side" >flink.json
		jq -s --slurpfile S "$side" "{sst: ($JQ_SST_CKPT)}" st.json >ckpt-sst.json
		jq "{sst: ($JQ_SST_FLINK)}" "$side" >flink-sst.json
		if [ -z "$READ" ]; then # the handles: in the document, not in rows
			[ "$(jq '.sst | length' flink-sst.json)" -gt 0 ] || { echo "$v/$a: the sidecar lists no RocksDB handle"; bad=1; }
			differ "$v/$a" ckpt-sst.json flink-sst.json || bad=1
		fi
		;;
	*) jq .contents "$side" >flink.json ;;
	esac
	[ "$(jq length flink.json)" -gt 0 ] || { echo "$v/$a: the sidecar's contents list nothing"; return 1; }
	differ "$v/$a" ckpt.json flink.json || bad=1
	if [ "$(jq 'has("spa")' "$side")" = true ]; then
		jq "{spa: ({contents: .} | $JQ_CONTENTS)}" ckpt.json >ckpt-spa.json
		jq '{spa}' "$side" >flink-spa.json
		differ "$v/$a" ckpt-spa.json flink-spa.json || bad=1
	fi
	return $bad
}

@test "flink state: every artifact of each line is compared or decoded here" {
	local v a n=0
	for v in $(flink_versions); do
		n=$((n + 1))
		for a in $(jq -r '.artifacts[].name' "$FLINK_OUT/$v/index.json"); do
			case " $(echo $FULL $ROCKS $DECODE $CHANGELOG) " in
			*" $a "*) ;;
			*) echo "$v/$a: an artifact state.bats does not know"; return 1 ;;
			esac
		done
		for a in $FULL $ROCKS $DECODE $CHANGELOG; do
			[ -f "$FLINK_OUT/$v/sidecars/$a.json" ] || { echo "$v/$a: no sidecar"; return 1; }
		done
		# compare_state compares "spa" where the sidecar has it: the canonical savepoints
		for a in savepoint-hashmap-canonical savepoint-rocksdb-canonical; do
			[ "$(jq '.spa | length' "$FLINK_OUT/$v/sidecars/$a.json")" -gt 0 ] || { echo "$v/$a: no spa"; return 1; }
		done
	done
	[ "$n" -eq 2 ] || { echo "expected the artifacts of 2 Flink lines under $FLINK_OUT, found $n"; return 1; }
}

@test "flink state: ckpt-inspect --raw -a reads what the job put in state and what the State Processor API read back" {
	local v a bad=0 n=0
	for v in $(flink_versions); do
		for a in $FULL $ROCKS; do
			n=$((n + 1))
			compare_state "$v" "$a" || bad=1
		done
	done
	[ "$n" -eq 20 ] || { echo "expected 10 artifacts of each of 2 Flink lines, compared $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

@test "flink state: ckpt-inspect -R: the rows of every artifact are what the job put in state and the State Processor API read back" {
	local v a bad=0 n=0
	for v in $(flink_versions); do
		for a in $FULL $ROCKS; do
			n=$((n + 1))
			READ=ckpt_rows compare_state "$v" "$a" || bad=1
		done
	done
	[ "$n" -eq 20 ] || { echo "expected 10 artifacts of each of 2 Flink lines, compared $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

@test "flink state: every artifact's state decodes to its end (the unaligned checkpoint's too), every entry typed, every file whole (-c)" {
	local v a dir bad=0
	for v in $(flink_versions); do
		for a in $FULL $ROCKS $DECODE; do
			dir=$(artifact_dir "$v" "$a")
			run --separate-stderr ckpt-inspect --raw -a "$dir"
			if [ "$status" -ne 0 ] || [ -n "$stderr" ]; then
				echo "$v/$a: -a: status $status: $stderr"
				bad=1
				continue
			fi
			# null where an element or entry was not decoded (ckpt-state(5))
			u=$(jq '[.operators[].subtasks[] | (.operator_state // {} | .[] | select((.entries | length) > 0)
				| if (.typed | type) == "array" then .typed[] else null end),
				(.keyed_state.entries // [] | .[].typed)] | map(select(. == null)) | length' <<<"$output")
			[ "$u" -eq 0 ] || { echo "$v/$a: $u elements or entries not typed"; bad=1; }
			run --separate-stderr ckpt-inspect -c "$dir"
			if [ "$status" -ne 0 ] || [ -n "$stderr" ] || [ "$(jq -c '[.ok, .problems]' <<<"$output")" != '[true,[]]' ]; then
				echo "$v/$a: -c: status $status: $stderr $output"
				bad=1
			fi
		done
	done
	[ "$bad" -eq 0 ]
}

# The changelog backend: a checkpoint with a materialized part and one of changes only.  Every
# state of the first is read from the materialized part and the changes after it; the second's
# "keyed" gets its key serializer from its timer state, whose metadata change comes after the first
# changes of the other states.  Its "ambig" has no timer state and no materialized part: the
# changelog records no key serializer for its String keys and namespaces, so -R names the state and
# goes on past it (--keep-going); the rest is the job's record.
@test "flink state: ckpt-inspect --raw -a and -R of the changelog backend's checkpoints are what the job put in state" {
	local v a bad=0 n=0
	for v in $(flink_versions); do
		a=checkpoint-changelog-materialized
		[ "$(ckpt-inspect --raw -a "$(artifact_dir "$v" "$a")" | jq '[.operators[].subtasks[].handles[]?
			| select(.kind == "changelog") | (.materialized | length) > 0] | unique')" = '[
  true
]' ] || { echo "$v/$a: a keyed handle without a materialized part"; bad=1; }
		compare_state "$v" "$a" || bad=1
		READ=ckpt_rows compare_state "$v" "$a" || bad=1
		a=checkpoint-changelog
		jq 'del(.contents["ambig/0"], .contents["ambig/1"])' "$FLINK_OUT/$v/sidecars/$a.json" >side.json
		[ "$(jq '.contents | has("keyed/0") and has("keyed/1")' side.json)" = true ] || { echo "$v/$a: no keyed"; bad=1; }
		READ=changelog_rows compare_state "$v" "$a" side.json || bad=1
		n=$((n + 1))
	done
	[ "$n" -eq 2 ] || { echo "expected the changelog checkpoints of 2 Flink lines, compared $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

# changelog_rows DIR OUT: ckpt_rows with --keep-going, which must skip the two subtasks of "ambig"
# alone, naming the state (exit 1).
changelog_rows() {
	local why='state "visits" not read: state "visits": the changelog records no key serializer (no materialized part, no timer state), and its namespace and value are not of fixed length'
	ckpt-inspect "$1" >summary.json || return
	ckpt-inspect -R --keep-going "$1" >rows.ndjson 2>err
	[ $? -eq 1 ] || { echo "-R --keep-going: not exit 1" >&2; return 1; }
	diff <(sed -E 's/^.*(operator [0-9a-f]+ subtask [01]: )/\1/' err) <(printf 'operator ffbb303c356ee15e3ec72d55fe9d8b05 subtask %s: %s\n' 0 "$why" 1 "$why") >&2 || return
	sed -E '/"kind":"timers"/ s/"value":(-?[0-9]+)/"value":"\1"/' rows.ndjson | jq -s "$JQ_ROWS_DOC" >all.json || return
	cat summary.json all.json | sed -E 's/"timestamp":(-?[0-9]+)/"timestamp":"\1"/g' >"$2"
}

# The first line's canonical hashmap savepoint, for the tests below that change one value.
first() {
	v=$(flink_versions | head -n 1)
	[ -n "$v" ] || { echo "no Flink artifacts under $FLINK_OUT"; return 1; }
}

# did WANT: the differences printed ($output) are WANT's lines, in any order.
did() {
	if [ "$(sort <<<"$output")" != "$(sort <<<"$1")" ]; then
		diff <(sort <<<"$1") <(sort <<<"$output")
		return 1
	fi
}

@test "flink state: the comparison fails on one value the job recorded or Flink read back changed" {
	first
	a=savepoint-hashmap-canonical
	jq '.contents["src-union/1"]["union-offsets"][1] = "u1:x"
		| .contents["src-finishing/2"].positions[2] = "f2:x9" | .contents["map-list/1"].buffer[1] = "m1:9"
		| .contents["src-done/0"].done[0] = "d9" | .contents["broadcast/1"].rules.r1000 = 999
		| .contents["keyed/0"].keys["4"] |= (.count = 20 | .["multiples-of-3"][0] = 25 | .["by-source"].union = 11
			| .sum = 1 | .key_group = 8 | .event_timer = "1000000005" | .processing_timer = "4611686018427387908")
		| .contents["ambig/0"].keys.axx |= (.key_group = 9 | .visits.union = 34 | .parity.finishing.odd = 16)
		| .contents["ambig/1"].keys.ax.visits |= (.unio = .union | del(.union))
		| .spa["src-union"]["union-offsets"][0] = "u0:x" | .spa.broadcast.rules.r2 = 3
		| .spa.keyed.keys["8"] |= (.["multiples-of-3"] += [9] | .processing_timers[0] = "4611686018427387912")' \
		"$FLINK_OUT/$v/sidecars/$a.json" >side.json
	run compare_state "$v" "$a" side.json
	[ "$status" -eq 1 ] || { echo "status $status: $output"; return 1; }
	did "$v/$a: src-union/1.union-offsets.1: ckpt \"u1:meta\", flink \"u1:x\"
$v/$a: src-finishing/2.positions.2: ckpt \"f2:x1\", flink \"f2:x9\"
$v/$a: map-list/1.buffer.1: ckpt \"m1:1\", flink \"m1:9\"
$v/$a: src-done/0.done.0: ckpt \"d0\", flink \"d9\"
$v/$a: broadcast/1.rules.r1000: ckpt 1000, flink 999
$v/$a: keyed/0.keys.4.count: ckpt 21, flink 20
$v/$a: keyed/0.keys.4.multiples-of-3.0: ckpt 24, flink 25
$v/$a: keyed/0.keys.4.by-source.union: ckpt 10, flink 11
$v/$a: keyed/0.keys.4.sum: ckpt 1315374, flink 1
$v/$a: keyed/0.keys.4.key_group: ckpt 7, flink 8
$v/$a: keyed/0.keys.4.event_timer: ckpt \"1000000004\", flink \"1000000005\"
$v/$a: keyed/0.keys.4.processing_timer: ckpt \"4611686018427387907\", flink \"4611686018427387908\"
$v/$a: ambig/0.keys.axx.key_group: ckpt 8, flink 9
$v/$a: ambig/0.keys.axx.visits.union: ckpt 33, flink 34
$v/$a: ambig/0.keys.axx.parity.finishing.odd: ckpt 15, flink 16
$v/$a: ambig/1.keys.ax.visits.union: ckpt 34, flink (none)
$v/$a: ambig/1.keys.ax.visits.unio: ckpt (none), flink 34
$v/$a: spa.src-union.union-offsets.0: ckpt \"u0:50\", flink \"u0:x\"
$v/$a: spa.broadcast.rules.r2: ckpt 2, flink 3
$v/$a: spa.keyed.keys.8.multiples-of-3.7: ckpt (none), flink 9
$v/$a: spa.keyed.keys.8.processing_timers.0: ckpt \"4611686018427387911\", flink \"4611686018427387912\""
}

@test "flink state: the comparison fails on one value of the state changed" {
	first
	a=savepoint-hashmap-canonical
	cp -r "$(artifact_dir "$v" "$a")" sp
	# all inline in the _metadata: a list element "m1:2" becomes "m1:7", key 4's sum 1315374
	# (0x14122e) 1315375, its processing-time timer (sign bit flipped, then key 4) one later; the
	# namespace "finishing" of ambig's key "axx" (each with its length: 4, 10) "finishinG", in
	# its three entries (visits; parity: even, odd)
	perl -0777 -pi -e 's/m1:2/m1:7/ == 1 or die "m1:2";
		s/\x00{5}\x14\x12\x2e/\x00\x00\x00\x00\x00\x14\x12\x2f/ == 1 or die "sum";
		s/\xc0\x00{6}\x03(\x00{7}\x04)/\xc0\x00\x00\x00\x00\x00\x00\x04$1/ == 1 or die "timer";
		s/(\x04axx\x04\x0afinishin)g\x0a/${1}G\x0a/g == 3 or die "namespace"' sp/_metadata
	run compare_state "$v" "$a" "" "$PWD/sp"
	[ "$status" -eq 1 ] || { echo "status $status: $output"; return 1; }
	did "$v/$a: map-list/1.buffer.2: ckpt \"m1:7\", flink \"m1:2\"
$v/$a: keyed/0.keys.4.sum: ckpt 1315375, flink 1315374
$v/$a: keyed/0.keys.4.processing_timer: ckpt \"4611686018427387908\", flink \"4611686018427387907\"
$v/$a: ambig/0.keys.axx.visits.finishinG: ckpt 30, flink (none)
$v/$a: ambig/0.keys.axx.visits.finishing: ckpt (none), flink 30
$v/$a: ambig/0.keys.axx.parity.finishinG.even: ckpt 15, flink (none)
$v/$a: ambig/0.keys.axx.parity.finishinG.odd: ckpt 15, flink (none)
$v/$a: ambig/0.keys.axx.parity.finishing.even: ckpt (none), flink 15
$v/$a: ambig/0.keys.axx.parity.finishing.odd: ckpt (none), flink 15
$v/$a: spa.map-list.buffer.4: ckpt \"m1:7\", flink \"m1:2\"
$v/$a: spa.keyed.keys.4.sum: ckpt 1315375, flink 1315374
$v/$a: spa.keyed.keys.4.processing_timers.0: ckpt \"4611686018427387908\", flink \"4611686018427387907\""
}

@test "flink state: a length suffix of ambig's String key changed in a copy of a canonical savepoint is named as damage" {
	first
	a=savepoint-hashmap-canonical
	cp -r "$(artifact_dir "$v" "$a")" sp
	# key "axx" (4 bytes: its StringValue length, then 3 characters) and its length 4, in the
	# entry of state "visits" in namespace "finishing" (10 bytes)
	at=$(perl -0777 -ne 'print $-[0] if /\x04axx\x04\x0afinishing\x0a\x00/' sp/_metadata)
	[ -n "$at" ]
	at=$((at + 4))
	printf '\x05' | dd of=sp/_metadata bs=1 seek="$at" conv=notrunc status=none
	run --separate-stderr ckpt-inspect --raw -a sp
	# the state is inline, a byte stream handle: its name, an i32 length, its bytes; the offset is
	# within those
	[ "$status" -eq 2 ] && [ -z "$output" ] && [[ $stderr =~ ^ckpt-inspect:\ sp/_metadata:inline:([^ ]+):\ offset\ ([0-9]+):\ (.*)$ ]] ||
		{ echo "status $status: $stderr"; return 1; }
	[ "${BASH_REMATCH[3]}" = 'key of state "visits" has length suffix 5, not its length 4' ] || { echo "$stderr"; return 1; }
	start=$(N=${BASH_REMATCH[1]} perl -0777 -ne 'print index($_, $ENV{N}) + length($ENV{N}) + 4' sp/_metadata)
	[ $((start + BASH_REMATCH[2])) -eq "$at" ] || { echo "offset ${BASH_REMATCH[2]} in the handle from $start, not $at: $stderr"; return 1; }
}

@test "flink state: the SST listing's comparison fails on one count or size Flink recorded changed" {
	first
	a=checkpoint-rocksdb-incremental-2
	id=$(jq -r '.job.operators[] | select(.uid == "keyed") | .id' "$FLINK_OUT/$v/sidecars/$a.json")
	jq --arg id "$id" '(.metadata.operators[] | select(.id == $id) | .subtasks[1].handles[0]) |= (.shared_files -= 1
		| .private_files += 1 | .size += 1 | .checkpointed_size += 1 | .key_groups = [16, 30])' \
		"$FLINK_OUT/$v/sidecars/$a.json" >side.json
	run compare_state "$v" "$a" side.json
	[ "$status" -eq 1 ] || { echo "status $status: $output"; return 1; }
	[ "${#lines[@]}" -eq 7 ] || { printf '%s\n' "$output"; return 1; }
	for f in shared_files sst_files private_files size listed checkpointed_size key_groups; do
		[[ $output == *"$v/$a: sst.keyed/1.$f: ckpt "* ]] || { echo "no difference in $f: $output"; return 1; }
	done
}

@test "flink state: -a checks the subtasks on several threads and names the first damaged one in the document's order" {
	first
	a=checkpoint-hashmap-aligned
	cp -r "$(artifact_dir "$v" "$a")" cp
	# the inline state (a byte stream handle: its name, an i32 length, its bytes) in the document's
	# order (operator, subtask); three of them, the second, the fifth and the last, get a version
	# of 0x7f7f7f7f in place of their first four bytes
	ckpt-inspect --raw -a cp | jq -r '.operators[].subtasks[].handles[]? | .delegate.handle_name // empty' >names
	mapfile -t N <names
	[ "${#N[@]}" -ge 6 ]
	for i in 1 4 $((${#N[@]} - 1)); do
		at=$(N=${N[i]} perl -0777 -ne 'print index($_, $ENV{N}) + length($ENV{N}) + 4' cp/_metadata)
		printf '\x7f\x7f\x7f\x7f' | dd of=cp/_metadata bs=1 seek="$at" conv=notrunc status=none
	done
	for r in $(seq 20); do
		run --separate-stderr ckpt-inspect --raw -a cp
		[ "$status" -eq 2 ] && [ -z "$output" ] && [[ $stderr == "ckpt-inspect: cp/_metadata:inline:${N[1]}: "* ]] ||
			{ echo "run $r: status $status: $stderr, not about ${N[1]}"; return 1; }
		[ "$r" -eq 1 ] && first_err=$stderr
		[ "$stderr" = "$first_err" ] || { echo "run $r: $stderr, run 1: $first_err"; return 1; }
	done
}

@test "flink state: a RocksDB handle is read within its key-group range: files holding more are clipped, as Flink's restore clips them" {
	local v dir op bid
	for v in $(flink_versions); do
		dir=$(artifact_dir "$v" checkpoint-rocksdb-incremental-2)
		mkdir "$v"
		cp "$dir/_metadata" "$v/_metadata"
		# the first keyed operator's subtask 0 (key groups 0-15): its handle's range halved, its files kept
		read -r op bid <<<"$(ckpt-inspect -m --raw -a "$dir" | jq -r '[.operators[] | .id as $o | .subtasks[0].handles[]? |
			select(.kind == "incremental" and .key_groups == "0-15") | "\($o) \(.backend_id)"][0]')"
		perl -e 'local $/; open(F, "+<", $ARGV[0]) or die; binmode F; my $d = <F>; my $b = $ARGV[1];
			my $i = index($d, pack("n", length $b) . $b); die "no backend id" if $i < 0;
			my $p = $i + 2 + length $b; my (undef, $n) = unpack("NN", substr($d, $p, 8));
			substr($d, $p + 4, 4) = pack("N", $n / 2); seek(F, 0, 0); print F $d; close F' "$v/_metadata" "$bid"
		entries() {
			ckpt-inspect --raw -a "$1" | jq -c --arg o "$op" '.operators[] | select(.id == $o) | .subtasks[0].keyed_state |
				.key_groups, (.entries[] | select(.key_group < 8))'
		}
		entries "$dir" | sed 1s/.*/'"0-7"'/ >want
		[ "$(wc -l <want)" -gt 5 ]
		ckpt-inspect --raw -a "$dir" | jq -e --arg o "$op" '[.operators[] | select(.id == $o) | .subtasks[0].keyed_state.entries[] |
			select(.key_group >= 8)] | length > 0' >/dev/null
		entries "$v/_metadata" >got
		diff want got
	done
}

@test "flink state: -k of every key the job wrote gives that key's rows alone; a key never written, none" {
	local v a op k bad=0 n=0 dir
	for v in $(flink_versions); do
		for a in $FULL $ROCKS; do
			dir=$(artifact_dir "$v" "$a")
			for op in keyed ambig; do
				ckpt-inspect -R -u "$op" "$dir" >all.ndjson || { echo "$v/$a: -R -u $op failed"; bad=1; continue; }
				jq -c 'select(has("key_group")) | .key' all.ndjson | sort -u >keys
				[ -s keys ] || { echo "$v/$a: $op: no keyed rows"; bad=1; continue; }
				while read -r k; do
					n=$((n + 1))
					# the rows as printed (jq would round timers' long values through doubles)
					grep -F ",\"key\":$k,\"namespace\":" all.ndjson | sort >want
					if ! ckpt-inspect -R -u "$op" -k "$k" "$dir" >got.ndjson 2>err; then
						echo "$v/$a: $op: -k $k: $(cat err)"
						bad=1
						continue
					fi
					sort got.ndjson | cmp -s - want || { echo "$v/$a: $op: -k $k: not the key's rows"; bad=1; }
				done <keys
			done
			# never written: a key of each type the job does not use
			run --separate-stderr ckpt-inspect -R -u keyed -k 987654321 "$dir"
			[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$v/$a: keyed: -k 987654321: status $status, $output"; bad=1; }
			run --separate-stderr ckpt-inspect -R -u ambig -k '"never"' "$dir"
			[ "$status" -eq 0 ] && [ -z "$output" ] || { echo "$v/$a: ambig: -k never: status $status, $output"; bad=1; }
		done
	done
	[ "$n" -ge 100 ] || { echo "expected keys of 20 artifacts, compared $n"; bad=1; }
	[ "$bad" -eq 0 ]
}
