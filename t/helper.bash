# Shared by every test file: the built programs first on PATH, a fresh directory per test.
T=$(cd "$BATS_TEST_DIRNAME" && pwd)
ROOT=$(cd "$T/.." && pwd)
DATA=$T/data
# The real Flink files (REST responses, _metadata) are not part of the project: they are found
# through CKPT_FIXTURES (default ../shared/fixtures beside the repository). A test that reads them
# calls needs_fixtures first: absent, it is skipped with FIXTURES_ABSENT (t/run counts those), or
# fails when CI=true.
FIXTURES=$(cd "${CKPT_FIXTURES:-$ROOT/../shared/fixtures}" 2>/dev/null && [ -d flink-savepoints ] &&
	[ -d flink-rest ] && pwd)
FIXTURES_ABSENT="no Flink fixtures (set CKPT_FIXTURES)"
PATH="${CKPT_BIN:-$ROOT/bin}:$PATH"
export PATH
# ckpt-run reads back every snapshot it writes, and stops with status 2 when one does not read back
# as written (ckpt-run(1), ENVIRONMENT): a writer bug fails the test that meets it.
CKPT_VERIFY_SNAPSHOTS=1
export CKPT_VERIFY_SNAPSHOTS

needs_fixtures() {
	[ -n "$FIXTURES" ] && return 0
	if [ "${CI-}" = true ]; then
		echo "$FIXTURES_ABSENT; CI=true requires them"
		return 1
	fi
	skip "$FIXTURES_ABSENT"
}

setup() {
	cd "$BATS_TEST_TMPDIR" || return 1
}

# Compare output with a golden file, showing the difference on failure.
match_golden() {
	if [ "$output" != "$(cat "$1")" ]; then
		diff -u "$1" <(printf '%s\n' "$output") || true
		return 1
	fi
}

# Assert the exit status.
status_is() {
	if [ "$status" -ne "$1" ]; then
		echo "expected status $1, got $status; output:"
		printf '%s\n' "$output"
		return 1
	fi
}

# Assert the whole output equals the expected text.
output_is() {
	if [ "$output" != "$1" ]; then
		echo "expected: $1"
		echo "got:      $output"
		return 1
	fi
}
