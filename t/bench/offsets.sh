#!/usr/bin/env bash
# ckpt-inspect --offsets (issue 41: under 50 ms on the 1 GiB bench savepoint with a Kafka source in
# it) next to ckpt-inspect -m (the _metadata alone, the floor any command pays) in one run.  The
# savepoint: the canonical savepoint of about 1 GiB that t/flink's BenchState writes (as
# t/bench/maxpar.sh: Flink 2.3.0, two keyed operators, many small keys), with the Kafka source
# operator of the harness's connector savepoint (build/flink/2.3.0/kafka/kafka-hashmap-canonical,
# t/flink/README: its reader splits and enumerator inline in its _metadata) spliced in as one more
# operator record, the state files linked beside it.  Checked: --offsets of the result names the
# same Kafka splits as on the connector savepoint alone, and -v counts the state-file bytes read.
#
#   CKPT_BENCH_STATE_MB=N      a savepoint of about N MiB instead of 1024 (a quick run: 32)
#   CKPT_BENCH_SAVEPOINT=DIR   where the savepoint is written, and kept for the next run
#                              (default: a temporary directory under build/bench/, removed)
#   CKPT_BENCH_KAFKA=DIR       the savepoint whose Kafka source is spliced in (Flink 2.x, format 5+)
#   CKPT_BENCH_RUNS=N          runs of each, the best counted (default 5)
#   CKPT_BENCH_JAVA_HEAP=SIZE  -Xmx of the JVM that writes the savepoint (default 8g)
set -e
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${CKPT_BIN:-$ROOT/bin}
MB=${CKPT_BENCH_STATE_MB:-1024}
HEAP=${CKPT_BENCH_JAVA_HEAP:-8g}
KSP=${CKPT_BENCH_KAFKA:-$ROOT/build/flink/2.3.0/kafka/kafka-hashmap-canonical}
export CKPT_BENCH_RUNS=${CKPT_BENCH_RUNS:-5}
[ -f "$KSP/_metadata" ] || { echo "no Kafka savepoint at $KSP (make flink-fixtures, or CKPT_BENCH_KAFKA=DIR)" >&2; exit 2; }
mkdir -p "$ROOT/build/bench"
W=$(mktemp -d "$ROOT/build/bench/offsets.XXXXXX")
trap 'rm -rf "$W"' EXIT
SP=${CKPT_BENCH_SAVEPOINT:-$W/savepoint}

. t/bench/java.sh

KEYS=$((MB * 1024 * 1024 / 212))
if [ ! -f "$SP/_metadata" ]; then
	rm -rf "$SP"
	echo "writing the savepoint ($KEYS keys per operator) with Flink ..."
	"$W/bench-java" write "$SP" "$KEYS" >"$W/write.log" 2>&1 || { tail -20 "$W/write.log"; exit 1; }
fi

hex() { xxd -p "$1" | tr -d '\n'; }
# The byte offset of the first hex $2 in hex string $1 (on a byte boundary), or exit.
offset() {
	local pre=${1%%"$2"*}
	[ "$pre" != "$1" ] && [ $((${#pre} % 2)) -eq 0 ] || { echo "offsets.sh: $3 not found" >&2; exit 1; }
	echo $((${#pre} / 2))
}
# CheckpointProperties, Java-serialized: the trailer of a _metadata of format 4 and up.
PROPS=aced0005737200386f72672e6170616368652e666c696e6b2e72756e74696d652e636865636b706f696e742e436865636b706f696e7450726f70657274696573
# Where the properties start: Java serialization of CheckpointProperties, or of null (the State
# Processor API's savepoints).
trailer() {
	if [ "${1: -10}" = aced000570 ]; then echo $((${#1} / 2 - 5)); else offset "$1" "$PROPS" "$2"; fi
}
utfhex() { printf '%04x' "${#1}"; printf '%s' "$1" | xxd -p | tr -d '\n'; }

# The Kafka source's record (format 5 and up: UTF name, UTF uid, the id, ...), to the next
# operator's record or the properties.
K=$(hex "$KSP/_metadata")
B=$(hex "$SP/_metadata")
[ "${K:8:8}" = "${B:8:8}" ] && [ $((16#${K:8:8})) -ge 5 ] || { echo "offsets.sh: formats ${K:8:8} and ${B:8:8}: not one of 5 and up" >&2; exit 1; }
[ "${K:32:8}${B:32:8}" = 0000000000000000 ] || { echo "offsets.sh: master states in a _metadata" >&2; exit 1; }
"$BIN/ckpt-inspect" -m "$KSP" | jq -r '.operators[] | "\(.id)\t\(.name // "")\t\(.uid // "")"' >"$W/ops"
KID=$("$BIN/ckpt-inspect" --offsets "$KSP" | jq -r 'select(.connector == "kafka") | .operator' | head -1)
[ -n "$KID" ] || { echo "offsets.sh: no Kafka source in $KSP" >&2; exit 1; }
end=$(trailer "$K" "the checkpoint properties")
while IFS=$'\t' read -r id name uid; do
	s=$(($(offset "$K" "$id" "operator $id") - 4 - ${#name} - ${#uid}))
	[ "${K:$((s * 2)):$(((4 + ${#name} + ${#uid}) * 2))}" = "$(utfhex "$name")$(utfhex "$uid")" ] ||
		{ echo "offsets.sh: operator $id: no name and uid before its id" >&2; exit 1; }
	echo "$s $id"
done <"$W/ops" >"$W/starts"
sort -n -o "$W/starts" "$W/starts"
start=$(awk -v id="$KID" '$2 == id { print $1 }' "$W/starts")
next=$(awk -v s="$start" '$1 > s { print $1; exit }' "$W/starts")
[ -z "$next" ] || end=$next
REC=${K:$((start * 2)):$(((end - start) * 2))}

# Into the bench savepoint: the operator count one more, the record before the properties.
C=$W/combined
mkdir "$C"
for f in "$SP"/*; do [ "${f##*/}" = _metadata ] || ln -s "$f" "$C/"; done
BT=$(trailer "$B" "the bench savepoint's checkpoint properties")
printf '%s%08x%s%s%s' "${B:0:40}" $((16#${B:40:8} + 1)) "${B:48:$((BT * 2 - 48))}" "$REC" "${B:$((BT * 2))}" |
	xxd -r -p >"$C/_metadata"

BYTES=$(du -cbL "$C"/* | tail -1 | cut -f1)
echo "savepoint: $BYTES bytes ($SP), the Kafka source $KID of $KSP spliced in ($C)"
diff <("$BIN/ckpt-inspect" --offsets "$KSP" | jq -c 'select(.connector == "kafka")') \
	<("$BIN/ckpt-inspect" --offsets "$C" | jq -c 'select(.connector == "kafka")') >/dev/null ||
	{ echo "offsets.sh: --offsets of the result differs from the connector savepoint's" >&2; exit 1; }
echo "  --offsets of the result: the $("$BIN/ckpt-inspect" --offsets "$C" | jq -c 'select(.connector == "kafka")' | wc -l) Kafka rows of the connector savepoint; $("$BIN/ckpt-inspect" -v --offsets "$C" 2>&1 >/dev/null | grep -i 'bytes' | head -1)"

# Runs of tens of milliseconds, below /usr/bin/time's 10 ms: best (java.sh) of loops of 20 runs each,
# divided by 20.
LOOP=20
loop() { for _ in $(seq "$LOOP"); do "$@" >/dev/null; done; }
ms() { echo "$1" | awk -v n="$LOOP" '{ printf "%.1f ms", $1 * 1000 / n }'; }
set -- $(best bash -c "$(declare -f loop); LOOP=$LOOP; loop \"\$@\"" - "$BIN/ckpt-inspect" -m "$C"); M_E=$1 M_C=$2 M_M=$3
echo "ckpt-inspect -m (the _metadata alone): $(ms "$M_E") elapsed, $(ms "$M_C") CPU, peak $((M_M / 1024)) MB"
set -- $(best bash -c "$(declare -f loop); LOOP=$LOOP; loop \"\$@\"" - "$BIN/ckpt-inspect" --offsets "$C"); O_E=$1 O_C=$2 O_M=$3
echo "ckpt-inspect --offsets:                $(ms "$O_E") elapsed, $(ms "$O_C") CPU, peak $((O_M / 1024)) MB"
echo "$O_E $M_E $O_C $M_C" | awk -v n="$LOOP" '{ printf "--offsets: %.1f ms elapsed a run (target: under 50 ms), %+.1f ms of CPU over -m\n",
	$1 * 1000 / n, ($3 - $4) * 1000 / n }'
