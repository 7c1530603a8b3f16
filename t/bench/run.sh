#!/bin/sh
# Throughput of ckpt-run: source -> map -> sink at parallelism 1, 25-byte records, checkpointing off
# and aligned every 100 ms, against three bare threads handing 16-byte records along in 32 KiB
# buffers through bounded queues, measured in the same run.  Prints medians and ratios, by the
# clock and per CPU second (the latter stays meaningful on a machine shared with other work).
set -e
cd "$(dirname "$0")/../.."
RECORDS=${RECORDS:-30000000}
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -pthread -o "$tmp/baseline" t/bench/run-baseline.c
jq ".vertices[0].params.records = $RECORDS" examples/throughput.pipeline.json > "$tmp/off.json"
jq '.checkpointing = {"interval_ms": 100, "mode": "aligned"}' "$tmp/off.json" > "$tmp/aligned.json"

median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# measure NAME COMMAND...: wall rate, CPU rate and max RSS of one run into $tmp/NAME.*
measure() {
	name=$1
	shift
	/usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$@" > "$tmp/out"
	read -r wall user sys rss < "$tmp/time"
	echo "$RECORDS $wall" | awk '{printf "%.0f\n", $1 / $2}' >> "$tmp/$name.wall"
	echo "$RECORDS $user $sys" | awk '{printf "%.0f\n", $1 / ($2 + $3)}' >> "$tmp/$name.cpu"
	echo "$rss" >> "$tmp/$name.rss"
}

for r in $(seq 1 "$ROUNDS"); do
	measure base "$tmp/baseline" "$RECORDS"
	measure off bin/ckpt-run --dir "$tmp/ck" "$tmp/off.json"
	measure aligned bin/ckpt-run --dir "$tmp/ck" "$tmp/aligned.json"
	tail -1 "$tmp/out" | jq .checkpoints >> "$tmp/aligned.cps"
done
printf '%-32s %14s %14s %10s\n' "median of $ROUNDS, $RECORDS records" "records/s" "records/CPU-s" "max RSS"
for n in base off aligned; do
	case $n in
	base) label="baseline: 3 bare threads" ;;
	off) label="ckpt-run, checkpointing off" ;;
	aligned) label="ckpt-run, aligned every 100 ms" ;;
	esac
	printf '%-32s %14s %14s %7s KiB\n' "$label" "$(median < "$tmp/$n.wall")" "$(median < "$tmp/$n.cpu")" \
		"$(sort -n "$tmp/$n.rss" | tail -1)"
done
echo "checkpoints completed per aligned run (median): $(median < "$tmp/aligned.cps")"
awk -v b="$(median < "$tmp/base.wall")" -v o="$(median < "$tmp/off.wall")" -v a="$(median < "$tmp/aligned.wall")" \
    -v bc="$(median < "$tmp/base.cpu")" -v oc="$(median < "$tmp/off.cpu")" -v ac="$(median < "$tmp/aligned.cpu")" 'BEGIN {
	printf "ratio ckpt-run / baseline:      %.2f by the clock, %.2f per CPU second\n", o / b, oc / bc
	printf "cost of aligned checkpoints:    %.1f %% by the clock, %.1f %% per CPU second\n", (o - a) * 100 / o, (oc - ac) * 100 / oc
	printf "target >= 10 M records/s: %s; aligned cost <= 5 %%: %s\n", (o >= 1e7) ? "met" : "missed", ((o - a) * 100 / o <= 5) ? "met" : "missed"
}'
