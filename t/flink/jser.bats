#!/usr/bin/env bats
# ckpt-merge --rows on state Flink's JavaSerializer writes (issue 40 section 3, "Java-serialized
# values"), verified by Flink.  JSerJob.java's job (README "JavaSerializer state"): its keyed
# operator "jser" keeps per key k0..k5 value state "jv" (java.lang.String, java.lang.Integer or a
# serializable user class, ckpt.flink.JSerJob$Point) and list state "jl" (java.lang.Long and
# java.lang.String elements), both with org.apache.flink.runtime.state.JavaSerializer; its
# canonical HashMap savepoint is build/flink/VERSION/jser/jser-hashmap-canonical and
# jser/sidecar.json "contents" the job's own record of what it put.
#
#   read      ckpt-inspect -R of the savepoint, per key, is the job's record.
#   restores  `ckpt-merge --rows` with two values changed (an Integer, a field of the user
#             class), a list element changed, one deleted and one added: Flink restores the
#             result (HashMap and RocksDB) and its operator reads exactly the rows given; the
#             unedited savepoint restored alike reads the job's record (the control: it differs
#             from the rows given, so the check can fail).

load helper
bats_require_minimum_version 1.5.0

# jq -s over -R rows: per key {"jv": VALUE, "jl": [ELEMENTS by index]}, the shape of the sidecar's
# "contents" and of jser-restore's "keys".
JQ_KEYS='group_by(.key) | map({key: .[0].key, value: ((map(select(.state == "jv")) | if length > 0 then {jv: .[0].value} else {} end)
	+ (map(select(.state == "jl")) | sort_by(.index) | if length > 0 then {jl: map(.value)} else {} end))}) | from_entries'

# The edit: k1's Integer 7 -> 70, k4's Point x 3 -> 9; k0's element 1 (2) -> 20; k3's element 1
# (200) deleted; k1's list gains "z" at index 2.
EDIT='select(.state != "jl" or .key != "k3" or .index != 1)
	| if .state == "jv" and .key == "k1" then .value = 70
	elif .state == "jv" and .key == "k4" then .value.x = 9
	elif .state == "jl" and .key == "k0" and .index == 1 then .value = 20
	else . end'

setup_file() {
	local v b sp
	W=$BATS_FILE_TMPDIR
	for v in $(flink_versions); do
		b=$FLINK_OUT/$v
		[ -f "$b/jser/sidecar.json" ] || continue
		sp=$b/$(jq -r .path "$b/jser/sidecar.json")
		mkdir -p "$W/$v"
		ckpt-inspect -R -u jser "$sp" >"$W/$v/rows" 2>"$W/$v/inspect.err"
		{
			jq -c "$EDIT" "$W/$v/rows"
			jq -c 'select(.state == "jl" and .key == "k1" and .index == 1) | .index = 2 | .value = "z"' "$W/$v/rows"
		} >"$W/$v/edited.rows"
		ckpt-merge --rows "$W/$v/edited.rows" -o "$W/$v/edited/" "$sp" >"$W/$v/merge.log" 2>&1
		echo "status $?" >>"$W/$v/merge.log"
		{ flink_java "$v" jser-restore "$W/$v/plain.json" "$sp" "$W/$v/edited.json" "$W/$v/edited" \
			"$W/$v/edited-rocksdb.json" "$W/$v/edited" --backend rocksdb >"$W/$v/restore.log" 2>&1 ||
			echo "status $?" >>"$W/$v/restore.log"; } &
	done
	wait
}

# Skip without any harness run; a line whose harness ran without the job (older harness sources) fails.
setup() {
	W=$BATS_FILE_TMPDIR
	cd "$BATS_TEST_TMPDIR" || return 1
	local v
	[ -n "$(flink_versions)" ] || skip "no Flink artifacts (run t/flink/run.sh)"
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/jser/sidecar.json" ] || { echo "Flink $v: the harness wrote no jser/ (rerun t/flink/run.sh)"; return 1; }
	done
}

# jser_versions: the lines whose harness wrote the job's savepoint.
jser_versions() {
	local v
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/jser/sidecar.json" ] && echo "$v"
	done
}

# accepted V NAME: Flink restored W/V/NAME.json's savepoint, every probe read.
accepted() {
	[ -f "$W/$1/$2.json" ] || { echo "$1: no $2.json"; cat "$W/$1/restore.log" "$W/$1/merge.log"; return 1; }
	[ "$(jq -r .accepted "$W/$1/$2.json")" = true ] || { echo "$1 $2: not accepted: $(jq -r .message "$W/$1/$2.json")"; return 1; }
}

@test "jser: ckpt-inspect -R of the JavaSerializer state (String, Integer, Long, a user class) is the job's record" {
	local v
	for v in $(jser_versions); do
		[ -s "$W/$v/rows" ] || { echo "$v: no rows"; cat "$W/$v/inspect.err"; return 1; }
		diff <(jq -S .contents "$FLINK_OUT/$v/jser/sidecar.json") <(jq -s -S "$JQ_KEYS" "$W/$v/rows") ||
			{ echo "$v: -R differs from the job's record"; return 1; }
		# every value typed, none left as bytes
		run jq -s -c '[.[] | .value | select(type == "object" and has("base64"))] | length' "$W/$v/rows"
		[ "$output" = 0 ]
	done
}

@test "jser: Flink restores ckpt-merge --rows of JavaSerializer state (values and list elements changed, deleted, added), reading exactly the rows given" {
	local v n
	for v in $(jser_versions); do
		grep -qx 'status 0' "$W/$v/merge.log" || { echo "$v: ckpt-merge:"; cat "$W/$v/merge.log"; return 1; }
		# ckpt reads back what it wrote
		diff <(jq -s -S "$JQ_KEYS" "$W/$v/edited.rows") <(ckpt-inspect -R -u jser "$W/$v/edited" | jq -s -S "$JQ_KEYS")
		for n in edited edited-rocksdb; do
			accepted "$v" "$n"
			diff <(jq -s -S "$JQ_KEYS" "$W/$v/edited.rows") <(jq -S .keys "$W/$v/$n.json") ||
				{ echo "$v $n: Flink restored other values than the rows given"; return 1; }
		done
	done
}

@test "jser: the unedited savepoint restores the job's record, which the edited rows are not (the control)" {
	local v
	for v in $(jser_versions); do
		accepted "$v" plain
		diff <(jq -S .contents "$FLINK_OUT/$v/jser/sidecar.json") <(jq -S .keys "$W/$v/plain.json")
		run diff <(jq -S .keys "$W/$v/plain.json") <(jq -s -S "$JQ_KEYS" "$W/$v/edited.rows")
		[ "$status" -eq 1 ]
		# each edit is one of the differences
		run jq -c -s '.[0].keys as $p | .[1].keys as $e | [$p.k1.jv, $e.k1.jv, $p.k4.jv.x, $e.k4.jv.x, $p.k0.jl, $e.k0.jl,
			$p.k3.jl, $e.k3.jl, $p.k1.jl, $e.k1.jl]' "$W/$v/plain.json" "$W/$v/edited.json"
		[ "$output" = '[7,70,3,9,[1,2,3],[1,20,3],[100,200],[100],["x","y"],["x","y","z"]]' ] || { echo "$v: $output"; return 1; }
	done
}
