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
	echo "graph-load-vertices $n $(seconds "$BIN/ckpt-plan" -g "$tmp/g.json")"
done
