#!/bin/sh
# ckpt-inspect --orphans on a Flink checkpoint directory of 1,000 checkpoints of 100 files each
# (t/bench/tree.sh; the 14 files of each chk-N its _metadata does not name are listed): the time and the
# peak memory (targets, issue 29: under 1 s, under 64 MB), beside find's walk of the same tree.
set -e
. "$(dirname "$0")/setup.sh"
N=${N:-1000}
. t/bench/tree.sh
run "ckpt-inspect --orphans" "$BIN/ckpt-inspect" --orphans "$R" --older-than 0
# (the last chk-N's, copied after its _metadata, are newer than the newest _metadata: kept)
[ "$(wc -l < "$W/out")" -ge $((14 * (N - 1))) ] && [ "$(wc -l < "$W/out")" -le $((14 * N)) ]
[ "$(jq -r .reason "$W/out" | sort -u)" = "unreferenced file in a checkpoint" ]
run "find -type f | wc -l (reference)" sh -c 'find "$1" -type f | wc -l' sh "$R"
run "find | xargs stat (reference)" sh -c 'find "$1" -type f -print0 | xargs -0 stat -c %s > /dev/null' sh "$R"
