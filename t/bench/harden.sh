#!/bin/sh
# Hardening bench: reading time by input size, to show that no reader is worse than
# linear (a quadratic loader is a hang waiting for a large enough input).
# Prints "what n seconds"; seconds should double with n.
cd "$(dirname "$0")/../.." || exit 2
BIN=${CKPT_BIN:-$PWD/bin}
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

chain() { # a chain of n vertices
	awk -v n="$1" 'BEGIN {
		printf "{\"vertices\":["
		for (i = 0; i < n; i++) printf "%s{\"id\":\"v%d\",\"parallelism\":1}", i ? "," : "", i
		printf "],\"edges\":["
		for (i = 0; i + 1 < n; i++) printf "%s{\"source\":\"v%d\",\"target\":\"v%d\"}", i ? "," : "", i, i + 1
		printf "]}\n" }'
}

seconds() {
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s.%N)
	echo "$e - $s" | bc
}

for n in 5000 10000 20000 40000; do
	chain $n > "$tmp/g.json"
	echo "graph-load-vertices $n $(seconds "$BIN/ckpt-plan" -G "$tmp/g.json")"
done

# A v3 _metadata of one operator (parallelism 2^31-1) whose n subtasks are all finished markers.
finished_meta() {
	python3 -c "
import struct, sys
n = int(sys.argv[1])
b = struct.pack('>iiqii', 0x4960672d, 3, 1, 0, 1) + b'\x01' * 16 + struct.pack('>ii', 0x7fffffff, 0x7fffffff)
b += b'\x00' + struct.pack('>i', n) + b''.join(struct.pack('>i', -(i + 1)) for i in range(n))
sys.stdout.buffer.write(b)" "$1"
}

for n in 10000 20000 40000; do
	finished_meta $n > "$tmp/_metadata"
	echo "metadata-finished-subtasks $n $(seconds "$BIN/ckpt-inspect" "$tmp/_metadata")"
done
