#!/usr/bin/env bats
# Flink and ckpt on one S3 server (issue 28, the 2.x line only): Flink itself writes a checkpoint and a
# savepoint to s3proxy through its own S3 file system (flink-s3-fs-presto, S3.java); ckpt reads them
# there; ckpt-merge writes an edited savepoint to the server; Flink restores the job from it there.
#
# setup_file starts s3proxy (t/s3-helper.bash), runs `ckpt.flink.Main s3 write` (StateJob, hashmap,
# every state in a file; entropy injection on): a retained checkpoint under s3p://flink/_entropy_/
# checkpoints (its _metadata at s3p://flink/checkpoints/JOB/chk-N, its state files under random
# prefixes, named by their whole s3p:// URLs) and a canonical savepoint under s3://flink/savepoints
# (state files named relatively); copies both off the server with curl; runs `ckpt-merge --drop
# broadcast -o s3://flink/edited/` on the savepoint in S3, then `ckpt.flink.Main s3 restore` of
# s3://flink/edited into the job without the broadcast operator.  See README.
# Each test skips (fails under CI=true) without s3proxy or the harness's flink2 classes and S3 jar
# (t/flink/run.sh: target/2.3.0/s3-classpath.txt).

load helper
load ../s3-helper

FLINK_S3_VERSION=2.3.0
BUCKET=flink

# The harness's class path for the S3 JVMs: its classes and Flink's, then flink-s3-fs-presto.
flink_s3_classpath() {
	local cp d
	cp=$(flink_classpath "$FLINK_S3_VERSION") || return 1
	for d in "$T/target/$FLINK_S3_VERSION" "$FLINK_OUT/../../t/flink/target/$FLINK_S3_VERSION"; do
		if [ -s "$d/s3-classpath.txt" ] && [ -f "$d/classes/ckpt/flink/S3.class" ]; then
			echo "$cp:$(cat "$d/s3-classpath.txt")"
			return 0
		fi
	done
	return 1
}

# flink_s3 ARG...: ckpt.flink.Main s3 ARG... (S3.java), niced, at most 150 s.
flink_s3() {
	timeout 150 nice java -Xmx600m -XX:+UseSerialGC -Daws.java.v1.disableDeprecationAnnouncement=true \
		--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
		-cp "$(cat "$W/classpath")" ckpt.flink.Main s3 "$@"
}

setup_file() {
	W=$BATS_FILE_TMPDIR
	export W
	flink_s3_classpath >"$W/classpath" || { rm -f "$W/classpath"; return 0; }
	s3_start
	[ -f "$W/s3proxy/endpoint" ] || return 0
	needs_s3_env
	s3_bucket "$BUCKET" || return 1
	flink_s3 write "$W/flink" "$BUCKET" >"$W/write.log" 2>&1 || { echo "status $?" >>"$W/write.log"; return 0; }
	CP=$(jq -r .checkpoint "$W/flink/index.json")
	SP=$(jq -r .savepoint "$W/flink/index.json")
	# local copies, fetched as any S3 client would: the savepoint's prefix; every object of the
	# checkpoint, its _metadata and its state files under entropy-injected prefixes (ENTROPY/checkpoints/
	# JOB/chk-N/...), as in the bucket
	s3_copy "${SP#*://}" "$W/local/sp" || true
	s3_copy "$BUCKET" "$W/local/cp" "/${CP#*://*/}/" || true
	local st=0
	ckpt-merge --drop broadcast -o "s3://$BUCKET/edited/" "$SP" >"$W/merge.out" 2>"$W/merge.err" || st=$?
	echo "$st" >"$W/merge.status"
	flink_s3 restore "$W/restore.json" "s3://$BUCKET/edited" --without broadcast --to 2 >"$W/restore.log" 2>&1 ||
		echo "status $?" >>"$W/restore.log"
}

teardown_file() {
	s3_stop
}

# needs_s3's environment without its skip (setup_file)
needs_s3_env() {
	s3_env "$(cat "$BATS_FILE_TMPDIR/s3proxy/endpoint")" "$BATS_FILE_TMPDIR"
}

# s3_copy BUCKET/PREFIX DIR [PART]: every object under the prefix into DIR (the rest of its key kept),
# or with PART every object of the bucket whose key holds PART.
s3_copy() {
	local b=${1%%/*} p=${1#*/} k
	[ "$b" = "$1" ] && p=
	for k in $(s3_keys "$b" "${p:+$p/}"); do
		[ -n "${3-}" ] && [[ /$k != *"$3"* ]] && continue
		mkdir -p "$2/$(dirname "${k#"$p"/}")"
		s3curl -o "$2/${k#"$p"/}" "$S3_ENDPOINT/$b/$k" || return
	done
}

# needs_flink_s3: skip without the harness's S3 class path or s3proxy (fail under CI=true); else the
# server's environment, $CP and $SP (the checkpoint's and savepoint's URIs) and Flink's run done.
needs_flink_s3() {
	W=$BATS_FILE_TMPDIR
	if [ ! -f "$W/classpath" ]; then
		if [ "${CI-}" = true ]; then
			echo "no harness classes with flink-s3-fs-presto for Flink $FLINK_S3_VERSION (t/flink/run.sh); CI=true requires them"
			return 1
		fi
		skip "no harness classes with flink-s3-fs-presto for Flink $FLINK_S3_VERSION (make flink-fixtures)"
	fi
	needs_s3
	[ -f "$W/flink/index.json" ] || { echo "Flink wrote nothing to S3:"; tail -30 "$W/write.log"; return 1; }
	CP=$(jq -r .checkpoint "$W/flink/index.json")
	SP=$(jq -r .savepoint "$W/flink/index.json")
}

@test "flink s3: Flink wrote its checkpoint (s3p://, entropy injected) and savepoint (s3://) to the server" {
	needs_flink_s3
	[[ $CP == "s3p://$BUCKET/checkpoints/"*/chk-* ]] || { echo "checkpoint at $CP"; return 1; }
	[[ $SP == "s3://$BUCKET/savepoints/savepoint-"* ]] || { echo "savepoint at $SP"; return 1; }
	[ "$(s3_keys "$BUCKET" "${CP#*/*/*/}/" | grep -c /_metadata)" -eq 1 ]
	[ "$(s3_keys "$BUCKET" "${SP#*/*/*/}/" | wc -l)" -gt 5 ]
	# the savepoint's handles name its state files relatively (relative_file), the checkpoint's by
	# their s3p:// URIs, each under a prefix of its own in place of the entropy key; each is on the server
	local a uri kind want
	s3_keys "$BUCKET" "" >keys
	for a in checkpoint savepoint; do
		uri=$(jq -r .path "$W/flink/sidecars/$a.json")
		ckpt-inspect -a "$uri" >all.json
		kind=relative_file
		[ "$a" = checkpoint ] && kind=file
		jq -r '[.. | objects | select(has("delegate")) | .delegate.kind] | unique | join(",")' all.json >kinds
		[ "$(cat kinds)" = "$kind" ] || { echo "$a: state files of kinds $(cat kinds)"; return 1; }
		jq -r '[.. | objects | select(has("delegate")) | .delegate.path] | unique[]' all.json >paths
		[ "$(wc -l <paths)" -ge 10 ] || { echo "$a: $(wc -l <paths) state files"; return 1; }
		if [ "$a" = checkpoint ]; then
			want="^s3p://$BUCKET/[A-Za-z0-9]{4}/${CP#s3p://"$BUCKET"/}/[^/]+\$"
			[ -z "$(grep -Ev "$want" paths)" ] || { echo "$a: not entropy-injected: $(grep -Ev "$want" paths | head -3)"; return 1; }
			[ "$(sed -E 's|^s3p://[^/]+/([^/]+)/.*|\1|' paths | sort -u | wc -l)" -gt 1 ] ||
				{ echo "$a: one entropy prefix for all: $(head -3 paths)"; return 1; }
			sed "s|^s3p://$BUCKET/||" paths | sort >files
		else
			sed "s|^|${uri#s3://"$BUCKET"/}/|" paths | sort >files
		fi
		[ -z "$(comm -23 files keys)" ] || { echo "$a: not on the server: $(comm -23 files keys | head -3)"; return 1; }
	done
}

@test "flink s3: ckpt-inspect's summary and -a of each in S3 equal what Flink read there" {
	needs_flink_s3
	local a bad=0
	for a in checkpoint savepoint; do
		jq "$JQ_FLINK" "$W/flink/sidecars/$a.json" >flink.json
		{ ckpt-inspect "$(jq -r .path "$W/flink/sidecars/$a.json")" &&
			ckpt-inspect -a "$(jq -r .path "$W/flink/sidecars/$a.json")"; } | jq -s "$JQ_CKPT" >ckpt.json ||
			{ echo "$a: ckpt-inspect failed"; bad=1; continue; }
		[ "$(jq '.operators | length' flink.json)" -gt 5 ] || { echo "$a: the sidecar lists too little"; bad=1; }
		differ "s3/$a" ckpt.json flink.json || bad=1
	done
	[ "$bad" -eq 0 ]
}

@test "flink s3: the state ckpt-inspect -a and -R read in S3 is what the job put in state" {
	needs_flink_s3
	local a read bad=0
	for a in checkpoint savepoint; do
		for read in ckpt_state ckpt_rows; do
			$read "$(jq -r .path "$W/flink/sidecars/$a.json")" st.json || { echo "$a: $read failed"; bad=1; continue; }
			jq -s --slurpfile S "$W/flink/sidecars/$a.json" "$JQ_STATE" st.json >ckpt.json
			jq .contents "$W/flink/sidecars/$a.json" >flink.json
			[ "$(jq 'keys | length' flink.json)" -ge 14 ] || { echo "$a: the job recorded too little"; bad=1; }
			differ "s3/$a ($read)" ckpt.json flink.json || bad=1
		done
	done
	[ "$bad" -eq 0 ]
}

@test "flink s3: the summary, -a and -R in S3 equal those of a local copy (-r for the checkpoint's s3p:// handles)" {
	needs_flink_s3
	local a uri dir opt root bad=0
	for a in checkpoint savepoint; do
		uri=$(jq -r .path "$W/flink/sidecars/$a.json")
		dir=$W/local/sp root=()
		# the checkpoint's handles name s3p://BUCKET/ENTROPY/...: read from the copy of the bucket
		[ "$a" = checkpoint ] && dir=$W/local/cp/${CP#s3p://*/} root=(-r "s3p://$BUCKET=$W/local/cp")
		[ -f "$dir/_metadata" ] || { echo "$a: no local copy"; return 1; }
		for opt in "" -a -R; do
			ckpt-inspect $opt "$uri" >s3.out || { echo "$a: ckpt-inspect $opt of S3 failed"; bad=1; continue; }
			ckpt-inspect "${root[@]}" $opt "$dir" >local.out ||
				{ echo "$a: ckpt-inspect $opt of the copy failed"; bad=1; continue; }
			[ -s s3.out ] || { echo "$a $opt: nothing"; bad=1; }
			# the copy's own name where ckpt names the file it read
			sed "s|$dir|$uri|g" local.out | cmp -s - s3.out ||
				{ echo "$a: ckpt-inspect $opt differs:"; diff <(sed "s|$dir|$uri|g" local.out | tr , '\n') <(tr , '\n' <s3.out) | head -20; bad=1; }
		done
	done
	[ "$bad" -eq 0 ]
}

@test "flink s3: --latest in the job's checkpoint directory in S3 is Flink's; -l lists it complete; -c finds every file" {
	needs_flink_s3
	local job=${CP%/chk-*}
	run ckpt-inspect --latest "$job"
	[ "$status" -eq 0 ] && [ "$output" = "$CP" ] || { echo "--latest: $status $output, Flink: $CP"; return 1; }
	local a uri n
	for a in checkpoint savepoint; do
		uri=$(jq -r .path "$W/flink/sidecars/$a.json")
		n=$(ckpt-inspect -a "$uri" | jq '[.. | objects | select(has("delegate")) | .delegate.path] | unique | length')
		[ "$n" -ge 10 ] || { echo "$a: $n state files"; return 1; }
		ckpt-inspect -c "$uri" >check.json || { echo "$a: -c failed: $(cat check.json)"; return 1; }
		[ "$(jq -r '"\(.ok) \(.files)"' check.json)" = "true $n" ] || { echo "$a: $n files: $(cat check.json)"; return 1; }
		[ "$a" = checkpoint ] || continue
		ckpt-inspect -l "$job" >list.ndjson
		[ "$(jq -r --arg p "$CP" 'select(.path == $p) | "\(.complete) \(.files)"' list.ndjson)" = "true $n" ] ||
			{ echo "-l: $(cat list.ndjson)"; return 1; }
	done
}

@test "flink s3: ckpt-merge --drop writes the edited savepoint to S3, the rest as it was" {
	needs_flink_s3
	[ "$(cat "$W/merge.status")" -eq 0 ] || { echo "ckpt-merge failed:"; cat "$W/merge.err"; return 1; }
	s3_keys "$BUCKET" edited/ | grep -qx edited/_metadata
	local bid
	bid=$(jq -r '.job.operators[] | select(.uid == "broadcast") | .id' "$W/flink/sidecars/savepoint.json")
	ckpt_state "s3://$BUCKET/edited" st.json
	jq -s --slurpfile S "$W/flink/sidecars/savepoint.json" "$JQ_STATE" st.json >ckpt.json
	jq '.contents | with_entries(select(.key | startswith("broadcast/") | not))' "$W/flink/sidecars/savepoint.json" >flink.json
	differ "s3/edited" ckpt.json flink.json
	[ "$(jq --arg b "$bid" '[.operators[] | select(.id == $b)] | length' summary.json)" -eq 0 ]
}

@test "flink s3: Flink restores the job from ckpt-merge's savepoint in S3, each operator what ckpt reads there" {
	needs_flink_s3
	[ -f "$W/restore.json" ] || { echo "no restore written:"; tail -30 "$W/restore.log"; return 1; }
	[ "$(jq -r .accepted "$W/restore.json")" = true ] || { echo "Flink refused: $(jq -r .message "$W/restore.json")"; return 1; }
	[ "$(jq -r .savepoint "$W/restore.json")" = "s3://$BUCKET/edited" ]
	# what Flink read from the edited _metadata in S3: the savepoint's operators but broadcast
	local bid
	bid=$(jq -r '.job.operators[] | select(.uid == "broadcast") | .id' "$W/flink/sidecars/savepoint.json")
	diff <(jq -c --arg b "$bid" '[.metadata.operators[].id | select(. != $b)] | sort' "$W/flink/sidecars/savepoint.json") \
		<(jq -c '[.metadata.operators[].id] | sort' "$W/restore.json")
	# what each operator subtask restored, against ckpt-inspect -a of the edited savepoint in S3: list
	# state per subtask (the same parallelism), the union state whole on every subtask, per key the
	# keyed operator's count and sum
	ckpt_state "s3://$BUCKET/edited" st.json
	jq -s --slurpfile S "$W/flink/sidecars/savepoint.json" "$JQ_STATE" st.json >state.json
	jq '. as $c | [to_entries[] | (.key | split("/")[0]) as $u | select($u == "src-union" or $u == "src-finishing"
		or $u == "map-list" or $u == "keyed") | {key, value: (
		if $u == "src-union" then {"union-offsets": ([$c | to_entries[] | select(.key | startswith("src-union/"))
			| .value["union-offsets"][]] | sort)}
		elif $u == "keyed" then {keys: (.value.keys | map_values({key_group, count, sum}))}
		else .value | map_values(sort) end)}] | from_entries' state.json >ckpt.json
	jq '[.reports[] | {key: "\(.uid)/\(.subtask)", value: (.union // .list // {keys}) | map_values(if type == "array" then sort else . end)}]
		| from_entries' "$W/restore.json" >flink.json
	[ "$(jq length flink.json)" -eq 10 ] || { echo "$(jq length flink.json) reports"; return 1; }
	differ "s3/restored" ckpt.json flink.json
}
