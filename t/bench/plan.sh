#!/bin/sh
# Benchmark of ckpt-plan (not run by make check): prints times and peak memory.
#  1. 1,000,000 subtasks: two vertices of parallelism 100,000 joined ALL_TO_ALL,
#     then a POINTWISE chain of eight more, some subtasks finished; planned end
#     to end (target: under 2 s and under 200 MB).
#  2. two vertices of parallelism 30,000 joined ALL_TO_ALL whose upstream
#     subtasks are all finished but the last: the fast algorithm against
#     -A reference, whole process against whole process (target: >= 100x).
# Each case runs several times: the best wall time, the best CPU time of the
# whole process, and its peak RSS are shown.
cd "$(dirname "$0")/../.." || exit 2
BIN=${CKPT_BIN:-bin}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

# measure N LABEL CMD...: runs CMD N times and sets (and prints) $wall, the
# best wall time, $cpu, the best CPU time of the whole process (task-clock
# from perf(1) when installed, else user + system time from time(1), which
# counts in hundredths), and $mb, the peak RSS.  The best of several runs is
# the least disturbed by whatever else the machine is doing.
measure() {
	n=$1 label=$2
	shift 2
	: > "$tmp/wall"
	: > "$tmp/cpu"
	i=0
	while [ $i -lt "$n" ]; do
		t0=$(date +%s%N)
		"$@" > /dev/null
		st=$?
		t1=$(date +%s%N)
		[ $st -gt 1 ] && echo "$label: exit status $st" >&2
		echo $((t1 - t0)) >> "$tmp/wall"
		if [ -n "$PERF" ]; then
			perf stat -x, -e task-clock -o "$tmp/perf" "$@" > /dev/null
			awk -F, '$3 == "task-clock" { print $1 / 1000 }' "$tmp/perf" >> "$tmp/cpu"
		else
			/usr/bin/time -f '%U %S' -o "$tmp/time" "$@" > /dev/null
			awk '{ print $1 + $2 }' "$tmp/time" >> "$tmp/cpu"
		fi
		i=$((i + 1))
	done
	wall=$(sort -n "$tmp/wall" | awk 'NR == 1 { printf "%.4f", $1 / 1e9 }')
	cpu=$(sort -g "$tmp/cpu" | awk 'NR == 1 { printf "%.4f", $1 }')
	/usr/bin/time -f '%M' -o "$tmp/time" "$@" > /dev/null
	mb=$(awk '{ printf "%.1f", $1 / 1024 }' "$tmp/time")
	printf '%-46s wall %7.4f s  cpu %7.4f s  %6.1f MB\n' "$label" "$wall" "$cpu" "$mb"
}

PERF=
command -v perf > /dev/null && perf stat -x, -e task-clock -o /dev/null true 2> /dev/null && PERF=1

awk 'BEGIN {
	P = 100000
	printf "{\"vertices\":[{\"id\":\"src\",\"parallelism\":%d,\"finished\":\"0-49999\"},", P
	printf "{\"id\":\"agg\",\"parallelism\":%d}", P
	for (i = 1; i <= 8; i++)
		printf ",{\"id\":\"m%d\",\"parallelism\":%d%s}", i, P, i == 5 ? ",\"finished\":\"0-9999,20000-29999\"" : ""
	printf "],\"edges\":[{\"source\":\"src\",\"target\":\"agg\"},"
	printf "{\"source\":\"agg\",\"target\":\"m1\",\"distribution\":\"pointwise\"}"
	for (i = 2; i <= 8; i++)
		printf ",{\"source\":\"m%d\",\"target\":\"m%d\",\"distribution\":\"pointwise\"}", i - 1, i
	print "]}"
}' > "$tmp/million.json"

echo '{"vertices":[{"id":"up","parallelism":30000,"finished":"0-29998"},{"id":"down","parallelism":30000}],"edges":[{"source":"up","target":"down"}]}' > "$tmp/wide.json"

echo "ckpt-plan benchmark: $(nproc) CPUs, $(uname -m)"
measure 50 "process floor: ckpt-plan -V" "$BIN/ckpt-plan" -V
floor=$wall
measure 5 "1M subtasks: plan (fast)" "$BIN/ckpt-plan" "$tmp/million.json"
mwall=$wall mmb=$mb
measure 1 "1M subtasks: -A both (cross-checked)" "$BIN/ckpt-plan" -A both "$tmp/million.json"
measure 3 "1M subtasks: -G (normal form)" "$BIN/ckpt-plan" -G "$tmp/million.json"
measure 3 "1M subtasks: -f m4:7 (region restart set)" "$BIN/ckpt-plan" -f m4:7 "$tmp/million.json"
measure 3 "1M subtasks: --regions" "$BIN/ckpt-plan" --regions "$tmp/million.json"
measure 50 "30,000 x 30,000 ALL_TO_ALL: fast" "$BIN/ckpt-plan" "$tmp/wide.json"
fwall=$wall fcpu=$cpu
measure 5 "30,000 x 30,000 ALL_TO_ALL: -A reference" "$BIN/ckpt-plan" -A reference "$tmp/wide.json"
rwall=$wall rcpu=$cpu
echo "$mwall $mmb $fwall $fcpu $rwall $rcpu $floor" | awk '{
	printf "\n1M subtasks planned in %.3f s (target < 2 s), peak %.1f MB (target < 200 MB)\n", $1, $2
	printf "reference / fast, CPU time of the whole process: %.0fx (target >= 100x)\n", $6 / $4
	printf "reference / fast, wall time of the whole process: %.0fx", $5 / $3
	printf " (ckpt-plan -V alone takes %.4f s of wall time here)\n", $7
}'
