#!/bin/sh
# make flink-fixtures: build the harness for each Flink line pinned in pom.xml and write its
# artifacts into build/flink/VERSION/ (see README).  A line whose artifacts were written from the
# same harness sources (pom.xml, this script, src/) is skipped, so a second run costs seconds.
# Maven works offline when its cache holds everything (-o), else it downloads from Maven Central.
set -eu
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
hash=$( (cat pom.xml kafka/pom.xml run.sh; find src -type f | LC_ALL=C sort | xargs cat) | sha256sum | cut -c1-16)
for line in ${FLINK_LINES:-flink2 flink1}; do
	version=$(awk -v id="$line" '/<id>/ { cur = $0; sub(/.*<id>/, "", cur); sub(/<.*/, "", cur) }
		cur == id && /<flink.version>/ { v = $0; sub(/.*<flink.version>/, "", v); sub(/<.*/, "", v); print v; exit }' pom.xml)
	[ -n "$version" ] || { echo "t/flink/run.sh: no flink.version for profile $line in pom.xml" >&2; exit 2; }
	out=$root/build/flink/$version
	if [ -f "$out/.harness-hash" ] && [ "$(cat "$out/.harness-hash")" = "$hash" ]; then
		echo "flink $version: artifacts up to date ($out)"
		continue
	fi
	cp=target/$version/classpath.txt
	goals="compile dependency:build-classpath -Dmdep.outputFile=$cp"
	# shellcheck disable=SC2086
	mvn -B -q -o -P "$line" $goals >/dev/null 2>&1 || mvn -B -q -P "$line" $goals
	# Flink's S3 file system (flink2 only) apart: its jar carries unshaded Hadoop, Guava and Jackson,
	# which only s3.bats's JVMs put on their class path (s3-classpath.txt)
	tr : '\n' <"$cp" | grep '/flink-s3-fs-presto-[^/]*\.jar$' >"${cp%/*}/s3-classpath.txt" || true
	tr : '\n' <"$cp" | grep -v '/flink-s3-fs-presto-[^/]*\.jar$' | paste -sd: >"$cp.tmp" && mv "$cp.tmp" "$cp"
	# the Kafka broker's own class path (kafka/pom.xml: Apache Kafka's server; KafkaBroker.java runs it
	# in a JVM of its own beside the harness's classes)
	kcp=$PWD/target/kafka/classpath.txt
	mvn -B -q -o -f kafka/pom.xml dependency:build-classpath -Dmdep.outputFile="$kcp" >/dev/null 2>&1 ||
		mvn -B -q -f kafka/pom.xml dependency:build-classpath -Dmdep.outputFile="$kcp"
	start=$(date +%s)
	# --add-opens: the State Processor API's writer ships OperatorState through Kryo, whose ReflectASM
	# defines accessors in the class's own loader and reads private fields (as Flink's JVM options allow)
	java -Xmx700m -XX:+UseSerialGC --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED -cp "target/$version/classes:$(cat "$cp")" ckpt.flink.Main "$out" batch
	echo "flink $version: harness ran in $(($(date +%s) - start)) s"
	echo "$hash" >"$out/.harness-hash"
done
