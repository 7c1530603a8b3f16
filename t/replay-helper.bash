# Helpers of the ckpt-replay tests (eventlog.bats, replay.bats): events of a job event log as NDJSON,
# raw records, Flink's test job.

# init VERTEX PARALLELISM [INPUTS-JSON]
init() {
	printf '{"type":"vertex_initialized","payload":{"vertex":"%s","parallelism":%s%s}}\n' \
		"$1" "$2" "${3:+,\"inputs\":$3}"
}

# fin VERTEX SUBTASK [SNAPSHOTS-JSON]: a subtask finished (attempt 0)
fin() {
	printf '{"type":"vertex_finished","payload":{"vertex":"%s","subtask":%s,"attempt":0%s}}\n' \
		"$1" "$2" "${3:+,\"snapshots\":$3}"
}

# snap COORDINATOR STATE [incremental|full SHUFFLE-STATE]: a snapshots object
snap() {
	local sh=null
	[ -n "$3" ] && sh="{\"incremental\":$([ "$3" = incremental ] && echo true || echo false),\"state\":\"$4\"}"
	printf '{"coordinators":{"%s":"%s"},"shuffle":%s}' "$1" "$2" "$sh"
}

# reset VERTEX:SUBTASK ...: a vertices_reset event
reset() {
	local list="" t
	for t in "$@"; do
		list="$list${list:+,}{\"vertex\":\"${t%:*}\",\"subtask\":${t##*:}}"
	done
	printf '{"type":"vertices_reset","payload":{"subtasks":[%s]}}\n' "$list"
}

# Flink's BatchJobRecoveryTest job: source (5) -pointwise, blocking-> middle (5)
# -all_to_all, blocking-> sink (parallelism decided at run time: 2).
flink_job() {
	init source 5
	init middle 5 '[{"vertex":"source","distribution":"pointwise","partition":"blocking"}]'
}

# rec TYPE PAYLOAD [HASH]: one raw record (HASH: 16 hex digits, default zeros)
rec() {
	perl -e 'print pack("NNH16", length($ARGV[1]), $ARGV[0], $ARGV[2]), $ARGV[1]' "$1" "$2" "${3:-0000000000000000}"
}
