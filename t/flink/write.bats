#!/usr/bin/env bats
# ckpt-merge -o against real Flink: every checkpoint and savepoint the harness had Flink write
# (build/flink/VERSION/) is written back byte for byte, state files and all (those named by absolute
# local paths carried in, their handles made relative); a re-uided operator
# holds, under its new id, what Flink said the old one held (the sidecar); relocated absolute paths
# lead to the files; -g checks the edited savepoint against the job graph Flink refused it for.
# Flink restoring what ckpt-merge -o writes is t/flink/edit.bats.

bats_require_minimum_version 1.5.0
load helper

# artifact_dir VERSION NAME: where the artifact lies.
artifact_dir() {
	echo "$FLINK_OUT/$1/$(jq -r --arg n "$2" '.artifacts[] | select(.name == $n) | .path' "$FLINK_OUT/$1/index.json")"
}

@test "flink: ckpt-merge -o writes every artifact back byte for byte, with every state file it names" {
	local v name dir n=0 bad=0 f
	for v in $(flink_versions); do
		for name in $(jq -r '.artifacts[].name' "$FLINK_OUT/$v/index.json"); do
			dir=$(artifact_dir "$v" "$name")
			n=$((n + 1))
			if ! ckpt-merge -o "$v-$name/" "$dir"; then
				echo "$v/$name: ckpt-merge -o failed"
				bad=1
				continue
			fi
			# files named by absolute local paths are carried in, their handles made relative
			if [ "$(ckpt-inspect -m "$dir" | jq '[.flink.files[] | select(.kind == "file")] | length')" -eq 0 ]; then
				cmp "$dir/_metadata" "$v-$name/_metadata" || { echo "$v/$name: _metadata differs"; bad=1; }
			fi
			for f in $(ckpt-inspect -m "$dir" | jq -r '.flink.files[] | select(.kind == "relative_file" or .kind == "file") | .path'); do
				case $f in
				file:*) cmp "${f#file:}" "$v-$name/${f##*/}" ;;
				*) cmp "$dir/$f" "$v-$name/$f" ;;
				esac || { echo "$v/$name: $f differs"; bad=1; }
			done
			[ "$(ckpt-inspect -m "$v-$name" | jq '[.flink.files[] | select(.kind != "relative_file")] | length')" -eq 0 ] ||
				{ echo "$v/$name: names a file outside the savepoint"; bad=1; }
			[ "$(ls "$v-$name" | wc -l)" -eq "$(($(ckpt-inspect -m "$dir" |
				jq '[.flink.files[] | select(.kind == "relative_file" or .kind == "file")] | length') + 1))" ] ||
				{ echo "$v/$name: files beyond _metadata and the files it names"; bad=1; }
		done
	done
	[ "$n" -ge 20 ] || { echo "expected the artifacts of 2 Flink lines (20 or more), found $n"; bad=1; }
	[ "$bad" -eq 0 ]
}

# A re-uided operator, in the shape of t/flink/helper.bash, is what Flink said the old one was, but
# for its uid (version 5 and later store it; earlier ones store none).
@test "flink: a re-uided operator holds under its new id what Flink read under the old one" {
	local v name dir new bad=0 want got
	for v in $(flink_versions); do
		for name in savepoint-hashmap-canonical savepoint-rocksdb-native; do
			dir=$(artifact_dir "$v" "$name")
			ckpt-merge --uid keyed=keyed-v2 -o "$v-$name/" "$dir"
			new=$(ckpt-inspect -m -u keyed-v2 "$v-$name" | jq -r '.operators[] | select(.matched_uid) | .id')
			[ "${#new}" -eq 32 ] && [ "$new" != e7beec23fd9f6ed5e1b8395129d43728 ] || { echo "$v/$name: id $new"; bad=1; }
			want=$(jq -c "$JQ_FLINK"' | .operators["e7beec23fd9f6ed5e1b8395129d43728"] | del(.uid)' \
				"$FLINK_OUT/$v/sidecars/$name.json")
			got=$( { ckpt-inspect -m "$v-$name"; ckpt-inspect -m -a "$v-$name"; } | jq -s -c "$JQ_CKPT"' |
				.operators["'"$new"'"] | del(.uid)')
			[ "$want" != null ] && [ "$got" = "$want" ] || { printf '%s/%s:\n  flink: %s\n  ckpt:  %s\n' "$v" "$name" "$want" "$got"; bad=1; }
			got=$(ckpt-inspect -m "$v-$name" | jq -r --arg id "$new" '.operators[] | select(.id == $id) | .uid')
			case $v in
			1.*) [ "$got" = null ] ;;
			*) [ "$got" = keyed-v2 ] ;;
			esac || { echo "$v/$name: uid $got"; bad=1; }
			[ "$(ckpt-inspect -m "$v-$name" | jq '.operators | length')" -eq \
				"$(ckpt-inspect -m "$dir" | jq '.operators | length')" ] || { echo "$v/$name: operators lost"; bad=1; }
		done
	done
	[ "$bad" -eq 0 ]
}

@test "flink: --relocate moves the absolute paths of an incremental checkpoint; the files are found there" {
	local v dir job bad=0
	for v in $(flink_versions); do
		dir=$(artifact_dir "$v" checkpoint-rocksdb-incremental-2)
		job=${dir%/chk-*}
		cp -r "$job/shared" "$v-shared"
		ckpt-merge --relocate "file:$job/shared/=file:$PWD/$v-shared/" -o "$v-sp/" "$dir"
		run sh -c 'ckpt-inspect -m "$1" | jq -r ".flink.files[] | select(.kind == \"file\") | .path"' sh "$v-sp"
		[ -n "$output" ] || { echo "$v: no absolute paths"; bad=1; }
		printf '%s\n' "$output" | grep -v "^file:$PWD/$v-shared/" && { echo "$v: not relocated"; bad=1; }
		ckpt-inspect -c "$v-sp" >check.json || { echo "$v: $(cat check.json)"; bad=1; }
		[ "$(jq .ok check.json)" = true ] || bad=1
	done
	[ "$bad" -eq 0 ]
}

@test "flink: -g refuses the savepoint Flink refused, and takes it re-uided or with the operator dropped" {
	local v f dir bad=0
	for v in $(flink_versions); do
		f=$FLINK_OUT/$v/refusals/missing-uid.json
		jq .graph "$f" >graph.json
		dir=$FLINK_OUT/$v/$(jq -r .path "$f")
		run --separate-stderr ckpt-merge -g graph.json -o "$v-refused/" "$dir"
		[ "$status" -eq 1 ] && [ ! -e "$v-refused" ] || { echo "$v: status $status: $stderr"; bad=1; }
		case $stderr in
		*"Cannot map checkpoint/savepoint state for operator cd609d6d6e317ffa5c3a045fcad5ecc9 to the new program"*) ;;
		*) echo "$v: $stderr"; bad=1 ;;
		esac
		ckpt-merge -g graph.json --uid broadcast=broadcast-v2 -o "$v-reuid/" "$dir" || bad=1
		ckpt-merge -g graph.json "$v-reuid" >/dev/null || { echo "$v: the re-uided savepoint does not map"; bad=1; }
		ckpt-merge -g graph.json --drop broadcast -o "$v-dropped/" "$dir" || bad=1
	done
	[ "$bad" -eq 0 ]
}
