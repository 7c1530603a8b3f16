# Helpers for t/flinkstate.bats: Flink state files and the _metadata naming them, written with the
# big-endian writers of flinkmeta-helper.bash (B holds \xHH escapes and plain ASCII).
. "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/flinkmeta-helper.bash"

SER=org.apache.flink.api.common.typeutils.base
VOIDNS='org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot'

blen() { printf '%b' "$B" | wc -c; }
# A serializer snapshot as the state meta info writes it: format version 2, class, version 3.
s_proxy() { b_i32 2; b_utf "$1"; b_i32 3; }
# The bytes of file $1, appended to B.
b_file() { B+=$(od -An -v -tx1 "$1" | tr -d ' \n' | sed 's/../\\x&/g'); }

# op: operator state, one list state "names" of Strings holding "a" and "bc" (OP_HDR: the
# header's length, where the first element starts).
op_file() {
	B=; b_i32 6; b_u8 0; b_i16 1
	b_utf names; b_i32 1; b_i32 1; b_utf OPERATOR_STATE_DISTRIBUTION_MODE; b_utf SPLIT_DISTRIBUTE
	b_i32 1; b_utf VALUE_SERIALIZER; s_proxy "$SER.StringSerializer\$StringSerializerSnapshot"
	b_i16 0
	OP_HDR=$(blen)
	b_u8 2; B+=a; b_u8 3; B+=bc
	b_write "${1:-op}"
}

# kv: canonical keyed state, Integer keys, value state "count" of Long: key 42 -> 7 in key
# group 29, key 1 -> 8 in 86, key 0 -> 9 in 94 (max parallelism 128).  KV_OFF: the offsets of
# key groups 29, 86, 94.
kv_file() {
	local k v kg
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 1; b_utf count; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf VALUE
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	b_utf VALUE_SERIALIZER; s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
	KV_OFF=()
	for k in 42:7:29 1:8:86 0:9:94; do
		IFS=: read -r k v kg <<<"$k"
		KV_OFF+=("$(blen)")
		b_i16 0; b_i32 6; b_u8 $((kg | 128)); b_i32 "${KEY_OF[$kg]:-$k}"; b_u8 0; b_i32 8; b_i64 "$v"; b_i16 -1
	done
	b_write "${1:-kv}"
}

# _metadata (format 3) of one operator, parallelism 1, max parallelism 128, subtask 0 holding the
# operator state of op (delegate $1) and the keyed state of kv (delegate $2); a delegate is
# "rel NAME", "abs PATH" or "inline FILE".
b_delegate() {
	case $1 in
	rel) b_u8 6; b_utf "$2"; b_i64 "$3";;
	abs) b_u8 2; b_i64 "$3"; b_utf "$2";;
	inline) b_u8 1; b_utf handle; b_i32 "$3"; b_file "$2";;
	esac
}
meta_file() {
	local i j
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 1; b_i32 128
	b_u8 0; b_i32 1; b_i32 0
	b_i32 1; b_u8 4; b_i32 1; b_utf names; b_u8 0; b_i32 2; b_i64 "$OP_HDR"; b_i64 $((OP_HDR + 2))
	b_delegate $1 "$(wc -c <op)"
	b_i32 0
	b_u8 7; b_i32 0; b_i32 128
	if [ "${KG_FOR-}" != "${KV_OFF[*]}" ]; then # the 128 offsets, written once per KV_OFF
		local save=$B
		B=
		for ((i = 0; i < 128; i++)); do
			case $i in 29) j=${KV_OFF[0]};; 86) j=${KV_OFF[1]};; 94) j=${KV_OFF[2]};; *) j=0;; esac
			b_i64 "$j"
		done
		KG_B=$B KG_FOR=${KV_OFF[*]} B=$save
	fi
	B+=$KG_B
	b_delegate $2 "$(wc -c <kv)"
	b_u8 0; b_i32 0; b_i32 0
	b_write "${3:-sp}/_metadata"
}

# A savepoint directory sp/ with op and kv beside its _metadata.
sp_dir() {
	mkdir -p sp
	op_file sp/op
	kv_file sp/kv
	(cd sp && meta_file "rel op" "rel kv" .)
}

# CRC-32C of the bytes $1 (hex pairs), masked as the Snappy framing format stores it.
masked_crc32c() {
	local c=$((0xffffffff)) b k
	for b in $(sed 's/../& /g' <<<"$1"); do
		c=$((c ^ 0x$b))
		for k in 1 2 3 4 5 6 7 8; do c=$((c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1)); done
	done
	c=$((c ^ 0xffffffff))
	echo $(((((c >> 15) | (c << 17)) + 0xa282ead8) & 0xffffffff))
}
b_le() { local i; for ((i = 0; i < $2; i++)); do b_u8 $(($1 >> (8 * i))); done; }
# A Snappy framed stream holding the bytes $1 (hex pairs, at most 60): the stream identifier, then
# one chunk, compressed (a Snappy literal) unless $2 is "raw".
b_snappy() {
	local n=$((${#1} / 2)) crc
	crc=$(masked_crc32c "$1")
	b_u8 0xff; b_le 6 3; B+=sNaPpY
	if [ "${2-}" = raw ]; then
		b_u8 1; b_le $((4 + n)) 3; b_le "$crc" 4
	else
		b_u8 0; b_le $((6 + n)) 3; b_le "$crc" 4; b_u8 "$n"; b_u8 $(((n - 1) << 2))
	fi
	B+=$(sed 's/../\\x&/g' <<<"$1")
}
# kv with every key group its own Snappy stream and the header's compression flag set.
kvz_file() {
	local k v kg hex save
	B=; b_i32 6; b_u8 1
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 1; b_utf count; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf VALUE
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	b_utf VALUE_SERIALIZER; s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
	KV_OFF=()
	for k in 42:7:29:z 1:8:86:raw 0:9:94:z; do
		IFS=: read -r k v kg z <<<"$k"
		KV_OFF+=("$(blen)")
		save=$B
		B=; b_i16 0; b_i32 6; b_u8 $((kg | 128)); b_i32 "$k"; b_u8 0; b_i32 8; b_i64 "$v"; b_i16 -1
		hex=$(printf '%b' "$B" | od -An -v -tx1 | tr -d ' \n')
		B=$save
		b_snappy "$hex" "$z"
	done
	b_write "${1:-kv}"
}

# In a savepoint sp/ made by sp_dir: cut kv at every length (the size the _metadata records
# following), then replace bytes in 200 copies; print every run that is not one error line naming
# sp/kv and an offset with empty output (status 2 for cuts, 0 to 2 for replaced bytes).
damage_runs() {
	local n m i r out err
	cp sp/kv kv.whole
	n=$(wc -c <kv.whole)
	m=$(($(wc -c <sp/_metadata) - 17)) # the keyed handle's size: the i64 before the last 9 bytes
	for ((i = 0; i < n; i++)); do
		head -c $i kv.whole >sp/kv
		B=; b_i64 $i; printf '%b' "$B" | dd of=sp/_metadata bs=1 seek=$m conv=notrunc status=none
		out=$(ckpt-inspect -a sp 2>err); r=$?; err=$(cat err)
		[ $r -eq 2 ] && [ -z "$out" ] &&
			[[ $err =~ ^ckpt-inspect:\ sp/kv:\ offset\ [0-9]+(\ \(Snappy\ chunk\),\ byte\ [0-9]+\ of\ its\ stream)?:\ [a-z][^$'\n']*$ ]] ||
			echo "cut at $i: status $r: $err"
	done
	B=; b_i64 "$n"; printf '%b' "$B" | dd of=sp/_metadata bs=1 seek=$m conv=notrunc status=none
	fm_flips kv.whole f 200 7
	for ((i = 1; i <= 200; i++)); do
		cp "f$i" sp/kv
		out=$(ckpt-inspect -a sp 2>err); r=$?; err=$(cat err)
		if [ $r -gt 2 ] || { [ $r -ne 0 ] && { [ -n "$out" ] || ! [[ $err =~ ^ckpt-inspect:\ sp/kv:\ [^$'\n']+$ ]]; }; }; then
			echo "flip $i: status $r: $err"
		fi
	done
}

# Run as a script (bash flinkstate-helper.bash FUNCTION ...), the loops escape bats' per-command trap.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	"$@"
fi

# kv_file, then key group 29 of sp/kv grown to $1 entries of "count" (64 Integer keys hashing to
# key group 29, over and over, value = key), the other key groups moved after it; KV_OFF follows.
kv_big() {
	kv_file sp/kv
	read -r -a KV_OFF < <(python3 - "$1" "${KV_OFF[@]}" <<'PY'
import struct, sys
n, offs = int(sys.argv[1]), [int(x) for x in sys.argv[2:]]
def murmur(c):  # Flink's MathUtils.murmurHash of an int hash code
    m = 0xffffffff
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & m
    c = (c * 0xcc9e2d51) & m; c = rotl(c, 15); c = (c * 0x1b873593) & m
    c = rotl(c, 13); c = (c * 5 + 0xe6546b64) & m; c ^= 4
    c ^= c >> 16; c = (c * 0x85ebca6b) & m; c ^= c >> 13; c = (c * 0xc2b2ae35) & m; c ^= c >> 16
    c = c - (1 << 32) if c & 0x80000000 else c
    return c if c >= 0 else (-c if c != -(1 << 31) else 0)
old = open("sp/kv", "rb").read()
keys, k = [], 100
while len(keys) < 64:  # the same 64 keys over and over: the reader does not look for duplicates
    if murmur(k) % 128 == 29:
        keys.append(k)
    k += 1
out = [struct.pack(">h", 0)]
for i in range(n):
    k = keys[i % 64]
    out.append(struct.pack(">iBiBiq", 6, 29 | (128 if i == n - 1 else 0), k, 0, 8, k))
out.append(struct.pack(">h", -1))
group = b"".join(out)
new = old[:offs[0]] + group + old[offs[1]:]
open("sp/kv", "wb").write(new)
d = len(group) - (offs[1] - offs[0])
print(offs[0], offs[1] + d, offs[2] + d)
PY
)
	(cd sp && meta_file "rel op" "rel kv" .)
}
