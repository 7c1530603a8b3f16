#!/bin/sh
# ckpt-inspect on a savepoint of about 1 GiB in S3 (s3proxy, the server of t/s3.bats, its
# filesystem backend on this disk, on 127.0.0.1), next to the same on the local disk and to curl,
# all measured in this run:
# - `-R -u UID -k KEY`: the bytes fetched from the server (ckpt-inspect -v counts them) as a % of
#   the savepoint, and the time next to the same on the local copy (targets, issue 28: under 1 %,
#   within 3x);
# - `-R` of the whole savepoint next to curl fetching its files in parallel to /dev/null (target:
#   within 2x), and next to `-R` on the local copy.
#
#   CKPT_BENCH_SAVEPOINT=DIR   the savepoint (default /work/bench/sp1g, where the harness keeps the
#                              one t/bench/flinkstate.sh writes: CKPT_BENCH_SAVEPOINT=DIR there
#                              keeps it); absent: this benchmark is skipped, said on stderr
#   CKPT_BENCH_RUNS=N          runs of each -k, their mean counted (default 20); -R runs once
#
# Needs java (the JDK of .ci/deps), curl 7.75 or later (--aws-sigv4), s3proxy (fetched here with
# `sh .ci/deps s3proxy` when absent) and /usr/bin/time (sh .ci/deps bench).
set -e
BENCH=s3
. "$(dirname "$0")/setup.sh"
. t/s3-helper.bash # the server of t/s3.bats
BEST_RUNS=1 # here CKPT_BENCH_RUNS counts the runs of -k
SP=${CKPT_BENCH_SAVEPOINT:-/work/bench/sp1g}

if [ ! -f "$SP/_metadata" ]; then
	echo "t/bench/s3.sh: SKIPPED: no savepoint at $SP (set CKPT_BENCH_SAVEPOINT=DIR; t/bench/flinkstate.sh" \
		"writes one and keeps it with CKPT_BENCH_SAVEPOINT=DIR)" >&2
	exit 0
fi
[ -f "$S3PROXY_JAR" ] || sh .ci/deps s3proxy
if [ ! -f "$S3PROXY_JAR" ] || ! command -v java >/dev/null; then
	echo "t/bench/s3.sh: SKIPPED: no s3proxy ($S3PROXY_JAR) or no java" >&2
	exit 0
fi
trap 'kill $(cat "$W/s3proxy/pid" 2>/dev/null) 2>/dev/null; rm -rf "$W"' EXIT
s3_serve "$W/s3proxy"
s3_env "$(cat "$W/s3proxy/endpoint")" "$W"
E=$S3_ENDPOINT

BYTES=$(du -cb "$SP"/* | tail -1 | cut -f1)
echo "savepoint: $BYTES bytes ($SP), uploading to s3proxy $S3PROXY_VERSION at $E ..."
s3curl -X PUT -o /dev/null "$E/bench"
UP=
for f in "$SP"/*; do
	s3curl -o /dev/null -T "$f" "$E/bench/sp/${f##*/}" &
	UP="$UP $!"
done
for p in $UP; do wait "$p"; done # (a bare wait would wait for the server too)
cat "$SP"/* >/dev/null # the local copy into the page cache, as the server's is after the upload

# The mean of N runs of "$@" (stdout to /dev/null) in milliseconds (/usr/bin/time counts in 10 ms).
mean_ms() {
	n=$1
	shift
	t0=$(date +%s%N)
	for r in $(seq "$n"); do "$@" >/dev/null; done
	echo "$t0 $(date +%s%N) $n" | awk '{ printf "%.1f", ($2 - $1) / $3 / 1e6 }'
}

# -k: one key of each operator (BenchState's savepoint: by-string and by-long), in S3 and on disk
RUNS=${CKPT_BENCH_RUNS:-20}
for uk in 'by-string "key-000000000007"' 'by-long 0'; do
	u=${uk%% *} k=${uk#* }
	"$BIN/ckpt-inspect" -R -u "$u" -k "$k" "$SP" >"$W/local.out"
	"$BIN/ckpt-inspect" -v -R -u "$u" -k "$k" s3://bench/sp 2>"$W/v" >"$W/s3.out"
	cmp -s "$W/local.out" "$W/s3.out" || { echo "-u $u -k $k: S3 and the local copy differ" >&2; exit 1; }
	GOT=$(sed -n 's/.*: \([0-9]*\) bytes fetched from S3$/\1/p' "$W/v")
	L=$(mean_ms "$RUNS" "$BIN/ckpt-inspect" -R -u "$u" -k "$k" "$SP")
	S=$(mean_ms "$RUNS" "$BIN/ckpt-inspect" -R -u "$u" -k "$k" s3://bench/sp)
	echo "$S $L $GOT $BYTES $(wc -l <"$W/s3.out")" | awk -v l="-R -u $u -k $k" '{
		printf "%-36s S3 %6.1f ms, local %6.1f ms: %.1fx (target: within 3x); %.0f of %.0f bytes fetched (%.3f %%; target: under 1 %%); %d rows\n",
		l, $1, $2, $1 / ($2 > 0 ? $2 : 0.001), $3, $4, 100 * $3 / $4, $5 }'
done

# -R of the whole savepoint: in S3, on disk, and curl fetching its files at once to /dev/null
set -- $(best sh -c 'exec "$0" -v -R s3://bench/sp 2>"$1"' "$BIN/ckpt-inspect" "$W/v"); RS_E=$1
show "ckpt-inspect -R s3://bench/sp:" "$1" "$2" "$3"
sed -n 's/.*: \([0-9]*\) bytes fetched from S3$/\1/p' "$W/v" | awk -v b="$BYTES" '{
	printf "  %.0f bytes fetched (%.2fx the savepoint)\n", $1, $1 / b }'
set -- $(best "$BIN/ckpt-inspect" -R "$SP"); RL_E=$1
show "ckpt-inspect -R (local copy):" "$1" "$2" "$3"
for f in "$SP"/*; do printf 'url = "%s"\noutput = "/dev/null"\n' "$E/bench/sp/${f##*/}"; done >"$W/curl.cfg"
set -- $(best curl -sS --no-progress-meter --fail --parallel --parallel-max 8 --aws-sigv4 aws:amz:us-east-1:s3 --user "$S3_ID:$S3_SECRET" \
	-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' -K "$W/curl.cfg"); CU_E=$1
show "curl --parallel of its files:" "$1" "$2" "$3"
echo "$RS_E $CU_E $RL_E" | awk '{
	printf "ckpt-inspect -R in S3: %.1fx the time of curl fetching the files (target: within 2x), %.1fx that of -R on the local copy\n",
	$1 / ($2 > 0 ? $2 : 0.01), $1 / ($3 > 0 ? $3 : 0.01) }'
