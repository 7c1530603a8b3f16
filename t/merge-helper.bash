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

# All invariants of a rescale of operator 0 from $1 to $2 in one jq run: prints "ok" or what broke.
invariants() {
	jq -rn --slurpfile a "$1" --slurpfile b "$2" '
	def lists(x): [x.subtasks[].operator_state // {} | to_entries[] | select(.value.mode == "list")
		| .key as $k | .value.entries[] | [$k, .]] | sort;
	def kv(x): [x.subtasks[].keyed_state.entries // [] | .[]] | sort_by(.key);
	def totals(x): [range(x.parallelism) as $t | [x.subtasks[] | select(.index == $t)
		| .operator_state // {} | to_entries[] | select(.value.mode == "list") | .value.entries | length] | add // 0];
	def unions(x): [x.subtasks[].operator_state // {} | to_entries[] | select(.value.mode == "union")]
		| group_by(.key) | map({(.[0].key): [.[].value.entries[]]}) | add // {};
	def range_of($i; x): [((($i * x.max_parallelism) + x.parallelism - 1) / x.parallelism | floor),
		(((($i + 1) * x.max_parallelism) - 1) / x.parallelism | floor)];
	def misplaced(x): [x.subtasks[] | select(.keyed_state) | . as $s | range_of($s.index; x) as $r
		| select(($s.keyed_state.key_groups | split("-") | map(tonumber) | if length == 1 then [.[0], .[0]] else . end) != $r
			 or any($s.keyed_state.entries[]; .key_group < $r[0] or .key_group > $r[1])) | .index];
	$a[0].operators[0] as $o | $b[0].operators[0] as $n | unions($o) as $u
	| [ (if lists($o) != lists($n) then "list elements differ" else empty end),
	    (if kv($o) != kv($n) then "keyed entries differ" else empty end),
	    (totals($n) | if $o.parallelism != $n.parallelism and max - min > 1 then "list totals \(.)" else empty end),
	    (if ($n.subtasks | length) != $n.parallelism
	        or any($n.subtasks[]; (.operator_state // {} | with_entries(select(.value.mode == "union"))
	               | map_values(.entries)) != $u) then "union entries missing" else empty end),
	    (misplaced($n) | if length > 0 then "keyed entries outside the range of \(.)" else empty end) ]
	| if length == 0 then "ok" else join("; ") end'
}
