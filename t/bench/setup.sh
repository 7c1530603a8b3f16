# setup.sh: the set-up every t/bench script shares, sourced right after `set -e`: the repository's
# top as the current directory and ROOT, the programs in BIN (CKPT_BIN, else bin/), the fixtures in
# FIX (CKPT_FIXTURES, else ../shared/fixtures), and a work directory W, removed on exit: under
# build/bench/ when BENCH names the script (large state wants the disk, not TMPDIR), else in TMPDIR.
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
