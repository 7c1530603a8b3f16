# Helpers for t/merge.bats: generated state documents and the invariants of a redistribution.

# gen_state SEED P MAXP NAMES: one operator "op" at parallelism P with NAMES operator states
# (list mostly, some union, one broadcast when NAMES > 2), some subtasks empty or missing a
# name, and keyed entries inside each subtask's key-group range.
gen_state() {
	awk -v seed="$1" -v P="$2" -v M="$3" -v N="$4" '
	function q(s) { return "\"" s "\"" }
	BEGIN {
		srand(seed)
		printf "{\"format\": \"ckpt-state\", \"version\": 1, \"checkpoint_id\": %d, \"kind\": \"checkpoint\", \"operators\": [", seed
		printf "{\"id\": \"op\", \"vertex\": \"op\", \"parallelism\": %d, \"max_parallelism\": %d, \"fully_finished\": false, \"coordinator\": null, \"subtasks\": [", P, M
		for (k = 0; k < N; k++)
			mode[k] = (k == N - 1 && N > 2) ? "broadcast" : (k % 4 == 3) ? "union" : "list"
		for (i = 0; i < P; i++) {
			printf "%s{\"index\": %d, \"finished\": false, \"operator_state\": {", i ? ", " : "", i
			c = 0
			for (k = 0; k < N; k++) {
				if (mode[k] != "broadcast" && rand() < 0.15)
					continue
				n = mode[k] == "broadcast" ? 2 : int(rand() * 9)
				printf "%s\"s%d\": {\"mode\": \"%s\", \"entries\": [", c++ ? ", " : "", k, mode[k]
				for (e = 0; e < n; e++)
					printf "%s%s", e ? ", " : "", q(mode[k] == "broadcast" ? "b" e : "o" i "s" k "e" e)
				printf "]}"
			}
			lo = int((i * M + P - 1) / P); hi = int(((i + 1) * M - 1) / P)
			printf "}, \"keyed_state\": {\"key_groups\": \"%d-%d\", \"entries\": [", lo, hi
			n = int(rand() * 6)
			for (e = 0; e < n; e++) {
				g = lo + int(rand() * (hi - lo + 1))
				printf "%s{\"state\": \"v\", \"key_group\": %d, \"key\": \"k%d.%d\", \"value\": \"%d\"}", e ? ", " : "", g, i, e, g
			}
			printf "]}}"
		}
		printf "]}]}\n"
	}'
}

# The list elements of every list name, sorted: what a rescale must keep.
list_multiset() {
	jq -c '[.operators[0].subtasks[].operator_state // {} | to_entries[]
		| select(.value.mode == "list") | .key as $k | .value.entries[] | [$k, .]] | sort' "$1"
}

# Per new subtask, the number of list elements over all names.
list_totals() {
	jq -c '.operators[0] as $o | [range($o.parallelism) as $t
		| [$o.subtasks[] | select(.index == $t) | .operator_state // {} | to_entries[]
		   | select(.value.mode == "list") | .value.entries | length] | add // 0]' "$1"
}

# Union names: every old entry, in old-subtask order.
union_all() {
	jq -c '[.operators[0].subtasks[].operator_state // {} | to_entries[]
		| select(.value.mode == "union")] | group_by(.key)
		| map({(.[0].key): [.[].value.entries[]]}) | add // {}' "$1"
}

# Per new subtask, its union names.
union_per_subtask() {
	jq -c '[.operators[0].subtasks[] | .operator_state // {} | with_entries(select(.value.mode == "union"))
		| map_values(.entries)]' "$1"
}

keyed_multiset() {
	jq -c '[.operators[0].subtasks[].keyed_state.entries // [] | .[]] | sort_by(.key)' "$1"
}

# Keyed entries outside their subtask's range (none expected), and subtasks whose range is not
# range(i) = [ceil(i*maxP/p), ((i+1)*maxP-1) div p].
keyed_misplaced() {
	jq -c '.operators[0] as $o | [$o.subtasks[] | select(.keyed_state)
		| (.keyed_state.key_groups | split("-") | map(tonumber)) as $r
		| (if ($r | length) == 1 then [$r[0], $r[0]] else $r end) as $r
		| .index as $i
		| select($r[0] != ((($i * $o.max_parallelism) + $o.parallelism - 1) / $o.parallelism | floor)
			 or $r[1] != (((($i + 1) * $o.max_parallelism) - 1) / $o.parallelism | floor)
			 or any(.keyed_state.entries[]; .key_group < $r[0] or .key_group > $r[1]))
		| .index]' "$1"
}
