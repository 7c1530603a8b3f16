# Shared by t/flink/*.bats: the artifacts that `make flink-fixtures` wrote (build/flink/VERSION/)
# and jq programs that put a sidecar (what Flink says) and ckpt's output in one shape.
T=$(cd "$BATS_TEST_DIRNAME" && pwd)
ROOT=$(cd "$T/../.." && pwd)
FLINK_OUT=${FLINK_OUT:-$ROOT/build/flink}
PATH="${CKPT_BIN:-$ROOT/bin}:$PATH"
export PATH

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# The Flink versions whose harness run finished (it writes index.json last).
flink_versions() {
	local d
	for d in "$FLINK_OUT"/*/index.json; do
		[ -f "$d" ] || continue
		d=${d%/index.json}
		echo "${d##*/}"
	done
}

# jq: a sorted list of integers as ckpt writes a range list ("0-2,5"; "" when empty).
JQ_RANGES='def ranges: sort | reduce .[] as $x ([]; if length > 0 and .[-1][1] == $x - 1
	then .[-1][1] = $x else . + [[$x, $x]] end)
	| map(if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end) | join(",");
def kg: if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end;'

# jq: a sidecar's metadata in the shape below.  Flink's class names become ckpt's handle kinds
# by this table; Flink's distribution modes become ckpt's state modes.
JQ_FLINK="$JQ_RANGES"'
def kind: {"OperatorStreamStateHandle": "operator_stream", "KeyGroupsStateHandle": "key_groups",
	"KeyGroupsSavepointStateHandle": "savepoint_key_groups", "IncrementalRemoteKeyedStateHandle": "incremental",
	"ChangelogStateBackendHandleImpl": "changelog", "MergedInputChannelStateHandle": "merged_channels", "MergedResultSubpartitionStateHandle": "merged_channels",
	"InputChannelStateHandle": "channel", "ResultSubpartitionStateHandle": "channel"}[.] // ("flink:" + .);
def mode: {"SPLIT_DISTRIBUTE": "list", "UNION": "union", "BROADCAST": "broadcast"}[.] // ("flink:" + .);
.metadata | {checkpoint_id, operators: (.operators | map({key: .id, value: {
	uid, name, parallelism, max_parallelism, fully_finished, coordinator_bytes,
	subtasks: (.subtasks | length), finished_subtasks: (.finished_subtasks | ranges),
	in_flight_bytes: ([.subtasks[] | .input_channel_bytes + .output_channel_bytes] | add // 0),
	key_groups: ([.subtasks[] | .index as $i | .handles[] | select(.scope == "managed_keyed")
		| {key: "\($i)", value: (.key_groups | kg)}] | from_entries),
	states: ([.subtasks[].handles[] | select(.states) | .states | to_entries[]] | group_by(.key)
		| map({key: .[0].key, value: {mode: (.[0].value.mode | mode), entries: ([.[].value.offsets | length] | add)}})
		| from_entries),
	handles: ([.subtasks[] | .index as $i | .handles[] | "\($i) \(.scope) \(.class | kind) \(.size)"] | sort),
	offsets: ([.subtasks[] | .index as $i | .handles[] | select(.states) | .states | to_entries[]
		| {key: "\($i)/\(.key)", value: .value.offsets}] | from_entries)
}}) | from_entries)}'

# jq: ckpt-inspect's summary and -a of the same file (slurped: [summary, all]) in that shape.  The
# summary's keyed states (issue 38) are not in the _metadata Flink's sidecar reads: their counts are
# checked against -R's rows (t/summary.bats) and the job's own record (state.bats).
JQ_CKPT='.[0] as $s | .[1] as $a | {checkpoint_id: $s.checkpoint_id, operators: ($s.operators | map(.id as $id | {key: .id, value: {
	uid, name, parallelism, max_parallelism, fully_finished, coordinator_bytes,
	subtasks, finished_subtasks, in_flight_bytes, key_groups,
	states: (.states | map(select(.mode != "keyed") | {key: .name, value: {mode, entries}}) | from_entries),
	handles: ([.handles[]? | "\(.subtask) \(.scope) \(.kind) \(.size)"] | sort),
	offsets: ([$a.operators[] | select(.id == $id) | .subtasks[] | .index as $i | .handles[]?
		| select(.states) | .states[] | {key: "\($i)/\(.name)", value: .offsets}] | from_entries)
}}) | from_entries)}'

# Print "path = value" for every leaf of a JSON document, one a line, sorted.
JQ_LEAVES='paths(type != "object" and type != "array") as $p | "\($p | map(tostring) | join(".")) = \(getpath($p) | tojson)"'

# jq, with --slurpfile R (a restore's sidecar) and --slurpfile S (the restored artifact's
# sidecar): what each operator subtask of Flink's restore reported from initializeState, each list
# or union element named "OLD_SUBTASK:INDEX" by where the job had put it (the artifact's contents).
# Elements are compared as sets, sorted: within a new subtask Flink restores the old handles in
# the order of a HashMap keyed by state handle (RoundRobinOperatorStateRepartitioner's merge
# map), an order of hash codes; ckpt-merge deliberately uses old-subtask order (its man page).
JQ_RESTORED='def numsort: sort_by(split(":") | map(tonumber? // .));
($S[0].contents // {}) as $c
| def where($uid; $name; $e): [$c | to_entries[] | select(.key | startswith($uid + "/"))
	| (.key | split("/")[1]) as $old | .value[$name] // [] | to_entries[] | select(.value == $e)
	| "\($old):\(.key)"] | first // ("unknown " + $e);
[$R[0].reports[] | .uid as $u | {key: "\(.uid)/\(.subtask)", value: (
	if .list then {list: (.list | with_entries(.key as $n | .value |= (map(where($u; $n; .)) | numsort)))}
	elif .union then {union: (.union | with_entries(.key as $n | .value |= (map(where($u; $n; .)) | numsort)))}
	elif .broadcast then {broadcast: (.broadcast | map_values(keys))}
	else {key_groups: (.key_groups | if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end)} end)}]
| from_entries'

# jq, with --slurpfile R and --slurpfile S, on ckpt-merge'"'"'s assignment: the same shape.  At
# unchanged parallelism ckpt-merge leaves a subtask's "key_groups" out (its man page shows it);
# the key groups are then those of its old subtask in "from".
JQ_ASSIGNED='def numsort: sort_by(split(":") | map(tonumber? // .));
($S[0].contents // {}) as $c
| ($R[0].job.operators | map({key: .id, value: .uid}) | from_entries) as $uid
| def expand: if . == null or . == "" then [] else split(",") | map(split("-") | map(tonumber)
	| if length == 1 then [.[0]] else [range(.[0]; .[1] + 1)] end) | add end;
[.operators[] | ($uid[.id] // .uid) as $u | select($u == "src-union" or $u == "src-finishing"
	or $u == "map-list" or $u == "keyed" or $u == "broadcast") | .subtasks[] | {key: "\($u)/\(.index)", value: (
	if $u == "src-union" then {union: ([.from[] | .subtask as $o | (.union // [])[] as $n
		| {n: $n, e: [range(0; $c["\($u)/\($o)"][$n] | length) | "\($o):\(.)"]}]
		| group_by(.n) | map({key: .[0].n, value: ([.[].e[]] | numsort)}) | from_entries)}
	elif $u == "broadcast" then {broadcast: ([.from[] | .subtask as $o | (.broadcast // [])[] as $n
		| {key: $n, value: ($c["\($u)/\($o)"][$n] | keys)}] | from_entries)}
	elif $u == "keyed" then {key_groups: (.key_groups // ([.from[].key_groups // empty] | join(",")))}
	else {list: ([.from[] | .subtask as $o | (.list // {}) | to_entries[]
		| {n: .key, e: [.value.elements | expand | .[] | "\($o):\(.)"]}]
		| group_by(.n) | map({key: .[0].n, value: ([.[].e[]] | numsort)}) | from_entries)} end)}]
| from_entries'

# The class path of the harness built for Flink VERSION (run.sh: t/flink/target/VERSION/, of this
# tree, else of the tree whose build/flink FLINK_OUT is).
flink_classpath() {
	local d
	for d in "$T/target/$1" "$FLINK_OUT/../../t/flink/target/$1"; do
		if [ -f "$d/classpath.txt" ] && [ -f "$d/classes/ckpt/flink/Restore.class" ]; then
			echo "$d/classes:$(cat "$d/classpath.txt")"
			return 0
		fi
	done
	return 1
}

# flink_java VERSION ARG...: ckpt.flink.Main of that line's harness, with run.sh's JVM options
# (`flink_java 2.3.0 restore OUT.json SAVEPOINT_DIR ...`: Restore.java; README).
flink_java() {
	local v=$1 cp
	shift
	cp=$(flink_classpath "$v") || { echo "no harness classes for Flink $v under $T/target/$v (run t/flink/run.sh)" >&2; return 2; }
	java -Xmx700m -XX:+UseSerialGC --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED -cp "$cp" ckpt.flink.Main "$@"
}

# jq: a sidecar's "contents" (the job's record, per "UID/SUBTASK") in the shape of its "spa" (README):
# list and union elements of all subtasks together, sorted; the broadcast entries once; every key.
# Applied to {"contents": X} it puts any document of the contents' shape in the spa's.
# "ambig" is left out: its state is in String namespaces, and the State Processor API's
# readKeyedState reads state in VoidNamespace only.
JQ_CONTENTS='.contents | to_entries | map(.key |= split("/")[0]) | map(select(.key != "ambig")) | group_by(.key)
| map({key: .[0].key, value: (
	if .[0].key == "keyed" then {keys: ([.[].value.keys] | add | map_values({count, "multiples-of-3": .["multiples-of-3"],
		"by-source": .["by-source"], sum, event_timers: [.event_timer], processing_timers: [.processing_timer]}))}
	elif .[0].key == "broadcast" then {rules: ([.[].value.rules] | add)}
	else ([.[].value | to_entries[]] | group_by(.key) | map({key: .[0].key, value: ([.[].value[]] | sort)}) | from_entries)
	end)})
| from_entries'

# ckpt_state DIR OUT: ckpt-inspect's summary and -a of DIR, one after the other, to OUT, for JQ_STATE
# and JQ_SST_CKPT (status: ckpt-inspect's, when not 0).
# jq 1.6 reads every number as a double, and the processing-time timers (near 2^62) are beyond
# one: a timer's "timestamp" (ckpt-state(5): only timers have the member; a string cannot hold
# `"timestamp":` unescaped) becomes a decimal string here, as the sidecars write timers.
ckpt_state() {
	ckpt-inspect "$1" >summary.json && ckpt-inspect --raw -a "$1" >all.json || return
	cat summary.json all.json | sed -E 's/"timestamp":(-?[0-9]+)/"timestamp":"\1"/g' >"$2"
}

# ckpt_rows DIR OUT: as ckpt_state, the rows of ckpt-inspect -R of DIR made back into the typed
# entries of a document (JQ_ROWS_DOC) for JQ_STATE: -R gives what --raw -a types, row for row.
ckpt_rows() {
	ckpt-inspect "$1" >summary.json && ckpt-inspect -R "$1" >rows.ndjson || return
	sed -E '/"kind":"timers"/ s/"value":(-?[0-9]+)/"value":"\1"/' rows.ndjson | jq -s "$JQ_ROWS_DOC" >all.json || return
	cat summary.json all.json | sed -E 's/"timestamp":(-?[0-9]+)/"timestamp":"\1"/g' >"$2"
}

# jq, slurping -R's rows: a document of their typed entries (operator state by state, its elements
# by index, a broadcast state's entries as one map; keyed entries, a list state's elements by key,
# namespace and index as one list, a timer's value as its timestamp).
JQ_ROWS_DOC='{operators: (group_by(.operator) | map({id: .[0].operator, uid: .[0].uid,
	subtasks: (group_by(.subtask) | map({index: .[0].subtask, finished: false,
		operator_state: (map(select(has("key_group") | not)) | group_by(.state) | map({key: .[0].state,
			value: {mode: .[0].kind, typed: (if .[0].kind == "broadcast" then [map({key: .user_key, value})]
				else sort_by(.index) | map(.value) end)}}) | from_entries),
		keyed_state: {entries: (map(select(has("key_group")))
			| group_by([.state, .key_group, (.key | tojson), (.namespace | tojson)]) | map(
				if .[0].kind == "list" then [{state: .[0].state, key_group: .[0].key_group,
					typed: {key: .[0].key, namespace: .[0].namespace, value: (sort_by(.index) | map(.value))}}]
				elif .[0].kind == "timers" then map({state, key_group, typed: {timestamp: .value, key, namespace}})
				else map({state, key_group, typed: ({key, namespace} + (if has("user_key") then {user_key} else {} end)
					+ {value})}) end) | add // [])}}))}))}'

# jq, slurping ckpt_state's output, with --slurpfile S (the artifact's sidecar, for each operator
# id's uid): the typed entries of ckpt-inspect --raw -a in the shape of the sidecar's "contents", per
# "UID/SUBTASK" (finished subtasks and subtasks holding nothing left out).  Operator state: list
# and union elements in order; a broadcast state as an object.  Keyed state by key (decimal): its
# key group, per state by the kind the summary gives it: a map state as an object, a list state
# sorted (the job records its list sorted), a value or reducing state as the value, a timer state
# as the timestamp ("event_timer", "processing_timer" for the job's "user-timers" service); a state
# in namespaces other than VoidNamespace (null) as an object by namespace of the same.  What is
# not one thing where the job has one (two key groups or entries for one key, state and
# namespace, a map key twice, a namespace where the job has none) is kept as found, so it differs.
JQ_STATE='.[0] as $s | .[1] as $a
| ($S[0].job.operators | map({key: .id, value: .uid}) | from_entries) as $uid
| ([$s.operators[] | {key: .id, value: ([.flink_state.states[]? | {key: .name, value: .kind}] | from_entries)}]
	| from_entries) as $kind
| def one: if length == 1 then .[0] else . end;
def obj: if (map(.key) | unique | length) == length then map({key: (.key | tostring), value}) | from_entries
	else {duplicate_keys: .} end;
def vals(f): if length == 1 then .[0].typed | f else {duplicate_entries: map(.typed)} end;
def timer: {"_timer_state/event_user-timers": "event_timer",
	"_timer_state/processing_user-timers": "processing_timer"}[.] // .;
def val($k): if $k == "timers" then vals(.timestamp)
	elif $k == "map" and (.[0].typed | has("user_key")) then map({key: .typed.user_key, value: .typed.value}) | obj
	elif $k == "map" then vals(.value | if type == "array" then obj else . end)
	elif $k == "list" then vals(.value | if type == "array" then sort else . end)
	else vals(.value) end;
[$a.operators[] | .id as $id | ($uid[.id] // .uid // .id) as $u | .subtasks[] | select(.finished | not)
	| ((.operator_state // {} | with_entries(.value |= if .mode == "broadcast"
		then (.typed // [] | map(if type == "array" then obj else . end) | one) else .typed end))
	+ if (.keyed_state.entries // []) == [] then {} else {keys: (.keyed_state.entries | group_by(.typed.key)
		| map({key: (.[0].typed.key | tostring), value: ({key_group: ([.[].key_group] | unique | one)}
			+ (group_by(.state) | map(.[0].state as $n | $kind[$id][$n] as $k | {key: ($n | timer), value: (
				if ([.[].typed.namespace] | unique) == [null] then val($k)
				else group_by(.typed.namespace) | map({key: .[0].typed.namespace, value: val($k)}) | obj end)})
				| from_entries))})
		| from_entries)} end) as $c
	| select($c != {}) | {key: "\($u)/\(.index)", value: $c}]
| from_entries'

# jq, slurping ckpt_state's output, with --slurpfile S: what ckpt-inspect --raw -a lists of each RocksDB
# native or incremental keyed handle (whose SST files ckpt does not read), per "UID/SUBTASK": its
# size, checkpointed size and key groups as recorded, the number of shared files (and of those
# named *.sst: RocksDB's shared files are its SST files) and private files, and "listed": the
# sizes of the meta data handle and every file listed, added up (Flink's state size is that sum).
JQ_SST_CKPT='.[1] | ($S[0].job.operators | map({key: .id, value: .uid}) | from_entries) as $uid
| [.operators[] | ($uid[.id] // .uid // .id) as $u | .subtasks[] | .index as $i | .handles[]?
	| select(.scope == "managed_keyed" and .kind == "incremental")
	| {key: "\($u)/\($i)", value: {size, checkpointed_size, key_groups, shared_files: (.shared | length),
		sst_files: ([.shared[] | select(.local_name | endswith(".sst"))] | length),
		private_files: (.private | length), listed: ([.meta.size, .shared[].size, .private[].size] | add)}}]
| from_entries'
# jq: the same of a sidecar's metadata (IncrementalRemoteKeyedStateHandle).
JQ_SST_FLINK='(.job.operators | map({key: .id, value: .uid}) | from_entries) as $uid
| [.metadata.operators[] | ($uid[.id] // .uid // .id) as $u | .subtasks[] | .index as $i | .handles[]
	| select(.scope == "managed_keyed" and .class == "IncrementalRemoteKeyedStateHandle")
	| {key: "\($u)/\($i)", value: {size, checkpointed_size,
		key_groups: (.key_groups | if .[0] == .[1] then "\(.[0])" else "\(.[0])-\(.[1])" end),
		shared_files, sst_files: .shared_files, private_files, listed: .size}}]
| from_entries'

# differ WHAT A B: A and B (JSON files) leaf by leaf; each difference as "WHAT: FIELD: ckpt X, flink
# Y" ("(none)" for a leaf on one side only); status 1 when any.
differ() {
	join -j1 -t'|' -a1 -a2 -e '(none)' -o 0,1.2,2.2 \
		<(jq -r "$JQ_LEAVES" "$2" | sed 's/ = /|/' | sort -t'|' -k1,1) \
		<(jq -r "$JQ_LEAVES" "$3" | sed 's/ = /|/' | sort -t'|' -k1,1) |
		awk -F'|' -v a="$1" '$2 != $3 { print a ": " $1 ": ckpt " $2 ", flink " $3; bad = 1 } END { exit bad }'
}

# ---- Flink's restores of what ckpt-merge wrote (canonical.bats, edit.bats, maxpar.bats, rows.bats)
# Their setup_file writes, per Flink line, ckpt-merge's outputs into $W/VERSION/ (W=$BATS_FILE_TMPDIR),
# each run's stderr in NAME.ckpt closed by a line "status N", then calls restore_all with the
# restores, and ends with `wait`.

# restore_all VERSION OUT.json SAVEPOINT_DIR [OPTION...]...: the restores (Restore.java: one JVM for
# them all), in the background, the lines' JVMs side by side (most of each is the MiniCluster's
# start); its output in $W/VERSION/restore.log, closed by "status N" when it failed.
restore_all() {
	local v=$1
	shift
	{ flink_java "$v" restore "$@" >"$W/$v/restore.log" 2>&1 || echo "status $?" >>"$W/$v/restore.log"; } &
}

# restore_setup [OPTION]: their setup(): W, into the test's own directory; the test skips when
# ckpt-merge's -h does not list OPTION, or without the harness's artifacts.
restore_setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	[ -z "${1:-}" ] || ckpt-merge -h 2>&1 | grep -q -- "$1" || skip "ckpt-merge has no $1"
	[ -n "$(flink_versions)" ] || skip "no harness artifacts (make flink-fixtures)"
}

# restored NAME OUT [CKPT]: ckpt-merge's run (its CKPT file, when given) exited 0, Restore wrote OUT
# and Flink accepted the restore; else one line naming NAME and why, status 1.
restored() {
	[ -z "${3:-}" ] || grep -qx 'status 0' "$3" || { echo "$1: ckpt-merge failed: $(cat "$3")"; return 1; }
	[ -f "$2" ] || { echo "$1: no restore written ($(tail -3 "${2%/*}/restore.log"))"; return 1; }
	[ "$(jq -r .accepted "$2")" = true ] || { echo "$1: Flink refused: $(jq -r .message "$2")"; return 1; }
}

# jq: a restore's reports, list and union elements sorted (a new subtask gets the old handles in an
# order of hash codes: JQ_RESTORED), by operator and subtask.
JQ_REPORTS='[.reports[] | (if .list then .list |= map_values(sort) else . end)
	| (if .union then .union |= map_values(sort) else . end)] | sort_by(.uid, .subtask)'

# same_reports NAME OUT PLAIN [JQ_FILTER]: the reports of restore OUT equal those of restore PLAIN,
# both through JQ_REPORTS and JQ_FILTER (say leaving out key groups or an operator), PLAIN's not
# empty; else the difference, status 1.
same_reports() {
	local f="$JQ_REPORTS | ${4:-.}"
	[ "$(jq "[$f[]] | length" "$3")" -gt 0 ] || { echo "$1: the plain restore ${3##*/} reported nothing"; return 1; }
	diff -u <(jq -S "$f" "$3") <(jq -S "$f" "$2") >reports.diff ||
		{ echo "$1: the reports differ from those of the plain restore ${3##*/}:"; head -40 reports.diff; return 1; }
}

# jq: the keys the keyed operator reports restoring, over its subtasks: {"KEY": {count, sum}}.
JQ_KEYS='[.reports[] | select(.uid == "keyed") | .keys] | add | map_values({count, sum})'
# jq, slurping ckpt-inspect -R's rows of the keyed operator: the same of its states "count" and "sum".
JQ_ROWS_KEYS='map(select(.state == "count" or .state == "sum")) | group_by(.key | tostring)
	| map({key: (.[0].key | tostring), value: (map({(.state): .value}) | add)}) | from_entries'

# same_keys NAME OUT ROWS: the keys the keyed operator restored (restore OUT), each key's count and
# sum, are those of ROWS (-R's rows of it, one a line; some there); else the difference, status 1.
same_keys() {
	jq -s -S "$JQ_ROWS_KEYS" "$3" >rows-keys.json
	[ "$(jq length rows-keys.json)" -gt 0 ] || { echo "$1: no count or sum in the rows ${3##*/}"; return 1; }
	jq -S "$JQ_KEYS" "$2" >restored-keys.json
	diff -u rows-keys.json restored-keys.json >keys.diff ||
		{ echo "$1: Flink restored other keys or values than the rows ${3##*/}:"; head -40 keys.diff; return 1; }
}

# ---- SqlJob's state (sql.bats, restoreenc.bats)
# jq over -R's rows (slurped), $ops the sidecar's operators (by id: a 1.20 savepoint holds no
# uid): per kind of SQL operator the
# sidecar's shape.  A row is [fields...]; a join record its fields as JSON text (as the harness
# writes it), with its count; a window by its namespace (TimeWindow: start, end).
JQ_SQL='def id(k): $ops | map(select(.kind == k)) | .[0].id;
def row: [.fields[]];
def of(k; s): map(select(.operator == id(k) and .state == s));
def records(s): of("join"; s) | group_by(.key.fields.f0)
	| map({key: .[0].key.fields.f0, value: (map({key: (.user_key | row | tojson), value: .value}) | from_entries)}) | from_entries;
{group: (of("group"; "accState") | map({key: .key.fields.f0, value: (.value | row)}) | from_entries),
 "dedup-last": (of("dedup-last"; "deduplicate-state") | map({key: .key.fields.f0, value: (.value | row)}) | from_entries),
 "dedup-first": (of("dedup-first"; "deduplicate-state") | map({key: .key.fields.f0, value: (.value | row)}) | from_entries),
 "dedup-first-emitted": (of("dedup-first"; "already-emitted-state-boolean") | map({key: .key.fields.f0, value: .value}) | from_entries),
 join: {left: records("left-records"), right: records("right-records")},
 window: (of("window"; "window-aggs") | map({key: .key.fields.f0,
	value: {window_start: .namespace.start, window_end: .namespace.end, acc: (.value | row)}}) | from_entries),
 "window-timers": (of("window"; "_timer_state/event_window-timers") | map({key: .key.fields.f0, value: .value}) | from_entries),
 topn: (of("topn"; "data-state-with-append") | group_by(.key.fields.f0)
	| map({key: .[0].key.fields.f0, value: ([.[].value[] | row] | sort_by(.[2] | -tonumber))}) | from_entries)}'

# jq over a sidecar (or RestoreEnc's restore-sql output): its "spa" in JQ_SQL's shape, without the window.
JQ_SPA='.spa as $s | {group: $s.group.states.accState,
	"dedup-last": $s["dedup-last"].states["deduplicate-state"],
	"dedup-first": ($s["dedup-first"].states["deduplicate-state"] // {}),
	"dedup-first-emitted": ($s["dedup-first"].states["already-emitted-state-boolean"] // {}),
	join: {left: $s.join.states["left-records"], right: $s.join.states["right-records"]},
	topn: ($s.topn.states["data-state-with-append"] | map_values([.[][]] | sort_by(.[2] | -tonumber)))}'

