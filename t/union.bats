#!/usr/bin/env bats
# ckpt-run and ckpt-merge: a source's offsets as union and as list state, rescaled at restore (--restore) or
# beforehand (ckpt-merge -P): every path ends, and commits what an uninterrupted run commits.

load helper

DEADLINE=20

# The committed output of keyed_sum, independent of how the splits interleave: each record's key and
# timestamp, and each key's final sum.
normalized() {
	committed | awk '{print $1, $3}' | sort
	committed | awk '{ if ($2 > m[$1]) m[$1] = $2 } END { for (k in m) print "sum", k, m[k] }' | sort
}

# restored_onto_4 [FILTER [AFTER]]: an unbounded job (pipeline union changed by FILTER) stopped with a
# savepoint sp.tar after 2 checkpoints, restored from it at parallelism 4 (changed by FILTER, then
# AFTER) in the background (start_job).
restored_onto_4() {
	pipeline union ".vertices[0].params.records = 0${1:+ | $1}"
	run_job --stop-after-checkpoints 2 --savepoint sp.tar p.json
	status_is 0 || return
	pipeline union ".vertices[].parallelism = 4 | .vertices[0].params.records = 0${1:+ | $1}${2:+ | $2}"
	start_job --restore sp.tar p.json
}

# rescale MODE FROM TO: run at FROM uninterrupted; then stop after 3 checkpoints and go on at TO,
# restoring the savepoint (-r) or (MODE merge) what ckpt-merge -P TO made of it (restore_matches).
rescale() {
	local offsets=".vertices[0].params.union_offsets = ${UNION:-true}" merge=()
	[ "$1" = merge ] && merge=(-P "$3")
	OUTPUT=normalized CHECKPOINTS=3 restore_matches union ".vertices[].parallelism = $2 | $offsets" \
		".vertices[].parallelism = $3 | $offsets" "${merge[@]}" || return
	[ "$REF_COUNT" -eq $(($2 * 8000)) ]
}

@test "union: restore 2 to 4 ends, exactly once" {
	rescale restore 2 4
	# subtasks 2 and 3 own no split: they end at once and wait for the final checkpoint of all four
	[ "$(events task_state | jq -r 'select(.vertex == "src" and .state == "FINISHED") | .subtask' | sort | tr -d '\n')" = 0123 ]
}

@test "union: restore 3 to 2 ends, exactly once" {
	rescale restore 3 2
}

@test "union: restore 1 to 3 ends, exactly once" {
	rescale restore 1 3
}

@test "union: ckpt-merge -P at the same parallelism, then restore: each split read once" {
	rescale merge 2 2
	# the merged snapshot holds the whole union in every subtask
	run ckpt-inspect -a sp2.tar
	[ "$(echo "$output" | jq -c '[.operators[0].subtasks[].operator_state.offsets.entries | length]')" = '[2,2]' ]
}

@test "union: ckpt-merge -P 4 and -P 2, then restore" {
	rescale merge 2 4
	rm -rf out ck
	rescale merge 3 2
}

@test "list: restore and ckpt-merge -P, 2 to 4 and 3 to 2" {
	UNION=false rescale restore 2 4
	rm -rf out ck
	UNION=false rescale merge 2 4
	rm -rf out ck
	UNION=false rescale restore 3 2
	rm -rf out ck
	UNION=false rescale merge 3 2
}

@test "union: no checkpoint while some subtasks ended and others not; they close together" {
	pipeline union '.vertices[].parallelism = 3'
	slow_sources p.json slow.json
	run_job --stop-after-checkpoints 3 --savepoint sp.tar slow.json
	status_is 0
	pipeline union '.vertices[].parallelism = 2 | .checkpointing.retain = 1000'
	run_job --restore sp.tar p.json
	status_is 0
	# subtask 0 reads splits 0 and 2, subtask 1 split 1: subtask 1 ends first and waits
	end1=$(grep -n '"event":"task_state","vertex":"src","subtask":1,"state":"FINISHED"' events.ndjson | cut -d: -f1)
	end0=$(grep -n '"event":"task_state","vertex":"src","subtask":0,"state":"FINISHED"' events.ndjson | cut -d: -f1)
	first=$((end0 < end1 ? end0 : end1)) lastend=$((end0 < end1 ? end1 : end0))
	# no checkpoint completes between the first and the last of them ending (one may complete
	# after both ended: the operator is then fully finished, which FLIP-147 allows)
	between=$(awk -v a="$first" -v b="$lastend" 'NR > a && NR < b && /"event":"checkpoint_completed"/' events.ndjson | wc -l)
	[ "$between" -eq 0 ] || { echo "$between checkpoints completed between lines $first and $lastend"; return 1; }
	# the shared final checkpoint, the last before either ended, holds the operator running
	final=$(head -n "$first" events.ndjson | grep '"event":"checkpoint_completed"' | tail -1 | jq -r .path)
	[ -n "$final" ]
	[ "$(ckpt-inspect "$final" | jq -r '.operators[0].fully_finished')" = false ]
}

@test "union: SIGTERM stops a job restored onto more subtasks than splits with a savepoint" {
	restored_onto_4
	# wait until the subtasks without a split ended
	await '"event":"task_state","vertex":"map","subtask":3,"state":"RUNNING"'
	sleep 0.3
	signal_job TERM
	job_ended 0 FINISHED
	[ "$(events savepoint | jq -r .drain)" = false ]
	# the savepoint goes on from where the job stopped
	path=$(events savepoint | jq -r .path)
	[ "$(ckpt-inspect -a "$path" | jq -c '[.operators[0].subtasks[].operator_state.offsets.entries | length] | add')" -eq 2 ]
}

@test "run: a stop whose savepoint stays declined for timeout_ms fails the job" {
	restored_onto_4 '.vertices[0].params.union_offsets = false' '.checkpointing.after_tasks_finish = false | .checkpointing.timeout_ms = 300'
	# sources 2 and 3 get no split and finish: no checkpoint can be taken without checkpoints after tasks finish
	await '"event":"task_state","vertex":"src","subtask":3,"state":"FINISHED"'
	signal_job TERM
	job_ended 1 FAILED "ckpt-run: stop-with-savepoint failed: Some tasks of the job have already finished and checkpointing with finished tasks is not enabled."
	[ "$(events savepoint | wc -l)" -eq 0 ]
}
