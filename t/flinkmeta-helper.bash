# Helpers for t/flinkmeta.bats: variants of a _metadata file made with shell builtins (one od
# per file, no process per variant), and a tiny big-endian writer for synthetic files.
SP="$FIXTURES/flink-savepoints"

# FM_S: the bytes of $1 as \xHH escapes; FM_N: their number.
fm_escaped() {
	[ "${FM_FILE-}" = "$1" ] && return
	FM_FILE=$1
	FM_S=$(od -An -v -tx1 "$1" | tr -d ' \n' | sed 's/../\\x&/g')
	FM_N=$((${#FM_S} / 4))
}

# Write ${2}N holding the first N bytes of $1, for every N in [from, to) (default: all N < size).
fm_prefixes() {
	local n
	fm_escaped "$1"
	for ((n = ${3:-0}; n < ${4:-$FM_N}; n++)); do
		printf '%b' "${FM_S:0:4*n}" >"$2$n"
	done
}

# Write ${2}1 .. ${2}COUNT: copies of $1 with 1 to 4 random bytes replaced, random seeded by $4.
fm_flips() {
	local i k j pos s x
	RANDOM=$4
	fm_escaped "$1"
	for ((i = 1; i <= $3; i++)); do
		s=$FM_S
		k=$((1 + RANDOM % 4))
		for ((j = 0; j < k; j++)); do
			pos=$(((RANDOM * 32768 + RANDOM) % FM_N))
			printf -v x '\\x%02x' $((RANDOM % 256))
			s="${s:0:4*pos}$x${s:4*pos+4}"
		done
		printf '%b' "$s" >"$2$i"
	done
}

# For every fixture directory under $1, write $2/NAME.cN: cut in its first 40 and last 12 bytes
# and at each eighth (59 files each), or with $3 = flips, $2/NAME.mN: 8 copies with random bytes
# replaced.
fm_damage_all() {
	local d n k
	for d in "$1"/v*; do
		if [ "${3-}" = flips ]; then
			fm_flips "$d/_metadata" "$2/${d##*/}.m" 8 "${#d}"
			continue
		fi
		fm_prefixes "$d/_metadata" "$2/${d##*/}.c" 0 40
		fm_prefixes "$d/_metadata" "$2/${d##*/}.c" $((FM_N - 12)) "$FM_N"
		for k in 1 2 3 4 5 6 7; do
			n=$((FM_N * k / 8))
			printf '%b' "${FM_S:0:4*n}" >"$2/${d##*/}.c$n"
		done
	done
}

# Big-endian pieces of a synthetic file, as \xHH escapes appended to B.
b_u8() { local x; printf -v x '\\x%02x' $(($1 & 255)); B+=$x; }
b_i16() { b_u8 $(($1 >> 8)); b_u8 "$1"; }
b_i32() { b_i16 $(($1 >> 16)); b_i16 "$1"; }
b_i64() { b_i32 $(($1 >> 32)); b_i32 "$1"; }
b_utf() { b_i16 ${#1}; B+=$1; } # ASCII without backslashes only
b_write() { printf '%b' "$B" >"$1"; }

# Run as a script (bash flinkmeta-helper.bash fm_prefixes ...), the loops escape bats' per-command trap.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	"$@"
fi
