# Sourced by t/bench/flinkstate.sh and t/bench/rocksdb.sh: the harness's BenchState as a command
# ($W/bench-java, Flink 2.3.0), and best/show to time commands.  Needs ROOT, W, HEAP; show needs BYTES.
# the harness's classes and class path for Flink 2.3.0 (as t/flink/run.sh builds them)
CP=target/2.3.0/classpath.txt
(cd "$ROOT/t/flink" && { mvn -B -q -o -P flink2 compile dependency:build-classpath -Dmdep.outputFile=$CP >/dev/null 2>&1 ||
	mvn -B -q -P flink2 compile dependency:build-classpath -Dmdep.outputFile=$CP; })
JCP="$ROOT/t/flink/target/2.3.0/classes:$(cat "$ROOT/t/flink/$CP")"
# Kryo (Flink's fallback serializer, used for the SavepointWriter's operator states) defines
# accessor classes in the application's class loader only with java.lang open.  A script, so that
# /usr/bin/time can run it.
cat >"$W/bench-java" <<EOF
#!/bin/sh
exec java -Xmx$HEAP -XX:+UseParallelGC --add-opens java.base/java.lang=ALL-UNNAMED \\
	--add-opens java.base/java.util=ALL-UNNAMED -cp '$JCP' ckpt.flink.BenchState "\$@"
EOF
chmod +x "$W/bench-java"

# Best of CKPT_BENCH_RUNS runs of "$@" (stdout to /dev/null): elapsed seconds, CPU seconds (user +
# system, the figure that stays honest when other work shares the machine), peak RSS in KB.
best() {
	b= c= m=
	for r in $(seq "${CKPT_BENCH_RUNS:-3}"); do
		/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" >/dev/null
		e=$(awk '{print $1}' "$W/t"); u=$(awk '{print $2 + $3}' "$W/t"); k=$(awk '{print $4}' "$W/t")
		if [ -z "$b" ] || [ "$(echo "$e $b" | awk '{print ($1 < $2)}')" = 1 ]; then b=$e; fi
		if [ -z "$c" ] || [ "$(echo "$u $c" | awk '{print ($1 < $2)}')" = 1 ]; then c=$u; fi
		if [ -z "$m" ] || [ "$k" -gt "$m" ]; then m=$k; fi
	done
	echo "$b $c $m"
}
show() { # label, elapsed, cpu, rss KB
	echo "$BYTES $2 $3 $4" | awk -v l="$1" '{printf "%-32s %7.1f MB/s elapsed (%6.2f s), %7.1f MB/s of CPU (%6.2f s), peak %7.1f MB\n",
		l, $1 / ($2 > 0 ? $2 : 0.01) / 1e6, $2, $1 / ($3 > 0 ? $3 : 0.01) / 1e6, $3, $4 / 1024}'
}

