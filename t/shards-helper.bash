# Shared by t/shards.bats and t/flink/shards.bats (issue 42).

# union_is_rows SNAP N...: for each N, the rows of shards 0..N-1, read by I/N and by the descriptor
# as --shards prints it, sorted, equal -R's sorted, byte for byte; the shards' bytes add up to the
# state files' and each part's files are the snapshot's.
union_is_rows() {
	local snap=$1 n i
	shift
	ckpt-inspect -R "$snap" | LC_ALL=C sort >all
	[ -s all ]
	for n in "$@"; do
		ckpt-inspect --shards "$n" "$snap" >plan 2>/dev/null
		[ "$(wc -l <plan)" -eq "$n" ]
		[ "$(jq -s 'map(.bytes) | add' plan)" -eq "$(jq -s 'map(.parts[].bytes) | add' plan)" ]
		for ((i = 0; i < n; i++)); do ckpt-inspect -R --shard "$i/$n" "$snap"; done | LC_ALL=C sort >union
		cmp all union || { echo "$snap: $n shards by I/N differ from -R"; diff all union | head; return 1; }
		while IFS= read -r d; do ckpt-inspect -R --shard "$d" "$snap"; done <plan | LC_ALL=C sort >union
		cmp all union || { echo "$snap: $n shards by descriptor differ from -R"; return 1; }
	done
}

# kg_lines PLAN: "OPERATOR SUBTASK KEYGROUP", one a key group of each keyed part of the plan's lines.
kg_lines() {
	jq -r '.parts[] | select(.state == "keyed") | . as $p | .key_groups | split("-") | map(tonumber) |
		range(.[0]; .[-1] + 1) | "\($p.operator) \($p.subtask) \(.)"' "$1"
}

# parts_exact SNAP N: the plan of N shards holds each key group of each keyed subtask in one part
# (no key group lost or twice), and each part read alone (a descriptor of that part only) gives rows
# of its operator, subtask and key groups alone; the parts' rows together are -R's, sorted, byte for
# byte.  Prints how many keyed subtasks the plan cuts into more than one part.
parts_exact() {
	local snap=$1 n=$2 d p
	ckpt-inspect -R "$snap" | LC_ALL=C sort >all
	ckpt-inspect --shards 1 "$snap" >plan1
	ckpt-inspect --shards "$n" "$snap" >plan 2>/dev/null
	kg_lines plan1 | sort >kg1
	kg_lines plan | sort >kgn
	cmp kg1 kgn || { echo "$snap: $n shards: key groups lost or doubled"; diff kg1 kgn | head; return 1; }
	: >union
	while IFS= read -r d; do
		while IFS= read -r p; do
			ckpt-inspect -R --shard "$(jq -c --argjson p "$p" '.parts = [$p]' <<<"$d")" "$snap" >rows
			jq -s -e --argjson p "$p" 'all(.[]; .operator == $p.operator and .subtask == $p.subtask and
				($p.state == "operator" or (.key_group != null and
				 .key_group >= ($p.key_groups | split("-")[0] | tonumber) and
				 .key_group <= ($p.key_groups | split("-")[-1] | tonumber))))' rows >/dev/null ||
				{ echo "$snap: a row outside its part $p"; return 1; }
			cat rows >>union
		done < <(jq -c '.parts[]' <<<"$d")
	done <plan
	LC_ALL=C sort union | cmp - all || { echo "$snap: $n shards: the parts' rows differ from -R"; return 1; }
	jq -r '.parts[] | select(.state == "keyed") | "\(.operator) \(.subtask)"' plan | sort | uniq -d | wc -l
}
