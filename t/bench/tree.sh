# Sourced by t/bench/list.sh and t/bench/orphans.sh: a Flink checkpoint directory of $N checkpoints
# of 100 files each under $R (kept between runs when CKPT_BENCH_LIST names it).  Each chk-N holds a
# copy of a real _metadata (the fixture that names the most files: 85), the 85 state files it names
# (sparse, of the sizes it records) and 14 files it does not name.  Needs BIN, FIX, W, N.
META=$FIX/flink-savepoints/v4-flink1.17-udf-rocksdb-checkpoint-unaligned/_metadata
[ -f "$META" ] || { echo "$0: no fixtures at $FIX (CKPT_FIXTURES)" >&2; exit 1; }
R=${CKPT_BENCH_LIST:-$W/ckpts}
job=$R/0123456789abcdef0123456789abcdef
if [ ! -d "$job/chk-$N" ]; then
mkdir -p "$W/t" "$job/shared" "$job/taskowned"
cp "$META" "$W/t/_metadata"
"$BIN/ckpt-inspect" -m "$META" | jq -r '.flink.files[] | "\(.path) \(.size)"' | while read -r p s; do
	truncate -s "$s" "$W/t/$p"
done
i=0
while [ $i -lt 14 ]; do : > "$W/t/unnamed-$i"; i=$((i + 1)); done
[ "$(ls "$W/t" | wc -l)" -eq 100 ]
start=$(date +%s.%N)
i=1
while [ $i -le $N ]; do cp -r --sparse=always "$W/t" "$job/chk-$i"; i=$((i + 1)); done
echo "built $N checkpoints of $(ls "$job/chk-1" | wc -l) files in $(echo "$(date +%s.%N) $start" | awk '{printf "%.1f", $1 - $2}') s"
fi

# elapsed seconds, CPU seconds (user + system: the figure that stays honest when other work shares
# the two cores) and peak RSS, of the fastest of 3 runs
run() { # label, then the command
	l=$1
	shift
	"$@" > "$W/out" # warm the cache
	best=
	for k in 1 2 3; do
		/usr/bin/time -f '%e %U %S %M' -o "$W/time" "$@" > "$W/out"
		best=$(printf '%s\n%s\n' "$best" "$(cat "$W/time")" | awk 'NF' | sort -n | head -1)
	done
	echo "$best" | awk -v l="$l" '{printf "%-30s %5.2f s elapsed, %5.2f s of CPU, peak %5.1f MB\n", l, $1, $2 + $3, $4 / 1024}'
}
