# Helpers of t/unaligned.bats: the back-pressured pipeline and an order-free exactly-once summary.

# ua_pipeline JQ-FILTER: t/data/unaligned/bp.json changed by the filter, to p.json.
ua_pipeline() {
	jq -c "${1:-.}" "$DATA/unaligned/bp.json" > p.json
}

# The committed output of the sink, per key: records, final running sum, repeated sums.  Two
# parallel paths interleave keys differently from run to run, so the lines themselves differ; a
# record lost or replayed twice changes the count or the final sum of its key.
per_key() {
	if ls -A "${1:-out}" | grep -q '^\.pending'; then
		echo "pending transactions left"; return 1
	fi
	cat "${1:-out}"/part-* | awk '{n[$1]++; if ($2 > m[$1]) m[$1] = $2; if (seen[$1 " " $2]++) d[$1]++}
		END {for (k in n) print k, n[k], m[k], d[k] + 0}' | sort -n
}

# The failure-free reference, then the same pipeline under seeded failures: the same summary, and
# the restarts really restored checkpoints holding in-flight data.
exactly_once_under_failures() {
	ua_pipeline "$1"
	run_job p.json
	status_is 0
	per_key > ref.txt
	[ "$(wc -l < ref.txt)" -eq 50 ]
	[ "$(awk '{s += $2} END {print s}' ref.txt)" -eq 40000 ]
	rm -rf out ck
	ua_pipeline "$1 | .failover.random = {\"seed\": $2, \"count\": 6, \"max_records\": 15000}"
	run_job p.json
	status_is 0
	[ "$(events restart | wc -l)" -ge 3 ]
	# restarts from a checkpoint with persisted in-flight data (its archive holds it too)
	n=0
	for id in $(events restart | jq -r '.checkpoint // empty'); do
		bytes=$(events checkpoint_completed | jq -r "select(.id == $id) | .persisted_bytes")
		inflight=$(ckpt-inspect "ck/chk-$id.tar" | jq '[.operators[].in_flight_bytes] | add')
		[ "$bytes" -eq "$inflight" ]
		[ "$bytes" -gt 0 ] && n=$((n + 1))
	done
	[ "$n" -ge 2 ]
	per_key > got.txt
	cmp ref.txt got.txt
}
