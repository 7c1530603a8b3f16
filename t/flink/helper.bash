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
	"MergedInputChannelStateHandle": "merged_channels", "MergedResultSubpartitionStateHandle": "merged_channels",
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

# jq: ckpt-inspect's summary and -a of the same file (slurped: [summary, all]) in that shape.
JQ_CKPT='.[0] as $s | .[1] as $a | {checkpoint_id: $s.checkpoint_id, operators: ($s.operators | map(.id as $id | {key: .id, value: {
	uid, name, parallelism, max_parallelism, fully_finished, coordinator_bytes,
	subtasks, finished_subtasks, in_flight_bytes, key_groups,
	states: (.states | map({key: .name, value: {mode, entries}}) | from_entries),
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
