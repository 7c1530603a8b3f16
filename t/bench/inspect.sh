#!/bin/sh
# Throughput of `ckpt-inspect -c` on a 1 GiB tar next to `bsdtar -xOf | xxhsum -H3` and
# `xxhsum -H3` on the file itself, all measured in this run, and its peak memory.
set -e
. "$(dirname "$0")/setup.sh"
N=16                       # members
SIZE=$((64 * 1024 * 1024)) # bytes of the one list entry of each member

# xxhsum -q: without it each file hashed writes a line of 79 blanks and a carriage return to
# stderr (its status line, cleared), a screenful before the table.
# A directory archive written by hand from ckpt-archive(5), then packed by ckpt-merge
# (CKPT_BENCH_ARCHIVE names a place to keep it between runs).
A=${CKPT_BENCH_ARCHIVE:-$W/big.tar}
if [ ! -f "$A" ]; then
le() { # little-endian bytes of $1 in $2 bytes, as printf escapes
	v=$1 i=0
	while [ $i -lt $2 ]; do printf '\\%03o' $((v & 255)); v=$((v >> 8)); i=$((i + 1)); done
}
mkdir -p "$W/d/op/big"
head -c $SIZE /dev/urandom > "$W/payload"
subs= members= i=0
while [ $i -lt $N ]; do
	f="$W/d/op/big/$i"
	{ printf 'ckptsub1O'; printf "$(le 1 4)s\\000\\000$(le 1 8)$(le $SIZE 8)"; cat "$W/payload"; printf E; } > "$f"
	printf '%08d' $i | dd of="$f" bs=1 seek=40 conv=notrunc 2>/dev/null # members differ
	sz=$(stat -c %s "$f")
	h=$(xxhsum -q -H3 "$f" | sed 's/.*= //;s/ .*//')
	case $h in XXH3*) h=$(xxhsum -q -H3 "$f" | awk '{print $1}' | sed 's/^XXH3_//');; esac
	sep=${subs:+,}
	subs="$subs$sep{\"index\":$i,\"member\":\"op/big/$i\",\"operator_state\":{\"s\":{\"mode\":\"list\",\"entries\":1,\"bytes\":$SIZE}}}"
	members="$members$sep{\"name\":\"op/big/$i\",\"size\":$sz,\"xxh3\":\"$h\"}"
	i=$((i + 1))
done
printf '{"format":"ckpt-archive","version":1,"checkpoint_id":1,"kind":"checkpoint","operators":[{"id":"big","parallelism":%d,"max_parallelism":128,"subtasks":[%s]}],"members":[%s]}\n' \
	$N "$subs" "$members" > "$W/d/MANIFEST.json"
"$BIN/ckpt-merge" -o "$A" "$W/d/"
rm -rf "$W/d" "$W/payload"
fi
BYTES=$(stat -c %s "$A")
cat "$A" > /dev/null # into the page cache

# Best of three runs of "$@": elapsed seconds, and CPU seconds (user + system, the
# figure that stays honest when other work shares the machine).
best() {
	b= c=
	for r in 1 2 3; do
		/usr/bin/time -f '%e %U %S' -o "$W/t" "$@" > /dev/null
		e=$(awk '{print $1}' "$W/t"); u=$(awk '{print $2 + $3}' "$W/t")
		if [ -z "$b" ] || [ "$(echo "$e $b" | awk '{print ($1 < $2)}')" = 1 ]; then b=$e; fi
		if [ -z "$c" ] || [ "$(echo "$u $c" | awk '{print ($1 < $2)}')" = 1 ]; then c=$u; fi
	done
	echo "$BYTES $b $c" | awk '{printf "%6.2f GB/s elapsed (%.2f s), %6.2f GB/s of CPU (%.2f s)",
		$1 / ($2 > 0 ? $2 : 0.01) / 1e9, $2, $1 / ($3 > 0 ? $3 : 0.01) / 1e9, $3}'
}
echo "archive: $BYTES bytes, $N members"
echo "ckpt-inspect -c:            $(best "$BIN/ckpt-inspect" -c "$A")"
echo "bsdtar -xOf | xxhsum -H3:   $(best sh -c 'bsdtar -xOf "$1" | xxhsum -q -H3' sh "$A")"
echo "xxhsum -H3 archive:         $(best xxhsum -q -H3 "$A")"
/usr/bin/time -f '%M' -o "$W/mem" "$BIN/ckpt-inspect" -c "$A" > /dev/null
echo "ckpt-inspect -c peak memory: $(awk '{printf "%.1f MB", $1 / 1024}' "$W/mem")"
