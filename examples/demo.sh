#!/bin/sh
# The demo: a pipeline checkpoints, fails, recovers from its latest checkpoint, is stopped with a
# savepoint, the savepoint is inspected, and the job goes on from it.
set -e
cd "$(dirname "$0")/.."
bin=$PWD/bin
pipeline=$PWD/examples/demo.pipeline.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
show='select(.event != "task_state") | if .event == "checkpoint_completed" then {event, id, duration_ms, state_bytes, path} else . end'

echo "== ckpt-run: source -> window -> two-phase-commit sink; a window subtask fails after 1500 records;"
echo "   stop with a savepoint after 6 checkpoints"
"$bin/ckpt-run" --stop-after-checkpoints 6 --savepoint savepoint.tar "$pipeline" | jq -c "$show"
echo
echo "== ckpt-inspect savepoint.tar (per operator: parallelism, states, key groups)"
"$bin/ckpt-inspect" savepoint.tar | jq -c '.operators[] | {id, parallelism, states: [.states[] | {name, mode, entries}], key_groups}'
echo
echo "== committed so far: $(cat out/part-* | wc -l) window results"
echo
echo "== ckpt-run --restore savepoint.tar: the job goes on where it stopped; stop again after 2 checkpoints"
"$bin/ckpt-run" --restore savepoint.tar --stop-after-checkpoints 2 --savepoint savepoint2.tar "$pipeline" | jq -c "$show"
echo
echo "== committed now: $(cat out/part-* | wc -l) window results, none twice: $(cat out/part-* | sort | uniq -d | wc -l) duplicates"
