# Helpers for t/flinkstate.bats: Flink state files and the _metadata naming them, written with the
# big-endian writers of flinkmeta-helper.bash (B holds \xHH escapes and plain ASCII).
. "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/flinkmeta-helper.bash"

SER=org.apache.flink.api.common.typeutils.base
VOIDNS='org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot'

blen() { printf '%b' "$B" | wc -c; }
# A serializer snapshot as the state meta info writes it: format version 2, class, version 3.
s_proxy() { b_i32 2; b_utf "$1"; b_i32 3; }
# s_by CMD...: a serializer snapshot of format version 2 that CMD writes (its class, its version,
# its payload).
s_by() { b_i32 2; "$@"; }
# b_value_state NAME CMD...: the meta info of keyed value state NAME in the void namespace, the
# snapshot of its value serializer written by CMD (s_proxy CLASS, s_by WRITER).
b_value_state() {
	local name=$1
	shift
	b_utf "$name"; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf VALUE
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	b_utf VALUE_SERIALIZER; "$@"
}
# The bytes of file $1, appended to B.
b_file() { B+=$(od -An -v -tx1 "$1" | tr -d ' \n' | sed 's/../\\x&/g'); }

# The rows of op's "names" (-R), read before any keyed state: what -R prints before a damage in
# the keyed state ends it (one read: exit 2 and the damage named)
NAMES_ROWS='{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"names","kind":"list","subtask":0,"index":0,"value":"a"}
{"uid":null,"operator":"0102030405060708090a0b0c0d0e0f10","state":"names","kind":"list","subtask":0,"index":1,"value":"bc"}'

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
	b_i16 1; b_value_state count s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
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
# "rel NAME", "abs PATH" or "inline FILE".  The keyed handle is a KeyGroupsSavepointStateHandle
# (KG_TAG 7) of key groups 0-127 (KG_FIRST, KG_COUNT), key groups KV_KGS at offsets KV_OFF.
b_delegate() {
	case $1 in
	rel) b_u8 6; b_utf "$2"; b_i64 "$3";;
	abs) b_u8 2; b_i64 "$3"; b_utf "$2";;
	inline) b_u8 1; b_utf handle; b_i32 "$3"; b_file "$2";;
	esac
}
# The states of the operator handle: OP_STATES, words NAME:OFFSET,OFFSET... (default: names at
# OP_HDR and OP_HDR + 2), each SPLIT_DISTRIBUTE.
b_op_states() {
	local st=(${OP_STATES:-names:$OP_HDR,$((OP_HDR + 2))}) x o
	b_i32 ${#st[@]}
	for x in "${st[@]}"; do
		IFS=, read -r -a o <<<"${x#*:}"
		b_utf "${x%%:*}"; b_u8 0; b_i32 ${#o[@]}
		for x in "${o[@]}"; do b_i64 "$x"; done
	done
}
meta_file() {
	local i j
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 1; b_i32 128
	b_u8 0; b_i32 1; b_i32 0
	b_i32 1; b_u8 4; b_op_states
	b_delegate $1 "$(wc -c <op)"
	b_i32 0
	b_u8 "${KG_TAG:-7}"; b_i32 "${KG_FIRST:-0}"; b_i32 "${KG_COUNT:-128}"
	if [ "${KG_FOR-}" != "${KV_OFF[*]}/${KG_FIRST-}" ]; then # the offsets, written once per KV_OFF
		local save=$B kgs=(${KV_KGS:-29 86 94}) k
		B=
		for ((i = ${KG_FIRST:-0}; i < ${KG_FIRST:-0} + ${KG_COUNT:-128}; i++)); do
			j=0
			for k in "${!kgs[@]}"; do [ "${kgs[k]}" -eq $i ] && j=${KV_OFF[k]}; done
			b_i64 "$j"
		done
		KG_B=$B KG_FOR=${KV_OFF[*]}/${KG_FIRST-} B=$save
	fi
	B+=$KG_B
	b_delegate $2 "$(wc -c <kv)"
	b_u8 0; b_i32 0; b_i32 0
	b_write "${3:-sp}/_metadata"
}

# sv: heap keyed state (hv_file's layout, no lengths) into $1 (default kv): Integer key 42 in key
# group 29, one value state per row of $2 (default STATES; each NAME:SNAPSHOT:VALUE, the snapshot
# and value writers functions), each holding its value; key group 30 empty.  VAL_AT gets the
# offset of each value.  sv_dir [ROWS]: sp/ of op, kv and _metadata around it.
sv_file() {
	local row name snap val n=0 rows=${2:-$STATES}
	for row in $rows; do n=$((n + 1)); done
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 $n
	for row in $rows; do
		IFS=: read -r name snap val <<<"$row"
		b_value_state "$name" s_by "$snap"
	done
	KV_OFF=("$(blen)")
	b_i32 29
	n=0
	for row in $rows; do
		IFS=: read -r name snap val <<<"$row"
		VAL_AT+=("$(($(blen) + 11))")
		b_i16 $n; b_i32 1; b_u8 0; b_i32 42; "$val"
		n=$((n + 1))
	done
	KV_OFF+=("$(blen)")
	b_i32 30
	for ((n = 0; n < $(wc -w <<<"$rows"); n++)); do b_i16 $n; b_i32 0; done
	b_write "${1:-kv}"
	KV_KGS="29 30" KG_TAG=3 KG_FIRST=29 KG_COUNT=2
}
sv_dir() {
	rm -rf sp
	mkdir sp
	unset KV_KGS KG_TAG KG_FIRST KG_COUNT KG_FOR
	VAL_AT=()
	op_file sp/op
	sv_file sp/kv "${1:-}"
	(cd sp && meta_file "rel op" "rel kv" .)
}

# hv: the keyed state of kv in the heap layout (HeapSnapshotStrategy, KeyGroupsStateHandle, no
# lengths): key groups 29 (key 42 -> 7) and 30 (empty), each its number, then per state its id,
# its entry count and the entries (namespace, key, value).  Sets what meta_file needs for it.
hv_file() {
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 1; b_value_state count s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
	KV_OFF=("$(blen)")
	b_i32 29; b_i16 0; b_i32 1; b_u8 0; b_i32 42; b_i64 7
	KV_OFF+=("$(blen)")
	b_i32 30; b_i16 0; b_i32 0
	b_write "${1:-kv}"
	KV_KGS="29 30" KG_TAG=3 KG_FIRST=29 KG_COUNT=2
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
	b_u8 0xff; b_le 6 3; B+=sNaPpY
	b_chunk "$@"
}
# One chunk of a Snappy framed stream holding the bytes $1, as b_snappy writes it.
b_chunk() {
	local n=$((${#1} / 2)) crc
	crc=$(masked_crc32c "$1")
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
	b_i16 1; b_value_state count s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
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

# opz LAYOUT: sp/ as sp_dir makes it, its operator state compressed: list states "names" ("a",
# "bc") and "more" ("d"), as Flink 1.17 wrote them (LAYOUT per-state: a Snappy stream
# for each state, every offset of a state where its stream's identifier ends) or as Flink 1.19
# does since FLINK-34063 (one: one stream, a chunk for each element from its offset).  OPZ_AT:
# the offsets.
opz() {
	local e
	rm -rf sp
	mkdir sp
	unset KV_KGS KG_TAG KG_FIRST KG_COUNT KG_FOR
	B=; b_i32 6; b_u8 1; b_i16 2
	for e in names more; do
		b_utf $e; b_i32 1; b_i32 1; b_utf OPERATOR_STATE_DISTRIBUTION_MODE; b_utf SPLIT_DISTRIBUTE
		b_i32 1; b_utf VALUE_SERIALIZER; s_proxy "$SER.StringSerializer\$StringSerializerSnapshot"
	done
	b_i16 0
	OP_HDR=$(blen)
	if [ "$1" = per-state ]; then
		b_snappy 0261036263
		OPZ_AT=("$((OP_HDR + 10))" "$((OP_HDR + 10))" "$(($(blen) + 10))")
		b_snappy 0264
	else
		b_u8 0xff; b_le 6 3; B+=sNaPpY
		OPZ_AT=()
		for e in 0261 036263 0264; do
			OPZ_AT+=("$(blen)")
			b_chunk $e
		done
	fi
	b_write sp/op
	kv_file sp/kv
	OP_STATES="names:${OPZ_AT[0]},${OPZ_AT[1]} more:${OPZ_AT[2]}"
	(cd sp && meta_file "rel op" "rel kv" .)
	unset OP_STATES
}

# sp_kind KIND: a savepoint sp/ as sp_dir makes it, its keyed state kv in the layout KIND: kv
# (canonical), kvz (canonical, Snappy-compressed) or hv (heap).
sp_kind() {
	rm -rf sp
	mkdir sp
	unset KV_KGS KG_TAG KG_FIRST KG_COUNT KG_FOR
	op_file sp/op
	case $1 in kv) kv_file sp/kv ;; kvz) kvz_file sp/kv ;; hv) hv_file sp/kv ;; esac
	(cd sp && meta_file "rel op" "rel kv" .)
}

# size_at FILE: the offset in sp/_metadata of the size recorded for sp/FILE (op or kv).
size_at() {
	if [ "$1" = op ]; then
		echo $(($(grep -obUaP '\x06\x00\x02op' sp/_metadata | cut -d: -f1) + 5))
	else
		echo $(($(wc -c <sp/_metadata) - 17)) # the i64 before the last 9 bytes
	fi
}
set_size() { B=; b_i64 "$2"; printf '%b' "$B" | dd of=sp/_metadata bs=1 seek="$1" conv=notrunc status=none; }

# cut_runs KIND FILE FROM: in sp/ (sp_kind KIND) cut sp/FILE at every length from FROM on, the size
# the _metadata records following.  Prints "KIND CUT: LINE", LINE the one line -a printed, and
# "bad: ..." for a run that breaks the contract: -a exits 2, prints nothing on stdout and one line
# naming sp/FILE and an offset; -c exits 1 with that line on stderr and as the file's problem.
cut_runs() {
	local kind=$1 f=$2 i n m r e p
	cp "sp/$f" "whole.$kind.$f"
	n=$(wc -c <"whole.$kind.$f")
	m=$(size_at "$f")
	for ((i = $3; i < n; i++)); do
		head -c $i "whole.$kind.$f" >"sp/$f"
		set_size "$m" $i
		ckpt-inspect -a sp >out 2>err
		r=$?
		e=$(<err)
		echo "$kind $i: $e"
		[ $r -eq 2 ] && [ ! -s out ] && [[ $e =~ ^ckpt-inspect:\ sp/$f:\ offset\ [0-9]+[\ :][^$'\n']+$ ]] ||
			echo "bad: $kind $i: -a: status $r, $(wc -c <out) bytes on stdout"
		ckpt-inspect -c sp >out 2>err
		r=$?
		p=${e#"ckpt-inspect: sp/$f: "}
		p=${p//\"/\\\"}
		[ $r -eq 1 ] && [ "$(<err)" = "$e" ] && [[ $(<out) == *"{\"where\":\"sp/$f\",\"problem\":\"$p\"}"* ]] ||
			echo "bad: $kind $i: -c: status $r: $(<err) $(<out)"
	done
	cp "whole.$kind.$f" "sp/$f"
	set_size "$m" "$n"
}

# Every state file of every layout cut: the operator state and the header (with kv), and from the
# first key group on the Snappy-compressed and the heap layout.
cut_all() {
	sp_kind kv
	cut_runs kv op 0
	cut_runs kv kv 0
	sp_kind kvz
	cut_runs kvz kv "${KV_OFF[0]}"
	sp_kind hv
	cut_runs hv kv "${KV_OFF[0]}"
	opz one
	cut_runs opz-one op "$OP_HDR"
	opz per-state
	cut_runs opz-per-state op "$OP_HDR"
}

# flip_runs KIND FILE N SEED: in sp/ (sp_kind KIND), N copies of sp/FILE with 1 to 4 bytes
# replaced; print every run that breaks the contract: -a exits 0, or 1 or 2 with nothing on
# stdout and one line naming sp/FILE; -c then exits 0 or 1, and 1 with the same line when -a
# found the file damaged (2).
flip_runs() {
	local kind=$1 f=$2 i r r2 e
	cp "sp/$f" "whole.$kind.$f"
	fm_flips "whole.$kind.$f" flip "$3" "$4"
	for ((i = 1; i <= $3; i++)); do
		cp "flip$i" "sp/$f"
		ckpt-inspect -a sp >out 2>err
		r=$?
		e=$(<err)
		if [ $r -gt 2 ] || { [ $r -ne 0 ] && { [ -s out ] || ! [[ $e =~ ^ckpt-inspect:\ sp/$f:\ [^$'\n']+$ ]]; }; }; then
			echo "$kind flip $i: -a: status $r: $e"
		fi
		ckpt-inspect -c sp >out 2>err
		r2=$?
		if [ $r2 -gt 1 ] || { [ $r -eq 2 ] && { [ $r2 -ne 1 ] || [ "$(<err)" != "$e" ]; }; }; then
			echo "$kind flip $i: -c: status $r2: $(<err) (-a: status $r: $e)"
		fi
	done
	cp "whole.$kind.$f" "sp/$f"
}

flip_all() {
	sp_kind kv
	flip_runs kv kv 200 7
	flip_runs kv op 50 8
	sp_kind kvz
	flip_runs kvz kv 50 9
	sp_kind hv
	flip_runs hv kv 50 10
	opz one
	flip_runs opz op 50 11
	opz per-state
	flip_runs opz op 50 12
}

# kv_spread N: sp/ (op, kv, _metadata) whose kv holds N distinct Integer keys, every key in its
# own key group (Flink's murmur hash), all 128 key groups filled, each key -> itself (a Long).
# KV_OFF: the offsets of key groups 0-127; SPARE64: a key of key group 64 not in the file.
kv_spread() {
	rm -rf sp
	mkdir sp
	op_file sp/op
	kv_file sp/kv
	read -r -a KV_OFF < <(python3 - "$1" "${KV_OFF[0]}" <<'PY'
import struct, sys
n, hdr_end = int(sys.argv[1]), int(sys.argv[2])
def murmur(c):  # Flink's MathUtils.murmurHash of an int hash code
    m = 0xffffffff
    c = (c * 0xcc9e2d51) & m; c = ((c << 15) | (c >> 17)) & m; c = (c * 0x1b873593) & m
    c = ((c << 13) | (c >> 19)) & m; c = (c * 5 + 0xe6546b64) & m; c ^= 4
    c ^= c >> 16; c = (c * 0x85ebca6b) & m; c ^= c >> 13; c = (c * 0xc2b2ae35) & m; c ^= c >> 16
    c = c - (1 << 32) if c & 0x80000000 else c
    return c if c >= 0 else (-c if c != -(1 << 31) else 0)
groups, spare = [[] for _ in range(128)], [[] for _ in range(128)]
for k in range(n + 1000):
    (groups if k < n else spare)[murmur(k) % 128].append(k)
old = open("sp/kv", "rb").read()
out, offs, pos, pk = [old[:hdr_end]], [], hdr_end, struct.Struct(">iBiBiq")
for g, ks in enumerate(groups):  # state 0, the entries (the last flagged), end of key group
    offs.append(pos)
    b = b"".join([struct.pack(">h", 0)] + [pk.pack(6, g | (128 if i == len(ks) - 1 else 0), k, 0, 8, k)
                                          for i, k in enumerate(ks)] + [struct.pack(">h", -1)])
    out.append(b)
    pos += len(b)
open("sp/kv", "wb").write(b"".join(out))
print(" ".join(map(str, offs)), spare[64][0])
PY
)
	SPARE64=${KV_OFF[128]}
	unset 'KV_OFF[128]'
	KV_KGS=$(seq -s' ' 0 127)
	(cd sp && meta_file "rel op" "rel kv" .)
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

# akv: canonical keyed state whose key (String) and namespace (String) are both of variable length,
# so that each is followed by its length (CompositeKeySerializationUtils.writeVariableIntBytes:
# little-endian, as many bytes as it needs, at least one).  Key "a" (key group 81): value state
# "visits" of Long in namespace "union" -> 7 and in LONG_NS (300 characters, a two-byte length)
# -> 8; map state "parity" (String -> Long) in "union": "odd" -> 3.  KV_OFF: key group 81's offset;
# AKV_AT: the offsets of the key's length, the "union" namespace's and LONG_NS's, in the first entries.
LONG_NS=done:$(printf 'd%.0s' $(seq 295))
b_str() { b_u8 $((${#1} + 1)); B+=$1; } # StringValue.writeString of fewer than 127 ASCII characters
akv_header() {
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.StringSerializer\$StringSerializerSnapshot"
	b_i16 2
	b_utf visits; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf VALUE
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$SER.StringSerializer\$StringSerializerSnapshot"
	b_utf VALUE_SERIALIZER; s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
	b_utf parity; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf MAP
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$SER.StringSerializer\$StringSerializerSnapshot"
	b_utf VALUE_SERIALIZER; b_i32 2; b_utf "$SER.MapSerializerSnapshot"; b_i32 3; b_i32 911108; b_i32 1
	b_i32 1333245; b_i32 1; b_i32 2
	b_utf "$SER.StringSerializer\$StringSerializerSnapshot"; b_i32 3
	b_utf "$SER.LongSerializer\$LongSerializerSnapshot"; b_i32 3
}
akv_file() {
	akv_header
	KV_OFF=("$(blen)") AKV_AT=()
	b_i16 0
	b_i32 11; b_u8 81; AKV_AT+=($(($(blen) + 2))); b_str a; b_u8 2; AKV_AT+=($(($(blen) + 6))); b_str union; b_u8 6
	b_i32 8; b_i64 7
	b_i32 308; b_u8 $((81 | 128)); b_str a; b_u8 2; b_u8 0xad; b_u8 2; B+=$LONG_NS; AKV_AT+=($(blen)); b_u8 0x2e; b_u8 1
	b_i32 8; b_i64 8
	b_i16 1
	b_i32 15; b_u8 $((81 | 128)); b_str a; b_u8 2; b_str union; b_u8 6; b_str odd; b_i32 9; b_u8 0; b_i64 3
	b_i16 -1
	b_write "${1:-kv}"
	KV_KGS=81
}
# ahv: the same entries in the heap layout (hv_file), which has no length suffixes: per state the
# namespace, key and value (the map state's whole map: i32 size, key, null flag, value).
ahv_file() {
	akv_header
	KV_OFF=("$(blen)")
	b_i32 81
	b_i16 0; b_i32 2
	b_str union; b_str a; b_i64 7
	b_u8 0xad; b_u8 2; B+=$LONG_NS; b_str a; b_i64 8
	b_i16 1; b_i32 1
	b_str union; b_str a; b_i32 1; b_str odd; b_u8 0; b_i64 3
	b_write "${1:-kv}"
	KV_KGS=81 KG_TAG=3 KG_FIRST=81 KG_COUNT=1
}
# asp_dir KIND: a savepoint directory sp/ with op and akv (KIND akv) or ahv (KIND ahv).
asp_dir() {
	rm -rf sp
	mkdir sp
	unset KV_KGS KG_TAG KG_FIRST KG_COUNT KG_FOR
	op_file sp/op
	"${1:-akv}_file" sp/kv
	(cd sp && meta_file "rel op" "rel kv" .)
}
# ekv: canonical keyed state of enum keys (EnumSerializer: getLength() 4, so no length suffixes
# though the namespace is a String): key BLUE (ordinal 1, key group 81) in namespace "union" of
# value state "visits" -> 7.
ekv_file() {
	B=; b_i32 6; b_u8 0
	b_i32 2; b_utf "$SER.EnumSerializer\$EnumSerializerSnapshot"; b_i32 3; b_utf x.Color; b_i32 2; b_utf RED; b_utf BLUE
	b_i16 1
	b_utf visits; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf VALUE
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$SER.StringSerializer\$StringSerializerSnapshot"
	b_utf VALUE_SERIALIZER; s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"
	KV_OFF=("$(blen)")
	b_i16 0
	b_i32 11; b_u8 $((81 | 128)); b_i32 1; b_str union
	b_i32 8; b_i64 7
	b_i16 -1
	b_write "${1:-kv}"
	KV_KGS=81
}

# vkv V2: canonical keyed state, Integer keys, key 42 in key group 29: list state "seen" of Long
# (5, 6), map state "m" (Integer -> Long: 1 -> 10) and value state "t" of Long with a TTL (last
# access 1700000000000, 77).  With V2 1 the header is State V2's, as Flink 2.x's asynchronous
# states (ForSt) write it: state type 4 (KEY_VALUE_V2), the list's element serializer, the map's
# USER_KEY_SERIALIZER and user value serializer, runtime.state.v2.ttl's TtlSerializerSnapshot;
# else KEY_VALUE's (0): ListSerializer, MapSerializer, runtime.state.ttl's.  The entries are the same.
s_ttl() { # PACKAGE: a TtlSerializerSnapshot (outer version 2) of Long timestamps and Long values
	b_i32 2; b_utf "org.apache.flink.runtime.$1.TtlStateFactory\$TtlSerializerSnapshot"; b_i32 3; b_i32 911108; b_i32 2
	b_i32 1333245; b_i32 1; b_i32 2; b_utf "$SER.LongSerializer\$LongSerializerSnapshot"; b_i32 3
	b_utf "$SER.LongSerializer\$LongSerializerSnapshot"; b_i32 3
}
vkv_file() {
	local v2=${V2:-0} t=0
	[ "$v2" = 1 ] && t=4
	B=; b_i32 6; b_u8 0
	s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	b_i16 3
	b_utf seen; b_i32 $t; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf LIST
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	if [ "$v2" = 1 ]; then b_utf VALUE_SERIALIZER; s_long; else b_utf VALUE_SERIALIZER; s_list; fi
	b_utf m; b_i32 $t; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf MAP
	if [ "$v2" = 1 ]; then
		b_i32 3; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
		b_utf VALUE_SERIALIZER; s_long; b_utf USER_KEY_SERIALIZER; s_proxy "$SER.IntSerializer\$IntSerializerSnapshot"
	else
		b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"; b_utf VALUE_SERIALIZER; s_map
	fi
	b_utf t; b_i32 $t; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf VALUE
	b_i32 2; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	b_utf VALUE_SERIALIZER; if [ "$v2" = 1 ]; then s_ttl state.v2.ttl; else s_ttl state.ttl; fi
	KV_OFF=("$(blen)")
	b_i16 0; b_i32 6; b_u8 $((29 | 128)); b_i32 42; b_u8 0; b_i32 17; b_i64 5; B+=,; b_i64 6
	b_i16 1; b_i32 10; b_u8 $((29 | 128)); b_i32 42; b_u8 0; b_i32 1; b_i32 9; b_u8 0; b_i64 10
	b_i16 2; b_i32 6; b_u8 $((29 | 128)); b_i32 42; b_u8 0; b_i32 16; b_i64 1700000000000; b_i64 77
	b_i16 -1
	b_write "${1:-kv}"
	KV_KGS=29
}

# Changelog keyed state (ckpt-flink(5), CHANGELOG STATE).  ch CMD...: the bytes CMD appends, as
# one change (i32 length, the bytes).  The metadata changes register states "count" (value of
# Long, id 0), "seen" (list of Long, id 1) and "m" (map Integer -> Long, id 2), Integer keys, the
# void namespace.
ch() { local save=$B x n; B=; "$@"; x=$B; n=$(blen); B=$save; b_i32 "$n"; B+=$x; }
c_meta() { # NAME KIND ID VALUE-SNAPSHOT-WRITER
	b_u8 8; b_i32 6; b_utf "$1"; b_i32 0; b_i32 1; b_utf KEYED_STATE_TYPE; b_utf "$2"
	b_i32 2; b_utf VALUE_SERIALIZER; "$4"; b_utf NAMESPACE_SERIALIZER; s_proxy "$VOIDNS"
	b_u8 0; b_u8 0; b_i16 "$3"; b_u8 0
}
s_long() { s_proxy "$SER.LongSerializer\$LongSerializerSnapshot"; }
s_list() { b_i32 2; b_utf "$SER.ListSerializerSnapshot"; b_i32 3; b_i32 911108; b_i32 1; b_i32 1333245; b_i32 1
	b_i32 1; b_utf "$SER.LongSerializer\$LongSerializerSnapshot"; b_i32 3; }
s_map() { b_i32 2; b_utf "$SER.MapSerializerSnapshot"; b_i32 3; b_i32 911108; b_i32 1; b_i32 1333245; b_i32 1
	b_i32 2; b_utf "$SER.IntSerializer\$IntSerializerSnapshot"; b_i32 3
	b_utf "$SER.LongSerializer\$LongSerializerSnapshot"; b_i32 3; }
c_kv() { b_u8 "$1"; b_i16 "$2"; b_i32 "$3"; b_u8 0; } # OP ID KEY: the op, the state, the scope
s_custom() { s_proxy x.CustomSerializer\$Snapshot; } # a snapshot class ckpt cannot step over
# log: FsStateChangelogWriter's file: a byte 0 (not compressed), then two change sets (StateChangeFormat):
# the metadata (key group -1) and, in key group 29, count 42 -> 70, seen 42 += 5, 6, m 42: 1 -> 10,
# 2 -> 20, then 1 removed; the second (at CL_OFF of the rest) count 24 -> 3 in key group 30 and, in
# key group 31 (not the subtask's: skipped), count 93 -> 9.  With CL_CUSTOM=1 also a state "blob"
# (id 3) of a serializer ckpt cannot step over, set for key 42; with CL_Z=1 Snappy-framed.  CL_LEN:
# the length of the rest, as the _metadata records it.
cl_log() {
	local x=${CL_CUSTOM:-0}
	B=; b_u8 0
	b_i32 2
	b_i32 $((3 + x)); b_i32 -1; ch c_meta count VALUE 0 s_long; ch c_meta seen LIST 1 s_list; ch c_meta m MAP 2 s_map
	[ "$x" = 1 ] && ch c_meta blob VALUE 3 s_custom
	b_i32 $((6 + x)); b_i32 29
	ch eval 'c_kv 1 0 42; b_i64 70'; ch eval 'c_kv 5 1 42; b_i64 5'; ch eval 'c_kv 5 1 42; b_i64 6'
	ch eval 'c_kv 6 2 42; b_i32 1; b_i64 10'; ch eval 'c_kv 6 2 42; b_i32 2; b_i64 20'; ch eval 'c_kv 7 2 42; b_i32 1'
	[ "$x" = 1 ] && ch eval 'c_kv 1 3 42; b_i32 7'
	CL_OFF=$(($(blen) - 1))
	b_i32 2
	b_i32 1; b_i32 30; ch eval 'c_kv 1 0 24; b_i64 3'
	b_i32 1; b_i32 31; ch eval 'c_kv 1 0 93; b_i64 9'
	CL_LEN=$(($(blen) - 1))
	if [ "${CL_Z-}" = 1 ]; then # the rest as one uncompressed Snappy chunk: a flag byte 1
		local hex
		hex=$(printf '%b' "$B" | tail -c +2 | od -An -v -tx1 | tr -d ' \n')
		B=; b_u8 1; b_snappy "$hex" raw
	fi
	b_write "${1:-log}"
}
# cl_dir [MAT]: a checkpoint cl/ whose subtask holds op and, in a ChangelogStateBackendHandle (tag
# 14) of key groups 29-30, the materialized part hv (heap: count 42 -> 7; MAT "rocksdb": an empty
# RocksDB incremental handle instead), the changes of log at offsets 0 and CL_OFF (tag 13), then
# one change inline (tag 9): count 42 cleared.  Left: count 24 -> 3, seen 42 [5, 6], m 42 {2: 20}.
cl_dir() {
	rm -rf cl
	mkdir cl
	unset KV_KGS KG_TAG KG_FIRST KG_COUNT KG_FOR
	op_file cl/op
	hv_file cl/kv
	cl_log cl/log
	local kv=$(wc -c <cl/kv) log=$((CL_LEN + 1))
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 1; b_i32 128
	b_u8 0; b_i32 1; b_i32 0
	b_i32 1; b_u8 4; b_i32 1; b_utf names; b_u8 0; b_i32 2; b_i64 "$OP_HDR"; b_i64 $((OP_HDR + 2))
	b_delegate rel op "$(wc -c <cl/op)"
	b_i32 0
	b_u8 14; b_i32 29; b_i32 2; b_i64 100; b_i32 1
	if [ "${1-}" = rocksdb ]; then
		b_u8 11; b_i64 1; b_utf backend; b_i32 29; b_i32 2; b_i64 0; b_u8 0; b_i32 0; b_i32 0; b_utf h
	else
		b_u8 3; b_i32 29; b_i32 2; b_i64 "${KV_OFF[0]}"; b_i64 "${KV_OFF[1]}"; b_delegate rel kv "$kv"
	fi
	b_i32 2
	b_u8 13; b_i32 29; b_i32 2; b_i32 2; b_i64 0; b_delegate rel log $((log - 1)); b_i64 "$CL_OFF"
	b_delegate rel log $((log - 1)); b_i64 $((log - 1)); b_i64 $((log - 1)); b_utf h1; b_utf filesystem
	b_u8 9; b_i32 29; b_i32 2; b_i64 0; b_i64 1; b_i32 1; b_i32 29; ch c_kv 0 0 42; b_utf h2
	b_i64 1; b_i64 9; b_utf h3
	b_u8 0; b_i32 0; b_i32 0
	b_write cl/_metadata
}

# split_dir DIR: DIR (kv_spread's) split in two subtasks: DIR/_metadata as meta_file writes it, but
# of parallelism 2, subtask 0 holding key groups 0-63 of DIR/kv in DIR/kv0, subtask 1 key groups
# 64-127 in DIR/kv1 (each file the header, then its key groups), each the operator state of DIR/op.
split_dir() {
	local s i hdr=${KV_OFF[0]} mid=${KV_OFF[64]}
	head -c "$mid" "$1/kv" >"$1/kv0"
	{ head -c "$hdr" "$1/kv"; tail -c +$((mid + 1)) "$1/kv"; } >"$1/kv1"
	rm "$1/kv"
	B=; b_i32 0x4960672d; b_i32 3; b_i64 9; b_i32 0; b_i32 1
	b_i64 0x0102030405060708; b_i64 0x090a0b0c0d0e0f10; b_i32 2; b_i32 128
	b_u8 0; b_i32 2
	for s in 0 1; do
		b_i32 "$s"
		b_i32 1; b_u8 4; b_op_states; b_delegate rel op "$(wc -c <"$1/op")"
		b_i32 0
		b_u8 7; b_i32 $((s * 64)); b_i32 64
		for ((i = s * 64; i < s * 64 + 64; i++)); do b_i64 $((KV_OFF[i] - s * (mid - hdr))); done
		b_delegate rel "kv$s" "$(wc -c <"$1/kv$s")"
		b_u8 0; b_i32 0; b_i32 0
	done
	b_write "$1/_metadata"
}
