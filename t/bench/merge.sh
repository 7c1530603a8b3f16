#!/bin/sh
# ckpt-merge at scale: 1,000,000 list and 1,000,000 keyed entries over 100 subtasks,
# rescaled to 37 and back from tar archives.  Prints wall time and peak memory of each run,
# next to the archive size and its largest member: memory should follow the member, not the archive.
# Wall time includes writing and syncing about 140 MB (spool and archive); cpu is ours.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${CKPT_BIN:-$ROOT/bin}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/ckpt-merge-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT INT TERM
P=100 M=256 LIST=1000000 KEYED=1000000

awk -v P=$P -v M=$M -v L=$LIST -v K=$KEYED 'BEGIN {
	printf "{\"format\": \"ckpt-state\", \"version\": 1, \"checkpoint_id\": 1, \"kind\": \"savepoint\", \"operators\": [\n"
	printf "{\"id\": \"count\", \"uid\": \"count-1\", \"vertex\": \"count\", \"parallelism\": %d, \"max_parallelism\": %d, \"fully_finished\": false, \"coordinator\": null, \"subtasks\": [\n", P, M
	for (i = 0; i < P; i++) {
		lo = int((i * M + P - 1) / P); hi = int(((i + 1) * M - 1) / P)
		printf "%s{\"index\": %d, \"finished\": false, \"operator_state\": {", i ? ",\n" : "", i
		for (n = 0; n < 2; n++) {
			printf "%s\"buffer-%d\": {\"mode\": \"list\", \"entries\": [", n ? ", " : "", n
			for (e = 0; e < L / P / 2; e++)
				printf "%s\"element-%d-%d-%d\"", e ? "," : "", i, n, e
			printf "]}"
		}
		printf "}, \"keyed_state\": {\"key_groups\": \"%d-%d\", \"entries\": [", lo, hi
		for (e = 0; e < K / P; e++)
			printf "%s{\"state\": \"count\", \"key_group\": %d, \"key\": \"user-%d-%d\", \"value\": \"%d\"}", e ? "," : "", lo + e % (hi - lo + 1), i, e, e
		printf "]}}"
	}
	printf "]}]}\n"
}' > "$TMP/state.json"
"$BIN/ckpt-merge" -o "$TMP/p100.tar" "$TMP/state.json"
rm -f "$TMP/state.json"

largest() {
	tar tvf "$1" | awk '{ if ($3 > m) m = $3 } END { print m }'
}

run() {
	/usr/bin/time -f "%e %U %S %M" -o "$TMP/time" "$BIN/ckpt-merge" -P "$1" -o "$3" "$2"
	read -r secs user sys kb < "$TMP/time"
	printf '%-12s %5s s (cpu %4.2f s)  peak %6d KiB  archive %6d KiB  largest member %5d KiB\n' \
		"$(basename "$2" .tar) -> $1" "$secs" "$(echo "$user + $sys" | bc)" "$kb" \
		$(( $(wc -c < "$2") / 1024 )) $(( $(largest "$2") / 1024 ))
}

echo "ckpt-merge: $LIST list + $KEYED keyed entries, $P subtasks, max parallelism $M"
run 37 "$TMP/p100.tar" "$TMP/p37.tar"
run 100 "$TMP/p37.tar" "$TMP/back.tar"
"$BIN/ckpt-merge" -P 37 "$TMP/back.tar" > /dev/null
