# The checks of flinkforms.bats over every artifact of $ART (flink-artifacts/), with the table
# $PENDING of that file; run as a script (bash flinkforms-helper.bash FUNCTION ...), so that its
# loops escape bats' per-command trap.

FORMS='hashmap-savepoint rocksdb-savepoint hashmap-checkpoint hashmap-savepoint-native rocksdb-checkpoint rocksdb-savepoint-native'
CHECKS='summary check entries diff'

# The normal form of `ckpt-inspect --raw -a`: one line per operator (id, uid, name, parallelisms,
# finished subtasks), per operator state of a subtask (name, mode, typed elements) and per keyed
# entry (state, key group, typed key, namespace, value or timestamp), keyed entries sorted. Left
# out, as they differ from form to form by right: handles (kinds, sizes, paths), the "flink"
# member (checkpoint id, properties, files), the bytes Flink wrote (raw keys carry the key-group
# prefix in one layout and not in another), and the timestamps of processing-time timers (each
# form was written by a run of its own). What is not typed stays as {"untyped": raw} and never
# counts as equal.
NORMAL='
def elements: [.entries, (.typed // [])] | transpose
	| map(if .[1] == null then {untyped: .[0]} else .[1] end);
.operators | sort_by(.id)[] | .id as $op |
	{operator: $op, uid, name, parallelism, max_parallelism, fully_finished,
	 finished: [.subtasks[] | select(.finished) | .index]},
	([.subtasks[] | .index as $i | (.operator_state // {}) | to_entries[] |
		{operator: $op, subtask: $i, operator_state: .key, mode: .value.mode,
		 elements: (.value | elements)}] | sort_by(.subtask, .operator_state)[]),
	([.subtasks[] | .keyed_state.entries // [] | .[] | .state as $s |
		{operator: $op, state, key_group} +
		if .typed == null then {untyped: {key, value}}
		elif ($s | startswith("_timer_state/processing_")) then .typed | del(.timestamp)
		else .typed end] | sort[])
'

# What of -d's answer is a difference in state: operators and states added, removed or rescaled,
# a state whose mode or count changed (its bytes differ by right: compressed in one form, not in
# another), and entries added, removed or changed, except processing-time timers that differ in
# their timestamp alone (as many added as removed in each key group). No difference: {}. A -d that
# compared no entries (no "state" member) is a difference.
DIFFERENCE='
{operators_added, operators_removed, operators_rescaled, states_added, states_removed,
 states_resized: [.states_resized[] | select(.mode[0] != .mode[1] or .entries[0] != .entries[1])],
 state: (if has("state") then .state | map_values(with_entries(select(
	(.key | startswith("_timer_state/processing_")) and .value.changed == 0 and
	([.value.key_groups[] | select(.added != .removed or .changed != 0)] | length) == 0 | not)))
	| with_entries(select(.value != {}))
	else "not compared" end)}
| with_entries(select(.value != [] and .value != {}))
'

[ -z "${ART-}" ] || ART=$(cd "$ART" && pwd) || exit 2

# The rows of $PENDING: ROW_GLOB, ROW_CHECKS (",a,b,"), ROW_REASON.
ROW_GLOB=() ROW_CHECKS=() ROW_REASON=()
while read -r glob checks reason; do
	[ -n "$glob" ] || continue
	ROW_GLOB+=("$glob") ROW_CHECKS+=(",$checks,") ROW_REASON+=("$reason")
done <<<"${PENDING-}"
unset glob checks reason

# artifacts: every snapshot directory of $ART, one a line.
artifacts() {
	local d
	for d in "$ART"/*/_metadata; do
		d=${d%/_metadata}
		printf '%s\n' "${d##*/}"
	done
}

# canonical NAME: the hashmap-savepoint of NAME's job and release, into C (fails on an unknown form).
canonical() {
	local f
	for f in hashmap-savepoint-native rocksdb-savepoint-native hashmap-checkpoint rocksdb-checkpoint \
		hashmap-savepoint rocksdb-savepoint; do
		case $1 in *-"$f")
			C=${1%-"$f"}-hashmap-savepoint
			return 0 ;;
		esac
	done
	return 1
}

# pending NAME CHECK: into R the index of the first row of $PENDING that matches NAME and names
# CHECK; fails when there is none.
pending() {
	for R in "${!ROW_GLOB[@]}"; do
		# shellcheck disable=SC2053 # the pattern is meant as one
		[[ $1 == ${ROW_GLOB[R]} && ${ROW_CHECKS[R]} == *,"$2",* ]] && return 0
	done
	return 1
}

# inspect ERR ARGS...: ckpt-inspect ARGS, its stderr to ERR. A status above 2 or a sanitizer's
# report is a crash, appended to $CRASHES: a crash fails the check, pending or not.
inspect() {
	local err=$1 rc
	shift
	ckpt-inspect "$@" 2>"$err"
	rc=$?
	if [ "$rc" -gt 2 ] || grep -qE 'Sanitizer|runtime error:' "$err"; then
		echo "ckpt-inspect ${*##*/} exits $rc: $(grep -m1 -E 'Sanitizer|runtime error:' "$err" || head -1 "$err")" >>"$CRASHES"
	fi
	return "$rc"
}

# normal NAME OUT: the normal form of NAME's -a to OUT; fails (the error in OUT.err) when -a does.
# Integers beyond 2^53 are quoted first, as jq 1.6 would round them (an event timer at Long.MIN_VALUE).
normal() {
	inspect "$2.err" --raw -a "$ART/$1" >"$2.raw" || return
	perl -pe 's/(?<=[:,\[])(-?\d{16,})(?=[,\]}])/"$1"/g' "$2.raw" | jq -cS "$NORMAL" >"$2" 2>"$2.err" ||
		{ sed -i '1s/^/jq on the output of -a: /' "$2.err"; return 1; }
}

# first_difference A B: the first hunk of the diff of two normal forms, indented.
first_difference() {
	diff -U1 "$1" "$2" | awk 'NR <= 2 { next } /^@@/ && ++h > 1 { exit } { print "    " $0 }' | head -20
}

# verdict NAME CHECK: run CHECK on NAME in the current directory; 0 when it passes, else 1 with
# why on stdout.
verdict() {
	local out rc opt=
	canonical "$1" || { echo "not one of the forms $FORMS"; return 1; }
	case $2 in
	summary | check)
		[ "$2" = check ] && opt=-c
		inspect err.txt $opt "$ART/$1" >/dev/null && return 0
		rc=$?
		echo "exits $rc: $(head -1 err.txt)"
		return 1 ;;
	entries)
		# each canonical savepoint read once, in ../canonical
		[ -e "../canonical/$C" ] || [ -e "../canonical/$C.failed" ] ||
			normal "$C" "../canonical/$C" || echo >"../canonical/$C.failed"
		if [ -e "../canonical/$C.failed" ]; then
			echo "the -a of $C fails: $(head -1 "../canonical/$C.err")"
			return 1
		fi
		if ! normal "$1" form.nf; then
			echo "-a fails: $(head -1 form.nf.err)"
			return 1
		fi
		if ! cmp -s "../canonical/$C" form.nf; then
			echo "its entries differ from those of $C (- canonical, + this form):"
			first_difference "../canonical/$C" form.nf
			return 1
		fi
		if grep -q '"untyped":' form.nf; then
			echo "equal to $C but not typed, first: $(grep -m1 '"untyped":' form.nf | cut -c1-300)"
			return 1
		fi ;;
	diff)
		out=$(inspect err.txt -d "$ART/$C" "$ART/$1")
		rc=$?
		if [ "$rc" -gt 1 ]; then
			echo "-d $C exits $rc: $(head -1 err.txt)"
			return 1
		fi
		if ! out=$(printf '%s\n' "$out" | jq -c "$DIFFERENCE" 2>&1); then
			echo "jq on the output of -d $C: $out"
			return 1
		fi
		if [ "$out" != '{}' ]; then
			echo "-d $C reports a difference in state: $(printf '%s' "$out" | cut -c1-600)"
			return 1
		fi ;;
	*)
		echo "no check '$2'"
		return 1 ;;
	esac
}

# forms_pass CHECK: CHECK on every artifact, each in a temporary directory of its own. An artifact
# not pending must pass, a pending one must still fail; every one that does not is named, with
# why, and the status is 1. The last line counts those that pass. With VERBOSE set in the
# environment, every pending one is named too, with why it fails today.
forms_pass() {
	local name why passed top bad=0 n=0 ok=0 np=0
	top=$(mktemp -d) && mkdir "$top/canonical" || return 2
	CRASHES=$top/crashes
	for name in $(artifacts); do
		n=$((n + 1))
		rm -rf "$top/work" && mkdir "$top/work" && cd "$top/work" || return 2
		passed=
		if why=$(verdict "$name" "$1"); then
			passed=1 ok=$((ok + 1))
		else
			why=${why:-fails}
		fi
		if [ -s "$CRASHES" ]; then
			echo "$name: $1: crashed: $(head -1 "$CRASHES")"
			bad=$((bad + 1))
			rm -f "$CRASHES"
			continue
		fi
		if pending "$name" "$1"; then
			np=$((np + 1))
			[ -z "${VERBOSE-}" ] || echo "$name: $1: pending (${ROW_REASON[R]}): ${why%%$'\n'*}"
			if [ -n "$passed" ]; then
				echo "$name: now passes '$1' (${ROW_REASON[R]}): take '$1' out of PENDING's row '${ROW_GLOB[R]}'"
				bad=$((bad + 1))
			fi
		elif [ -z "$passed" ]; then
			echo "$name: $1: $why"
			bad=$((bad + 1))
		fi
	done
	cd / && rm -rf "$top"
	echo "$1: $ok of $n artifacts pass, $np pending"
	[ "$n" -gt 0 ] && [ "$bad" -eq 0 ]
}

# layout: every artifact is one of the six forms, with its canonical hashmap-savepoint beside it.
layout() {
	local name n=0
	for name in $(artifacts); do
		n=$((n + 1))
		canonical "$name" || { echo "$name: not one of the forms $FORMS"; return 1; }
		[ -f "$ART/$C/_metadata" ] || { echo "$name: no $C beside it"; return 1; }
	done
	[ "$n" -gt 0 ] || { echo "no snapshot in $ART"; return 1; }
}

# rows: every row of $PENDING has a reason, names known checks, and is the first row (the reason)
# for some artifact and one of its checks.
rows() {
	local i c name names
	names=$(artifacts)
	declare -A used=()
	for name in $names; do
		for c in $CHECKS; do
			pending "$name" "$c" && used[$R]=1
		done
	done
	for i in "${!ROW_GLOB[@]}"; do
		[ -n "${ROW_REASON[i]}" ] || { echo "row '${ROW_GLOB[i]}': no reason"; return 1; }
		for c in ${ROW_CHECKS[i]//,/ }; do
			[[ " $CHECKS " == *" $c "* ]] || { echo "row '${ROW_GLOB[i]}': no check '$c'"; return 1; }
		done
		[ -n "${used[$i]-}" ] || {
			echo "row '${ROW_GLOB[i]}' ${ROW_CHECKS[i]}: matches no artifact, or rows above it shadow it"
			return 1
		}
	done
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	"$@"
fi
