#!/usr/bin/env bats
# User types typed (issue 27 items 1, 4): TypesJob's savepoints (types/, TypesJob.java) of keyed
# value state "pojo" (a POJO with a nested POJO and null fields), "pet" (a POJO base class holding
# itself or a registered subclass), "specific" and "generic" (Avro records: union, enum, fixed,
# decimal, date, timestamps, array, map, bytes, a recursive record) and "kryo" (a Kryo-only type).
# ckpt-inspect -R's rows of each canonical savepoint and of the RocksDB native one must equal, leaf
# by leaf, what the job put there (the sidecar's "contents") and, for the canonical ones, what the
# State Processor API reads back ("spa").

load helper

# jq over rows: {key: {state: value}} of the five states (Flink 1.20 records no uid); a Kryo value as "kryo" (typed null).
JQ_ROWS='[.[] | select(.state | IN("pojo", "pet", "specific", "generic", "kryo"))] | group_by(.key)
| map({key: .[0].key, value: (map({key: .state, value: (if .state == "kryo" then
	(if .value.typed == null and .value.bytes != null then "kryo" else .value end) else .value end)}) | from_entries)})
| from_entries'
# jq over a sidecar's contents or spa: the same shape.
JQ_SIDE='map_values(.kryo |= (if . == null then null else "kryo" end))'

types_savepoints() {
	local v
	for v in $(flink_versions); do
		[ -f "$FLINK_OUT/$v/types/sidecar.json" ] && echo "$v"
	done
}

@test "flink types: POJOs, Avro records and Kryo values of the canonical and RocksDB native savepoints equal the job's contents and the State Processor API's" {
	local v a side bad=0 n=0
	for v in $(types_savepoints); do
		side=$FLINK_OUT/$v/types/sidecar.json
		for a in types-hashmap-canonical types-rocksdb-canonical types-rocksdb-native; do
			n=$((n + 1))
			ckpt-inspect -R "$FLINK_OUT/$v/types/$a" >rows.ndjson || { echo "$v/$a: ckpt-inspect -R failed"; bad=1; continue; }
			jq -s "$JQ_ROWS" rows.ndjson >ckpt.json
			jq ".contents | $JQ_SIDE" "$side" >job.json
			jq --arg a "$a" ".spa[\$a] // {} | $JQ_SIDE" "$side" >spa.json
			[ "$(jq 'length' ckpt.json)" -eq 6 ] || { echo "$v/$a: $(jq length ckpt.json) keys typed, 6 expected"; bad=1; }
			[ "$(jq '[.[] | length] | min' ckpt.json)" -eq 5 ] || { echo "$v/$a: a key without its 5 states"; bad=1; }
			differ "$v/$a contents" ckpt.json job.json || bad=1
			[ "$a" = types-rocksdb-native ] || differ "$v/$a spa" ckpt.json spa.json || bad=1 # spa: of the canonical ones
		done
	done
	[ "$n" -gt 0 ] || skip "no types/ artifacts (make flink-fixtures)"
	[ "$bad" -eq 0 ]
}

@test "flink types: the subclass is written by its tag, the null fields as null, the Avro logical types as strings" {
	local v
	for v in $(types_savepoints); do
		run sh -c "ckpt-inspect -R '$FLINK_OUT/$v/types/types-rocksdb-canonical' | jq -c 'select(.key == \"k3\" and (.state == \"pet\" or .state == \"pojo\")) | .value' | sort"
		[ "$status" -eq 0 ]
		[ "$output" = '{"id":3,"inner":{"label":"in3","n":2999},"note":"odd é3","ratio":0.75}
{"subclass":"ckpt.flink.TypesJob$Sub","tag":0,"value":{"extra":-3,"name":"sub3"}}' ] || { echo "$v: $output"; return 1; }
		run sh -c "ckpt-inspect -R '$FLINK_OUT/$v/types/types-rocksdb-canonical' | jq -c 'select(.key == \"k3\" and .state == \"generic\") | .value | {color, tag, amount, price, day, at, at_us, label: .label}'"
		[ "$output" = '{"color":"RED","tag":{"base64":"dGcz/w=="},"amount":"-0.15","price":"-1234.564","day":"1943-03-04","at":"2024-03-13T22:13:20.123Z","at_us":"1969-12-31T23:59:55.061732Z","label":null}' ] ||
			{ echo "$v: $output"; return 1; }
	done
}

@test "flink types: a heap snapshot (native) stops at the Kryo state, which has no lengths, naming it" {
	local v n=0
	for v in $(types_savepoints); do
		n=$((n + 1))
		run ckpt-inspect -R "$FLINK_OUT/$v/types/types-hashmap-native"
		[ "$status" -eq 1 ]
		[[ $output == *'state "kryo" of a heap snapshot has no lengths, and its serializer org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializerSnapshot is not one ckpt decodes'* ]] ||
			{ echo "$v: $output"; return 1; }
	done
	[ "$n" -gt 0 ] || skip "no types/ artifacts"
}
