#!/usr/bin/env bats
# State with a time-to-live inside RocksDB and ForSt (issue 26): TtlJob's artifacts (ttl/,
# TtlJob.java): keyed value "last", list "seen", map "by-parity", reducing "sum" and aggregating
# "avg" with StateTtlConfig, value "plain" without, an event-time timer per key, in three keyed
# operators (Long, String and Tuple2 keys), written by the hashmap backend (canonical savepoint),
# RocksDB (canonical and native savepoints, incremental checkpoint) and, on Flink 2.x, ForSt
# (native savepoint, incremental checkpoint; it refuses canonical savepoints), the same with the
# states asynchronous (State V2; their timers in raw keyed state, not read).  ckpt-inspect -a and
# -R must give what the job put in state (the sidecar's "contents"), each TTL value as ckpt-state(5)
# documents it ({"last_access", "value"}) with its timestamp within the key's writes ("windows"),
# and what the State Processor API reads back: the values through the TTL configuration ("spa"),
# values and timestamps through Flink's TtlSerializer ("spa_ttl").

bats_require_minimum_version 1.5.0 # run --separate-stderr
load helper

# The lines whose harness wrote ttl/.
ttl_versions() {
	local v
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/ttl/sidecar.json" ] && echo "$v"
	done
}

# ttl_artifacts VERSION: "NAME PATH" of each artifact, PATH under FLINK_OUT/VERSION/ttl/.
ttl_artifacts() {
	jq -r '.artifacts[] | "\(.name) \(.path)"' "$FLINK_OUT/$1/ttl/sidecar.json"
}

# jq: a TTL value ({"last_access", "value"}, ckpt-state(5)) as its value; lists sorted again.
JQ_UNTTL='walk(if type == "object" and keys == ["last_access", "value"] then .value else . end)
| map_values(.keys |= map_values(if has("seen") then .seen |= sort else . end))'
# jq, on JQ_STATE's document (TTL values kept or not): the shape of the State Processor API's
# reading, per uid and key (no subtask, no key group; a list sorted by value).
JQ_SPA_SHAPE='to_entries | map(.key |= split("/")[0]) | group_by(.key)
| map({key: .[0].key, value: ([.[].value.keys] | add | map_values(del(.key_group)
	| .event_timers = [.event_timer] | del(.event_timer) | if has("seen") then .seen |= sort_by(if type == "object" then .value else . end) else . end))})
| from_entries'
# jq, with --slurpfile W (the sidecar), on JQ_STATE's document with TTL values: each TTL timestamp
# outside its key's window of writes, and each key with none, as a line.
JQ_WINDOWS='$W[0].windows as $w | to_entries[] | .key as $s | .value.keys | to_entries[] | .key as $k
| [.value | .. | objects | select(has("last_access")) | .last_access] as $ts
| if ($ts | length) == 0 then "\($s) \($k): no TTL timestamp"
	else $ts[] | select(. < $w[$s][$k][0] or . > $w[$s][$k][1]) | "\($s) \($k): last_access \(.) outside \($w[$s][$k])" end'

# compare_ttl VERSION NAME PATH [SIDECAR]: ckpt-inspect (READ: ckpt_state, -a; ckpt_rows, -R) of the
# artifact in the sidecar's shapes against "contents", "windows", "spa" and "spa_ttl"; each
# difference printed as "VERSION/NAME [WHAT]: FIELD: ckpt X, flink Y", status 1 when any.
compare_ttl() {
	local v=$1 a=$2 dir=$FLINK_OUT/$1/ttl/$3 side=${4:-$FLINK_OUT/$1/ttl/sidecars/$2.json} bad=0
	${READ:-ckpt_state} "$dir" st.json || { echo "$v/$a: ckpt-inspect failed ($?)"; return 1; }
	jq -s --slurpfile S "$side" "$JQ_STATE" st.json >ckpt-ttl.json
	jq "$JQ_UNTTL" ckpt-ttl.json >ckpt.json
	# ForSt's asynchronous states keep their timers in raw keyed state, which ckpt does not decode
	case $a in
	*-async-*) jq '.contents | map_values(.keys |= map_values(del(.event_timer)))' "$side" >flink.json ;;
	*) jq .contents "$side" >flink.json ;;
	esac
	[ "$(jq '[.[].keys | length] | add' flink.json)" -gt 0 ] || { echo "$v/$a: the sidecar's contents list no key"; return 1; }
	differ "$v/$a contents" ckpt.json flink.json || bad=1
	jq -r --slurpfile W "$side" "$JQ_WINDOWS" ckpt-ttl.json | sed "s|^|$v/$a windows: |" | grep . && bad=1
	for s in spa spa_ttl; do
		case $a in *-async-*) continue ;; esac # the State Processor API cannot read them (README)
		[ "$(jq "has(\"$s\") and (.$s | has(\"error\") | not)" "$side")" = true ] || { echo "$v/$a: no $s: $(jq -c ".$s.error" "$side")"; bad=1; continue; }
		# spa: the aggregating state's result, the mean of the accumulator [sum, count]
		if [ "$s" = spa ]; then jq "$JQ_SPA_SHAPE | map_values(map_values(.avg |= .[0] / .[1]))" ckpt.json; else jq "$JQ_SPA_SHAPE" ckpt-ttl.json; fi >ckpt-$s.json
		jq ".$s" "$side" >flink-$s.json
		differ "$v/$a $s" ckpt-$s.json flink-$s.json || bad=1
	done
	return $bad
}

@test "flink ttl: every line wrote the TTL job's artifacts; ForSt on 2.x, its canonical savepoint refused" {
	local v n=0 names
	for v in $(ttl_versions); do
		n=$((n + 1))
		names=$(jq -r '[.artifacts[].name] | join(" ")' "$FLINK_OUT/$v/ttl/sidecar.json")
		[ "$(jq -c .errors "$FLINK_OUT/$v/ttl/sidecar.json")" = '{}' ] || { echo "$v: $(jq -c .errors "$FLINK_OUT/$v/ttl/sidecar.json")"; return 1; }
		case $v in
		1.*) [ "$names" = "ttl-hashmap-canonical ttl-rocksdb-canonical ttl-rocksdb-native ttl-rocksdb-incremental" ] ;;
		*)
			[ "$names" = "ttl-hashmap-canonical ttl-rocksdb-canonical ttl-rocksdb-native ttl-rocksdb-incremental ttl-forst-native ttl-forst-incremental ttl-forst-async-native ttl-forst-async-incremental" ] || { echo "$v: $names"; return 1; }
			run jq -r '.refused["ttl-forst-canonical"]' "$FLINK_OUT/$v/ttl/sidecar.json"
			[[ $output == *"IllegalStateException: Configured state backend (ForStStateBackend"*") does not support CANONICAL savepoints" ]] || { echo "$v: $output"; return 1; }
			;;
		esac || { echo "$v: $names"; return 1; }
	done
	[ "$n" -gt 0 ] || skip "no ttl/ artifacts (make flink-fixtures)"
}

@test "flink ttl: ckpt-inspect -a reads what the job put, the TTL timestamps within its writes, and what the State Processor API read back" {
	local v a p bad=0 n=0
	for v in $(ttl_versions); do
		while read -r a p; do
			n=$((n + 1))
			compare_ttl "$v" "$a" "$p" || bad=1
		done < <(ttl_artifacts "$v")
	done
	[ "$n" -gt 0 ] || skip "no ttl/ artifacts (make flink-fixtures)"
	[ "$bad" -eq 0 ]
}

@test "flink ttl: ckpt-inspect -R: the rows are what the job put, with the timestamps the State Processor API read" {
	local v a p bad=0 n=0
	for v in $(ttl_versions); do
		while read -r a p; do
			n=$((n + 1))
			READ=ckpt_rows compare_ttl "$v" "$a" "$p" || bad=1
		done < <(ttl_artifacts "$v")
	done
	[ "$n" -gt 0 ] || skip "no ttl/ artifacts (make flink-fixtures)"
	[ "$bad" -eq 0 ]
}

@test "flink ttl: every TTL state's entries are TTL values, the state without a TTL and the timers not" {
	local v a p bad=0
	for v in $(ttl_versions); do
		while read -r a p; do
			ckpt-inspect -R "$FLINK_OUT/$v/ttl/$p" >rows.ndjson || { echo "$v/$a: -R failed"; bad=1; continue; }
			run jq -s -c 'group_by(.state) | map({key: .[0].state, value: (map(.value | type == "object" and keys == ["last_access", "value"]) | unique)}) | from_entries' rows.ndjson
			want='"avg":[true],"by-parity":[true],"last":[true],"plain":[false],"seen":[true],"sum":[true]}'
			case $a in
			*-async-*) want="{$want" ;; # the timers in raw keyed state
			*) want='{"_timer_state/event_user-timers":[false],'$want ;;
			esac
			[ "$output" = "$want" ] || { echo "$v/$a: $output"; bad=1; }
		done < <(ttl_artifacts "$v")
	done
	[ "$bad" -eq 0 ]
}

@test "flink ttl: -a decodes every entry, -c finds every file whole" {
	local v a p dir bad=0
	for v in $(ttl_versions); do
		while read -r a p; do
			dir=$FLINK_OUT/$v/ttl/$p
			run --separate-stderr ckpt-inspect --raw -a "$dir"
			if [ "$status" -ne 0 ] || [ -n "$stderr" ]; then
				echo "$v/$a: -a: status $status: $stderr"
				bad=1
				continue
			fi
			u=$(jq '[.operators[].subtasks[] | .keyed_state.entries // [] | .[].typed | select(. == null)] | length' <<<"$output")
			[ "$u" -eq 0 ] || { echo "$v/$a: $u entries not typed"; bad=1; }
			run --separate-stderr ckpt-inspect -c "$dir"
			if [ "$status" -ne 0 ] || [ -n "$stderr" ] || [ "$(jq -c '[.ok, .problems]' <<<"$output")" != '[true,[]]' ]; then
				echo "$v/$a: -c: status $status: $stderr $output"
				bad=1
			fi
		done < <(ttl_artifacts "$v")
	done
	[ "$bad" -eq 0 ]
}

@test "flink ttl: RocksDB's and ForSt's SST files are RocksDB block-based tables (format version 5), their OPTIONS RocksDB 8.10 on 2.x" {
	local v a p dir bad=0 n=0
	for v in $(ttl_versions); do
		while read -r a p; do
			case $a in *-native | *-incremental) ;; *) continue ;; esac
			dir=$FLINK_OUT/$v/ttl/$p
			side=$FLINK_OUT/$v/ttl/sidecars/$a.json
			# the files the handles name, as ckpt lists them: relative to the savepoint, or file: URLs
			ckpt-inspect "$dir" | jq -r '.operators[].flink_state.files[]? | "\(.local_name) \(.path)"' >files.txt
			ssts=0
			while read -r name path; do
				# Flink 1.20.5 keeps them in _metadata whatever the job's small-file threshold (2.x writes files)
				case $v:$path in
				*:file:*) f=${path#file:} ;;
				1.*:null)
					case $name in *.sst) ssts=$((ssts + 1)) ;; esac
					continue
					;;
				*:null) echo "$v/$a: $name inline in _metadata, not a file"; bad=1; continue ;;
				*) f=$dir/$path ;;
				esac
				case $name in
				*.sst)
					ssts=$((ssts + 1))
					# the footer: format version (u32 LE) and kBlockBasedTableMagicNumber 0x88e241b785f4cff7 (LE)
					[ "$(tail -c 12 "$f" | od -An -tx1 | tr -d ' \n')" = 05000000f7cff485b741e288 ] || { echo "$v/$a: $name ($f): not a block-based table of format 5"; bad=1; }
					;;
				OPTIONS-*)
					case $v in
					1.*) want=6.20.3 ;;
					*) want=8.10.0 ;;
					esac
					grep -aq "^  rocksdb_version=$want\$" "$f" || { echo "$v/$a: $name: $(grep -a -m1 rocksdb_version "$f"), expected $want"; bad=1; }
					grep -aq '^  table_factory=BlockBasedTable$' "$f" || { echo "$v/$a: $name: not BlockBasedTable"; bad=1; }
					;;
				esac
			done <files.txt
			[ "$ssts" -gt 0 ] && [ "$ssts" -eq "$(jq '[.metadata.operators[].subtasks[].handles[] | .shared_files // 0] | add' "$side")" ] ||
				{ echo "$v/$a: $ssts SST files, the sidecar's handles share $(jq '[.metadata.operators[].subtasks[].handles[] | .shared_files // 0] | add' "$side")"; bad=1; }
			n=$((n + 1))
		done < <(ttl_artifacts "$v")
	done
	[ "$n" -gt 0 ] || skip "no ttl/ artifacts"
	[ "$bad" -eq 0 ]
}

# ttl_path VERSION NAME: the artifact's directory.
ttl_path() {
	echo "$FLINK_OUT/$1/ttl/$(jq -r --arg n "$2" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$1/ttl/sidecar.json")"
}

@test "flink ttl: -d: the snapshots of one run hold the same state whatever their form; across runs only the TTL timestamps differ" {
	local v a b bad=0
	for v in $(ttl_versions); do
		# one run, one backend: nothing differs
		for pair in rocksdb-canonical:rocksdb-native rocksdb-canonical:rocksdb-incremental rocksdb-native:rocksdb-incremental \
			forst-native:forst-incremental forst-async-native:forst-async-incremental; do
			a=ttl-${pair%%:*} b=ttl-${pair#*:}
			case $v:$a in 1.*:ttl-forst-*) continue ;; esac
			run --separate-stderr ckpt-inspect -d "$(ttl_path "$v" "$b")" "$(ttl_path "$v" "$a")"
			[ "$status" -eq 0 ] && [ -z "$stderr" ] || { echo "$v $a $b: status $status: $stderr"; bad=1; continue; }
			d=$(jq -c 'del(.from, .to)' <<<"$output")
			[ "$d" = '{"operators_added":[],"operators_removed":[],"operators_rescaled":[],"states_added":[],"states_removed":[],"states_resized":[],"state":{},"processing_timers":{}}' ] ||
				{ echo "$v $a -> $b: $d"; bad=1; }
		done
		# another run (another backend): every entry of a TTL state changed (its timestamp), nothing
		# else: per key one value of "last", "seen" (a list whole or element by element), "sum" and
		# "avg", per map entry one of "by-parity" (exit 1: a difference, as diff(1))
		for pair in hashmap-canonical:rocksdb-canonical hashmap-canonical:rocksdb-native rocksdb-native:forst-native \
			hashmap-canonical:forst-incremental; do
			a=ttl-${pair%%:*} b=ttl-${pair#*:}
			case $v:$b in 1.*:ttl-forst-*) continue ;; esac
			run --separate-stderr ckpt-inspect -d "$(ttl_path "$v" "$b")" "$(ttl_path "$v" "$a")"
			[ "$status" -eq 1 ] && [ -z "$stderr" ] || { echo "$v $a $b: status $status: $stderr"; bad=1; continue; }
			want=$(jq -c '[.contents[].keys[]] | length as $k | {ops: [], added: 0, removed: 0, changed: {avg: $k,
				"by-parity": (map(.["by-parity"] | length) | add), last: $k, seen: $k, sum: $k}}' "$FLINK_OUT/$v/ttl/sidecars/$a.json")
			d=$(jq -c '{ops: ([.operators_added, .operators_removed, .operators_rescaled, .states_added, .states_removed,
				.states_resized] | add), added: ([.state[][].added] | add), removed: ([.state[][].removed] | add),
				changed: ([.state[] | to_entries[]] | group_by(.key) | map({key: .[0].key, value: (map(.value.changed) | add)})
					| from_entries)}' <<<"$output")
			[ "$d" = "$want" ] || { echo "$v $a -> $b: $d, expected $want"; bad=1; }
		done
	done
	[ "$bad" -eq 0 ]
}

@test "flink ttl: the comparison fails on a TTL timestamp or value changed, and on a timestamp outside its window" {
	local v a p
	v=$(ttl_versions | head -n 1)
	[ -n "$v" ] || skip "no ttl/ artifacts"
	read -r a p < <(ttl_artifacts "$v" | grep '^ttl-rocksdb-native ')
	side=$FLINK_OUT/$v/ttl/sidecars/$a.json
	k=$(jq -r '.spa_ttl["ttl-long"] | keys[0]' "$side")
	s=$(jq -r --arg k "$k" '.contents | to_entries[] | select(.key | startswith("ttl-long/")) | select(.value.keys[$k]) | .key' "$side")
	jq --arg k "$k" --arg s "$s" '.spa_ttl["ttl-long"][$k].last.last_access += 1 | .spa_ttl["ttl-long"][$k]["by-parity"].odd.value += 1
		| .contents[$s].keys[$k].sum += 1 | .windows[$s][$k][1] = .windows[$s][$k][0] - 1' "$side" >side.json
	run compare_ttl "$v" "$a" "$p" "$PWD/side.json"
	[ "$status" -eq 1 ]
	[[ $output == *"$v/$a spa_ttl: ttl-long.$k.last.last_access: ckpt "* ]] || { echo "$output"; return 1; }
	[[ $output == *"$v/$a spa_ttl: ttl-long.$k.by-parity.odd.value: ckpt "* ]] || { echo "$output"; return 1; }
	[[ $output == *"$v/$a contents: $s.keys.$k.sum: ckpt "* ]] || { echo "$output"; return 1; }
	[[ $output == *"$v/$a windows: $s $k: last_access "*" outside "* ]] || { echo "$output"; return 1; }
	[ "$(grep -c . <<<"$output")" -ge 4 ]
}
