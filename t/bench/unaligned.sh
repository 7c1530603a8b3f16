#!/bin/bash
# t/bench/unaligned.sh: unaligned checkpoints (FLIP-76) against aligned ones, under back-pressure and without; a table and t/bench/unaligned.png.
#
# 1. FLIP-76's experiment: source -> map -> map -> sleepy map -> measure, every edge a shuffle, the
#    sleepy map taking 0, 0.01, 0.1 ms a record: checkpoint duration (median, p90 of >= 10
#    checkpoints after 2 of warm-up), persisted bytes, throughput; aligned, unaligned, aligned with
#    a 1 ms timeout.
# 2. flink-benchmarks' CheckpointingTimeBenchmark shape: source -> rebalance -> map -> rebalance ->
#    a sink taking 200 us a record; one checkpoint at a time under sustained back-pressure.
# 3. No back-pressure: throughput without checkpoints, aligned, unaligned and unaligned with a 1 ms
#    aligned timeout every 100 ms (median of 5 runs each, interleaved).
# Per-record delays are slept a millisecond at a time (ckpt-pipeline(5)), not busy-waited.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RUN=$ROOT/bin/ckpt-run
PNG=$ROOT/t/bench/unaligned.png
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cd "$W"

MODES="aligned unaligned timeout1"

mode_filter() {
	case $1 in
	none) echo 'del(.checkpointing)' ;;
	aligned) echo '.checkpointing.mode = "aligned"' ;;
	unaligned) echo '.checkpointing.mode = "unaligned"' ;;
	timeout1) echo '.checkpointing.mode = "unaligned" | .checkpointing.aligned_timeout_ms = 1' ;;
	esac
}

# run_until PIPELINE CHECKPOINTS MAX_SECONDS: run until that many checkpoints completed (or the
# deadline), then cancel; events in ev.ndjson.
run_until() {
	rm -rf ck
	"$RUN" "$1" > ev.ndjson 2> /dev/null &
	local pid=$! waited=0
	while [ "$(grep -c '"checkpoint_completed"' ev.ndjson || true)" -lt "$2" ] && [ "$waited" -lt $(($3 * 20)) ]; do
		sleep 0.05
		waited=$((waited + 1))
	done
	kill -INT $pid 2> /dev/null || true
	wait $pid || true
}

# stats WARMUP: "median p90 n persisted_mean records_per_second" of the checkpoints after WARMUP.
stats() {
	jq -s -r --argjson w "$1" '
		([.[] | select(.event == "checkpoint_completed" and .kind == "checkpoint")] | .[$w:]) as $c |
		($c | map(.duration_ms) | sort) as $d |
		(.[] | select(.event == "job_finished") | .records_per_second) as $tp |
		if ($d | length) == 0 then "- - 0 - \($tp)" else
		"\($d[(($d | length) / 2 | floor)]) \($d[((($d | length) * 9 / 10) | floor | if . >= ($d | length) then ($d | length) - 1 else . end)]) \($d | length) \(($c | map(.persisted_bytes) | add) / ($c | length) | floor) \($tp)" end' ev.ndjson
}

# ---- 1. FLIP-76's experiment
cat > flip76.json <<'EOF'
{"vertices": [
  {"id": "src", "operator": "source", "parallelism": 2, "params": {"records": 0, "keys": 1000}},
  {"id": "map1", "operator": "map", "parallelism": 2},
  {"id": "map2", "operator": "map", "parallelism": 2},
  {"id": "sleepy", "operator": "map", "parallelism": 2, "params": {"delay_us": 0}},
  {"id": "measure", "operator": "discard_sink", "parallelism": 2}],
 "edges": [{"source": "src", "target": "map1", "partitioner": "rebalance"},
           {"source": "map1", "target": "map2", "partitioner": "rebalance"},
           {"source": "map2", "target": "sleepy", "partitioner": "rebalance"},
           {"source": "sleepy", "target": "measure", "partitioner": "rebalance"}],
 "checkpointing": {"interval_ms": 50, "dir": "ck", "retain": 1},
 "network": {"buffer_bytes": 4096}}
EOF
printf '%-34s %9s %9s %4s %12s %12s\n' "run" "median_ms" "p90_ms" "n" "persisted_B" "records/s"
: > flip76.dat
for us in 0 10 100; do
	line="$(awk "BEGIN {print $us / 1000}")"
	for m in $MODES; do
		jq "$(mode_filter $m) | .vertices[3].params.delay_us = $us" flip76.json > p.json
		run_until p.json 12 40
		read -r med p90 n pb tp <<< "$(stats 2)"
		printf '%-34s %9s %9s %4s %12s %12s\n' "flip76 sleep=${us}us $m" "$med" "$p90" "$n" "$pb" "$tp"
		line="$line $med $p90 $pb $tp"
	done
	echo "$line" >> flip76.dat
done

# ---- 2. flink-benchmarks' shape: one checkpoint at a time under sustained back-pressure
cat > flink.json <<'EOF'
{"vertices": [
  {"id": "src", "operator": "source", "parallelism": 2, "params": {"records": 0, "keys": 1000}},
  {"id": "map", "operator": "map", "parallelism": 2},
  {"id": "slow", "operator": "map", "parallelism": 2, "params": {"delay_us": 200}},
  {"id": "sink", "operator": "discard_sink", "parallelism": 2}],
 "edges": [{"source": "src", "target": "map", "partitioner": "rebalance"},
           {"source": "map", "target": "slow", "partitioner": "rebalance"},
           {"source": "slow", "target": "sink", "partitioner": "forward"}],
 "checkpointing": {"interval_ms": 1, "max_concurrent": 1, "dir": "ck", "retain": 1},
 "network": {"buffer_bytes": 8192}}
EOF
: > flink.dat
for m in $MODES; do
	jq "$(mode_filter $m)" flink.json > p.json
	run_until p.json 13 90
	read -r med p90 n pb tp <<< "$(stats 3)"
	printf '%-34s %9s %9s %4s %12s %12s\n' "flink-shape $m" "$med" "$p90" "$n" "$pb" "$tp"
	echo "$m $med $p90" >> flink.dat
done

# ---- 3. no back-pressure: what checkpoints every 100 ms cost
cat > tp.json <<'EOF'
{"vertices": [
  {"id": "src", "operator": "source", "parallelism": 2, "params": {"records": 0, "keys": 1000}},
  {"id": "map", "operator": "map", "parallelism": 2},
  {"id": "sink", "operator": "discard_sink", "parallelism": 2}],
 "edges": [{"source": "src", "target": "map", "partitioner": "rebalance"},
           {"source": "map", "target": "sink", "partitioner": "rebalance"}],
 "checkpointing": {"interval_ms": 100, "dir": "ck", "retain": 1}}
EOF
for r in 1 2 3 4 5; do
	for m in none aligned unaligned timeout1; do
		jq "$(mode_filter $m)" tp.json > p.json
		rm -rf ck
		"$RUN" --stop-after-ms 2000 p.json 2> /dev/null | jq -r 'select(.event == "job_finished") | .records_per_second' >> "tp-$m.txt"
	done
done
: > tp.dat
for m in none aligned unaligned timeout1; do
	med=$(sort -n "tp-$m.txt" | sed -n 3p)
	printf '%-34s %9s %9s %4s %12s %12s\n' "no-backpressure $m (median of 5)" - - - - "$med"
	echo "$m $med" >> tp.dat
done
base=$(awk '$1 == "aligned" {print $2}' tp.dat)
una=$(awk '$1 == "unaligned" {print $2}' tp.dat)
none=$(awk '$1 == "none" {print $2}' tp.dat)
t1=$(awk '$1 == "timeout1" {print $2}' tp.dat)
awk -v a="$base" -v u="$una" -v n="$none" 'BEGIN {printf "unaligned throughput cost: %.1f %% against aligned, %.1f %% against none\n", 100 * (a - u) / a, 100 * (n - u) / n}'
awk -v u="$una" -v t="$t1" 'BEGIN {printf "1 ms aligned timeout throughput cost: %.1f %% against unaligned\n", 100 * (u - t) / u}'
fa=$(awk '$1 == "aligned" {print $2}' flink.dat)
fu=$(awk '$1 == "unaligned" {print $2}' flink.dat)
awk -v a="$fa" -v u="$fu" 'BEGIN {if (u > 0) printf "flink-shape: aligned / unaligned checkpoint duration = %.0fx\n", a / u; else printf "flink-shape: unaligned median 0 ms (aligned %s ms)\n", a}'

# ---- the plot
if ! command -v gnuplot > /dev/null; then
	echo "gnuplot not found: no plot" >&2
	exit 0
fi
gnuplot <<EOF
set terminal pngcairo size 1500,480 font ",10"
set output "$PNG"
set multiplot layout 1,3 title "ckpt-run: unaligned checkpoints (FLIP-76)"
set title "FLIP-76 experiment: checkpoint duration (median)"
set xlabel "sleepy map, ms per record"
set ylabel "ms (log)"
set logscale y
set key top left
set xtics ("0" 1, "0.01" 2, "0.1" 3)
set xrange [0.5:3.5]
plot "flip76.dat" using (\$0+1):(\$2+0.5) with linespoints lw 2 title "aligned", \
     "" using (\$0+1):(\$6+0.5) with linespoints lw 2 title "unaligned", \
     "" using (\$0+1):(\$10+0.5) with linespoints lw 2 title "aligned, 1 ms timeout"
set title "flink-benchmarks shape, 200 us/record sink: checkpoint duration"
unset xlabel
set xtics ("aligned" 0, "unaligned" 1, "1 ms timeout" 2)
set xrange [-0.5:2.5]
set style fill solid 0.6
set boxwidth 0.5
plot "flink.dat" using 0:(\$2+0.5) with boxes notitle, "" using 0:(\$2+0.5):(sprintf("%d ms", \$2)) with labels offset 0,1 notitle
set title "no back-pressure: throughput, checkpoints every 100 ms"
unset logscale y
set ylabel "records/s"
set yrange [0:*]
set xtics ("none" 0, "aligned" 1, "unaligned" 2, "1 ms timeout" 3)
plot "tp.dat" using 0:2 with boxes notitle
unset multiplot
EOF
echo "plot: $PNG"
