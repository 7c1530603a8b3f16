#!/bin/sh
# Batch mode of ckpt-run: records per second through blocking partitions, and the cost of recovery.
set -e
BIN=${CKPT_BIN:-$(cd "$(dirname "$0")/../../bin" && pwd)}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cd "$d"
cat > p.json <<'JSON'
{"vertices": [
  {"id": "src", "operator": "source", "parallelism": 4, "params": {"records": 250000, "keys": 1000}},
  {"id": "map", "operator": "map", "parallelism": 4, "params": {"add": 1}},
  {"id": "sum", "operator": "keyed_sum", "parallelism": 4},
  {"id": "sink", "operator": "discard_sink", "parallelism": 4}],
 "edges": [{"source": "src", "target": "map", "partitioner": "forward", "partition": "blocking"},
           {"source": "map", "target": "sum", "partitioner": "hash", "partition": "blocking"},
           {"source": "sum", "target": "sink", "partitioner": "rebalance", "partition": "blocking"}]}
JSON
"$BIN/ckpt-run" p.json | tail -1 | sed 's/^/full run: /'
echo "partitions: $(du -sk partitions | cut -f1) KiB, log: $(du -sk job-events | cut -f1) KiB"
rm -rf job-events partitions
"$BIN/ckpt-run" -K 14 p.json > /dev/null 2>&1 || true
"$BIN/ckpt-run" --recover job-events p.json | tail -1 | sed 's/^/recovery after the map stage: /'
# the same job with its forward edges pipelined (regions {src:i, map:i} and {sum:j, sink:j}),
# records handed from thread to thread instead of through files
rm -rf job-events partitions
sed 's/"forward", "partition": "blocking"/"forward", "partition": "pipelined"/; s/"rebalance", "partition": "blocking"/"rebalance", "partition": "pipelined"/' \
	p.json > mixed.json
"$BIN/ckpt-run" mixed.json | tail -1 | sed 's/^/mixed run: /'
echo "partitions: $(du -sk partitions | cut -f1) KiB"
