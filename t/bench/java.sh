# Sourced (in place of t/bench/setup.sh, which it sources) by the benchmarks of state written by real
# Flink: the harness's BenchState as a command ($W/bench-java, Flink 2.3.0) and the two states it
# writes (bench_savepoint, bench_checkpoint), of about MB MiB, written once and kept where the user
# says.  Set HEAP before to change the default -Xmx of 8g.
. "$(dirname "$0")/setup.sh"
MB=${CKPT_BENCH_STATE_MB:-1024}
HEAP=${CKPT_BENCH_JAVA_HEAP:-${HEAP:-8g}}
SP=${CKPT_BENCH_SAVEPOINT:-$W/savepoint}
D=${CKPT_BENCH_CHECKPOINTS:-$W/checkpoints}
# the harness's classes and class path for Flink 2.3.0 (as t/flink/run.sh builds them)
CP=target/2.3.0/classpath.txt
(cd "$ROOT/t/flink" && { mvn -B -q -o -P flink2 compile dependency:build-classpath -Dmdep.outputFile=$CP >/dev/null 2>&1 ||
	mvn -B -q -P flink2 compile dependency:build-classpath -Dmdep.outputFile=$CP; })
JCP="$ROOT/t/flink/target/2.3.0/classes:$(cat "$ROOT/t/flink/$CP")"
# Kryo (Flink's fallback serializer, used for the SavepointWriter's operator states) defines
# accessor classes in the application's class loader only with java.lang open.  A script, so that
# /usr/bin/time can run it.
cat >"$W/bench-java" <<EOJ
#!/bin/sh
exec java -Xmx$HEAP -XX:+UseParallelGC --add-opens java.base/java.lang=ALL-UNNAMED \\
	--add-opens java.base/java.util=ALL-UNNAMED -cp '$JCP' ckpt.flink.BenchState "\$@"
EOJ
chmod +x "$W/bench-java"
sed 's/ckpt\.flink\.BenchState/ckpt.flink.SpaRewrite/' "$W/bench-java" >"$W/spa-java"
chmod +x "$W/spa-java"

# bench_write MODE DIR: BenchState MODE (write: a canonical savepoint; checkpoint: a RocksDB
# incremental checkpoint) of about MB MiB into DIR, in which it is kept.  1 GiB is about 5.1 million
# keys per operator (115 bytes a String key, 97 a Long key, both states).
bench_write() {
	KEYS=$((MB * 1024 * 1024 / 212))
	rm -rf "$2"
	echo "writing the $([ "$1" = write ] && echo savepoint || echo "$1") ($KEYS keys per operator) with Flink ..."
	"$W/bench-java" "$1" "$2" "$KEYS" >"$W/write.log" 2>&1 || { tail -20 "$W/write.log"; exit 1; }
}

# bench_savepoint: the canonical savepoint in SP (CKPT_BENCH_SAVEPOINT), written when it is not
# there; BYTES its size, its files in the page cache.
bench_savepoint() {
	[ -f "$SP/_metadata" ] || bench_write write "$SP"
	BYTES=$(du -cb "$SP"/* | tail -1 | cut -f1)
	cat "$SP"/* >/dev/null
	echo "savepoint: $BYTES bytes ($SP)"
}

# bench_checkpoint: the RocksDB checkpoint under D (CKPT_BENCH_CHECKPOINTS), written when it is not
# there; CK its chk-N directory, $W/files the files it is made of (its own and the shared files its
# _metadata names), BYTES their size, in the page cache.
bench_checkpoint() {
	CK=$(ls -d "$D"/*/chk-* 2>/dev/null | head -1)
	if [ ! -f "$CK/_metadata" ]; then
		bench_write checkpoint "$D"
		CK=$(ls -d "$D"/*/chk-* | head -1)
	fi
	"$BIN/ckpt-inspect" -m "$CK/_metadata" | jq -r '.flink.files[].path' |
		while read -r p; do
			p=${p#file:} && p=${p#//}
			case $p in /*) echo "$p" ;; *) echo "$CK/$p" ;; esac
		done | sort -u >"$W/files"
	echo "$CK/_metadata" >>"$W/files"
	BYTES=$(xargs -d '\n' du -cb <"$W/files" | tail -1 | cut -f1)
	xargs -d '\n' cat <"$W/files" >/dev/null
	echo "checkpoint: $BYTES bytes in $(wc -l <"$W/files") files ($CK)"
}

# bench_read SNAP [BACKEND]: BenchState's State Processor API reading SNAP once (it takes long): the
# whole process and the read it times itself shown, SPA_E, SPA_C and SPA_IN their seconds; fails as
# the JVM does, its output in $W/read.log.
bench_read() {
	/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$W/bench-java" read "$@" >"$W/read.log" 2>&1 || return
	read -r SPA_E SPA_U SPA_S SPA_M <"$W/t"
	SPA_C=$(echo "$SPA_U $SPA_S" | awk '{print $1 + $2}')
	show "State Processor API (java):" "$SPA_E" "$SPA_C" "$SPA_M"
	SPA_IN=$(awk '/read-ms/ {print $NF / 1000}' "$W/read.log")
	show "State Processor API (read):" "$SPA_IN" 0 0 | sed 's/, *[0-9.]* MB\/s of CPU.*//'
	grep '^keys' "$W/read.log" | sed 's/^/  State Processor API read: /'
}

# spa_rewrite IN OUT MAXPAR [rocksdb]: the State Processor API doing the rewrite ckpt-merge does
# (the harness's SpaRewrite: every key of both operators read with SavepointReader, RocksDB's or
# the heap backend's, and written with SavepointWriter as a canonical savepoint at max parallelism
# MAXPAR into OUT), once, the whole JVM timed: SPAW_E, SPAW_C (seconds) and SPAW_M (KB) shown; fails
# as the JVM does, its output in $W/spa.log.  With CKPT_BENCH_SPA_LIMIT=S it is stopped after S
# seconds elapsed (or when its `timeout` is sent TERM): then SPAW_STOPPED is set and its figures so
# far are lower bounds.
spa_rewrite() {
	rm -rf "$2"
	unset SPAW_STOPPED
	set -- ${CKPT_BENCH_SPA_LIMIT:+timeout "$CKPT_BENCH_SPA_LIMIT"} "$W/spa-java" "$@"
	/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" >"$W/spa.log" 2>&1 || {
		case $? in 124 | 143) ;; *) return ;; esac # timed out, or its timeout stopped by hand (TERM)
		SPAW_STOPPED=1
	}
	read -r SPAW_E SPAW_U SPAW_S SPAW_M <<-EOT
	$(tail -1 "$W/t")
	EOT
	[ -z "${SPAW_STOPPED-}" ] || echo "State Processor API (java):       stopped unfinished after $SPAW_E s (CKPT_BENCH_SPA_LIMIT): its figures are lower bounds"
	SPAW_C=$(echo "$SPAW_U $SPAW_S" | awk '{print $1 + $2}')
	show "State Processor API (java):" "$SPAW_E" "$SPAW_C" "$SPAW_M"
}

# spa_against LABEL E C: the line that sets ckpt's figures (elapsed E, CPU C) against the State
# Processor API's rewrite (spa_rewrite's), or says why there are none (it failed: $W/spa.log).
spa_against() {
	if [ -n "${SPAW_E-}" ]; then
		echo "$2 $SPAW_E $3 $SPAW_C" | awk -v l="$1" -v m="${SPAW_STOPPED:+more than }" '{
			printf "%s: %s%.1fx faster than the State Processor API doing the same rewrite, JVM start included (target: at least 10x), %s%.1fx less CPU\n",
				l, m, $2 / ($1 > 0 ? $1 : 0.01), m, $4 / ($3 > 0 ? $3 : 0.01) }'
	else
		echo "State Processor API (java):       failed after $(awk '{print $1}' "$W/t") s: $(grep -m1 '^Caused by: java.lang' "$W/spa.log" || tail -1 "$W/spa.log")"
	fi
}
