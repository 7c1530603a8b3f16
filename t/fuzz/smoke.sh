#!/bin/sh
# Run each fuzz target for FUZZ_SECONDS from its seed corpus (t/fuzz/corpus/<name>/ and
# t/fuzz/regress/<name>/); fail on the first crash, leak or timeout, leaving the input in build/fuzz/artifacts/.
# -seed=1: every run explores the same sequence of inputs, so what passed here passes in CI.
# The real Flink _metadata files (not part of the project: CKPT_FIXTURES, default ../shared/fixtures
# beside the repository) seed fuzz_flinkmeta too when present; absent, it starts from its synthetic
# seeds alone, saying so (and failing when CI=true).
secs=${FUZZ_SECONDS:-20}
here=$(cd "$(dirname "$0")" && pwd)
fixtures=$(cd "${CKPT_FIXTURES:-$here/../../../shared/fixtures}" 2>/dev/null && pwd)
status=0
for bin in "$@"; do
	name=${bin##*/fuzz_}
	work=$(mktemp -d) || exit 2
	art=build/fuzz/artifacts/$name/
	mkdir -p "$art"
	set -- -seed=1 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0 \
		-artifact_prefix="$art"
	[ -f "$here/$name.dict" ] && set -- "$@" -dict="$here/$name.dict"
	[ -f "$here/$name.options" ] && set -- "$@" $(cat "$here/$name.options")
	seeds=""
	for d in "$here/corpus/$name" "$here/regress/$name"; do
		[ -d "$d" ] && seeds="$seeds $d"
	done
	if [ "$name" = flinkmeta ]; then
		if [ -n "$fixtures" ] && [ -d "$fixtures/flink-savepoints" ]; then
			for f in "$fixtures"/flink-savepoints/*/_metadata; do
				g=${f%/_metadata}
				cp "$f" "$work/${g##*/}"
			done
		elif [ "${CI-}" = true ]; then
			echo "fuzz $name: no Flink fixtures (set CKPT_FIXTURES), and CI=true requires them"
			status=1
		else
			echo "fuzz $name: no Flink fixtures (set CKPT_FIXTURES): synthetic seeds only"
		fi
	fi
	echo "fuzz $name: ${secs}s"
	# shellcheck disable=SC2086
	if ! "$bin" "$@" "$work" $seeds >"$work.log" 2>&1; then
		tail -40 "$work.log"
		echo "fuzz $name: FAILED (input in $art)"
		status=1
	else
		grep -E '^(Done|#[0-9]+.*DONE)' "$work.log" | tail -1
	fi
	rm -rf "$work" "$work.log"
done
exit $status
