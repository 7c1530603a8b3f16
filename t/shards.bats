#!/usr/bin/env bats
# ckpt-inspect --shards N and -R --shard D [-o OUT] (issue 42): every byte of state in one shard,
# the union of the shards' rows exactly -R's, only a shard's bytes read, part files whole or absent.

bats_require_minimum_version 1.5.0
load helper
load flinkstate-helper
load s3-helper
load shards-helper

setup_file() {
	s3_start
}

teardown_file() {
	s3_stop
}

# a test that failed between s3_fault and s3_fault_stop leaves no proxy behind
teardown() {
	s3_fault_stop
}

ARTS=$FIXTURES/flink-artifacts/new-stateful-udf-migration-itcase-flink1.19

@test "shards: the union of the shards' rows is -R's (N = 1, 2, 7, 64) on the six forms of a job" {
	needs_fixtures
	for f in hashmap-savepoint hashmap-checkpoint hashmap-savepoint-native rocksdb-savepoint rocksdb-checkpoint \
		rocksdb-savepoint-native; do
		union_is_rows "$ARTS-$f" 1 2 7 64
	done
}

@test "shards: one canonical handle splits by key-group range: balanced within 1.25 times the mean, each shard reads its bytes alone" {
	kv_spread 100000
	union_is_rows sp 2 7 16
	ckpt-inspect --shards 7 sp >plan
	# every byte of the state files in one shard
	[ "$(jq -s 'map(.bytes) | add' plan)" -eq $(($(wc -c <sp/op) + $(wc -c <sp/kv))) ]
	jq -s -e '(map(.bytes) | add / length) as $m | map(.bytes) | max <= 1.25 * $m' plan
	# the key-group ranges of kv cover 0-127 once, in byte ranges that follow each other
	[ "$(jq -r '.parts[] | select(.state == "keyed") | .key_groups' plan | sort -n | tr '\n' ' ')" != "" ]
	[ "$(jq -r '.parts[] | select(.state == "keyed") | .files[] | "\(.from) \(.to)"' plan | sort -n |
		awk 'NR > 1 && $1 != last { bad = 1 } { last = $2 } END { print bad + 0, last }')" = "0 $(wc -c <sp/kv)" ]
	# -v: a shard reads about its own bytes (the header and a read-ahead window too), not the whole file
	kv_spread 1000000
	run --separate-stderr ckpt-inspect -v -R --shard 3/7 sp
	status_is 0
	read1=$(sed -n 's/.*: \([0-9]*\) bytes of state files read.*/\1/p' <<<"$stderr")
	[ "$read1" -lt $(($(wc -c <sp/kv) / 4)) ] || { echo "read $read1 of $(wc -c <sp/kv)"; return 1; }
}

@test "shards: handles that do not split (RocksDB handles of one key group) are said when the largest shard is over 1.25 times the mean" {
	needs_fixtures
	run --separate-stderr ckpt-inspect --shards 16 "$ARTS-rocksdb-savepoint-native"
	status_is 0
	[ "$(wc -l <<<"$output")" -eq 16 ]
	[[ $stderr == "ckpt-inspect: $ARTS-rocksdb-savepoint-native: shard "*" holds "*" times the mean bytes: the keyed state of operator "*" subtask "*" bytes in incremental handles that ckpt does not split" ]] ||
		{ echo "$stderr"; return 1; }
	[ "$(jq -s '[.[] | select(.over)] | length > 0' <<<"$output")" = true ]
	# a plan that balances says nothing
	kv_spread 20000
	run --separate-stderr ckpt-inspect --shards 4 sp
	status_is 0
	[ -z "$stderr" ]
	[ "$(jq -s '[.[] | select(.over)] | length' <<<"$output")" = 0 ]
}

@test "shards: bad descriptors and options exit 2 with one line, nothing on stdout" {
	sp_dir
	bad 2 'ckpt-inspect: --shard: shard 7 of 7: shards count from 0' ckpt-inspect -R --shard 7/7 sp
	bad 2 'ckpt-inspect: --shard: not a shard descriptor (a line of ckpt-inspect --shards N, or I/N)' ckpt-inspect -R --shard x sp
	bad 2 'ckpt-inspect: --shard: N of I/N is 1 to 1000000 (a line of ckpt-inspect --shards N, or I/N)' ckpt-inspect -R --shard 0/0 sp
	bad 2 'ckpt-inspect: --shard: not JSON (a line of ckpt-inspect --shards N, or I/N)' ckpt-inspect -R --shard '{"parts":' sp
	bad 2 'ckpt-inspect: --shard: no parts or no checkpoint (a line of ckpt-inspect --shards N, or I/N)' ckpt-inspect -R --shard '{"parts":[]}' sp
	bad 2 'ckpt-inspect: --shard: a shard of checkpoint 12345, and this is checkpoint 9' ckpt-inspect -R --shard '{"checkpoint":12345,"parts":[]}' sp
	d=$(ckpt-inspect --shards 1 sp)
	bad 2 'ckpt-inspect: --shard: operator ffffffffffffffffffffffffffffffff subtask  is not in this snapshot' \
		ckpt-inspect -R --shard "$(jq -c '.parts[1].operator = "ffffffffffffffffffffffffffffffff"' <<<"$d")" sp
	bad 2 'ckpt-inspect: --shard: key groups 7-200 are not operator 0102030405060708090a0b0c0d0e0f10 subtask 0'"'"'s' \
		ckpt-inspect -R --shard "$(jq -c '(.parts[] | select(.state == "keyed") | .key_groups) = "7-200"' <<<"$d")" sp
	bad 2 'ckpt-inspect: --shard goes with -R (see ckpt-inspect -h)' ckpt-inspect --shard 0/1 sp
	bad 2 'ckpt-inspect: --shards needs a number of shards from 1 to 1000000, not "0" (see ckpt-inspect -h)' ckpt-inspect --shards 0 sp
	bad 2 'ckpt-inspect: --shards goes with -r alone (see ckpt-inspect -h)' ckpt-inspect -R --shards 2 sp
	bad 2 'ckpt-inspect: -o goes with -R --shard (see ckpt-inspect -h)' ckpt-inspect -R -o out/ sp
	bad 2 'ckpt-inspect: --compress is gz or zst, not "xz" (see ckpt-inspect -h)' ckpt-inspect -R --shard 0/1 -o out/ --compress xz sp
	bad 2 'ckpt-inspect: --shard takes one snapshot, 2 given (see ckpt-inspect -h)' ckpt-inspect -R --shard 0/1 sp sp
	bad 2 'ckpt-inspect: --shards splits the state files, which hold each of an operator'"'"'s states: not with --state (read one state of a shard with -R --shard D --state NAME) (see ckpt-inspect -h)' \
		ckpt-inspect --shards 2 --state count sp
	bad 2 'ckpt-inspect: --shards splits the state files, and a key is in one key group: not with -k (-R -k reads that key group alone) (see ckpt-inspect -h)' \
		ckpt-inspect --shards 2 -k 3 sp
	bad 2 'ckpt-inspect: --shards plans from the _metadata and RocksDB'"'"'s index blocks, and reads no entry: not with --keep-going (it goes with -R --shard) (see ckpt-inspect -h)' \
		ckpt-inspect --shards 2 --keep-going sp
	bad 2 'ckpt-inspect: --shards is of the state files: not with -m (the _metadata alone) (see ckpt-inspect -h)' \
		ckpt-inspect --shards 2 -m sp
	bad 2 'ckpt-inspect: --shard is of the state files: not with -m (the _metadata alone) (see ckpt-inspect -h)' \
		ckpt-inspect -R --shard 0/2 -m sp
}

@test "shards: --shards -u plans the shards of the operators it names; -R --shard -u, --state and -k narrow a shard's rows, their union -R's with the same option" {
	needs_fixtures
	local a=$ARTS-hashmap-savepoint op=d5c8b168c6cbfe8c507a10f88b325243 n i
	# the plan of one operator: its handles alone, every byte of them once
	ckpt-inspect --shards 2 -u "$op" "$a" >plan 2>/dev/null
	[ "$(jq -r '.parts[].operator' plan | sort -u)" = "$op" ]
	[ "$(jq -s 'map(.bytes) | add' plan)" -eq "$(ckpt-inspect --shards 1 "$a" | jq "[.parts[] | select(.operator == \"$op\") | .bytes] | add")" ]
	ckpt-inspect -R -u "$op" "$a" | LC_ALL=C sort >all
	[ "$(wc -l <all)" -eq 4 ]
	for i in 0 1; do ckpt-inspect -R --shard "$i/2" -u "$op" "$a"; done | LC_ALL=C sort | cmp - all
	while IFS= read -r d; do ckpt-inspect -R --shard "$d" "$a"; done <plan | LC_ALL=C sort | cmp - all
	# a descriptor of the whole plan read with -u: that operator's rows of it
	for i in 0 1 2; do ckpt-inspect -R --shard "$i/3" -u "$op" "$a"; done | LC_ALL=C sort | cmp - all
	# a uid that names no operator: said, exit 1, a plan of nothing
	run --separate-stderr ckpt-inspect --shards 2 -u nosuch "$a"
	status_is 1
	[ "$stderr" = "ckpt-inspect: $a: uid \"nosuch\" (operator id 245a7c5152266a38200c1fd720d17cac) names no operator" ]
	[ "$output" = '{"shard":0,"shards":2,"checkpoint":2,"bytes":0,"parts":[]}'$'\n''{"shard":1,"shards":2,"checkpoint":2,"bytes":0,"parts":[]}' ]
	# --state: each shard's rows of that state; a shard whose files hold none of it prints none, exit 0
	ckpt-inspect -R --state _timer_state/event_timer "$a" | LC_ALL=C sort >all
	[ "$(wc -l <all)" -eq 8 ]
	for n in 1 3 7; do
		for ((i = 0; i < n; i++)); do ckpt-inspect -R --shard "$i/$n" --state _timer_state/event_timer "$a"; done |
			LC_ALL=C sort | cmp - all
	done
	run --separate-stderr ckpt-inspect -R --shard "$(jq -c '.parts = [.parts[] | select(.state == "operator")]' <<<"$(ckpt-inspect --shards 1 "$a")")" --state _timer_state/event_timer "$a"
	status_is 0
	[ -z "$output" ] && [ -z "$stderr" ]
	# -k: the key's rows in the shards that hold its key groups, none in the others
	ckpt-inspect -R -k '[3]' "$a" | LC_ALL=C sort >all
	[ "$(wc -l <all)" -eq 8 ]
	for i in 0 1 2; do ckpt-inspect -R --shard "$i/3" -k '[3]' "$a"; done | LC_ALL=C sort | cmp - all
	[ "$(ckpt-inspect -R --shard 1/2 -u "$op" -k '[3]' "$a")" = "$(ckpt-inspect -R -u "$op" -k '[3]' "$a")" ]
	run --separate-stderr ckpt-inspect -R --shard 0/2 -u "$op" -k '[3]' "$a"
	status_is 0
	[ -z "$output" ] && [ -z "$stderr" ]
	# the same on RocksDB's handles (whole a shard) and a heap checkpoint
	for a in "$ARTS-rocksdb-checkpoint" "$ARTS-rocksdb-savepoint-native" "$ARTS-hashmap-checkpoint"; do
		for opt in "-k [3]" "--state state-name"; do
			ckpt-inspect -R $opt "$a" | LC_ALL=C sort >all
			[ "$(wc -l <all)" -eq "$([ "$opt" = "-k [3]" ] && echo 8 || echo 16)" ]
			for ((i = 0; i < 7; i++)); do ckpt-inspect -R --shard "$i/7" $opt "$a"; done | LC_ALL=C sort | cmp - all
		done
	done
}

@test "shards: -R --shard -k reads the key's key group in the shard that holds it, the header alone in the others" {
	kv_spread 100000
	local i k holds=0
	ckpt-inspect -R -k 42 sp >one
	[ "$(wc -l <one)" -eq 1 ]
	k=$(jq -r .key_group one)
	for i in 0 1 2 3; do
		run --separate-stderr ckpt-inspect -v -R --shard "$i/4" -k 42 sp
		status_is 0
		read1=$(sed -n 's/.*: \([0-9]*\) bytes of state files read.*/\1/p' <<<"$stderr")
		if [ -n "$output" ]; then
			holds=$((holds + 1))
			[ "$output" = "$(cat one)" ]
			# its key group's bytes and the header
			[ "$read1" -le $((KV_OFF[k + 1] - KV_OFF[k] + KV_OFF[0] + 65536)) ] || { echo "shard $i read $read1"; return 1; }
		else
			[ "$read1" -le $((KV_OFF[0] + 65536)) ] || { echo "shard $i read $read1"; return 1; }
		fi
	done
	[ "$holds" -eq 1 ]
}

@test "shards: -R --shard --keep-going leaves out a subtask of the shard that cannot be read, named on stderr, exit 1; without it exit 2" {
	needs_fixtures
	local a=$ARTS-hashmap-savepoint i
	cp -r "$a" k && chmod -R u+w k
	# operator 4b81...'s subtask 0: a serializer snapshot's class name damaged
	printf '\377\377\377\377' | dd of=k/03a25f40-09fa-4aa9-a6a6-a7a689cae990 bs=1 seek=20 conv=notrunc status=none
	local skip='ckpt-inspect: k: operator 4b818c7923a927796d24b727201ba34d subtask 0 skipped: k/03a25f40-09fa-4aa9-a6a6-a7a689cae990: offset 20: damaged serializer snapshot class: byte 0xff is not modified UTF-8'
	ckpt-inspect --shards 3 k >plan
	[ "$(jq -r 'select(any(.parts[]; .operator == "4b818c7923a927796d24b727201ba34d" and .subtask == 0)) | .shard' plan)" = 0 ]
	mkdir out
	bad 2 'ckpt-inspect: k/03a25f40-09fa-4aa9-a6a6-a7a689cae990: offset 20: damaged serializer snapshot class: byte 0xff is not modified UTF-8' \
		ckpt-inspect -R --shard 0/3 -o out/ k
	run --separate-stderr ckpt-inspect -R --shard 0/3 --keep-going k
	status_is 1
	[ "$stderr" = "$skip" ]
	# the shard's other rows, as the undamaged snapshot's shard holds them
	[ "$output" = "$(ckpt-inspect -R --shard 0/3 "$a" | grep -v '"operator":"4b818c7923a927796d24b727201ba34d",[^}]*"subtask":0,')" ]
	[ "$(grep -c . <<<"$output")" -gt 0 ]
	[ -z "$(ls out)" ]
	# into its part file the same, whole
	run --separate-stderr ckpt-inspect -R --shard 0/3 --keep-going -o out/ k
	status_is 1
	[ "$stderr" = "$skip" ]
	[ "$(cat out/part-00000.ndjson)" = "$(ckpt-inspect -R --shard 0/3 --keep-going k 2>/dev/null)" ]
	# the union of the shards is -R --keep-going's
	ckpt-inspect -R --keep-going k 2>/dev/null | LC_ALL=C sort >all
	for i in 0 1 2; do ckpt-inspect -R --shard "$i/3" --keep-going k 2>/dev/null || [ $? -eq 1 ]; done | LC_ALL=C sort | cmp - all
	# the shards without it read as before, exit 0
	run --separate-stderr ckpt-inspect -R --shard 1/3 --keep-going k
	status_is 0
	[ -z "$stderr" ]
}

@test "shards: -o DIR/ writes part-NNNNN.ndjson (.gz, .zst) whole; a damaged or killed shard leaves no part file" {
	kv_spread 100000
	mkdir out
	for i in 0 1 2; do ckpt-inspect -R --shard "$i/3" -o out/ sp; done
	[ "$(ls out)" = "$(printf 'part-00000.ndjson\npart-00001.ndjson\npart-00002.ndjson')" ]
	ckpt-inspect -R sp | LC_ALL=C sort >all
	cat out/* | LC_ALL=C sort | cmp - all
	ckpt-inspect -R --shard 1/3 -o out --compress gz sp
	ckpt-inspect -R --shard 1/3 -o out/ --compress zst sp
	gzip -dc out/part-00001.ndjson.gz | cmp - out/part-00001.ndjson
	python3 -c 'import sys' && command -v zstd >/dev/null && { zstd -dc out/part-00001.ndjson.zst | cmp - out/part-00001.ndjson; }
	# a rerun replaces the part whole
	ckpt-inspect -R --shard 1/3 -o out/ sp
	cat out/part-0000[0-2].ndjson | LC_ALL=C sort | cmp - all
	# damage in shard 2's key groups: shard 2 exits 2 naming it and leaves no part file
	rm -rf out && mkdir out
	kg=$(ckpt-inspect --shards 3 sp | jq -r 'select(.shard == 2) | .parts[] | select(.state == "keyed") | .key_groups' | head -1)
	printf '\x7f' | dd of=sp/kv bs=1 seek=$((KV_OFF[${kg%-*}] + 2 + 3)) conv=notrunc status=none
	run --separate-stderr ckpt-inspect -R --shard 2/3 -o out/ sp
	status_is 2
	[[ $stderr == "ckpt-inspect: sp/kv: offset "* ]] || { echo "$stderr"; return 1; }
	[ -z "$(ls out)" ]
	# killed midway (a big shard to a reader that never reads: -o's file grows, then the kill)
	kv_spread 1000000
	ckpt-inspect -R --shard 0/1 -o out/ sp &
	pid=$!
	for _ in $(seq 100); do [ -n "$(ls out)" ] && break; sleep 0.01; done
	kill -9 "$pid"
	wait "$pid" || true
	[ ! -e out/part-00000.ndjson ]
}

@test "shards: -o DIR/ stopped by SIGINT, SIGTERM or SIGHUP midway removes its temporary part file, exit 128+signal" {
	kv_spread 1000000
	mkdir out
	for sig in INT:130 TERM:143 HUP:129; do
		killed_writing "${sig%:*}" 'out/part-00000.ndjson.tmp.*' ckpt-inspect -R --shard 0/1 -o out/ sp
		[ "$st" -eq "${sig#*:}" ] || { echo "SIG${sig%:*}: exit $st"; return 1; }
		[ -z "$(ls -A out)" ] || { echo "SIG${sig%:*} left: $(ls -A out)"; return 1; }
		[ ! -s killed.out ] && [ ! -s killed.err ]
	done
}

@test "shards: from s3://, each shard fetches about its own bytes; -o s3://bucket/prefix/ uploads its part whole" {
	needs_fixtures
	needs_s3
	kv_spread 1000000
	s3_bucket shards
	s3_put_dir sp shards/sp
	ckpt-inspect -R sp | LC_ALL=C sort >all
	# each shard an eighth of the bytes: what it fetches is its range and the read-ahead past it (under 3 times it)
	for i in 0 1 2 3 4 5 6 7; do
		run --separate-stderr ckpt-inspect -v -R --shard "$i/8" s3://shards/sp
		status_is 0
		printf '%s\n' "$output" >>union
		got=$(sed -n 's/.* \([0-9]*\) bytes fetched from S3.*/\1/p' <<<"$stderr")
		[ -n "$got" ] && [ "$got" -lt $(($(wc -c <sp/kv) / 2)) ] || { echo "shard $i: $stderr"; return 1; }
	done
	LC_ALL=C sort union | cmp - all
	ckpt-inspect -R --shard 1/8 -o s3://shards/rows/ --compress gz s3://shards/sp
	[ "$(s3_keys shards rows/)" = rows/part-00001.ndjson.gz ]
}

@test "shards: from s3://, a shard fetches its key groups' bytes and the header once a part, no more (counted at the server)" {
	needs_s3
	kv_spread 1000000
	s3_bucket exact
	s3_put_dir sp exact/sp
	ckpt-inspect --shards 8 sp >plan
	s3_fault
	for i in 0 1 2 3 4 5 6 7; do
		: >"$BATS_TEST_TMPDIR/fault.log"
		ckpt-inspect -R --shard "$i/8" s3://exact/sp >/dev/null
		# the bytes of the shard's parts, and the header (the bytes before key group 0) for each part
		# that does not start with it
		want=$(jq -s --argjson h "${KV_OFF[0]}" --argjson i "$i" '.[$i].parts | map(select(.state == "keyed") |
			.files[] | .to - .from + (if .from == 0 then 0 else $h end)) | add' plan)
		got=$(awk '$1 == "sent" && $3 == "/exact/sp/kv" { n += $2 } END { print n + 0 }' "$BATS_TEST_TMPDIR/fault.log")
		[ "$got" -eq "$want" ] || { echo "shard $i: $got bytes of kv fetched, its own $want"; return 1; }
	done
	s3_fault_stop
}

@test "shards: examples/shards/parallel.sh (GNU parallel, this machine as its ssh login) writes the parts; their union is -R's" {
	needs_fixtures
	command -v parallel >/dev/null || { [ "${CI:-}" != true ] || { echo "no GNU parallel"; return 1; }; skip "no GNU parallel"; }
	local snap=$ARTS-rocksdb-checkpoint
	mkdir parts
	run sh "$BATS_TEST_DIRNAME/../examples/shards/parallel.sh" "$snap" parts/ 7 :
	status_is 0
	[ "$(ls parts | wc -l)" -eq 7 ]
	ckpt-inspect -R "$snap" | LC_ALL=C sort >all
	for f in parts/*.zst; do zstd -qdc "$f"; done | LC_ALL=C sort | cmp - all
}

@test "shards: DuckDB counts the rows per state from the parts as jq counts -R's" {
	needs_fixtures
	python3 -c 'import duckdb' 2>/dev/null || { [ "${CI:-}" != true ] || { echo "no duckdb (pip)"; return 1; }; skip "no duckdb (python3 -m pip install duckdb)"; }
	local snap=$ARTS-hashmap-savepoint
	mkdir parts
	for i in 0 1 2; do ckpt-inspect -R --shard "$i/3" -o parts/ "$snap"; done
	want=$(ckpt-inspect -R "$snap" | jq -sc 'group_by(.state) | map({(.[0].state): length}) | add')
	got=$(python3 -c 'import duckdb, json; print(json.dumps(dict(duckdb.sql("select state, count(*) from read_json_auto(\"parts/part-*.ndjson\", format=\"newline_delimited\") group by state").fetchall()), sort_keys=True, separators=(",", ":")))')
	[ "$got" = "$(jq -cS . <<<"$want")" ] || { echo "duckdb $got, jq $want"; return 1; }
}

@test "shards: examples/shards/spark_rows.py on local[2] counts the rows per state as jq counts -R's (PySpark, when installed)" {
	needs_fixtures
	python3 -c 'import pyspark' 2>/dev/null || skip "no pyspark (python3 -m pip install pyspark, and a JDK): the Spark example is not run"
	local snap=$ARTS-hashmap-savepoint
	want=$(ckpt-inspect -R "$snap" | jq -sc 'group_by(.state) | map({(.[0].state): length}) | add | tojson' -r | jq -cS .)
	run --separate-stderr env PATH="$CKPT_BIN:$PATH" python3 "$BATS_TEST_DIRNAME/../examples/shards/spark_rows.py" "$snap" 4 'local[2]'
	status_is 0
	[ "$(tail -n 1 <<<"$output" | jq -cS .)" = "$want" ] || { echo "$output"; return 1; }
}
