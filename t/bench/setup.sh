# setup.sh: the set-up every t/bench script shares, sourced right after `set -e`: the repository's
# top as the current directory and ROOT, the programs in BIN (CKPT_BIN, else bin/), the fixtures in
# FIX (CKPT_FIXTURES, else ../shared/fixtures), and a work directory W, removed on exit: under
# build/bench/ when BENCH names the script (large state wants the disk, not TMPDIR), else in TMPDIR;
# and best/show to time commands (t/bench/java.sh: the state BenchState writes).
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${CKPT_BIN:-$ROOT/bin}
FIX=${CKPT_FIXTURES:-$ROOT/../shared/fixtures}
if [ -n "${BENCH:-}" ]; then
	mkdir -p "$ROOT/build/bench"
	W=$(mktemp -d "$ROOT/build/bench/$BENCH.XXXXXX")
else
	W=$(mktemp -d)
fi
trap 'rm -rf "$W"' EXIT

# best CMD...: the best of CKPT_BENCH_RUNS runs of CMD (default 3; BEST_RUNS=N where a script counts
# CKPT_BENCH_RUNS otherwise), stdout to /dev/null: elapsed seconds, CPU seconds (user + system, the
# figure that stays honest when other work shares the machine), peak RSS in KB.
best() {
	b= c= m=
	for r in $(seq "${BEST_RUNS:-${CKPT_BENCH_RUNS:-3}}"); do
		/usr/bin/time -f '%e %U %S %M' -o "$W/t" "$@" >/dev/null
		e=$(awk '{print $1}' "$W/t"); u=$(awk '{print $2 + $3}' "$W/t"); k=$(awk '{print $4}' "$W/t")
		if [ -z "$b" ] || [ "$(echo "$e $b" | awk '{print ($1 < $2)}')" = 1 ]; then b=$e; fi
		if [ -z "$c" ] || [ "$(echo "$u $c" | awk '{print ($1 < $2)}')" = 1 ]; then c=$u; fi
		if [ -z "$m" ] || [ "$k" -gt "$m" ]; then m=$k; fi
	done
	echo "$b $c $m"
}
# timed VAR LABEL CMD...: best of CMD, shown under LABEL; VAR_E, VAR_C and VAR_M its figures.
timed() {
	v=$1 l=$2
	shift 2
	set -- $(best "$@")
	show "$l" "$1" "$2" "$3"
	eval "${v}_E=$1 ${v}_C=$2 ${v}_M=$3"
}
show() { # label, elapsed, cpu, rss KB: MB/s of BYTES
	echo "$BYTES $2 $3 $4" | awk -v l="$1" '{printf "%-32s %7.1f MB/s elapsed (%6.2f s), %7.1f MB/s of CPU (%6.2f s), peak %7.1f MB\n",
		l, $1 / ($2 > 0 ? $2 : 0.01) / 1e6, $2, $1 / ($3 > 0 ? $3 : 0.01) / 1e6, $3, $4 / 1024}'
}
