#!/bin/sh
# ckpt-inspect -l and --latest on a Flink checkpoint directory of 1,000 checkpoints of 100
# files each (t/bench/tree.sh): the time and the peak memory (targets, issue 25: under 1 s, under
# 64 MB).
set -e
. "$(dirname "$0")/setup.sh"
N=${N:-1000}
. t/bench/tree.sh
run "ckpt-inspect -l" "$BIN/ckpt-inspect" -l "$R"
[ "$(wc -l < "$W/out")" -eq "$N" ]
[ "$(jq -s 'map(select(.complete)) | length' "$W/out")" -eq "$N" ]
run "ckpt-inspect --latest" "$BIN/ckpt-inspect" --latest "$R"
[ "$(cat "$W/out")" = "$job/chk-$N" ]
run "find | xargs stat (reference)" sh -c 'find "$1" -type f -print0 | xargs -0 stat -c %s > /dev/null' sh "$R"
