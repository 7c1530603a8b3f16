# Helpers of t/run.bats: pipelines derived from t/data/run with jq, committed output, events.

# pipeline BASE JQ-FILTER: write BASE (t/data/run/BASE.json) changed by the filter to p.json.
pipeline() {
	jq "${2:-.}" "$DATA/run/$1.json" > p.json
}

# The committed output of the file sink under DIR (default out), sorted; nothing pending may be left.
committed() {
	local d=${1:-out}
	if ls -A "$d" | grep -q '^\.pending'; then
		echo "pending transactions left in $d:"; ls -A "$d"; return 1
	fi
	cat "$d"/part-* | sort
}

# The events named $1 from events.ndjson, compact, one a line.
events() {
	jq -c "select(.event == \"$1\")" events.ndjson
}

# run_job ARGS...: ckpt-run with a deadline of $DEADLINE seconds (default 60), events to events.ndjson,
# diagnostics to err.txt.  The deadline's SIGTERM asks for a savepoint; a job that ignores it is killed.
run_job() {
	run sh -c 'timeout -k 5 "${DEADLINE:-60}" ckpt-run "$@" > events.ndjson 2> err.txt' sh "$@"
}
