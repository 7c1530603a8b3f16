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
